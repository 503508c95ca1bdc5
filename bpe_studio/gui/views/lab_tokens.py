"""The Vocabulary lab's token list: the tokens of one category, the never-used ones, the
under-trained candidates, the unreachable ones, those only one vocabulary holds.

What it does: :class:`LabTokenModel` shows a :class:`~..model.lab_lists.TokenRows` (row
indices into a token table, in order) as a table: id, the token as the app writes tokens,
category, byte length, leading space, reachable, the merge that made it, its count in the
corpus and whether the other vocabulary holds it (the last two when known). Cells are made
when shown; a header click sorts with one NumPy call over the rows (never Python comparisons
row by row, except the Token column's, which compares the tokens' bytes). :class:`LabTokenList`
puts a "Show" and a "Category" menu above it and says how many tokens are listed; clicking a
row emits ``token_clicked`` (whether it is the second tokenizer's, and the id).
What it leaves out: which rows (``model.lab_lists``), what a click opens (the page).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ...core.explain.categories import CATEGORIES, label
from ..model.lab_lists import SPECIAL, Show, TokenRows
from .common import configure_table, monospace_font, steady_label
from .lab_charts import MORE
from .table_models import token_tooltip
from .theme import colours, muted

Index = QModelIndex | QPersistentModelIndex
_DISPLAY = Qt.ItemDataRole.DisplayRole
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
ALL_CATEGORIES = "All categories"
Category = str | tuple[str, ...] | None  # one, several (a chart's bar of the rest), all

ID, TOKEN, CATEGORY, LENGTH, SPACE, REACH, MERGE, COUNT, HELD = range(9)
HEADERS = ("Id", "Token", "Category", "Bytes", "Space", "Reach", "Merge", "Count", "In other")
# Each column's width, in characters of the table's font: set once, never measured from the
# rows (that would ask Python for a thousand rows' cells). Category's holds
# "punctuation/symbols" and most scripts' names; longer ones are elided, whole in the tooltip.
WIDTHS = (8, 18, 19, 6, 6, 6, 8, 10, 12)
_PADDING = 12  # pixels each column adds to its characters
NUMERIC = frozenset({ID, LENGTH, MERGE, COUNT})


class LabTokenModel(QAbstractTableModel):
    """The rows of a :class:`TokenRows` (see the module docstring)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.listed: TokenRows | None = None
        self.order = np.zeros(0, dtype=np.int64)  # table rows, in the order shown
        self.other_name = "other"
        self.held_header = ""  # the "In <other>" header as it fits its column ("": whole)
        # The column sorted by (ID ... HELD, not a section: Count and "In other" come and
        # go, which moves the sections after them) and the order.
        self._sort: tuple[int, Qt.SortOrder] | None = None

    def set_rows(self, listed: TokenRows | None, other_name: str = "other") -> None:
        self.beginResetModel()
        self.listed, self.other_name = listed, other_name
        self.order = listed.rows if listed is not None else np.zeros(0, dtype=np.int64)
        self.endResetModel()
        section = self.sorted_section()
        if section >= 0 and self._sort is not None:
            self.sort(section, self._sort[1])

    def sorted_section(self) -> int:
        """The section of the column the rows are sorted by, -1 for none (or not shown)."""
        cols = self.columns()
        if self._sort is None or self._sort[0] not in cols or self.listed is None:
            return -1
        return cols.index(self._sort[0])

    def held_text(self) -> str:
        """The "In <other>" column's whole header."""
        return f"In {self.other_name}"

    def columns(self) -> list[int]:
        """The columns shown (count and holding only when known)."""
        cols = [ID, TOKEN, CATEGORY, LENGTH, SPACE, REACH, MERGE]
        listed = self.listed
        if listed is not None and listed.counts is not None:
            cols.append(COUNT)
        if listed is not None and listed.held is not None:
            cols.append(HELD)
        return cols

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt
        return 0 if parent.isValid() else len(self.order)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt
        return 0 if parent.isValid() else len(self.columns())

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:  # noqa: N802
        cols = self.columns()
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(cols):
            return None
        col = cols[section]
        if role == Qt.ItemDataRole.ToolTipRole and col == HELD:
            return self.held_text()
        if role == _DISPLAY:
            return (self.held_header or self.held_text()) if col == HELD else HEADERS[col]
        if role == Qt.ItemDataRole.TextAlignmentRole and col in NUMERIC:
            return _RIGHT
        return None

    def token_id(self, row: int) -> int:
        assert self.listed is not None
        return int(self.listed.table.ids[self.order[row]])

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        listed = self.listed
        if not index.isValid() or listed is None or index.row() >= len(self.order):
            return None
        t, r = listed.table, int(self.order[index.row()])
        col = self.columns()[index.column()]
        special = bool(t.special[r])
        if role == _DISPLAY:
            return self._text(listed, r, col, special)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in NUMERIC:
            return _RIGHT
        if role == Qt.ItemDataRole.ToolTipRole and col == TOKEN:
            return token_tooltip(t.tokens[r])
        if role == Qt.ItemDataRole.ToolTipRole and col == CATEGORY:
            return self._text(listed, r, col, special)  # a long script name, whole
        if role == Qt.ItemDataRole.ForegroundRole:
            if col == REACH and t.reachable is not None and not t.reachable[r]:
                return QColor(colours().unreachable)
            if col == CATEGORY and special:
                return QColor(colours().muted)
        return None

    def _text(self, listed: TokenRows, r: int, col: int, special: bool) -> str:
        t = listed.table
        if col == ID:
            return f"{int(t.ids[r]):,}"
        if col == TOKEN:
            return t.shown(r)
        if col == CATEGORY:
            return SPECIAL if special else label(CATEGORIES[t.category[r]])
        if col == LENGTH:
            return str(int(t.length[r]))
        if col == SPACE:
            return "␣" if t.leading_space[r] else ""
        if col == REACH:
            if t.reachable is None or special:
                return ""
            return "yes" if t.reachable[r] else "no"
        if col == MERGE:
            rank = -1 if t.rank is None else int(t.rank[r])
            return f"{rank:,}" if rank >= 0 else ""
        if col == COUNT:
            return f"{int(listed.counts[r]):,}" if listed.counts is not None else ""
        if col == HELD:
            return "yes" if listed.held is not None and listed.held[r] else ""
        return ""

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        listed = self.listed
        cols = self.columns()
        if listed is None or not 0 <= column < len(cols):
            return
        col = cols[column]
        self._sort = (col, order)
        t, rows = listed.table, listed.rows
        ids = t.ids[rows]
        if col == TOKEN:
            keys = np.empty(len(rows), dtype=object)
            keys[:] = [t.tokens[r] for r in rows.tolist()]
            key = np.argsort(keys, kind="stable")
        else:
            primary = {
                ID: ids,
                CATEGORY: np.where(t.special[rows], len(CATEGORIES), t.category[rows]),
                LENGTH: t.length[rows],
                SPACE: t.leading_space[rows],
                REACH: t.reachable[rows] if t.reachable is not None else ids * 0,
                MERGE: t.rank[rows] if t.rank is not None else ids * 0,
                COUNT: listed.counts[rows] if listed.counts is not None else ids * 0,
                HELD: listed.held[rows] if listed.held is not None else ids * 0,
            }[col]
            key = np.lexsort((ids, primary))
        if order == Qt.SortOrder.DescendingOrder:
            key = key[::-1]
        self.layoutAboutToBeChanged.emit()
        self.order = rows[key]
        self.layoutChanged.emit()


