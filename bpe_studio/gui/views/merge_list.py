"""The merge list: every merge in order, following the newest one while training.

What it does: a table over :class:`~.table_models.MergeTableModel` (rank, left, right, merged
token, pair count at merge time). When rows arrive and the view was scrolled to the
bottom, it scrolls to the new bottom; once the user scrolls up it stays put until they scroll
back down. Clicking a merge (or moving to it with the keys) selects the token it made, for every
view (``AppModel.select_token``); double-clicking it shows the step after that merge everywhere
(``AppModel.select_step``). When the timeline shows step k, merge k (row k - 1) is selected and
scrolled to, and the merges after it are greyed (the model). A merge the user picks while a
replay plays pauses it (``AppModel.pause_replay``): its next frame would select the step's
row instead and scroll the pick away.
What it leaves out: the data (``table_models``, over the state).
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QModelIndex, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..model.app_model import AppModel
from .common import configure_table, lay_out_rows_now, monospace_font, steady_label, title_label
from .table_models import TOKEN_ID_ROLE, MergeTableModel
from .theme import colours, notifier


class MergeListView(QWidget):
    def __init__(self, hub: AppModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.model = model = MergeTableModel(hub, self)
        self.title = steady_label(title_label("Merges"), "Merges  000,000")
        self.table = QTableView(self)
        self.table.setAccessibleName("Merges")
        self.table.setModel(model)
        configure_table(self.table, monospace_font())
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        # Each column fits its widest usual cell (longer tokens are cut, the tooltip has them),
        # so that all five fit the width the window gives the list at 1280 pixels.
        widths = {0: "000,000", 1: "W" * 8, 2: "W" * 8, 3: "W" * 11, 4: "0,000,000"}
        metrics = self.table.fontMetrics()
        for col, sample in widths.items():
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(col, metrics.horizontalAdvance(sample) + 16)
        header.setStretchLastSection(True)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.table)

        self._follow = True
        model.rowsAboutToBeInserted.connect(self._before_insert)
        model.rowsInserted.connect(self._after_insert)
        model.modelReset.connect(self._after_reset)
        self._programmatic = False  # selecting the step's merge must not select its token
        self._step_row: int | None = None  # the row the step selected, if it is selected
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        # Enter, or a double click (Fusion's activation), moves the timeline to that merge.
        self.table.activated.connect(self._on_activated)
        hub.step_changed.connect(self._on_step)
        hub.phase_changed.connect(self._on_phase)
        notifier().changed.connect(self._update_title)
        self._update_title()

    @property
    def following(self) -> bool:
        """Whether new merges scroll into view (the view was at the bottom)."""
        return self._follow

    def _at_bottom(self) -> bool:
        bar = self.table.verticalScrollBar()
        return bar.value() >= bar.maximum() - 1

    @Slot(QModelIndex, int, int)
    def _before_insert(self, parent: QModelIndex, first: int, last: int) -> None:
        self._follow = self._at_bottom()

    @Slot(QModelIndex, int, int)
    def _after_insert(self, parent: QModelIndex, first: int, last: int) -> None:
        # Lay the new rows out now rather than on Qt's zero timer, which would run after this
        # frame's repaint and cost a second repaint of the window.
        lay_out_rows_now(self.table)
        if self._follow:
            self.table.scrollToBottom()
        self._update_title()

    @Slot()
    def _after_reset(self) -> None:
        self._follow = True
        self._step_row = None
        self.table.scrollToTop()
        self._update_title()
        # The step's row, as a step change selects it: a tokenizer loaded at the step the
        # one before was at sends no step change (the same files twice; train, save, load).
        self._select_step_now()

    @Slot(object)
    def _on_phase(self, phase: object) -> None:
        self._select_step_now()  # a run that ends live: its last merge, as a replay's end

    def _select_step_now(self) -> None:
        state = self.hub.state
        if state.step > 0 and not state.phase.training and self.model.rowCount() >= state.step:
            self._on_step(state.step)

    def _update_title(self) -> None:
        n = self.model.rowCount()
        self.title.setText(f"Merges  <span style='color:{colours().muted}'>{n:,}</span>")

    @Slot(QItemSelection, QItemSelection)
    def _on_selection(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        if self._programmatic:
            return
        self.hub.pause_replay()
        rows = self.table.selectionModel().selectedRows()
        if rows:
            token_id = self.model.data(rows[0], TOKEN_ID_ROLE)
            if token_id is not None:
                self.hub.select_token(int(token_id))

    @Slot(QModelIndex)
    def _on_activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.hub.select_step(index.row() + 1)  # merges 0..row applied

    @Slot(int)
    def _on_step(self, step: int) -> None:
        """Select merge ``step`` (row ``step - 1``), the last one applied; greys the rest.
        Back to live (Skip, Live), the step's row is selected too, unless the user selected
        a row of their own since; while a live run trains, no row is the step's (the list
        follows the newest merge at the bottom)."""
        self.table.viewport().update()
        state = self.hub.state
        if state.live and self.selected_rank() not in (None, self._step_row):
            return  # a row the user picked stays selected
        self._programmatic = True
        try:
            if step <= 0 or (state.live and state.phase.training):
                if self._step_row is not None:
                    self.table.clearSelection()
                    self._step_row = None
                if step <= 0 and not (state.live and state.phase.training):
                    # No merge applied: the first, the one every other view says is next, in
                    # sight (a scale audit: the list stayed where the step before left it).
                    self.table.scrollToTop()
            else:
                self.table.selectRow(step - 1)
                self._step_row = step - 1
                self.table.scrollTo(
                    self.model.index(step - 1, 0), QAbstractItemView.ScrollHint.EnsureVisible
                )
        finally:
            self._programmatic = False

    def selected_rank(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def select_rank(self, rank: int) -> None:
        """Select the merge of ``rank`` and scroll to it."""
        index = self.model.index(rank, 0)
        if index.isValid():
            self.table.selectRow(rank)
            self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
