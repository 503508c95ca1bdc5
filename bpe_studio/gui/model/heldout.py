"""How the compression curve names its held-out text, and whether the corpus is like it.

What it does: :func:`heldout_label` names a held-out text for the plot's legend (the bundled
default by what it is, TinyStories' validation split in English; another file by its name);
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
