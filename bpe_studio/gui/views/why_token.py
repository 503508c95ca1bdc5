""" "Why this token": the selected token's merge tree, what it grew into, how often it occurs.

What it does: on ``AppModel.token_selected`` a job thread (:func:`explain`) finds the token's
tree (``core.explain.merge_tree.merge_tree``) and the merges that use it (``merges_using``)
in the tokenizer the token belongs to (``tokenizer_recipes.selection_recipe``: the run's, or the
editor's picked one it was clicked in, which the heading then names).
Back on the GUI thread the tree is drawn (:class:`~.merge_tree.MergeTreeView`) and the merges
it grew into are listed (:class:`UsesModel`), each with the pair count from the run's record
(``state.merge_rows[rank].count``, as it was when merged; "n/a" for loaded or picked
tokenizers). Merges the timeline has not reached yet are greyed, in the list and the tree, and
a token made after the timeline's step is said not to be learned yet (live, as the step moves).
Clicking a node or a row selects that token everywhere. While training, the panel follows new
merges at most once a second, and only while it is visible.
What it leaves out: counting the token in the editor (the editor's ``occurrences``, handed in
with :meth:`WhyTokenPanel.set_occurrence_counter`), drawing the tree (``merge_tree``).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Slot,
)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ...core.encode.foreign import AnyTokenizer, ForeignTokenizer
from ...core.encode.tokenizer import Tokenizer
from ...core.explain.merge_tree import MergeNode, merge_tree, merges_using
from ...core.explain.reach import unreachable_among
from ..jobs.latest import LatestJob
from ..model.app_model import AppModel
from ..model.tokenizer_cache import TokenizerCache
from ..model.tokenizer_recipes import selection_recipe
from ..responsiveness.debounce import single_shot
from .common import (
    configure_table,
    counted,
    monospace_font,
    plain_text,
    points,
    steady_label,
    token_text,
)
from .layouts import column, vertical_split
from .merge_tree import MergeTreeView, count_text, is_later, short
from .theme import colours, muted, themed

HEADING_CHARS = 24  # of a token in the heading (the tree's tooltips have all of it)
TRAINING_REFRESH_MS = 1000  # a live run's new merges reach the panel at most this often
EMPTY = "Select a token (in the editor, the vocabulary or the merge list) to see how it was built."

Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True, slots=True)
class UseRow:
    """One merge the token grew into."""

    rank: int
    left: bytes
    right: bytes
    new_id: int
    token: bytes


@dataclass(frozen=True, slots=True)
class Explanation:
    """What the job found for one token: its tree and uses, or why there are none."""

    token_id: int
    tree: MergeNode | None
    uses: tuple[UseRow, ...]
    special_ids: frozenset[int]
    run: bool  # the run's tokenizer: rank r is row r of state.merge_rows (pair counts)
    problem: str | None = None
    unmerged: str = ""  # what a token no merge makes is (the detail line), else ""
    # A token of a tokenizer with no tree here (WordPiece, Unigram, SentencePiece-style):
    # its bytes and how its file writes it ("▁the", "<0xE4>", "##ing"), for the heading.
    plain: tuple[bytes, str | None] | None = None
    given: bool = True  # encoding the token's own bytes gives it (the Reach rule)


NEVER_GIVEN = "unreachable: encoding never gives it"


def unmerged_kind(tok: Tokenizer, token_id: int, specials: frozenset[int], given: bool) -> str:
    """What token ``token_id`` is when no merge makes it: a special token, a byte, an added
    token, one the encoder finds whole (``ignore_merges``; ``given``: encoding gives it, so
    the pre-tokenizer leaves it one piece), or one encoding never gives."""
    token = tok.vocab[token_id]
    if token_id in specials:
        return "a special token: no merge made it"
    if len(token) == 1:
        return "a byte: no merge made it"
    if tok.added_tokens.get(token.decode("utf-8", "replace")) == token_id:  # <think>
        return "an added token, in the vocabulary as it is: no merge made it"
    merger = tok.merger
    if given and merger.looks_up_whole and merger.whole_id(token) == token_id:
        return (
            "a vocabulary token no merge reaches: the encoder finds it whole, as the file "
            "sets ignore_merges"
        )
    return "a vocabulary token no merge makes: encoding never gives it"


def explain(tok: AnyTokenizer, token_id: int, run: bool) -> Explanation:
    """The tree and the uses of ``token_id`` in ``tok`` (runs in the job thread)."""
    specials = frozenset(tok.special_id(s) for s in tok.special_tokens)
    if isinstance(tok, ForeignTokenizer):
        problem = tok.not_explained("Why this token (its merge tree)")
        plain = (tok.vocab[token_id], tok.token_text(token_id)) if token_id in tok.vocab else None
        return Explanation(token_id, None, (), specials, run, problem, plain=plain)
    if token_id not in tok.vocab:
        problem = f"Token id {token_id:,} is not in this tokenizer."
        return Explanation(token_id, None, (), specials, run, problem)
    vocab = tok.vocab
    uses = tuple(
        UseRow(u.rank, vocab[u.left], vocab[u.right], u.new_id, vocab[u.new_id])
        for u in merges_using(tok, token_id)
    )
    tree = merge_tree(tok, token_id)
    # The Reach rule, as the vocabulary's and the lab's Reach columns say it (a merge an
    # earlier one pre-empts, a normalizer that never leaves the token's text, a pre-tokenizer
    # that always splits it): a token made by merges may still never be given.
    given = token_id in specials or not unreachable_among(tok, [token_id])
    unmerged = unmerged_kind(tok, token_id, specials, given) if tree.rank is None else ""
    return Explanation(token_id, tree, uses, specials, run, unmerged=unmerged, given=given)


class UsesModel(QAbstractTableModel):
    """The merges a token grew into: rank, pair, the token made, its id, the pair count."""

    HEADERS = ("Rank", "Pair", "Made", "Id", "Count")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[UseRow] = []
        self.counts: list[int | None] = []
        self.step: int | None = None  # merges from this rank on are greyed (not made yet)

    def set_rows(self, rows: list[UseRow], counts: list[int | None], step: int | None) -> None:
        self.beginResetModel()
        self.rows, self.counts, self.step = rows, counts, step
        self.endResetModel()

    def set_step(self, step: int | None) -> None:
        if step != self.step and self.rows:
            self.step = step
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.rows) - 1, 4))

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt override
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return f"{row.rank:,}"
            if col == 1:
                return f"{token_text(row.left)} + {token_text(row.right)}"
            if col == 2:
                return token_text(row.token)
            if col == 3:
                return f"{row.new_id:,}"
            return count_text(self.counts[index.row()])
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 3, 4):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and self.step is not None:
            if row.rank >= self.step:
                return QColor(colours().later)
        if role == Qt.ItemDataRole.ToolTipRole:
            later = self.step is not None and row.rank >= self.step
            return f"merge rank {row.rank:,}" + (" (after the timeline's step)" if later else "")
        return None


class WhyTokenPanel(QWidget):
    """The "Why this token" tab."""

    def __init__(self, hub: AppModel, cache: TokenizerCache, parent: QWidget | None = None):
        super().__init__(parent)
        self.hub = hub
        self.cache = cache
        self.token_id: int | None = None
        self.explanation: Explanation | None = None
        self._detail = ""  # the line under the heading, before the editor count
        # The step the heading says the token is not learned yet at; None: it is learned.
        self._heading_step: int | None = None
        self._occurrences: Callable[[int], int | None] | None = None
        self._job = LatestJob("bpe-why-token", self)
        self._job.done.connect(self._on_explained)
        self._job.failed.connect(self._on_failed)
        self._live = single_shot(self, TRAINING_REFRESH_MS, self._on_live_tick)
        self._stale = False  # new merges arrived while the panel was hidden

        # Steady labels: a long token never widens the panel (nor squeezes the editor).
        self.heading = steady_label(QLabel())
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.detail = steady_label(QLabel())
        self.detail.setTextFormat(Qt.TextFormat.RichText)
        muted(self.detail)
        self.tree = MergeTreeView(self)
        self.tree.setAccessibleName("Merge tree of the token")
        self.tree.setFrameShape(QFrame.Shape.NoFrame)
        self.tree.node_clicked.connect(self._select)
        self.tree.show_message(EMPTY)
        fit = QPushButton("Fit")
        fit.setToolTip(
            "Show the whole tree, or as much as the smallest zoom holds (Ctrl+wheel zooms, "
            "drag scrolls)"
        )
        fit.clicked.connect(self.tree.fit_all)
        actual = QPushButton("1:1")
        actual.setToolTip("Draw the tree at full size")
        actual.clicked.connect(self.tree.actual_size)
        for button in (fit, actual):
            button.setFixedWidth(button.fontMetrics().horizontalAdvance("1:1") + 32)

        self.uses_title = QLabel("Grew into")
        self.uses_title.setObjectName("sectionTitle")
        self.uses = UsesModel(self)
        self.uses_table = QTableView(self)
        self.uses_table.setAccessibleName("Grew into: merges using the token")
        self.uses_table.setModel(self.uses)
        configure_table(self.uses_table, monospace_font())
        self.uses_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.uses_table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.uses_table.clicked.connect(self._on_use_clicked)
        self.uses_table.activated.connect(self._on_use_clicked)  # Enter, from the keyboard

        top = QHBoxLayout()
        top.setSpacing(4)
        text = QVBoxLayout()
        text.setSpacing(0)
        text.addWidget(self.heading)
        text.addWidget(self.detail)
        top.addLayout(text, 1)
        top.addWidget(fit, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(actual, 0, Qt.AlignmentFlag.AlignTop)
        self.lower_part = lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 4, 0, 0)
        lower_layout.setSpacing(2)
        lower_layout.addWidget(self.uses_title)
        lower_layout.addWidget(self.uses_table)
        split = vertical_split(self.tree, lower, (4, 1), (400, 96))
        column(self, top, (split, 1), margins=(4, 4, 4, 0))
        # No token yet: folded, as after a reset (an empty table stood there until then).
        self._show_uses_title(None)

        hub.token_selected.connect(self.show_token)
        hub.reset.connect(self._on_reset)
        hub.tokenizer_changed.connect(self.refresh)
        hub.merges_added.connect(self._on_merges_added)
        hub.step_changed.connect(self._on_step)
        themed(self, WhyTokenPanel._restyle)

    def _restyle(self) -> None:
        """The heading's greys are written into its text: written again in the new scheme's
        (they stayed the old one's, 2.2:1 on the new panel, until another token was picked)."""
        exp = self.explanation
        if exp is not None and exp.tree is not None:
            self._show_heading(exp.tree)
        elif exp is not None and exp.plain is not None:
            self._show_plain_heading(exp.token_id, *exp.plain, exp.token_id in exp.special_ids)

    # ------------------------------------------------------------ inputs
    def set_occurrence_counter(self, count: Callable[[int], int | None] | None) -> None:
        """How the editor counts a token in its text (it answers None when its tokenizer is
        not the token's; None: the line stays empty)."""
        self._occurrences = count
        self.refresh_occurrences()

    @Slot(int)
    def show_token(self, token_id: int) -> None:
        self.token_id = token_id
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        """Explain the current token again (in the job thread)."""
        self._live.stop()
        self._stale = False
        recipe = selection_recipe(self.hub.state)
        if self.token_id is None or recipe is None:
            self._job.cancel()
            self._clear()
            return
        token_id, cache = self.token_id, self.cache

        def job(is_stale: Callable[[], bool]) -> Explanation:
            return explain(recipe.get(cache), token_id, recipe.run)

        self._job.submit(job)

    def refresh_if_stale(self) -> None:
        if self._stale or self._live.isActive():
            self.refresh()

    @Slot()
    def _on_live_tick(self) -> None:
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    @Slot()
    def _on_reset(self) -> None:
        self.token_id = None
        self.refresh()

    @Slot(int, int)
    def _on_merges_added(self, first: int, last: int) -> None:
        # A live run: what the token grew into changes with new merges; follow at most once
        # a second, and only when it can be seen (hidden, the tab catches up when shown).
        if self.token_id is not None and not self._live.isActive():
            self._live.start()

    @Slot(int)
    def _on_step(self, step: int) -> None:
        shown = self._step()
        self.uses.set_step(shown)
        self.tree.set_step(shown)
        exp = self.explanation
        if exp is not None and exp.tree is not None:
            # Rewritten only while the token is not learned yet (its line names the step)
            # or as it turns learned or not: a drag elsewhere leaves the labels be.
            not_yet = shown if is_later(exp.tree, shown) else None
            if not_yet != self._heading_step:
                self._show_heading(exp.tree)

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.refresh_if_stale()

    def _step(self) -> int | None:
        state = self.hub.state
        return state.step if state.selected_in is None else None

    @Slot(int)
    def _select(self, token_id: int) -> None:
        """Select a token of the tokenizer explained (a node, a merge it grew into)."""
        self.hub.select_token(token_id, self.hub.state.selected_in)

    @property
    def busy(self) -> bool:
        return self._job.busy

    # ------------------------------------------------------------ output
    def count_of(self, rank: int, new_id: int) -> int | None:
        """The pair count of merge ``rank`` in the run's record (None: unknown)."""
        exp = self.explanation
        rows = self.hub.state.merge_rows
        if exp is None or not exp.run or rank >= len(rows):
            return None
        row = rows[rank]
        return row.count if row.new_id == new_id else None

    @Slot(object)
    def _on_explained(self, exp: Explanation) -> None:
        if exp.token_id != self.token_id:
            return
        self.explanation = exp
        if exp.tree is None:
            self.tree.show_message(exp.problem or EMPTY)
            self.heading.setText("")
            self._heading_step = None
            self.uses.set_rows([], [], None)
            self._show_uses_title(None)
            self._detail = ""
            if exp.plain is not None:
                self._show_plain_heading(exp.token_id, *exp.plain, exp.token_id in exp.special_ids)
            self.refresh_occurrences()
            return
        root = exp.tree
        self.tree.set_tree(
            root,
            lambda node: self.count_of(node.rank or 0, node.id),
            exp.special_ids,
            step=self._step(),
        )
        counts = [self.count_of(u.rank, u.new_id) for u in exp.uses]
        self.uses.set_rows(list(exp.uses), counts, self._step())
        self._show_uses_title(len(exp.uses))
        self._show_heading(root)

    def _show_plain_heading(
        self, token_id: int, token: bytes, spelling: str | None, special: bool
    ) -> None:
        """The heading of a token with no tree here: what it stands for, its id and bytes,
        and (the line below) how its file writes it, where that differs ("▁the", "<0xE4>").
        (An audit: a Unigram's "<0xE4>" showed only that trees apply to byte-level BPE.)"""
        c = colours()
        shown = html.escape(short(token_text(token), HEADING_CHARS)) if token else "∅"
        self.heading.setText(
            f"<span style='font-size:{points(15):.1f}pt; font-family:monospace; "
            f"font-weight:600;'>{shown}</span>"
            f"&nbsp; <span style='color:{c.muted}'>id&nbsp;{token_id:,} · "
            f"{counted(len(token), 'byte')}{self._whose()}</span>"
        )
        kind = "a special token" if special else "a token"
        if spelling is not None and spelling != token.decode("utf-8", "replace"):
            written = html.escape(short(spelling, HEADING_CHARS))
            self._detail = f"{kind}, written in the file as <code>{written}</code>"
        else:
            self._detail = f"{kind} of the file's vocabulary"

    def _show_heading(self, root: MergeNode) -> None:
        c = colours()
        step = self._step()
        self._heading_step = step if is_later(root, step) else None
        token = html.escape(short(token_text(root.token), HEADING_CHARS))
        # A token not learned yet at the timeline's step: greyed as its vocabulary row is,
        # and said so (the tree and the line below describe a merge still to come).
        colour = f" color:{c.later};" if self._heading_step is not None else ""
        not_yet = (
            f" · not learned yet at step&nbsp;{self._heading_step:,}"
            if self._heading_step is not None
            else ""
        )
        self.heading.setText(
            f"<span style='font-size:{points(15):.1f}pt; font-family:monospace; "
            f"font-weight:600;{colour}'>{token}</span>"
            # subtle: the line may break before "id", never between "id" and its number
            # (after a long token, the "d" was pushed out of sight, the number to a new line).
            f"&nbsp; <span style='color:{c.muted}'>id&nbsp;{root.id:,} · "
            f"{counted(len(root.token), 'byte')}{not_yet}{self._whose()}</span>"
        )
        if root.rank is None:
            self._detail = self.explanation.unmerged if self.explanation is not None else ""
        else:
            assert root.left is not None and root.right is not None
            left = html.escape(short(token_text(root.left.token), HEADING_CHARS // 2))
            right = html.escape(short(token_text(root.right.token), HEADING_CHARS // 2))
            count = count_text(self.count_of(root.rank, root.id))
            # The count is the merge's own, not one at the step shown.
            made = "made" if self._heading_step is None else "to be made"
            # Said right after the merge: a narrow panel shows the detail's first lines only.
            never = ""
            if self.explanation is not None and not self.explanation.given:
                never = f" ({NEVER_GIVEN})"
            self._detail = (
                f"{made} by merge {root.rank:,}: <code>{left}</code> + <code>{right}</code>"
                f"{never}, pair count {count} when merged"
            )
        self.refresh_occurrences()

    def _whose(self) -> str:
        """ " · in GPT-4o (o200k_base), not the run's" for a token of another tokenizer."""
        source = self.hub.state.selected_in
        if source is None:
            return ""
        name = source.label.removeprefix("Tokenizer: ")
        return f" · in {html.escape(name)}, not the run's tokenizer"

    def refresh_occurrences(self) -> None:
        """Rewrite the detail line with the token's count in the editor now."""
        detail = self._detail if self.explanation is not None else ""
        if self._occurrences is not None and self.token_id is not None and detail:
            n = self._occurrences(self.token_id)
            if n == 0:
                detail += " · not in the editor's text"
            elif n is not None:
                detail += f" · {counted(n, 'time')} in the editor"
        self.detail.setText(detail)
        # Whole in the tooltip: a short panel (1024 x 700) shows its first lines only.
        self.detail.setToolTip(plain_text(detail))

    def _clear(self) -> None:
        self.explanation = None
        self.heading.setText("")
        self._heading_step = None
        self.tree.show_message(EMPTY)
        self.uses.set_rows([], [], None)
        self._show_uses_title(None)
        self.refresh_occurrences()

    def _show_uses_title(self, n: int | None) -> None:
        if n is None:
            text = "Grew into"
        elif n == 0:
            # "(yet)" only while the run can still make merges that use it.
            exp, state = self.explanation, self.hub.state
            more = exp is not None and exp.run and state.phase.training
            text = f"Grew into: no merge uses it as a part{' (yet)' if more else ''}"
        else:
            text = f"Grew into: {counted(n, 'merge')} use{'s' * (n == 1)} it as a part"
        self.uses_title.setText(text)
        # Nothing to list: the table folds away and the tree gets its room.
        self.uses_table.setVisible(bool(n))
        self.lower_part.setMaximumHeight(
            16_777_215 if n else self.uses_title.sizeHint().height() + 6
        )

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.tree.show_message(f"Could not explain this token: {message}")

    @Slot(QModelIndex)
    def _on_use_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self._select(self.uses.rows[index.row()].new_id)

    def shutdown(self) -> None:
        self._live.stop()
        self._job.shutdown()
