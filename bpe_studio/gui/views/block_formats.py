"""Token colours painted into the text layout of the paragraphs on screen.

What it does: :class:`BlockFormats` gives a ``QPlainTextEdit`` ranges of document positions,
each with a character format, and sets them as the layouts' own formats (what a syntax
highlighter sets), paragraph by paragraph; the ranges follow the edits until the next ones
arrive, and :meth:`BlockFormats.painted` lists what is painted now.

Why not ``ExtraSelections``: Qt draws each extra selection by drawing every line of its
paragraph on screen again, clipped to it, so the cost grows with the selections in one
paragraph times its lines. A screenful of ~900 tokens in one paragraph took 100-200 ms a
paint, three paints a keystroke; as formats of the layout they are drawn with the text in
2-4 ms, and setting them lays that paragraph out again once (15 ms for 100,000 characters).

A paragraph longer than :data:`~.long_paragraphs.LONG_PARAGRAPH` (a one-line megabyte of
minified code or a web dump) is the exception: setting its layout's formats has Qt shape and
lay out the whole paragraph again (most of a second for 1 MB), at every scroll and every new
tokenizer. Its ranges are drawn instead (:func:`draw_long_paragraphs`, first thing in the
edit's ``paintEvent``, so under the text): each range's background on the lines on screen, and
its underline (a wave or a line); the text keeps the edit's own colour and weight, and the
layout is never touched.
What it leaves out: which ranges and formats (the views).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from PySide6.QtCore import QPointF, QRectF, Slot
from PySide6.QtGui import (
    QPainter,
    QPainterPath,
    QPen,
    QTextBlock,
    QTextCharFormat,
    QTextLayout,
    QTextLine,
)
from PySide6.QtWidgets import QPlainTextEdit

from .long_paragraphs import LONG_PARAGRAPH

# A paragraph's ranges: (offset in the paragraph, length, format).
_Ranges = list[tuple[int, int, QTextCharFormat]]


class PaintedRange(NamedTuple):
    """A range of document positions (UTF-16 units) painted with ``format``."""

    start: int
    end: int
    format: QTextCharFormat


class BlockFormats:
    """The formats ``edit``'s paragraphs are painted with (see the module docstring)."""

    def __init__(self, edit: QPlainTextEdit) -> None:
        self._edit = edit
        # Each paragraph painted: its position and length (its break included) when painted
        # or as edits since moved them, and its ranges.
        self._held: list[tuple[int, int, _Ranges]] = []
        edit.document().contentsChange.connect(self._on_contents_change)

    def show(self, ranges: Iterable[tuple[int, int, QTextCharFormat]]) -> None:
        """Paint ``ranges`` (document positions, ascending, not overlapping) and nothing
        else. A range over a paragraph break is cut there (the break itself has no glyph)."""
        doc = self._edit.document()
        held: list[tuple[int, int, _Ranges]] = []
        block = QTextBlock()
        start = end = 0
        for a, b, fmt in ranges:
            while a < b:
                if not block.isValid() or not start <= a < end:
                    block = doc.findBlock(a)
                    if not block.isValid():
                        break
                    start, end = block.position(), block.position() + block.length()
                    held.append((start, end - start, []))
                stop = min(b, end - 1)
                if stop > a:
                    held[-1][2].append((a - start, stop - a, fmt))
                a = b if b < end else end
        before = {start: ranges for start, _, ranges in self._held}
        drawn = False
        for start, _, ranges in held:
            # Setting a paragraph's formats lays it out again: the same ones are left alone.
            if before.pop(start, None) != ranges:
                drawn |= _set(doc.findBlock(start), ranges)
        for start in before:
            block = doc.findBlock(start)
            if block.position() == start:
                drawn |= _set(block, [])
        self._held = [h for h in held if h[2]]
        if drawn:
            self._edit.viewport().update()

    def clear(self) -> None:
        self.show([])

    def drawn(self) -> bool:
        """Whether some of the ranges are drawn (their paragraph is long), not formats."""
        return any(length > LONG_PARAGRAPH for _, length, ranges in self._held)

    def draw(self, painter: QPainter) -> None:
        """Draw the ranges of the long paragraphs on screen: backgrounds, then underlines
        (``painter`` on the edit's viewport, before the text is drawn over them)."""
        edit = self._edit
        doc, offset = edit.document(), edit.contentOffset()
        height = edit.viewport().height()
        for start, length, ranges in self._held:
            if length <= LONG_PARAGRAPH:
                continue
            block = doc.findBlock(start)
            if not block.isValid() or block.position() != start:
                continue
            top = edit.blockBoundingGeometry(block).translated(offset).topLeft()
            layout = block.layout()
            origin = top + layout.position()
            lines = _LineWalk(layout)
            for a, n, fmt in ranges:
                for x0, x1, line in lines.pieces(a, a + n):
                    y = origin.y() + line.y()
                    if y > height or y + line.height() < 0:
                        continue
                    box = QRectF(origin.x() + x0, y, x1 - x0, line.height())
                    painter.fillRect(box, fmt.background())
                    _underline(painter, fmt, box, y + line.ascent())

    def painted(self) -> list[PaintedRange]:
        """What is painted now, ascending."""
        return [
            PaintedRange(start + offset, start + offset + length, fmt)
            for start, _, ranges in self._held
            for offset, length, fmt in ranges
        ]

    @Slot(int, int, int)
    def _on_contents_change(self, position: int, removed: int, added: int) -> None:
        # A layout's formats stay where they were in its paragraph, whatever was typed: here
        # the ranges of the paragraph edited move with its text, and those the edit touched
        # are dropped (until the views paint again); a paragraph after it moves whole. One
        # whose beginning was removed, or that was merged into the one before, is dropped.
        if not self._held:
            return
        doc = self._edit.document()
        delta, cut = added - removed, position + removed
        held: list[tuple[int, int, _Ranges]] = []
        for start, length, ranges in self._held:
            edited = start <= position < start + length
            if not edited and start >= position:
                if start < cut or (start == cut and removed):
                    continue
                start += delta
            block = doc.findBlock(start)
            if not block.isValid() or block.position() != start:
                continue
            if edited:
                q, room = position - start, block.length() - 1
                moved = [
                    (s if s + n <= q else s + delta, n, f)
                    for s, n, f in ranges
                    if s + n <= q or s >= q + removed
                ]
                ranges = [(s, n, f) for s, n, f in moved if s + n <= room]
                if _set(block, ranges):
                    self._edit.viewport().update()
            if ranges:
                held.append((start, block.length(), ranges))
        self._held = held


