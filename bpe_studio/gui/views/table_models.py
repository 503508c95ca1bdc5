"""Table models over the state's rows, grown in batches while training.

What it does: :class:`MergeTableModel` shows one row per merge (rank, left, right, merged token,
pair count at merge time); :class:`VocabTableModel` one row per token (id, token, byte length,
the merge that made it, its count, whether encoding can produce it). Both read
``AppModel.state`` (they keep no copy of the run), grow with one ``beginInsertRows`` per
published frame and render token bytes with :func:`~bpe_studio.core.text.display.readable_token`
only when a cell is shown, so a batch of merges costs the GUI thread almost nothing until it is
scrolled into view. Both answer all the roles of a cell in one ``multiData`` call, grey the
rows made after the step every view shows (``state.step``) and write numbers as "50,256".
:class:`VocabFilterProxy` shows the vocabulary's rows in an order given as an index array
(``vocab_index``), so sorting and filtering 200,000 rows never compares rows in Python. Counts
are unknown (``None``, shown "—") for a tokenizer loaded from files.
What it leaves out: views and selection behaviour (``views/``), the arithmetic of the order
(``vocab_index``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

import numpy as np
from PySide6.QtCore import (
    QAbstractProxyModel,
    QAbstractTableModel,
    QModelIndex,
    QModelRoleDataSpan,
    QPersistentModelIndex,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QColor

from ...core import MergeStep
from ...core.text.display import readable_token
from ..model.app_model import AppModel
from ..model.state import MergeRow, VocabRow, vocab_rows
from ..model.vocab_index import COL_REACH, ViewSpec, VocabIndex
from .common import COPY_ROLE, merged_text, token_text
from .theme import Colours, colours

SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # raw value to sort by (int or readable text)
TOKEN_ID_ROLE = Qt.ItemDataRole.UserRole + 2  # the token id a row stands for

_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
_DISPLAY = Qt.ItemDataRole.DisplayRole
_NO_COUNT = "—"
_STEP_MARK = "▸ "  # the merge list's row of the step shown
# The scheme's colours as QColor objects, made once per scheme (``data`` asks for them for
# every visible cell): rows made after the step shown, unreachable tokens.
_FOREGROUNDS: list[tuple[Colours, QColor, QColor]] = []


def _foregrounds() -> tuple[QColor, QColor]:
    c = colours()
    if not _FOREGROUNDS or _FOREGROUNDS[0][0] is not c:
        _FOREGROUNDS[:] = [(c, QColor(c.later), QColor(c.unreachable))]
    return _FOREGROUNDS[0][1], _FOREGROUNDS[0][2]


Index = QModelIndex | QPersistentModelIndex


def token_tooltip(token: bytes) -> str:
    """``readable  (n bytes: xx xx ...)`` for a tooltip."""
    hexes = " ".join(f"{b:02x}" for b in token[:32]) + (" …" if len(token) > 32 else "")
    return f"{token_text(token)}   ({len(token):,} byte{'s' if len(token) != 1 else ''}: {hexes})"


class _Table(QAbstractTableModel):
    """Shared plumbing: a header tuple, numeric columns right-aligned, rows in a list."""

    HEADERS: tuple[str, ...] = ()
    NUMERIC: frozenset[int] = frozenset()

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.HEADERS):
            if role == _DISPLAY:
                return self.HEADERS[section]
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return int(_RIGHT if section in self.NUMERIC else _LEFT)
        return None

    # PySide6's stubs type the span as QModelRoleDataSpan | QModelRoleData (Qt passes a span)
    # and leave out the span's __iter__, which it has at run time.
    def multiData(  # type: ignore[override]  # noqa: N802
        self,
        index: Index,
        roleDataSpan: QModelRoleDataSpan,  # noqa: N803
    ) -> None:
        # subtle: views ask for ~7 roles per cell; answering them in one call means one entry
        # into Python per cell instead of seven (each entry may wait for the GIL while the
        # trainer runs: docs/responsiveness.md), and the row is looked up once for all.
        r = index.row() if index.isValid() else -1
        item = self._item(r)
        if item is None:
            for role_data in roleDataSpan:  # type: ignore[attr-defined]  # see multiData
                role_data.clearData()
            return
        col, value_of = index.column(), self._value
        for role_data in roleDataSpan:  # type: ignore[attr-defined]  # see multiData
            value = value_of(item, r, col, role_data.role())
            if value is None:
                role_data.clearData()
            else:
                role_data.setData(value)

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        r = index.row() if index.isValid() else -1
        item = self._item(r)
        return None if item is None else self._value(item, r, index.column(), role)

    def _item(self, r: int) -> Any:
        """Row ``r``'s record; None when there is no such row (``r`` -1: an invalid index)."""
        raise NotImplementedError

    def _value(self, item: Any, r: int, col: int, role: int) -> Any:
        """What cell ``(r, col)`` of ``item`` shows for ``role`` (None: nothing)."""
        raise NotImplementedError


