"""One training run as the GUI thread sees it: the worker's thread, buffering, timing.

What it does: :class:`TrainingSession` starts a :class:`~.worker.TrainingWorker` in its own
``QThread`` (``thread.started -> worker.run``, ``worker.finished -> thread.quit``; both are
deleted on the GUI thread once the thread has ended), collects the worker's merges in a
:class:`~.worker.MergeBuffer` and re-emits them in batches on a 20 Hz timer, together with the
latest pre-tokenization progress and top pairs. All its signals are emitted on the GUI
thread. :class:`RunClock` keeps the elapsed time (pauses left out) and a recent
merges-per-second rate for the status line.
What it leaves out: any widget (the main window connects the views to these signals).
"""

from __future__ import annotations

import gc
import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot

from .worker import MergeBuffer, RunControl, TrainingConfig, TrainingResult, TrainingWorker

# The views repaint at most 20 times a second while training: each repaint holds the trainer
# for its duration (see gui_turn), and at 30 a second the trainer lost a third of its speed
# on english_books against a fifth at 20 (benchmarks/gui_bench.py).
FLUSH_INTERVAL_MS = 50
# While the worker runs pure-Python training, the GUI thread waits for the GIL every time Qt
# calls into Python (a slot, a model's data(), a pyqtgraph item's paint). CPython hands the GIL
# over every 5 ms by default; at 0.1 ms a repaint's many small waits stay short
# (benchmarks/gui_bench.py: largest heartbeat gap ~100 ms instead of ~250 ms at 0.25 ms).
GIL_SWITCH_INTERVAL = 0.0001
_QUEUED = Qt.ConnectionType.QueuedConnection
# Every training thread started and not yet waited for: tests assert it is empty afterwards.
_LIVE_THREADS: set[QThread] = set()


def live_training_threads() -> int:
    """How many training threads were started and not yet finished and released."""
    return len(_LIVE_THREADS)


class RunClock:
    """Elapsed seconds with pauses left out, and merges per second over the last second."""

    WINDOW = 1.0

    def __init__(self) -> None:
        self._start: float | None = None
        self._paused_at: float | None = None
        self._paused_total = 0.0
        self._samples: deque[tuple[float, int]] = deque()

    def start(self) -> None:
        self._start = time.perf_counter()

    def pause(self) -> None:
        if self._paused_at is None:
            self._paused_at = time.perf_counter()

    def resume(self) -> None:
        if self._paused_at is not None:
            self._paused_total += time.perf_counter() - self._paused_at
            self._paused_at = None
            self._samples.clear()  # a rate across the pause would mean nothing

    def elapsed(self) -> float:
        if self._start is None:
            return 0.0
        now = self._paused_at if self._paused_at is not None else time.perf_counter()
        return now - self._start - self._paused_total

    def record(self, merges_done: int) -> None:
        now = self.elapsed()
        samples = self._samples
        samples.append((now, merges_done))
        while len(samples) > 2 and now - samples[1][0] >= self.WINDOW:
            samples.popleft()

    def rate(self) -> float:
        """Merges per second over about the last second (0.0 until two samples exist)."""
        if len(self._samples) < 2:
            return 0.0
        (t0, n0), (t1, n1) = self._samples[0], self._samples[-1]
        return (n1 - n0) / (t1 - t0) if t1 > t0 else 0.0


