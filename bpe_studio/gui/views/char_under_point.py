"""Which characters of a tokenized text view lie where on its viewport.

What it does: :func:`char_at` maps a viewport point of a ``QPlainTextEdit`` showing the text
of a :class:`~bpe_studio.core.explain.span_arrays.SpanArrays` to the code point offset there;
:func:`glyph_boxes` gives the rectangles a range of the text takes on screen, right to left
too; :func:`visible_units` gives the document positions on screen, however long the lines.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QTextCursor, QTextLayout, QTextLine
from PySide6.QtWidgets import QPlainTextEdit

from ...core.explain.span_arrays import SpanArrays
from .line_breaks import line_break_box


def _line_at(layout: QTextLayout, y: float) -> QTextLine | None:
    """The line of ``layout`` at height ``y`` (the layout's own coordinates), by bisection:
    a megabyte on one line is thousands of lines."""
    lo, hi = 0, layout.lineCount()
    while lo < hi:
        mid = (lo + hi) // 2
        if layout.lineAt(mid).rect().bottom() <= y:
            lo = mid + 1
        else:
            hi = mid
    return layout.lineAt(lo) if lo < layout.lineCount() else None


def _glyphs_right(line: QTextLine) -> float:
    """Where the glyphs of ``line`` end on the right (its layout's coordinates)."""
    return max((g.boundingRect().right() for g in line.glyphRuns()), default=0.0)


def char_at(edit: QPlainTextEdit, spans: SpanArrays, pos: QPoint) -> int | None:
    """The code point offset under ``pos``, or None past the end of the text."""
    cursor = edit.cursorForPosition(pos)
    unit = cursor.position()
    block = cursor.block()
    layout = block.layout()
    origin = edit.blockBoundingGeometry(block).translated(edit.contentOffset()).topLeft()
    origin += layout.position()
    line = _line_at(layout, pos.y() - origin.y())
    if line is not None:
        # subtle: the character whose glyph is under the point, not the one after the
        # nearest gap between characters (cursorForPosition's): in right-to-left text (Arabic,
        # Hebrew) the gap nearer a glyph's left half is after it, and every tooltip and click
        # there was of its neighbour. The line is the one at the point's height: at a wrap,
        # the gap's position is the next line's start too.
        x = pos.x() - origin.x()
        at = line.xToCursor(x, QTextLine.CursorPosition.CursorOnCharacter)
        if line.lineNumber() == layout.lineCount() - 1 and x > _glyphs_right(line):
            # Right of a paragraph's last glyph is its break, whose "↵" is drawn there
            # (line_break_box), right to left too, where the line's start lies at the right.
            at = block.length() - 1
        unit = block.position() + at
    char = spans.from_utf16(unit)
    return char if 0 <= char < spans.text_length else None


def glyph_boxes(edit: QPlainTextEdit, start: int, end: int) -> list[QRect]:
    """Viewport rectangles around the glyphs of document positions ``[start, end)``: one for
    each stretch they make on a line, line by line. subtle: not the box between the cursor
    positions of its two ends, which in right-to-left text (Arabic, Hebrew) lies over other
    glyphs: bidi puts the letters of one range apart, a space before a Hebrew word at the
    left of its run and the word at the right. A paragraph's end has no glyph: its place
    gets a narrow box, where the editor draws a line break's "↵"."""
    boxes: list[QRect] = []
    offset = edit.contentOffset()
    block = edit.document().findBlock(start)
    while block.isValid() and block.position() < end:
        layout = block.layout()
        origin = edit.blockBoundingGeometry(block).translated(offset).topLeft()
        origin += layout.position()
        a = max(start - block.position(), 0)
        b = min(end - block.position(), block.length() - 1)
        n = layout.lineForTextPosition(a).lineNumber() if layout.lineCount() else 0
        while a < b and 0 <= n < layout.lineCount():
            line = layout.lineAt(n)
            if line.textStart() >= b:
                break
            first = max(a, line.textStart())
            runs = line.glyphRuns(first, min(b, line.textStart() + line.textLength()) - first)
            top, height = round(origin.y() + line.y()), round(line.height())
            stretches: list[list[float]] = []
            for left, right in sorted(
                (r.boundingRect().left(), r.boundingRect().right()) for r in runs
            ):
                if stretches and left <= stretches[-1][1] + 1:
                    stretches[-1][1] = max(stretches[-1][1], right)
                else:
                    stretches.append([left, right])
            for left, right in stretches:
                x = round(origin.x() + left)
                boxes.append(QRect(x, top, max(round(origin.x() + right) - x, 3), height))
            n += 1
        if end - block.position() >= block.length():  # the paragraph's end is in the range
            boxes.append(line_break_box(edit, block.position() + block.length() - 1))
        block = block.next()
    return boxes


def visible_units(edit: QPlainTextEdit) -> tuple[int, int]:
    """Document positions (UTF-16 units) of the first visible character and just past the
    last (its line's break included), however long the lines: one paragraph may be a
    megabyte, of which only a screenful is painted."""
    viewport = edit.viewport()
    first = edit.cursorForPosition(QPoint(0, 0))
    first.movePosition(QTextCursor.MoveOperation.StartOfLine)
    last = edit.cursorForPosition(QPoint(viewport.width() - 1, viewport.height() - 1))
    last.movePosition(QTextCursor.MoveOperation.EndOfLine)
    return first.position(), last.position() + 1
