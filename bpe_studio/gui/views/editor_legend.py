"""The key to the editor's marks, under it: what its colours, underlines and boxes mean.

What it does: :class:`EditorLegend` is one row of samples drawn as the editor draws them (the
scheme's colours, ``theme``) each with a word: a character split across tokens (pink,
underlined), a special token (green), the selected token's occurrences (an orange box) and a
line break inside a token (↵); tokens alternate two colours, which needs no key. Each
sample's tooltip says it in full.
What it leaves out: the marks themselves (``token_editor``).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QSizePolicy,
    QWidget,
)

from .common import monospace_font
from .theme import Colours, colours, muted, themed

# (sample, its style from the scheme's colours, caption, tooltip)
_CHIP = "padding: 0px 3px; border-radius: 2px;"
ENTRIES: tuple[tuple[str, Callable[[Colours], str], str, str], ...] = (
    (
        "中",
        lambda c: (
            f"background: {c.split[0]}; color: {c.token_text}; {_CHIP}"
            f"border-bottom: 2px dotted {c.split_underline};"
        ),
        "split character",
        "A character whose bytes are split across tokens (Chinese, emoji): the tokens "
        "sharing it are painted as one block; its tooltip lists each of them",
    ),
    (
        "<|s|>",
        lambda c: f"background: {c.special[0]}; color: {c.token_text}; {_CHIP}",
        "special",
        "A special token, never split or merged (adjacent ones alternate two greens)",
    ),
    (
        "tok",
        lambda c: f"border: 2px solid {c.accent}; {_CHIP}",
        "selected",
        "Every occurrence of the selected token (click a token here, in the vocabulary or "
        "in the merge list)",
    ),
    (
        "↵",
        lambda c: f"background: {c.tokens[0]}; color: {c.token_text}; {_CHIP}",
        "line break",
        "A line break inside a token, in that token's colour",
    ),
)


def _styler(style: Callable[[Colours], str]) -> Callable[[QLabel], None]:
    return lambda label: label.setStyleSheet(style(colours()))


class EditorLegend(QWidget):
    """One row: each mark of the editor drawn as it is there, and what it means; two rows of
    two where the row does not fit, so that the legend never holds the editor's column
    wider than half of it (at a large font it was the widest thing in the window)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(9)
        self._grid.setVerticalSpacing(2)
        # The widget's least width is minimumSizeHint's (two columns), not the one row's; its
        # height is its rows' (given more, the marks' backgrounds would stretch with it).
        self._grid.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        font = monospace_font()
        self.samples: list[QLabel] = []
        self.captions: list[QLabel] = []
        self._entries: list[QWidget] = []
        for sample, style, caption, tip in ENTRIES:
            entry = QWidget()
            row = QHBoxLayout(entry)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(3)
            chip = QLabel(sample)
            chip.setTextFormat(Qt.TextFormat.PlainText)  # "<|s|>" is no markup
            chip.setFont(font)
            chip.setToolTip(tip)
            themed(chip, _styler(style))
            row.addWidget(chip)
            self.samples.append(chip)
            words = muted(QLabel(caption))
            words.setToolTip(tip)
            row.addWidget(words)
            self.captions.append(words)
            self._entries.append(entry)
        self.columns = 0
        self._arrange(len(self._entries))

    def _arrange(self, columns: int) -> None:
        if columns == self.columns:
            return
        self.columns = columns
        for i, entry in enumerate(self._entries):
            self._grid.addWidget(entry, i // columns, i % columns)
        for c in range(len(self._entries) + 1):
            self._grid.setColumnStretch(c, 0)
        self._grid.setColumnStretch(columns, 1)  # the entries packed to the left

    def _width(self, columns: int) -> int:
        """The width ``columns`` entries a row take (the widest of each column)."""
        widths = [e.sizeHint().width() for e in self._entries]
        spacing = self._grid.horizontalSpacing()
        return sum(max(widths[c::columns]) + spacing for c in range(min(columns, len(widths))))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        # As narrow as two columns; as high as the rows it has now (two rows come with the
        # narrower width, and ask for their height then).
        return QSize(self._width(2), self.sizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        columns = self.columns or len(self._entries)
        rows = -(-len(self._entries) // columns)
        height = rows * max(e.sizeHint().height() for e in self._entries)
        return QSize(self._width(columns), height + (rows - 1) * self._grid.verticalSpacing())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        one_row = len(self._entries)
        columns = one_row if event.size().width() >= self._width(one_row) else 2
        if columns != self.columns:
            self._arrange(columns)
            self.updateGeometry()  # one row or two: the editor column lays out again

    def captions_text(self) -> list[str]:
        return [label.text() for label in self.captions]
