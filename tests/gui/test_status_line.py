"""What the status line says and for how long (issue 23, items 2, 3 and 6): every figure
names what it covers, the time left appears only when credible, and a message ends with the
next action."""

from __future__ import annotations

from pathlib import Path

from gui_helpers import save_and_wait, train_in_window

from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.state import Phase, RunSettings, RunState, TrainingResult
from bpe_studio.gui.model.status import format_duration, status_text


def merging_state(**fields) -> RunState:
    state = RunState(
        corpus=Path("books.txt"),
        phase=Phase.MERGING,
        settings=RunSettings(10_000, ("<|endoftext|>",)),
    )
    for name, value in fields.items():
        setattr(state, name, value)
    return state


def test_pre_tokenizing_before_the_size_is_known_shows_no_sizes():
    state = RunState(corpus=Path("books.txt"), phase=Phase.PRE_TOKENIZING, elapsed=0.4)
    text = status_text(state)
    assert text == "Pre-tokenizing… · 0.4 s elapsed"
    state.bytes_done, state.bytes_total = 1_500_000, 20_000_000
    assert status_text(state) == "Pre-tokenizing: 1.5 MB / 20.0 MB · 0.4 s elapsed"


def test_the_times_say_what_they_cover_while_merging():
    # 25 s into the run, merging began at 11 s: 14 s of merging.
    state = merging_state(elapsed=25.0, merge_start=11.0, rate=300.0)
    state.record = []  # published rows are what the line counts
    state.published = 4_000
    text = status_text(state)
    assert text == "Merging: 4,000 / 9,743 · 300 merges/s · 0:25 elapsed, 0:14 of it merging"
    # The time left is the estimate's, shown only once there is one (never merges / rate).
    assert "left" not in text
    state.remaining = 12.0
    assert status_text(state).endswith(" · ~0:12 left")


def test_a_paused_run_shows_no_merge_rate():
    """A paused run's line said "Paused · Merging: 156 / 443 · 180,870 merges/s": the rate
    of the merges drained as the pause came, at the pause's frozen time (another pause of
    the same run said "0 merges/s"). Nothing merges while paused: no rate is shown."""
    state = merging_state(elapsed=25.0, merge_start=11.0, rate=180_870.0)
    state.record = []
    state.published = 156
    state.phase, state.resume_to = Phase.PAUSED, Phase.MERGING
    text = status_text(state)
    assert text == "Paused · Merging: 156 / 9,743 · 0:25 elapsed, 0:14 of it merging"


def test_a_run_stopped_during_a_replay_says_so_while_the_replay_goes_on():
    """A real-display audit: Stop (Shift+F5) pressed while a replay animated the run left
    "Replaying the run: step 3,799 of 14,236" alone on the line: nothing said the run had
    stopped, or that Save keeps its merges, until the replay ended."""
    merges = [(b"a", b"b")] * 3
    result = TrainingResult({}, merges, (), 10, True, 1.0, "gpt2")
    state = RunState(corpus=Path("books.txt"), phase=Phase.STOPPED, result=result)
    state.replaying, state.step, state.published = True, 1, 3
    text = status_text(state)
    assert text.startswith("Stopped after 3 of 10 merges, Save keeps them · ")
    assert text.endswith(
        "Replaying the run: step 1 of 3 · Skip jumps to the end, Pause (Alt+P) stops it"
    )
    state.replay_paused = True
    assert "Stopped after 3 of 10" in status_text(state) and "Replay paused" in status_text(state)
    # A finished run's outcome waits for the replay's end, as before.
    state.result = TrainingResult({}, merges, (), 3, False, 1.0, "gpt2")
    state.phase = Phase.FINISHED
    assert status_text(state).startswith("Replay paused at step 1 of 3")


def test_a_stopped_run_whose_merges_are_all_in_files_is_not_told_to_save():
    """A real-display audit: a run paused, saved, then stopped said "Stopped after 3,001 of
    4,743 merges (…); Save keeps them" with every merge in the files just written (the
    title's * gone): the line sent the user to Save for nothing. It says they are saved; a
    run stopped past its last save still says Save keeps them."""
    merges = [(b"a", b"b")] * 3
    result = TrainingResult({}, merges, (), 10, True, 1.0, "gpt2")
    state = RunState(corpus=Path("books.txt"), phase=Phase.STOPPED, result=result)
    state.saved_merges = 3
    text = status_text(state)
    assert text.startswith("Stopped after 3 of 10 merges (") and "Save keeps" not in text
    assert "; all saved · " in text
    state.replaying, state.step, state.published = True, 1, 3  # Stop during the replay
    assert status_text(state).startswith("Stopped after 3 of 10 merges, all saved · ")
    state.saved_merges = 2  # one learned past the save
    assert status_text(state).startswith("Stopped after 3 of 10 merges, Save keeps them · ")
    state.replaying = False
    assert "; Save keeps them · " in status_text(state)


