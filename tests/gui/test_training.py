"""Training through the window, checked against the core's own results computed here."""

from __future__ import annotations

import threading

import pytest
from gui_helpers import EOT, train_in_window, wait_for_spans
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from bpe_studio.core import Tokenizer, train_bpe, trainer_from_file
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.main_window import SAMPLE_TEXT
from bpe_studio.gui.models import SORT_ROLE, TOKEN_ID_ROLE

VOCAB = 1000


@pytest.fixture(scope="module")
def reference():
    """The core's own run on the bundled corpus: merges, vocab, counts, the final top pairs."""
    vocab, merges = train_bpe(DEMO_CORPUS, VOCAB, [EOT])
    trainer = trainer_from_file(DEMO_CORPUS, VOCAB, [EOT])
    steps = list(trainer)
    return {"vocab": vocab, "merges": merges, "steps": steps, "top": trainer.top_pairs(20)}


def test_full_training_matches_core(qtbot, window, reference):
    result = train_in_window(qtbot, window, DEMO_CORPUS, VOCAB)
    assert result is not None and not result.stopped
    assert result.merges == reference["merges"]
    assert result.vocab == reference["vocab"]

    # Merge list: one row per merge, rank / tokens / count as the trainer made them.
    model = window.merge_model
    assert model.rowCount() == len(reference["merges"]) == VOCAB - 257
    for row in (0, 1, 100, model.rowCount() - 1):
        step, expected = model.step_at(row), reference["steps"][row]
        assert step == expected
        assert model.data(model.index(row, 4)) == f"{expected.count:,}"
    # Vocabulary table: vocab_size rows, ids and bytes as the core's vocabulary.
    vocab_model = window.vocab_model
    assert vocab_model.rowCount() == VOCAB
    assert {
        vocab_model.token_at(r)[0]: vocab_model.token_at(r)[1]
        for r in range(vocab_model.rowCount())
    } == reference["vocab"]
    # Chart: the final top pairs the trainer reports, and one decay point per merge.
    assert window.chart.shown_pairs() == reference["top"]
    assert window.chart.shown_bar_counts() == [c for _, _, c in reference["top"]]
    ranks, counts = window.chart.curve_data()
    assert list(counts) == [max(s.count, 1) for s in reference["steps"]]
    assert list(ranks) == list(range(len(reference["steps"])))
    # Editor: spans equal to the core tokenizer's for the same text.
    spans = wait_for_spans(qtbot, window.editor)
    tok = Tokenizer(reference["vocab"], reference["merges"], [EOT])
    assert window.editor.text() == SAMPLE_TEXT
    assert spans.to_spans() == tok.spans(SAMPLE_TEXT)
    assert window.panel.status.text().startswith(f"Done: {VOCAB - 257:,} merges")
    assert window.panel.save_button.isEnabled() and window.panel.train_button.isEnabled()


def test_views_update_on_the_gui_thread(qtbot, window):
    seen: list[bool] = []
    main = threading.get_ident()

    def record(batch):
        seen.append(threading.get_ident() == main)

    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(600)
    window.start_training()
    window.session.merges_added.connect(record)
    with qtbot.waitSignal(window.session.finished, timeout=60_000):
        pass
    assert seen and all(seen)


def test_selecting_a_merge_selects_its_token(qtbot, window, reference):
    train_in_window(qtbot, window, DEMO_CORPUS, VOCAB)
    window.merge_list.select_rank(42)
    expected = reference["steps"][42].new_id
    assert window.merge_model.data(window.merge_model.index(42, 0), TOKEN_ID_ROLE) == expected
    assert window.vocab_table.selected_token_id() == expected


