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
What it leaves out: which ranges and formats (the views).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from PySide6.QtCore import Slot
from PySide6.QtGui import QTextBlock, QTextCharFormat, QTextLayout
from PySide6.QtWidgets import QPlainTextEdit

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
        for start, _, ranges in held:
            # Setting a paragraph's formats lays it out again: the same ones are left alone.
            if before.pop(start, None) != ranges:
                _set(doc.findBlock(start), ranges)
        for start in before:
            block = doc.findBlock(start)
            if block.position() == start:
                _set(block, [])
        self._held = [h for h in held if h[2]]

    def clear(self) -> None:
        self.show([])

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
                _set(block, ranges)
            if ranges:
                held.append((start, block.length(), ranges))
        self._held = held


def _set(block: QTextBlock, ranges: _Ranges) -> None:
    if not block.isValid():
        return
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