class MergeTableModel(_Table):
    """One row per merge of ``hub.state.merge_rows``, oldest first: rank, left, right, merged
    token, count at merge time ("—" when unknown).

    It holds no rows of its own: it reads the state's list and keeps only how many rows it has
    announced, growing with one ``beginInsertRows`` per published frame.
    """

    HEADERS = ("Rank", "Left", "Right", "Merged", "Count")
    NUMERIC = frozenset({0, 4})

    def __init__(self, hub: AppModel, parent: Any = None) -> None:
        super().__init__(parent)
        self._hub = hub
        self._n = hub.published
        hub.reset.connect(self._on_reset)
        hub.merges_added.connect(self._on_added)

    @property
    def _rows(self) -> Sequence[MergeStep | MergeRow]:
        return self._hub.state.merge_rows

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008,N802
        return 0 if parent.isValid() else self._n

    @Slot()
    def _on_reset(self) -> None:
        self.beginResetModel()
        self._n = self._hub.published
        self.endResetModel()

    @Slot(int, int)
    def _on_added(self, first: int, last: int) -> None:
        self.beginInsertRows(QModelIndex(), first, last)
        self._n = last + 1
        self.endInsertRows()

    def step_at(self, row: int) -> MergeStep | MergeRow:
        return self._rows[row]

    def _item(self, r: int) -> MergeStep | MergeRow | None:
        rows = self._rows
        return rows[r] if 0 <= r < min(self._n, len(rows)) else None

    def _value(self, step: Any, r: int, col: int, role: int) -> Any:
        count = step.count
        if role == _DISPLAY or role == SORT_ROLE:
            if col == 0:
                if role == SORT_ROLE:
                    return step.rank
                # The step's own merge is marked apart from the row a click selects to
                # inspect (a token of another merge), which is not the step.
                return (
                    f"{_STEP_MARK}{step.rank:,}"
                    if r == self._hub.state.step - 1
                    else f"{step.rank:,}"
                )
            if col == 4:
                if role == SORT_ROLE:
                    return -1 if count is None else count
                return _NO_COUNT if count is None else f"{count:,}"
            # Rendered on demand: only the visible rows are ever formatted.
            if col == 3:
                return merged_text(step.left, step.right)
            return token_text(step.left if col == 1 else step.right)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(_RIGHT if col in self.NUMERIC else _LEFT)
        if role == Qt.ItemDataRole.ToolTipRole and col in (1, 2, 3):
            return token_tooltip((step.left, step.right, step.merged)[col - 1])
        if role == COPY_ROLE and col in (1, 2, 3):
            return readable_token((step.left, step.right, step.merged)[col - 1])
        if role == TOKEN_ID_ROLE:
            return step.new_id
        if role == Qt.ItemDataRole.ForegroundRole and r >= self._hub.state.step:
            return _foregrounds()[0]  # not yet merged at the step shown
        return None


def _vocab_row(row: VocabRow | MergeStep) -> VocabRow:
    if type(row) is MergeStep:
        return VocabRow(row.new_id, row.merged, row.rank, "merge", row.count)
    return row  # type: ignore[return-value]


