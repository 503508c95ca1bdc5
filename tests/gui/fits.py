"""Whether a window's text fits: labels, buttons and boxes neither cut nor overlapping.

:func:`cut_texts` names every visible widget of a window whose text does not fit the room it
was given: a button, check box or combo box narrower than it asks to be (it would cut its own
text: "pen corpus"), a label narrower than its text; a label that cuts its text on purpose
(``SteadyLabel``, ``CorpusLabel``: "…" and the whole in the tooltip) fits when its cut text
does. :func:`overlapping` names visible siblings whose rectangles overlap.
"""

from __future__ import annotations

import html
import re

from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QLabel,
    QWidget,
)

from bpe_studio.gui.views.common import SteadyLabel
from bpe_studio.gui.views.corpus_label import CorpusLabel


def _plain(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", text))


def _name(widget: QWidget) -> str:
    text = ""
    if isinstance(widget, QAbstractButton | QLabel):
        text = widget.text()
    elif isinstance(widget, QComboBox):
        text = widget.currentText()
    return f"{type(widget).__name__}({_plain(text)[:40]!r}) {widget.width()}px"


def shown(widget: QWidget, root: QWidget) -> bool:
    """Visible on screen: shown, with every ancestor up to ``root`` shown."""
    return widget.isVisibleTo(root) and widget.isVisible() and widget.width() > 0


def cut_texts(root: QWidget) -> list[str]:
    """Every visible widget under ``root`` whose text is cut by the room it has."""
    cut: list[str] = []
    for widget in root.findChildren(QWidget):
        if not shown(widget, root):
            continue
        if isinstance(widget, QAbstractButton | QComboBox):
            if widget.width() < widget.minimumSizeHint().width():
                cut.append(_name(widget))
            elif isinstance(widget, QAbstractButton) and widget.width() < widget.sizeHint().width():
                cut.append(_name(widget))
        elif isinstance(widget, CorpusLabel):
            needed = widget.fontMetrics().horizontalAdvance(widget.shown_plain)
            if needed > widget.width() and widget.width() > 0:
                cut.append(_name(widget))
        elif isinstance(widget, QLabel):
            parent = widget.parentWidget()
            if isinstance(parent, SteadyLabel):
                label = widget
                if label.wordWrap():
                    if label.heightForWidth(label.width()) > label.height() + 1:
                        cut.append(_name(widget))
                    continue
                advance = label.fontMetrics().horizontalAdvance(_plain(label.text()))
                if advance > label.width():
                    cut.append(_name(widget))
                continue
            if widget.wordWrap() or not widget.text():
                continue
            if widget.width() < widget.sizeHint().width() - 1:
                cut.append(_name(widget))
    return cut


def overlapping(root: QWidget) -> list[str]:
    """Pairs of visible sibling widgets with text whose rectangles overlap."""
    pairs: list[str] = []
    for parent in [root, *root.findChildren(QWidget)]:
        kids = [
            w
            for w in parent.findChildren(QWidget, options=_direct())
            if shown(w, root) and isinstance(w, QLabel | QAbstractButton | QComboBox)
        ]
        for i, a in enumerate(kids):
            for b in kids[i + 1 :]:
                if a.geometry().intersects(b.geometry()):
                    pairs.append(f"{_name(a)} and {_name(b)}")
    return pairs


def _direct():
    from PySide6.QtCore import Qt

    return Qt.FindChildOption.FindDirectChildrenOnly
