"""The corpus's name in the training panel, and what it is, in whatever room the panel has.

What it does: :class:`CorpusLabel` shows a name in bold and a detail after it in the
secondary colour ("tinystories.txt · 2.2 MB · /data/stories", "2 files · text · 4.4 MB ·
a.txt, b.txt"); where the room runs out, the detail is cut in its middle with "…" (the start
and the end of a path say the most), then the name, never the window widened; the tooltip
holds all of it (every file of a corpus of several). Names may hold markup ("<b>x.txt"): they
are escaped and show as typed.
What it leaves out: what the corpus is (``controls`` says).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from .theme import colours, themed

SEPARATOR = " · "


class CorpusLabel(QLabel):
    """A bold name and a muted detail, cut to fit, whole in the tooltip."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # The panel gives it what is left of its row; its text is cut to that, never wider.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(120)
        self._name = ""
        self._detail = ""
        themed(self, CorpusLabel._render)

    def show_corpus(self, name: str, detail: str, tip: str) -> None:
        """``name`` in bold, then `` · detail``; ``tip`` (plain text, lines) as the tooltip."""
        self._name, self._detail = name, detail
        self.setToolTip("<p style='white-space:pre'>" + html.escape(tip) + "</p>" if tip else "")
        self._render()

    @property
    def shown_plain(self) -> str:
        """The text as shown (cut where it had to be), without markup."""
        name, detail = self._fitted()
        return name + (SEPARATOR + detail if name and detail else detail)

    def _fitted(self) -> tuple[str, str]:
        room = self.width() - 2 * self.margin() - 6
        bold = QFont(self.font())
        bold.setBold(True)
        name_metrics, metrics = QFontMetrics(bold), self.fontMetrics()
        name, detail = self._name, self._detail
        if room <= 0:
            return name, detail
        elide = Qt.TextElideMode
        if name_metrics.horizontalAdvance(name) > room:
            return name_metrics.elidedText(name, elide.ElideRight, room), ""
        rest = room - name_metrics.horizontalAdvance(name)
        if name:
            rest -= metrics.horizontalAdvance(SEPARATOR)
        if metrics.horizontalAdvance(detail) > rest:
            detail = metrics.elidedText(detail, elide.ElideMiddle, max(rest, 0))
        return name, detail

    def _render(self) -> None:
        name, detail = self._fitted()
        muted = colours().muted
        parts = []
        if name:
            parts.append(f"<b>{html.escape(name)}</b>")
        if detail:
            lead = SEPARATOR if name else ""
            parts.append(f"<span style='color:{muted}'>{html.escape(lead + detail)}</span>")
        self.setText("".join(parts))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._render()
