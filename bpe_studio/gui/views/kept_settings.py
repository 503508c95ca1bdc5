"""The app's settings file, and saying once when what is set there is not kept.

What it does: :class:`AppSettings` is the ``QSettings`` every view reads and writes
(``common.app_settings``): each value set is written at once and checked
(:func:`unkept_reason`). The first failure of the process is said once (:func:`say_unkept`):
one line on stderr, and the ``unkept`` signal of :func:`notifier`, which each window shows in
its status line. Never a dialog, never an exception: the app goes on with the values it holds
for this session.
What it leaves out: which settings there are (the modules that set them), where the file is
(Qt's choice: ``XDG_CONFIG_HOME`` on Linux).
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, Signal


class AppSettings(QSettings):
    """The app's settings (one organisation and application name for every view); a value
    set is written to the file at once, and a file that does not keep it is said
    (:func:`say_unkept`)."""

    def __init__(self) -> None:
        super().__init__("bpe-studio", "bpe-studio")

    def setValue(self, key: str, value: Any, /) -> None:  # noqa: N802 - Qt's API
        super().setValue(key, value)
        if notifier().told is not None:
            return  # said once already; Qt still writes the value when this object goes
        self.sync()
        reason = unkept_reason(self, key)
        if reason is not None:
            say_unkept(unkept_message(self.fileName(), reason))


def unkept_reason(settings: QSettings, key: str | None = None) -> str | None:
    """Why the file of ``settings`` did not keep what was set and written to it (``key``);
    None when it did.

    subtle: the status alone does not tell: it is that of this object's own writes only (a
    fresh object that wrote nothing says NoError over a folder that keeps nothing), so the
    file must also be there, in a folder the next write may replace it in (Qt writes a new
    file beside it and renames it over the old). And a FormatError is of the file as it was
    read: one Qt could not read (NUL bytes left by a crash) is replaced by the write, so
    the file is read again to tell."""
    path = Path(settings.fileName())
    status = settings.status()
    if status == QSettings.Status.FormatError:
        again = QSettings(str(path), settings.format())
        if again.status() != QSettings.Status.NoError or (
            key is not None and not again.contains(key)
        ):
            return "it is not a settings file Qt can read (fix or remove it)"
        status = QSettings.Status.NoError
    if (
        status == QSettings.Status.NoError
        and _is_file(path)
        and _writable(path.parent)
        and _own_file_usable(path)
    ):
        return None
    return _why_unwritable(path)


def check_at_start() -> None:
    """Say (:func:`say_unkept`) at once when the settings file cannot keep what will be set:
    a message from the first write came with an action whose own notice replaced it, or at
    the window's closing, where nobody saw it."""
    path = Path(AppSettings().fileName())
    folder = _nearest_folder(path)  # its own, or the one the settings' folder will be made in
    read_only, full = _file_system(folder)
    # subtle: a full disk too, where the file is there and writable: Qt writes a new file
    # beside it and renames it over, which needs room.
    if not read_only and not full and _writable(folder) and _own_file_usable(path):
        if _is_file(path) or not _exists(path):
            return
    say_unkept(unkept_message(str(path), _why_unwritable(path)))


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK)


def _own_file_usable(path: Path) -> bool:
    """Whether the settings file there is one this process may read and write. subtle: Qt
    reads nothing from a file it may not read and writes nothing over one it may not write,
    whatever its folder allows (a file left owned by root by a run under sudo): the folder's
    permissions alone said all was kept, then "make its folder writable" of a writable one."""
    return not _exists(path) or os.access(path, os.R_OK | os.W_OK)


def _why_unwritable(path: Path) -> str:
    """In the system's words (lower case): why ``path`` cannot be written."""
    try:
        if path.is_dir():
            return _words(errno.EISDIR)
    except OSError:
        pass
    folder = _nearest_folder(path)
    read_only, full = _file_system(folder)
    if read_only:
        return _words(errno.EROFS)
    if not _own_file_usable(path):
        return f"{_words(errno.EACCES)} {OWN_FILE}"
    if not _writable(folder):
        return _words(errno.EACCES)
    if full:
        return _words(errno.ENOSPC)
    return "it could not be written"


def _nearest_folder(path: Path) -> Path:
    """The nearest folder of ``path``'s that is there: its own, or the one it would be made in."""
    folder = path.parent
    while not _exists(folder) and folder != folder.parent:
        folder = folder.parent
    return folder


def _file_system(folder: Path) -> tuple[bool, bool]:
    """Whether the file system holding ``folder`` is read-only, and whether it is full."""
    try:
        system = os.statvfs(folder)
    except (OSError, AttributeError):  # no statvfs (Windows), or a folder gone meanwhile
        return False, False
    # subtle: one that counts no blocks at all (some FUSE mounts) says nothing of its room:
    # asked at start, it would be called full while it keeps what is written.
    full = system.f_blocks > 0 and system.f_bavail == 0
    return bool(system.f_flag & getattr(os, "ST_RDONLY", 1)), full


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


# Said after "permission denied" when the file itself refuses, its folder not.
OWN_FILE = "(the file itself)"


def _words(code: int) -> str:
    text = os.strerror(code)
    return text[:1].lower() + text[1:]


def unkept_message(file: str, reason: str) -> str:
    """What the status line and stderr say (once) when the settings file keeps nothing."""
    if reason == _words(errno.EISDIR):
        advice = "move that folder out of the way"
    elif reason.endswith(OWN_FILE):
        advice = "make it readable and writable by you, or remove it"
    elif reason == _words(errno.ENOSPC):
        where = (
            " (or set XDG_CONFIG_HOME to a folder on another)" if sys.platform == "linux" else ""
        )
        advice = f"free space on its disk{where}"
    else:
        where = " (or set XDG_CONFIG_HOME to a folder that is)" if sys.platform == "linux" else ""
        advice = f"make its folder writable{where}"
    return (
        f"Settings are not kept: {file}: {reason}. The appearance, window layout, recent Hub "
        f"models and dialogs' folders will be forgotten at the next start; {advice}."
    )


class _Notifier(QObject):
    unkept = Signal(str)  # the message (GUI thread), emitted once per process

    def __init__(self) -> None:
        super().__init__()
        self.told: str | None = None


_NOTIFIER: list[_Notifier] = []


def notifier() -> _Notifier:
    """The app's one notifier of settings not kept (made on first use, with the app)."""
    if not _NOTIFIER:
        _NOTIFIER.append(_Notifier())
    return _NOTIFIER[0]


def say_unkept(message: str) -> None:
    """Say ``message`` on stderr and in every window's status line, unless it was said (or
    another such message was) before in this process: a write that fails fails again at
    each setting, and once is enough."""
    told = notifier()
    if told.told is not None:
        return
    told.told = message
    print(f"bpe-studio: {message[:1].lower()}{message[1:]}", file=sys.stderr)
    told.unkept.emit(message)
