"""Work that would compete with a burst of repaints starts once the window has done them.

What it does: :class:`StartWhenSettled` starts a run's thread once the window has repainted the
views Train reset (it went ``RUN_START_QUIET_MS`` without a repaint, or ``RUN_START_LATEST_MS``
passed); :class:`AfterPaint` starts a view's background jobs once that view has been painted
after a reset and gone ``AFTER_PAINT_QUIET_MS`` without another paint (at once when it is not
visible, ``AFTER_PAINT_LATEST_MS`` at the latest).

Why: the work (pre-tokenization's start, o200k's reachability check, the glyph samples) holds
the GIL in long stretches, and every one of the repaints' entries into Python would wait for
it; started after them, it runs while the GUI thread is idle (docs/responsiveness.md).
What it leaves out: what is started (``session``, the views).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from .debounce import single_shot

RUN_START_QUIET_MS = 60
RUN_START_LATEST_MS = 400
AFTER_PAINT_QUIET_MS = 50
AFTER_PAINT_LATEST_MS = 300


class StartWhenSettled(QObject):
    """Calls ``start`` once the window has settled after a run's views were reset: when it
    has gone ``RUN_START_QUIET_MS`` without repainting (each :meth:`painted` restarts the
    wait), or ``RUN_START_LATEST_MS`` after :meth:`arm` whatever happens; once.

    subtle: Train resets every view, and the window repaints several times in a burst (the
    reset itself, then the editor's spans and the plots' ranges arriving). Pre-tokenization's
    start (the process pool, the chunks' counts merged in Python, their results unpickled)
    holds the GIL in long stretches, and every one of those repaints' entries into Python
    would wait for it. A window never shown never repaints: it starts after the quiet
    interval."""

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

    subtle: a view reset for a big tokenizer (o200k's rows) repaints while the background
    jobs it starts (the reachability check, the glyph samples) would hold the GIL in
    stretches, and every one of the repaint's entries into Python would wait for them."""

    def __init__(self, widget: QWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._widget = widget
        self._pending: Callable[[], None] | None = None
        # Restarted by every paint: the view's repaints after a reset (its title, the rows
        # laid out, the fonts) come in a burst, and a job started between two of them would
        # make the next one wait for the GIL at each of its entries into Python.
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
