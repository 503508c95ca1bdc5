"""The text a ``tokenizer.json`` of another kind decodes ids to, and each token's characters in
it: what the app's Ids pane shows for a :class:`~..encode.foreign.ForeignTokenizer`.

What it does: :func:`foreign_decoded` decodes the ids a piece at a time as ``tokenizers``'
``DecodeStream`` does: each piece is decoded after the piece before it, as context, and what it
adds is that piece's text (a piece that ends inside a character waits for the next). Unlike
that stream, a run of byte-fallback tokens (``<0xE4>``) is one piece and the end is flushed:
``tokenizers`` decodes such a run as a whole (its UTF-8 characters, or one U+FFFD per byte when
it is not UTF-8), so a byte added to a run may change the text of the bytes before it, which
the stream refuses ("Invalid prefix"); and bytes left at the end, which the stream holds back,
are text too. The text returned is ``tokenizers``' own decode of all the ids.
What it leaves out: byte-level BPE, whose tokens are bytes (``span_arrays.decoded_spans``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from ..encode.foreign import ForeignTokenizer, fallback_ids

STALE_EVERY = 4096  # pieces decoded between two looks at is_stale

Decoded = tuple[str, np.ndarray, np.ndarray, np.ndarray]  # text, starts, ends, partial


def _pieces(ids: list[int], fallback: frozenset[int]) -> Iterator[tuple[int, int]]:
    """``[a, b)`` of each piece: one token, or a run of byte-fallback tokens."""
    a = 0
    n = len(ids)
    while a < n:
        b = a + 1
        if ids[a] in fallback:
            while b < n and ids[b] in fallback:
                b += 1
        yield a, b
        a = b


def _run_offsets(run: bytes, text: str) -> list[tuple[int, int, bool]] | None:
    """Where each byte of a byte-fallback run is in ``text``, the run's decoded text: in its
    character (partial when the character has several bytes), or its own U+FFFD when the run
    is not UTF-8; None when ``text`` is neither (a decoder after the bytes changed it)."""
    try:
        chars = run.decode("utf-8")
    except UnicodeDecodeError:
        if text != "\ufffd" * len(run):
            return None
        return [(j, j + 1, False) for j in range(len(run))]
    if chars != text:
        return None
    out: list[tuple[int, int, bool]] = []
    for k, ch in enumerate(chars):
        size = len(ch.encode("utf-8", "surrogatepass"))
        out += [(k, k + 1, size > 1)] * size
    return out


def foreign_decoded(
    tokenizer: ForeignTokenizer, ids: list[int], is_stale: Callable[[], bool] = lambda: False
) -> Decoded | None:
    """``tokenizer``'s decode of ``ids`` (``tokenizers``' own, special tokens kept) and each
    token's ``[start, end)`` in it, with whether the token holds part of a character or shares
    its characters with the tokens beside it; None if ``is_stale()`` turned true. The ids must
    be in the vocabulary."""
    backend = tokenizer.backend

    def decode(window: list[int]) -> str:
        return str(backend.decode(window, skip_special_tokens=False))

    fallback = fallback_ids(tokenizer)
    vocab = tokenizer.vocab
    n = len(ids)
    starts = np.zeros(n, dtype=np.int32)
    ends = np.zeros(n, dtype=np.int32)
    partial = np.zeros(n, dtype=bool)
    chunks: list[str] = []
    emitted = 0
    window: list[int] = []  # the piece before (context) and those since, as DecodeStream's
    prefix, kept = "", 0  # the text of the window's first ``kept`` ids
    waiting = 0  # the first token whose text is not out yet

    def place(a: int, b: int, added: str, run: bool) -> None:
        """Tokens ``waiting..b`` made ``added`` (the last piece, ``a..b``, a run or not)."""
        if run and waiting == a:
            offsets = _run_offsets(b"".join(vocab[i] for i in ids[a:b]), added)
            if offsets is not None:
                for j, (s, e, part) in enumerate(offsets):
                    starts[a + j], ends[a + j], partial[a + j] = emitted + s, emitted + e, part
                return
        starts[waiting:b], ends[waiting:b] = emitted, emitted + len(added)
        partial[waiting:b] = b - waiting > 1

    for count, (a, b) in enumerate(_pieces(ids, fallback)):
        if count % STALE_EVERY == 0 and is_stale():
            return None
        run = ids[a] in fallback
        window += ids[a:b]
        text = decode(window)
        # A piece that ends inside a character waits for the next (its U+FFFD is not final);
        # a whole run of byte tokens is final: no later token joins it.
        if len(text) <= len(prefix) or not text.startswith(prefix):
            continue
        if text.endswith("\ufffd") and not run:
            continue
        added = text[len(prefix) :]
        place(a, b, added, run)
        chunks.append(added)
        emitted += len(added)
        waiting = b
        window = window[kept:]
        prefix, kept = decode(window), len(window)
    if waiting < n:  # the end: what the last pieces make, complete or not
        text = decode(window)
        added = text[len(prefix) :] if text.startswith(prefix) else text
        place(waiting, n, added, False)
        chunks.append(added)
    whole = decode(ids)
    # subtle: decoders that rewrite text across pieces (WordPiece's cleanup of " ." and the
    # like) could make the pieces' texts differ from the whole; the whole is the decode, and
    # the tokens' places in it are then approximate.
    if "".join(chunks) != whole:
        np.minimum(starts, len(whole), out=starts)
        np.minimum(ends, len(whole), out=ends)
    return whole, starts, ends, partial
