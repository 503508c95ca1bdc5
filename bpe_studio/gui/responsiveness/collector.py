"""The cyclic garbage collector: paused while a run trains, run on the GUI thread only, kept off
what a loaded tokenizer leaves alive.

What it does: :class:`TrainingMode` pauses the collector for a run (and shortens the GIL switch
interval, ``gil_switches``); :func:`collect_on_gui_thread` turns automatic collection off and
installs a :class:`GuiThreadCollector`, which makes the collections Python would have made, on
the GUI thread, on a timer, except while a run trains; :func:`keep_out_of_collections` moves
every object alive now out of the collector's full passes.
What it leaves out: freeing the trainer's state in slices (the core's ``BpeTrainer.close``).
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Slot

from .gil_switches import restore_switches, shorten_switches

COLLECT_INTERVAL_MS = 500  # how often the GUI thread runs the collections that are due

_training_runs = 0  # TrainingModes entered and not left: the collector waits meanwhile


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


def keep_out_of_collections() -> None:
    """Exempt every object alive now (a tokenizer just loaded: hundreds of thousands of
    bytes objects, dicts and lists) from the cyclic collector's full passes.

    subtle: a full pass walks every tracked object, and runs on the GUI thread at whatever
    moment allocation triggers it (a first sort, a paint). ``gc.freeze`` itself is instant:
    it moves the tracked objects to the permanent generation without visiting them."""
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
    does the automatic ones)."""

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
