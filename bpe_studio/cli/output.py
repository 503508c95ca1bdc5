"""Errors of the command line, and checks of an output location made before any work starts.

What it does: :class:`CliError` is a one-line message for the user; :func:`check_out_dir` and
:func:`check_out_file` find, before training or encoding, an ``--out`` that could not be
written (a file where a directory is wanted, a directory where a file is, a place that refuses
new files such as ``/proc``, files that would be replaced without ``--force``), by trying: they
create what is missing, write a probe file and remove both again. :func:`os_error_message`
words an ``OSError`` with the path the user gave, never a temporary file.
What it leaves out: the commands themselves.
"""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

EXIT_ERROR = 1
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A one-line message for the user; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


def fail(message: str, code: int = EXIT_ERROR) -> int:
    """Print ``bpe-studio: error: MESSAGE`` on stderr (on a terminal, over any progress bar
    still drawn there) and return ``code``."""
    clear = "\r\x1b[2K" if sys.stderr.isatty() else ""
    print(f"{clear}bpe-studio: error: {message}", file=sys.stderr)
    return code


def os_error_line(error: OSError) -> str:
    """An error reading an input, as one line: ``FILE: reason`` when it names its file."""
    return f"{error.filename}: {error.strerror}" if error.filename else str(error)


def os_error_message(user_path: str, error: OSError) -> str:
    """``error`` as ``USER_PATH: reason``; the reason explains what errno alone misleads on."""
    reason = error.strerror or str(error)
    if error.errno == errno.ENOENT and Path(user_path).parent.is_dir():
        # subtle: /proc and /sys exist but refuse new entries with ENOENT, which would read
        # as if the user's directory were missing.
        parent = os.fspath(Path(user_path).parent) or "."
        reason = f"{parent} does not accept new files ({reason})"
    return f"{user_path}: cannot write there: {reason}"


def _existing_ancestor(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(".")


def _probe_directory(directory: Path, user_path: str) -> None:
    """Create ``directory`` if missing and write a file in it; then undo both."""
    created: list[Path] = []
    try:
        ancestor = _existing_ancestor(directory)
        if not ancestor.is_dir():
            raise CliError(f"{user_path}: {ancestor} is a file, not a directory")
        missing = [directory, *directory.parents]
        missing = missing[: missing.index(ancestor)] if ancestor in missing else []
        for d in reversed(missing):
            d.mkdir()
            created.append(d)
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".bpe-studio-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise CliError(os_error_message(user_path, e)) from None
    finally:
        for d in reversed(created):
            try:
                d.rmdir()
            except OSError:
                pass


def check_out_dir(user_path: str, files: Sequence[str], *, force: bool) -> None:
    """Raise :class:`CliError` unless ``files`` can be written into the directory
    ``user_path`` (created if missing); existing ones need ``force``."""
    out = Path(user_path)
    if out.exists() and not out.is_dir():
        raise CliError(f"{user_path}: exists and is not a directory (--out names a directory)")
    if out.is_dir():
        present = [name for name in files if (out / name).exists()]
        if present and not force:
            raise CliError(
                f"{user_path}: already holds {' and '.join(present)}; pass --force to "
                "replace them, or choose another --out"
            )
    _probe_directory(out, user_path)


def check_out_file(user_path: str) -> None:
    """Raise :class:`CliError` unless a file can be written at ``user_path`` (its directory
    is created if missing)."""
    out = Path(user_path)
    if out.is_dir():
        raise CliError(f"{user_path}: is a directory; --out names the file to write")
    _probe_directory(out.parent, user_path)
