"""Everything that keeps the window responsive while the trainer runs in the same interpreter.

The trainer (pure Python, in a worker ``QThread``) and the GUI thread share one GIL. What this
module holds, each measured in ``docs/responsiveness.md`` (re-run with
``benchmarks/gui_bench.py``):

- :class:`TrainingMode`: while a run lasts, the cyclic garbage collector is paused and the GIL
  switch interval shortened;
- :class:`GuiTurn`: the GUI thread holds the trainer at its next merge boundary while it
  updates and repaints the views (the worker checks ``gui_free`` between merges);
- :class:`HoldTrainerWhilePainting`: a window mixin that takes such a turn for every repaint;
- the pacing of the views: how often the session flushes, publishes a frame, and rebuilds the
  editor's tokenizer;
- :func:`collect_on_gui_thread`: the cyclic garbage collector runs on the GUI thread only.

What it leaves out: freeing the trainer's state in slices at the end of a run, which the core
does (``BpeTrainer.close``), and the merge hand-over without one event per merge
(``worker.MergeBuffer``).
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer, Slot

# The session drains the worker's merges this often, and every PUBLISH_EVERY_FLUSHES-th drain
# is one frame: all views update and the window repaints once.
FLUSH_INTERVAL_MS = 50
PUBLISH_EVERY_FLUSHES = 4
# The editor re-tokenizes with the merges so far at most this often (each rebuild is a third
# thread contending for the GIL).
EDITOR_REFRESH_MERGES = 400
EDITOR_REFRESH_SECONDS = 1.0
# GIL switch interval while training, s.
GIL_SWITCH_INTERVAL = 0.0001
# The longest the worker waits for the GUI thread at one merge boundary, s.
GUI_HOLD_LIMIT = 0.1
# How often the GUI thread runs the collections Python would have run by itself, ms.
COLLECT_INTERVAL_MS = 500

_training_runs = 0  # TrainingModes entered and not left: the collector waits meanwhile


class TrainingMode:
    """Enter when a run starts, leave when its thread has ended: pauses the cyclic GC and
    shortens the GIL switch interval, restoring both afterwards. Idempotent both ways."""

    def __init__(self) -> None:
        self._saved_interval: float | None = None
        self._gc_was_enabled = False

    def enter(self) -> None:
        if self._saved_interval is not None:
            return
        self._saved_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(GIL_SWITCH_INTERVAL, self._saved_interval))
        # subtle: the trainer holds millions of small containers and makes no reference
        # cycles; a full collection over them would hold the GIL for up to a second.
        global _training_runs
        _training_runs += 1
        self._gc_was_enabled = gc.isenabled()
        gc.disable()

    def leave(self) -> None:
        global _training_runs
        if self._saved_interval is None:
            return
        _training_runs -= 1
        if self._gc_was_enabled:
            gc.enable()
        sys.setswitchinterval(self._saved_interval)
        self._saved_interval = None


class GuiTurn:
    """Lets the GUI thread keep the trainer waiting at its next merge boundary.

    The worker's loop does ``if not turn.gui_free.is_set(): turn.gui_free.wait(GUI_HOLD_LIMIT)``
    after each merge; :meth:`hold` clears the event for the length of a block (nested holds
    are counted) so the block's many calls into Python never wait for the GIL.
    """

    def __init__(self) -> None:
        self.gui_free = threading.Event()
        self.gui_free.set()
        self._holds = 0
        self.active = False  # only while a worker runs: otherwise holding is pointless

    @contextmanager
    def hold(self) -> Iterator[None]:
        if not self.active:
            yield
            return
        self._holds += 1
        self.gui_free.clear()
        try:
            yield
        finally:
            self._holds -= 1
            if not self._holds:
                self.gui_free.set()

    def release(self) -> None:
        """Stop holding for good (the run is stopping or over): the worker must not wait."""
        self.active = False
        self.gui_free.set()


class HoldTrainerWhilePainting:
    """Mixin for the top-level window (list it before ``QMainWindow``): the whole window is
    painted while it handles ``UpdateRequest``, and that paint runs with the trainer held.
    The class using it provides :meth:`gui_turn`."""

    def gui_turn(self) -> GuiTurn | None:  # overridden: the running session's turn
        return None

    def event(self, event: QEvent) -> bool:
        turn = self.gui_turn() if event.type() == QEvent.Type.UpdateRequest else None
        if turn is not None:
            with turn.hold():
                return super().event(event)  # type: ignore[misc]
        return super().event(event)  # type: ignore[misc]


def keep_out_of_collections() -> None:
    """Exempt every object alive now (a tokenizer just loaded: hundreds of thousands of
    bytes objects, dicts and lists) from the cyclic collector's full passes.

    subtle: a full pass walks every tracked object; after loading o200k one took over 100 ms
    on the GUI thread, at whatever moment allocation triggered it (a first sort, a paint).
    ``gc.freeze`` itself is instant: it moves the tracked objects to the permanent
    generation without visiting them."""
    gc.freeze()


class GuiThreadCollector(QObject):
    """Runs the cyclic garbage collector's collections on the GUI thread, on a timer, with
    automatic collection turned off for the process.

    subtle: Python collects on whichever thread allocates past the threshold. When that is a
    background thread (a tokenizer loading, a span job) and the garbage holds Qt wrappers (a
    closed window's menus and actions), the Qt objects are destroyed on that thread: it takes
    Qt's connection lock and then waits for the GIL, while the GUI thread, holding the GIL,
    waits for that lock. A deadlock, seen in the test suite; collecting only here avoids it.
    Collections are skipped while a run trains (:class:`TrainingMode` pauses them, as it
    did the automatic ones)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(COLLECT_INTERVAL_MS)
        self._timer.timeout.connect(self.collect)
        gc.disable()
        self._timer.start()

    @Slot()
    def collect(self) -> None:
        """The collections Python would have made by now (by generation thresholds)."""
        if _training_runs:
            return
        t0, t1, t2 = gc.get_threshold()
        c0, c1, c2 = gc.get_count()
        if c0 > t0:
            gc.collect(2 if c1 > t1 and c2 > t2 else 1 if c1 > t1 else 0)


_collector: GuiThreadCollector | None = None


def collect_on_gui_thread() -> None:
    """Install the :class:`GuiThreadCollector` (once per application; call on the GUI
    thread after the ``QApplication`` exists)."""
    global _collector
    app = QCoreApplication.instance()
    if _collector is None and app is not None:
        _collector = GuiThreadCollector(app)