class VocabTableModel(_Table):
    """One row per token: id, token, byte length, the merge that made it, its count.

    For a run: the bytes and specials of ``state.base_vocab`` in id order, then one row per
    published merge, read from the state's record as it is shown (a frame's rows may wait for
    :meth:`catch_up`, see ``hold_appends``). For a loaded tokenizer: the rows the loader
    prepared.
    """

    HEADERS = ("ID", "Token", "Bytes", "Merge", "Count", "Reach")
    NUMERIC = frozenset({0, 2, 3, 4})
    HEADER_TIPS = (
        "Token id",
        "The token's bytes, readable (␣ space, ↵ newline, <xx> a byte of a character)",
        "Length in bytes",
        "The merge that made it (its rank), or byte / special",
        "The pair's count when it was merged (— when unknown: a loaded tokenizer)",
        "Reachable: encoding the token's own bytes gives exactly this token",
    )

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.HEADERS):
            if role == Qt.ItemDataRole.TextAlignmentRole:
                # subtle: titles start at the left, so a sort indicator (drawn at the right
                # end of the section) never covers a right-aligned "Count".
                return int(_LEFT)
            if role == Qt.ItemDataRole.ToolTipRole:
                return self.HEADER_TIPS[section]
        return super().headerData(section, orientation, role)

    def __init__(self, hub: AppModel, parent: Any = None) -> None:
        super().__init__(parent)
        self._hub = hub
        self._base: list[VocabRow] = []  # the rows before the first merge (or all, loaded)
        self._base_ids: np.ndarray | None = None  # the base rows' ids (ascending: id order)
        self._n = 0
        # Ids that encoding never produces (``core.explain.reach.unreachable_tokens``), once known.
        self.unreachable: frozenset[int] | None = None
        # Asked at each frame's new rows: True lets them wait for :meth:`catch_up` (the view
        # says they would land out of sight; ``VocabTableView._hold_appends``).
        self.hold_appends: Callable[[], bool] | None = None
        self._announced = 0  # the rows the published merges make, added or waiting
        hub.reset.connect(self._on_reset)
        hub.merges_added.connect(self._on_added)
        self._on_reset()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008,N802
        return 0 if parent.isValid() else self._n

    @property
    def total_rows(self) -> int:
        """The rows of every token shown, with those still waiting to be added."""
        return max(self._n, self._announced)

    def rank_at(self, row: int) -> int | None:
        """The rank of the merge that made row ``row``'s token (None: a byte or special)."""
        return self._row(row).rank

    def _row(self, row: int) -> VocabRow:
        base = self._base
        if row < len(base):
            return base[row]
        return _vocab_row(self._hub.state.record[row - len(base)])

    def snapshot(self) -> tuple[object, Callable[[int], VocabRow], int]:
        """``(key, rows, n)`` for :class:`~.vocab_index.VocabIndex`: what identifies these
        rows, a function giving row ``i < n`` from any thread, and how many rows there are.

        subtle: the function holds the lists themselves, not the model: the base rows are
        replaced (never changed) on reset and the record only grows, so rows ``< n`` read
        from another thread stay what they were."""
        base, record = self._base, self._hub.state.record
        first = len(base)

        def rows(i: int) -> VocabRow:
            return base[i] if i < first else _vocab_row(record[i - first])

        return (base, record), rows, self._n

    def set_unreachable(self, ids: frozenset[int] | None) -> None:
        self.unreachable = ids
        if self._n:
            self.dataChanged.emit(self.index(0, 0), self.index(self._n - 1, COL_REACH))

    @Slot()
    def _on_reset(self) -> None:
        state = self._hub.state
        self.beginResetModel()
        if state.loaded is not None:
            self._base = state.loaded.vocab_rows
            self._n = len(self._base)
        else:
            self._base = vocab_rows(state.base_vocab)
            self._n = len(self._base) + self._hub.published
        self._announced = self._n
        self._base_ids = None  # built on the first look-up, not on every reset
        self.unreachable = None
        self.endResetModel()

    @Slot(int, int)
    def _on_added(self, first: int, last: int) -> None:
        if self._hub.state.loaded is not None:
            return
        self._announced = len(self._base) + last + 1
        if self.hold_appends is None or not self.hold_appends():
            self.catch_up()

    def catch_up(self) -> None:
        """Add every row that waited (``hold_appends``), in one insertion."""
        if self._announced > self._n:
            self.beginInsertRows(QModelIndex(), self._n, self._announced - 1)
            self._n = self._announced
            self.endInsertRows()

    def row_of_id(self, token_id: int) -> int | None:
        if self._base_ids is None:
            # C-level, and only once asked: a dict over o200k's 200,000 rows at every reset
            # would cost the GUI thread far more (docs/responsiveness.md).
            base = self._base
            self._base_ids = np.fromiter(map(itemgetter(0), base), np.int64, count=len(base))
        ids = self._base_ids
        row = int(np.searchsorted(ids, token_id))
        if row < len(ids) and ids[row] == token_id:
            return row
        # Merged tokens of a run have consecutive ids in consecutive rows.
        first = len(self._base)
        if first < self._n:
            row = first + token_id - self._row(first).token_id
            if first <= row < self._n and self._row(row).token_id == token_id:
                return row
        return None

    def token_at(self, row: int) -> tuple[int, bytes]:
        r = self._row(row)
        return r.token_id, r.token

    def _item(self, r: int) -> VocabRow | None:
        return self._row(r) if 0 <= r < self._n else None

    def _value(self, row: Any, r: int, col: int, role: int) -> Any:
        if role == _DISPLAY:
            if col == 0:
                return f"{row.token_id:,}"
            if col == 1:
                return token_text(row.token)
            if col == 2:
                return f"{len(row.token):,}"
            if col == 3:
                return row.kind if row.rank is None else f"{row.rank:,}"
            if col == 4:
                return _NO_COUNT if row.count is None else f"{row.count:,}"
            if self.unreachable is None:
                return ""
            return "no" if row.token_id in self.unreachable else "yes"
        if role == SORT_ROLE:
            if col == 0:
                return row.token_id
            if col == 1:
                return readable_token(row.token)
            if col == 2:
                return len(row.token)
            if col == 3:
                return -1 if row.rank is None else row.rank
            if col == 4:
                return -1 if row.count is None else row.count
            if self.unreachable is None:
                return -1
            return 0 if row.token_id in self.unreachable else 1
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(_RIGHT if col in self.NUMERIC else _LEFT)
        if role == Qt.ItemDataRole.ForegroundRole:
            if row.rank is not None and row.rank >= self._hub.state.step:
                return _foregrounds()[0]  # made by a merge after the step shown
            if col == COL_REACH and self.unreachable and row.token_id in self.unreachable:
                return _foregrounds()[1]
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == 1:
                return token_tooltip(row.token)
            if col == COL_REACH and self.unreachable and row.token_id in self.unreachable:
                return "Encoding this token's own bytes gives other tokens: never produced"
            return None
        if role == COPY_ROLE and col == 1:
            return readable_token(row.token)
        if role == TOKEN_ID_ROLE:
            return row.token_id
        return None


