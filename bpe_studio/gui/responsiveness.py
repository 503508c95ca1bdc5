"""Everything that keeps the window responsive while the trainer runs in the same interpreter.

The trainer (pure Python, in a worker ``QThread``) and the GUI thread share one GIL. What this
module holds, each measured in ``docs/responsiveness.md`` (re-run with
``benchmarks/gui_bench.py``):

- :class:`TrainingMode`: while a run lasts, the cyclic garbage collector is paused and the GIL
  switch interval shortened; :func:`short_switches`: the same interval while a background job
  runs;
- :class:`GuiTurn`: the GUI thread holds the trainer at its next merge boundary while it
  updates and repaints the views (the worker checks ``gui_free`` between merges), and, after
  the last merge, until the window has shown it (``end_shown``);
- :class:`HoldTrainerWhilePainting`: a window mixin that takes such a turn for every repaint;
- :class:`StartWhenSettled`: a run's thread starts once the window has done repainting the
  views it reset for the run, not during those repaints; :class:`AfterPaint`: the same for a
  view's background jobs after a reset of that view;
- :class:`FrameBudget` and the pacing of the views: how often the session drains the worker's
  merges, publishes a frame, and rebuilds the editor's tokenizer;
- :func:`gui_busy` and :func:`wait_while_gui_busy`: background threads (the compression
  curve's feeder, the jobs) wait between pieces of their work while the GUI thread updates or
  repaints the views;
- :func:`collect_on_gui_thread`: the cyclic garbage collector runs on the GUI thread only.

What it leaves out: freeing the trainer's state in slices at the end of a run, which the core
does (``BpeTrainer.close``), and the merge hand-over without one event per merge
(``worker.MergeBuffer``).
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from .debounce import single_shot

# The session drains the worker's merges this often; a drain is also a frame (all views update
# and the window repaints once) when the frame budget allows one (FrameBudget).
FLUSH_INTERVAL_MS = 25
# A frame holds the trainer while the views update and the window repaints: frames are spaced
# so that they hold it for at most FRAME_BUDGET of the wall time, and come every
# MIN_FRAME_SECONDS at most and every MAX_FRAME_SECONDS at least.
FRAME_BUDGET = 0.2
MIN_FRAME_SECONDS = 0.1
MAX_FRAME_SECONDS = 0.5
# The editor re-tokenizes with the merges so far at most this often (each rebuild is a third
# thread contending for the GIL).
EDITOR_REFRESH_MERGES = 400
EDITOR_REFRESH_SECONDS = 1.0
# GIL switch interval while training, s.
GIL_SWITCH_INTERVAL = 0.0001
# The longest the worker waits for the GUI thread at one merge boundary, s.
GUI_HOLD_LIMIT = 0.1
# After its last merge, the longest the worker waits for the window to show that merge before
# it frees its working state (GuiTurn.end_shown), s.
END_SHOWN_LIMIT = 0.5
# A run's thread starts once the window has gone RUN_START_QUIET_MS without repainting after
# Train, or RUN_START_LATEST_MS after Train at the latest, ms.
RUN_START_QUIET_MS = 60
RUN_START_LATEST_MS = 400
# Background work deferred until its view has repainted (AfterPaint) starts once the view has
# gone AFTER_PAINT_QUIET_MS without repainting, and AFTER_PAINT_LATEST_MS after it was asked
# for at the latest, ms.
AFTER_PAINT_QUIET_MS = 50
AFTER_PAINT_LATEST_MS = 300
# How often the GUI thread runs the collections Python would have run by itself, ms.
COLLECT_INTERVAL_MS = 500

_training_runs = 0  # TrainingModes entered and not left: the collector waits meanwhile

# Set unless the GUI thread is updating or repainting the views (a held frame, a repaint of
# the window): background threads that cooperate wait for it between pieces of their work.
_gui_quiet = threading.Event()
_gui_quiet.set()
_gui_busy_depth = 0  # busy spells begun and not ended (GUI thread only)


def _busy_begin() -> None:
    global _gui_busy_depth
    _gui_busy_depth += 1
    _gui_quiet.clear()


def _busy_end() -> None:
    global _gui_busy_depth
    _gui_busy_depth -= 1
    if not _gui_busy_depth:
        _gui_quiet.set()


# Who needs the short switch interval now (training runs, background jobs), and the interval
# to restore when none does.
_switch_lock = threading.Lock()
_switch_users = 0
_saved_switch_interval = 0.005


def _shorten_switches() -> None:
    global _switch_users, _saved_switch_interval
    with _switch_lock:
        if _switch_users == 0:
            _saved_switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(GIL_SWITCH_INTERVAL, _saved_switch_interval))
        _switch_users += 1


def _restore_switches() -> None:
    global _switch_users
    with _switch_lock:
        _switch_users -= 1
        if _switch_users == 0:
            sys.setswitchinterval(_saved_switch_interval)


@contextmanager
def short_switches() -> Iterator[None]:
    """The GIL switch interval is ``GIL_SWITCH_INTERVAL`` inside (from any thread; nested
    and overlapping uses are counted), as the process had it before once the last use ends.

    subtle: a background job (a tokenizer loading, o200k's reachability check, the glyph
    samples) holds the GIL for the whole default switch interval (5 ms) at a time, and every
    one of a repaint's entries into Python waits for it: showing o200k in the vocabulary
    table, 13 ms of the GUI thread's CPU, took 130 ms. The jobs run inside this."""
    _shorten_switches()
    try:
        yield
    finally:
        _restore_switches()


