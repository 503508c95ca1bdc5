"""A long text's token spans (``Tokenizer.spans``), computed piece by piece and packed into
NumPy arrays: what the editor colours.

What it does: :func:`compute_spans` runs :meth:`Tokenizer.spans` over the text in pieces of
about ``PIECE_CHARS`` characters, cut only where a cut cannot change any token
(``boundaries.text_cuts``), so a caller can stop it between pieces; the result is packed into
parallel arrays (a million Chinese characters make millions of spans; packed, they take a
small fraction of the memory ``TokenSpan`` tuples would: docs/patterns.md, "Thresholds and the
figures behind them"). :func:`decoded_spans` packs the spans of given ids (the text they
decode to, each token's characters; ``foreign_decode`` for a ``tokenizer.json`` of another
kind), after :func:`check_ids` finds every id in the vocabulary. :class:`SpanArrays` answers the
questions a viewer asks: which spans cover these characters, how often an id occurs, the
piece of the encoder (a pre-token or a special token) holding a character, and the offsets of
a character in a plain-text document that holds the text (``to_utf16``: UTF-16 units, without
the characters such a document drops).
The spans of one text at another step are ``spans_at_step``'s; threads and painting the app's
(``gui/jobs/span_service.py``, the editor).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import regex

from ..encode.foreign import AnyTokenizer, ForeignTokenizer
from ..encode.token_spans import TokenSpan
from ..pretokenization.boundaries import text_cuts
from ..pretokenization.pretokenizer import matches_in, pretokenizer
from ..text.surrogates import replace_surrogates
from ..train.vocab import missing_id
from .encode_steps import pipeline_pieces
from .foreign_decode import foreign_decoded

PIECE_CHARS = 1 << 15
CHECK_SLICE = 1 << 20  # ids checked per NumPy call (check_ids)
_ASTRAL = regex.compile(r"[\U00010000-\U0010FFFF]")
_CRLF_LF = regex.compile(r"(?<=\r)\n")
_EMPTY = np.zeros(0, dtype=np.int64)


def document_hidden(text: str) -> np.ndarray:
    """Offsets of the characters of ``text`` that a plain-text document given ``text`` does not
    hold: the ``\\n`` of each ``\\r\\n`` (the pair becomes one paragraph break) and a leading
    byte-order mark. Every other line break (``\\n``, a lone ``\\r``, U+2029) becomes one
    paragraph break, so it keeps its place."""
    hidden = [m.start() for m in _CRLF_LF.finditer(text)]
    if text.startswith("\ufeff"):
        hidden.insert(0, 0)
    return np.array(hidden, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class SpanArrays:
    """The spans of one text, packed: ``ids``, ``starts``, ``ends`` (character offsets) and
    ``partial`` are parallel arrays; ``astral`` holds the offsets of characters outside the
    BMP, which take two UTF-16 units in Qt's documents, and ``hidden`` those a document does
    not hold (:func:`document_hidden`). ``cuts`` are offsets where the text may be cut
    without changing a pre-token (0 and the end included)."""

    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    partial: np.ndarray
    text_length: int
    utf8_length: int  # bytes the tokens hold (surrogates counted as encode() encodes them)
    astral: np.ndarray
    tokenizer: AnyTokenizer
    text: str = ""
    cuts: np.ndarray = field(default_factory=lambda: _EMPTY)
    hidden: np.ndarray = field(default_factory=lambda: _EMPTY)

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

    def covering_shown(self, char: int) -> range:
        """Indices of the spans holding what a document shows at character ``char``: those
        of :meth:`covering`, and those holding the character after it when a document hides
        that one (the "\\n" of "\\r\\n": one line break on screen, and GPT-2 gives it two
        tokens, of which the "\\n" one was shown nowhere)."""
        lo, hi = self.index_range(char, char + 1)
        k = int(np.searchsorted(self.hidden, char + 1))
        if k < len(self.hidden) and int(self.hidden[k]) == char + 1:
            hi = max(hi, self.index_range(char + 1, char + 2)[1])
        return range(lo, hi)

    def occurrences(self, token_id: int) -> int:
        """How many tokens of the text have id ``token_id``."""
        return int(np.count_nonzero(self.ids == token_id))

    # ------------------------------------------------------- document offsets
    @cached_property
    def _events(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where the document offset departs from the character offset: the sorted offsets of
        astral (+1 unit) and hidden (-1 unit) characters, the shift after each, and each
        event's end in units (the first unit after it)."""
        pos = np.concatenate([self.astral, self.hidden]).astype(np.int64)
        step = np.concatenate(
            [np.ones(len(self.astral), np.int64), -np.ones(len(self.hidden), np.int64)]
        )
        order = np.argsort(pos, kind="stable")
        pos, step = pos[order], step[order]
        shift = np.cumsum(step)
        return pos, shift, pos + 1 + shift

    def to_utf16(self, char: int) -> int:
        """The document offset (UTF-16 units) of character ``char``."""
        pos, shift, _ = self._events
        if not len(pos):
            return char
        i = int(np.searchsorted(pos, char, side="left"))
        return char + (int(shift[i - 1]) if i else 0)

    def from_utf16(self, unit: int) -> int:
        """The character at document offset ``unit`` (the inverse of :meth:`to_utf16`; a unit
        inside a surrogate pair gives its character, a hidden character is never returned)."""
        pos, shift, ends = self._events
        if not len(pos):
            return unit
        # The last event ending at or before ``unit``: characters after it are shifted by it.
        i = int(np.searchsorted(ends, unit, side="right"))
        char = unit - (int(shift[i - 1]) if i else 0)
        # subtle: the second unit of a surrogate pair lies before the next event's end; it
        # belongs to that (astral) character, not to the character after it.
        if i < len(pos) and char > pos[i]:
            char = int(pos[i])
        return char

    # ------------------------------------------------------------ pre-tokens
    def piece_at(self, char: int) -> str:
        """The piece of the encoder holding character ``char``, as the encoder takes it: a
        pre-token (after a pipeline's normalizers), or a special or added token cut out of the
        text (its content), one of :func:`~.encode_steps.pretokens`; "" past the end of the
        text or for a foreign tokenizer."""
        text = self.text
        tok = self.tokenizer
        if not 0 <= char < len(text) or isinstance(tok, ForeignTokenizer):
            return ""  # a foreign tokenizer's pre-tokens are its own (no regex of ours)
        cuts = self.cuts if len(self.cuts) else np.array([0, len(text)], dtype=np.int64)
        i = int(np.searchsorted(cuts, char, side="right"))
        a, b = int(cuts[i - 1]), int(cuts[min(i, len(cuts) - 1)])
        pipeline = tok.hf_pipeline
        if pipeline is not None:
            # subtle: the pipeline's added-token flags and normalizers cut as encoding does;
            # the piece is the one encoded (normalized), so Step-through ends on its ids.
            for s, e, piece in pipeline_pieces(pipeline, tok.specials, text[a:b]):
                if s <= char - a < e:
                    return piece
            return ""
        compiled = pretokenizer(tok.pattern).compiled
        for seg_start, seg_end, special in tok.specials.segments(text, a, b):
            if char < seg_end:
                for s, e in matches_in(compiled, text, seg_start, seg_end):
                    if s <= char < e:
                        return text[s:e]
                return ""
            if special is not None and char < seg_end + len(special):
                return special
        return ""


