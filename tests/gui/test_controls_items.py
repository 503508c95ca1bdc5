"""The training controls: pattern choice (issue 10), and issue 11's app items 2, 5, 6, 8, 13,
14 and 20, plus Save's formats. Questions the app asks are answered by replacing
``window.ask``; expected merges come from the slow reference trainer in tests/core."""

from __future__ import annotations

import base64
import gzip
import json

import pytest
from gui_helpers import (
    EOT,
    FIXTURES,
    bad_after_probe,
    paused_in_window,
    save_and_wait,
    train_in_window,
    wait_for_spans,
)
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtWidgets import QApplication

from bpe_studio.core import Tokenizer
from bpe_studio.core.pretokenization.specials import DEFAULT_SPECIAL_TOKEN
from bpe_studio.core.reference import reference_train
from bpe_studio.core.train.vocab import check_vocab_size
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.state import Phase

# tiktoken's published cl100k_base regex (tiktoken_ext/openai_public.py), written out here.
CL100K_REGEX = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


class Questions:
    """Stands in for the window's yes/no dialog: records each question, gives ``answer``."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str]] = []

    def __call__(self, title: str, question: str) -> bool:
        self.asked.append((title, question))
        return self.answer


def corpus_text() -> str:
    return DEMO_CORPUS.read_text(encoding="utf-8")


# ------------------------------------------------------------------ pattern (issue 10)
def test_training_with_the_cl100k_pattern(qtbot, window):
    window.panel.pattern_choice.set_pattern("cl100k")
    result = train_in_window(qtbot, window, DEMO_CORPUS, 400)
    vocab, merges = reference_train(corpus_text(), 400, [EOT], CL100K_REGEX)
    assert result.merges == merges and result.vocab == vocab
    assert result.pattern == "cl100k"
    # The editor's tokenizer splits with that pattern too.
    window.editor.set_text("Numbers 1234567 don't split like GPT-2's\n\n")
    spans = wait_for_spans(qtbot, window.editor)
    expected = Tokenizer(vocab, merges, [EOT], "cl100k").encode(window.editor.text())
    assert [int(i) for i in spans.ids] == expected


def test_custom_regex_is_checked_as_it_is_typed(qtbot, window):
    panel = window.panel
    assert window.open_corpus(DEMO_CORPUS)
    panel.pattern_choice.set_pattern("gpt2")
    assert panel.train_button.isEnabled() and not panel.problem_label.isVisible()
    panel.pattern_choice.set_pattern(r"\p{L}+|(")
    assert panel.pattern_choice.regex_edit.isVisible()
    problem = panel.problem_label.text()
    assert panel.problem_label.isVisible() and "not a valid regex" in problem and "(" in problem
    assert "border" in panel.pattern_choice.regex_edit.styleSheet()
    assert not panel.train_button.isEnabled()
    assert not window.start_training()
    # Fixed as typed: the message goes and training uses the regex.
    regex = r"\p{L}+|\p{N}|\s+|[^\s\p{L}\p{N}]+"
    panel.pattern_choice.regex_edit.setText(regex)
    assert not panel.problem_label.isVisible() and panel.train_button.isEnabled()
    result = train_in_window(qtbot, window, DEMO_CORPUS, 350)
    assert result.merges == reference_train(corpus_text(), 350, [EOT], regex)[1]


# ------------------------------------------------------------ item 2: spaces in specials
def test_special_tokens_may_hold_spaces(qtbot, window):
    window.panel.specials_edit.setText("<|im start|>\n\n<|im end|>\n<|im start|>")
    assert window.panel.special_tokens() == ("<|im start|>", "<|im end|>")
    # Each line's id beside it (a blank or repeated line gets none), and the list in words.
    assert window.panel.specials_beside == ["→ 256", "", "→ 257", ""]
    assert window.panel.specials_ids.text() == "→ 256\n"  # the lines the edit shows
    assert window.panel.specials_ids.toolTip() == "<|im start|> → 256\n<|im end|> → 257"
    specials = "<|im start|>\n<|im end|>"
    result = train_in_window(qtbot, window, DEMO_CORPUS, 300, specials=specials)
    assert result.vocab[256] == b"<|im start|>" and result.vocab[257] == b"<|im end|>"
    text = corpus_text()
    assert result.merges == reference_train(text, 300, ["<|im start|>", "<|im end|>"])[1]


def test_the_ids_beside_the_special_tokens_follow_the_edits_scroll(qtbot, window):
    """Real-display audit: five special tokens in the two-line edit, scrolled to the last
    two, had "→ 256" and "→ 257" beside "<|c|>" and "<|d|>" (ids 259 and 260), the column of
    all five ids running past the edit; unscrolled, "→ 256" stood above the first line."""
    panel = window.panel
    panel.specials_edit.setText("\n".join(["<|endoftext|>", "<|a|>", "<|b|>", "<|c|>", "<|d|>"]))
    assert panel.specials_ids.text() == "→ 256\n→ 257"
    bar = panel.specials_edit.verticalScrollBar()
    bar.setValue(bar.maximum())
    first = panel.specials_edit.first_line_shown()
    assert first > 0
    assert panel.specials_ids.text() == "\n".join(f"→ {256 + i}" for i in range(first, first + 2))


def test_a_single_byte_special_token_is_refused_before_train(qtbot, window):
    """Audit h_tui61: "a" showed "a → 256" as valid; Train asked to discard the run on
    screen, then failed on it. Now the panel refuses it in the trainer's words."""
    panel = window.panel
    assert window.open_corpus(DEMO_CORPUS)
    panel.specials_edit.setText(f"{EOT}\na\n<pad>")
    problem = panel.problem_label.text()
    assert panel.problem_label.isVisible() and "Special token 'a' is a single byte" in problem
    assert not panel.train_button.isEnabled() and not window.start_training()
    assert "border" in panel.specials_edit.styleSheet()
    assert panel.specials_beside == ["→ 256", "", "→ 257"]  # the refused line gets no id
    panel.specials_edit.setText(f"{EOT}\n<a>")
    assert not panel.problem_label.isVisible() and panel.train_button.isEnabled()
    assert panel.specials_edit.styleSheet() == ""


