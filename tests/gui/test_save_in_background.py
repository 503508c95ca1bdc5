"""Save runs off the GUI thread (a task's defect: with o200k_base loaded, Save as tiktoken
files froze the window for ~3.9 s, tokenizer.json for ~2 s): what the format refuses or
loses is found in the background, the questions are asked on the GUI thread, and the files
are written in the background, while the window says it is saving and starts nothing else.
A close while it runs waits for it (and stays when it fails); a refusal the folder has no
part in comes before the folder dialog."""

from __future__ import annotations

import threading

from gui_helpers import FIXTURES, save_and_wait, save_ended, train_in_window

from bpe_studio.core import Tokenizer
from bpe_studio.gui.jobs import saver as saver_module
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.views import file_dialogs

TINY = FIXTURES / "tinystories_sample.txt"


class Held:
    """Wraps one of the saver's functions: records the thread it runs in, and holds it until
    released (at most 30 s: code that ran it on the GUI thread fails instead of hanging)."""

    def __init__(self, real) -> None:
        self.real = real
        self.threads: list[threading.Thread] = []
        self.started, self.release = threading.Event(), threading.Event()

    def __call__(self, *args, **kwargs):
        self.threads.append(threading.current_thread())
        self.started.set()
        self.release.wait(30)
        return self.real(*args, **kwargs)


def test_a_save_checks_and_writes_off_the_gui_thread_and_says_it_is_saving(
    qtbot, window, tmp_path, monkeypatch
):
    result = train_in_window(qtbot, window, TINY, 400)
    check = Held(saver_module.check_save)
    check.release.set()
    write = Held(saver_module.save_data)
    monkeypatch.setattr(saver_module, "check_save", check)
    monkeypatch.setattr(saver_module, "save_data", write)
    qtbot.waitUntil(window.isWindowModified)
    out = tmp_path / "out"
    assert window.save_tokenizer(out, "hf")  # it returns at once
    qtbot.waitUntil(write.started.is_set, timeout=30_000)  # checked first
    qtbot.waitUntil(lambda: window.panel.status.text() == f"Saving tokenizer.json into {out}…")
    panel = window.panel
    assert not panel.save_button.isEnabled() and not window.menus.save_action.isEnabled()
    assert not panel.train_button.isEnabled() and not panel.load_button.isEnabled()
    assert not panel.open_button.isEnabled() and panel.progress.maximum() == 0  # busy
    assert window.controller.busy and window.isWindowModified()  # not saved yet
    # What the user may try meanwhile starts nothing.
    assert not window.save_tokenizer(tmp_path / "second", "gpt2")
    assert window.hub.notice == "A save is under way: the next one starts once it has ended"
    assert not window.start_training()
    assert not window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
    assert not window.open_corpus(FIXTURES / "tinystories_slice.txt")
    write.release.set()
    assert save_ended(qtbot, window)
    main = threading.main_thread()
    assert check.threads and write.threads and main not in check.threads + write.threads
    assert not window.isWindowModified() and window.hub.unsaved == 0
    assert window.hub.notice == f"Saved tokenizer.json in {out}"
    assert panel.save_button.isEnabled() and panel.train_button.isEnabled()
    assert Tokenizer.load(out / "tokenizer.json").merges == result.merges
    assert not (tmp_path / "second").exists()


def test_closing_while_a_save_runs_waits_for_it_then_closes(qtbot, window, tmp_path, monkeypatch):
    train_in_window(qtbot, window, TINY, 400)
    write = Held(saver_module.save_data)
    monkeypatch.setattr(saver_module, "save_data", write)
    asked: list[str] = []
    window.ask_close = lambda title, question: asked.append(question) or "discard"
    out = tmp_path / "out"
    assert window.save_tokenizer(out, "gpt2")
    qtbot.waitUntil(write.started.is_set, timeout=30_000)  # checked first
    window.close()
    assert window.isVisible() and asked == []  # nothing asked: the save under way goes on
    assert window.hub.notice == "The window closes once the save under way has written"
    write.release.set()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    assert asked == [] and (out / "vocab.json").is_file()


def test_a_save_that_fails_while_the_window_waits_to_close_keeps_it(
    qtbot, window, tmp_path, monkeypatch
):
    train_in_window(qtbot, window, TINY, 400)
    write = Held(saver_module.save_data)
    monkeypatch.setattr(saver_module, "save_data", write)
    failing = tmp_path / "failing"
    (failing / "tokenizer.json").mkdir(parents=True)  # the save cannot write it
    assert window.save_tokenizer(failing, "hf")
    qtbot.waitUntil(write.started.is_set, timeout=30_000)  # checked first
    window.close()
    write.release.set()
    assert not save_ended(qtbot, window)
    qtbot.wait(50)  # a close, were one coming, would have been delivered
    assert window.isVisible() and window.isWindowModified() and window.hub.unsaved > 0
    assert window.hub.notice == "The window stays open: the save did not write its files"
    assert str(failing) in (window.last_error or "")
    assert window.panel.save_button.isEnabled()  # nothing lost: it can be saved elsewhere
    window.error_box.close()
    assert save_and_wait(qtbot, window, tmp_path / "ok", "hf")


