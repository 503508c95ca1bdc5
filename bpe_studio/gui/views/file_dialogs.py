"""The app's file dialogs, and the folder each opens in.

What it does: every open, save and folder dialog opens in the folder the user last chose for
that kind of file (:data:`CORPUS`, :data:`TOKENIZER`, :data:`SAVE`, :data:`HELDOUT`,
:data:`IDS`, :data:`EXPORT`), else the last folder chosen for any kind, else the user's home;
never a folder inside the installed package (where the bundled sample and held-out text
live: nothing of the user's is there, and nothing should be written there). The folders
are kept with ``QSettings``. :func:`open_file`, :func:`open_files`, :func:`save_file` and
:func:`existing_folder` ask (modal); the open dialogs remember where the answer was, a save's
caller does (:func:`remember`) once the save succeeded: a folder it failed in (read-only,
full) is not where the next dialog should open. Each opens at a share of the window's size,
and tells files apart by their names alone (:class:`ByName`), never by reading them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib.resources import files
from pathlib import Path

from PySide6.QtCore import QEvent, QFileInfo, QMimeDatabase, QMimeType, QObject
from PySide6.QtGui import QAbstractFileIconProvider, QIcon
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QFileIconProvider, QWidget

from .common import app_settings

CORPUS, TOKENIZER, SAVE, HELDOUT, IDS, EXPORT = (
    "corpus",
    "tokenizer",
    "save",
    "heldout",
    "ids",
    "export",
)
_KEY = "dialogs/{}"
_ANY = "dialogs/last"
# The installed package: the app's code (bpe_studio/) and its resources (bpe_studio.resources,
# which an editable install maps to the repository's resources/).
_PACKAGE_FOLDERS = (
    Path(__file__).resolve().parents[2],
    Path(str(files("bpe_studio.resources"))).resolve(),
)


def inside_package(folder: Path) -> bool:
    """Whether ``folder`` is in the installed package (or its resources)."""
    try:
        resolved = folder.resolve()
    except OSError:
        return False
    return any(resolved == p or p in resolved.parents for p in _PACKAGE_FOLDERS)


def _usable(value: object) -> Path | None:
    if not isinstance(value, str) or not value:
        return None
    folder = Path(value)
    if not _is_dir(folder) or inside_package(folder):
        return None
    return folder


def _is_dir(path: Path) -> bool:
    """``path.is_dir()``, False where it cannot be asked (a cache audit: a remembered folder
    made private since, or a path too long, raised on the GUI thread and no dialog opened)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def start_folder(kind: str) -> str:
    """Where a dialog for ``kind`` opens: its last folder, the last folder of any dialog, or
    home; never inside the installed package."""
    settings = app_settings()
    for key in (_KEY.format(kind), _ANY):
        folder = _usable(settings.value(key, ""))
        if folder is not None:
            return str(folder)
    return str(Path.home())


def remember(kind: str, chosen: str | Path) -> None:
    """The folder of ``chosen`` (a file, or a folder for a folder dialog) is where the next
    dialog of ``kind`` opens (unless it is inside the installed package)."""
    path = Path(chosen)
    folder = path if _is_dir(path) else path.parent
    if inside_package(folder) or not str(folder):
        return
    settings = app_settings()
    settings.setValue(_KEY.format(kind), str(folder))
    settings.setValue(_ANY, str(folder))


# The share of the window's size a file dialog opens at.
ROOM = 0.7


class _Roomy(QObject):
    """Sizes a file dialog of ``parent``'s window as it is shown: a share of the window, never
    less than the dialog asks nor more than the screen, centred on the window."""

    def __init__(self, parent: QWidget | None) -> None:
        super().__init__()
        self._window = parent.window() if parent is not None else None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        window = self._window
        if event.type() == QEvent.Type.Show and isinstance(watched, QFileDialog) and window:
            frame = window.geometry()
            size = frame.size() * ROOM
            size = size.expandedTo(watched.sizeHint())
            screen = watched.screen()
            if screen is not None:
                size = size.boundedTo(screen.availableGeometry().size())
            watched.resize(size)
            rect = watched.geometry()
            rect.moveCenter(frame.center())
            watched.move(rect.topLeft())
        return False