def _utf8_length(text: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return len(replace_surrogates(text).encode("utf-8"))


def _astral(text: str) -> np.ndarray:
    return np.fromiter((m.start() for m in _ASTRAL.finditer(text)), dtype=np.int64)


def compute_spans(
    tokenizer: AnyTokenizer,
    text: str,
    is_stale: Callable[[], bool] = lambda: False,
    piece: int = PIECE_CHARS,
) -> SpanArrays | None:
    """Spans equal to ``tokenizer.spans(text)``, packed; None if ``is_stale()`` turned true.
    A foreign tokenizer's text is one piece: where it may be cut is its own affair."""
    if isinstance(tokenizer, ForeignTokenizer):
        cuts = [0, len(text)]
        parts = [tokenizer.packed_spans(text)]
    else:
        cuts = text_cuts(text, tokenizer.cut_specials, tokenizer.cut_rules, piece)
        parts = []
        for a, b in zip(cuts, cuts[1:]):
            if is_stale():
                return None
            arr = tokenizer.packed_spans(text[a:b])
            if len(arr):
                arr[:, 1:3] += a
                parts.append(arr)
    if is_stale():
        return None
    packed = np.concatenate(parts) if parts else np.zeros((0, 4), dtype=np.int64)
    return SpanArrays(
        ids=packed[:, 0].astype(np.int32),
        starts=packed[:, 1].astype(np.int32),
        ends=packed[:, 2].astype(np.int32),
        partial=packed[:, 3].astype(bool),
        text_length=len(text),
        utf8_length=_utf8_length(text),
        astral=_astral(text),
        tokenizer=tokenizer,
        text=text,
        cuts=np.array(cuts, dtype=np.int64),
        hidden=document_hidden(text),
    )


def check_ids(
    tokenizer: AnyTokenizer,
    ids: Sequence[int] | np.ndarray,
    is_stale: Callable[[], bool] = lambda: False,
) -> bool:
    """Raise ValueError naming the first of ``ids`` not in ``tokenizer``'s vocabulary (and its
    position); False if ``is_stale()`` turned true first, else True. Whole arrays at a time,
    a slice per NumPy call so that a GUI thread waiting for the interpreter lock gets it back
    soon."""
    vocab = tokenizer.vocab
    n = len(ids)
    known = np.zeros(max(vocab, default=-1) + 1, dtype=bool)
    known[np.fromiter(vocab, dtype=np.int64, count=len(vocab))] = True
    for a in range(0, n, CHECK_SLICE):
        if is_stale():
            return False
        part = ids[a : a + CHECK_SLICE]
        try:
            array = np.asarray(part, dtype=np.int64)
        except OverflowError:  # a pasted number past int64: not an id
            array = np.array([i if -1 <= i < len(known) else -1 for i in part], dtype=np.int64)
        inside = (array >= 0) & (array < len(known))
        bad = ~inside
        bad[inside] = ~known[array[inside]]
        if bad.any():
            k = int(np.argmax(bad))
            token_id = int(part[k])
            raise ValueError(
                f"unknown token id {token_id:,} (item {a + k + 1:,} of {n:,}): "
                f"{missing_id(token_id, vocab)}"
            )
    return True


def _utf8_decoded(
    vocab: dict[int, bytes], ids: list[int], is_stale: Callable[[], bool]
) -> tuple[str, np.ndarray, np.ndarray, np.ndarray] | None:
    """The UTF-8 text of the ids' bytes (U+FFFD for what is not UTF-8) and each token's
    characters: a token holding part of a character spans that whole character
    (``partial``)."""
    n = len(ids)
    starts = np.zeros(n, dtype=np.int32)
    ends = np.zeros(n, dtype=np.int32)
    partial = np.zeros(n, dtype=bool)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    chunks: list[str] = []
    emitted = 0
    pending_before = False
    for i, token_id in enumerate(ids):
        if i % 65536 == 0 and is_stale():
            return None
        out = decoder.decode(vocab[token_id])
        pending_after = bool(decoder.getstate()[0])
        chunks.append(out)
        start, emitted = emitted, emitted + len(out)
        # A token ending inside a character also spans that character (emitted later).
        starts[i], ends[i] = start, emitted + (1 if pending_after else 0)
        partial[i] = pending_before or pending_after
        pending_before = pending_after
    chunks.append(decoder.decode(b"", final=True))
    text = "".join(chunks)
    np.minimum(ends, len(text), out=ends)
    return text, starts, ends, partial


def decoded_spans(
    tokenizer: AnyTokenizer,
    ids: Sequence[int] | np.ndarray,
    is_stale: Callable[[], bool] = lambda: False,
) -> SpanArrays | None:
    """The text ``ids`` decode to (``tokenizer.decode``: invalid UTF-8 becomes U+FFFD; a
    ``tokenizer.json`` of another kind, ``tokenizers``' own decode: ``foreign_decode``) and
    each token's characters, packed; None if ``is_stale()`` turned true.

    A token holding part of a character spans that whole character (``partial``); the bytes
    of a character that never completes become U+FFFD where the decoder emits it. An id not
    in the vocabulary raises ValueError naming it and its position."""
    if not check_ids(tokenizer, ids, is_stale):
        return None
    id_list = ids.tolist() if isinstance(ids, np.ndarray) else [int(i) for i in ids]
    if isinstance(tokenizer, ForeignTokenizer):
        found = foreign_decoded(tokenizer, id_list, is_stale)
    else:
        found = _utf8_decoded(tokenizer.vocab, id_list, is_stale)
    if found is None:
        return None
    text, starts, ends, partial = found
    vocab = tokenizer.vocab
    ids_array = np.asarray(id_list, dtype=np.int64).astype(np.int32)
    return SpanArrays(
        ids=ids_array,
        starts=starts,
        ends=ends,
        partial=partial,
        text_length=len(text),
        utf8_length=_utf8_length(text)
        if isinstance(tokenizer, ForeignTokenizer)
        else sum(len(vocab[t]) for t in id_list),
        astral=_astral(text),
        tokenizer=tokenizer,
        text=text,
        cuts=np.array([0, len(text)], dtype=np.int64),
        hidden=document_hidden(text),
    )