def test_train_checks_the_corpus_start_before_asking_to_discard(qtbot, window, tmp_path):
    """Audit h_tui61: a custom regex that leaves text out, a JSON Lines file without the text
    field and a plain text file named .jsonl were refused only once the run on screen was
    discarded for them. Train now reads the start of the corpus first, in the trainer's words."""
    first = train_in_window(qtbot, window, DEMO_CORPUS, 300)
    asked = Questions(True)
    window.ask = asked
    panel = window.panel
    panel.pattern_choice.set_pattern(r"\w+")
    assert not window.start_training()
    assert "the pattern '\\w+' does not match ' ' (U+0020) at line 1" in window.last_error
    panel.pattern_choice.set_pattern("x*")
    assert not window.start_training()
    assert "the pattern 'x*' matches only empty text before" in window.last_error
    assert asked.asked == [] and window.state.result is first
    panel.pattern_choice.set_pattern("gpt2")
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"body": f"row {i}"}) + "\n" for i in range(40)))
    plain = tmp_path / "plain.jsonl"
    plain.write_text("plain text, no records\n" * 40)
    for corpus, said in (
        (rows, "rows.jsonl: line 1: no field 'text' (the record's fields: 'body')"),
        (plain, "plain.jsonl: line 1: not a JSON record"),
    ):
        window.ask = lambda title, question: True
        assert window.open_corpus(corpus)
        after_open = window.state.result
        window.ask = asked
        assert not window.start_training()
        assert said in window.last_error and asked.asked == []
        assert window.state.result is after_open
    panel.text_field_edit.setText("body")
    window.ask = lambda title, question: True
    assert window.open_corpus(rows) and window.start_training()
    with qtbot.waitSignal(window.controller.session.finished, timeout=60_000) as blocker:
        pass
    assert blocker.args[0] is not None and blocker.args[0].merges


def test_the_default_special_token_is_shared_with_the_cli(window):
    from bpe_studio.cli import train

    assert window.panel.special_tokens() == (DEFAULT_SPECIAL_TOKEN,) == ("<|endoftext|>",)
    assert train.DEFAULT_SPECIAL_TOKEN is DEFAULT_SPECIAL_TOKEN


