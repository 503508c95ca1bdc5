"""The trainer as a generator (what the GUI iterates): frozen MergeStep records whose counts
are the true pair counts, top_pairs that predicts the next merge, and cancel() between merges."""

from __future__ import annotations

import dataclasses
import threading

import pytest
from core_helpers import EOT, SLICES, read_fixture, slice_head, write_text
from engines import each_engine  # noqa: F401  (every test, both engines)

from bpe_studio.core import (
    BpeTrainer,
    MergeStep,
    TrainingCancelled,
    count_text,
    iter_merges,
    train_bpe,
    trainer_from_file,
)
from bpe_studio.core.reference import pretoken_counts, reference_steps

K = 8


@pytest.fixture(scope="module")
def small_text():
    return slice_head("tinystories", 12_000) + slice_head("chinese", 3_000)


@pytest.fixture(scope="module")
def reference(small_text):
    return list(reference_steps(pretoken_counts(small_text, [EOT]), 500 - 257, top_k=K))


def test_steps_are_frozen_records_with_true_counts(small_text, reference):
    # Each count is compared with the count recomputed from scratch at that point, rather
    # than assuming anything about how counts evolve from merge to merge.
    trainer = BpeTrainer(count_text(small_text, [EOT]), 500, [EOT])
    steps = list(trainer)
    assert len(steps) == len(reference) == 500 - 257
    for step, ref in zip(steps, reference):
        assert isinstance(step, MergeStep)
        assert (step.rank, step.left, step.right, step.count) == (
            ref.rank,
            ref.left,
            ref.right,
            ref.count,
        )
        assert step.new_id == 257 + step.rank
        assert step.merged == step.left + step.right == trainer.vocab[step.new_id]
    with pytest.raises(dataclasses.FrozenInstanceError):
        steps[0].count = 0
    with pytest.raises((dataclasses.FrozenInstanceError, AttributeError, TypeError)):
        steps[0].extra = 1
    assert trainer.merges == [(s.left, s.right) for s in steps]
    assert len(trainer.vocab) == 500


def test_top_pairs_predicts_the_next_merge(small_text, reference):
    trainer = BpeTrainer(count_text(small_text, [EOT]), 500, [EOT])
    it = iter(trainer)
    for ref in reference:
        top = trainer.top_pairs(K)
        assert top == ref.top
        step = next(it)
        assert top[0] == (step.left, step.right, step.count)
        # The merged pair is gone from the candidates.
        assert (step.left, step.right) not in [(a, b) for a, b, _ in trainer.top_pairs(K)]
    with pytest.raises(StopIteration):
        next(it)


def test_top_pairs_is_repeatable_and_handles_large_k(small_text):
    trainer = BpeTrainer(count_text(small_text, [EOT]), 300, [EOT])
    assert trainer.top_pairs(5) == trainer.top_pairs(5)
    everything = trainer.top_pairs(10**9)
    assert everything[:5] == trainer.top_pairs(5)
    counts = [c for _, _, c in everything]
    assert counts == sorted(counts, reverse=True)
    assert len({(a, b) for a, b, _ in everything}) == len(everything)
    assert trainer.top_pairs(0) == []


def test_cancel_stops_between_merges_with_a_prefix(small_text):
    full = BpeTrainer(count_text(small_text, [EOT]), 500, [EOT])
    full_merges = [(s.left, s.right) for s in full]

    trainer = BpeTrainer(count_text(small_text, [EOT]), 500, [EOT])
    seen = []
    for step in trainer:
        seen.append(step)
        if len(seen) == 37:
            trainer.cancel()
    assert len(seen) == 37
    assert trainer.cancelled
    assert trainer.merges == full_merges[:37]
    assert len(trainer.vocab) == 257 + 37


def test_cancel_from_another_thread(small_text):
    event = threading.Event()
    trainer = BpeTrainer(count_text(small_text, [EOT]), 500, [EOT], cancel_event=event)
    steps = []
    for step in trainer:
        steps.append(step)
        if step.rank == 10:
            t = threading.Thread(target=event.set)
            t.start()
            t.join()
    assert len(steps) == 11
    assert trainer.merges == [(s.left, s.right) for s in steps]


