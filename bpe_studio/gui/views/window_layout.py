"""The main window's layout, kept for the next start: its geometry, the tab open and the
splitters' positions.

What it does: :func:`save_layout` writes them (``common.app_settings``) as the window closes;
:func:`restore_layout` puts them back at the next start, the geometry within the screen
available now (:func:`fit_within`: a window saved on a bigger screen, or on a monitor since
disconnected, would open partly or wholly off-screen). Only splitters with an object name are
kept, under that name, with their panes' count and orientation: Qt restores a state into a
splitter of another shape (a pane added since, or turned), squeezing or turning it, so a
state of another shape is left. The tab is kept by its title, not its place among tabs.
What it leaves out: the session's content (the run, the editor's tokenizer, the held-out
text); the first start's size (``MainWindow.sizeHint``, ``app.main``).
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QByteArray, QRect, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow, QSplitter, QTabWidget

from .common import app_settings

GEOMETRY_KEY = "window/geometry"
TAB_KEY = "window/tab"
SPLITTER_KEY = "window/splitters/{}"
SHAPE_KEY = "window/splitters/{}/shape"


def _shape(splitter: QSplitter) -> str:
    """What a kept state must match: the panes' count and the orientation ("3 horizontal")."""
    across = splitter.orientation() == Qt.Orientation.Horizontal
    return f"{splitter.count()} {'horizontal' if across else 'vertical'}"


def save_layout(window: QMainWindow, tabs: QTabWidget, splitters: Iterable[QSplitter]) -> None:
    """Keep ``window``'s geometry (maximized or not), the tab open and the splitters'
    positions for the next start."""
    settings = app_settings()
    settings.setValue(GEOMETRY_KEY, window.saveGeometry())
    settings.setValue(TAB_KEY, tabs.tabText(tabs.currentIndex()))
    for splitter in splitters:
        if splitter.objectName():
            settings.setValue(SPLITTER_KEY.format(splitter.objectName()), splitter.saveState())
            settings.setValue(SHAPE_KEY.format(splitter.objectName()), _shape(splitter))


def restore_layout(window: QMainWindow, tabs: QTabWidget, splitters: Iterable[QSplitter]) -> bool:
    """Put back what :func:`save_layout` kept, the geometry within the screen; False when no
    geometry was kept (the first start), or it could not be read."""
    settings = app_settings()
    for splitter in splitters:
        name = splitter.objectName()
        state = settings.value(SPLITTER_KEY.format(name))
        shape = settings.value(SHAPE_KEY.format(name))
        if name and isinstance(state, QByteArray) and shape == _shape(splitter):
            splitter.restoreState(state)
    tab = settings.value(TAB_KEY)
    titles = [tabs.tabText(i) for i in range(tabs.count())]
    if isinstance(tab, str) and tab in titles:
        tabs.setCurrentIndex(titles.index(tab))
    geometry = settings.value(GEOMETRY_KEY)
    if not isinstance(geometry, QByteArray) or not window.restoreGeometry(geometry):
        return False
    if not window.isMaximized() and not window.isFullScreen():
        window.setGeometry(fit_within(window.geometry(), _available(window.geometry())))
    return True


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
