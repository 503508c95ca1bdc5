"""core.explain.spans_at_step with merges out of the order training gives them: a merge listed
before the merge that makes one of its parts (``MergeTree.monotone`` false, as in Llama 3's
``tokenizer.json``) is left to a fresh encode both ways, and whatever is moved or split is
what encoding with the first ``k`` merges gives, on random merge lists in and out of order."""

from __future__ import annotations

import random

import numpy as np

from bpe_studio.core import Tokenizer
from bpe_studio.core.explain.merge_tree import MergeTree
from bpe_studio.core.explain.span_arrays import compute_spans
from bpe_studio.core.explain.spans_at_step import (
    MergeIds,
    SpanSplitter,
    pretoken_starts,
    step_forward,
)


def _bytes_vocab() -> dict[int, bytes]:
    return {i: bytes([i]) for i in range(256)}


def _same(a, b, where) -> None:
    for name in ("ids", "starts", "ends", "partial"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), (where, name)


def test_a_merge_listed_before_its_part_is_made_is_left_to_a_fresh_encode():
    vocab = _bytes_vocab() | {256: b"abc", 257: b"bc"}
    # Merge 0 joins "a" and "bc", which only merge 1 makes: with merge 0 alone, "abc" is
    # three bytes; with both, one token.
    tok = Tokenizer(vocab, [(b"a", b"bc"), (b"b", b"c")])
    assert tok.truncated(1).encode("abc") == [97, 98, 99]
    tree = MergeTree.of(tok)
    assert tree.one_way and not tree.monotone
    assert MergeIds.of(tok) is None
    assert SpanSplitter.of(tok, compute_spans(tok, "abc"), 2) is None


def test_a_trained_tokenizer_is_monotone(span_tokenizer):
    assert MergeTree.of(span_tokenizer).monotone


def _random_merges(rng: random.Random) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Merges over "a", "b", "c" built as training builds them (each from tokens already
    made), then, half the time, shuffled out of that order."""
    made = [b"a", b"b", b"c"]
    vocab = _bytes_vocab()
    merges: list[tuple[bytes, bytes]] = []
    while len(merges) < rng.randint(2, 8):
        pair = (rng.choice(made), rng.choice(made))
        if pair in merges or len(pair[0] + pair[1]) > 6:
            continue
        merges.append(pair)
        if pair[0] + pair[1] not in made:
            made.append(pair[0] + pair[1])
            vocab[len(vocab)] = pair[0] + pair[1]
    if rng.random() < 0.5:
        rng.shuffle(merges)
    return vocab, merges


def test_moved_or_split_spans_equal_a_fresh_encode_on_random_merge_lists():
    rng = random.Random(7)
    refused = moved = 0
    for case in range(400):
        vocab, merges = _random_merges(rng)
        tok = Tokenizer(vocab, merges)
        text = "".join(rng.choice("abc ") for _ in range(rng.randint(1, 24)))
        n = len(merges)
        ids = MergeIds.of(tok)
        splitter = SpanSplitter.of(tok, compute_spans(tok, text), n)
        if ids is None and splitter is None:
            refused += 1
            continue
        moved += 1
        starts = pretoken_starts(tok, text)
        for k in range(n + 1):
            fresh = compute_spans(tok.truncated(k), text)
            if ids is not None:
                start = compute_spans(tok.truncated(0), text)
                forward = step_forward(start, ids, 0, k, tok, starts)
                _same(forward, fresh, (case, merges, text, k, "forward"))
            if splitter is not None:
                _same(splitter.at(k, tok.truncated(k)), fresh, (case, merges, text, k, "back"))
    # Both kinds of list were drawn: some moved, some left to a fresh encode.
    assert refused > 50 and moved > 50