def test_the_default_workers_follow_the_cores_rule(qtbot, monkeypatch):
    """The panel's default number of workers is the core's "every core": the cores this
    process may run on (one here), not every core the machine has."""
    import os

    from bpe_studio.core.corpus.counting import resolve_workers
    from bpe_studio.gui.views.controls import TrainingPanel

    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no CPU affinity on this platform")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    panel = TrainingPanel()
    qtbot.addWidget(panel)
    assert panel.workers_spin.value() == resolve_workers(None) == 1


# ------------------------------------------- item 5: failed Train, unsaved tokenizers
def test_a_failed_train_keeps_the_loaded_tokenizer(qtbot, window, tmp_path):
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000):
        assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
    loaded, shown = window.state.loaded, window.state.shown
    binary = bad_after_probe(tmp_path / "binary.txt", b"\x00\xff\xfe" * 100)
    assert train_in_window(qtbot, window, binary, 300) is None
    state = window.state
    assert state.phase is Phase.LOADED and state.loaded is loaded and state.shown is shown
    assert window.merge_list.model.rowCount() == 50_000
    assert window.editor.source is shown
    assert "binary.txt" in window.last_error and "still shown" in window.last_error


def test_train_and_load_ask_before_discarding_an_unsaved_tokenizer(qtbot, window, tmp_path):
    first = train_in_window(qtbot, window, DEMO_CORPUS, 300)
    window.ask = Questions(False)
    assert not window.start_training()  # kept: nothing started
    assert not window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
    assert len(window.ask.asked) == 2 and "not been saved" in window.ask.asked[0][1]
    assert window.state.result is first and window.state.phase is Phase.FINISHED
    # Once saved, nothing is asked.
    assert save_and_wait(qtbot, window, tmp_path)
    window.ask = Questions(False)
    second = train_in_window(qtbot, window, DEMO_CORPUS, 280)
    assert window.ask.asked == [] and len(second.merges) == 280 - 257
    # Unsaved again; answering yes goes ahead.
    window.ask = Questions(True)
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000):
        assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
    assert len(window.ask.asked) == 1 and window.state.phase is Phase.LOADED


