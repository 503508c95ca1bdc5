"""Line breaks drawn as "↵": a text document paints nothing for a paragraph's end.

What it does: :data:`LINE_BREAK` finds the characters that end a paragraph of a
``QPlainTextEdit`` (``\\n``, ``\\r``, U+2029) or its line (U+2028, a line separator, which
has no glyph either); :func:`draw_line_break` paints a "↵" in a box at the end of such a
character's line (:func:`line_break_box`: right of its glyphs). The editor marks a line break
inside a token with it, Compare a boundary that falls on a line break (drawn nowhere else: no
glyph to underline).
What it leaves out: which line breaks, and their colours (the views).
"""

from __future__ import annotations

import regex
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

LINE_BREAK = regex.compile("[\n\r\u2028\u2029]")
GLYPH = "↵"


def line_break_box(edit: QPlainTextEdit, unit: int) -> QRect:
    """The box of the "↵" of the line break at document position ``unit``: at the end of its
    line, right of the line's glyphs."""
    cursor = QTextCursor(edit.document())
    cursor.setPosition(unit)
    r = edit.cursorRect(cursor)
    left = r.left()
    # subtle: in a line holding right-to-left text (Arabic, Hebrew) the break's cursor
    # position lies among the glyphs, and the "↵" there hid a letter or two; right of them
    # all it hides none, where a left-to-right line's break is anyway.
    block = cursor.block()
    layout = block.layout()
    at = cursor.positionInBlock()
    line = layout.lineForTextPosition(at)
    if line.isValid() and at > line.textStart():
        runs = line.glyphRuns(line.textStart(), at - line.textStart())
        if runs:
            origin = edit.blockBoundingGeometry(block).translated(edit.contentOffset()).left()
            right = max(g.boundingRect().right() for g in runs)
            left = max(left, round(origin + layout.position().x() + right))
    return QRect(left + 1, r.top(), edit.fontMetrics().horizontalAdvance(GLYPH) + 2, r.height())


def draw_line_break(
    edit: QPlainTextEdit,
    painter: QPainter,
    unit: int,
    background: QColor,
    colour: QColor,
    font: QFont | None = None,
) -> None:
    """A "↵" in ``colour`` (and ``font``: the edit's own if None) on ``background``, where the
    line break at document position ``unit`` ends its line (:func:`line_break_box`)."""
    box = line_break_box(edit, unit)
    painter.fillRect(box, background)
    painter.setFont(font if font is not None else edit.font())
    painter.setPen(colour)
    painter.drawText(box, Qt.AlignmentFlag.AlignCenter, GLYPH)
