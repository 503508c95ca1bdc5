"""One training run as the GUI thread sees it: the worker's thread, buffering, timing.

What it does: :class:`TrainingSession` starts a :class:`~.worker.TrainingWorker` in its own
``QThread`` (``thread.started -> worker.run``, ``worker.finished -> thread.quit``; both are
released on the GUI thread once the thread has ended), collects the worker's merges in a
:class:`~.worker.MergeBuffer` and writes them, the pre-tokenization progress, the top pairs, the
phase and the outcome into the :class:`~..model.app_model.AppModel`, publishing one frame for
the views as often as the frame budget allows (``responsiveness.frame_budget``).
:class:`RunClock` keeps the elapsed time (pauses left out) and a recent merges-per-second rate.
What it leaves out: any widget, and when the editor's tokenizer is rebuilt (``controller``).
"""

from __future__ import annotations

import sys
import time
from collections import deque

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot

from ...core.io.worker_memory import give_back_freed_memory
from ...core.train import merge_engine
from ...core.train.pair_history import PairHistory
from ...core.train.remaining import TimeLeft
from ..model.app_model import AppModel
from ..model.state import Phase, RunSettings, TrainingResult
from ..model.status import compile_wait_line
from ..responsiveness.after_paint import StartWhenSettled
from ..responsiveness.collector import TrainingMode, keep_out_of_collections
from ..responsiveness.frame_budget import FLUSH_INTERVAL_MS, FrameBudget
from ..responsiveness.trainer_hold import GuiTurn
from .worker import (
    MergeBuffer,
    RunControl,
    TrainingWorker,
)

