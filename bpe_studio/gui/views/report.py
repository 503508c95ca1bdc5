"""The Report page: bytes per token of up to four tokenizers on a set of sample texts.

What it does: four :class:`~.picker.TokenizerPicker` boxes (the last two may be empty) pick the
tokenizers; the samples shipped in ``resources/samples`` (English prose, Chinese, Python code,
web text, emoji-heavy text) plus the first megabyte of the loaded corpus are encoded with each
(``report.compute_report``, on a :class:`~..jobs.latest.LatestJob`, only while the page is
shown; cells kept from the report before, a paused run's step counted from its whole
tokenizer's spans: ``model.report_cells``) and shown as a table and a grouped bar chart
(one ``BarGraphItem`` per tokenizer, updated in place). Export CSV and Export PNG write
atomically; a failure goes to the window's error dialog through :attr:`ReportView.error`.
What it leaves out: the numbers themselves (``core.explain.report``), choosing files of samples.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt, Signal, Slot
from PySide6.QtGui import QColor, QFont, QFontMetrics
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.explain.report import (
    CORPUS_LIMIT,
    Report,
    Sample,
    bundled_samples,
    compute_report,
    corpus_sample,
    left_out_note,
    report_csv,
    unknown_note,
)
from ...core.io.atomic import atomic_write_bytes, atomic_write_text
from ...core.io.write_failure import write_failure
from ...core.text.display import plural
from ..model.app_model import AppModel
from ..model.lab_records import CorpusRef
from ..model.panes import report_pane
from ..model.report_cells import ReportCells
from ..model.run_tokenizer import RUN_LABEL
from ..model.tokenizer_source import TokenizerSource
from .common import not_a_tab_stop, points, steady_label, title_label
from .lazy_page import LazyPage
from .picker import ENCODE_LOCK, NONE, RUN, Choice, FailedPick, TokenizerPicker, preset_key
from .save_chooser import choose_and_save
from .theme import colours, muted, themed

CHART_TITLE = "Bytes per token (higher: fewer tokens for the same text)"
WAITING_HINT = "The chart appears once the samples are encoded"
DEFAULTS = (preset_key("gpt2"), preset_key("cl100k_base"), preset_key("o200k_base"), NONE)
GROUP_WIDTH = 0.8  # of the unit between two samples' groups of bars
LEGEND_TOP = 4  # pixels between the chart's top and its legend
SWATCH_ROOM = 40  # pixels a legend entry takes beside its name: its swatch and spacing


def _unique_labels(labels: list[str]) -> list[str]:
    """The labels, a repeated one numbered: the report's columns must be distinct. A number
    is skipped where it would give a label already there ("hf (2)" beside "hf" twice: a
    folder copied next to its original)."""
    taken = set(labels)
    seen: set[str] = set()
    out = []
    for label in labels:
        name, k = label, 1
        while name in seen:
            k += 1
            name = f"{label} ({k})"
            while name in taken and name != label:
                k += 1
                name = f"{label} ({k})"
        seen.add(name)
        out.append(name)
    return out


def shares(needs: list[int], width: float, beside: int, least: int = 24) -> list[int]:
    """The room of each of ``needs`` (pixels), each with ``beside`` more, in ``width``: a
    name that fits in an equal share keeps what it needs, and what it leaves goes to the
    longer ones, equally (a long name beside short ones was cut to a quarter of the width).

    >>> shares([50, 50, 900], 700, 40)
    [50, 50, 480]
    >>> shares([400, 400], 500, 40)
    [210, 210]
    """
    rooms = [0] * len(needs)
    left, open_ = width - beside * len(needs), sorted(range(len(needs)), key=needs.__getitem__)
    while open_:
        share = left / len(open_)
        first = open_[0]
        if needs[first] > share:  # every one left needs more than a share: they split it
            for i in open_:
                rooms[i] = max(int(share), least)
            break
        rooms[first] = needs[first]
        left -= needs[first]
        open_.pop(0)
    return rooms


class Computed(NamedTuple):
    """A report, why the corpus has no row in it (None: it has one, or there is none), and
    the slots' choices that could not be built (their columns left out)."""

    report: Report
    corpus_missing: str | None = None
    unbuilt: tuple[FailedPick, ...] = ()


def corpus_row(corpus: CorpusRef) -> Sample:
    """The corpus's first megabyte of text, however it is kept, named as the app names it:
    the compression plot's in-sample text."""
    return corpus_sample(
        corpus.paths,
        CORPUS_LIMIT,
        text_field=corpus.text_field,
        label=corpus.label,
        records=corpus.records,
    )