def test_top_pairs_from_another_thread_changes_no_merge(small_text, reference):
    """A progress monitor asking for the best pairs while the trainer merges: the engines'
    top() pops and pushes their queue, and inside a merge that gave other merges (the
    Python engine's third already differed)."""
    trainer = BpeTrainer(count_text(small_text, [EOT]), 500, [EOT])
    done = threading.Event()
    seen = []

    def monitor() -> None:
        while not done.is_set():
            seen.append(trainer.top_pairs(5))

    thread = threading.Thread(target=monitor)
    thread.start()
    try:
        merges = [(step.left, step.right) for step in trainer]
    finally:
        done.set()
        thread.join()
    assert merges == [(ref.left, ref.right) for ref in reference]
    assert seen  # the monitor did ask


def test_close_from_another_thread_ends_the_iteration_cleanly(small_text, reference):
    """close() while another thread iterates: the iteration ends with the merges made so far
    (before, the Python engine raised KeyError or IndexError from inside a merge)."""
    trainer = BpeTrainer(count_text(small_text, [EOT]), 500, [EOT])
    at_ten = threading.Event()
    closer = threading.Thread(target=lambda: (at_ten.wait(), trainer.close()))
    closer.start()
    steps = []
    try:
        for step in trainer:
            steps.append(step)
            if step.rank == 10:
                at_ten.set()
    finally:
        at_ten.set()
        closer.join()
    assert len(steps) >= 11
    assert [(s.left, s.right) for s in steps] == [
        (ref.left, ref.right) for ref in reference[: len(steps)]
    ]
    assert trainer.merges == [(s.left, s.right) for s in steps]


def test_cancel_during_pretokenization(tmp_path, small_text):
    path = write_text(tmp_path / "c.txt", small_text)
    event = threading.Event()
    event.set()
    with pytest.raises(TrainingCancelled):
        trainer_from_file(path, 500, [EOT], cancel_event=event)


def test_cancel_during_parallel_pretokenization(tmp_path):
    """Setting the event while workers count chunks stops training with TrainingCancelled
    (and returns, rather than waiting for or hanging on the pool)."""
    text = "".join(read_fixture(name) for name in SLICES.values()) * 4
    path = write_text(tmp_path / "big.txt", text)
    event = threading.Event()
    calls = []

    def progress(done, total):
        calls.append(done)
        if done > 0:
            event.set()

    with pytest.raises(TrainingCancelled):
        trainer_from_file(path, 500, [EOT], workers=2, progress=progress, cancel_event=event)
    assert 0 < max(calls) < path.stat().st_size, "cancelled before the whole file was read"


def test_iter_merges_and_train_bpe_agree(tmp_path, small_text, reference):
    path = write_text(tmp_path / "c.txt", small_text)
    steps = list(iter_merges(path, 500, [EOT]))
    vocab, merges = train_bpe(path, 500, [EOT])
    assert [(s.left, s.right) for s in steps] == merges == [(r.left, r.right) for r in reference]
    assert {s.new_id: s.merged for s in steps} == {i: vocab[i] for i in range(257, 500)}


def test_target_merges(small_text):
    trainer = BpeTrainer(count_text(small_text, [EOT]), 600, [EOT, "<pad>"])
    assert trainer.target_merges == 600 - 258


def test_close_frees_the_working_state_and_keeps_the_result(small_text):
    trainer = BpeTrainer(count_text(small_text, [EOT]), 500, [EOT])
    steps = [s for _, s in zip(range(40), trainer)]
    vocab, merges = dict(trainer.vocab), list(trainer.merges)
    trainer.close()
    assert trainer.vocab == vocab and trainer.merges == merges
    assert [(s.left, s.right) for s in steps] == merges
    assert trainer.top_pairs(5) == []
    assert list(trainer) == [], "no merge after close"
    assert not trainer.cancelled, "close is not a cancel: a GUI reads cancel as 'stopped'"
