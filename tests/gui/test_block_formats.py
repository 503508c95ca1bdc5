"""Token colours as the formats of the paragraphs' layouts: what is painted, and how it
follows edits until the next colours arrive (views/block_formats.py)."""

from __future__ import annotations

import pytest
from gui_helpers import shown, wait_for_spans
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.views.block_formats import BlockFormats
from bpe_studio.gui.views.token_editor import TokenEditor

TEXT = "hello world\nsecond line\nthird"


def _fmt(colour: str) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setBackground(QColor(colour))
    return fmt


RED, BLUE = _fmt("#ff0000"), _fmt("#0000ff")


def _words(text: str) -> list[tuple[int, int, QTextCharFormat]]:
    """Each word and each space or break as a range, colours alternating (break included:
    a range over a paragraph break is cut there)."""
    ranges, start = [], 0
    for i in range(1, len(text) + 1):
        if i == len(text) or (text[i] in " \n") != (text[i - 1] in " \n"):
            ranges.append((start, i, (RED, BLUE)[len(ranges) % 2]))
            start = i
    return ranges


def _strings(edit: QPlainTextEdit, formats: BlockFormats) -> list[str]:
    text = edit.toPlainText()
    return [text[p.start : p.end] for p in formats.painted()]


def _in_layouts(edit: QPlainTextEdit) -> list[tuple[int, int]]:
    """The ranges the paragraphs' layouts hold, as document positions."""
    out, block = [], edit.document().firstBlock()
    while block.isValid():
        start = block.position()
        out += [(start + r.start, start + r.start + r.length) for r in block.layout().formats()]
        block = block.next()
    return out


@pytest.fixture
def painted(qtbot):
    edit = shown(qtbot, QPlainTextEdit(), 500, 300)
    edit.setPlainText(TEXT)
    formats = BlockFormats(edit)
    formats.show(_words(TEXT))
    return edit, formats


def _type_at(edit: QPlainTextEdit, position: int, text: str) -> None:
    cursor = edit.textCursor()
    cursor.setPosition(position)
    cursor.insertText(text)


def test_ranges_are_the_layouts_formats_cut_at_breaks(painted):
    edit, formats = painted
    assert _strings(edit, formats) == ["hello", " ", "world", "second", " ", "line", "third"]
    assert _in_layouts(edit) == [(p.start, p.end) for p in formats.painted()]
    assert edit.extraSelections() == []


def test_typing_moves_the_ranges_after_it_and_drops_the_one_it_is_in(painted):
    edit, formats = painted
    _type_at(edit, 2, "XY")  # inside "hello"
    assert edit.toPlainText().startswith("heXYllo world\n")
    assert _strings(edit, formats) == [" ", "world", "second", " ", "line", "third"]
    assert _in_layouts(edit) == [(p.start, p.end) for p in formats.painted()]
    _type_at(edit, len("heXYllo world\nsecond"), "!")  # at a boundary: both neighbours kept
    assert _strings(edit, formats) == [" ", "world", "second", " ", "line", "third"]


def test_a_new_paragraph_and_a_merge(painted):
    edit, formats = painted
    _type_at(edit, len("hello"), "\n")  # the rest of the line leaves its paragraph
    assert _strings(edit, formats) == ["hello", "second", " ", "line", "third"]
    cursor = edit.textCursor()
    cursor.setPosition(len("hello\n world\nsecond li"))
    cursor.setPosition(len("hello\n world\nsecond line\nth"), QTextCursor.MoveMode.KeepAnchor)
    cursor.removeSelectedText()  # "third" merged into the line before, cut
    assert edit.toPlainText() == "hello\n world\nsecond liird"
    assert _strings(edit, formats) == ["hello", "second", " "]
    assert _in_layouts(edit) == [(p.start, p.end) for p in formats.painted()]


def test_new_text_clears_and_showing_again_replaces(painted):
    edit, formats = painted
    formats.show([(0, 5, BLUE)])
    assert _strings(edit, formats) == ["hello"] and _in_layouts(edit) == [(0, 5)]
    edit.setPlainText("other text")
    assert formats.painted() == [] and _in_layouts(edit) == []


def test_an_edit_after_painting_is_reported_as_that_edit(painted):
    # subtle: a layout's new formats were reported by the document together with the next
    # edit, as a change of the whole text.
    edit, _ = painted
    reports = []
    edit.document().contentsChange.connect(lambda *args: reports.append(args))
    _type_at(edit, 3, "Z")
    assert reports == [(3, 0, 1)]


def test_editor_keeps_crlf_and_its_colours_when_typed_into_after_painting(qtbot, gpt2_tokenizer):
    editor = shown(qtbot, TokenEditor(), 700, 400)
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    text = "one two\r\nthree four\r\nfive"
    editor.set_text(text)
    wait_for_spans(qtbot, editor)
    editor.edit.paint_visible_tokens()
    assert editor.edit.extraSelections() == []  # painted as the layouts' formats
    doc = editor.edit.toPlainText()  # a paragraph break is one position
    before = [doc[p.start : p.end] for p in editor.edit.painted()]
    assert before[:3] == ["one", " two", "three"]
    editor.edit.setFocus()
    cursor = editor.edit.textCursor()
    cursor.setPosition(0)
    editor.edit.setTextCursor(cursor)
    qtbot.keyClicks(editor.edit, "Z")
    assert editor.text() == "Z" + text  # the kept "\r\n" survive the edit
    # Until the new colours come, the old ones move with their text (an edit at a token's
    # edge keeps it).
    doc = editor.edit.toPlainText()
    assert [doc[p.start : p.end] for p in editor.edit.painted()] == before
    wait_for_spans(qtbot, editor)
    assert editor.spans.text == "Z" + text
