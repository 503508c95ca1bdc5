"""The pair counts of a training run as they stood before any merge ``k``.

What it does: :func:`top_pairs_at` takes the run's pre-token counts and its first ``k`` merges,
applies those merges to every unique pre-token, counts the adjacent pairs weighted by the
pre-token's count, and returns the best ``n`` pairs with the trainer's order (count descending,
then the lexicographically greater pair of bytes first). Its first pair is the merge the trainer
made next (rank ``k``), with that merge's count. The app's pair chart asks it for the step the
timeline shows.
What it leaves out: the incremental bookkeeping of training (``trainer``); every call starts
from the counts again, so a caller wanting many steps asks for each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from typing import Any

from .specials import validate_special_tokens
from .tokenizer import LONG_PIECE, Tokenizer
from .vocab import initial_vocab

Pair = tuple[bytes, bytes, int]


def _tokenizer(merges: Sequence[tuple[bytes, bytes]], specials: list[str]) -> Tokenizer:
    """The tokenizer of a run after ``merges``: bytes, specials, one token per merge (the
    trainer's id layout)."""
    vocab = initial_vocab(specials)
    first = len(vocab)
    vocab.update((first + i, a + b) for i, (a, b) in enumerate(merges))
    return Tokenizer(vocab, merges, specials)


def top_pairs_at(
    pretoken_counts: Mapping[bytes, int],
    merges: Sequence[tuple[bytes, bytes]],
    special_tokens: Sequence[str] = (),
    n: int = 20,
    *,
    should_stop: Callable[[], bool] | None = None,
) -> list[Pair] | None:
    """The ``n`` most frequent adjacent pairs after ``merges`` (the first ``k`` merges of the run
    that counted ``pretoken_counts``), best first, as ``(left, right, count)``.

    Returns None only when ``should_stop()`` turned true between the stages of the work.

    >>> counts = {b"abab": 2, b"ab": 1, b"ba": 4}
    >>> top_pairs_at(counts, [], n=2)
    [(b'b', b'a', 6), (b'a', b'b', 5)]
    >>> top_pairs_at(counts, [(b"b", b"a")], n=2)
    [(b'ba', b'b', 2), (b'a', b'ba', 2)]
    """
    if n < 0:
        raise ValueError(f"top_pairs_at: n = {n} must not be negative")
    import numpy as np  # subtle: lazily, so importing the core starts no BLAS threads

    stop = should_stop or (lambda: False)
    specials = validate_special_tokens(special_tokens)
    # One-byte pre-tokens hold no pair, whatever the merges.
    words = [w for w, c in pretoken_counts.items() if len(w) > 1 and c > 0]
    if not words or n == 0:
        return []
    tok = _tokenizer(merges, specials)
    if stop():
        return None

    # The ids of every pre-token after the merges, all in one array. subtle: the tokenizer's
    # rank-based merging equals applying the merges one after another as training did: a merge
    # of rank r makes a token that only merges of higher rank use, so the lowest-ranked pair
    # present never goes down, and each rank is applied everywhere before the next.
    short = [w for w in words if len(w) <= LONG_PIECE]
    long_ = [w for w in words if len(w) > LONG_PIECE]
    batch = tok._batch_for(len(short))
    parts: list[Any] = []  # id arrays, and the length of each pre-token in them
    lengths: list[Any] = []
    if not merges:  # every pre-token is still its bytes, and a byte's id is its value
        ordered, long_ = words, []
        parts = [np.frombuffer(b"".join(words), dtype=np.uint8).astype(np.int64)]
        lengths = [np.fromiter(map(len, words), dtype=np.int64, count=len(words))]
    elif batch is not None:
        flat, ends = batch.merge(short, tok._merge_ids)
        parts = [flat]
        lengths = [np.diff(np.asarray(ends, dtype=np.int64), prepend=0)]
        ordered = short + long_
    else:
        ordered = long_ = short + long_
    if long_:
        ids = [tok._bpe(w) for w in long_]
        parts.append(np.fromiter(chain.from_iterable(ids), dtype=np.int64))
        lengths.append(np.fromiter(map(len, ids), dtype=np.int64, count=len(ids)))
    if stop():
        return None
    flat = np.concatenate(parts).astype(np.int64)
    size = np.concatenate(lengths).astype(np.int64)
    freqs = np.fromiter((pretoken_counts[w] for w in ordered), dtype=np.int64, count=len(ordered))

    # Adjacent positions of one pre-token, weighted by its count.
    owner = np.repeat(np.arange(len(ordered)), size)
    same = owner[:-1] == owner[1:]
    left, right = flat[:-1][same], flat[1:][same]
    if not len(left):
        return []
    weight = freqs[owner[:-1][same]]
    bound = max(tok.vocab) + 1
    keys = left * bound + right
    order = np.argsort(keys, kind="stable")
    keys, weight = keys[order], weight[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    totals = np.add.reduceat(weight, starts)
    pair_keys = keys[starts]

    # Every pair counted at least as often as the n-th best, then the trainer's tie-break
    # among them on the bytes (an id order would not be the byte order).
    if len(totals) > n:
        floor = np.partition(totals, len(totals) - n)[len(totals) - n]
        keep = totals >= floor
        totals, pair_keys = totals[keep], pair_keys[keep]
    vocab = tok.vocab
    found = [
        (vocab[int(k) // bound], vocab[int(k) % bound], int(c))
        for k, c in zip(pair_keys.tolist(), totals.tolist())
    ]
    found.sort(key=lambda p: (p[2], p[0], p[1]), reverse=True)
    return found[:n]
