"""Table models over the merges and the vocabulary, grown in batches while training.

What it does: :class:`MergeTableModel` holds one row per merge (rank, left, right, merged token,
pair count at merge time); :class:`VocabTableModel` one row per token (id, token, byte length,
the merge that made it, its count). Both grow with one ``beginInsertRows`` per batch and render
token bytes with :func:`~bpe_studio.core.display.readable_token` only when a cell is shown, so
a batch of merges costs the GUI thread almost nothing until it is scrolled into view. Both
answer all the roles of a cell in one ``multiData`` call. :class:`VocabFilterProxy` filters the
vocabulary by token text or id. Counts are unknown (``None``) for a tokenizer loaded from
files.
What it leaves out: views and selection behaviour (``views/``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QModelRoleDataSpan,
    QPersistentModelIndex,
    QRegularExpression,
    QSortFilterProxyModel,
    Qt,
)

from ..core import MergeStep
from ..core.display import readable_token

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

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

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
        # into Python per cell instead of seven. While the trainer thread holds the GIL, every
        # entry waits for it, so this is what keeps repaints fast during training.
        for role_data in roleDataSpan:
            value = self.data(index, role_data.role())
            if value is None:
                role_data.clearData()
            else:
                role_data.setData(value)

    def _append_rows(self, rows: Sequence[Any]) -> None:
        if not rows:
            return
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
        self._rows.extend(rows)
        self.endInsertRows()

    def _replace_rows(self, rows: list[Any]) -> None:
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()


class MergeTableModel(_Table):
    """One row per merge, oldest first: rank, left, right, merged token, count at merge time.

    Rows are the ``MergeStep`` records themselves: a batch is appended with one
    ``list.extend``, so the GUI thread spends almost nothing per merge.
    """

    HEADERS = ("Rank", "Left", "Right", "Merged", "Count")
    NUMERIC = frozenset({0, 4})

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[MergeStep] = []
        self._counts_known = True

    def append(self, steps: Sequence[MergeStep]) -> None:
        """Add trained merges (their counts are known)."""
        self._append_rows(steps)

    def reset(self, steps: Iterable[MergeStep] = (), *, counts_known: bool = True) -> None:
        """Replace all rows; ``counts_known=False`` for merges loaded from a file."""
        self._counts_known = counts_known
        self._replace_rows(list(steps))

    def step_at(self, row: int) -> MergeStep:
        return self._rows[row]

    def steps(self) -> list[MergeStep]:
        """All merges shown, oldest first (a copy)."""
        return list(self._rows)

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        step = self._rows[index.row()]
        count = step.count if self._counts_known else None
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


class _VocabRow(NamedTuple):
    token_id: int
    token: bytes
    rank: int | None  # the merge that made it; None for bytes and special tokens
    kind: str  # "byte", "special" or "merge"
    count: int | None


def _vocab_row(row: _VocabRow | MergeStep) -> _VocabRow:
    if type(row) is MergeStep:
        return _VocabRow(row.new_id, row.merged, row.rank, "merge", row.count)
    return row  # type: ignore[return-value]


VocabRows = tuple[list[_VocabRow], dict[int, int]]


def vocab_rows(
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[bytes, bytes]] = (),
    counts: Mapping[int, int] | None = None,
) -> VocabRows:
    """The rows of ``vocab`` in id order and the row of each id. Plain Python: a loader
    thread prepares them for GPT-2's 50,257 tokens while the GUI stays responsive."""
    rank_of: dict[bytes, int] = {}
    for rank, (a, b) in enumerate(merges):
        rank_of.setdefault(a + b, rank)
    rows: list[_VocabRow] = []
    for token_id, token in sorted(vocab.items()):
        rank = rank_of.get(token)
        kind = "merge" if rank is not None else "byte" if len(token) == 1 else "special"
        count = counts.get(token_id) if counts is not None else None
        rows.append(_VocabRow(token_id, token, rank, kind, count))
    return rows, {r.token_id: i for i, r in enumerate(rows)}


class VocabTableModel(_Table):
    """One row per token: id, token, byte length, the merge that made it, its count.

    Tokens from :meth:`reset` are stored as rows; merges appended while training are stored as
    their ``MergeStep`` (one ``list.extend`` per batch) and read as rows when shown.
    """

    HEADERS = ("ID", "Token", "Bytes", "Merge", "Count")
    NUMERIC = frozenset({0, 2, 3, 4})

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[_VocabRow | MergeStep] = []
        self._row_of_id: dict[int, int] = {}
        self._first_appended = 0  # row of the first appended merge

    def reset(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]] = (),
        counts: Mapping[int, int] | None = None,
    ) -> None:
        """Show ``vocab`` in id order; merge ranks come from ``merges``, counts (by id) from
        ``counts`` when known."""
        self.reset_rows(vocab_rows(vocab, merges, counts))

    def reset_rows(self, prepared: VocabRows) -> None:
        """Show rows made by :func:`vocab_rows` (in any thread)."""
        rows, self._row_of_id = prepared
        self._first_appended = len(rows)
        self._replace_rows(list(rows))

    def append_merges(self, steps: Sequence[MergeStep]) -> None:
        self._append_rows(steps)

    def row_of_id(self, token_id: int) -> int | None:
        row = self._row_of_id.get(token_id)
        if row is not None:
            return row
        # Appended merges have consecutive ids in consecutive rows.
        first = self._first_appended
        if first < len(self._rows):
            start_id = _vocab_row(self._rows[first]).token_id
            row = first + token_id - start_id
            if first <= row < len(self._rows) and _vocab_row(self._rows[row]).token_id == token_id:
                return row
        return None

    def token_at(self, row: int) -> tuple[int, bytes]:
        r = _vocab_row(self._rows[row])
        return r.token_id, r.token

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row, col = _vocab_row(self._rows[index.row()]), index.column()
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
