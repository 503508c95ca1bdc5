"""Why a file could not be written, in words that name what is in the way.

What it does: :func:`write_failure` turns the ``OSError`` of a write at ``path`` into one
line, ``PATH: reason``. The system's own words mislead in three cases a user meets by
typing a path: "Not a directory" (a file stands where a folder of the path should be:
which one?), "No such file or directory" for a folder that exists but refuses new entries
(``/proc``, ``/sys``), and the same words for a folder that is missing. What it leaves out:
making folders, retrying (the writers).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


def write_failure(path: str | os.PathLike[str], error: OSError) -> str:
    """``error``, met writing ``path``, as ``PATH: reason``.

    >>> write_failure("out/report.csv", PermissionError(errno.EACCES, "Permission denied"))
    'out/report.csv: Permission denied'
    """
    shown = os.fspath(path)
    reason = error.strerror or str(error)
    target = Path(os.fsdecode(error.filename)) if error.filename else Path(shown)
    if error.errno == errno.ENOTDIR:
        blocking = _file_in_the_way(target)
        if blocking is not None:
            reason = f"{blocking} is a file, not a folder"
    elif error.errno == errno.ENOENT:
        folder = _nearest_existing(target.parent)
        if folder == target.parent and folder.is_dir():
            reason = f"{folder} does not accept new files ({reason})"
        elif folder is not None and folder.is_dir():
            missing = target.parent
            reason = f"the folder {missing} does not exist"
    elif error.errno == errno.EISDIR:
        # (The error names the temporary file an atomic write moves there, not the folder.)
        reason = f"{shown} is a folder, not a file"
    return f"{shown}: {reason}"


def _nearest_existing(path: Path) -> Path | None:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return None


def _file_in_the_way(path: Path) -> Path | None:
    """The first of ``path``'s folders that is a file (None if none is)."""
    for candidate in reversed(path.parents):
        if candidate.exists() and not candidate.is_dir():
            return candidate
    return None
