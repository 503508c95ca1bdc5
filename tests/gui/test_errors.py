"""Errors appear in a dialog that names the file and the reason; the app carries on."""

from __future__ import annotations

from gui_helpers import (
    EOT,
    FIXTURES,
    bad_after_probe,
    save_and_wait,
    train_in_window,
    wait_for_spans,
)
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QMessageBox

from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.state import Phase


def _dialog_text(window) -> str:
    box = window.error_box
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert box.textFormat() == Qt.TextFormat.PlainText  # file names may look like markup
    return box.text()


def _shown(label) -> str:
    """What a label shows, as a user reads it (markup rendered when the label renders it)."""
    if label.textFormat() == Qt.TextFormat.PlainText:
        return label.text()
    doc = QTextDocument()
    doc.setHtml(label.text())
    return doc.toPlainText()


def test_a_corpus_named_like_markup_shows_as_named(qtbot, window, tmp_path):
    folder = tmp_path / "<i>data"
    folder.mkdir()
    corpus = folder / "<b>x.txt"
    corpus.write_text("hello world\n" * 20, encoding="utf-8")
    assert window.open_corpus(corpus)
    shown = _shown(window.panel.corpus_label)
    assert "<b>x.txt" in shown and "<i>data" in shown
    tip = QTextDocument()
    tip.setHtml(window.panel.corpus_label.toolTip())
    assert tip.toPlainText() == str(corpus)
    train_in_window(qtbot, window, corpus, 300)
    wait_for_spans(qtbot, window.editor)  # the header names the tokenizer its colours are of
    assert "trained on <b>x.txt" in _shown(window.editor.source_label)


def test_errors_about_markup_names_show_them_as_named(qtbot, window, tmp_path):
    missing = tmp_path / "<b>gone</b>.txt"
    assert not window.open_corpus(missing)
    assert str(missing) in _dialog_text(window)
    window.error_box.close()
    bad = bad_after_probe(tmp_path / "<i>latin1.txt")
    assert train_in_window(qtbot, window, bad, 300) is None
    assert str(bad) in _dialog_text(window)
    assert window.state.phase is Phase.FAILED and _shown(window.panel.status) == "Training failed"


def test_missing_corpus(qtbot, window, tmp_path):
    missing = tmp_path / "nope.txt"
    assert not window.open_corpus(missing)
    assert str(missing) in _dialog_text(window)
    assert window.last_error == f"Corpus not found: {missing}"  # the core's words


def test_a_folder_as_corpus_says_what_to_open_instead(qtbot, window, tmp_path):
    """First-hour audit (h_first62): a folder opened as the corpus (Open corpus… or Glob or
    URL…) said "<folder>: not a regular file", where the command line says it is a
    directory and that the corpus names text files."""
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha beta\n", encoding="utf-8")
    assert not window.open_corpus(folder)
    assert window.last_error == (
        f"{folder}: is a directory, not a text file: open the text files in it, or give "
        f"Glob or URL… a pattern such as {folder / '*.txt'}"
    )


def test_non_utf8_corpus(qtbot, window, tmp_path):
    # Not UTF-8 at its start: refused at Open (tests/gui/test_corpus_utf8.py); further on:
    # the run finds it.
    bad = bad_after_probe(tmp_path / "latin1.txt")
    offset = bad.stat().st_size - len("caf\u00e9 au lait\n") + 3
    result = train_in_window(qtbot, window, bad, 300)
    assert result is None
    text = _dialog_text(window)
    assert str(bad) in text and "UTF-8" in text and f"byte offset {offset}" in text
    assert window.panel.train_button.isEnabled() and not window.controller.training
    # The app carries on: the next training works.
    window.error_box.close()
    assert train_in_window(qtbot, window, DEMO_CORPUS, 300) is not None


def test_vocabulary_too_small(qtbot, window):
    # Checked before training, in words (issue 11 item 20: tests/gui/test_controls_items.py).
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(257)
    window.panel.specials_edit.setText(f"{EOT}\n<|pad|>")
    assert not window.start_training()
    text = _dialog_text(window)
    assert "too small" in text and "258" in text


def test_unwritable_save_path(qtbot, window, tmp_path):
    train_in_window(qtbot, window, DEMO_CORPUS, 300)
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    target = blocker / "tokenizer"
    assert not save_and_wait(qtbot, window, target)
    text = _dialog_text(window)
    assert str(target) in text
    assert save_and_wait(qtbot, window, tmp_path / "ok")  # and a good path still works
    assert (tmp_path / "ok" / "vocab.json").exists() and (tmp_path / "ok" / "merges.txt").exists()


def test_malformed_merges_file(qtbot, window, tmp_path):
    vocab = tmp_path / "vocab.json"
    vocab.write_bytes((FIXTURES / "gpt2_vocab.json").read_bytes())
    merges = tmp_path / "merges.txt"
    merges.write_text("#version: 0.2\nĠ t\nthis line has three\n", encoding="utf-8")
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        assert window.load_tokenizer(vocab, merges)
    assert blocker.args == [False]
    text = _dialog_text(window)
    assert "merges.txt" in text and "line 3" in text


