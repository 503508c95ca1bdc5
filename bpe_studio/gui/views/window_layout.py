"""The main window's layout, kept for the next start: its geometry, the tab open and the
splitters' positions.

What it does: :func:`save_layout` writes them (``common.app_settings``) as the window closes;
:func:`restore_layout` puts them back at the next start, the geometry within the screen
available now (:func:`fit_within`: a window saved on a bigger screen, or on a monitor since
disconnected, would open partly or wholly off-screen). Only splitters with an object name are
kept, under that name: a position in the layout is not stable from one version to the next.
What it leaves out: the session's content (the run, the editor's tokenizer, the held-out
text); the first start's size (``MainWindow.sizeHint``, ``app.main``).
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QByteArray, QRect
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow, QSplitter, QTabWidget

from .common import app_settings

GEOMETRY_KEY = "window/geometry"
TAB_KEY = "window/tab"
SPLITTER_KEY = "window/splitters/{}"


def save_layout(window: QMainWindow, tabs: QTabWidget, splitters: Iterable[QSplitter]) -> None:
    """Keep ``window``'s geometry (maximized or not), the tab open and the splitters'
    positions for the next start."""
    settings = app_settings()
    settings.setValue(GEOMETRY_KEY, window.saveGeometry())
    settings.setValue(TAB_KEY, tabs.currentIndex())
    for splitter in splitters:
        if splitter.objectName():
            settings.setValue(SPLITTER_KEY.format(splitter.objectName()), splitter.saveState())


def restore_layout(window: QMainWindow, tabs: QTabWidget, splitters: Iterable[QSplitter]) -> bool:
    """Put back what :func:`save_layout` kept, the geometry within the screen; False when no
    geometry was kept (the first start), or it could not be read."""
    settings = app_settings()
    for splitter in splitters:
        state = settings.value(SPLITTER_KEY.format(splitter.objectName()))
        if splitter.objectName() and isinstance(state, QByteArray):
            splitter.restoreState(state)  # one from another layout is refused: nothing changes
    tab = _int(settings.value(TAB_KEY))
    if tab is not None and 0 <= tab < tabs.count():
        tabs.setCurrentIndex(tab)
    geometry = settings.value(GEOMETRY_KEY)
    if not isinstance(geometry, QByteArray) or not window.restoreGeometry(geometry):
        return False
    if not window.isMaximized() and not window.isFullScreen():
        window.setGeometry(fit_within(window.geometry(), _available(window.geometry())))
    return True


def _int(value: object) -> int | None:
    # subtle: an INI file gives a number back as a string.
    try:
        return int(str(value))
    except ValueError:
        return None


def _available(rect: QRect) -> QRect:
    """The available geometry of the screen ``rect``'s centre is on, else the primary
    screen's (a monitor disconnected since)."""
    screen = QGuiApplication.screenAt(rect.center()) or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else rect


def fit_within(rect: QRect, available: QRect) -> QRect:
    """``rect`` shrunk to ``available``'s size where larger, then moved inside it."""
    width = min(rect.width(), available.width())
    height = min(rect.height(), available.height())
    left = min(max(rect.left(), available.left()), available.left() + available.width() - width)
    top = min(max(rect.top(), available.top()), available.top() + available.height() - height)
    return QRect(left, top, width, height)
