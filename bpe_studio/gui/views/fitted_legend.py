"""A legend under a plot that wraps to a few lines at most and is cut with "…" beyond them.

What it does: :class:`FittedLegend` shows entries (a coloured mark and plain text) as word-wrapped
rich text; when they need more than its ``lines`` at its width, it shows what fits, ends
with "…", and gives the whole legend as its tooltip. Its height so stays within those lines
whatever the column's width: a long legend never takes the plot's room.
What it leaves out: what the entries say (the plot's).
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QResizeEvent, QTextDocument, QTextOption
from PySide6.QtWidgets import QLabel, QWidget

GAP = " \u00a0 "  # between entries; the no-break space keeps the gap when lines wrap
Piece = tuple[str, str | None]  # plain text, its colour (None: the label's own)


def pieces_html(pieces: list[Piece], chars: int | None = None) -> str:
    """``pieces`` as rich text; with ``chars``, only that many characters of them and "…"."""
    out: list[str] = []
    left = chars
    for text, colour in pieces:
        if left is not None:
            text, left = text[:left], max(0, left - len(text))
        escaped = html.escape(text)
        out.append(f"<span style='color:{colour}'>{escaped}</span>" if colour else escaped)
        if left == 0:
            break
    cut = "".join(out)
    return cut if chars is None else cut.rstrip() + "…"


class FittedLegend(QLabel):
    def __init__(self, lines: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lines = lines
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self._pieces: list[Piece] = []
        self.full_html = ""

    def set_entries(self, entries: list[list[Piece]]) -> None:
        """One entry per item, each a list of pieces; shown with a gap between entries."""
        pieces: list[Piece] = []
        for entry in entries:
            if pieces:
                pieces.append((GAP, None))
            pieces.extend(entry)
        self._pieces = pieces
        self.full_html = pieces_html(pieces)
        self._fit()

    def _lines_of(self, rich: str, width: int) -> int:
        doc = QTextDocument()
        doc.setDefaultFont(self.font())
        doc.setDocumentMargin(0)
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WordWrap)
        doc.setDefaultTextOption(option)
        doc.setHtml(rich)
        doc.setTextWidth(width)
        doc.documentLayout().documentSize()  # lays the text out
        block, count = doc.begin(), 0
        while block.isValid():
            count += block.layout().lineCount()
            block = block.next()
        return count

    def _fit(self) -> None:
        width = self.contentsRect().width()
        shown = self.full_html
        if width > 0 and self._lines_of(shown, width) > self.lines:
            # The most characters whose cut text still fits (fewer always fit as well).
            low, high = 0, sum(len(text) for text, _ in self._pieces)
            while low < high:
                middle = (low + high + 1) // 2
                if self._lines_of(pieces_html(self._pieces, middle), width) <= self.lines:
                    low = middle
                else:
                    high = middle - 1
            shown = pieces_html(self._pieces, low)
        self.setToolTip(self.full_html if shown != self.full_html else "")
        self.setText(shown)
        if width > 0:
            # subtle: a wrapped label's least height is one line's, and splitters and layouts
            # read only least heights: squeezed, the column drew its wrapped lines over the
            # plot above. Its least height is the lines it shows.
            self.setMinimumHeight(max(0, self.heightForWidth(self.width())))  # (-1: no text)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit()