def test_pause_resume_and_stop_midway(qtbot, window, reference, tmp_path):
    full = train_bpe(DEMO_CORPUS, 10_000, [EOT])[1]
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(10_000)
    paused_at: list[int] = []

    def pause_early(batch):
        if not paused_at and batch[-1].rank >= 200:
            window.toggle_pause()
            paused_at.append(batch[-1].rank)

    window.start_training()
    session = window.session
    session.merges_added.connect(pause_early)
    qtbot.waitUntil(lambda: bool(paused_at), timeout=30_000)
    assert session.paused and window.panel.pause_button.text() == "Resume"
    qtbot.wait(150)  # let the worker reach its pause point and the buffer drain
    held = session.merges_done
    qtbot.wait(400)
    assert session.merges_done == held, "merges kept coming while paused"
    assert held < len(full)
    # The vocabulary table catches up with the merges while paused (it is fed 5 times a
    # second), and selecting a merge finds its token there.
    assert window.vocab_model.rowCount() == 257 + held
    window.merge_list.select_rank(held - 1)
    assert window.vocab_table.selected_token_id() == 257 + held - 1  # ids: bytes, EOT, merges

    # Resume, and pause again on the next batch: the handler runs while the worker waits for
    # the GUI to take the batch, so the pause lands before many more merges are made.
    repaused: list[int] = []

    def pause_again(batch):
        if not repaused and not session.paused:
            window.toggle_pause()
            repaused.append(batch[-1].rank)

    session.merges_added.connect(pause_again)
    window.toggle_pause()  # resume
    assert not session.paused
    qtbot.waitUntil(lambda: bool(repaused), timeout=30_000)
    assert session.paused and session.merges_done > held
    with qtbot.waitSignal(session.finished, timeout=30_000) as blocker:
        window.stop_training()
    result = blocker.args[0]
    assert result.stopped and 0 < len(result.merges) < len(full)
    assert result.merges == full[: len(result.merges)]
    assert window.merge_model.rowCount() == len(result.merges)
    assert "Stopped" in window.panel.status.text()

    # A stopped run saves the merges made so far, in GPT-2 format.
    assert window.save_tokenizer(tmp_path)
    saved = Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert saved.merges == result.merges


def test_closing_mid_training_stops_the_thread(qtbot, window):
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(10_000)
    window.start_training()
    qtbot.waitUntil(lambda: window.session.merges_done > 0, timeout=30_000)
    window.close()  # the autouse fixture then asserts no training thread is left
    assert not window.training or window.session.control.stopped


def test_train_again_resets_the_views(qtbot, window):
    train_in_window(qtbot, window, DEMO_CORPUS, 400)
    result = train_in_window(qtbot, window, DEMO_CORPUS, 300)
    assert window.merge_model.rowCount() == len(result.merges) == 300 - 257
    assert window.vocab_model.rowCount() == 300


def test_editor_retokenizes_while_training(qtbot, window, monkeypatch):
    import bpe_studio.gui.main_window as main_window

    monkeypatch.setattr(main_window, "EDITOR_REFRESH_SECONDS", 0.0)
    labels: list[str] = []
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(3000)
    window.start_training()
    window.session.merges_added.connect(
        lambda batch: labels.append(window.editor.source.label if window.editor.source else "")
    )
    with qtbot.waitSignal(window.session.finished, timeout=60_000):
        pass
    assert any("merges so far" in label for label in labels)
    assert "trained on" in window.editor.source.label


def test_vocabulary_sorts_by_count(qtbot, window):
    train_in_window(qtbot, window, DEMO_CORPUS, 600)
    view = window.vocab_table
    view.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
    proxy = view.proxy
    counts = [proxy.data(proxy.index(r, 4), SORT_ROLE) for r in range(proxy.rowCount())]
    assert counts == sorted(counts, reverse=True) and counts[0] > 0


def test_dropping_a_file_opens_it(qtbot, window, tmp_path):
    corpus = tmp_path / "dropped.txt"
    corpus.write_text("a b c\n", encoding="utf-8")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(corpus))])
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    assert window.corpus == corpus.resolve()
    assert window.panel.train_button.isEnabled()


def test_closing_right_after_train_is_clicked(qtbot, window):
    assert window.open_corpus(DEMO_CORPUS)
    window.start_training()
    window.close()  # before the thread has even started
    qtbot.wait(50)  # the deferred start must not start it after all
    from bpe_studio.gui.session import live_training_threads

    assert live_training_threads() == 0
