"""Standard error that never costs a command its result.

What it does: :func:`guard_stderr` makes ``sys.stderr`` a :class:`LossyStream`: writing to
it never raises. When standard error is closed (``2>&-``) or its reader has gone
(``2>&1 | head -1``), what would go there is dropped, and file descriptor 2 is pointed at
``os.devnull``, so that nothing else fails on it either (worker processes inherit it, the
interpreter flushes it at exit) and no file opened later can take its number and receive
messages meant for the terminal. Progress, summaries and errors are lost then; the files
are written and the exit code says what happened, as when they are shown.
What it leaves out: standard output, which carries data (``output.write_stream``).
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any, TextIO


def _point_at_devnull(fd: int) -> None:
    """Make ``fd`` a descriptor of ``os.devnull`` (opened for writing)."""
    null = os.open(os.devnull, os.O_WRONLY)
    if null != fd:
        os.dup2(null, fd)
        os.close(null)


class LossyStream(io.TextIOBase):
    """A text stream over ``stream`` whose writes never raise: after the first that fails
    (a closed or broken stream), ``lost`` is true and the rest go nowhere."""

    def __init__(self, stream: TextIO | None, fd: int = 2) -> None:
        self._stream = stream
        self._fd = fd
        self.lost = stream is None

    def _lose(self) -> None:
        self.lost = True
        try:
            _point_at_devnull(self._fd)
        except OSError:
            pass

    def write(self, text: str) -> int:
        if not self.lost and self._stream is not None:
            try:
                self._stream.write(text)
            except (OSError, ValueError):
                self._lose()
        return len(text)

    def flush(self) -> None:
        if not self.lost and self._stream is not None:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._lose()

    def isatty(self) -> bool:
        if self.lost or self._stream is None:
            return False
        try:
            return self._stream.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        return self._fd

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._stream, "errors", "backslashreplace")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stderr() -> LossyStream:
    """Make ``sys.stderr`` a :class:`LossyStream` (see the module's docstring); a closed
    descriptor 2 is pointed at ``os.devnull`` at once."""
    current = sys.stderr
    if isinstance(current, LossyStream):
        return current
    try:
        os.fstat(2)
    except OSError:  # closed before the program started: Python made sys.stderr None
        _point_at_devnull(2)
        current = None
    guarded = LossyStream(current)
    sys.stderr = guarded
    return guarded
