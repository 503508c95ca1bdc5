"""core.pair_history.top_pairs_at against the training run itself and a slow reference.

Two independent checks: (1) for every k of a real run, the best pair at k is the merge the
trainer made at rank k, with its count; (2) the whole top-n list equals the slow reference
``reference_bpe.top_pairs_after`` (merges applied one after another to each pre-token, pairs
counted, sorted by count and then by the greater pair of bytes).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from reference_bpe import top_pairs_after

from bpe_studio.core import BpeTrainer, count_file, count_text
from bpe_studio.core.pair_history import top_pairs_at

FIXTURES = Path(__file__).parent.parent / "fixtures"
SPECIALS = ["<|endoftext|>"]


def _run(counts: dict[bytes, int], vocab_size: int):
    steps = list(BpeTrainer(counts, vocab_size, SPECIALS))
    return steps, [(s.left, s.right) for s in steps]


def test_every_step_of_a_run_predicts_the_next_merge():
    counts = count_file(FIXTURES / "corpus.en", SPECIALS)
    steps, merges = _run(counts, 700)
    assert len(steps) > 400
    for k, step in enumerate(steps):
        top = top_pairs_at(counts, merges[:k], SPECIALS, 3)
        assert top is not None
        assert top[0] == (step.left, step.right, step.count), f"step {k}"
        assert [c for _, _, c in top] == sorted((c for _, _, c in top), reverse=True)


def test_top_list_equals_slow_reference_on_english():
    counts = count_file(FIXTURES / "corpus.en", SPECIALS)
    _, merges = _run(counts, 420)
    for k in (0, 1, 7, 50, 163):
        assert top_pairs_at(counts, merges[:k], SPECIALS, 25) == top_pairs_after(
            counts, merges[:k], 25
        ), f"k={k}"


@pytest.mark.parametrize("seed", range(6))
def test_random_corpora_with_ties_equal_slow_reference(seed):
    # Few letters, short words: many equal counts, so the tie-break decides the order.
    rng = random.Random(seed)
    letters = "ab\u00e9\u4e2d\U0001f600 "
    text = "".join(rng.choice(letters) for _ in range(rng.randint(50, 400)))
    counts = dict(count_text(text))
    steps, merges = _run(counts, 256 + 1 + 40)
    for k in range(len(merges) + 1):
        got = top_pairs_at(counts, merges[:k], SPECIALS, 8)
        assert got == top_pairs_after(counts, merges[:k], 8), f"seed {seed}, k={k}"
        if k < len(steps):
            assert got[0] == (steps[k].left, steps[k].right, steps[k].count)


def test_many_pretokens_use_the_batch_path_and_long_pieces():
    # Enough unique words for the batch merger, and pieces over its length limit.
    rng = random.Random(7)
    counts: dict[bytes, int] = {}
    for _ in range(3000):
        word = "".join(rng.choice("xyz\u00fc") for _ in range(rng.randint(2, 9)))
        counts[word.encode()] = counts.get(word.encode(), 0) + rng.randint(1, 5)
    counts[b"x" * 90] = 3
    counts[("y\u00fc" * 50).encode()] = 2
    _, merges = _run(counts, 256 + 1 + 30)
    for k in (0, 3, 17, 30):
        assert top_pairs_at(counts, merges[:k], SPECIALS, 12) == top_pairs_after(
            counts, merges[:k], 12
        )


def test_no_pairs_and_stopping():
    assert top_pairs_at({b"a": 5}, [], SPECIALS, 5) == []
    assert top_pairs_at({}, [], (), 5) == []
    assert top_pairs_at({b"ab": 1}, [], (), 0) == []
    assert top_pairs_at({b"ab": 1}, [], (), 5, should_stop=lambda: True) is None
    with pytest.raises(ValueError, match="n = -1"):
        top_pairs_at({b"ab": 1}, [], (), -1)
