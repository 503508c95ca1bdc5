"""Table models over the state's rows, grown in batches while training.

What it does: :class:`MergeTableModel` shows one row per merge (rank, left, right, merged token,
pair count at merge time); :class:`VocabTableModel` one row per token (id, token, byte length,
the merge that made it, its count). Both read ``StateHub.state`` (they keep no copy of the
run), grow with one ``beginInsertRows`` per published frame and render
token bytes with :func:`~bpe_studio.core.display.readable_token` only when a cell is shown, so
a batch of merges costs the GUI thread almost nothing until it is scrolled into view. Both
answer all the roles of a cell in one ``multiData`` call. :class:`VocabFilterProxy` filters the
vocabulary by token text or id. Counts are unknown (``None``, shown "—") for a tokenizer
loaded from files.
What it leaves out: views and selection behaviour (``views/``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QModelRoleDataSpan,
    QPersistentModelIndex,
    QRegularExpression,
    QSortFilterProxyModel,
    Qt,
    Slot,
)

from ..core import MergeStep
from ..core.display import readable_token
from .hub import StateHub
from .state import MergeRow, VocabRow, vocab_rows

SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # raw value to sort by (int or readable text)
TOKEN_ID_ROLE = Qt.ItemDataRole.UserRole + 2  # the token id a row stands for
FILTER_ROLE = Qt.ItemDataRole.UserRole + 3  # "readable token\tid", for the vocabulary filter

_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
_DISPLAY = Qt.ItemDataRole.DisplayRole
_NO_COUNT = "—"

Index = QModelIndex | QPersistentModelIndex


def token_tooltip(token: bytes) -> str:
    """``readable  (n bytes: xx xx ...)`` for a tooltip."""
    hexes = " ".join(f"{b:02x}" for b in token[:32]) + (" …" if len(token) > 32 else "")
    return f"{readable_token(token)}   ({len(token)} byte{'s' if len(token) != 1 else ''}: {hexes})"


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

    def multiData(self, index: Index, roleDataSpan: QModelRoleDataSpan) -> None:  # noqa: N802,N803
        # subtle: views ask for ~7 roles per cell; answering them in one call means one entry
        # into Python per cell instead of seven (each entry may wait for the GIL while the
        # trainer runs: docs/responsiveness.md).
        for role_data in roleDataSpan:
            value = self.data(index, role_data.role())
            if value is None:
                role_data.clearData()
            else:
                role_data.setData(value)


class MergeTableModel(_Table):
    """One row per merge of ``hub.state.merge_rows``, oldest first: rank, left, right, merged
    token, count at merge time ("—" when unknown).

    It holds no rows of its own: it reads the state's list and keeps only how many rows it has
    announced, growing with one ``beginInsertRows`` per published frame.
    """

    HEADERS = ("Rank", "Left", "Right", "Merged", "Count")
    NUMERIC = frozenset({0, 4})

    def __init__(self, hub: StateHub, parent: Any = None) -> None:
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

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < min(self._n, len(self._rows)):
            return None
        step = self._rows[index.row()]
        count = step.count
        col = index.column()
        if role == _DISPLAY or role == SORT_ROLE:
            if col == 0:
                return str(step.rank) if role == _DISPLAY else step.rank
            if col == 4:
                if role == SORT_ROLE:
                    return -1 if count is None else count
                return _NO_COUNT if count is None else f"{count:,}"
            # Rendered on demand: only the visible rows are ever formatted.
            return readable_token((step.left, step.right, step.merged)[col - 1])
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(_RIGHT if col in self.NUMERIC else _LEFT)
        if role == Qt.ItemDataRole.ToolTipRole and col in (1, 2, 3):
            return token_tooltip((step.left, step.right, step.merged)[col - 1])
        if role == TOKEN_ID_ROLE:
            return step.new_id
        return None


def _vocab_row(row: VocabRow | MergeStep) -> VocabRow:
    if type(row) is MergeStep:
        return VocabRow(row.new_id, row.merged, row.rank, "merge", row.count)
    return row  # type: ignore[return-value]


class VocabTableModel(_Table):
    """One row per token: id, token, byte length, the merge that made it, its count.

    For a run: the bytes and specials of ``state.base_vocab`` in id order, then one row per
    published merge, read from the state's record as it is shown. For a loaded tokenizer: the
    rows the loader prepared.
    """

    HEADERS = ("ID", "Token", "Bytes", "Merge", "Count")
    NUMERIC = frozenset({0, 2, 3, 4})

    def __init__(self, hub: StateHub, parent: Any = None) -> None:
        super().__init__(parent)
        self._hub = hub
        self._base: list[VocabRow] = []  # the rows before the first merge (or all, loaded)
        self._row_of_id: dict[int, int] = {}
        self._n = 0
        hub.reset.connect(self._on_reset)
        hub.merges_added.connect(self._on_added)
        self._on_reset()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008,N802
        return 0 if parent.isValid() else self._n

    def _row(self, row: int) -> VocabRow:
        base = self._base
        if row < len(base):
            return base[row]
        return _vocab_row(self._hub.state.record[row - len(base)])

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
        self._row_of_id = {r.token_id: i for i, r in enumerate(self._base)}
        self.endResetModel()

    @Slot(int, int)
    def _on_added(self, first: int, last: int) -> None:
        if self._hub.state.loaded is not None:
            return
        base = len(self._base)
        self.beginInsertRows(QModelIndex(), base + first, base + last)
        self._n = base + last + 1
        self.endInsertRows()

    def row_of_id(self, token_id: int) -> int | None:
        row = self._row_of_id.get(token_id)
        if row is not None:
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

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < self._n:
            return None
        row, col = self._row(index.row()), index.column()
        if role == _DISPLAY:
            if col == 0:
                return str(row.token_id)
            if col == 1:
                return readable_token(row.token)
            if col == 2:
                return str(len(row.token))
            if col == 3:
                return row.kind if row.rank is None else str(row.rank)
            return _NO_COUNT if row.count is None else f"{row.count:,}"
        if role == SORT_ROLE:
            if col == 0:
                return row.token_id
            if col == 1:
                return readable_token(row.token)
            if col == 2:
                return len(row.token)
            if col == 3:
                return -1 if row.rank is None else row.rank
            return -1 if row.count is None else row.count
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(_RIGHT if col in self.NUMERIC else _LEFT)
        if role == Qt.ItemDataRole.ToolTipRole and col == 1:
            return token_tooltip(row.token)
        if role == TOKEN_ID_ROLE:
            return row.token_id
        if role == FILTER_ROLE:
            return f"{readable_token(row.token)}\t{row.token_id}"
        return None


class VocabFilterProxy(QSortFilterProxyModel):
    """Sorts by :data:`SORT_ROLE`; keeps rows whose readable token contains the filter text
    (typed spaces, tabs and line breaks match their visible symbols ␣ ⇥ ↵), ignoring case, or
    whose id is the number typed.

    Filtering is a regular expression over :data:`FILTER_ROLE` (``"readable token\tid"``), so
    it runs in Qt's C++ and, with no filter, never calls into Python for new rows.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setFilterRole(FILTER_ROLE)
        self.setFilterKeyColumn(0)
        self._needle = ""

    def set_filter_text(self, text: str) -> None:
        self._needle = readable_token(text.encode("utf-8")) if text else ""
        parts = []
        if self._needle:
            # The readable text never holds a tab, so [^\t]* keeps the match in the token.
            parts.append("^[^\t]*" + QRegularExpression.escape(self._needle))
        if text.strip().isdigit():
            parts.append(f"\t{int(text.strip())}$")
        pattern = QRegularExpression(
            "|".join(parts), QRegularExpression.PatternOption.CaseInsensitiveOption
        )
        self.setFilterRegularExpression(pattern)

    @property
    def filter_text(self) -> str:
        return self._needle
