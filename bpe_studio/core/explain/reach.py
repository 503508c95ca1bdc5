"""Which tokens the encoder can produce: a token is reachable when encoding its own bytes gives
it back as that one id.

What it does: :func:`unreachable_tokens` lists the tokens of a vocabulary that encoding never
produces (a merge that an earlier merge always pre-empts, an entry no merge makes); its part
:func:`unreachable_among` checks some ids only (what a view growing with a run asks for its
newest tokens). The tokens are merged together a slice at a time through the tokenizer's own
merger, after the lookup of a whole pre-token it makes first (``ignore_merges``), so the answer
is its encoder's. A token holding an added token that encoding always cuts out is unreachable;
one holding a ``single_word`` added token only (cut out between non-word characters alone) is
decided by encoding its own text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ..encode.tokenizer import Tokenizer
from .split_apart import split_apart

_REACH_SLICE = 16_384  # tokens merged per NumPy pass in unreachable_tokens


def unreachable_tokens(
    tokenizer: Tokenizer, between_slices: Callable[[], object] | None = None
) -> list[int]:
    """Ids (ascending) of the tokens that encoding their own bytes does not give back as that
    one id: the encoder never produces them. Special tokens are reachable by definition.
    ``between_slices`` is called between two slices of the work (a caller in a background
    thread may wait there while another thread needs the interpreter).

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> vocab.update({256: b"ab", 257: b"bc", 258: b"abc"})
    >>> tok = Tokenizer(vocab, [(b"a", b"b"), (b"b", b"c"), (b"a", b"bc")])
    >>> unreachable_tokens(tok)  # "abc" always becomes "ab" "c" first
    [258]
    """
    return unreachable_among(tokenizer, tokenizer.vocab, between_slices)


def unreachable_among(
    tokenizer: Tokenizer,
    ids: Iterable[int],
    between_slices: Callable[[], object] | None = None,
) -> list[int]:
    """:func:`unreachable_tokens` of the vocabulary entries ``ids`` only (ascending; ids not
    in the vocabulary and special tokens are left out): what a view growing with a run
    computes for its newest tokens."""
    merger = tokenizer.merger
    special = merger.special_ids
    vocab = tokenizer.vocab
    ids = [i for i in ids if i in vocab and i not in special]
    # An empty vocabulary entry (possible in a loaded file) encodes to no token at all.
    settled = [i for i in ids if not vocab[i]]
    pipeline = tokenizer.hf_pipeline
    word_only = {t.content for t in pipeline.added if t.single_word} if pipeline else set()
    added = [t for t in tokenizer.added_tokens if t not in word_only]
    if added:
        # A token holding the bytes of an added token that is not special (phi-2's "  " beside
        # the model's "ĠĠ") is never emitted: encoding cuts that one out first, whatever the
        # merges would make of the rest (lstrip and rstrip only take spaces beside it too).
        holds = _holder(added)
        blocked = {i for i in ids if vocab[i] and holds(vocab[i])}
        settled += sorted(blocked)
        ids = [i for i in ids if i not in blocked]
    if word_only:
        # A single_word one is cut out only between characters that are no word's (" sword"
        # keeps its "word"): the token's own text encoded says whether it comes back alone.
        holds = _holder(word_only)
        decided = {i: _encodes_alone(tokenizer, i) for i in ids if holds(vocab[i])}
        settled += sorted(i for i, alone in decided.items() if alone is False)
        ids = [i for i in ids if decided.get(i) is None]
    # A token whose text the pre-tokenizer never leaves within one piece never reaches the
    # merges whole: a GPT-2 vocabulary read with another pattern (" 2016" where digits go one
    # at a time), a WhitespaceSplit file's " the", a lowercasing file's "The".
    split = split_apart(tokenizer, ids, between_slices)
    settled += sorted(split)
    ids = [i for i in ids if i not in split]
    # A pre-token looked up whole before any merge gives that token (``ignore_merges``:
    # Llama 3's tokens that no merge makes), this one or another of the same bytes.
    whole = {i: merger.whole_id(vocab[i]) for i in ids if vocab[i]}
    settled += [i for i, w in whole.items() if w is not None and w != i]
    ids = [i for i, w in whole.items() if w is None]
    pieces = [vocab[i] for i in ids]
    if not merger.merges_together(len(pieces)):
        bpe = merger.bpe
        return sorted(settled + [i for i, p in zip(ids, pieces) if bpe(p) != [i]])
    import numpy as np  # subtle: lazily, so importing the core starts no BLAS threads

    # The tokens' bytes merged together, a slice at a time; a token is reachable when its piece
    # ends up as one id and that id is its own. subtle: slices keep each NumPy call short, and
    # a NumPy call holds the interpreter lock throughout: a viewer's GUI thread runs this in
    # the background and must get the lock back within milliseconds.
    unreachable = list(settled)
    for start in range(0, len(pieces), _REACH_SLICE):
        if between_slices is not None:
            between_slices()
        flat, ends = merger.merge_many(pieces[start : start + _REACH_SLICE])
        end = np.asarray(ends, dtype=np.int64)
        own = np.asarray(ids[start : start + _REACH_SLICE], dtype=np.int64)
        reachable = (np.diff(end, prepend=0) == 1) & (flat[end - 1] == own)
        unreachable += own[~reachable].tolist()
    return sorted(unreachable)


def _holder(contents: Iterable[str]) -> Callable[[bytes], object]:
    """A search for any of ``contents``' bytes in a token's bytes."""
    return re.compile(b"|".join(re.escape(t.encode("utf-8")) for t in contents)).search


def _encodes_alone(tokenizer: Tokenizer, token_id: int) -> bool | None:
    """Whether encoding the text of token ``token_id`` gives that one id; None when its bytes
    are no text (left to the merges)."""
    try:
        text = tokenizer.vocab[token_id].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return tokenizer.encode(text) == [token_id]