_QUEUED = Qt.ConnectionType.QueuedConnection
# The longest hold_still blocks the GUI thread, waiting for the merge under way (a merge
# takes milliseconds; a worker still counting is not waited for at all).
SETTLE_SECONDS = 2.0
# How often a shutdown that must not wait for a compile looks whether one holds the worker.
_STOP_SLICE_MS = 20
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
    """Start, pause, resume and stop one run; it writes the run into ``hub``."""

    finished = Signal(object)  # TrainingResult, or None after a failure; the hub has it already

    def __init__(self, settings: RunSettings, hub: AppModel, parent: QObject | None = None):
        super().__init__(parent)
        self.settings = settings
        self.hub = hub
        self.control = RunControl()
        self.clock = RunClock()
        self.worker_waiting = False  # the worker sits at its pause point
        self._started = False
        self._ended = False
        self._let_go = False  # shut down: its outcome no longer goes to the hub
        self._buffer = MergeBuffer()
        self._pending_progress: tuple[int, int] | None = None
        self._pending_merging: int | None = None  # merges to make, once the phase starts
        self._merge_start: float | None = None  # clock.elapsed() when merging began
        self._estimate: TimeLeft | None = None  # of the merging left
        self._error: str | None = None
        self._mode = TrainingMode()
        self.frames = FrameBudget(self.control.turn)
        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_INTERVAL_MS)
        self._timer.timeout.connect(self._flush)
        # Fires once the events a frame posted (the tables' and plots' queued updates, the
        # window's repaint) have been handled: a zero timer runs only after the posted events
        # pending when it started. The frame holds the trainer until then.
        self._frame_over = QTimer(self)
        self._frame_over.setSingleShot(True)
        self._frame_over.setInterval(0)
        self._frame_over.timeout.connect(self._on_frame_over)
        self._frame_held = False  # a frame's hold lasts until _frame_over fires
        self._merges_done = False  # the worker waits for the window to show its last merge
        self._thread: QThread | None = None
        self._worker: TrainingWorker | None = None

    @property
    def turn(self) -> GuiTurn:
        return self.control.turn

    # ------------------------------------------------------------- control
    def start(self) -> None:
        if self._started:
            raise RuntimeError("a session runs once")
        self._started = True
        thread = QThread()
        thread.setObjectName("bpe-training")
        worker = TrainingWorker(self.settings, self.control)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        # The merge hand-over runs in the worker thread (see MergeBuffer); the rest is queued.
        worker.merged.connect(self._buffer.push, Qt.ConnectionType.DirectConnection)
        worker.pretokenizing.connect(self._on_pretokenizing, _QUEUED)
        worker.recording.connect(self._on_recording, _QUEUED)
        worker.merging.connect(self._on_merging, _QUEUED)
        worker.merges_done.connect(self._on_merges_done, _QUEUED)
        worker.paused.connect(self._on_worker_paused, _QUEUED)
        worker.failed.connect(self._on_failed, _QUEUED)
        worker.status.connect(self._on_status, _QUEUED)
        worker.finished.connect(self._on_finished, _QUEUED)
        worker.finished.connect(thread.quit, Qt.ConnectionType.DirectConnection)
        thread.finished.connect(self._on_thread_finished, _QUEUED)
        self._thread, self._worker = thread, worker
        _LIVE_THREADS.add(thread)
        self._mode.enter()
        self.turn.active = True
        self.clock.start()
        self._timer.start()
        # The thread starts once the window has repainted the views reset for this run
        # (responsiveness.after_paint.StartWhenSettled).
        starter = StartWhenSettled(self._start_thread, self)
        self.turn.on_painted = starter.painted
        starter.arm()

    @Slot()
    def _start_thread(self) -> None:
        self.turn.on_painted = None
        # A run stopped before its thread started still starts it: the worker sees the stop
        # at once and ends the run as stopped, so `finished` always comes.
        if self._thread is not None:
            self._thread.start()

    def pause(self) -> None:
        """Pause the run; the state says so at once. A worker that paused itself
        (:meth:`pause_after`) and whose report is still on its way is paused already: the
        state is brought up to it now, with every merge it pushed."""
        if not self.is_running or self.control.stopped:
            return
        if not self.control.paused:
            self.control.pause()
        elif self.hub.state.phase is Phase.PAUSED:
            return
        self.clock.pause()
        self._flush_now()
        self.hub.set_paused(True)

    def pause_after(self, rank: int) -> None:
        """Pause right after the merge of ``rank`` (0-based), wherever the GUI is then: the
        worker pauses itself and the state follows when it reports it."""
        self.control.pause_after = rank

    def resume(self) -> None:
        if self.control.paused:
            self.worker_waiting = False
            self.control.resume()
            self.clock.resume()
            with self.turn.hold():
                self.hub.set_paused(False)

    def hold_still(self) -> None:
        """Pause, and wait (blocking, at most ``SETTLE_SECONDS``) until the worker makes no
        more merges: the merge under way when the pause came is recorded too. The merges
        counted then (a question asked about them) are the merges a Save writes; without the
        wait, that merge arrived while the question was open, and Save wrote one more."""
        if not self.is_running or self.control.stopped:
            return
        self.pause()
        # subtle: asked after the pause, which a worker not merging yet then sees before its
        # first merge. The window's phase is no guide: it says "counting" until the frame
        # after merging began (an audit: a close then saved one merge more than it asked of).
        if not self.control.merging.is_set():
            # No merge is under way while the corpus is counted, and the worker reaches no
            # pause point until counting ends (seconds on a big corpus): the GUI thread must
            # not wait for it.
            return
        self._end_frame_hold()  # the worker must get past the frame's hold to its pause point
        if self.control.holding_still.wait(SETTLE_SECONDS):
            self._flush_now()

    def stop(self) -> None:
        if self.control.paused:
            self.clock.resume()
        if self.control.stopped:
            return
        self.control.stop()
        if self.is_running and not self._ended:
            self.hub.set_stopping()

    @property
    def is_running(self) -> bool:
        return self._thread is not None

    @property
    def paused(self) -> bool:
        return self.control.paused

    def shutdown(self, *, wait_for_compile: bool = True) -> None:
        """Stop and wait for the thread to end (closing the window mid-training). A session
        shut down is let go: its run's outcome, if still on its way, no longer reaches the
        hub, which may show another run by then.

        The merge engine's first compile cannot be stopped: the worker sees the stop once it
        is over. ``wait_for_compile`` False (a window still on screen) does not wait for a
        thread the compile holds: it is released when it ends, or waited for by a later
        shutdown, which says so in one line on stderr (the window is gone by then)."""
        self._let_go = True
        self.control.stop()
        self._timer.stop()
        thread = self._thread
        if thread is not None:
            if not wait_for_compile:
                # subtle: waited for in slices, since the compile may begin after the stop
                # (a worker that had not yet reached it).
                while not thread.wait(_STOP_SLICE_MS):
                    if merge_engine.compiling():
                        self._end_frame_hold()
                        return
            elif thread.isRunning() and merge_engine.compiling():
                print(compile_wait_line(), file=sys.stderr, flush=True)
            thread.wait()  # returns at once if the thread never started
            self._release_thread()
        self._end_frame_hold()

    # ------------------------------------------------------ worker -> GUI
    @Slot(object, object)
    def _on_pretokenizing(self, done: int, total: int) -> None:
        self._pending_progress = (done, total)

    # subtle: the model is plain Python, so the worker's queued signals reach it through
    # slots of this QObject, which lives on the GUI thread: a queued connection straight to a
    # method of the model would call it in the worker's thread.
    @Slot(object)
    def _on_recording(self, history: object) -> None:
        assert isinstance(history, PairHistory)
        self.hub.set_pair_history(history)

    @Slot(str)
    def _on_status(self, where: str) -> None:
        self.hub.set_counting_on(where)

    @Slot(int)
    def _on_merging(self, target: int) -> None:
        # subtle: the views switch to the merge phase with the next frame, not in a frame of
        # their own here, and that frame comes one interval from now, with the first merges
        # to show, even when one is due: on a corpus that merges 10,000 times in a fifth of
        # a second, a frame here and its repaints held the trainer for a tenth or more of its
        # merging, to show no merge yet.
        self._pending_merging = target
        self._merge_start = self.clock.elapsed()
        self._estimate = TimeLeft(target)
        self.frames.postpone()

    @Slot()
    def _on_merges_done(self) -> None:
        # subtle: the run's end is shown in two turns of the event loop. This one is a frame
        # with the last merges (and their repaint), while the worker waits before freeing its
        # working state; _on_finished then switches the views to the finished run. Done in one
        # turn, with the freeing in between, they would hold the GUI thread for one long stretch
        # (docs/responsiveness.md, "The run's end").
        self._timer.stop()  # nothing more to drain: the next frame is the finished run's
        self._merges_done = True
        self._flush_now()
        if not self._frame_held:  # no hold to end (stopping): nothing to wait for
            self.turn.end_shown.set()

    @Slot()
    def _on_frame_over(self) -> None:
        self._end_frame_hold()
        if self._merges_done:
            self.turn.end_shown.set()

    def _end_frame_hold(self) -> None:
        if self._frame_held:
            self._frame_held = False
            self.turn.end_hold()

    @Slot(bool)
    def _on_worker_paused(self, waiting: bool) -> None:
        self.worker_waiting = waiting
        if waiting and self.control.paused and not self.control.stopped:
            if self.hub.state.phase is not Phase.PAUSED:  # paused by pause_after
                self.clock.pause()
                with self.turn.hold():
                    self.hub.set_paused(True)
            self._flush_now()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self._error = message

    @Slot(object)
    def _on_finished(self, result: TrainingResult | None) -> None:
        # Every merge was pushed (directly, in the worker thread) before finished was emitted.
        self._ended = True
        if self._let_go:
            self._timer.stop()
            self.turn.release()
            return
        self._timer.stop()
        with self.turn.hold():
            self._drain(in_frame=True)
        self.turn.release()
        self.hub.finish(result, self._error)
        self.finished.emit(result)

    @Slot()
    def _on_thread_finished(self) -> None:
        self._release_thread()

    def _release_thread(self) -> None:
        self._end_frame_hold()  # a session let go keeps no hold open (it counts process-wide)
        if self._thread is None:
            return
        self.turn.release()
        self._thread.wait()
        _LIVE_THREADS.discard(self._thread)
        self._mode.leave()
        # subtle: the collector was paused for the run, so its first pass after it would walk
        # everything the run left alive (its record and result) on the GUI thread, right while
        # the views show the finished run. They live as long as a loaded tokenizer does, and
        # are kept out of the collections the same way.
        keep_out_of_collections()
        give_back_freed_memory()  # what the run's trainer freed
        self._thread.deleteLater()
        # subtle: the worker is deleted here, on the GUI thread, once its thread has ended,
        # by dropping the last reference. deleteLater in its own thread would run ~QObject
        # there, which takes one of Qt's shared signal locks and then waits for the GIL; if
        # the GUI thread, holding the GIL, emitted a signal guarded by the same lock, both
        # would wait forever (seen in runs of benchmarks/gui_bench.py; docs/responsiveness.md).
        self._thread = self._worker = None

    # --------------------------------------------------------- flushing
    @Slot()
    def _flush(self) -> None:
        if self.frames.due():
            self._flush_now()
        else:
            self._drain()

    def _flush_now(self) -> None:
        """Drain and publish one frame, with the trainer held meanwhile."""
        if self._ended:
            return
        self.frames.begin()
        # subtle: the trainer stays held after the views' update until the event loop has
        # handled what it posted: the tables' and plots' queued updates run between the frame
        # and its repaint, and with the trainer free each of their entries into Python would
        # wait for the GIL (docs/responsiveness.md).
        if not self._frame_held:
            self._frame_held = self.turn.begin_hold()
        self._frame_over.start()
        self._drain(in_frame=True)
        self.hub.publish()

    def _drain(self, *, in_frame: bool = False) -> None:
        """Move what the worker reported into the hub; ``in_frame``: with the trainer held,
        right before the views update (the phase may change then, not otherwise)."""
        hub = self.hub
        if self._pending_progress is not None:
            hub.set_progress(*self._pending_progress)
            self._pending_progress = None
        batch = self._buffer.drain()
        elapsed = self.clock.elapsed()
        if batch:
            hub.append_merges(batch)
            self.clock.record(batch[-1].rank + 1)
            if self._estimate is not None and self._merge_start is not None:
                self._estimate.record(batch[-1].rank + 1, elapsed - self._merge_start)
        elif hub.state.merge_start is None:  # not merging yet
            # The merge engine's first compile may outlast the counting; the core says
            # while it runs (merge_engine.compiling), and the views show it as a phase.
            hub.set_compiling(merge_engine.compiling())
        if in_frame and self._pending_merging is not None:
            self._pending_merging = None
            hub.start_merging(started_at=self._merge_start)
        remaining = self._estimate.remaining() if self._estimate is not None else None
        hub.set_clock(self.clock.rate(), elapsed, remaining)
