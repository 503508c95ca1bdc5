"""Each token of a text with the characters that hold it (``Tokenizer.spans``).

What it does: :func:`spans` encodes a text pre-token by pre-token and maps each token's bytes
back to character offsets; a token that starts or ends inside a multi-byte character is marked
``partial`` and covers the whole character. :func:`span_cuts` gives the character offsets where
such spans cut the text (Compare's and the Report's boundaries). A long text's spans, packed
in arrays for the editor, are ``explain.span_arrays``'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..text.surrogates import original_offsets, replace_surrogates
from .encoder import codepoints

if TYPE_CHECKING:
    from .encoder import Encoder


class TokenSpan(NamedTuple):
    """One token of a text: its id and the characters ``text[start:end]`` that hold its
    bytes. ``partial`` is true when the token starts or ends inside a multi-byte character;
    such a span covers the whole character, so neighbouring spans may overlap."""

    id: int
    start: int
    end: int
    partial: bool


def span_cuts(starts: np.ndarray, ends: np.ndarray, length: int) -> np.ndarray:
    """Sorted offsets ``0 < c < length`` where spans (any tokenizer's, in characters of the
    text, in any order) cut the text: a span starts at ``c`` and none holds characters on
    both sides of it (``start < c < end``). Spans sharing a character (a split multi-byte
    character, byte fallback's ``<0xNN>``) cut before it when the span before ends there; a
    normalized span reaching into the next one's character (``ﬁ`` as ``f`` + ``i``) cuts
    nowhere inside.

    >>> span_cuts(np.array([0, 2, 2, 3]), np.array([2, 3, 3, 4]), 4).tolist()
    [2, 3]
    >>> span_cuts(np.array([0, 1, 3]), np.array([2, 3, 4]), 4).tolist()
    [3]
    """
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if len(starts) and bool(np.all(starts[1:] >= starts[:-1])):
        return _cuts_in_order(starts, ends, length)
    wide = ends - starts >= 2
    # +1 after each wide span's start, -1 at its end: the running sum at c counts the spans
    # with start < c < end.
    size = length + 1
    held = np.bincount(starts[wide] + 1, minlength=size)[:size]
    held -= np.bincount(ends[wide], minlength=size)[:size]
    inside = np.cumsum(held)
    found = np.unique(starts)
    found = found[(found > 0) & (found < length)]
    return found[inside[found] == 0]


def _cuts_in_order(starts: np.ndarray, ends: np.ndarray, length: int) -> np.ndarray:
    """:func:`span_cuts` of spans whose starts are sorted (a text's, in order), in passes
    over the spans alone: the general way hashed the starts and counted over every
    character, most of a long text's Compare step (docs/responsiveness.md)."""
    # The first span of each start; the spans that start before it are all those before
    # it, so one of them holds characters on both sides of it iff their furthest end is
    # past it.
    first = np.empty(len(starts), dtype=bool)
    first[0] = True
    np.not_equal(starts[1:], starts[:-1], out=first[1:])
    furthest = np.empty(len(ends), dtype=np.int64)
    furthest[0] = 0
    np.maximum.accumulate(ends[:-1], out=furthest[1:])
    cut = first & (starts > 0) & (starts < length) & (furthest <= starts)
    return starts[cut]


def spans(enc: Encoder, text: str) -> list[TokenSpan]:
    """Each token of ``text`` with the characters that hold it. Surrogates are encoded as
    ``encode`` does; the span of a surrogate pair's character covers both of its surrogates
    in ``text``."""
    packed = packed_spans(enc, text)
    return list(
        map(TokenSpan, packed[:, 0].tolist(), packed[:, 1].tolist(), packed[:, 2].tolist(),
            packed[:, 3].astype(bool).tolist())
    )  # fmt: skip


def packed_spans(enc: Encoder, text: str) -> np.ndarray:
    """:func:`spans` as an ``(n, 4)`` int64 array: id, start, end, partial (0 or 1)."""
    try:
        return _packed(enc, text)
    except UnicodeEncodeError:
        fixed = replace_surrogates(text)
        found = _packed(enc, fixed)
        if len(fixed) == len(text):
            return found
        where = np.array(original_offsets(text), dtype=np.int64)
        found[:, 1] = where[found[:, 1]]
        found[:, 2] = where[found[:, 2]]
        return found


def _packed(enc: Encoder, text: str) -> np.ndarray:
    if enc.pipeline is None:
        merger = enc.compiled(len(text))
        if merger is not None:
            with merger.hold() as mine:
                if mine:
                    cp = codepoints(text)
                    items = enc.items(cp, text, enc.specials)
                    ids, starts, ends, partial = merger.spans(cp, items, enc.merger.token_sizes())
                    return np.stack([ids.astype(np.int64), starts, ends, partial], axis=1)
    found = _spans_python(enc, text)
    return np.array(found, dtype=np.int64).reshape(-1, 4)


def _spans_python(enc: Encoder, text: str) -> list[tuple[int, int, int, bool]]:
    pipeline = enc.pipeline
    vocab = enc.merger.vocab
    if pipeline is not None:
        specials = enc.specials
        added = {t: enc.special_id(t) for t in specials.tokens}
        return pipeline.spans(
            text, specials.tokens, enc.merger.piece_ids, vocab, added, specials.ordinary
        )
    result: list[tuple[int, int, int, bool]] = []
    for a, b, special in enc.specials.segments(text):
        _spans_ordinary(enc, text, a, b, result)
        if special is not None:
            result.append((enc.special_id(special), b, b + len(special), False))
    return result


def _spans_ordinary(
    enc: Encoder, text: str, start: int, end: int, result: list[tuple[int, int, int, bool]]
) -> None:
    piece_ids, vocab = enc.merger.piece_ids, enc.merger.vocab
    # The stretch matched alone, as encoding does (``pretokenizer.matches_in``, inlined here:
    # this loop is the editor's, and a generator per match costs a tenth of its time).
    stretch = text[start:end] if start or end < len(text) else text
    covered = 0
    for m in enc.pre.compiled.finditer(stretch):
        piece = m.group()
        covered += len(piece)
        ids = piece_ids(piece)
        base = start + m.start()
        if piece.isascii():
            for tid in ids:
                n = len(vocab[tid])
                result.append((tid, base, base + n, False))
                base += n
            continue
        # Map each byte of the piece to the character holding it.
        char_of_byte: list[int] = []
        starts: set[int] = set()
        for ci, ch in enumerate(piece):
            starts.add(len(char_of_byte))
            char_of_byte.extend([ci] * len(ch.encode("utf-8")))
        starts.add(len(char_of_byte))
        b = 0
        for tid in ids:
            e = b + len(vocab[tid])
            partial = b not in starts or e not in starts
            result.append((tid, base + char_of_byte[b], base + char_of_byte[e - 1] + 1, partial))
            b = e
    if covered != len(stretch):
        # subtle: text the pattern leaves out is refused as encode refuses it (its tokens
        # would not be the text's); the matches do not overlap, so lengths tell.
        raise enc.pre.uncovered(text, start, end)
