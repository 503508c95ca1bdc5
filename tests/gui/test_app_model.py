"""The app model's rules without a window (issue 33): it is plain Python, so each rule is
checked here against an independent statement of it, and its events are heard as a view hears
them. The window-level checks are in test_app_machine.py and the defect tests."""

from __future__ import annotations

import copy
import random

import pytest
from gui_helpers import EOT, FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.core import train_bpe
from bpe_studio.core.train.trainer import MergeStep
from bpe_studio.core.train.vocab import check_vocab_size, initial_vocab, merge_budget
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.curves import build_order
from bpe_studio.gui.model.panes import LoadStatus
from bpe_studio.gui.model.run_tokenizer import run_tokenizer_at, source_label, training_label
from bpe_studio.gui.model.saving import data_to_save, saveable_merges, unsaved_merges
from bpe_studio.gui.model.state import Phase, RunSettings, TrainingResult
from bpe_studio.gui.model.tokenizer_source import TokenizerSource

CORPUS = FIXTURES / "tinystories_sample.txt"


@pytest.fixture(scope="module")
def run() -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    return train_bpe(CORPUS, 600, [EOT])


def steps_of(vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]]) -> list[MergeStep]:
    ids = {tok: i for i, tok in vocab.items()}
    return [MergeStep(r, a, b, ids[a + b], 1) for r, (a, b) in enumerate(merges)]


def heard(model: AppModel, *names: str) -> list[tuple]:
    """Every emit of the named events, in order, as (name, *args)."""
    got: list[tuple] = []
    for name in names:
        getattr(model, name).connect(lambda *args, name=name: got.append((name, *args)))
    return got


def trained_model(run, n: int | None = None, *, finish: bool = True) -> AppModel:
    vocab, merges = run
    model = AppModel()
    model.begin_run(RunSettings(600, (EOT,)), initial_vocab([EOT]))
    model.start_merging()
    steps = steps_of(vocab, merges)[:n]
    model.append_merges(steps)
    model.publish()
    if finish:
        done = [(s.left, s.right) for s in steps]
        full = dict(initial_vocab([EOT]))
        full.update((s.new_id, s.left + s.right) for s in steps)
        model.finish(TrainingResult(full, done, (EOT,), 343, False, 0.1))
    return model


# ------------------------------------------------------------------- panes
def test_a_pick_shows_only_once_built_and_a_failed_one_changes_nothing():
    model = AppModel()
    events = heard(model, "pane_changed", "pick_failed")
    model.define_pane("left", "preset:gpt2", "GPT-2")
    model.pick("left", "hf:acme/x", "acme/x")
    assert model.pane("left").key == "preset:gpt2"  # still what is shown
    assert model.pick_under_way("left").status is LoadStatus.LOADING
    assert model.pick_failed_for("left", "hf:acme/x", "acme/x: offline")
    assert model.pane("left").key == "preset:gpt2" and model.pick_under_way("left") is None
    assert model.pane("left").failed == ("hf:acme/x", "acme/x", "acme/x: offline")
    assert events == [
        ("pane_changed", "left"),
        ("pane_changed", "left"),
        ("pick_failed", "left", "acme/x", "acme/x: offline"),
    ]
    model.pick("left", "preset:o200k_base", "GPT-4o")
    assert model.pane("left").failed is None  # the next pick ends the old news
    assert not model.pick_ready("left", "preset:cl100k_base")  # not the pick under way
    assert model.pick_ready("left", "preset:o200k_base")
    assert model.pane("left").key == "preset:o200k_base"
    assert not model.pick_failed_for("left", "preset:o200k_base", "late")  # already shown


def test_a_newer_pick_wins_over_one_still_being_built():
    model = AppModel()
    model.define_pane("editor", "run", "The run's tokenizer")
    model.pick("editor", "hf:acme/slow", "acme/slow")
    model.pick("editor", "preset:gpt2", "GPT-2")
    assert not model.pick_ready("editor", "hf:acme/slow")  # its build ended too late
    assert not model.pick_failed_for("editor", "hf:acme/slow", "offline")
    assert model.pick_ready("editor", "preset:gpt2")
    assert model.pane("editor").key == "preset:gpt2"


# ----------------------------------------------------------------- the run
def test_begin_run_keeps_the_state_object_and_gives_a_new_run_id(run):
    model = trained_model(run)
    state, first = model.state, model.state.run_id
    model.begin_run(RunSettings(400, (EOT,)), initial_vocab([EOT]))
    assert model.state is state and state.run_id != first and state.record == []
    assert state.shown is not None and state.shown.run_id == state.run_id