def test_a_merge_of_a_token_not_in_the_vocabulary_is_named_by_its_line(qtbot, window, tmp_path):
    """A merges.txt line naming a token its vocab.json lacks is said as the library says it
    (the line and the token), not as a token "made by no merge" that the line was meant to
    make."""
    vocab = tmp_path / "vocab.json"
    vocab.write_bytes((FIXTURES / "gpt2_vocab.json").read_bytes())
    lines = (FIXTURES / "gpt2_merges.txt").read_text(encoding="utf-8").splitlines()
    assert lines[57] == "o t"  # line 58; "ot" is made by this merge only
    lines[57] = "Ġt zzzzunknown"
    merges = tmp_path / "merges.txt"
    merges.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        assert window.load_tokenizer(vocab, merges)
    assert blocker.args == [False]
    text = _dialog_text(window)
    assert "line 58" in text and "'zzzzunknown' is not in" in text, text
    assert "made by no merge" not in text


def test_load_gpt2_to_inspect(qtbot, window):
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json")  # merges found beside it
        # Loading runs in the background: nothing has been swapped in yet, and the
        # controls are locked until it ends.
        assert window.controller.loader.busy and window.merge_list.model.rowCount() == 0
        assert not window.panel.load_button.isEnabled()
        assert not window.panel.train_button.isEnabled()
    assert blocker.args == [True]
    assert window.panel.load_button.isEnabled()
    assert window.merge_list.model.rowCount() == 50_000
    assert window.vocab_table.model.rowCount() == 50_257
    # Loaded merges are rows with no count, not invented MergeSteps with a count of 0.
    rows = window.state.merge_rows
    assert all(row.count is None for row in rows) and not window.state.record
    assert window.merge_list.model.data(window.merge_list.model.index(0, 4)) == "—"
    assert window.state.phase is Phase.LOADED
    assert "<|endoftext|>" in window.panel.status.text()
    assert window.panel.save_button.isEnabled()


def test_missing_vocabulary_file(qtbot, window, tmp_path):
    missing = tmp_path / "vocab.json"
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        window.load_tokenizer(missing, FIXTURES / "gpt2_merges.txt")
    assert blocker.args == [False]
    assert str(missing) in _dialog_text(window)
    assert window.panel.load_button.isEnabled()  # and the app carries on


def test_close_while_loading(qtbot, window):
    assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
    window.close()  # waits for the loading thread; its result is dropped
    assert not window.controller.loader.busy
    assert window.controller.loader.active_threads() == 0


def test_a_load_that_fails_leaves_the_unsaved_run_as_it_was(qtbot, window, tmp_path):
    """Load asks before an unsaved run is dropped, but drops it only once the new tokenizer
    has loaded (as Open checks its file before discarding): a broken file brings the error
    dialog and leaves the run, its merges and its views as they were."""
    asked: list[str] = []

    def ask(title: str, question: str) -> bool:
        asked.append(title)
        return True

    window.ask = ask
    run = train_in_window(qtbot, window, DEMO_CORPUS, 600)
    assert run is not None
    state, hub = window.state, window.hub
    run_id, merges, unsaved = state.run_id, len(state.merge_rows), hub.unsaved
    assert unsaved == merges > 0
    broken = tmp_path / "tokenizer.json"
    whole = (FIXTURES / "gpt2_vocab.json").read_text(encoding="utf-8")
    broken.write_text('{"model": {"type": "BPE", "vocab": ' + whole[:200], encoding="utf-8")
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        assert window.load_tokenizer(broken)
    assert blocker.args == [False]
    assert asked == ["Discard the trained tokenizer?"]
    assert str(broken) in _dialog_text(window)
    window.error_box.close()
    # The run is still the one on screen, unsaved, in every view.
    assert state.run_id == run_id and state.phase is Phase.FINISHED
    assert len(state.merge_rows) == merges and hub.unsaved == unsaved
    assert window.merge_list.model.rowCount() == merges
    assert window.vocab_table.model.rowCount() == 600
    assert state.shown is not None and state.shown.run_id == run_id
    # A file that loads replaces it (the question was asked once more, and answered yes).
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
    assert blocker.args == [True]
    assert asked == ["Discard the trained tokenizer?"] * 2
    assert state.phase is Phase.LOADED and state.run_id != run_id and hub.unsaved == 0
    assert window.merge_list.model.rowCount() == 50_000


def test_a_save_that_fails_leaves_no_folder_it_made(qtbot, window, tmp_path, monkeypatch):
    import errno

    from bpe_studio.core.formats import gpt2

    def full(files):
        raise OSError(errno.ENOSPC, "No space left on device", str(files[0][0]))

    train_in_window(qtbot, window, DEMO_CORPUS, 300)
    monkeypatch.setattr(gpt2, "atomic_write_all", full)
    new = tmp_path / "new" / "tokenizer"
    assert not save_and_wait(qtbot, window, new, "gpt2")
    text = _dialog_text(window)
    assert "No space left on device" in text
    assert f"{new / 'vocab.json'}: No space left" in text  # the file, not only its folder
    assert not (tmp_path / "new").exists()  # the folders the save made went with it
    window.error_box.close()
    there = tmp_path / "there"
    there.mkdir()
    assert not save_and_wait(qtbot, window, there, "gpt2")
    assert there.is_dir()  # a folder the user had stays