def test_pause_save_then_stop_says_the_merges_are_saved(qtbot, window, tmp_path):
    """The user's order: pause, save, Stop."""
    from gui_helpers import FIXTURES, paused_in_window

    paused_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 2000, 200, workers=1)
    qtbot.waitUntil(lambda: window.state.phase is Phase.PAUSED, timeout=30_000)
    assert save_and_wait(qtbot, window, tmp_path, "hf")
    window.panel.stop_button.click()
    qtbot.waitUntil(lambda: window.state.phase is Phase.STOPPED, timeout=30_000)
    text = window.panel.status.text()
    assert text.startswith("Stopped after 201 of ") and "Save keeps" not in text, text
    assert "all saved" in text and not window.isWindowModified()


def test_the_end_of_a_run_says_total_and_merging_time(qtbot, window):
    result = train_in_window(qtbot, window, DEMO_CORPUS, 600)
    state = window.state
    n = len(result.merges)
    rate = n / result.merge_seconds
    expected = (
        f"Done: {n:,} merges ({format_duration(state.elapsed)} elapsed, "
        f"{format_duration(result.merge_seconds)} of it merging, {rate:,.0f} merges/s) "
        "· gpt2 pattern, special token <|endoftext|>"
    )
    assert window.panel.status.text() == expected
    assert state.elapsed >= result.merge_seconds


def test_the_end_of_a_run_names_its_settings_and_the_ids_beside_the_inputs_are_the_next_runs(
    qtbot, window
):
    """Audit h_tui61: once the pattern and special tokens were changed after a run, nothing
    said which the run on screen used, and "<s> → 256" beside the edit contradicted the
    vocabulary, whose 256 is <|endoftext|>."""
    panel = window.panel
    train_in_window(qtbot, window, DEMO_CORPUS, 400, specials="<|endoftext|>\n<pad>")
    assert panel.specials_title.text() == "Special tokens, one per line"
    panel.pattern_choice.set_pattern("o200k")
    panel.specials_edit.setText("<s>")
    status = panel.status.text()
    assert status.startswith("Done: ")
    assert status.endswith(" · gpt2 pattern, special tokens <|endoftext|>, <pad>")
    assert panel.specials_title.text() == "Next run's special tokens, one per line"
    tip = panel.specials_ids.toolTip()
    assert "The next run's ids:\n<s> → 256" in tip and "<|endoftext|> → 256" in tip
    panel.specials_edit.setText("<|endoftext|>\n<pad>")  # the run's again
    assert panel.specials_title.text() == "Special tokens, one per line"