def build_report(
    choices: list[Choice],
    corpus: CorpusRef | None,
    is_stale: Callable[[], bool] = lambda: False,
    picking: Sequence[bool] | None = None,
    cells: ReportCells | None = None,
) -> Computed | FailedPick | None:
    """Load the tokenizers and samples and compute the report (in a background job); the
    pick under way (``picking``, by choice; all of them if None) whose tokenizer could not be
    built, if one could not. A slot's own choice that cannot be built any more (the run
    discarded, a file deleted since) leaves its column out, as a corpus that cannot be read
    (a record without the text field, a file gone) leaves its row out, saying why. ``cells``
    keeps the cells from one report to the next (a paused run's step changes its column
    alone) and counts the run's step from its whole tokenizer's spans."""
    samples: list[Sample] = bundled_samples()
    missing = None
    if corpus is not None:
        try:
            samples.append(corpus_row(corpus))
        except (OSError, ValueError) as e:  # CorpusError is a ValueError
            missing = f"{corpus.label}: {e.strerror or e}" if isinstance(e, OSError) else str(e)
    names = _unique_labels([c.label for c in choices])
    tokenizers, unbuilt = [], []
    runs: dict[int, tuple[TokenizerSource, int | None]] = {}
    for name, choice, picked in zip(names, choices, picking or [True] * len(choices)):
        if is_stale():
            return None
        tok = choice.build()
        if isinstance(tok, FailedPick):
            # A pick under way that fails is undone by the page; the slot's own choice
            # failing leaves its column out, and the others are reported.
            if picked:
                return tok
            unbuilt.append(tok)
            continue
        tokenizers.append((name, tok))
        if choice.run is not None:
            runs[id(tok)] = (choice.run, choice.step)
    with ENCODE_LOCK:
        if cells is None:
            report = compute_report(samples, tokenizers, is_stale)
        else:
            report = compute_report(samples, tokenizers, is_stale, cells.counter(runs, is_stale))
            if report is not None:
                cells.done({s.name for s in samples})
    return None if report is None else Computed(report, missing, tuple(unbuilt))