def draw_long_paragraphs(edit: QPlainTextEdit, formats: BlockFormats) -> None:
    """What ``formats`` draws rather than sets, on ``edit``'s viewport: called first in its
    ``paintEvent``, so that the text is drawn over it."""
    if formats.drawn():
        painter = QPainter(edit.viewport())
        formats.draw(painter)
        painter.end()


def _set(block: QTextBlock, ranges: _Ranges) -> bool:
    """Set ``ranges`` as ``block``'s formats; or, for a long paragraph, leave them to
    :meth:`BlockFormats.draw` (True: the viewport must be repainted)."""
    if not block.isValid():
        return False
    if block.length() > LONG_PARAGRAPH:
        # subtle: a paragraph that grew long by typing may still hold formats set when it was
        # short; they go (one more layout), or they would show under the drawn ones forever.
        if block.layout().formats():
            _set_formats(block, [])
        return True
    _set_formats(block, ranges)
    return False


def _set_formats(block: QTextBlock, ranges: _Ranges) -> None:
    formats = []
    for offset, length, fmt in ranges:
        r = QTextLayout.FormatRange()
        r.start, r.length, r.format = offset, length, fmt
        formats.append(r)
    block.layout().setFormats(formats)
    # subtle: setFormats only notes the paragraph as changed, and the document reports that
    # with the next edit: typing one character after painting was reported as a change of
    # the whole text, which dropped every kept line break and range. Marking it dirty here
    # has it laid out now, as a syntax highlighter does (inside an edit's report, the note
    # is dropped when the report ends).
    block.document().markContentsDirty(block.position(), block.length())


class _LineWalk:
    """The lines of a laid-out paragraph, walked forward through ascending ranges (a
    layout's own ``lineForTextPosition`` goes through every line from the first)."""

    def __init__(self, layout: QTextLayout) -> None:
        self._layout = layout
        self._count = layout.lineCount()
        self._at = -1

    def _line_of(self, position: int) -> int:
        """The index of the line holding ``position`` (the last one past the end)."""
        layout, at = self._layout, self._at
        if at < 0 or layout.lineAt(at).textStart() > position:
            lo, hi = 0, self._count - 1  # bisect for the first range; walk for the rest
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if layout.lineAt(mid).textStart() <= position:
                    lo = mid
                else:
                    hi = mid - 1
            at = lo
        while at + 1 < self._count and layout.lineAt(at + 1).textStart() <= position:
            at += 1
        self._at = at
        return at

    def pieces(self, a: int, b: int) -> list[tuple[float, float, QTextLine]]:
        """``[a, b)`` (offsets in the paragraph) line by line: (left x, right x, line)."""
        if self._count == 0 or b <= a:
            return []
        first, last = self._line_of(a), self._line_of(b - 1)
        out = []
        for k in range(first, last + 1):
            line = self._layout.lineAt(k)
            lo = max(a, line.textStart())
            hi = min(b, line.textStart() + line.textLength())
            x0, x1 = _x(line, lo), _x(line, hi)
            out.append((min(x0, x1), max(x0, x1), line))
        self._at = last
        return out


def _x(line: QTextLine, position: int) -> float:
    x: object = line.cursorToX(position)
    # PySide6 gives (x, position) back: the C++ call takes the position by reference.
    return float(x[0] if isinstance(x, tuple) else x)  # type: ignore[arg-type]


def _underline(painter: QPainter, fmt: QTextCharFormat, box: QRectF, baseline: float) -> None:
    """``fmt``'s underline under ``box``: a wave (split characters) or a line (a mark)."""
    style = fmt.underlineStyle()
    if style == QTextCharFormat.UnderlineStyle.NoUnderline:
        return
    pen = QPen(fmt.underlineColor())
    pen.setWidthF(1.0)
    painter.setPen(pen)
    y = min(baseline + 2.5, box.bottom() - 1.5)
    if style != QTextCharFormat.UnderlineStyle.WaveUnderline:
        painter.drawLine(QPointF(box.left(), y), QPointF(box.right(), y))
        return
    path = QPainterPath(QPointF(box.left(), y))
    x, up = box.left(), True
    while x < box.right():
        x = min(x + 2.0, box.right())
        path.lineTo(QPointF(x, y - 1.5 if up else y + 1.0))
        up = not up
    painter.strokePath(path, pen)
