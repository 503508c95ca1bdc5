"""No position the editor paints is computed against text it no longer holds (issue 23,
item 11): replacing the text, typing and training never make Qt warn
"QTextCursor::setPosition: Position 'N' out of range"."""

from __future__ import annotations

from gui_helpers import EOT, train_in_window, wait_for_spans
from PySide6.QtCore import Qt

from bpe_studio.gui.app import DEMO_CORPUS

LONG = "the cat sat on the mat\nand the dog sat on the log\n" * 60
SHORT = "the end"


def out_of_range(qtlog) -> list[str]:
    return [r.message for r in qtlog.records if "out of range" in r.message]


def select_the(qtbot, editor) -> None:
    """Click the first " the" of the text, so that its occurrences are outlined."""
    cursor = editor.edit.textCursor()
    cursor.setPosition(LONG.index(" the") + 2)
    rect = editor.edit.cursorRect(cursor)
    qtbot.mouseClick(editor.edit.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_replacing_the_text_paints_nothing_of_the_old_one(qtbot, window, qtlog):
    train_in_window(qtbot, window, DEMO_CORPUS, 400)
    editor = window.editor
    editor.set_text(LONG)
    wait_for_spans(qtbot, editor)
    select_the(qtbot, editor)
    editor.edit.paint_visible_tokens()
    assert editor.edit._outlines and editor.edit._markers  # positions far into LONG
    editor.set_text(SHORT)
    editor.edit.viewport().repaint()  # a paint before the new spans arrive
    assert out_of_range(qtlog) == []
    spans = wait_for_spans(qtbot, editor)
    assert spans.text == SHORT
    editor.edit.viewport().repaint()
    # Typing at the start moves what is painted after it; deleting drops what it held.
    editor.set_text(LONG)
    wait_for_spans(qtbot, editor)
    editor.edit.paint_visible_tokens()
    cursor = editor.edit.textCursor()
    cursor.setPosition(0)
    cursor.setPosition(len(LONG) - 5, cursor.MoveMode.KeepAnchor)
    cursor.removeSelectedText()
    editor.edit.viewport().repaint()
    assert out_of_range(qtlog) == []


def test_no_stale_position_while_training_and_replacing_the_text(qtbot, window, qtlog):
    editor = window.editor
    editor.set_text(LONG)
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(3000)
    window.panel.specials_edit.setText(EOT)
    assert window.start_training()
    session = window.controller.session
    texts = [SHORT, LONG, SHORT + "\n" * 3, LONG[: len(LONG) // 3]]
    ended: list[object] = []
    session.finished.connect(ended.append)
    i = 0
    while not ended:
        editor.set_text(texts[i % len(texts)])
        i += 1
        qtbot.wait(15)  # the spans of the last text (and steps) arrive meanwhile
        editor.edit.viewport().repaint()
    assert i > 3
    wait_for_spans(qtbot, editor)
    editor.edit.viewport().repaint()
    assert out_of_range(qtlog) == []