class LabTokenList(QWidget):
    """The "Show" and "Category" menus, the count, and the token table."""

    token_clicked = Signal(bool, int)  # the second tokenizer's?, token id
    choice_changed = Signal()  # the user chose another list or category

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.show_box = QComboBox()
        self.show_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.category_box = QComboBox()
        self.category_box.setMinimumContentsLength(14)
        self.count = steady_label(QLabel(" "), "0" * 24)
        muted(self.count)
        self.model = LabTokenModel(self)
        self.table = QTableView()
        self.table.setAccessibleName("Tokens listed")
        self.table.setModel(self.model)
        configure_table(self.table, monospace_font())
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # No sort at first (the rows' own order: by id, or by count for the used ones).
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSortIndicatorShown(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(False)
        # "In <the other tokenizer's name>" ends in "…" where the name is long (whole in its
        # tooltip), rather than clipped at both ends.
        self.table.horizontalHeader().setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.clicked.connect(self._on_clicked)
        self.table.activated.connect(self._on_clicked)
        # The keyboard's moves too (arrows, Page Down, Ctrl+End): the row selected is the
        # token explained, as a click makes it.
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row)
        top = QHBoxLayout()
        top.setSpacing(6)
        top.addWidget(QLabel("Show:"))
        top.addWidget(self.show_box, 1)
        top.addWidget(self.category_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.count)
        layout.addWidget(self.table, 1)
        self.show_box.activated.connect(lambda _i: self.choice_changed.emit())
        self.category_box.activated.connect(lambda _i: self.choice_changed.emit())

    # ------------------------------------------------------------ choices
    def set_shows(self, shows: list[tuple[Show, str]]) -> None:
        """The lists on offer (kept: the one chosen, where still offered)."""
        current = self.show()
        self.show_box.blockSignals(True)
        self.show_box.clear()
        for show, text in shows:
            self.show_box.addItem(text, show)
        index = self.show_box.findData(current)
        self.show_box.setCurrentIndex(max(index, 0))
        self.show_box.blockSignals(False)

    def show(self) -> Show:  # type: ignore[override]  # a choice, not QWidget.show
        data = self.show_box.currentData()
        return data if isinstance(data, Show) else Show.ALL

    def choose_show(self, show: Show) -> None:
        index = self.show_box.findData(show)
        if index >= 0:
            self.show_box.setCurrentIndex(index)
            self.choice_changed.emit()

    def set_categories(self, names: list[str]) -> None:
        """The categories on offer (kept: the one chosen, or the several chosen together)."""
        current = self.category()
        self.category_box.blockSignals(True)
        self.category_box.clear()
        self.category_box.addItem(ALL_CATEGORIES, None)
        for name in names:
            self.category_box.addItem(SPECIAL if name == SPECIAL else label(name), name)
        if isinstance(current, tuple):
            self._add_several(current)
        index = self.category_box.findData(current) if current is not None else 0
        self.category_box.setCurrentIndex(max(index, 0))
        self.category_box.blockSignals(False)

    def _add_several(self, names: tuple[str, ...]) -> int:
        """An entry for the categories ``names`` together (last); its index."""
        box = self.category_box
        box.addItem(f"{len(names)} {MORE}", names)
        box.setItemData(box.count() - 1, ", ".join(map(label, names)), Qt.ItemDataRole.ToolTipRole)
        return box.count() - 1

    def category(self) -> Category:
        data = self.category_box.currentData()
        return data if isinstance(data, (str, tuple)) else None

    def choose_category(self, name: Category) -> None:
        """List ``name``'s tokens (several: the tokens of each; None: all)."""
        index = self.category_box.findData(name) if name else 0
        if index < 0 and isinstance(name, tuple):
            for i in range(self.category_box.count() - 1, 0, -1):
                if isinstance(self.category_box.itemData(i), tuple):  # one such entry
                    self.category_box.removeItem(i)
            index = self._add_several(name)
        if index >= 0:
            self.category_box.setCurrentIndex(index)
            self.choice_changed.emit()

    # --------------------------------------------------------------- rows
    def set_rows(self, listed: TokenRows | None, text: str, other_name: str) -> None:
        model = self.model
        model.set_rows(listed, other_name)
        self.count.setText(text)
        width = self.table.fontMetrics().horizontalAdvance("0")
        header = self.table.horizontalHeader()
        for section, col in enumerate(model.columns()):
            size = WIDTHS[col] * width + _PADDING
            header.resizeSection(section, self._fit_held(size) if col == HELD else size)
        # The sort indicator on the column sorted by, wherever it is now (no sort asked).
        header.blockSignals(True)
        header.setSortIndicator(model.sorted_section(), header.sortIndicatorOrder())
        header.blockSignals(False)

    def _fit_held(self, size: int) -> int:
        """The "In <other>" column's ``size``, its header cut to it with "…" (the whole in
        its tooltip): the room the sort arrow and the margins leave, which Qt's own eliding
        overlooked (an audit: "n llama3-st…", cut at its start)."""
        header = self.table.horizontalHeader()
        style = header.style()
        room = 2 * style.pixelMetric(style.PixelMetric.PM_HeaderMargin, None, header)
        room += style.pixelMetric(style.PixelMetric.PM_HeaderMarkSize, None, header)
        text = self.model.held_text()
        fits = header.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, size - room)
        self.model.held_header = "" if fits == text else fits
        return size

    def full_width(self) -> int:
        """The width that shows every column whole, Count and "In other" included (they
        come with a corpus and a second tokenizer), with the scroll bar and the frame."""
        table = self.table
        columns = sum(WIDTHS) * table.fontMetrics().horizontalAdvance("0")
        bar = table.style().pixelMetric(table.style().PixelMetric.PM_ScrollBarExtent)
        return columns + len(WIDTHS) * _PADDING + bar + 2 * table.frameWidth() + 2

    @Slot(QModelIndex, QModelIndex)
    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and self.table.hasFocus():
            self._on_clicked(current)

    @Slot(QModelIndex)
    def _on_clicked(self, index: QModelIndex) -> None:
        listed = self.model.listed
        if index.isValid() and listed is not None:
            self.token_clicked.emit(listed.other, self.model.token_id(index.row()))
