"""The vocabulary table: every token with its id, readable text, length, origin, count and
whether encoding can produce it.

What it does: a filter box, two toggles ("Unreachable only", "Hide tokens after step") and a
table of :class:`~.table_models.VocabTableModel` through a
:class:`~.table_models.VocabFilterProxy`. Rows arrive in id order; tokens made after
the step the timeline shows (``state.step``) are greyed, or hidden with the toggle. While a run
merges, a frame's new rows that would land below the rows in view wait up to ``CATCH_UP_MS``
(adding rows repaints the whole table); the title counts them meanwhile. Filtering
(debounced) and sorting (a header click) compute the row order off the GUI thread on a
:class:`~bpe_studio.gui.jobs.latest.LatestJob` (latest request wins; the title says "sorting…"
meanwhile), so 200,000 tokens never freeze the window. Reachability (``core.explain.
unreachable_tokens``) is computed off the GUI thread once a tokenizer is complete (a finished,
stopped or paused run, a loaded file); the title counts the unreachable tokens. At the same
moment the fonts of the scripts its tokens hold are loaded between events (``glyph_warmup``),
so no sort or scroll pays for them inside its first repaint. The token
selected in any view (``AppModel.token_selected``) is selected and shown here, clearing a
filter that hides it; a row the user selects (a click, the arrow keys) is sent to the hub,
so "Why this token" and every other view follow it.
What it leaves out: the data (``table_models``, over the state) and the order's arithmetic
(``vocab_index``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import numpy as np
from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, Qt, Slot
from PySide6.QtGui import QCloseEvent, QFont, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ...core import Tokenizer, unreachable_tokens
from ...core.io.gc_pause import gc_paused
from ..jobs.latest import Job, LatestJob
from ..model.app_model import AppModel
from ..model.run_tokenizer import run_tokenizer_at
from ..model.state import Phase
from ..model.vocab_index import ViewSpec
from ..responsiveness.after_paint import AfterPaint
from ..responsiveness.busy import wait_while_gui_busy
from ..responsiveness.debounce import single_shot
from .common import (
    configure_table,
    counted,
    lay_out_rows_now,
    monospace_font,
    steady_label,
    title_label,
)
from .glyph_warmup import GlyphWarmer, script_samples
from .table_models import VocabFilterProxy, VocabTableModel
from .theme import muted

FILTER_DEBOUNCE_MS = 150  # typing: one order per pause, not per keystroke
# While merging, new rows that would land below the rows in view are added at most this long
# after the first of them (and at once when the user scrolls to the end, pauses, sorts,
# filters or selects one).
CATCH_UP_MS = 1000
ORDER_DEBOUNCE_MS = 40  # header clicks, toggles, the timeline's step, new rows while training
_COMPLETE = (Phase.FINISHED, Phase.STOPPED, Phase.PAUSED, Phase.LOADED)
_CATCH_UP_EVENTS = (QEvent.Type.KeyPress, QEvent.Type.FocusIn)


def _what_is_shown(spec: ViewSpec) -> ViewSpec:
    """The choices the user made: the spec without the step hidden tokens start at (a step
    moved on the timeline keeps the rows in view where they are)."""
    return dataclasses.replace(spec, hide_after=0 if spec.hide_after is not None else None)


def _order_job(proxy: VocabFilterProxy, spec: ViewSpec) -> Job:
    compute = proxy.order_job(spec)

    def job(is_stale: Callable[[], bool]) -> tuple[ViewSpec, np.ndarray | None]:
        return spec, compute(is_stale)

    return job


def _reach_job(key: object, make_tokenizer: Callable[[], Tokenizer]) -> Job:
    def job(is_stale: Callable[[], bool]) -> tuple[object, frozenset[int]] | None:
        tok = make_tokenizer()
        if is_stale():
            return None
        # subtle: the check allocates a few lists of every token; a full pass of the cyclic
        # collector they would trigger walks all of o200k's tables holding the GIL, which
        # freezes the GUI thread. They hold no cycles.
        with gc_paused():
            return key, frozenset(unreachable_tokens(tok, wait_while_gui_busy))

    return job


def _samples_job(key: object, vocab: Callable[[], Mapping[int, bytes]]) -> Job:
    def job(is_stale: Callable[[], bool]) -> tuple[object, list[str]]:
        return key, script_samples(vocab().values(), wait_while_gui_busy)

    return job


class VocabTableView(QWidget):
    def __init__(self, hub: AppModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.model = model = VocabTableModel(hub, self)
        self.proxy = VocabFilterProxy(self)
        self.proxy.setSourceModel(model)
        self._orders = LatestJob("bpe-vocab-order", self)
        self._orders.done.connect(self._on_order)
        self._orders.failed.connect(self._on_order_failed)
        self._order_error: str | None = None
        self._reach = LatestJob("bpe-reachability", self)
        self._reach.done.connect(self._on_reach)
        self._reach_key: object = None
        self._glyphs = LatestJob("bpe-glyph-samples", self)
        self._glyphs.done.connect(self._on_samples)
        self._timer = single_shot(self, 0, self._request_now)  # started with its delay

        # The counts beside the heading: one line, cut with "…" where the column is narrow
        # (the tooltip has them all), so that a longer count never moves the filter row.
        self.heading = title_label("Vocabulary")
        self.title = muted(steady_label(QLabel(""), "000,000 tokens"))
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setAccessibleName("Filter the vocabulary")
        self.filter_edit.setPlaceholderText("Filter: token or id (space = ␣)")
        self.filter_edit.setMinimumWidth(120)
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._on_filter)
        self.unreachable_box = QCheckBox("Unreachable only", self)
        self.unreachable_box.setToolTip(
            "Tokens that encoding their own bytes never gives back as one token"
        )
        self.hide_box = QCheckBox("Hide tokens after step", self)
        self.hide_box.setToolTip("Hide the tokens that merges after the timeline's step make")
        for box in (self.unreachable_box, self.hide_box):
            box.toggled.connect(self._request_soon)

        self.table = QTableView(self)
        self.table.setAccessibleName("Vocabulary")
        self.table.setModel(self.proxy)
        configure_table(self.table, monospace_font())
        self.warmer = GlyphWarmer(self.table)
        self._jobs_after_paint = AfterPaint(self.table.viewport(), self)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # Rows this view selects itself (the hub's token, a kept selection after a new order)
        # are not sent back to the hub: only the user's selection is news to it.
        self._programmatic = False
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        header = self.table.horizontalHeader()
        # Sorting is ours (off the GUI thread), not the view's: a header click only moves the
        # indicator. Unsorted (id order) until the user clicks a header.
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(True)
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        header.sortIndicatorChanged.connect(self._request_soon)
        cells = self.table.fontMetrics()
        # Each width fits its widest cell, and its title beside the sort indicator.
        arrow = header.style().pixelMetric(header.style().PixelMetric.PM_HeaderMarkSize)
        # (The titles are measured in the header's bold font: the style sheet's.)
        bold = QFont(header.font())
        bold.setBold(True)
        titles = QFontMetrics(bold)
        widths = {0: "000,000", 1: "W" * 12, 2: "000", 3: "special", 4: "0,000,000", 5: "yes"}
        for col, sample in widths.items():
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            title = titles.horizontalAdvance(model.HEADERS[col]) + arrow + 16
            header.resizeSection(col, max(cells.horizontalAdvance(sample) + 16, title))
        # The token column keeps its width in a narrow window (the last columns scroll).
        header.setStretchLastSection(True)

        controls = QHBoxLayout()
        controls.setSpacing(10)
        controls.addWidget(self.filter_edit, 1)
        # The two boxes under the filter, not beside it: in one row they held the column
        # wider than a large font leaves room for.
        boxes = QHBoxLayout()
        boxes.addWidget(self.unreachable_box)
        boxes.addWidget(self.hide_box)
        boxes.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        title_row = QHBoxLayout()
        title_row.setSpacing(8)
        title_row.addWidget(self.heading)
        title_row.addWidget(self.title, 1)
        layout.addLayout(title_row)
        layout.addLayout(controls)
        layout.addLayout(boxes)
        layout.addWidget(self.table)

        self.proxy.modelReset.connect(self._update_title)
        self.proxy.stale.connect(self._request_soon)
        model.rowsInserted.connect(self._after_insert)
        model.hold_appends = self._hold_appends
        self._catch_up = single_shot(self, CATCH_UP_MS, model.catch_up)
        self.table.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.table.installEventFilter(self)  # a key or a click in the table: rows catch up
        self._step_drawn = hub.state.step  # the step the rows' greying was drawn for
        hub.merges_added.connect(self._on_merges_added)
        hub.token_selected.connect(self._on_token_selected)
        hub.step_changed.connect(self._on_step)
        hub.phase_changed.connect(self._catch_up_now)
        hub.phase_changed.connect(self._check_reachability)
        hub.reset.connect(self._on_reset)
        self._check_reachability()  # a tokenizer may be on show already
        self._update_title()

    # ------------------------------------------------------------- order
    def spec(self) -> ViewSpec:
        """What the controls ask for now."""
        header = self.table.horizontalHeader()
        col = header.sortIndicatorSection()
        descending = header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
        hide = self.hub.state.step if self.hide_box.isChecked() else None
        return ViewSpec(
            self.filter_edit.text(),
            col if 0 <= col < self.model.columnCount() else -1,
            descending,
            self.unreachable_box.isChecked(),
            hide,
        )

    @Slot(str)
    def _on_filter(self, text: str) -> None:
        self._timer.start(FILTER_DEBOUNCE_MS)
        self._update_title()

    @Slot()
    def _request_soon(self, *args: object) -> None:
        if not self._timer.isActive() or self._timer.remainingTime() > ORDER_DEBOUNCE_MS:
            self._timer.start(ORDER_DEBOUNCE_MS)
        self._update_title()

    @Slot()
    def _request_now(self) -> None:
        self._catch_up_now()  # an order covers every token published
        self._order_error = None
        spec = self.spec()
        if spec.trivial:
            # Every row in id order: nothing to compute, and the rows pass straight through.
            self._orders.cancel()
            if not self.proxy.spec.trivial or spec != self.proxy.spec:
                self._apply(spec, None)
            self._update_title()
            return
        self._orders.submit(_order_job(self.proxy, spec))
        self._update_title()

    @Slot(object)
    def _on_order(self, result: tuple) -> None:
        self._order_error = None
        spec, order = result
        if spec != self.spec():
            self._request_soon()  # the controls moved on meanwhile
        self._apply(spec, order)

    @Slot(str)
    def _on_order_failed(self, message: str) -> None:
        # Said where "filtering…" was, and kept there until the next order: rows left as
        # they were would otherwise pass for the filter's.
        self._order_error = message
        self._update_title()

    def _apply(self, spec: ViewSpec, order: np.ndarray | None) -> None:
        keep = self.selected_token_id()
        before = self.proxy.spec
        self.proxy.set_order(spec, order)
        if keep is not None and self._select_shown(keep):
            return  # the selected row, in view wherever the new order put it
        if _what_is_shown(before) != _what_is_shown(spec):
            # Another order or filter: its first rows, not whatever rows now sit at the old
            # scroll offset (mid-list in 200,000 tokens).
            self.table.scrollToTop()

    @property
    def busy(self) -> bool:
        """An order is being computed (or about to be)."""
        return self._orders.busy or self._timer.isActive()

    @property
    def warming(self) -> bool:
        """The fonts of the shown vocabulary's scripts are still being loaded."""
        return self._jobs_after_paint.pending or self._glyphs.busy or self.warmer.pending > 0

    # ----------------------------------------------------- reachability
    @Slot()
    def _on_reset(self) -> None:
        self._catch_up.stop()  # the model was reset: no rows wait
        # Another tokenizer's rows: its first ones, not those at the last one's offset.
        self.table.scrollToTop()
        self._step_drawn = self.hub.state.step
        self._jobs_after_paint.cancel()
        self._reach.cancel()
        self._glyphs.cancel()
        self.warmer.stop()
        self._reach_key = None
        self._check_reachability()

    @Slot()
    def _check_reachability(self, *args: object) -> None:
        state = self.hub.state
        if state.phase not in _COMPLETE:
            self._update_title()
            return
        key = (id(state.loaded), id(state.record), state.published)
        if key == self._reach_key:
            return
        self._reach_key = key
        loaded, n = state.loaded, state.published

        def start_jobs() -> None:
            if loaded is not None:
                tokenizer = loaded.tokenizer
                self._reach.submit(_reach_job(key, lambda: tokenizer))
                self._glyphs.submit(_samples_job(key, lambda: tokenizer.vocab))
            else:
                # subtle: the run's vocabulary is built in the jobs' threads, not in the frame
                # that ends the run (docs/responsiveness.md). The state is read there as
                # it is then: the record only grows, so its first n merges are this run's;
                # after a reset or a load meanwhile the result is for an old key and is
                # dropped.
                self._reach.submit(_reach_job(key, run_tokenizer_at(state, n)))
                self._glyphs.submit(_samples_job(key, lambda: state.vocab_at(n)))
            self._update_title()

        # The jobs start once the table has repainted for what it now shows (AfterPaint).
        self._jobs_after_paint.call(start_jobs)
        self._update_title()

    @Slot(object)
    def _on_reach(self, result: tuple) -> None:
        key, ids = result
        if key != self._reach_key:
            return
        self.model.set_unreachable(ids)
        if self.unreachable_box.isChecked():
            self._request_soon()
        self._update_title()

    @Slot(object)
    def _on_samples(self, result: tuple) -> None:
        key, samples = result
        if key == self._reach_key:
            # The fonts of every script in the vocabulary, loaded between events now rather
            # than inside the first repaint that shows them (glyph_warmup).
            self.warmer.start(samples)

    # ------------------------------------------------------ while merging
    def _hold_appends(self) -> bool:
        """Whether a frame's new rows may wait (``VocabTableModel.hold_appends``): while
        merging, in id order, with rows below the last one in view. If so, the rows are added
        within CATCH_UP_MS.

        subtle: adding rows repaints the whole table, though the rows in view stay the same:
        that was a third of the GUI thread's CPU in each frame while training
        (docs/responsiveness.md)."""
        if self.hub.state.phase is not Phase.MERGING or not self.proxy.spec.trivial:
            return False
        last_in_view = self.table.rowAt(self.table.viewport().height() - 1)
        if not 0 <= last_in_view < self.proxy.rowCount() - 1:
            return False
        if not self._catch_up.isActive():
            self._catch_up.start()
        return True

    @Slot()
    def _catch_up_now(self, *args: object) -> None:
        self._catch_up.stop()
        self.model.catch_up()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        # subtle: before the table handles the key (Ctrl+End goes to the last row) or the
        # focus a click gives it, the rows that wait are added, so the user moves among them.
        if watched is self.table and event.type() in _CATCH_UP_EVENTS:
            self._catch_up_now()
        return False

    @Slot(int)
    def _on_scrolled(self, value: int) -> None:
        if value >= self.table.verticalScrollBar().maximum():
            self._catch_up_now()  # the end is in view: the rows that wait belong there

    @Slot(int, int)
    def _on_merges_added(self, first: int, last: int) -> None:
        if self.model.total_rows != self.model.rowCount():
            self._update_title()  # rows wait: the count still grows

    # -------------------------------------------------------------- step
    @Slot(int)
    def _on_step(self, step: int) -> None:
        drawn, self._step_drawn = self._step_drawn, step
        if self._greying_changes(drawn, step):
            self.table.viewport().update()  # greys the tokens made after the step
        if self.hide_box.isChecked():
            self._request_soon()

    def _greying_changes(self, before: int, after: int) -> bool:
        """Whether a row in view was made by a merge between the two steps, so that it is
        greyed at one and not at the other (rows of ranks >= the step are greyed)."""
        low, high = min(before, after), max(before, after)
        if low == high:
            return False
        n = self.proxy.rowCount()
        first = self.table.rowAt(0)
        if first < 0:
            return False  # no rows
        last = self.table.rowAt(self.table.viewport().height() - 1)
        for row in range(first, (last if last >= 0 else n - 1) + 1):
            source = self.proxy.mapToSource(self.proxy.index(row, 0))
            rank = self.model.rank_at(source.row()) if source.isValid() else None
            if rank is not None and low <= rank < high:
                return True
        return False

    # ------------------------------------------------------------- title
    @Slot()
    def _after_insert(self, *args: object) -> None:
        # Lay the new rows out now rather than on Qt's zero timer, which would run after this
        # frame's repaint and cost a second repaint of the window.
        lay_out_rows_now(self.table)
        self._update_title()

    def status_text(self) -> str:
        """The counts after the title: tokens, shown, unreachable, and what is under way."""
        total, shown = self.model.total_rows, self.proxy.rowCount()
        parts = [counted(total, "token")]
        if not self.proxy.spec.trivial and shown != total:  # a sort alone hides none
            parts.append(f"{shown:,} shown")
        unreachable = self.model.unreachable
        if unreachable is not None:
            parts.append(f"{len(unreachable):,} unreachable")
        elif self._reach.awaiting or self._jobs_after_paint.pending:
            parts.append("checking reachability…")
        if self.ordering:
            parts.append("sorting…" if self.spec().sort_column >= 0 else "filtering…")
        elif self._order_error is not None:
            parts.append(f"could not filter or sort: {self._order_error}")
        return " · ".join(parts)

    @property
    def ordering(self) -> bool:
        """An order is asked for and its result has not arrived: what "filtering…" says.
        (``busy`` also counts a job thread still winding down after delivering.)"""
        return self._orders.awaiting or self._timer.isActive()

    @Slot()
    def _update_title(self, *args: object) -> None:
        self.title.setText(self.status_text())

    # --------------------------------------------------------- selection
    @Slot(int)
    def _on_token_selected(self, token_id: int) -> None:
        if self.hub.state.selected_in is None:
            self.select_token(token_id)
        else:
            # An id of another tokenizer (the editor's picked one): the run's token of the
            # same id is another token, so no row of this table is it.
            self.table.clearSelection()

    def select_token(self, token_id: int) -> bool:
        """Select the row of ``token_id`` and scroll to it; False if there is no such token."""
        self._catch_up_now()
        row = self.model.row_of_id(token_id)
        if row is None:
            return False
        if not self.proxy.mapFromSource(self.model.index(row, 0)).isValid():
            # Hidden by the filter or a toggle: show every row (the sort is kept only when
            # that needs no computing).
            for widget in (self.filter_edit, self.unreachable_box, self.hide_box):
                widget.blockSignals(True)
            self.filter_edit.clear()
            self.unreachable_box.setChecked(False)
            self.hide_box.setChecked(False)
            for widget in (self.filter_edit, self.unreachable_box, self.hide_box):
                widget.blockSignals(False)
            header = self.table.horizontalHeader()
            header.blockSignals(True)
            header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
            header.blockSignals(False)
            self._timer.stop()
            self._orders.cancel()
            self.proxy.set_order(ViewSpec(), None)
            self._update_title()
        return self._select_shown(token_id)

    def _select_shown(self, token_id: int) -> bool:
        row = self.model.row_of_id(token_id)
        if row is None:
            return False
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if not index.isValid():
            return False
        self._programmatic = True
        try:
            # The row selected, the current cell kept in its column (selectRow moved it to the
            # id: Ctrl+C after clicking a token copied its id).
            column = max(self.table.currentIndex().column(), 0)
            flags = QItemSelectionModel.SelectionFlag
            self.table.selectionModel().setCurrentIndex(
                index.siblingAtColumn(column), flags.ClearAndSelect | flags.Rows
            )
        finally:
            self._programmatic = False
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    @Slot()
    def _on_selection(self, *args: object) -> None:
        if self._programmatic:
            return
        token_id = self.selected_token_id()
        state = self.hub.state
        if token_id is None or (state.selected_token == token_id and state.selected_in is None):
            return  # nothing selected, or the hub's token already (no echo)
        self.hub.select_token(token_id)

    def selected_token_id(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        source = self.proxy.mapToSource(rows[0])
        return self.model.token_at(source.row())[0] if source.isValid() else None

    def shutdown(self) -> None:
        self._timer.stop()
        self._jobs_after_paint.cancel()
        self._orders.shutdown()
        self._reach.shutdown()
        self._glyphs.shutdown()
        self.warmer.stop()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.shutdown()
        super().closeEvent(event)
