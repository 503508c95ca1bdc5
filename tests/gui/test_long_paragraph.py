"""A paragraph of many thousand characters (a one-line paste of minified code or a web dump):
its token colours are drawn over the lines on screen, never set as its layout's formats (which
has Qt lay the whole paragraph out again at every scroll and every new tokenizer), and drawn
where the tokens are (views/block_formats.py)."""

from __future__ import annotations

import pytest
from gui_helpers import FIXTURES, shown, wait_for_spans
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QPaintEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.views.block_formats import BlockFormats, draw_long_paragraphs
from bpe_studio.gui.views.char_under_point import visible_units
from bpe_studio.gui.views.long_paragraphs import LONG_PARAGRAPH, ready_for_long_paragraphs
from bpe_studio.gui.views.theme import colours
from bpe_studio.gui.views.token_editor import TokenEditor

LINE = "word " * (LONG_PARAGRAPH // 5 + 1_000)  # one paragraph, ASCII: offsets are units


def _fmt(colour: str) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setBackground(QColor(colour))
    return fmt


RED, BLUE = _fmt("#ff0000"), _fmt("#0000ff")


def _pixel_in(edit: QPlainTextEdit, unit: int) -> QColor:
    """The colour in the middle of the (blank) character at document position ``unit``."""
    cursor = QTextCursor(edit.document())
    cursor.setPosition(unit)
    box = edit.cursorRect(cursor)
    middle = QPoint(box.left() + edit.fontMetrics().horizontalAdvance(" ") // 2, box.center().y())
    return edit.viewport().grab().toImage().pixelColor(middle)


def _near(a: QColor, b: QColor) -> bool:
    return max(abs(a.red() - b.red()), abs(a.green() - b.green()), abs(a.blue() - b.blue())) < 30


def _spaces_on_screen(edit: QPlainTextEdit) -> list[tuple[int, int, QTextCharFormat]]:
    """Each space on screen as a range, red and blue in turn."""
    first, last = visible_units(edit)
    spaces = [i for i in range(first, min(last, len(LINE))) if LINE[i] == " "]
    return [(i, i + 1, (RED, BLUE)[k % 2]) for k, i in enumerate(spaces)]


class _Drawing(QPlainTextEdit):
    """A text box that draws what its ``BlockFormats`` draws, as the views do."""

    def __init__(self) -> None:
        super().__init__()
        self.formats = BlockFormats(self)
        ready_for_long_paragraphs(self)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        draw_long_paragraphs(self, self.formats)
        super().paintEvent(event)


@pytest.fixture
def long_edit(qtbot):
    edit = shown(qtbot, _Drawing(), 500, 300)
    edit.setPlainText(LINE)
    return edit, edit.formats


def test_a_long_paragraphs_ranges_are_drawn_where_they_are_not_set_in_its_layout(long_edit):
    edit, formats = long_edit
    bar = edit.verticalScrollBar()
    for value in (0, bar.maximum()):  # the top, then the end of the line
        bar.setValue(value)
        ranges = _spaces_on_screen(edit)
        formats.show(ranges)
        assert [(p.start, p.end) for p in formats.painted()] == [(a, b) for a, b, _ in ranges]
        assert edit.document().firstBlock().layout().formats() == []
        middle = len(ranges) // 2  # on a line in full view
        for a, _, fmt in ranges[middle : middle + 2]:
            seen = _pixel_in(edit, a)
            assert _near(seen, fmt.background().color()), (a, seen.name())
    assert edit.toPlainText() == LINE


def test_a_long_paragraph_keeps_its_glyphs_and_its_scroll_bar(long_edit):
    # A layout drops its shaped glyphs once laid out (each paint shaped the whole paragraph
    # again); and the vertical scroll bar, appearing after the text was laid out, narrowed
    # the viewport and had it laid out a second time.
    edit, _ = long_edit
    assert edit.document().firstBlock().layout().cacheEnabled()
    assert edit.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOn
    edit.setPlainText("short")
    assert edit.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAsNeeded


def test_a_paragraph_that_grows_long_by_typing_loses_its_layout_formats(long_edit):
    edit, formats = long_edit
    edit.setPlainText("a b c")
    formats.show([(1, 2, RED)])
    assert len(edit.document().firstBlock().layout().formats()) == 1
    cursor = edit.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    cursor.insertText(LINE)
    formats.show([(1, 2, RED)])
    assert edit.document().firstBlock().layout().formats() == []
    assert [(p.start, p.end) for p in formats.painted()] == [(1, 2)]


def test_the_editors_one_line_text_is_coloured_by_its_tokens_at_its_end(qtbot, gpt2_tokenizer):
    english = (FIXTURES / "english_books_slice.txt").read_text(encoding="utf-8")
    text = " ".join(english.split())[: 3 * LONG_PARAGRAPH]
    assert "\n" not in text and text.isascii()  # document positions are offsets
    editor = shown(qtbot, TokenEditor(), 700, 400)
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text(text)
    spans = wait_for_spans(qtbot, editor)
    edit = editor.edit
    bar = edit.verticalScrollBar()
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: edit.painted() and edit.painted()[-1].end == len(text))
    assert edit.text() == text
    assert edit.document().firstBlock().layout().formats() == []
    first, _ = edit.visible_range()
    tokens = [(int(a), int(b)) for a, b in zip(spans.starts, spans.ends, strict=True) if b > first]
    painted = [(p.start, p.end) for p in edit.painted()]
    assert painted == tokens[-len(painted) :] and len(painted) > 50
    # A token that begins with a space is painted in its own colour at that space.
    shades = {p.start: p.format.background().color() for p in edit.painted()}
    spaced = [a for a in shades if text[a] == " "][-3:]
    assert spaced
    for a in spaced:
        assert _near(_pixel_in(edit, a), shades[a]), a
    assert {c.name() for c in shades.values()} <= {QColor(c).name() for c in colours().tokens}
