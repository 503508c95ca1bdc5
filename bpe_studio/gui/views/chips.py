"""One step of the encoder, drawn: :class:`ChipStrip`.

What it does: the tokens of a pre-token as chips (readable token over its id), wrapped at the
widget's width; under each adjacent pair that has a merge, a badge with its rank, the lowest
one (merged next) in orange with its two chips; the token the previous step made in green;
special tokens in the editor's special colour.
What it leaves out: which step (``step_through``), the encoder (``core.explain.encode_steps``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from ...core.explain.encode_steps import EncodeStep
from ...core.text.display import readable_token
from .common import monospace_font, points
from .theme import colours


class ChipStrip(QWidget):
    """One step of the encoder, drawn: tokens as chips, ranks of candidate pairs beneath."""

    GAP, PAD, BADGE_H, LINK = 5.0, 7.0, 18.0, 7.0

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.token_font = monospace_font(12)
        self.token_font.setBold(True)
        self.small = QFont()
        self.small.setPointSizeF(points(8))
        self.tokens: tuple[int, ...] = ()
        self.texts: list[str] = []
        self.candidates: dict[int, int] = {}  # position -> rank
        self.chosen: int | None = None
        self.made: int | None = None  # position of the token the previous step made
        self.special_ids: frozenset[int] = frozenset()
        self._boxes: list[QRectF] = []

    def set_step(
        self,
        step: EncodeStep | None,
        made: int | None,
        tokens: Mapping[int, bytes],
        special_ids: frozenset[int],
    ) -> None:
        self.tokens = step.tokens if step else ()
        self.texts = [readable_token(tokens[i]) or "∅" for i in self.tokens]
        self.candidates = dict(step.candidates) if step else {}
        self.chosen = step.chosen if step else None
        self.made = made
        self.special_ids = special_ids
        self._layout()
        self.update()

    def chip_height(self) -> float:
        token, badge = QFontMetricsF(self.token_font), QFontMetricsF(self.small)
        return token.height() + badge.height() + 2 * self.PAD

    def row_height(self) -> float:
        """A row of chips with the badges beneath and the gaps around it."""
        return self.chip_height() + self.LINK + self.BADGE_H + 2 * self.GAP

    def _layout(self) -> None:
        """Chips left to right, wrapped at the widget's width; each row leaves room beneath
        for the badges. The pair merged next is kept on one row when it fits in one, so that
        a strip one row high can show it whole."""
        tm, sm = QFontMetricsF(self.token_font), QFontMetricsF(self.small)
        badge = max((sm.horizontalAdvance(f"{r:,}") for r in self.candidates.values()), default=0)
        # subtle: a chip is at least as wide as the widest badge, so that the badges centred
        # on the gaps either side of it never overlap.
        min_w = max(badge + 2 * self.PAD, 28.0)
        height = self.chip_height()
        row_h = self.row_height()
        # Room at each row's end for half a badge: a pair cut by the wrap hangs its badge there.
        limit = max(self.width(), 120) - min_w / 2
        widths = [max(tm.horizontalAdvance(text) + 2 * self.PAD, min_w) for text in self.texts]
        x, y = self.GAP, self.GAP
        self._boxes = []
        for i, w in enumerate(widths):
            need = w
            if i == self.chosen and i + 1 < len(widths):
                need = w + self.GAP + widths[i + 1]
            if x > self.GAP and x + need + self.GAP > limit:
                x, y = self.GAP, y + row_h
            self._boxes.append(QRectF(x, y, w, height))
            x += w + self.GAP
        bottom = (
            self._boxes[-1].bottom() + self.LINK + self.BADGE_H + self.GAP if self._boxes else 0
        )
        self.setMinimumHeight(int(bottom) + 1)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._layout()

    def chip_rect(self, position: int) -> QRectF:
        return self._boxes[position]

    def badge_rect(self, position: int) -> QRectF:
        """The rank badge of the pair at ``position`` (its chips ``position`` and the next);
        a pair cut by the wrap hangs it at the end of the first chip's row."""
        a, b = self._boxes[position], self._boxes[position + 1]
        if b.top() != a.top():
            b = a.translated(a.width() + self.GAP, 0)
        cx = (a.right() + b.left()) / 2
        w = QFontMetricsF(self.small).horizontalAdvance(f"{self.candidates[position]:,}") + 10
        return QRectF(cx - w / 2, a.bottom() + self.LINK, w, self.BADGE_H)

    def pair_rect(self, position: int) -> QRectF:
        """What shows the pair at ``position``: both chips and its badge, with the gap
        around them."""
        box = self._boxes[position].united(self._boxes[position + 1])
        box = box.united(self.badge_rect(position))
        return box.adjusted(-self.GAP, -self.GAP, self.GAP, self.GAP)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        tm = QFontMetricsF(self.token_font)
        chosen = {self.chosen, self.chosen + 1} if self.chosen is not None else set()
        c = colours()
        for i, (box, text) in enumerate(zip(self._boxes, self.texts)):
            if i in chosen:
                fill, border = c.chip_chosen
            elif i == self.made:
                fill, border = c.chip_made
            elif self.tokens[i] in self.special_ids:
                fill, border = c.chip_special
            else:
                fill, border = c.chip
            painter.setPen(QPen(QColor(border), 2.2 if i in chosen or i == self.made else 1.2))
            painter.setBrush(QColor(fill))
            painter.drawRoundedRect(box, 6, 6)
            painter.setPen(QColor(c.token_text))
            painter.setFont(self.token_font)
            top = QRectF(box.left(), box.top() + self.PAD / 2, box.width(), tm.height())
            painter.drawText(top, Qt.AlignmentFlag.AlignCenter, text)
            painter.setPen(QColor(c.muted))
            painter.setFont(self.small)
            low = QRectF(box.left(), top.bottom(), box.width(), box.bottom() - top.bottom())
            painter.drawText(low, Qt.AlignmentFlag.AlignCenter, f"{self.tokens[i]:,}")
        for pos, rank in self.candidates.items():
            a, b = self._boxes[pos], self._boxes[pos + 1]
            badge = self.badge_rect(pos)
            cx, text = badge.center().x(), f"{rank:,}"
            if b.top() != a.top():  # the pair wraps: its badge hangs at the row's end
                b = a.translated(a.width() + self.GAP, 0)
            is_chosen = pos == self.chosen
            colour = QColor(c.accent if is_chosen else c.edge)
            painter.setPen(QPen(colour, 1.4))
            # Whole pixels, as PySide6 draws a line given four numbers (truncated).
            badge_top = int(badge.top())
            painter.drawLine(int(a.center().x()), int(a.bottom()), int(cx), badge_top)
            painter.drawLine(int(b.center().x()), int(b.bottom()), int(cx), badge_top)
            painter.setBrush(colour if is_chosen else QColor(c.plot_background))
            painter.drawRoundedRect(badge, self.BADGE_H / 2, self.BADGE_H / 2)
            painter.setPen(QColor("#111827" if is_chosen else c.plot_text))
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, text)
        painter.end()
