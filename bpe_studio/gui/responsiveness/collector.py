"""The cyclic garbage collector: paused while a run trains, run on the GUI thread only, kept off
what a loaded tokenizer leaves alive.

What it does: :class:`TrainingMode` pauses the collector for a run (and shortens the GIL switch
interval, ``gil_switches``); :func:`collect_on_gui_thread` turns automatic collection off and
installs a :class:`GuiThreadCollector`, which makes the collections Python would have made, on
the GUI thread, on a timer, except while a run trains or a save holds them
(:func:`hold_collections`); :func:`keep_out_of_collections` moves every object alive now out
of the collector's full passes; :func:`free_when_deleted` lets a
deleted window's objects go without one (what was frozen is freed only by reference counts).
What it leaves out: freeing the trainer's state in slices (the core's ``BpeTrainer.close``).
"""

from __future__ import annotations

import gc
import types
import weakref

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer, Slot

from .gil_switches import restore_switches, shorten_switches

COLLECT_INTERVAL_MS = 500  # how often the GUI thread runs the collections that are due

_training_runs = 0  # TrainingModes entered and not left: the collector waits meanwhile
_held = 0  # hold_collections() not yet released: the collector waits meanwhile too


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
        shorten_switches()
        # subtle: the trainer holds millions of small containers and makes no reference
        # cycles; a full collection over them would hold the GIL for a long stretch.
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
        restore_switches()


def hold_collections() -> None:
    """Background work that makes many containers and frees them all by reference counts
    when it ends (a save: o200k's tokenizer.json object and the checks' copies) starts: the
    GUI thread's collections wait until :func:`release_collections` (call both on the GUI
    thread).

    subtle: collected meanwhile, every pass over the young generation walked the job's
    hundreds of thousands of new containers (still alive, so each pass found nothing):
    20-120 ms on the GUI thread, every half second, while o200k was saved."""
    global _held
    _held += 1


def release_collections() -> None:
    """End a :func:`hold_collections`."""
    global _held
    _held = max(0, _held - 1)


def keep_out_of_collections() -> None:
    """Exempt every object alive now (a tokenizer just loaded: hundreds of thousands of
    bytes objects, dicts and lists) from the cyclic collector's full passes.

    subtle: a full pass walks every tracked object, and runs on the GUI thread at whatever
    moment allocation triggers it (a first sort, a paint). ``gc.freeze`` itself is instant:
    it moves the tracked objects to the permanent generation without visiting them.
    Reference cycles among frozen objects are never collected: a window frozen this way
    is freed by :func:`free_when_deleted`."""
    gc.freeze()


def free_when_deleted(window: QObject) -> None:
    """Once ``window`` (its C++ object) is deleted, clear the attributes of every Python
    wrapper of a deleted Qt object reachable from it (its views, their charts' items), so
    that reference counting frees them and what they hold, without the cyclic collector.

    subtle: a window's objects make reference cycles (views and the model referring to each
    other, bound methods and lambdas kept in attributes, pyqtgraph's items and their
    parentless menus). :func:`keep_out_of_collections` freezes them with everything else while
    the window lives, and a frozen cycle is never collected: each closed window used to stay,
    with the run or tokenizers it showed (100-200 MB). Unfreezing and collecting would walk
    every object of the process instead. The attributes of a deleted Qt object's wrapper are
    of no use (its methods raise), so clearing them breaks the cycles through them; an object
    a thread still holds (the encoder's loading thread holds the window) goes when it lets
    go. It runs at the next turn of the event loop: when ``destroyed`` is emitted the
    window's children are not deleted yet."""
    ref = weakref.ref(window)

    def destroyed() -> None:
        wrapper = ref()
        if wrapper is not None:
            QTimer.singleShot(0, lambda: _clear_dead_wrappers(wrapper))

    window.destroyed.connect(destroyed)


_ATOMS = (int, float, str, bytes, bool, type(None))


def _clear_dead_wrappers(root: object) -> int:
    """Clear the ``__dict__`` of every wrapper of a deleted Qt object reachable from ``root``
    through such wrappers' attributes, containers and bound methods; how many were cleared.
    Live objects (the model, a parentless menu) are passed by, never cleared."""
    seen: set[int] = set()
    stack = [root]
    cleared = 0
    while stack:
        obj = stack.pop()
        if isinstance(obj, _ATOMS) or id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, types.MethodType):
            stack.append(obj.__self__)
        elif isinstance(obj, shiboken6.Shiboken.Object) and not shiboken6.isValid(obj):
            attributes = getattr(obj, "__dict__", None)
            if attributes:
                stack.extend(attributes.values())
                attributes.clear()
                cleared += 1
    return cleared


class GuiThreadCollector(QObject):
    """Runs the cyclic garbage collector's collections on the GUI thread, on a timer, with
    automatic collection turned off for the process.

    subtle: Python collects on whichever thread allocates past the threshold. When that is a
    background thread (a tokenizer loading, a span job) and the garbage holds Qt wrappers (a
    closed window's menus and actions), the Qt objects are destroyed on that thread: it takes
    Qt's connection lock and then waits for the GIL, while the GUI thread, holding the GIL,
    waits for that lock. A deadlock, seen in the test suite; collecting only here avoids it.
    Collections are skipped while a run trains (:class:`TrainingMode` pauses them, as it
    does the automatic ones) and while :func:`hold_collections` holds them."""

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
        if _training_runs or _held:
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
