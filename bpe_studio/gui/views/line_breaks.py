"""Line breaks drawn as "↵": a text document paints nothing for a paragraph's end.

What it does: :data:`LINE_BREAK` finds the characters that end a paragraph of a
``QPlainTextEdit`` (``\\n``, ``\\r``, U+2029) or its line (U+2028, a line separator, which
has no glyph either); :func:`draw_line_break` paints a "↵" in a box
at the end of such a character's line. The editor marks a line break inside a token with it,
Compare a boundary that falls on a line break (drawn nowhere else: no glyph to underline).
What it leaves out: which line breaks, and their colours (the views).
"""

from __future__ import annotations

import regex
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

LINE_BREAK = regex.compile("[\n\r\u2028\u2029]")
GLYPH = "↵"


def draw_line_break(
    edit: QPlainTextEdit,
    painter: QPainter,
    unit: int,
    background: QColor,
    colour: QColor,
    font: QFont | None = None,
) -> None:
    """A "↵" in ``colour`` (and ``font``: the edit's own if None) on ``background``, where the
    line break at document position ``unit`` ends its line."""
    cursor = QTextCursor(edit.document())
    cursor.setPosition(unit)
    r = edit.cursorRect(cursor)
    box = QRect(r.left() + 1, r.top(), edit.fontMetrics().horizontalAdvance(GLYPH) + 2, r.height())
    painter.fillRect(box, background)
    painter.setFont(font if font is not None else edit.font())
    painter.setPen(colour)
    painter.drawText(box, Qt.AlignmentFlag.AlignCenter, GLYPH)