def test_restore_brings_back_the_run_with_its_id_and_discard_never_does(run):
    model = trained_model(run)
    before = model.state.run_id
    kept = copy.copy(model.state)
    model.begin_run(RunSettings(400, (EOT,)), initial_vocab([EOT]))
    model.restore(kept)
    assert model.state.run_id == before and model.state.phase is Phase.FINISHED
    model.discard_run()
    assert model.state.run_id not in (before, 0) and model.state.phase is Phase.IDLE


@settings(max_examples=40, deadline=None, database=None)
@given(k=st.integers(-5, 400))
def test_the_runs_tokenizer_at_step_k_is_its_first_k_merges(run, k):
    vocab, merges = run
    model = trained_model(run, finish=False)
    n = max(0, min(k, len(merges)))
    built = run_tokenizer_at(model.state, k)()
    # Independently: the bytes and the special token, then the first n merges' tokens.
    expected_vocab = {i: bytes([i]) for i in range(256)} | {256: EOT.encode()}
    for a, b in merges[:n]:
        expected_vocab[len(expected_vocab)] = a + b
    assert built.merges == merges[:n] and built.vocab == expected_vocab
    assert built.pattern_name == "gpt2" and built.special_tokens == [EOT]


def test_the_runs_tokenizer_keeps_the_runs_pattern(run):
    vocab, merges = run
    model = AppModel()
    model.begin_run(RunSettings(600, (EOT,), "cl100k"), initial_vocab([EOT]))
    model.append_merges(steps_of(vocab, merges)[:10])
    assert run_tokenizer_at(model.state, 10)().pattern_name == "cl100k"


def test_a_paused_runs_tokenizer_is_called_paused_and_only_while_paused(run):
    vocab, merges = run
    model = AppModel()
    model.begin_run(RunSettings(600, (EOT,)), initial_vocab([EOT]))
    model.set_paused(True)  # while pre-tokenizing: the bytes-only tokenizer
    assert source_label(model.state, model.state.shown) == (
        "Tokenizer: bytes only, paused before the first merge"
    )
    model.set_paused(False)
    assert source_label(model.state, model.state.shown) == model.state.shown.label
    model.start_merging()
    model.append_merges(steps_of(vocab, merges)[:30])
    model.publish()
    run_id = model.state.run_id
    whole = TokenizerSource.deferred(
        training_label(30, 30), run_tokenizer_at(model.state, 30), 30, run_id
    )
    cut = TokenizerSource.deferred(
        training_label(5, 30), run_tokenizer_at(model.state, 5), 5, run_id
    )
    other = TokenizerSource("Tokenizer: GPT-2", vocab={})  # a tokenizer picked instead
    model.set_paused(True)
    assert source_label(model.state, whole) == "Tokenizer: paused at merge 30"
    assert source_label(model.state, cut) == "Tokenizer: 5 of 30 merges, paused at merge 30"
    assert source_label(model.state, other) == "Tokenizer: GPT-2"
    model.set_paused(False)
    assert source_label(model.state, whole) == "Tokenizer: training, 30 merges so far"


def test_a_cut_runs_tokenizer_is_named_by_one_step(run):
    """Audit h_tui61: replaying a run still training, the editor's header read "at step 8,342
    · training, 105,769 of 108,017 merges so far": the second number was the step of the
    tokenizer cut to 8,342, not one the timeline showed."""
    from bpe_studio.gui.views.token_editor import _describe

    vocab, merges = run
    model = trained_model(run, 30, finish=False)
    model.publish()
    run_id = model.state.run_id
    built = TokenizerSource.deferred(
        training_label(20, 30), run_tokenizer_at(model.state, 20), 20, run_id
    )
    assert _describe(model.state, built, 5) == "at step 5 · training, 30 merges so far"
    assert _describe(model.state, built, None) == "training, 20 of 30 merges so far"
    model.set_paused(True)
    assert _describe(model.state, built, 5) == "at step 5 · paused at merge 30"


# ----------------------------------------------------------------- saving
def test_what_would_be_lost_and_what_save_writes(run):
    vocab, merges = run
    model = trained_model(run, 200, finish=False)
    assert model.state.phase is Phase.MERGING
    assert unsaved_merges(model.state) == 200 and saveable_merges(model.state) == 0
    model.set_paused(True)
    assert saveable_merges(model.state) == 200
    data = data_to_save(model.state)
    expected = dict(initial_vocab([EOT]))
    for a, b in merges[:200]:
        expected[len(expected)] = a + b
    assert data.merges == merges[:200] and data.vocab == expected
    assert data.special_tokens == {EOT: 256} and data.pattern == "gpt2"
    model.mark_saved(200)
    assert model.unsaved == 0
    model.set_paused(False)
    model.append_merges(steps_of(vocab, merges)[200:250])
    model.publish()
    assert model.unsaved == 50


