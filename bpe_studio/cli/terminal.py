"""The terminal stderr draws on: how wide it is, and how a line drawn on it is erased.

What it does: :func:`width` is the columns a line may take, read at each draw so that a
resized window is followed; :func:`erase` is what goes before a line that replaces the one
the cursor is on (a progress bar's redraw, a message over a bar). A line as wide as the
terminal wraps, and erasing clears only the row the cursor is on, so each redraw of a
wrapped line left a row behind: lines drawn in place are kept one column narrower than
:func:`width`'s terminal. What it leaves out: what the lines say (``progress``, ``output``).
"""

from __future__ import annotations

import os
import shutil
from typing import TextIO

# Where nothing says (a stream that is no terminal, an emulator that reports no size).
FALLBACK_COLUMNS = 80
# An erase-line escape sequence; a terminal that takes none (TERM=dumb, as Emacs' shell and
# some CI consoles declare) is erased with spaces instead.
_ERASE = "\r\x1b[2K"


def is_terminal(stream: TextIO | None) -> bool:
    """Whether ``stream`` is a terminal (a closed or replaced one is not)."""
    try:
        return stream is not None and stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False


def width(stream: TextIO | None) -> int:
    """The characters a line drawn on ``stream`` may hold without wrapping: one less than
    its columns (``COLUMNS`` when it is a positive number, else the size of ``stream``'s own
    terminal, which ``shutil.get_terminal_size`` does not ask when standard output is
    redirected; else that function's answer, else 80)."""
    columns = _columns_set()
    if columns <= 0:
        try:
            columns = os.get_terminal_size(stream.fileno()).columns if stream else 0
        except (OSError, ValueError, AttributeError):
            columns = 0
    if columns <= 0:
        columns = shutil.get_terminal_size(fallback=(FALLBACK_COLUMNS, 24)).columns
    return max(columns - 1, 1)


def _columns_set() -> int:
    """``COLUMNS`` as a number of columns; 0 when unset or no positive number ("abc", "0")."""
    try:
        return max(int(os.environ.get("COLUMNS", "")), 0)
    except ValueError:
        return 0


def is_dumb() -> bool:
    """Whether the terminal declares that it takes no escape sequences."""
    return os.environ.get("TERM", "") == "dumb"


def erase(stream: TextIO | None) -> str:
    """What to write before a line that replaces the one ``stream``'s cursor is on: nothing
    when it is no terminal; the erase-line sequence; or, on a dumb terminal, a carriage
    return, spaces over the line, and another carriage return."""
    if not is_terminal(stream):
        return ""
    if is_dumb():
        return "\r" + " " * width(stream) + "\r"
    return _ERASE
