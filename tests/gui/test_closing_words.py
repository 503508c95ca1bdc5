"""What closing says when the run is paused and a Save holds every merge it learned (a task's
defect: it asked "Training has learned no merge yet…", untrue)."""

from __future__ import annotations

from gui_helpers import FIXTURES, paused_in_window, save_and_wait

from bpe_studio.core import Tokenizer
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.training.session import live_training_threads

TINY = FIXTURES / "tinystories_sample.txt"


def recording(window) -> list[str]:
    """Record every question asked (yes to each, closing's answered Cancel): none expected.
    Recorded, not raised: an exception inside a close event only surfaces muddled."""
    asked: list[str] = []
    window.ask = lambda title, question: asked.append(question) or True
    window.ask_close = lambda title, question: asked.append(question) or "cancel"
    return asked


def test_closing_a_paused_run_whose_merges_are_all_saved_asks_nothing(qtbot, window, tmp_path):
    """Everything the run made that closing would stop is in files (closing stops it as
    Stop does, which asks nothing): the window closes, as it does for a finished run saved."""
    paused_in_window(qtbot, window, TINY, 400, after=99)
    assert save_and_wait(qtbot, window, tmp_path / "out", "hf")
    assert window.state.phase is Phase.PAUSED and window.hub.unsaved == 0
    asked = recording(window)
    window.close()
    assert asked == [] and not window.isVisible()
    qtbot.waitUntil(lambda: live_training_threads() == 0, timeout=30_000)
    assert len(Tokenizer.load(tmp_path / "out" / "tokenizer.json").merges) == 100


def test_train_and_load_ask_nothing_of_a_paused_run_saved_then_stopped(qtbot, window, tmp_path):
    """Train and Load are off while the run is paused (Stop it first); once stopped, its
    merges all saved, they drop it without a question, as closing does."""
    session = paused_in_window(qtbot, window, TINY, 400, after=99)
    assert save_and_wait(qtbot, window, tmp_path / "out", "hf")
    assert not window.panel.train_button.isEnabled()
    assert not window.panel.load_button.isEnabled()
    with qtbot.waitSignal(session.finished, timeout=60_000):
        window.stop_training()
    qtbot.waitUntil(lambda: not window.controller.busy, timeout=10_000)
    assert window.hub.unsaved == 0
    asked = recording(window)
    assert window.start_training()
    qtbot.waitUntil(lambda: window.state.phase is Phase.FINISHED, timeout=60_000)
    assert save_and_wait(qtbot, window, tmp_path / "again", "hf")
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000):
        assert window.load_tokenizer(tmp_path / "out" / "tokenizer.json")
    assert asked == []