def test_the_save_closings_question_asked_for_fails_and_the_run_goes_on(
    qtbot, window, tmp_path, monkeypatch
):
    """Only a save that succeeded lets the window close: one that fails keeps it, the run
    unsaved, a run that was training (paused for the question) training again."""
    from bpe_studio.gui.training import worker as worker_module

    real = worker_module.trainer_from_file
    go_on = threading.Event()

    class HeldAfter50:
        """A run that cannot pause itself or end before the close comes: it waits at merge
        50 until the test lets it go."""

        def __init__(self, trainer) -> None:
            self._trainer = trainer

        def __getattr__(self, name: str):
            return getattr(self._trainer, name)

        def __iter__(self):
            for step in self._trainer:
                if step.rank == 50:
                    go_on.wait(30)
                yield step

    monkeypatch.setattr(
        worker_module, "trainer_from_file", lambda *a, **k: HeldAfter50(real(*a, **k))
    )
    assert window.open_corpus(FIXTURES / "tinystories_slice.txt")
    window.panel.vocab_spin.setValue(3000)
    window.panel.workers_spin.setValue(1)
    assert window.start_training()
    session = window.controller.session
    qtbot.waitUntil(lambda: window.state.published == 50, timeout=60_000)
    assert not session.paused
    failing = tmp_path / "failing"
    (failing / "tokenizer.json").mkdir(parents=True)
    window.ask_close = lambda title, question: "save"
    window.choose_save_target = lambda: (str(failing), "hf")
    window.close()
    assert window.isVisible() and window.state.phase is Phase.PAUSED  # it holds still
    assert not save_ended(qtbot, window)
    assert window.isVisible() and not session.paused  # it goes on, as after Cancel
    assert window.hub.unsaved > 0 and str(failing) in window.last_error
    window.error_box.close()
    go_on.set()
    window.stop_training()
    qtbot.waitUntil(lambda: not window.state.phase.training, timeout=60_000)


def test_a_format_that_cannot_hold_the_pattern_is_refused_before_the_folder_dialog(
    qtbot, window, monkeypatch
):
    """The task's defect 2: Save as tokenizer.json (or tiktoken files) of a run trained with
    a pattern the format cannot say asked for a folder, then said "Could not save"."""
    window.panel.pattern_choice.set_pattern(r"\X+|\s+")
    train_in_window(qtbot, window, TINY, 300)
    folders: list[object] = []
    monkeypatch.setattr(file_dialogs, "existing_folder", lambda *a, **k: folders.append(a))
    titles: list[str] = []
    window.controller.error.connect(lambda title, message: titles.append(title))
    for fmt, files in (("hf", "tokenizer.json"), ("tiktoken", "tiktoken files")):
        window.menus.save(fmt)
        assert not save_ended(qtbot, window)
        assert folders == [] and titles[-1] == f"Cannot save as {files}"
        assert window.last_error.startswith(f"{files} cannot hold this tokenizer: pattern")
        assert "GPT-2 files hold it" in window.last_error
        window.error_box.close()
    assert window.isWindowModified()  # nothing was saved


def test_the_gui_threads_collections_wait_while_a_save_runs(qtbot, window, tmp_path, monkeypatch):
    """Measured with o200k_base: the GUI thread's passes over the young generation walked the
    save's hundreds of thousands of new containers (all alive), 20-120 ms every half second.
    They wait while a save runs; the containers are freed by reference counts at its end."""
    import gc

    from bpe_studio.gui.responsiveness import collector

    train_in_window(qtbot, window, TINY, 300)
    assert collector._collector is not None  # the window installed it
    write = Held(saver_module.save_data)
    monkeypatch.setattr(saver_module, "save_data", write)
    collected: list[int] = []
    monkeypatch.setattr(collector.gc, "collect", lambda generation=2: collected.append(generation))
    young = [[] for _ in range(gc.get_threshold()[0] + 10)]  # a collection is due
    assert window.save_tokenizer(tmp_path / "out", "hf")
    qtbot.waitUntil(write.started.is_set, timeout=30_000)
    collector._collector.collect()
    assert collected == []
    write.release.set()
    assert save_ended(qtbot, window)
    young += [[] for _ in range(gc.get_threshold()[0] + 10)]
    collector._collector.collect()
    assert collected  # due collections run again


def test_the_status_line_asks_for_a_folder_while_the_folder_dialog_waits(
    qtbot, window, tmp_path, monkeypatch
):
    """Behind the folder dialog the line said "Getting ready to save…", as if the app were
    busy: it says the save waits for the user's folder."""
    train_in_window(qtbot, window, TINY, 400)
    seen: list[str] = []
    chosen = tmp_path / "picked"

    def choose(*args):
        seen.append(window.panel.status.text())
        return str(chosen)

    monkeypatch.setattr(file_dialogs, "existing_folder", choose)
    ended: list[bool] = []
    window.controller.save_finished.connect(ended.append)
    window.menus.save("hf")
    qtbot.waitUntil(lambda: bool(ended), timeout=60_000)
    assert seen == ["Choose a folder to save tokenizer.json into…"]
    assert ended == [True] and (chosen / "tokenizer.json").is_file()