def test_saved_ends_when_the_run_learns_more(run):
    vocab, merges = run
    model = trained_model(run, 100, finish=False)
    model.set_paused(True)
    model.mark_saved(100)
    model.set_notice("Saved /tmp/x/vocab.json", saved=True)
    other = heard(model, "notice_changed")
    model.publish()  # nothing new: the news holds
    assert model.notice == "Saved /tmp/x/vocab.json" and other == []
    model.set_paused(False)
    model.append_merges(steps_of(vocab, merges)[100:101])
    model.publish()
    assert model.notice is None and other == [("notice_changed",)]


def test_a_loaded_tokenizer_is_saved_already(run):
    from bpe_studio.gui.jobs.loader import prepare

    model = AppModel()
    model.show_loaded(prepare(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt"))
    assert model.unsaved == 0 and saveable_merges(model.state) == 50_000


# ---------------------------------------------------- the editor's points
def test_the_editors_points_are_kept_per_text_and_run(run):
    model = trained_model(run)
    run_id = model.state.run_id
    model.set_editor_text("one")
    assert model.add_editor_point(run_id, "one", 10, 1.5)
    assert not model.add_editor_point(run_id, "two", 10, 9.9)  # not the text shown
    assert not model.add_editor_point(run_id + 7, "one", 10, 9.9)  # not the run shown
    model.set_editor_text("two")
    assert model.editor_points() == {}
    assert model.add_editor_point(run_id, "two", 20, 2.5)
    model.set_editor_text("one")
    assert model.editor_points() == {10: 1.5}
    model.discard_run()
    assert model.editor_points() == {}


# --------------------------------------------------------- one home per rule
@pytest.mark.parametrize("size", [0, 255, 256, 257, 258, 10_000, 2_000_000])
@pytest.mark.parametrize("specials", [(), (EOT,), (EOT, "<|pad|>")])
def test_the_vocabulary_rule_and_the_budget_are_the_cores(size, specials):
    settings_ = RunSettings(size, specials)
    try:
        check_vocab_size(size, specials)
    except ValueError as error:
        assert settings_.vocab_problem().lower() == str(error).lower()
    else:
        assert settings_.vocab_problem() is None
    assert settings_.target_merges == merge_budget(size, specials)


# ------------------------------------------------------------- build order
def _made_before_use(rows) -> bool:
    made: set[bytes] = set()
    for row in rows:
        if any(len(p) > 1 and p not in made for p in (row.left, row.right)):
            return False
        made.add(row.left + row.right)
    return True


def test_a_trained_runs_merges_are_already_in_build_order(run):
    vocab, merges = run
    rows = steps_of(vocab, merges)
    order = build_order(rows)
    assert order.rows == rows and order.moved == 0 and order.unmade == 0


@settings(max_examples=30, deadline=None, database=None)
@given(seed=st.integers(0, 2**32 - 1), moved=st.integers(1, 40))
def test_merges_listed_before_their_parts_are_applied_once_their_parts_exist(run, seed, moved):
    vocab, merges = run
    rows = steps_of(vocab, merges)
    rng = random.Random(seed)
    # A file's shape: some merges listed earlier than the merges that make their parts.
    for _ in range(moved):
        i = rng.randrange(1, len(rows))
        rows.insert(rng.randrange(0, i), rows.pop(i))
    order = build_order(rows)
    assert _made_before_use(order.rows)
    assert sorted(order.rows, key=rows.index) == rows  # every row, none twice
    assert order.unmade == 0 and order.moved <= len(rows)


def test_a_runs_tokenizer_counts_the_merges_made_now(run):
    """A tokenizer made while the run trained is named with the merges the run has made now
    (not those when it was made); once the run has ended, by its own merges (no "so far")."""
    vocab, merges = run
    steps = steps_of(vocab, merges)
    model = AppModel()
    model.begin_run(RunSettings(600, (EOT,)), initial_vocab([EOT]))
    model.start_merging()
    model.append_merges(steps[:30])
    model.publish()
    run_id = model.state.run_id
    cut = TokenizerSource.deferred(
        training_label(10, 30), run_tokenizer_at(model.state, 10), 10, run_id
    )
    assert source_label(model.state, cut) == "Tokenizer: training, 10 of 30 merges so far"
    model.append_merges(steps[30:50])
    model.publish()
    assert source_label(model.state, cut) == "Tokenizer: training, 10 of 50 merges so far"
    model.finish(TrainingResult(vocab, merges[:50], (EOT,), 343, True, 0.1))
    assert model.state.phase is Phase.STOPPED
    assert source_label(model.state, cut) == "Tokenizer: 10 of 50 merges"
    assert source_label(model.state, model.state.shown) == model.state.shown.label
