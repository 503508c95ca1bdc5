"""Whose token is selected, and what a discarded or replaced run leaves on screen (issue 23,
items 1, 5, 9 and 10).

Ids are checked against tokenizers built here (``Tokenizer.preset``, ``train_bpe``), never
against what the views computed.
"""

from __future__ import annotations

from gui_helpers import EOT, FIXTURES, save_and_wait, train_in_window, wait_for_spans
from PySide6.QtCore import Qt

from bpe_studio.core import Tokenizer
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.curves import HELD_OUT, IN_SAMPLE
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.views.picker import RUN, preset_key

TEXT = "the cat and the dog and the bird\nsat on the mat\n"


def click_char(qtbot, editor, char: int) -> None:
    """Click the editor's text at character ``char`` (inside a token, not at its edge)."""
    cursor = editor.edit.textCursor()
    cursor.setPosition(char)
    rect = editor.edit.cursorRect(cursor)
    qtbot.mouseClick(editor.edit.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def wait_for_source(qtbot, window) -> None:
    """Until the editor's spans are those of the tokenizer it shows now."""
    editor = window.editor
    qtbot.waitUntil(
        lambda: (
            editor.spans is not None
            and not editor.busy
            and editor.spans.tokenizer is editor.source.at(editor.step)
        ),
        timeout=30_000,
    )


def test_a_token_of_a_picked_tokenizer_marks_no_row_of_the_run(qtbot, window):
    run = train_in_window(qtbot, window, DEMO_CORPUS, 1000)
    assert run is not None and len(run.merges) == 1000 - 257
    window.editor.set_text(TEXT)
    window.picker.pick(preset_key("gpt2"))
    qtbot.waitUntil(lambda: window.state.picked is not None, timeout=30_000)
    wait_for_source(qtbot, window)
    gpt2 = Tokenizer.preset("gpt2")
    and_id = gpt2.encode(" and")[0]
    # The run's vocabulary holds a token with that id too: another token altogether.
    assert and_id in run.vocab and run.vocab[and_id] != b" and"
    window.vocab_table.table.clearSelection()
    click_char(qtbot, window.editor, TEXT.index(" and") + 2)
    assert window.vocab_table.selected_token_id() is None  # no row of the run is marked
    state = window.state
    assert state.selected_token == and_id and state.selected_in is state.picked
    # The editor outlines it (its own tokenizer's token) and the panel names the tokenizer.
    assert window.editor.outlined == and_id
    why = window.inspector.why
    qtbot.waitUntil(lambda: why.explanation is not None and not why.busy, timeout=30_000)
    assert why.explanation.token_id == and_id and why.explanation.tree is not None
    assert why.explanation.tree.token == b" and"
    assert "GPT-2" in why.heading.text() and "not the run's" in why.heading.text()
    # Back on the run's tokenizer, the editor outlines nothing of GPT-2's; on GPT-2 again
    # (the same tokenizer, picked anew), it does.
    window.picker.pick(RUN)
    assert window.editor.outlined is None
    window.picker.pick(preset_key("gpt2"))
    assert window.editor.outlined == and_id
    window.picker.pick(RUN)
    wait_for_source(qtbot, window)
    # A token clicked in the run's own tokenizer marks its row.
    spans = wait_for_spans(qtbot, window.editor)
    run_tok = Tokenizer(run.vocab, run.merges, [EOT])
    assert [int(i) for i in spans.ids] == run_tok.encode(TEXT)
    click_char(qtbot, window.editor, TEXT.index(" dog") + 2)
    held = spans.covering(TEXT.index(" dog") + 2)
    token_id = int(spans.ids[held[0]])
    assert window.state.selected_in is None
    assert window.vocab_table.selected_token_id() == token_id
    assert window.editor.outlined == token_id


def test_a_new_run_clears_the_outlines_of_the_token_selected_before(qtbot, window):
    train_in_window(qtbot, window, DEMO_CORPUS, 600)
    window.editor.set_text(TEXT)
    wait_for_source(qtbot, window)
    click_char(qtbot, window.editor, TEXT.index(" cat") + 2)
    token_id = window.state.selected_token
    assert token_id is not None and window.editor.edit._highlight == token_id
    window.editor.edit.paint_visible_tokens()
    assert window.editor.edit._outlines
    window.ask = lambda title, question: True
    train_in_window(qtbot, window, DEMO_CORPUS, 700)
    assert window.inspector.why.token_id is None  # cleared by the new run...
    assert window.editor.edit._highlight is None  # ...and so are the editor's outlines
    wait_for_source(qtbot, window)
    window.editor.edit.paint_visible_tokens()
    assert window.editor.edit._outlines == []


def test_a_discarded_run_is_gone_from_every_view(qtbot, window, tmp_path):
    asked: list[str] = []

    def ask(title: str, question: str) -> bool:
        asked.append(title)
        return True

    window.ask = ask
    train_in_window(qtbot, window, DEMO_CORPUS, 600)
    window.timeline.select_step(100)
    window.editor.set_text(TEXT)
    wait_for_source(qtbot, window)
    assert window.timeline.replay_button.isEnabled()
    other = tmp_path / "other.txt"
    other.write_text("a different corpus\n", encoding="utf-8")
    assert window.open_corpus(other)
    assert asked == ["Discard the trained tokenizer?"]
    state = window.state
    assert state.phase is Phase.IDLE and state.corpus == other.resolve()
    assert state.record == [] and state.result is None and state.shown is None
    assert window.merge_list.model.rowCount() == 0
    assert window.vocab_table.model.rowCount() == 0
    assert window.chart.curve_data()[0].size == 0
    assert window.chart.cursor_step() is None
    assert "step" not in window.chart.decay_plot.titleLabel.text.lower()
    assert not window.timeline.replay_button.isEnabled()
    assert window.timeline.slider.maximum() == 0
    assert window.editor.source_label.text() == ""
    assert window.editor.spans is None and window.editor.tokenizer is None
    assert window.ids_panel.ids.size == 0
    assert window.curve.showing_hint
    assert not window.panel.save_button.isEnabled()
    assert window.panel.status.text() == "Ready to train on other.txt"


def test_a_loaded_tiktoken_file_replaces_every_view_of_the_run(qtbot, window, tmp_path):
    train_in_window(qtbot, window, DEMO_CORPUS, 600)
    window.timeline.select_step(100)
    assert "100" in window.chart.decay_plot.titleLabel.text
    assert window.chart.cursor_step() == 100
    assert save_and_wait(qtbot, window, tmp_path, "tiktoken")
    rank_file = next(tmp_path.glob("*.tiktoken"))
    qtbot.waitUntil(
        lambda: all(
            line.xData is not None and len(line.xData) > 0
            for name, line in window.curve.lines.items()
            if name in (IN_SAMPLE, HELD_OUT)
        ),
        timeout=60_000,
    )
    # What every view shows the moment the loaded tokenizer replaces the run.
    seen: dict[str, object] = {}

    def on_reset() -> None:
        if window.state.phase is Phase.LOADED:
            seen["curves"] = [
                0 if line.xData is None else len(line.xData) for line in window.curve.lines.values()
            ]
            seen["decay title"] = window.chart.decay_plot.titleLabel.text
            seen["cursor"] = window.chart.cursor_step()

    window.hub.reset.connect(on_reset)
    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000) as blocker:
        assert window.load_tokenizer(rank_file)
    assert blocker.args == [True]
    assert seen["curves"] == [0] * len(window.curve.lines)  # the run's curves are gone
    assert "step" not in str(seen["decay title"]).lower() and seen["cursor"] is None
    note = window.chart.phase_note()
    assert rank_file.name in note and "tiktoken" in note
    assert "vocab.json" not in note and "merges.txt" not in note
    assert window.chart._note.isVisible()  # the count-vs-rank plot says why it is empty