def test_a_failed_load_is_news_until_the_next_action(qtbot, window, tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{ not json", encoding="utf-8")

    def fail_to_load() -> None:
        with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
            assert window.load_tokenizer(bad)
        assert blocker.args == [False]
        assert window.panel.status.text().startswith("Loading failed: ")
        assert "tokenizer.json" in window.panel.status.text()

    fail_to_load()
    assert window.open_corpus(DEMO_CORPUS)  # another action: the failure is old news
    assert window.panel.status.text() == f"Ready to train on {DEMO_CORPUS.name}"
    fail_to_load()
    window.tabs.setCurrentIndex(1)  # so is switching tabs
    assert not window.panel.status.text().startswith("Loading failed")
    window.tabs.setCurrentIndex(0)
    fail_to_load()
    train_in_window(qtbot, window, DEMO_CORPUS, 300)  # and training
    assert window.panel.status.text().startswith("Done: ")


def test_a_refused_corpus_is_the_news_after_a_failed_load(qtbot, window, tmp_path):
    """An audit (issue 67): "Loading failed: …" stayed on the status line while corpora were
    refused after it, each with its own dialog."""
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{ not json", encoding="utf-8")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert window.open_corpus(DEMO_CORPUS)
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000):
        assert window.load_tokenizer(bad)
    assert window.panel.status.text().startswith("Loading failed: ")
    for path in (latin1, empty):
        assert not window.open_corpus(path)
        status = window.panel.status.text()
        assert not status.startswith("Loading failed") and "tokenizer.json" not in status
        assert status == f"Ready to train on {DEMO_CORPUS.name}"  # the corpus open stays
        message = window.statusBar().currentMessage()
        assert message.startswith("Corpus not opened: ") and str(path) in message
        assert str(path) in window.last_error  # and its dialog says so too


def test_a_notice_ends_with_the_next_action(qtbot, window, tmp_path):
    train_in_window(qtbot, window, DEMO_CORPUS, 300)
    assert save_and_wait(qtbot, window, tmp_path)
    # The names first: a narrow window cuts the line's end, which held them after the folder.
    saved = f"Saved vocab.json and merges.txt in {tmp_path}"
    assert window.statusBar().currentMessage() == saved
    other = tmp_path / "other.txt"
    other.write_text("another corpus\n", encoding="utf-8")
    assert window.open_corpus(other)
    assert window.statusBar().currentMessage() == ""


def test_without_a_cache_folder_the_window_says_each_run_compiles(monkeypatch):
    """A first-run audit: with no folder numba can cache in, the command line said each run
    compiles and the window said "(first run only)" at every launch."""
    from bpe_studio.core.encode.merging import kernel_start
    from bpe_studio.core.io import numba_cache
    from bpe_studio.core.train import merge_engine
    from bpe_studio.gui.model.status import compiling_text
    from bpe_studio.gui.views.encoder_status import encoder_compiling

    assert "(first run only)" in encoder_compiling(kernel_start.COMPILING)
    assert "(first run only)" in compiling_text()
    monkeypatch.setattr(numba_cache, "usable_cache_dir", lambda: None)
    said = kernel_start.LOADER.said_compiling()
    assert said == "compiling the encoder (no cache folder: each run compiles)"
    assert encoder_compiling(said).startswith(
        "Compiling the encoder (no cache folder: each run compiles); the editor"
    )
    assert compiling_text() == "Compiling the merge engine (no cache folder: each run compiles)…"
    assert merge_engine.LOADER.said_compiling().endswith("(no cache folder: each run compiles)")


def test_the_encoder_compile_is_shown_until_it_ends_whatever_the_user_does(qtbot, monkeypatch):
    """A real-display audit: the encoder's compile notice was cleared by the next action (a
    tab switch) though the compile went on for 30 s more."""
    import threading

    from bpe_studio.core.encode.merging import kernel_start
    from bpe_studio.gui.main_window import MainWindow
    from bpe_studio.gui.views import encoder_status

    started: list = []
    monkeypatch.setattr(
        encoder_status.kernel_start,
        "prepare_in_background",
        lambda status, done: started.append((status, done)),
    )
    win = MainWindow()
    win.ask_close = lambda title, question: "discard"
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    label = win.encoder_status
    ((status, done),) = started
    assert not label.isVisible()
    # The core calls back from its loading thread.
    thread = threading.Thread(target=status, args=(kernel_start.COMPILING,))
    thread.start()
    thread.join()
    qtbot.waitUntil(label.isVisible)
    assert label.text().startswith("Compiling the encoder (first run only)")
    win.tabs.setCurrentIndex(1)  # the next actions end a notice, not the compile's word
    win.tabs.setCurrentIndex(0)
    assert label.isVisible() and label.text().startswith("Compiling the encoder")
    thread = threading.Thread(target=done, args=(True,))
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: not label.isVisible())
    assert win.statusBar().currentMessage() == "The encoder is compiled"


def test_an_encoder_that_failed_to_compile_says_why(qtbot, monkeypatch):
    from bpe_studio.gui.views.encoder_status import EncoderStatus, kernel_start

    monkeypatch.setattr(kernel_start, "failure", lambda: "TypingError: no kernel here")
    label = EncoderStatus()
    qtbot.addWidget(label)
    news: list[str] = []
    label.news.connect(news.append)
    label._ended.emit(False, True)
    assert news == [
        "The encoder could not be compiled (TypingError: no kernel here); the editor "
        "tokenizes with the slower one"
    ]
    monkeypatch.setattr(kernel_start, "failure", lambda: None)
    label._ended.emit(False, False)  # turned off by the user (BPE_STUDIO_ENCODER=python)
    assert len(news) == 1 and not label.isVisible()


def test_loading_a_vocab_json_beside_a_tokenizer_json_that_encodes_otherwise_says_so(
    qtbot, window, tmp_path
):
    """Audit h_hf63: the Load dialog takes *vocab*.json as GPT-2 files; picking the one of a
    Qwen2-like Hub snapshot gave other ids than its tokenizer.json, and nothing said so."""
    from hf_shapes import hub_folder

    folder = tmp_path / "qwen"
    hub_folder(folder, "qwen2", ["<|endoftext|>", "<|im_end|>"])
    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000) as blocker:
        assert window.load_tokenizer(folder / "vocab.json")
    assert blocker.args == [True]
    notice = window.statusBar().currentMessage()
    assert notice.startswith(f"{folder / 'vocab.json'}: the model's tokenizer.json beside it")
    assert notice.endswith(f"name it ({folder / 'tokenizer.json'}) or the folder")
    # Its tokenizer.json, loaded as the notice says, is news of nothing.
    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000):
        assert window.load_tokenizer(folder / "tokenizer.json")
    assert window.statusBar().currentMessage() == ""