@contextmanager
def gui_busy() -> Iterator[None]:
    """On the GUI thread: background threads that call :func:`wait_while_gui_busy` wait while
    the block runs (a repaint of the window)."""
    _busy_begin()
    try:
        yield
    finally:
        _busy_end()


def wait_while_gui_busy(limit: float = GUI_HOLD_LIMIT) -> None:
    """In a background thread, between two pieces of its work: wait while the GUI thread
    updates or repaints the views (a held frame, :func:`gui_busy`), at most ``limit`` s.

    subtle: the GIL goes to each thread that asks for it within the switch interval, so one
    busy background thread (the compression curve's feeder pickling a frame's merges, a span
    job) made every one of a repaint's entries into Python wait: with the curve on, a
    frame's repaint took twice its CPU time in wall time (docs/responsiveness.md)."""
    if not _gui_quiet.is_set():
        _gui_quiet.wait(limit)


class TrainingMode:
    """Enter when a run starts, leave when its thread has ended: pauses the cyclic GC and
    shortens the GIL switch interval, restoring both afterwards. Idempotent both ways."""

    def __init__(self) -> None:
        self._entered = False
        self._gc_was_enabled = False

    def enter(self) -> None:
        if self._entered:
            return
        self._entered = True
        _shorten_switches()
        # subtle: the trainer holds millions of small containers and makes no reference
        # cycles; a full collection over them would hold the GIL for up to a second.
        global _training_runs
        _training_runs += 1
        self._gc_was_enabled = gc.isenabled()
        gc.disable()

    def leave(self) -> None:
        global _training_runs
        if not self._entered:
            return
        self._entered = False
        _training_runs -= 1
        if self._gc_was_enabled:
            gc.enable()
        _restore_switches()


class GuiTurn:
    """Lets the GUI thread keep the trainer waiting at its next merge boundary.

    The worker's loop does ``if not turn.gui_free.is_set(): turn.gui_free.wait(GUI_HOLD_LIMIT)``
    after each merge; :meth:`hold` clears the event for the length of a block (nested holds
    are counted) so the block's many calls into Python never wait for the GIL.
    """

    def __init__(self) -> None:
        self.gui_free = threading.Event()
        self.gui_free.set()
        # Set by the GUI once the window has shown the run's last merge; the worker waits for
        # it (at most END_SHOWN_LIMIT) before it frees its working state.
        self.end_shown = threading.Event()
        self._holds = 0
        self._held_since = 0.0
        self.held_seconds = 0.0  # wall time the trainer was held (while active), in all
        self.active = False  # only while a worker runs: otherwise holding is pointless
        # Called on the GUI thread after each repaint of the window (StartWhenSettled).
        self.on_painted: Callable[[], None] | None = None

    @contextmanager
    def hold(self) -> Iterator[None]:
        held = self.begin_hold()
        try:
            yield
        finally:
            if held:
                self.end_hold()

    def begin_hold(self) -> bool:
        """Hold the trainer until :meth:`end_hold` (nested holds are counted); False, and
        nothing to end, when no worker runs."""
        if not self.active:
            return False
        if not self._holds:
            self._held_since = time.perf_counter()
            _busy_begin()
        self._holds += 1
        self.gui_free.clear()
        return True

    def end_hold(self) -> None:
        self._holds -= 1
        if not self._holds:
            self.gui_free.set()
            self.held_seconds += time.perf_counter() - self._held_since
            _busy_end()

    def painted(self) -> None:
        """The window has just repainted (called by :class:`HoldTrainerWhilePainting`)."""
        if self.on_painted is not None:
            self.on_painted()

    def release(self) -> None:
        """Stop holding for good (the run is stopping or over): the worker must not wait."""
        self.active = False
        self.gui_free.set()
        self.end_shown.set()


class FrameBudget:
    """When the next frame may come: spaced so that the trainer is held for at most
    ``FRAME_BUDGET`` of the wall time, between ``MIN_FRAME_SECONDS`` and ``MAX_FRAME_SECONDS``
    apart.

    subtle: what a frame costs is measured, not assumed: the time the trainer was held since
    the previous frame began (that frame's update of the views and every repaint after it,
    ``GuiTurn.held_seconds``). It varies with the window's size, the views shown, the step
    and the machine's load; a fixed rate either holds a fast trainer for a large share of
    its time or updates a slow one rarely (docs/responsiveness.md)."""

    def __init__(self, turn: GuiTurn) -> None:
        self._turn = turn
        self._last = -1e9  # when the last frame began (perf_counter)
        self._held_at_last = 0.0
        self.interval = MIN_FRAME_SECONDS
        self.frames = 0

    def due(self) -> bool:
        return time.perf_counter() - self._last >= self.interval

    def postpone(self) -> None:
        """The next frame comes one interval from now (not at once, when one is due)."""
        self._last = time.perf_counter()

    def begin(self) -> None:
        """A frame begins now: the previous one's cost sets the spacing of the next."""
        now = time.perf_counter()
        held = self._turn.held_seconds
        if self.frames:
            cost = held - self._held_at_last
            self.interval = min(max(cost / FRAME_BUDGET, MIN_FRAME_SECONDS), MAX_FRAME_SECONDS)
        self._last, self._held_at_last = now, held
        self.frames += 1


