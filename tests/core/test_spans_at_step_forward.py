"""core.explain.spans_at_step, forward: spans moved forward by merges equal a fresh encode with the
truncated tokenizer (``compute_spans(tokenizer.truncated(k1), text)``), span for span: ids,
characters and partial flags, on English, Chinese split into bytes, emoji, runs of one letter
(overlapping places of an ``(a, a)`` merge) and special tokens."""

from __future__ import annotations

import random

import numpy as np
import pytest
from core_helpers import SPAN_TEXT_IDS, SPAN_TEXTS

from bpe_studio.core.explain.span_arrays import compute_spans
from bpe_studio.core.explain.spans_at_step import (
    MergeIds,
    SpanLadder,
    pretoken_starts,
    step_forward,
)


@pytest.fixture
def tokenizer(span_tokenizer):
    return span_tokenizer


def _same(a, b) -> None:
    assert np.array_equal(a.ids, b.ids)
    assert np.array_equal(a.starts, b.starts)
    assert np.array_equal(a.ends, b.ends)
    assert np.array_equal(a.partial, b.partial)


@pytest.mark.parametrize("text", SPAN_TEXTS, ids=SPAN_TEXT_IDS)
def test_forward_steps_equal_a_fresh_encode(tokenizer, text):
    merges = MergeIds.of(tokenizer)
    assert merges is not None
    starts = pretoken_starts(tokenizer, text)
    assert starts is not None
    rng = random.Random(len(text))
    n = len(tokenizer.merges)
    steps = sorted({0, 1, 2, 50, n} | {rng.randrange(n + 1) for _ in range(12)})
    for k0, k1 in zip(steps, steps[1:]):
        before = compute_spans(tokenizer.truncated(k0), text)
        after = tokenizer.truncated(k1)
        moved = step_forward(before, merges, k0, k1, after, starts)
        _same(moved, compute_spans(after, text))
        assert moved.tokenizer is after
    # One merge at a time from the start, as a slow replay moves.
    spans = compute_spans(tokenizer.truncated(0), text)
    for k in range(1, 120):
        spans = step_forward(spans, merges, k - 1, k, tokenizer, starts)
    _same(spans, compute_spans(tokenizer.truncated(119), text))


def test_not_plain_bpe_or_lone_surrogates_are_left_to_a_fresh_encode(tokenizer):
    # (A repeated merge, which MergeIds.of leaves to a fresh encode too, is refused by the
    # constructor: test_tokenizer_merges.)
    assert pretoken_starts(tokenizer, "a\ud800b") is None
    merges = MergeIds.of(tokenizer)
    spans = compute_spans(tokenizer, "abc")
    with pytest.raises(ValueError, match="k0 = 5 <= k1 = 3"):
        step_forward(spans, merges, 5, 3, tokenizer, np.zeros(0, dtype=np.int64))


@pytest.mark.parametrize("text", SPAN_TEXTS, ids=SPAN_TEXT_IDS)
def test_a_ladder_gives_a_fresh_encode_at_any_step_in_any_order(tokenizer, text):
    merges = MergeIds.of(tokenizer)
    starts = pretoken_starts(tokenizer, text)
    fresh_at: list[int] = []

    def fresh(k):
        fresh_at.append(k)
        return compute_spans(tokenizer.truncated(k), text)

    ladder = SpanLadder(
        merges, starts, fresh, tokenizer.truncated, every=64, reach=128, keep_tokens=10**9
    )
    n = len(tokenizer.merges)
    rng = random.Random(7)
    steps = [rng.randrange(n + 1) for _ in range(25)] + [n, 0, 63, 64, 65, n - 1]
    for k in steps:  # forward, backward, onto rungs and between them
        spans = ladder.at(k)
        assert len(spans.tokenizer.merges) == k
        _same(spans, compute_spans(tokenizer.truncated(k), text))
    assert all(k % 64 == 0 for k in fresh_at)  # encoded afresh only at rungs
    assert len(fresh_at) < len(steps)  # and the rungs were used again
    # The rungs hold the whole tokenizer, not a truncation with tables of its own.
    assert all(len(rung.tokenizer.merges) == n for rung in ladder.rungs.values())
    held = compute_spans(tokenizer.truncated(300), text)
    before = len(fresh_at)
    _same(ladder.at(310, (300, held)), compute_spans(tokenizer.truncated(310), text))
    assert len(fresh_at) == before


def test_a_ladder_keeps_rungs_up_to_its_token_budget(tokenizer):
    text = SPAN_TEXTS[0]
    merges = MergeIds.of(tokenizer)
    starts = pretoken_starts(tokenizer, text)
    one = len(compute_spans(tokenizer, text).ids)

    def fresh(k):
        return compute_spans(tokenizer.truncated(k), text)

    ladder = SpanLadder(
        merges, starts, fresh, tokenizer.truncated, every=64, reach=64, keep_tokens=3 * one
    )
    ladder.at(len(tokenizer.merges))
    assert 0 < sum(len(s.ids) for s in ladder.rungs.values()) <= 3 * one