@contextmanager
def _roomy(parent: QWidget | None) -> Iterator[None]:
    """While a file dialog runs: it opens at :data:`ROOM` of the window
    (its own size, 632 x 416 or so, cut the Size and Date columns). A native dialog is left
    as its platform sizes it."""
    app = QApplication.instance()
    roomy = _Roomy(parent)
    if app is not None:
        app.installEventFilter(roomy)
    try:
        yield
    finally:
        if app is not None:
            app.removeEventFilter(roomy)


class ByName(QFileIconProvider):
    """A file's icon and type from its name alone.

    Qt's own provider reads the first bytes of every file a dialog lists to tell its type,
    on the GUI thread: a file whose read never returns (``/proc/kmsg`` for root, a stalled
    network mount) froze the app as soon as its folder was shown or typed into the dialog.
    """

    _mimes = QMimeDatabase()

    def icon(self, what: QAbstractFileIconProvider.IconType | QFileInfo) -> QIcon:
        kind = QAbstractFileIconProvider.IconType
        if isinstance(what, kind):
            return super().icon(what)
        if what.isDir():
            return super().icon(kind.Folder)
        fallback = super().icon(kind.File)
        return QIcon.fromTheme(self._by_name(what).iconName(), fallback)

    def type(self, info: QFileInfo) -> str:
        if info.isDir():
            return "Folder"
        mime = self._by_name(info)
        return mime.comment() or mime.name()

    def _by_name(self, info: QFileInfo) -> QMimeType:
        return self._mimes.mimeTypeForFile(info, QMimeDatabase.MatchMode.MatchExtension)


@cache
def by_name() -> ByName:
    """The provider every dialog shares (a dialog does not own its provider)."""
    return ByName()


# What a dialog asks for.
FILE, FILES, SAVE_AS, FOLDER = "file", "files", "save as", "folder"


# The first extension a filter names ("CSV (*.csv)": "csv"); "All (*)" names none.
_SUFFIX = re.compile(r"\*\.(\w+)")


def run_dialog(
    parent: QWidget | None, caption: str, start: str, file_filter: str, mode: str
) -> list[str]:
    """Ask with a modal dialog opened on ``start`` (a folder, or for :data:`SAVE_AS` the
    proposed file); the paths chosen, [] when cancelled."""
    dialog = QFileDialog(parent, caption, start, file_filter)
    # Set before the event loop runs: the dialog asks for its entries' icons and types only
    # once the folder's listing arrives through it.
    dialog.setIconProvider(by_name())
    if mode == SAVE_AS:
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
        # A name typed without an extension gets the filter's ("report" -> "report.csv"),
        # as a file saved as CSV or PNG must be named to open as one elsewhere.
        suffix = _SUFFIX.search(file_filter)
        if suffix is not None:
            dialog.setDefaultSuffix(suffix.group(1))
    elif mode == FOLDER:
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly)
    elif mode == FILES:
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
    else:
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    with _roomy(parent):
        accepted = dialog.exec() == QDialog.DialogCode.Accepted
    chosen = dialog.selectedFiles() if accepted else []
    dialog.deleteLater()
    return chosen


def open_file(parent: QWidget | None, kind: str, caption: str, file_filter: str) -> str:
    """One file to open; "" when cancelled."""
    paths = run_dialog(parent, caption, start_folder(kind), file_filter, FILE)
    if paths:
        remember(kind, paths[0])
    return paths[0] if paths else ""


def open_files(parent: QWidget | None, kind: str, caption: str, file_filter: str) -> list[str]:
    """Files to open (one or several); [] when cancelled."""
    paths = run_dialog(parent, caption, start_folder(kind), file_filter, FILES)
    if paths:
        remember(kind, paths[0])
    return paths


def save_file(parent: QWidget | None, kind: str, caption: str, name: str, file_filter: str) -> str:
    """Where to save a file proposed as ``name``; "" when cancelled. Not remembered: the
    caller calls :func:`remember` once the file is saved."""
    proposed = str(Path(start_folder(kind)) / name)
    paths = run_dialog(parent, caption, proposed, file_filter, SAVE_AS)
    return paths[0] if paths else ""


def existing_folder(parent: QWidget | None, kind: str, caption: str) -> str:
    """A folder to save into; "" when cancelled. Not remembered: the caller calls
    :func:`remember` once the save into it succeeded."""
    paths = run_dialog(parent, caption, start_folder(kind), "", FOLDER)
    return paths[0] if paths else ""
