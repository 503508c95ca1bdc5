"""What closing says when the run is paused and a Save holds every merge it learned (a task's
defect: it asked "Training has learned no merge yet…", untrue), and what a close does to a
Save that has asked nothing yet (a task's defect: its folder dialog came after the close)."""

from __future__ import annotations

import threading

import pytest
from gui_helpers import FIXTURES, paused_in_window, save_and_wait, train_in_window

from bpe_studio.core import Tokenizer
from bpe_studio.gui.jobs import saver as saver_module
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.training.session import live_training_threads
from bpe_studio.gui.views import file_dialogs

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


def hold_the_check(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Hold every Save in its check (before any question or folder dialog): the event set
    once a check has started, and the one that lets it end (at most 30 s)."""
    release, started = threading.Event(), threading.Event()
    real = saver_module.check_save

    def held(*args):
        started.set()
        release.wait(30)
        return real(*args)

    monkeypatch.setattr(saver_module, "check_save", held)
    return started, release


@pytest.fixture
def checking(qtbot, window, tmp_path, monkeypatch):
    """A finished run, and a Save as tokenizer.json from the menu held in its check (before
    any question or folder dialog); the folder dialogs shown, and the event that lets the
    check end."""
    result = train_in_window(qtbot, window, TINY, 400)
    started, release = hold_the_check(monkeypatch)
    folders: list[object] = []
    chosen = str(tmp_path / "menu")
    monkeypatch.setattr(file_dialogs, "existing_folder", lambda *a: folders.append(a) or chosen)
    window.menus.save("hf")
    qtbot.waitUntil(started.is_set, timeout=30_000)
    yield result, folders, release
    release.set()


def _check_ended(qtbot, window, release) -> None:
    """Let the held check end, and its news (were any still awaited) arrive."""
    release.set()
    qtbot.waitUntil(lambda: window.controller.saver.active_threads() == 0, timeout=30_000)
    qtbot.wait(50)  # a queued result, were one still awaited, would have been delivered


def test_a_close_while_a_save_asked_nothing_yet_asks_its_own_question(
    qtbot, window, tmp_path, checking
):
    """A task's defect: the close waited for the save, whose folder dialog then came, after
    the close, as if the close had asked for it. The close now drops that save (it had asked
    nothing, written nothing) and asks its own question; Cancel keeps the window and the run,
    and no folder dialog follows."""
    result, folders, release = checking
    asked: list[str] = []
    window.ask_close = lambda title, question: asked.append(title) or "cancel"
    window.close()
    assert asked == ["Save the trained tokenizer?"] and window.isVisible()
    assert not window.controller.saving and window.panel.save_button.isEnabled()
    assert window.hub.notice == "Closing cancelled the save under way, which had written nothing"
    _check_ended(qtbot, window, release)
    assert folders == [] and not (tmp_path / "menu").exists()
    assert window.state.result is result and window.hub.unsaved == len(result.merges)


def test_the_close_questions_save_writes_and_closes_with_no_other_folder_dialog(
    qtbot, window, tmp_path, checking
):
    result, folders, release = checking
    window.ask_close = lambda title, question: "save"
    window.choose_save_target = lambda: (str(tmp_path / "out"), "gpt2")
    window.close()
    assert window.controller.saving and window.isVisible()  # the close's own save
    window.close()  # a second close waits for the save the first one asked for
    assert window.controller.saving
    release.set()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    assert folders == [] and not (tmp_path / "menu").exists()
    assert Tokenizer.load(tmp_path / "out").merges == result.merges


def test_a_close_with_nothing_unsaved_lets_a_checking_save_write(
    qtbot, window, tmp_path, monkeypatch
):
    """With every merge in files, the close has no question of its own: a Save asked for
    (another format) is not dropped but written, then the window closes."""
    result = train_in_window(qtbot, window, TINY, 400)
    assert save_and_wait(qtbot, window, tmp_path / "first")
    assert window.hub.unsaved == 0
    started, release = hold_the_check(monkeypatch)
    chosen = tmp_path / "as_hf"
    chosen.mkdir()
    monkeypatch.setattr(file_dialogs, "existing_folder", lambda *a: str(chosen))
    asked = recording(window)
    window.menus.save("hf")
    qtbot.waitUntil(started.is_set, timeout=30_000)
    window.close()
    assert window.isVisible() and window.controller.saving  # waited for, not dropped
    release.set()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    assert asked == []
    assert Tokenizer.load(chosen / "tokenizer.json").merges == result.merges
