"""The main window's layout, kept for the next start: its geometry, the tab open and the
splitters' positions.

What it does: :func:`save_layout` writes them (``common.app_settings``) as the window closes;
:func:`restore_layout` puts them back at the next start, the geometry within the screen
available now (:func:`fit_within`: a window saved on a bigger screen, or on a monitor since
disconnected, would open partly or wholly off-screen). Qt's geometry is kept with the
normal rect and the maximized state in keys of our own too: ``restoreGeometry`` refuses a
geometry saved on a screen of another width (by a factor outside 0.8-1.25: a 2560-wide
monitor, then a 1920-wide laptop), which would drop the size, place and maximized state. A
restored size under the window's minimum size hint is not kept (the layout forbids it, so
the user could not have made it: a negative or truncated geometry, which Qt accepts and
opens 68 x 109). Only splitters with an object name are kept, under that name, with their
panes' count and orientation: Qt restores a state into a splitter of another shape (a pane
added since, or turned), squeezing or turning it, so a state of another shape is left. The
tab is kept by its title, not its place among tabs.
What it leaves out: the session's content (the run, the editor's tokenizer, the held-out
text); the first start's size (``MainWindow.sizeHint``, ``app.main``).
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QByteArray, QRect, QSettings, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow, QSplitter, QTabWidget

from .common import app_settings

GEOMETRY_KEY = "window/geometry"
NORMAL_KEY = "window/normal"
MAXIMIZED_KEY = "window/maximized"
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
    settings.setValue(NORMAL_KEY, window.normalGeometry())
    settings.setValue(MAXIMIZED_KEY, window.isMaximized())
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
    before = window.geometry()
    moved, resized = Qt.WidgetAttribute.WA_Moved, Qt.WidgetAttribute.WA_Resized
    was_moved, was_resized = window.testAttribute(moved), window.testAttribute(resized)
    if not _restore_geometry(window, settings):
        # subtle: a geometry restored and then not kept has moved, resized or maximized the
        # window; the first start's layout is the one it had before (``app.main`` sizes it,
        # and the platform places a window never moved).
        window.setWindowState(Qt.WindowState.WindowNoState)
        window.setGeometry(before)
        window.setAttribute(moved, was_moved)
        window.setAttribute(resized, was_resized)
        return False
    if not window.isMaximized() and not window.isFullScreen():
        window.setGeometry(fit_within(window.geometry(), _available(window.geometry())))
    return True


def _restore_geometry(window: QMainWindow, settings: QSettings) -> bool:
    """Qt's kept geometry put back, else (Qt refused it, or its size is impossible) our own
    keys' within the screen; False when neither is kept with a size the user could make."""
    geometry = settings.value(GEOMETRY_KEY)
    if isinstance(geometry, QByteArray) and window.restoreGeometry(geometry):
        if _possible(window, _normal(window)):
            return True
    normal = settings.value(NORMAL_KEY)
    if not isinstance(normal, QRect) or not _possible(window, normal):
        return False
    window.setWindowState(Qt.WindowState.WindowNoState)
    window.setGeometry(fit_within(normal, _available(normal)))
    # An ini file reads a bool back as the text "true".
    if settings.value(MAXIMIZED_KEY) in (True, "true"):
        window.setWindowState(Qt.WindowState.WindowMaximized)
    return True


def _normal(window: QMainWindow) -> QRect:
    """The size and place ``window`` has when not maximized (Qt gives none, an invalid
    rect, for a window that has not kept one apart: its geometry then)."""
    normal = window.normalGeometry()
    return normal if normal.isValid() else window.geometry()


def _possible(window: QMainWindow, rect: QRect) -> bool:
    """Whether ``rect`` is at least ``window``'s minimum size hint, the least its layout
    lets the user make it."""
    least = window.minimumSizeHint()
    return rect.width() >= least.width() and rect.height() >= least.height()


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
