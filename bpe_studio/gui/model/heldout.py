"""How the compression curve names its held-out text, and whether the corpus is like it.

What it does: :func:`heldout_label` names a held-out text for the plot's legend (the bundled
default by what it is, TinyStories' validation split in English; another file by its name);
:func:`heldout_problem` says at once why a file chosen as held-out text cannot be measured
(missing, unreadable, empty, not UTF-8 at its start), before any curve is drawn;
:func:`english_like` tells, from the first 64 KiB of a corpus, whether it is English prose
like that default: nearly all its letters ASCII, and nearly all its characters letters,
spaces or prose punctuation. A corpus that is not (Chinese, source code) measured against
English prose gives a held-out curve that says little about the tokenizer; the plot says so.
What it leaves out: measuring (``curves``, ``core.explain.compression``) and drawing (the plot).

The bundled Report samples are not offered as held-out texts: they are slices of the same
shared corpora a user is likely to train on, so they would not be held out.
"""

from __future__ import annotations

import os
from pathlib import Path

from .curve_server import read_slice
from .curves import DEFAULT_HELDOUT

PROBE_BYTES = 64 * 1024
# Set between English prose and web text on one side, source code (brackets, operators,
# digits) and other scripts on the other (the shares measured: docs/gui-state.md).
ASCII_LETTER_SHARE = 0.9
PROSE_SHARE = 0.94
_PROSE_MARKS = frozenset(" \t.,;:!?'\"-\u2018\u2019\u201c\u201d")


def heldout_label(path: str | os.PathLike) -> str:
    """What the legend calls the held-out text at ``path``."""
    if Path(path) == DEFAULT_HELDOUT:
        return "TinyStories validation (English, bundled)"
    return Path(path).name


def heldout_problem(path: str | os.PathLike) -> str | None:
    """Why the file at ``path`` cannot be measured as held-out text, naming it, or None. Only
    its start is read here (the GUI thread opens it), as the measuring reads it
    (``curve_server.read_slice``); a fault further on is reported from there."""
    try:
        head = read_slice(Path(path), PROBE_BYTES)
    except OSError as error:
        return f"{path}: {error.strerror or error}"
    except ValueError as error:  # names the file and the byte
        return str(error)
    if not head:
        return f"{path}: the file is empty: there is no text to measure"
    return None


def english_like(path: str | os.PathLike) -> bool:
    """True when the head of the file at ``path`` reads as English prose; False for other
    text, and for a file that cannot be read (the run reports that)."""
    try:
        with open(path, "rb") as f:
            head = f.read(PROBE_BYTES)
    except OSError:
        return False
    text = head.decode("utf-8", errors="ignore")
    chars = [c for c in text if c not in "\r\n"]
    letters = [c for c in chars if c.isalpha()]
    if not letters:
        return False
    ascii_letters = sum(c.isascii() for c in letters) / len(letters)
    prose = sum(c.isalpha() or c in _PROSE_MARKS for c in chars) / len(chars)
    return ascii_letters >= ASCII_LETTER_SHARE and prose >= PROSE_SHARE
