"""The vocabulary table: every token with its id, readable text, length, origin and count.

What it does: a filter box over a sortable table of
:class:`~bpe_studio.gui.models.VocabTableModel` through a
:class:`~bpe_studio.gui.models.VocabFilterProxy`. Rows arrive in id order; clicking a header
sorts (the proxy keeps new rows in order while training). The token selected in any view
(``StateHub.token_selected``) is selected and shown here, clearing a filter that hides it.
What it leaves out: the data (the model over the state).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..hub import StateHub
from ..models import VocabFilterProxy, VocabTableModel
from .common import configure_table, monospace_font, title_label


class VocabTableView(QWidget):
    def __init__(self, hub: StateHub, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model = VocabTableModel(hub, self)
        self.proxy = VocabFilterProxy(self)
        self.proxy.setSourceModel(model)

        self.title = title_label("Vocabulary", "Vocabulary  000,000 tokens · 000,000 shown")
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Filter: token or id (space = ␣)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._on_filter)

        self.table = QTableView(self)
        self.table.setModel(self.proxy)
        configure_table(self.table, monospace_font())
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        # Unsorted (id order) until the user clicks a header: no sorting work while training.
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSortingEnabled(True)
        metrics = self.table.fontMetrics()
        widths = {0: "000000", 1: "W" * 16, 2: "Bytes", 3: "special", 4: "0,000,000"}
        for col, sample in widths.items():
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(col, metrics.horizontalAdvance(sample) + 24)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)

        top = QHBoxLayout()
        top.setSpacing(8)
        top.addWidget(self.title)
        top.addWidget(self.filter_edit, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.table)

        for signal in (model.modelReset, self.proxy.layoutChanged):
            signal.connect(self._update_title)
        model.rowsInserted.connect(self._after_insert)
        hub.token_selected.connect(self.select_token)
        self._update_title()

    @Slot()
    def _after_insert(self, *args: object) -> None:
        # Lay the new rows out now rather than on Qt's zero timer, which would run after this
        # frame's repaint and cost a second repaint of the window.
        self.table.executeDelayedItemsLayout()
        self._update_title()

    @Slot()
    def _update_title(self, *args: object) -> None:
        total, shown = self.model.rowCount(), self.proxy.rowCount()
        extra = f" · {shown:,} shown" if self.proxy.filter_text else ""
        self.title.setText(
            f"Vocabulary  <span style='color:#6b7280'>{total:,} tokens{extra}</span>"
        )

    @Slot(str)
    def _on_filter(self, text: str) -> None:
        self.proxy.set_filter_text(text)
        self._update_title()

    @Slot(int)
    def select_token(self, token_id: int) -> bool:
        """Select the row of ``token_id`` and scroll to it; False if there is no such token."""
        row = self.model.row_of_id(token_id)
        if row is None:
            return False
        source = self.model.index(row, 0)
        index = self.proxy.mapFromSource(source)
        if not index.isValid():
            self.filter_edit.clear()
            index = self.proxy.mapFromSource(source)
        self.table.selectRow(index.row())
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    def selected_token_id(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        return self.model.token_at(self.proxy.mapToSource(rows[0]).row())[0]
