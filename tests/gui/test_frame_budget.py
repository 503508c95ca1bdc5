"""The frame budget: frames are spaced by what they cost, and never at the expense of the final
state (docs/responsiveness.md). Timing is benchmarks/gui_bench.py's; this tests the behaviour."""

from __future__ import annotations

import pytest
from gui_helpers import EOT, paused_in_window, train_in_window

from bpe_studio.core import train_bpe
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.responsiveness import frame_budget
from bpe_studio.gui.responsiveness.frame_budget import FrameBudget
from bpe_studio.gui.responsiveness.trainer_hold import GuiTurn


def test_frames_are_spaced_by_what_the_last_one_held():
    turn = GuiTurn()
    budget = FrameBudget(turn)
    assert budget.due()  # the first frame comes at once
    budget.begin()
    assert budget.interval == frame_budget.MIN_FRAME_SECONDS
    # A frame that held the trainer for 50 ms: the next comes after 50 ms / FRAME_BUDGET.
    turn.held_seconds += 0.05
    budget.begin()
    assert budget.interval == pytest.approx(0.05 / frame_budget.FRAME_BUDGET)
    # Cheap frames come no more often than MIN_FRAME_SECONDS, dear ones at least every
    # MAX_FRAME_SECONDS.
    turn.held_seconds += 0.0001
    budget.begin()
    assert budget.interval == frame_budget.MIN_FRAME_SECONDS
    turn.held_seconds += 10.0
    budget.begin()
    assert budget.interval == frame_budget.MAX_FRAME_SECONDS
    assert not budget.due()
    # Postponing: not due, however long ago the last frame was (the merge phase's start).
    budget.interval = 0.0
    assert budget.due()
    budget.interval = 1000.0
    budget.postpone()
    assert not budget.due()


def test_holding_counts_the_time_held_only_while_active():
    turn = GuiTurn()
    with turn.hold():
        pass
    assert turn.held_seconds == 0.0  # no worker: nothing held
    turn.active = True
    with turn.hold():
        with turn.hold():  # nested: counted once
            assert not turn.gui_free.is_set()
        assert not turn.gui_free.is_set()
    assert turn.gui_free.is_set() and turn.held_seconds > 0.0


@pytest.fixture
def rare_frames(monkeypatch):
    """Frames at most once per 1000 s: after the first, only the run's own events publish."""
    monkeypatch.setattr(frame_budget, "MIN_FRAME_SECONDS", 1000.0)
    monkeypatch.setattr(frame_budget, "MAX_FRAME_SECONDS", 1000.0)


def _shows_step(window, n: int) -> None:
    state = window.state
    assert state.step == state.published == len(state.record) == n
    assert window.merge_list.model.rowCount() == n
    assert window.vocab_table.model.rowCount() == 257 + n  # bytes, EOT, one per merge
    assert window.timeline.spin.maximum() == window.timeline.spin.value() == n
    assert f"step {n:,} of {n:,}" in window.timeline.label.text()
    assert window.chart.curve_data()[0].size == n
    assert f"{n:,}" in window.panel.status.text()


def test_the_last_merge_is_shown_when_the_run_ends_between_frames(qtbot, window, rare_frames):
    vocab = 2000
    merges = train_bpe(DEMO_CORPUS, vocab, [EOT])[1]
    result = train_in_window(qtbot, window, DEMO_CORPUS, vocab)
    assert result.merges == merges
    assert window.state.phase is Phase.FINISHED
    _shows_step(window, len(merges))
    assert window.panel.progress.value() == window.panel.progress.maximum()


def test_pausing_between_frames_shows_the_current_step(qtbot, window, rare_frames):
    session = paused_in_window(qtbot, window, DEMO_CORPUS, 10_000, 300)
    assert window.state.phase is Phase.PAUSED
    _shows_step(window, 301)
    with qtbot.waitSignal(session.finished, timeout=30_000):
        window.stop_training()
