"""core.train.pair_history: the pairs a run recorded before every merge, against a slow reference.

For every step of runs on slices of five real corpora and on tie-heavy random text, with each
merge engine, the recorded best pairs equal those of ``core.reference.reference_steps`` (its own
training: every pair recounted from scratch before each merge, sorted by count and then by the
greater pair of bytes), and the row after the last merge equals ``top_pairs_after``.
"""

from __future__ import annotations

import functools
import random
import threading
from pathlib import Path

import pytest

from bpe_studio.core import BpeTrainer, count_text
from bpe_studio.core.reference import reference_steps, top_pairs_after

FIXTURES = Path(__file__).parent.parent / "fixtures"
SPECIALS = ["<|endoftext|>"]
ENGINES = ("python", "compiled")
SLICES = (
    "english_books_slice.txt",
    "chinese_slice.txt",
    "code_slice.txt",
    "mixed_web_slice.txt",
    "tinystories_slice.txt",
)


def _counts(name: str, chars: int) -> dict[bytes, int]:
    text = (FIXTURES / name).read_text(encoding="utf-8")[:chars]
    return dict(count_text(text, SPECIALS))


@functools.lru_cache(maxsize=4)
def _reference(counts: tuple[tuple[bytes, int], ...], merges: int, width: int) -> list:
    # The same reference serves both engines' tests of a corpus when one worker runs both.
    return list(reference_steps(dict(counts), merges, width))


def _check_every_step(counts: dict[bytes, int], merges: int, width: int, engine: str) -> None:
    trainer = BpeTrainer(counts, 256 + 1 + merges, SPECIALS, engine=engine, record_pairs=width)
    steps = list(trainer)
    history = trainer.pair_history
    assert history is not None
    assert len(history) == len(steps) + 1
    reference = _reference(tuple(counts.items()), merges, width)
    assert [(s.left, s.right, s.count) for s in steps] == [
        (r.left, r.right, r.count) for r in reference
    ]
    for k, ref in enumerate(reference):
        assert history.top_pairs(k) == ref.top, f"step {k}"
    after = top_pairs_after(counts, [(s.left, s.right) for s in steps], width)
    assert history.top_pairs(len(steps)) == after


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", SLICES)
def test_every_step_of_real_corpora_equals_slow_reference(name, engine):
    _check_every_step(_counts(name, 12_000), 300, 20, engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("seed", range(8))
def test_every_step_of_tie_heavy_corpora_equals_slow_reference(seed, engine):
    # Few letters, short words: many equal counts, so the tie-break decides the order, and
    # pairs run out before the vocabulary is full (the last rows are short, then empty).
    rng = random.Random(seed)
    letters = "ab\u00e9\u4e2d\U0001f600 "
    text = "".join(rng.choice(letters) for _ in range(rng.randint(50, 600)))
    _check_every_step(dict(count_text(text)), 120, rng.choice((1, 3, 8, 20)), engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_width_one_is_each_merge_and_rows_are_readable_while_training(engine):
    counts = _counts("english_books_slice.txt", 8_000)
    trainer = BpeTrainer(counts, 256 + 1 + 200, SPECIALS, engine=engine, record_pairs=1)
    history = trainer.pair_history
    assert history is not None and len(history) == 1
    for step in trainer:
        # The row before the next merge is written before this one is handed out.
        assert len(history) == step.rank + 2
        assert history.top_pairs(step.rank) == [(step.left, step.right, step.count)]
    trainer.close()
    assert history.top_pairs(200, 1) == history.top_pairs(200)  # kept after close


def test_not_recording_and_bad_requests():
    counts = {b"abab": 2, b"ab": 1}
    assert BpeTrainer(counts, 260).pair_history is None
    with pytest.raises(ValueError, match="record_pairs = -1"):
        BpeTrainer(counts, 260, record_pairs=-1)
    trainer = BpeTrainer(counts, 260, record_pairs=3, cancel_event=threading.Event())
    history = trainer.pair_history
    assert history is not None
    assert history.top_pairs(0, 0) == []
    with pytest.raises(IndexError, match="step 1 is not recorded"):
        history.top_pairs(1)
    with pytest.raises(ValueError, match="n = -2"):
        history.top_pairs(0, -2)
    assert BpeTrainer({b"a": 4}, 260, record_pairs=3).pair_history.top_pairs(0) == []
