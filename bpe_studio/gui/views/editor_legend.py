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

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

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
    """One row: each mark of the editor drawn as it is there, and what it means."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(3)
        font = monospace_font()
        self.samples: list[QLabel] = []
        self.captions: list[QLabel] = []
        for sample, style, caption, tip in ENTRIES:
            chip = QLabel(sample)
            chip.setTextFormat(Qt.TextFormat.PlainText)  # "<|s|>" is no markup
            chip.setFont(font)
            chip.setToolTip(tip)
            themed(chip, _styler(style))
            row.addWidget(chip)
            self.samples.append(chip)
            if caption:
                words = muted(QLabel(caption))
                words.setToolTip(tip)
                row.addWidget(words)
                row.addSpacing(6)
                self.captions.append(words)
        row.addStretch(1)

    def captions_text(self) -> list[str]:
        return [label.text() for label in self.captions]