class VocabFilterProxy(QAbstractProxyModel):
    """The vocabulary's rows to show, in order: an index array over the source rows.

    Sorting and filtering are one :meth:`~.vocab_index.VocabIndex.order` call (``argsort`` and
    masks over precomputed columns), never a comparison in Python per pair of rows; the
    result is applied with one model reset. With nothing to filter or sort the rows pass
    straight through, so training grows the table with one insert per frame. Otherwise new
    rows wait for the next order: ``stale`` asks the view for one (it computes it off the GUI
    thread, :meth:`set_order`); the synchronous :meth:`set_spec` is for small tables and tests.
    """

    stale = Signal()  # the source changed under a filtered or sorted order: compute a new one

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.index_cache = VocabIndex()
        self.spec = ViewSpec()
        self._order: np.ndarray | None = None  # source rows in display order; None: all
        self._inverse: np.ndarray | None = None  # source row -> shown row, -1 hidden

    # ------------------------------------------------------------- source
    def setSourceModel(self, model: VocabTableModel) -> None:  # type: ignore[override]  # noqa: N802
        super().setSourceModel(model)
        model.modelAboutToBeReset.connect(self.beginResetModel)
        model.modelReset.connect(self._source_reset)
        model.rowsAboutToBeInserted.connect(self._before_insert)
        model.rowsInserted.connect(self._after_insert)
        model.dataChanged.connect(self._source_changed)

    def _source(self) -> VocabTableModel:
        return self.sourceModel()  # type: ignore[return-value]

    @Slot()
    def _source_reset(self) -> None:
        # subtle: a filtered or sorted order of the old rows is meaningless now; show none
        # until the new order arrives rather than the unsorted rows for a moment.
        self._set_order(None if self.spec.trivial else np.empty(0, dtype=np.int64))
        self.endResetModel()
        if not self.spec.trivial:
            self.stale.emit()

    @Slot(QModelIndex, int, int)
    def _before_insert(self, parent: QModelIndex, first: int, last: int) -> None:
        if self._order is None:
            self.beginInsertRows(QModelIndex(), first, last)

    @Slot(QModelIndex, int, int)
    def _after_insert(self, parent: QModelIndex, first: int, last: int) -> None:
        if self._order is None:
            self.endInsertRows()
        else:
            self.stale.emit()

    @Slot()
    def _source_changed(self, *args: object) -> None:
        n = self.rowCount()
        if n:
            self.dataChanged.emit(self.index(0, 0), self.index(n - 1, self.columnCount() - 1))

    # -------------------------------------------------------------- order
    def order_job(self, spec: ViewSpec) -> Callable[[Callable[[], bool]], np.ndarray | None]:
        """A function computing the order for ``spec`` of the rows as they are now, for any
        thread: the rows are taken here, on the GUI thread, so a reset meanwhile cannot mix
        old and new rows (its result is stale anyway: the reset asks for a new order)."""
        key, rows, n = self._source().snapshot()
        unreachable = self._source().unreachable
        index = self.index_cache

        def job(is_stale: Callable[[], bool]) -> np.ndarray | None:
            return index.order(key, rows, n, spec, unreachable, is_stale)

        return job

    def compute(self, spec: ViewSpec) -> np.ndarray | None:
        """The order for ``spec`` of the rows as they are now, computed on this thread."""
        return self.order_job(spec)(lambda: False)

    def set_spec(self, spec: ViewSpec) -> None:
        """Filter and sort now, on this thread."""
        self.set_order(spec, self.compute(spec))

    def set_order(self, spec: ViewSpec, order: np.ndarray | None) -> None:
        """Show ``order`` (computed for ``spec`` by :meth:`compute`): one model reset."""
        self.beginResetModel()
        self.spec = spec
        self._set_order(order)
        self.endResetModel()

    def _set_order(self, order: np.ndarray | None) -> None:
        if order is None:
            self._order = self._inverse = None
            return
        n = self._source().rowCount()
        order = order[order < n]  # rows counted for an order are never more than there are
        inverse = np.full(n, -1, dtype=np.int64)
        inverse[order] = np.arange(len(order))
        self._order, self._inverse = order, inverse

    def set_filter_text(self, text: str) -> None:
        s = self.spec
        self.set_spec(ViewSpec(text, s.sort_column, s.descending, s.unreachable_only, s.hide_after))

    @property
    def filter_text(self) -> str:
        return self.spec.needle

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        s = self.spec
        descending = order == Qt.SortOrder.DescendingOrder
        self.set_spec(ViewSpec(s.text, column, descending, s.unreachable_only, s.hide_after))

    # ------------------------------------------------------------ mapping
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008,N802
        if parent.isValid() or self.sourceModel() is None:
            return 0
        return self._source().rowCount() if self._order is None else len(self._order)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008,N802
        if parent.isValid() or self.sourceModel() is None:
            return 0
        return self._source().columnCount()

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if parent.isValid() or not (
            0 <= row < self.rowCount() and 0 <= column < self.columnCount()
        ):
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, child: Any = None) -> Any:
        if child is None:  # QObject.parent()
            return super().parent()
        return QModelIndex()

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008,N802
        return not parent.isValid() and self.rowCount() > 0

    def mapToSource(self, proxy_index: Index) -> QModelIndex:  # noqa: N802
        if not proxy_index.isValid() or self.sourceModel() is None:
            return QModelIndex()
        row = proxy_index.row()
        if self._order is not None:
            if row >= len(self._order):
                return QModelIndex()
            row = int(self._order[row])
        return self._source().index(row, proxy_index.column())

    def mapFromSource(self, source_index: Index) -> QModelIndex:  # noqa: N802
        if not source_index.isValid():
            return QModelIndex()
        row = source_index.row()
        if self._inverse is not None:
            row = int(self._inverse[row]) if row < len(self._inverse) else -1
            if row < 0:
                return QModelIndex()
        return self.index(row, source_index.column())

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        source = self.mapToSource(index)
        return self._source().data(source, role) if source.isValid() else None

    # The ignores: PySide6's stubs, as in _Table.multiData.
    def multiData(  # type: ignore[override]  # noqa: N802
        self,
        index: Index,
        roleDataSpan: QModelRoleDataSpan,  # noqa: N803
    ) -> None:
        source = self.mapToSource(index)
        if source.isValid():
            self._source().multiData(source, roleDataSpan)
        else:
            for role_data in roleDataSpan:  # type: ignore[attr-defined]  # see multiData
                role_data.clearData()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if self.sourceModel() is None:
            return None
        return self._source().headerData(section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        source = self.mapToSource(index)
        return self._source().flags(source) if source.isValid() else Qt.ItemFlag.NoItemFlags