# ------------------------------------------------------------ item 6: replacing files
def test_saving_over_existing_files_asks(qtbot, window, tmp_path):
    train_in_window(qtbot, window, DEMO_CORPUS, 300)
    (tmp_path / "merges.txt").write_text("keep me", encoding="utf-8")
    window.ask = Questions(False)
    assert not save_and_wait(qtbot, window, tmp_path)
    assert (tmp_path / "merges.txt").read_text(encoding="utf-8") == "keep me"
    assert not (tmp_path / "vocab.json").exists()
    assert "merges.txt" in window.ask.asked[0][1]
    window.ask = Questions(True)
    assert save_and_wait(qtbot, window, tmp_path)
    assert len(Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt").merges) == 43
    assert window.ask.asked  # asked again, answered yes


# --------------------------------------------------------- item 8: a paused run saves
def test_a_paused_run_is_savable(qtbot, window, tmp_path):
    session = paused_in_window(qtbot, window, DEMO_CORPUS, 2000, 99, workers=1)
    state = window.state
    assert state.phase is Phase.PAUSED and window.panel.save_button.isEnabled()
    assert save_and_wait(qtbot, window, tmp_path)
    saved = Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert saved.merges == reference_train(corpus_text(), 257 + 100, [EOT])[1]
    with qtbot.waitSignal(session.finished, timeout=30_000):
        window.stop_training()


# --------------------------------------------------- item 13: a new corpus after a run
def test_opening_a_new_corpus_clears_the_old_outcome(qtbot, window, tmp_path):
    train_in_window(qtbot, window, DEMO_CORPUS, 300)
    panel = window.panel
    assert panel.status.text().startswith("Done") and panel.save_button.isEnabled()
    assert panel.progress.value() == panel.progress.maximum() == 1
    window.ask = Questions(True)
    other = tmp_path / "other.txt"
    other.write_text("another corpus\n", encoding="utf-8")
    assert window.open_corpus(other)
    assert window.ask.asked  # the trained tokenizer was not saved
    assert panel.status.text() == "Ready to train on other.txt"
    assert panel.progress.value() == 0 and not panel.save_button.isEnabled()
    assert panel.train_button.isEnabled()


def test_a_saved_run_kept_on_screen_past_a_new_corpus_can_be_saved_again(qtbot, window, tmp_path):
    """The Compare/Report audit: a run saved once, then kept on screen when another corpus
    was opened (nothing to lose, so not discarded), could not be saved again (in another
    format, say): Save and every File > Save as entry were disabled."""
    result = train_in_window(qtbot, window, DEMO_CORPUS, 300)
    assert save_and_wait(qtbot, window, tmp_path / "gpt2", "gpt2")
    window.ask = Questions(False)
    other = tmp_path / "other.txt"
    other.write_text("another corpus\n", encoding="utf-8")
    assert window.open_corpus(other)
    assert not window.ask.asked and window.state.result is result
    assert window.panel.status.text() == "Ready to train on other.txt"
    assert window.panel.save_button.isEnabled()
    assert window.menus.save_action.isEnabled()
    assert save_and_wait(qtbot, window, tmp_path / "hf", "hf")
    saved = Tokenizer.from_hf(tmp_path / "hf" / "tokenizer.json")
    assert saved.merges == result.merges


def test_the_bar_is_busy_while_a_tokenizer_loads_after_a_run(qtbot, window):
    """A session audit: while the status line said "Loading o200k_base.tiktoken.gz…", the
    bar read the finished run's "100%"."""
    train_in_window(qtbot, window, DEMO_CORPUS, 300)
    bar = window.panel.progress
    assert bar.value() == bar.maximum() == 1
    assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    assert window.state.loading is not None and window.panel.status.text().startswith("Loading")
    assert bar.minimum() == bar.maximum() == 0  # busy, as during a compile
    qtbot.waitUntil(lambda: window.state.loading is None, timeout=60_000)
    assert window.state.phase is Phase.LOADED and bar.maximum() == 1


# ------------------------------------------------------ item 14: nothing was learned
def test_an_empty_corpus_is_refused_in_a_dialog_naming_it(qtbot, window, tmp_path):
    # Issue 23, item 7: an empty file is an input error, said as the others are.
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert not window.open_corpus(empty)
    assert window.error_box is not None and window.error_box.windowTitle() == "Cannot open corpus"
    assert window.last_error == f"{empty}: the file is empty: there is nothing to train on"
    assert window.state.corpus is None
    # Emptied after it was opened: Train says so the same way, and starts nothing.
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("some text\n", encoding="utf-8")
    assert window.open_corpus(corpus)
    corpus.write_bytes(b"")
    assert not window.start_training()
    assert window.error_box.windowTitle() == "Cannot train"
    assert window.last_error == (
        f"{corpus.resolve()}: the file is empty: there is nothing to train on"
    )
    assert window.state.phase is Phase.IDLE and window.controller.session is None
    assert "Stopped" not in window.statusBar().currentMessage()


def test_a_corpus_with_nothing_to_merge_says_nothing_was_learned(qtbot, window, tmp_path):
    singles = tmp_path / "singles.txt"
    singles.write_text("a\nb\nc\n", encoding="utf-8")  # pre-tokens of one byte each
    result = train_in_window(qtbot, window, singles, 300)
    assert result.merges == []
    assert window.panel.status.text() == (
        "Nothing was learned from singles.txt: it holds no two bytes side by side within a "
        "pre-token (only single characters, spaces or special tokens), so there is no pair to "
        "merge"
    )
    assert not window.panel.save_button.isEnabled()
    # With a run on screen before it, that run comes back, and the notice says why: the user
    # stopped nothing.
    train_in_window(qtbot, window, DEMO_CORPUS, 300)
    assert save_and_wait(qtbot, window, tmp_path / "saved")  # saved: opening singles keeps it
    train_in_window(qtbot, window, singles, 300)
    notice = window.statusBar().currentMessage()
    assert notice.startswith("Nothing was learned from singles.txt: it holds no two bytes")
    assert "Stopped" not in notice
    assert window.state.corpus.name == "singles.txt" and window.state.phase is Phase.FINISHED


def test_a_corpus_that_holds_no_text_says_so_not_that_no_pair_was_found(qtbot, window, tmp_path):
    # An empty compressed file and blank JSON Lines are not empty files (Open takes them),
    # but there was no text to count: "no two bytes side by side" would send the user looking
    # for short words. Only special tokens: text was there, and the pair notice stays.
    empty_gz = tmp_path / "empty.txt.gz"
    with gzip.open(empty_gz, "wb"):
        pass
    blank = tmp_path / "blank.jsonl"
    blank.write_text('\n{"text": ""}\n\n', encoding="utf-8")
    specials = tmp_path / "specials.txt"
    specials.write_text(EOT * 3, encoding="utf-8")
    for corpus, why in (
        (empty_gz, "the file holds no text"),
        (blank, "the file holds no text"),
        (
            specials,
            "it holds no two bytes side by side within a pre-token (only single characters, "
            "spaces or special tokens), so there is no pair to merge",
        ),
    ):
        result = train_in_window(qtbot, window, corpus, 300)
        assert result.merges == []
        # The panel and the status bar say the same (the run before learned nothing either:
        # there is nothing to bring back, so the notice is the panel's own).
        said = f"Nothing was learned from {corpus.name}: {why}"  # the command line's words
        assert window.panel.status.text() == said
        assert window.statusBar().currentMessage() in ("", said)


def test_stopping_during_pre_tokenization_says_nothing_was_learned(qtbot, window):
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.workers_spin.setValue(1)
    assert window.start_training()
    session = window.controller.session
    window.toggle_pause()  # the worker pauses at its first progress report
    qtbot.waitUntil(lambda: session.worker_waiting, timeout=30_000)
    assert window.state.resume_to is Phase.PRE_TOKENIZING
    with qtbot.waitSignal(session.finished, timeout=30_000) as blocker:
        window.stop_training()
    assert blocker.args[0].merges == []
    status = window.panel.status.text()
    assert status.startswith("Stopped before the first merge: nothing was learned"), status
    assert "Save keeps" not in status and not window.panel.save_button.isEnabled()


# ------------------------------------------------------- item 20: the vocabulary size
@pytest.mark.parametrize("size", [100, 256, 257, 5_000_000, 2**31 - 1, 2**31, 2**31 + 1])
def test_the_vocabulary_size_rule_is_the_cores_and_a_size_is_named_not_reverted(
    qtbot, window, size
):
    """One rule (issue 33): what the core's check_vocab_size refuses, the panel names in the
    core's words and Train stays off; what it accepts (256 + the special token: no merge),
    the panel accepts. The value typed is never reverted."""
    panel = window.panel
    assert window.open_corpus(DEMO_CORPUS)
    panel.vocab_spin.setValue(size)
    assert panel.vocab_spin.value() == size  # not reverted
    try:
        check_vocab_size(size, [EOT])
    except ValueError as error:
        refused: str | None = str(error)
    else:
        refused = None
    problem = panel.problem_label.text()
    if refused is None:
        assert not panel.problem_label.isVisible() and panel.train_button.isEnabled()
    else:
        assert panel.problem_label.isVisible() and problem.lower() == refused.lower()
        assert not panel.train_button.isEnabled()
    panel.vocab_spin.setValue(300)
    assert not panel.problem_label.isVisible() and panel.train_button.isEnabled()


def test_a_vocabulary_size_typed_past_the_largest_is_kept_and_refused(qtbot, window):
    """Audit h_tui61: the box (a QSpinBox, at most 2**31 - 1) dropped the keystroke that
    would pass its maximum: 3000000000 typed gave 300,000,000, which Train trained, and the
    largest size the core allows (2**31) could not be typed."""
    from PySide6.QtTest import QTest

    panel = window.panel
    box = panel.vocab_spin
    assert window.open_corpus(DEMO_CORPUS)
    for typed, refused in (("3000000000", True), ("2147483648", False), ("5,000", False)):
        box.setFocus()
        box.selectAll()
        QTest.keyClicks(box, typed)
        assert box.text() == typed and box.value() == int(typed.replace(",", ""))
        assert panel.train_button.isEnabled() is not refused
        if refused:
            assert "is too large: it must be at most 2,147,483,648" in panel.problem_label.text()
            assert "border" in box.styleSheet()
    box.selectAll()
    QTest.keyClick(box, "x")  # not a number: not taken
    assert box.text() == "5,000"
    box.clear()
    assert not panel.train_button.isEnabled() and "type the number" in panel.problem_label.text()
    box.setValue(299)
    QTest.keyClick(box, Qt.Key.Key_Up)  # a spin box's keys step it
    assert box.value() == 300 and box.text() == "300"


def test_a_pasted_vocabulary_size_is_taken_and_any_number_of_digits_is_refused(qtbot, window):
    """The review: the line edit dropped a number pasted with white space around it (a
    spreadsheet cell, a terminal line), which the spin box before it took; and 4,301 digits
    raised in Python's int(), leaving the box showing them while Train trained the size
    before."""
    from PySide6.QtGui import QGuiApplication

    panel = window.panel
    box = panel.vocab_spin
    assert window.open_corpus(DEMO_CORPUS)
    for pasted, size in (("50000\n", 50_000), (" 50,000", 50_000), ("\t7000\r\n", 7_000)):
        box.selectAll()
        QGuiApplication.clipboard().setText(pasted)
        box.paste()
        assert box.value() == size and panel.train_button.isEnabled(), repr(pasted)
    box.setFocus()
    box.selectAll()
    QGuiApplication.clipboard().setText("9" * 4301)
    box.paste()
    assert box.text() == "9" * 4301 and not panel.train_button.isEnabled()
    assert "a number of 4,301 digits is too large" in panel.problem_label.text()
    box.clearFocus()  # leaving the box keeps it as typed: no number stands for it
    assert box.text() == "9" * 4301


def test_a_vocabulary_of_the_bytes_and_specials_is_a_byte_level_tokenizer(qtbot, window, tmp_path):
    """Audit h_tui61: 256 + the special tokens (no merge asked for, a size the README allows)
    ended with "Nothing was learned ... no two bytes side by side" and Save off; the command
    line says it is a byte-level tokenizer and writes it."""
    from bpe_studio.core.formats.files import load_data

    earlier = train_in_window(qtbot, window, DEMO_CORPUS, 300)
    assert save_and_wait(qtbot, window, tmp_path / "earlier", "hf")
    result = train_in_window(qtbot, window, DEMO_CORPUS, 257)
    assert result.merges == [] and len(result.vocab) == 257
    assert window.state.result is result is not earlier  # not put back: it is what was asked
    status = window.panel.status.text()
    assert status.startswith(
        "Done: a byte-level tokenizer, no merge asked for (vocabulary size 257"
    )
    assert "Nothing was learned" not in status
    assert window.panel.save_button.isEnabled()
    assert save_and_wait(qtbot, window, tmp_path / "bytes", "hf")
    data = load_data(tmp_path / "bytes" / "tokenizer.json")
    assert data.merges == [] and len(data.vocab) == 257 and data.special_tokens == {EOT: 256}


def test_an_inputs_problem_shifts_nothing_below_the_controls(qtbot, window):
    """A vocabulary size too small (and a regex that does not compile) is named in red in the
    status line's place: before, a line of its own appeared under the controls and moved the
    whole window below them (the tabs) down by a line, and back when it went."""
    panel = window.panel
    assert window.open_corpus(DEMO_CORPUS)

    def tabs_top() -> int:
        # The window's layouts catch up (they are redone when a posted event says so).
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        return window.tabs.mapTo(window, QPoint(0, 0)).y()

    before = tabs_top()
    panel.vocab_spin.setValue(10)
    qtbot.waitUntil(panel.problem_label.isVisible)
    assert tabs_top() == before
    assert "too small" in panel.problem_label.text() and "too small" in panel.vocab_spin.toolTip()
    assert not panel.status.isVisible()  # not "Ready to train" beside a disabled Train
    panel.vocab_spin.setValue(300)
    assert not panel.problem_label.isVisible() and panel.status.isVisible()
    assert tabs_top() == before
    panel.pattern_choice.set_pattern(r"\p{L}+|(")
    assert panel.problem_label.isVisible() and tabs_top() == before


def test_core_says_vocabulary_size():
    with pytest.raises(ValueError, match="^vocabulary size 200 is too small: it must be at least"):
        check_vocab_size(200, [EOT])


# ------------------------------------------------------------------- Save's formats
def test_save_in_each_format_reloads_in_its_own_library(qtbot, window, tmp_path):
    import tiktoken
    from tokenizers import Tokenizer as HfTokenizer

    result = train_in_window(qtbot, window, DEMO_CORPUS, 400)
    ours = Tokenizer(result.vocab, result.merges, [EOT])
    text = corpus_text()[:2000] + EOT + " after"
    expected = ours.encode(text)
    assert save_and_wait(qtbot, window, tmp_path / "hf", "hf")
    hf = HfTokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    assert hf.encode(text).ids == expected
    assert save_and_wait(qtbot, window, tmp_path / "tt", "tiktoken")
    meta = json.loads((tmp_path / "tt" / "tokenizer.tiktoken.json").read_text(encoding="utf-8"))
    ranks = {}
    for line in (tmp_path / "tt" / "tokenizer.tiktoken").read_text(encoding="ascii").splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    enc = tiktoken.Encoding(
        "t", pat_str=meta["pat_str"], mergeable_ranks=ranks, special_tokens=meta["special_tokens"]
    )
    assert enc.encode(text, allowed_special="all") == expected
    # The Save button offers all three formats.
    actions = [a.text() for a in window.panel.save_button.menu().actions()]
    assert len(actions) == 3 and "tokenizer.json" in actions[1] and "tiktoken" in actions[2]


def test_a_failed_train_keeps_the_trained_tokenizer_and_its_pattern(qtbot, window, tmp_path):
    window.panel.pattern_choice.set_pattern("cl100k")
    first = train_in_window(qtbot, window, DEMO_CORPUS, 300)
    # Saved, so opening another corpus keeps it on screen (unsaved, it would be discarded).
    assert save_and_wait(qtbot, window, tmp_path / "first", "hf")  # GPT-2 files hold no pattern
    window.panel.pattern_choice.set_pattern("gpt2")
    binary = bad_after_probe(tmp_path / "binary.txt", b"\x00\xff\xfe" * 100)
    assert train_in_window(qtbot, window, binary, 300) is None
    assert window.state.result is first and window.state.phase is Phase.FINISHED
    assert window.merge_list.model.rowCount() == len(first.merges)
    # Saved with the pattern it was trained with, not the failed Train's.
    assert save_and_wait(qtbot, window, tmp_path / "hf", "hf")
    assert Tokenizer.from_hf(tmp_path / "hf" / "tokenizer.json").pattern_name == "cl100k"


def test_stopping_before_the_first_merge_puts_the_loaded_tokenizer_back(qtbot, window):
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000):
        assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
    loaded = window.state.loaded
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.workers_spin.setValue(1)
    assert window.start_training()
    session = window.controller.session
    window.toggle_pause()
    qtbot.waitUntil(lambda: session.worker_waiting, timeout=30_000)
    with qtbot.waitSignal(session.finished, timeout=30_000):
        window.stop_training()
    assert "nothing was learned" in window.hub.notice
    assert window.state.phase is Phase.LOADED and window.state.loaded is loaded
    assert window.merge_list.model.rowCount() == 50_000
    assert "nothing was learned" in window.statusBar().currentMessage()


def test_a_special_token_holding_a_break_python_splits_at_stays_one(qtbot, window):
    """One line is one token, as on the command line: str.splitlines also splits at NEL,
    \\v, \\f and \\x1c-\\x1e, and the app trained two special tokens of '<|a\\x85b|>'."""
    odd = ["<|a\x85b|>", "<|c\x0bd|>", "<|e\x1cf|>", "<|g\x0ch|>", "<|i\u2028j|>", "<|k\xa0l|>"]
    window.panel.specials_edit.setText("\n".join(odd))
    # Qt's plain text made a line break of U+2028 and a space of the no-break space (review).
    assert window.panel.special_tokens() == tuple(odd)
    assert window.panel.specials_beside == [f"→ {256 + i}" for i in range(6)]
    assert window.panel.specials_edit.text() == "\n".join(odd)  # kept as typed
