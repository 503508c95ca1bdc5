"""Layout shapes several views repeat: a column of widgets and layouts, and two panes split
vertically.

What it leaves out: the widgets themselves, and any layout only one view uses.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLayout, QSplitter, QVBoxLayout, QWidget

# A widget or a layout, optionally with its stretch factor.
Item = QWidget | QLayout | tuple[QWidget | QLayout, int]


def column(
    parent: QWidget | None,
    *items: Item,
    margins: tuple[int, int, int, int] = (0, 0, 0, 0),
    spacing: int = 4,
) -> QVBoxLayout:
    """A vertical layout (``parent``'s own when given) holding ``items`` top to bottom."""
    layout = QVBoxLayout(parent) if parent is not None else QVBoxLayout()
    layout.setContentsMargins(*margins)
    layout.setSpacing(spacing)
    for item in items:
        thing, stretch = item if isinstance(item, tuple) else (item, 0)
        if isinstance(thing, QLayout):
            layout.addLayout(thing, stretch)
        else:
            layout.addWidget(thing, stretch)
    return layout


def vertical_split(
    upper: QWidget, lower: QWidget, stretch: tuple[int, int], sizes: tuple[int, int]
) -> QSplitter:
    """``upper`` over ``lower``, neither collapsible; ``stretch`` shares out growth and
    ``sizes`` are the starting heights."""
    split = QSplitter(Qt.Orientation.Vertical)
    split.addWidget(upper)
    split.addWidget(lower)
    split.setChildrenCollapsible(False)
    split.setStretchFactor(0, stretch[0])
    split.setStretchFactor(1, stretch[1])
    split.setSizes(list(sizes))
    return split