class ReportView(LazyPage):
    """Tokenizer choices, export buttons, the table and the grouped bar chart."""

    computed = Signal(object)  # Report now shown
    saved = Signal(str)  # a status line: what was written where
    failure = ("Could not compute the report", "Report")

    def __init__(self, hub: AppModel, parent: QWidget | None = None) -> None:
        super().__init__("bpe-report", hub, parent)
        self.report: Report | None = None
        self._cells = ReportCells()  # only the page's job uses it

        self.choices = [
            TokenizerPicker(hub, pane=report_pane(i), default=default, allow_none=i >= 2)
            for i, default in enumerate(DEFAULTS)
        ]
        for i, choice in enumerate(self.choices):
            # Shown by a colour swatch only; a combo box's name is its value, so the slot is
            # said in its description.
            choice.setAccessibleName(f"Tokenizer {i + 1}")
            choice.setAccessibleDescription(f"Tokenizer {i + 1} of the report")
        self._unbuilt: tuple[FailedPick, ...] = ()  # the columns the result shown left out
        # The last slot takes the run's tokenizer when there first is one, unless the user
        # has chosen something for it by then.
        self._last_slot_chosen = False
        self._picked_for_the_user = False  # the last slot's choice is this page's own
        self.choices[-1].activated.connect(self._on_last_slot_chosen)
        self.csv_button = QPushButton("Export CSV…")
        self.png_button = QPushButton("Export PNG…")
        for button in (self.csv_button, self.png_button):
            button.setEnabled(False)
        self.csv_button.clicked.connect(self._choose_csv)
        self.png_button.clicked.connect(self._choose_png)
        self.status = muted(steady_label(QLabel(" "), "0" * 50))
        # Under the table: what a tokenizer turns into its unknown token ([UNK]), which its
        # bytes per token alone would show as compression, and the samples a tokenizer could
        # not encode (their cells are left out).
        self.unknown_note = muted(QLabel())
        self.unknown_note.setTextFormat(Qt.TextFormat.PlainText)  # "<unk>" is no tag
        self.unknown_note.setWordWrap(True)
        self.unknown_note.setVisible(False)

        self.table = QTableWidget(0, 0)
        self.table.setAccessibleName("Bytes per token of each sample")
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setTabKeyNavigation(False)  # Tab to the next control, arrows between cells
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)

        self.chart = pg.PlotWidget()
        self.chart.setAccessibleName(CHART_TITLE)
        not_a_tab_stop(self.chart)
        plot = self.chart.getPlotItem()
        plot.setLabel("left", "bytes per token")
        plot.setMouseEnabled(x=False, y=False)
        plot.hideButtons()
        plot.showGrid(x=False, y=True, alpha=0.2)
        self._value_font = QFont()
        self._value_font.setPointSizeF(points(8))
        self.legend = plot.addLegend(offset=(10, LEGEND_TOP), colCount=4)
        self._tallest = 0.0  # the tallest bar drawn (bytes per token); 0: none
        plot.getViewBox().sigResized.connect(self._fit_headroom)
        self.bars: list[pg.BarGraphItem] = []
        self.values: list[pg.TextItem] = []  # the number above each bar
        for _slot in self.choices:
            bars = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.2, pen=pg.mkPen(None))
            plot.addItem(bars)
            self.bars.append(bars)
        # Until a report is drawn: what the chart waits for, in place of empty axes.
        self.hint = pg.TextItem(WAITING_HINT, anchor=(0.5, 0.5))
        self.hint.setTextWidth(360)
        plot.addItem(self.hint, ignoreBounds=True)
        self._swatches: list[QLabel] = []

        top = QHBoxLayout()
        top.addWidget(title_label("Report"))
        for choice in self.choices:
            swatch = QLabel()
            swatch.setFixedSize(12, 12)
            self._swatches.append(swatch)
            top.addWidget(swatch)
            top.addWidget(choice)
            self._watch(choice)
        top.addStretch(1)
        top.addWidget(self.csv_button)
        top.addWidget(self.png_button)
        self._body = body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.chart)
        body.addWidget(self.table)
        body.setSizes([600, 200])
        body.setChildrenCollapsible(False)
        body.setHandleWidth(8)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(body, 1)
        layout.addWidget(self.unknown_note)
        themed(self, ReportView._restyle)
        self._show_empty(WAITING_HINT)

    def _restyle(self) -> None:
        """The chart, its legend and the swatches in the scheme's colours."""
        c = colours()
        self.chart.setBackground(c.plot_background)
        plot = self.chart.getPlotItem()
        plot.setTitle(CHART_TITLE, color=c.plot_text)
        for axis in ("left", "bottom"):
            plot.getAxis(axis).setPen(pg.mkPen(c.plot_axis))
            plot.getAxis(axis).setTextPen(pg.mkPen(c.plot_text))
        self.legend.setLabelTextColor(c.plot_text)
        back = QColor(c.plot_background)
        back.setAlpha(220)
        self.legend.setBrush(pg.mkBrush(back))
        self.legend.setPen(pg.mkPen(c.border))
        for bars, swatch, colour in zip(self.bars, self._swatches, c.series):
            bars.setOpts(brush=pg.mkBrush(colour))
            swatch.setStyleSheet(f"background:{colour}; border-radius:2px;")
        self.hint.setColor(c.plot_muted)
        if self.report is not None:
            self._draw(self.report)  # the legend's entries and the values in these colours

    def _show_empty(self, hint: str) -> None:
        """No report drawn: ``hint`` says what the chart waits for, with no axes or legend."""
        plot = self.chart.getPlotItem()
        for bars in self.bars:
            bars.setOpts(x=np.zeros(0), height=np.zeros(0))
        for item in self.values:
            plot.removeItem(item)
        self.values = []
        self.legend.clear()
        self.legend.setVisible(False)
        self._tallest = 0.0
        for axis in ("left", "bottom"):
            plot.showAxis(axis, False)
        plot.setXRange(0, 1, padding=0)
        plot.setYRange(0, 1, padding=0)
        self.hint.setText(hint)
        self.hint.setPos(0.5, 0.5)
        self.hint.setVisible(True)

    @property
    def showing_hint(self) -> bool:
        return bool(self.hint.isVisible())

    def bind(self, hub: AppModel) -> None:
        super().bind(hub)
        hub.corpus_changed.connect(self.request)

    @Slot()
    def _on_last_slot_chosen(self) -> None:
        self._last_slot_chosen = True
        self._picked_for_the_user = False

    @Slot()
    def _on_run_tokenizer_changed(self) -> None:
        last = self.choices[-1]
        if self.hub.state.shown is not None and not self._last_slot_chosen:
            self._last_slot_chosen = True
            if last.current() is None:
                self._picked_for_the_user = True
                last.pick(RUN)  # its choice_changed asks for the report again
                return
        super()._on_run_tokenizer_changed()

    def _quiet_failure(self, failed: FailedPick) -> bool:
        # The run's tokenizer this page picked by itself, hidden, whose run was discarded
        # before the page was first shown (a monkey audit: a dialog about a pick the user
        # never made): the choice goes back without a word.
        return (
            self._picked_for_the_user and failed.key == RUN and failed.pane == self.choices[-1].pane
        )

    # ------------------------------------------------------------ requests
    def _submit(self, throttle: bool = False) -> None:
        chosen = self._picked()
        # A slot's own choice that cannot be built (the run's with no run: discarded, or a
        # new one not yet merged; a file deleted since) is left out by the job, saying why.
        picking = [self._picking(c) for c in chosen]
        self._submitting(chosen)
        self._dirty = False
        corpus = self.hub.state.corpus_ref
        encoding = f"Encoding the samples with {', '.join(c.label for c in chosen)}…"
        self.status.setText(encoding)
        if self.report is None:  # the chart says what it waits for (else it keeps its report)
            self._show_empty(encoding)
        cells = self._cells
        self._job.submit(
            lambda is_stale: build_report(chosen, corpus, is_stale, picking, cells),
            throttle=throttle,
        )

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        super()._on_failed(message)
        # subtle: a report kept on screen was of the choices before, which the pickers no
        # longer show: kept (and exportable), it would pass for theirs. The chart says why.
        self._clear(self.status.text())

    def _result_outdated(self) -> None:
        # Its numbers are of a file's older version, under the name the new one has: not
        # exported until worked out anew.
        for button in (self.csv_button, self.png_button):
            button.setEnabled(False)

    def _forget_result(self) -> None:
        if self.report is None:
            return
        self._clear("The run's tokenizer is gone: pick the tokenizers to compare")

    def _clear(self, hint: str) -> None:
        """No report shown or exported: the chart says ``hint`` in its place."""
        self.report = None
        self.table.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
        self.unknown_note.setVisible(False)
        for button in (self.csv_button, self.png_button):
            button.setEnabled(False)
        self._show_empty(hint)

    def _cannot_build(self, pane: str, key: str) -> str | None:
        return next((u.what for u in self._unbuilt if (u.pane, u.key) == (pane, key)), None)

    # ------------------------------------------------------------- results
    @Slot(object)
    def _on_done(self, computed: object) -> None:
        if isinstance(computed, FailedPick):
            self._pick_failed(computed)
            return
        assert isinstance(computed, Computed)  # what this page's job returns
        report = computed.report
        self._picks_shown()
        self._unbuilt = computed.unbuilt
        # A slot's choice that cannot be built: the dialog only if the user just picked it
        # there, else the status line says it (the run discarded under a slot).
        announce = [u.what for u in computed.unbuilt if u.pane in self._announce]
        self._announce.clear()
        if announce:
            self.error.emit(self.failure[1], announce[0])
        # Each said once: the run's tokenizer in two slots is one reason.
        whats = list(dict.fromkeys(u.what for u in computed.unbuilt))
        left_out_columns = "".join(f"; left out: {what}" for what in whats)
        if not report.tokenizers:
            # Nothing was built: an empty table under "0 tokenizers" was no report.
            said = "; ".join(whats)
            self._clear(f"No tokenizer to report: {said}")
            self.status.setText(f"{self.failure[0]}: no tokenizer could be built: {said}")
            return
        self.report = report
        self._fill_table(report)
        self._draw(report)
        for button in (self.csv_button, self.png_button):
            button.setEnabled(True)
        left_out = len(report.left_out)
        self.status.setText(
            f"{plural(len(report.samples), 'sample')} × "
            f"{plural(len(report.tokenizers), 'tokenizer')}; hover a cell for its counts"
            + (f"; {plural(left_out, 'cell')} left out (see below the table)" if left_out else "")
            + left_out_columns
            + (f"; no corpus row: {computed.corpus_missing}" if computed.corpus_missing else "")
        )
        self.computed.emit(report)

    def _fill_table(self, report: Report) -> None:
        # The cell chosen stays chosen where the table keeps its shape: a report computed again
        # for another step (the timeline's keys act from this tab) cleared it.
        kept = (self.table.currentRow(), self.table.currentColumn())
        shape = (self.table.rowCount(), self.table.columnCount())
        self.table.clear()
        self.table.setRowCount(len(report.samples))
        self.table.setColumnCount(len(report.tokenizers))
        # The unit on a line of its own, and the run's name and step each on theirs: on one
        # line with a run's "(step 20,000)" the header was wider than its column at
        # 1280 x 800 and was cut at both ends.
        heads = [
            t.replace(f"{RUN_LABEL}: ", f"{RUN_LABEL}:\n", 1).replace(" (step ", "\n(step ")
            if t.startswith(f"{RUN_LABEL}: ")
            else t
            for t in report.tokenizers
        ]
        self.table.setHorizontalHeaderLabels([f"{t}\n(bytes/token)" for t in heads])
        for col, name in enumerate(report.tokenizers):
            # A window narrower than the columns' names (1024 wide) still cuts a long one at
            # both ends (a header is centred); hovering it gives the whole name.
            header_item = self.table.horizontalHeaderItem(col)
            if header_item is not None:
                header_item.setToolTip(name)
        self.table.setVerticalHeaderLabels(list(report.samples))
        why = {(x.sample, x.tokenizer): x.reason for x in report.left_out}
        for row, sample in enumerate(report.samples):
            for col, name in enumerate(report.tokenizers):
                cell = report.find(sample, name)
                if cell is None:
                    item = QTableWidgetItem("—")
                    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                    reason = f"{name} cannot encode {sample}: {why[sample, name]}"
                    item.setToolTip(f"<p>{html.escape(reason)}</p>")  # rich text: it wraps
                    self.table.setItem(row, col, item)
                    continue
                item = QTableWidgetItem(f"{cell.bytes_per_token:.2f}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                tip = (
                    f"{plural(cell.tokens, 'token')} for {plural(cell.bytes, 'byte')} "
                    f"({plural(cell.characters, 'character')})"
                )
                if (unknown := cell.unknown) is not None:
                    tip += (
                        f"; {unknown.count:,} of them {unknown.token}, for {unknown.characters:,} "
                        "characters it does not encode, counted as if it did"
                    )
                    tip = f"<p>{html.escape(tip)}</p>"  # rich text: "<unk>" is no tag
                item.setToolTip(tip)
                self.table.setItem(row, col, item)
        if kept[0] >= 0 and kept[1] >= 0 and shape == (len(report.samples), len(report.tokenizers)):
            self.table.setCurrentCell(*kept)
        note = "\n".join(n for n in (unknown_note(report), left_out_note(report)) if n)
        self.unknown_note.setText(note)
        self.unknown_note.setVisible(bool(note))
        # The table is as tall as its rows (no scroll bar); the chart takes the rest.
        self.table.resizeRowsToContents()
        rows = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        header = self.table.horizontalHeader().sizeHint().height()
        height = rows + header + 2 * self.table.frameWidth() + 2
        self.table.setMaximumHeight(height)
        total = sum(self._body.sizes())
        if total > height:
            self._body.setSizes([total - height, height])

    def _draw(self, report: Report) -> None:
        n = len(report.tokenizers)
        width = GROUP_WIDTH / max(n, 1)
        xs = np.arange(len(report.samples), dtype=float)
        self.legend.clear()
        self.legend.setVisible(True)
        self.hint.setVisible(False)
        plot = self.chart.getPlotItem()
        for axis in ("left", "bottom"):
            plot.showAxis(axis, True)
        value_colour = colours().plot_text
        for item in self.values:
            plot.removeItem(item)
        self.values = []
        for i, bars in enumerate(self.bars):
            if i >= n:
                bars.setOpts(x=np.zeros(0), height=np.zeros(0), width=width)
                continue
            name = report.tokenizers[i]
            # A cell left out has no bar (a bar of 0 would read as a measured 0.00).
            found = [(x, report.find(s, name)) for x, s in zip(xs.tolist(), report.samples)]
            at = np.array([x for x, c in found if c is not None], dtype=float)
            heights = np.array([c.bytes_per_token for _, c in found if c is not None])
            offset = (i - (n - 1) / 2) * width
            bars.setOpts(x=at + offset, height=heights, width=width * 0.92)
            for x, h in zip((at + offset).tolist(), heights.tolist()):
                value = pg.TextItem(f"{h:.2f}", color=value_colour, anchor=(0.5, 1.0))
                value.setFont(self._value_font)
                value.setPos(x, h)
                plot.addItem(value)
                self.values.append(value)
        self._tallest = max((c.bytes_per_token for c in report.cells), default=1.0)
        plot.setXRange(-0.6, len(report.samples) - 0.4, padding=0)
        self._fit_headroom()

    def _fit_names(self) -> None:
        """Each sample's name under its group, cut in the middle ("…") to the group's width:
        pyqtgraph drops a label that runs past the axis's end, so a long corpus file's name
        left the last group unnamed, in the exported PNG too (which has no table)."""
        if self.report is None:
            return
        samples = self.report.samples
        axis = self.chart.getPlotItem().getAxis("bottom")
        # (The range is one unit a group; the last name has 0.4 of one on either side.)
        unit = self.chart.getPlotItem().getViewBox().width() / max(len(samples), 1)
        metrics = QFontMetrics(axis.style.get("tickFont") or axis.font())
        room = max(int(0.8 * unit) - 4, 1)
        cut = Qt.TextElideMode.ElideMiddle
        names = [metrics.elidedText(s, cut, room) or "…" for s in samples]
        axis.setTicks([list(enumerate(names))])
        self._fit_legend()

    def _fit_legend(self) -> None:
        """The legend's entries, each tokenizer's name cut in the middle ("…") to its share of
        the chart's width: a long folder's name pushed the entries after it past the chart's
        edge, leaving their bars without a key, in the exported PNG too. (Entries are made
        anew: a label's text set shorter keeps its column as wide as before.)"""
        assert self.report is not None
        names = self.report.tokenizers
        self.legend.clear()
        if not names:
            return
        width = self.chart.getPlotItem().getViewBox().width()
        font = QFont(self.chart.font())
        size = str(self.legend.opts["labelTextSize"])  # as pyqtgraph writes it: "9pt"
        if size.endswith("pt"):
            font.setPointSizeF(float(size.removesuffix("pt")))
        metrics = QFontMetrics(font)
        # (a swatch, and the legend's margins and spacing, beside each name)
        needs = [metrics.horizontalAdvance(n) + 4 for n in names]  # (+4: elidedText rounds)
        rooms = shares(needs, width - 30, SWATCH_ROOM)
        for bars, name, room in zip(self.bars, names, rooms):
            shown = metrics.elidedText(name, Qt.TextElideMode.ElideMiddle, room) or "…"
            self.legend.addItem(bars, html.escape(shown, quote=False))

    def _fit_headroom(self, *_: object) -> None:
        """The value axis's top leaves the legend (over the chart's top) clear of the tallest
        bar and its number: the room is the legend's height in pixels, which a share of the
        chart is not in a short chart or at a large scale. A chart too short for both hides
        the legend: the swatches beside the pickers name the colours too. (The samples'
        names are fitted to the width here too.)"""
        self._fit_names()
        if self._tallest <= 0:
            return
        height = self.chart.getPlotItem().getViewBox().height()
        number = max((v.boundingRect().height() for v in self.values), default=0.0)
        legend = LEGEND_TOP + self.legend.boundingRect().height()
        fits = height - (legend + number + LEGEND_TOP) >= height / 3
        self.legend.setVisible(fits)
        below = max(height - (legend if fits else 0.0) - number - LEGEND_TOP, 1.0)
        self.chart.getPlotItem().setYRange(0, self._tallest * height / below, padding=0)

    # -------------------------------------------------------------- export
    def export_csv(self, path: str | os.PathLike[str]) -> bool:
        """Write the report as CSV (atomically); False, with the error dialog, on failure."""
        if self.report is None:
            return False
        try:
            atomic_write_text(path, report_csv(self.report))
        except OSError as error:
            self.error.emit("Export CSV", write_failure(path, error))
            return False
        self.saved.emit(f"Report saved as {os.fspath(path)}")
        return True

    def export_png(self, path: str | os.PathLike[str]) -> bool:
        """Write the chart as a PNG image (atomically); False, with the error dialog, on
        failure."""
        if self.report is None:
            return False
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        ok = self.chart.grab().save(buffer, "PNG")
        buffer.close()
        try:
            if not ok:
                raise OSError("the chart could not be rendered as PNG")
            atomic_write_bytes(path, bytes(data.data()))
        except OSError as error:
            self.error.emit("Export PNG", write_failure(path, error))
            return False
        self.saved.emit(f"Chart saved as {os.fspath(path)}")
        return True

    @Slot()
    def _choose_csv(self) -> None:
        choose_and_save(self, "Export report as CSV", "report.csv", "CSV (*.csv)", self.export_csv)

    @Slot()
    def _choose_png(self) -> None:
        choose_and_save(
            self, "Export chart as PNG", "report.png", "PNG image (*.png)", self.export_png
        )

    def shutdown(self) -> None:
        self._timer.stop()
        self._job.shutdown()
