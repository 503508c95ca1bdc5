"""Token spans of a long text, computed piece by piece and packed into NumPy arrays.

What it does: :func:`compute_spans` runs :meth:`Tokenizer.spans` over the text in pieces of
about ``PIECE_CHARS`` characters, cut only where a cut cannot change any token
(``boundaries.text_cuts``), so a caller can stop it between pieces; the result is packed into
parallel arrays (a million Chinese characters make about three million spans: as ``TokenSpan``
tuples that would be ~400 MB, packed it is ~40 MB). :class:`SpanArrays` answers the questions a
viewer asks (which spans cover these characters, UTF-16 offsets for Qt's documents).
What it leaves out: threads, debouncing and painting (the app's ``gui/spans.py`` and views).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import regex

from .boundaries import text_cuts
from .surrogates import replace_surrogates
from .tokenizer import Tokenizer, TokenSpan

PIECE_CHARS = 1 << 15
_ASTRAL = regex.compile(r"[\U00010000-\U0010FFFF]")


@dataclass(frozen=True, eq=False)
class SpanArrays:
    """The spans of one text, packed: ``ids``, ``starts``, ``ends`` (character offsets) and
    ``partial`` are parallel arrays; ``astral`` holds the offsets of characters outside the
    BMP, which take two UTF-16 units in Qt's documents."""

    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    partial: np.ndarray
    text_length: int
    utf8_length: int  # bytes the tokens hold (surrogates counted as encode() encodes them)
    astral: np.ndarray
    tokenizer: Tokenizer

    def __len__(self) -> int:
        return len(self.ids)

    def to_spans(self) -> list[TokenSpan]:
        return [
            TokenSpan(int(i), int(s), int(e), bool(p))
            for i, s, e, p in zip(self.ids, self.starts, self.ends, self.partial)
        ]

    def index_range(self, start: int, end: int) -> tuple[int, int]:
        """Indices ``[lo, hi)`` of the spans overlapping characters ``[start, end)``."""
        lo = int(np.searchsorted(self.ends, start, side="right"))
        hi = int(np.searchsorted(self.starts, end, side="left"))
        return lo, max(lo, hi)

    def covering(self, char: int) -> range:
        """Indices of the spans holding character ``char`` (several if a character is split)."""
        lo, hi = self.index_range(char, char + 1)
        return range(lo, hi)

    def to_utf16(self, char: int) -> int:
        return char + int(np.searchsorted(self.astral, char, side="left"))

    def from_utf16(self, unit: int) -> int:
        units = self.astral + np.arange(len(self.astral))
        return unit - int(np.searchsorted(units, unit, side="left"))


def _utf8_length(text: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return len(replace_surrogates(text).encode("utf-8"))


def compute_spans(
    tokenizer: Tokenizer,
    text: str,
    is_stale: Callable[[], bool] = lambda: False,
    piece: int = PIECE_CHARS,
) -> SpanArrays | None:
    """Spans equal to ``tokenizer.spans(text)``, packed; None if ``is_stale()`` turned true."""
    cuts = text_cuts(text, tokenizer.specials, tokenizer.cut_rules, piece)
    parts: list[np.ndarray] = []
    for a, b in zip(cuts, cuts[1:]):
        if is_stale():
            return None
        spans = tokenizer.spans(text[a:b])
        if spans:
            arr = np.array(spans, dtype=np.int64).reshape(-1, 4)
            arr[:, 1:3] += a
            parts.append(arr)
    packed = np.concatenate(parts) if parts else np.zeros((0, 4), dtype=np.int64)
    astral = np.fromiter((m.start() for m in _ASTRAL.finditer(text)), dtype=np.int64)
    return SpanArrays(
        ids=packed[:, 0].astype(np.int32),
        starts=packed[:, 1].astype(np.int32),
        ends=packed[:, 2].astype(np.int32),
        partial=packed[:, 3].astype(bool),
        text_length=len(text),
        utf8_length=_utf8_length(text),
        astral=astral,
        tokenizer=tokenizer,
    )