def test_the_pair_chart_names_gpt2_files_as_gpt2_files(qtbot, window):
    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000) as blocker:
        assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
    assert blocker.args == [True]
    note = window.chart.phase_note()
    assert note.startswith("gpt2_vocab.json and gpt2_merges.txt (GPT-2 files)")


def test_a_clicked_vocabulary_row_selects_its_token_everywhere(qtbot, window):
    """README: "Select a token anywhere (click it in the editor, a vocabulary row, a merge
    row)". A row clicked (or reached with the arrow keys) in the Vocabulary table is the token
    "Why this token" explains; a token selected elsewhere selects its row without being sent
    back to the hub (no loop, one event per selection)."""
    run = train_in_window(qtbot, window, DEMO_CORPUS, 600)
    view, hub = window.vocab_table, window.hub
    table = view.table
    qtbot.waitUntil(lambda: view.proxy.rowCount() == 600, timeout=30_000)
    heard: list[int] = []
    hub.token_selected.connect(heard.append)
    index = view.proxy.index(300, 1)
    table.scrollTo(index)
    qtbot.mouseClick(
        table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(index).center()
    )
    token_id = view.selected_token_id()
    assert token_id is not None and token_id in run.vocab
    assert window.state.selected_token == token_id and window.state.selected_in is None
    assert heard == [token_id]
    why = window.inspector.why
    qtbot.waitUntil(lambda: why.explanation is not None and not why.busy, timeout=30_000)
    assert why.explanation.token_id == token_id
    # The arrow key moves to the next row: its token is selected.
    qtbot.keyClick(table, Qt.Key.Key_Down)
    below = view.selected_token_id()
    assert below is not None and below != token_id
    assert window.state.selected_token == below and heard == [token_id, below]
    # Selected elsewhere (as a merge row or the editor does): the row follows, once.
    heard.clear()
    hub.select_token(token_id)
    assert view.selected_token_id() == token_id
    assert heard == [token_id]
