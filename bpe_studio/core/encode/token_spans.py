"""Each token of a text with the characters that hold it (``Tokenizer.spans``).

What it does: :func:`spans` encodes a text pre-token by pre-token and maps each token's bytes
back to character offsets; a token that starts or ends inside a multi-byte character is marked
``partial`` and covers the whole character. What it leaves out: the editor's colouring and
steps (``explain.spans``, ``explain.span_steps``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..io.surrogates import original_offsets, replace_surrogates

if TYPE_CHECKING:
    from .tokenizer import Tokenizer


class TokenSpan(NamedTuple):
    """One token of a text: its id and the characters ``text[start:end]`` that hold its
    bytes. ``partial`` is true when the token starts or ends inside a multi-byte character;
    such a span covers the whole character, so neighbouring spans may overlap."""

    id: int
    start: int
    end: int
    partial: bool


def spans(tok: Tokenizer, text: str) -> list[TokenSpan]:
    """Each token of ``text`` with the characters that hold it. Surrogates are encoded as
    ``encode`` does; the span of a surrogate pair's character covers both of its surrogates
    in ``text``."""
    try:
        return _spans(tok, text)
    except UnicodeEncodeError:
        fixed = replace_surrogates(text)
        found = _spans(tok, fixed)
        if len(fixed) == len(text):
            return found
        where = original_offsets(text)
        return [TokenSpan(i, where[a], where[b], p) for i, a, b, p in found]


def _spans(tok: Tokenizer, text: str) -> list[TokenSpan]:
    pipeline = tok.hf_pipeline
    if pipeline is not None:
        added = {t: tok.special_id(t) for t in tok.special_tokens}
        found = pipeline.spans(text, tok.specials.tokens, tok.merger.piece_ids, tok.vocab, added)
        return list(map(TokenSpan._make, found))
    result: list[TokenSpan] = []
    for a, b, special in tok.specials.segments(text):
        _spans_ordinary(tok, text, a, b, result)
        if special is not None:
            result.append(TokenSpan(tok.special_id(special), b, b + len(special), False))
    return result


def _spans_ordinary(
    tok: Tokenizer, text: str, start: int, end: int, result: list[TokenSpan]
) -> None:
    piece_ids, vocab = tok.merger.piece_ids, tok.vocab
    for m in tok.pre_tokenizer.compiled.finditer(text, start, end):
        piece = m.group()
        ids = piece_ids(piece)
        base = m.start()
        if piece.isascii():
            for tid in ids:
                n = len(vocab[tid])
                result.append(TokenSpan(tid, base, base + n, False))
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
            result.append(
                TokenSpan(tid, base + char_of_byte[b], base + char_of_byte[e - 1] + 1, partial)
            )
            b = e