class TrainingSession(QObject):
    """Start, pause, resume and stop one run; every signal arrives on the GUI thread."""

    progress = Signal(object, object)  # bytes done, bytes total
    merging = Signal(int)  # pre-tokenization done; target merges
    merges_added = Signal(object)  # list[MergeStep], oldest first
    top_pairs = Signal(object)  # tuple[(left, right, count), ...]
    paused_changed = Signal(bool)
    failed = Signal(str)
    finished = Signal(object)  # TrainingResult, or None after failed
    # After each flush, paused or not, with the worker still held: the window's one clock, so
    # that everything it redraws lands in the same repaint.
    tick = Signal()

    def __init__(self, config: TrainingConfig, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.config = config
        self.control = RunControl()
        self.clock = RunClock()
        self.phase = "ready"  # -> "pre-tokenizing" -> "merging" -> "finished"
        self.bytes_done = self.bytes_total = 0
        self.merges_done = 0
        self.target_merges = config.vocab_size - 256 - len(config.special_tokens)
        self.result: TrainingResult | None = None
        self._buffer = MergeBuffer()
        self._pending_progress: tuple[int, int] | None = None
        self._pending_pairs: tuple | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_INTERVAL_MS)
        self._timer.timeout.connect(self._flush)
        self._thread: QThread | None = None
        self._worker: TrainingWorker | None = None
        self._saved_switch_interval: float | None = None
        self._holds = 0
        self._gc_was_enabled = False

    # ------------------------------------------------------------- control
    def start(self) -> None:
        if self._thread is not None or self.phase != "ready":
            raise RuntimeError("a session runs once")
        thread = QThread()
        thread.setObjectName("bpe-training")
        worker = TrainingWorker(self.config, self.control)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        # The merge hand-over runs in the worker thread (see MergeBuffer); the rest is queued.
        worker.merged.connect(self._buffer.push, Qt.ConnectionType.DirectConnection)
        worker.pretokenizing.connect(self._on_pretokenizing, _QUEUED)
        worker.merging.connect(self._on_merging, _QUEUED)
        worker.top_pairs.connect(self._on_top_pairs, _QUEUED)
        worker.failed.connect(self._on_failed, _QUEUED)
        worker.finished.connect(self._on_finished, _QUEUED)
        worker.finished.connect(thread.quit, Qt.ConnectionType.DirectConnection)
        thread.finished.connect(self._on_thread_finished, _QUEUED)
        self._thread, self._worker = thread, worker
        _LIVE_THREADS.add(thread)
        self.phase = "pre-tokenizing"
        self._saved_switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(GIL_SWITCH_INTERVAL, self._saved_switch_interval))
        # subtle: the trainer holds millions of small containers; each full pass of the cyclic
        # garbage collector over them holds the GIL for up to a second, freezing the GUI. The
        # trainer makes no reference cycles, so the collector is paused until the run ends.
        self._gc_was_enabled = gc.isenabled()
        gc.disable()
        self.clock.start()
        self._timer.start()
        # subtle: start the thread once the views have repainted after being reset (a
        # zero-interval timer fires when the event loop is idle), so that repaint does not
        # have to contend for the GIL with pre-tokenization.
        QTimer.singleShot(0, self, self._start_thread)

    @Slot()
    def _start_thread(self) -> None:
        if self._thread is not None and not self.control.stopped:
            self._thread.start()

    def pause(self) -> None:
        if self.is_running and not self.control.paused:
            self.control.pause()
            self.clock.pause()
            self.paused_changed.emit(True)

    def resume(self) -> None:
        if self.control.paused:
            self.control.resume()
            self.clock.resume()
            self.paused_changed.emit(False)

    def stop(self) -> None:
        if self.control.paused:
            self.clock.resume()
        self.control.stop()

    @property
    def is_running(self) -> bool:
        return self._thread is not None

    @property
    def paused(self) -> bool:
        return self.control.paused

    def shutdown(self) -> None:
        """Stop and wait for the thread to end (closing the window mid-training)."""
        self.stop()
        if self._thread is not None:
            self._thread.wait()  # returns at once if the thread never started
            self._release_thread()

    # ------------------------------------------------------ worker -> GUI
    @Slot(object, object)
    def _on_pretokenizing(self, done: int, total: int) -> None:
        self._pending_progress = (done, total)

    @Slot(int)
    def _on_merging(self, target: int) -> None:
        self._flush()
        self.phase = "merging"
        self.target_merges = target
        self.merging.emit(target)

    @Slot(object)
    def _on_top_pairs(self, pairs: tuple) -> None:
        self._pending_pairs = pairs

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.failed.emit(message)

    @Slot(object)
    def _on_finished(self, result: TrainingResult | None) -> None:
        # Every merge was pushed (directly, in the worker thread) before finished was emitted.
        self._flush()
        self._timer.stop()
        self.phase = "finished"
        self.result = result
        self.finished.emit(result)

    @Slot()
    def _on_thread_finished(self) -> None:
        self._release_thread()

    @contextmanager
    def gui_turn(self) -> Iterator[None]:
        """Run the block (GUI thread) with the worker held at its next merge boundary, so the
        block's many calls into Python do not each wait for the GIL (see RunControl)."""
        if self._thread is None or self.control.stopped:
            yield
            return
        self._holds += 1
        self.control.hold_for_gui()
        try:
            yield
        finally:
            self._holds -= 1
            if not self._holds:
                self.control.release_gui()

    def _release_thread(self) -> None:
        if self._thread is None:
            return
        self.control.release_gui()
        self._thread.wait()
        _LIVE_THREADS.discard(self._thread)
        if self._gc_was_enabled:
            gc.enable()
        self._thread.deleteLater()
        # subtle: the worker is deleted here, on the GUI thread, once its thread has ended,
        # by dropping the last reference. deleteLater in its own thread would run ~QObject
        # there, which takes one of Qt's shared signal locks and then waits for the GIL; if
        # the GUI thread, holding the GIL, emitted a signal guarded by the same lock, both
        # would wait forever (seen once in ~50 runs of benchmarks/gui_bench.py).
        self._thread = self._worker = None
        if self._saved_switch_interval is not None:
            sys.setswitchinterval(self._saved_switch_interval)
            self._saved_switch_interval = None

    @Slot()
    def _flush(self) -> None:
        with self.gui_turn():
            self._emit_pending()
            self.tick.emit()

    def _emit_pending(self) -> None:
        if self._pending_progress is not None:
            self.bytes_done, self.bytes_total = self._pending_progress
            self._pending_progress = None
            self.progress.emit(self.bytes_done, self.bytes_total)
        batch = self._buffer.drain()
        if batch:
            self.merges_done = batch[-1].rank + 1
            self.clock.record(self.merges_done)
            self.merges_added.emit(batch)
        if self._pending_pairs is not None:
            pairs, self._pending_pairs = self._pending_pairs, None
            self.top_pairs.emit(pairs)
