"""Small pieces the views share: fonts, table defaults, section titles, the colour palette."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent
from PySide6.QtGui import QFont, QFontDatabase, QHelpEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableView,
    QToolTip,
)

# One palette for the whole app (light theme).
ACCENT = "#e8590c"  # the pair about to be merged; selection highlights
BAR = "#4c6ef5"
CURVE = "#364fc7"
MUTED = "#6b7280"
TOKEN_COLOURS = ("#d0e2ff", "#ffe3bf")  # alternate token backgrounds in the editor
SPLIT_COLOUR = "#ffc9de"  # tokens holding part of a multi-byte character
SPLIT_UNDERLINE = "#c2255c"
SPECIAL_COLOUR = "#c3f0ca"  # special tokens such as <|endoftext|>


def monospace_font(point_size: int | None = None) -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    if point_size is not None:
        font.setPointSize(point_size)
    return font


def title_label(text: str, longest: str | None = None) -> QLabel:
    """A section title; ``longest`` (for titles whose text changes) sizes it once for good."""
    label = QLabel(text)
    label.setObjectName("sectionTitle")
    if longest is not None:
        # Fixed at the width of its longest text: updates never move anything around it.
        label.setFixedWidth(label.fontMetrics().horizontalAdvance(longest) + 16)
    return label


def steady_label(label: QLabel, longest: str = "") -> QLabel:
    """A label whose changing text never re-lays out the window around it.

    subtle: by default a label asks its layout for room on every setText; for labels updated
    many times a second that cascades into relayouts and repaints of the whole window. This
    one keeps the width of ``longest`` (and whatever its layout gives it beyond that)."""
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
    width = label.fontMetrics().horizontalAdvance(longest) + 12 if longest else 40
    label.setMinimumWidth(width)
    return label


def configure_table(table: QTableView, font: QFont | None = None) -> None:
    """Defaults for the big, growing tables: fixed row heights (no per-row size queries),
    whole-row selection, no row numbers, alternating row colours."""
    if font is not None:
        table.setFont(font)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.verticalHeader().setVisible(False)
    rows = table.verticalHeader()
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(table.fontMetrics().height() + 8)
    table.horizontalHeader().setHighlightSections(False)
    table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)


def answer_token_tooltip(edit: Any, event: QEvent) -> bool:
    """For a text view's ``viewportEvent``: True when ``event`` asked for a tooltip, now shown
    as ``edit.tooltip_html(char)`` for the character ``edit.char_at(pos)`` under the pointer
    (or hidden where there is none)."""
    if event.type() != QEvent.Type.ToolTip or not isinstance(event, QHelpEvent):
        return False
    char = edit.char_at(event.pos())
    text = edit.tooltip_html(char) if char is not None else None
    if text:
        QToolTip.showText(event.globalPos(), text, edit.viewport())
    else:
        QToolTip.hideText()
        event.ignore()
    return True
