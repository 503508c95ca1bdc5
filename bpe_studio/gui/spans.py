"""Token spans for the editor, computed off the GUI thread.

What it does: :func:`compute_spans` runs :meth:`Tokenizer.spans` over the text piece by piece,
cutting only where a cut cannot change any token, and packs the result into NumPy arrays (a
million Chinese characters make about three million spans: as ``TokenSpan`` tuples that would
be ~400 MB, packed it is ~40 MB). :class:`SpanService` runs it on a :class:`~.jobs.LatestJob`
after a short debounce (latest request wins; a superseded job stops between pieces).
:class:`TokenizerSource` builds a tokenizer lazily, in that same thread.
What it leaves out: painting (``views/token_editor``).
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import regex
from PySide6.QtCore import QObject, QTimer, Signal, Slot

from ..core import Tokenizer, TokenSpan
from ..core.pretokenize import special_regex
from .jobs import LatestJob

PIECE_CHARS = 1 << 15
# A letter followed by a non-letter always ends a GPT-2 pre-token (the pattern's tokens that
# hold letters end with one, and no token continues from a letter into anything else), and the
# next pre-token starts fresh there: cutting right after such a letter cannot change a token.
_SAFE_CUT = regex.compile(r"\p{L}(?!\p{L})")
_ASTRAL = regex.compile(r"[\U00010000-\U0010FFFF]")


class TokenizerSource:
    """A tokenizer to highlight with, built on first use (in the span thread), plus a label."""

    def __init__(
        self,
        label: str,
        *,
        tokenizer: Tokenizer | None = None,
        vocab: Mapping[int, bytes] | None = None,
        merges: Sequence[tuple[bytes, bytes]] = (),
        special_tokens: Sequence[str] = (),
    ) -> None:
        if tokenizer is None and vocab is None:
            raise ValueError("give a tokenizer, or a vocabulary to build one from")
        self.label = label
        self._tokenizer = tokenizer
        self._recipe = (dict(vocab or {}), list(merges), list(special_tokens))
        self._lock = threading.Lock()

    def get(self) -> Tokenizer:
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = Tokenizer(*self._recipe)
                self._recipe = ({}, [], [])
            return self._tokenizer


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
    utf8_length: int
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


def safe_cuts(text: str, special_tokens: Sequence[str], piece: int = PIECE_CHARS) -> list[int]:
    """Offsets ``[0, ..., len(text)]`` about ``piece`` characters apart where cutting ``text``
    leaves every token as it is: after a letter that ends a pre-token, never inside a special
    token."""
    n = len(text)
    cuts = [0]
    special_re = special_regex(list(special_tokens))
    specials = [(m.start(), m.end()) for m in special_re.finditer(text)] if special_re else []
    special_starts = [s for s, _ in specials]
    pos = piece
    while pos < n:
        m = _SAFE_CUT.search(text, pos)
        if m is None:
            break
        cut = m.end()
        i = bisect.bisect_left(special_starts, cut) - 1
        if i >= 0 and specials[i][0] < cut < specials[i][1]:
            pos = specials[i][1]  # inside a special token: look again after it
            continue
        if cut >= n:
            break
        cuts.append(cut)
        pos = cut + piece
    cuts.append(n)
    return cuts


def compute_spans(
    tokenizer: Tokenizer,
    text: str,
    is_stale: Callable[[], bool] = lambda: False,
    piece: int = PIECE_CHARS,
) -> SpanArrays | None:
    """Spans equal to ``tokenizer.spans(text)``, packed; None if ``is_stale()`` turned true."""
    cuts = safe_cuts(text, tokenizer.special_tokens, piece)
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
        utf8_length=len(text.encode("utf-8", errors="surrogatepass")),
        astral=astral,
        tokenizer=tokenizer,
    )


class SpanService(QObject):
    """Debounced, cancellable span computation on a :class:`~.jobs.LatestJob`; ``ready`` fires
    on the GUI thread with the latest result only."""

    ready = Signal(object)  # SpanArrays for the current text and tokenizer
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None, debounce_ms: int = 120) -> None:
        super().__init__(parent)
        self._job = LatestJob("bpe-spans", self)
        self._job.done.connect(self.ready)
        self._job.failed.connect(self.failed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._submit)
        self._pending: tuple[TokenizerSource, Callable[[], str]] | None = None

    def active_threads(self) -> int:
        return self._job.active_threads()

    def request(self, source: TokenizerSource | None, text: Callable[[], str]) -> None:
        """Mark the current result stale and compute anew after the debounce. ``text`` is read
        when the timer fires, so a burst of edits costs one copy of the document."""
        self._job.cancel()
        if source is None:
            self._pending = None
            self._timer.stop()
            return
        self._pending = (source, text)
        self._timer.start()

    @property
    def busy(self) -> bool:
        return self._pending is not None or self._job.busy

    @Slot()
    def _submit(self) -> None:
        if self._pending is None:
            return
        (source, text), self._pending = self._pending, None
        snapshot = text()

        def job(is_stale: Callable[[], bool]) -> SpanArrays | None:
            return compute_spans(source.get(), snapshot, is_stale)

        self._job.submit(job)

    def shutdown(self) -> None:
        """Abandon pending work and wait for the pool thread to finish its current piece."""
        self._pending = None
        self._timer.stop()
        self._job.shutdown()
