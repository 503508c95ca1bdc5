"""The trainer on long pre-tokens (runs of Han characters, code, repeated characters) and on
tie-heavy counts, checked merge by merge against the slow reference in ``core.reference``.

The merge engine indexes pair occurrences by position inside each word, so what matters here
is words where a pair occurs many times, overlapping ("a a a"), next to itself ("a b a b"),
and counts where many pairs tie, so the byte order of the tie-break decides."""

from __future__ import annotations

import pytest
from core_helpers import EOT, slice_head
from engines import each_engine  # noqa: F401  (every test, both engines)
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import HYPO

from bpe_studio.core import BpeTrainer
from bpe_studio.core.reference import pretoken_counts, reference_steps

K = 6


def assert_same_as_reference(counts: dict[bytes, int], merges: int, specials=()) -> int:
    """Train ``merges`` merges (or until pairs run out) and compare each step's pair, count
    and top pairs with the reference; returns how many steps were tied."""
    reference = list(reference_steps(counts, merges, top_k=K))
    trainer = BpeTrainer(counts, 256 + len(specials) + merges, list(specials))
    it = iter(trainer)
    ties = 0
    for ref in reference:
        assert trainer.top_pairs(K) == ref.top, f"top pairs before merge {ref.rank}"
        step = next(it)
        assert (step.rank, step.left, step.right, step.count) == (
            ref.rank,
            ref.left,
            ref.right,
            ref.count,
        )
        ties += ref.ties > 0
    assert list(it) == [], "the trainer merged past the point where pairs ran out"
    return ties


@pytest.mark.parametrize(
    "key,nbytes,merges,longest", [("chinese", 8_000, 250, 100), ("code", 12_000, 300, 30)]
)
def test_long_real_pretokens_match_the_reference(key, nbytes, merges, longest):
    counts = pretoken_counts(slice_head(key, nbytes), [EOT])
    assert max(map(len, counts)) >= longest  # the point: long words, many sites per word
    assert_same_as_reference(counts, merges, [EOT])


def test_one_long_han_run_merged_to_the_end():
    # A single word of ~600 bytes: every merge happens inside it, overlapping ones included.
    text = slice_head("chinese", 4_000)
    run = max((w for w in pretoken_counts(text) if w.decode("utf-8").isalpha()), key=len)
    assert len(run) >= 90
    counts = {run * 6: 1, run[:60]: 2}
    assert_same_as_reference(counts, 2_000)


# Repeated characters and periodic words: (a, a) overlaps, (ab, ab) forms next to itself, and
# nearly every pair ties with another, so the tie-break over bytes decides most merges.
TIE_HEAVY = {
    "a" * 37: 1,
    "aa" * 5: 1,
    "ab" * 19: 1,
    "ba" * 19: 1,
    "abc" * 11: 1,
    "的" * 25: 1,
    "的了" * 12: 1,
    "了的" * 12: 1,
    "ééé" * 7: 1,
    "xyzzy" * 6 + "x": 1,
}


def test_tie_heavy_repeated_and_periodic_words():
    counts = {w.encode("utf-8"): c for w, c in TIE_HEAVY.items()}
    ties = assert_same_as_reference(counts, 1_000)
    assert ties >= 20


WORDS = st.lists(
    st.tuples(
        st.lists(st.sampled_from(["a", "b", "的", "é", " "]), min_size=1, max_size=40).map("".join),
        st.integers(1, 3),
    ),
    min_size=1,
    max_size=12,
)


@HYPO
@given(WORDS)
def test_random_words_over_a_tiny_alphabet_match_the_reference(words):
    counts: dict[bytes, int] = {}
    for word, c in words:
        key = word.encode("utf-8")
        counts[key] = counts.get(key, 0) + c
    assert_same_as_reference(counts, 400)
