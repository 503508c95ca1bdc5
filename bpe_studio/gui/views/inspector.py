"""The inspector beside the editor: "Why this token" and "Step-through" as tabs.

What it does: builds both panels around one :class:`~..model.tokenizer_cache.TokenizerCache`, so
the tokenizer one of them built is there for the other, and shuts their job threads down.
What it leaves out: the panels themselves (``why_token``, ``step_through``).
"""

from __future__ import annotations

from PySide6.QtWidgets import QSizePolicy, QTabWidget, QWidget

from ..model.app_model import AppModel
from ..model.tokenizer_recipes import inspector_cache
from .step_through import StepThroughPanel
from .why_token import WhyTokenPanel


class InspectorPanel(QTabWidget):
    """The two inspector panels as tabs, sharing one tokenizer cache (a hidden panel catches
    up when its tab is shown: see their ``showEvent``)."""

    def __init__(self, hub: AppModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)
        self.cache = inspector_cache()
        self.why = WhyTokenPanel(hub, self.cache)
        self.step_through = StepThroughPanel(hub, self.cache)
        self.addTab(self.why, "Why this token")
        self.addTab(self.step_through, "Step-through")
        self.currentChanged.connect(self._sized_by_current)
        self._sized_by_current(self.currentIndex())

    def _sized_by_current(self, current: int) -> None:
        # The tabs' least size is the shown panel's alone: a tab widget's is its tallest
        # panel's, so once the Step-through had been shown the row above stayed squeezed
        # for the rest of the session.
        for index, page in enumerate((self.why, self.step_through)):
            shown = QSizePolicy.Policy.Preferred if index == current else QSizePolicy.Policy.Ignored
            page.setSizePolicy(shown, shown)

    def shutdown(self) -> None:
        self.why.shutdown()
        self.step_through.shutdown()