class HoldTrainerWhilePainting:
    """Mixin for the top-level window (list it before ``QMainWindow``): the whole window is
    painted while it handles ``UpdateRequest``, and that paint runs with the trainer held and
    the background work that cooperates waiting (:func:`gui_busy`).
    The class using it provides :meth:`gui_turn`."""

    def gui_turn(self) -> GuiTurn | None:  # overridden: the running session's turn
        return None

    def event(self, event: QEvent) -> bool:
        if event.type() != QEvent.Type.UpdateRequest:
            return super().event(event)  # type: ignore[misc]
        turn = self.gui_turn()
        if turn is not None:
            with turn.hold(), gui_busy():
                handled = super().event(event)  # type: ignore[misc]
            turn.painted()
            return handled
        with gui_busy():
            return super().event(event)  # type: ignore[misc]


class StartWhenSettled(QObject):
    """Calls ``start`` once the window has settled after a run's views were reset: when it
    has gone ``RUN_START_QUIET_MS`` without repainting (each :meth:`painted` restarts the
    wait), or ``RUN_START_LATEST_MS`` after :meth:`arm` whatever happens; once.

    subtle: Train resets every view, and the window repaints about ten times in the next
    200-350 ms (the reset itself, then the editor's spans and the plots' ranges arriving),
    over 100 ms of GUI-thread CPU. Pre-tokenization's start (the process pool, the chunks'
    counts merged in Python, their results unpickled) holds the GIL in long stretches, and
    every one of those repaints' entries into Python would wait for it; the largest stalls
    of a run were there (docs/responsiveness.md). A window never shown never repaints: it
    starts after the quiet interval."""

    def __init__(self, start: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._start = start
        self._quiet = single_shot(self, RUN_START_QUIET_MS, self._fire)
        self._latest = single_shot(self, RUN_START_LATEST_MS, self._fire)
        self._armed = False

    def arm(self) -> None:
        # subtle: with a window shown, the quiet wait begins at its first repaint, which can
        # come later than the quiet interval (the click's own work comes first); with none
        # shown, no repaint will come.
        shown = any(w.isVisible() for w in QGuiApplication.topLevelWindows())
        self._armed = True
        if not shown:
            self._quiet.start()
        self._latest.start()

    def painted(self) -> None:
        if self._armed:
            self._quiet.start()

    @Slot()
    def _fire(self) -> None:
        if not self._armed:
            return
        self._armed = False
        self._quiet.stop()
        self._latest.stop()
        self._start()


class AfterPaint(QObject):
    """Calls the function last handed to :meth:`call` once ``widget`` has been painted after
    that call and then gone ``AFTER_PAINT_QUIET_MS`` without another paint, at once when the
    widget is not visible, and ``AFTER_PAINT_LATEST_MS`` after the call at the latest; once.

    subtle: a view reset for a big tokenizer (o200k's 200,000 rows) repaints while the
    background jobs it starts (the reachability check, the glyph samples) hold the GIL in
    stretches, and every one of the repaint's entries into Python waited for them: the
    repaint's 30-44 ms of GUI-thread CPU took 105-145 ms. Started after the repaint, the jobs
    run while the GUI thread is idle (docs/responsiveness.md)."""

    def __init__(self, widget: QWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._widget = widget
        self._pending: Callable[[], None] | None = None
        # Restarted by every paint: the view's repaints after a reset (its title, the rows
        # laid out, the fonts) come in a burst, and a job started between two of them made
        # the next one wait for the GIL at each of its entries into Python.
        self._after = single_shot(self, AFTER_PAINT_QUIET_MS, self._fire)
        self._latest = single_shot(self, AFTER_PAINT_LATEST_MS, self._fire)
        widget.installEventFilter(self)

    @property
    def pending(self) -> bool:
        return self._pending is not None

    def call(self, fn: Callable[[], None]) -> None:
        self._pending = fn
        if not self._widget.isVisible():
            self._fire()
            return
        self._widget.update()  # a paint will come, whatever else happens
        self._latest.start()

    def cancel(self) -> None:
        self._pending = None
        self._after.stop()
        self._latest.stop()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Paint and self._pending is not None:
            self._after.start()
        return False

    @Slot()
    def _fire(self) -> None:
        fn = self._pending
        self.cancel()
        if fn is not None:
            fn()


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
