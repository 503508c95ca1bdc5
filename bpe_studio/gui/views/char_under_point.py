"""Which characters of a tokenized text view lie where on its viewport.

What it does: :func:`char_at` maps a viewport point of a ``QPlainTextEdit`` showing the text
of a :class:`~bpe_studio.core.explain.span_arrays.SpanArrays` to the code point offset there;
:func:`visible_units` gives the document positions on screen, however long the lines.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from ...core.explain.span_arrays import SpanArrays


def char_at(edit: QPlainTextEdit, spans: SpanArrays, pos: QPoint) -> int | None:
    """The code point offset under ``pos``, or None past the end of the text."""
    cursor = edit.cursorForPosition(pos)
    unit = cursor.position()
    # subtle: the cursor lands on the nearest gap between characters; a point left of that
    # gap lies on the character before it.
    if pos.x() < edit.cursorRect(cursor).x() and unit > 0:
        unit -= 1
    char = spans.from_utf16(unit)
    return char if 0 <= char < spans.text_length else None


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
