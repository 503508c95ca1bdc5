"""The Vocabulary lab's four charts: categories, byte lengths, the usage curve, the overlap.

What it does: :class:`LabCharts` draws, with pyqtgraph, in a 2×2 grid: the ordinary tokens
per category as horizontal bars, largest on top, the part with a leading space darker, each
category's count in its label (clicking a bar emits ``category_clicked``); the byte-length
histogram; the usage curve (the ordinary tokens a corpus used, by rank of count, on a log
scale) with the never-used tail marked as a shaded band to the vocabulary's end; and the
overlap with a second tokenizer per category as stacked bars (only in the first, shared,
only in the second). The plots are built when the charts are first shown (or rendered to a
PNG); until then each ``show_*`` only keeps what to draw. Bars are updated in place
(``BarGraphItem.setOpts``); counts go into axis labels, not text items (as the pair chart
does). What each chart draws is kept (``drawn_*``) for the tests and the CSV.
:meth:`LabCharts.png` renders the grid, each title whole (wrapped to its plot's width: on
screen a title is cut to it, with the whole text in the plot's tooltip). The charts take the
colour scheme's plot colours and :func:`lab_colours`' bars, and restyle when the scheme
changes (``theme.themed``).
What it leaves out: where the numbers come from (``model.vocab_lab``).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRect, Qt, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPalette,
    QPixmap,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import QGridLayout, QWidget

from ...core.explain.categories import label
from ...core.explain.vocabulary import Makeup
from ..model.lab_records import OverlapResult, UsageResult
from .common import monospace_font, not_a_tab_stop, points
from .pair_chart import linear_ticks, log_ticks, spaced_ticks
from .theme import Colours, colours, themed

MIN_BARS_WIDTH = 230  # px the categories' bars and legend need beside their labels
TAIL_SHARE = 0.999  # of the tokens the byte-length view shows at least
# ... or this share, where the last tenth of a percent still spans most of the axis (a Chinese
# run's box-drawing lines of 50-220 bytes left 98.5% of its tokens in the axis's first 8%).
WIDE_TAIL_SHARE = 0.99
TITLE_POINTS = 10.0
TAIL_ALPHA = 48  # the never-used band: its colour (the "only B" one) this opaque
TAIL_LABEL_MARGIN = 6  # px kept clear on each side of the band's label inside it
BAR_PIXELS = 15  # the least height a labelled bar needs
MORE = "more categories"
# What the usage and overlap charts say until a corpus, a second tokenizer, is chosen.
CHOOSE_CORPUS = "Choose a corpus to see how it uses the vocabulary"
CHOOSE_AGAINST = "Choose a second tokenizer to compare vocabularies"
PLOT_MIN = (260, 200)  # each plot's least width and height
SPACING = 6  # between the plots of the grid
PNG_MARGIN = 8  # around the exported image's title line


@dataclass(frozen=True)
class LabColours:
    """The lab's own chart colours in one scheme: the category bars (``bar``; the part with a
    leading space ``leading``), the overlap's three parts, and the never-used band."""

    bar: str
    leading: str
    only_a: str
    shared: str
    only_b: str
    tail_text: str  # the band's label, text on the plot's background


def lab_colours(c: Colours) -> LabColours:
    """The lab's colours for the scheme ``c``. Every bar reads at 3:1 or more on the plot's
    background (WCAG's least for graphics), and the leading-space part stands apart from
    the rest of its bar: darker in the light scheme, lighter in the dark one."""
    return LabColours(
        bar=c.bar,
        leading="#b4c3ff" if c.dark else "#2c3e9e",
        only_a=c.bar,
        shared="#868e96",
        only_b=c.accent,
        tail_text=c.accent_text,
    )


def style_plot(plot: pg.PlotItem) -> None:
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.setMouseEnabled(x=False, y=False)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        # subtle: an axis that resizes to its labels while painting paints the plot twice.
        axis.setStyle(autoExpandTextSpace=False, autoReduceTextSpace=False)
    plot.getAxis("bottom").setHeight(40)


def _colour_plot(widget: pg.PlotWidget, c: Colours) -> None:
    """A plot's background, axes and axis labels in the scheme's colours."""
    widget.setBackground(c.plot_background)
    plot = widget.getPlotItem()
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setPen(pg.mkPen(c.plot_axis))
        axis.setTextPen(pg.mkPen(c.plot_text))  # its label's colour too


def _colour_legend(legend: pg.LegendItem, c: Colours) -> None:
    legend.setLabelTextColor(c.plot_text)
    back = QColor(c.plot_background)
    back.setAlpha(200)
    legend.setBrush(pg.mkBrush(back))
    for sample, text in legend.items:
        text.setText(text.text)  # rendered anew in the colour just set
        sample.update()


def _note(plot: pg.PlotItem) -> pg.TextItem:
    note = pg.TextItem("", color=colours().plot_muted, anchor=(0.5, 0.5))
    note.setTextWidth(260)
    plot.addItem(note, ignoreBounds=True)
    return note


def _values_shown(plot: pg.PlotItem, shown: bool) -> None:
    """An empty chart shows no axis values (pyqtgraph's default range, 0 to 1, means nothing)."""
    for side in ("bottom", "left"):
        plot.getAxis(side).setStyle(showValues=shown)


def _bars(brush: str) -> pg.BarGraphItem:
    return pg.BarGraphItem(
        x0=np.zeros(0), y=np.zeros(0), width=np.zeros(0), height=0.72, pen=pg.mkPen(None),
        brush=pg.mkBrush(brush),
    )  # fmt: skip


def _cut(name: str, most: int | None) -> str:
    """``name`` at most ``most`` characters long, "…" ending it where cut."""
    return name if most is None or len(name) <= most else name[: most - 1] + "…"


def _wrapped(text: str, metrics: QFontMetrics, room: int) -> list[str]:
    """``text`` on lines of whole words no wider than ``room`` (a wider word on its own)."""
    lines: list[str] = []
    for word in text.split(" "):
        joined = f"{lines[-1]} {word}" if lines else word
        if lines and metrics.horizontalAdvance(joined) <= room:
            lines[-1] = joined
        else:
            lines.append(word)
    return lines


class LabCharts(QWidget):
    """The four charts (see the module docstring)."""

    # A category's bar: its name; the bar of the rest: the names of the categories it holds.
    category_clicked = Signal(object)  # str | tuple[str, ...]

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._axis_font = monospace_font()
        title_font = QFont()
        title_font.setPointSizeF(points(TITLE_POINTS))
        self._title_metrics = QFontMetrics(title_font)
        self._titles: dict[int, str] = {}
        self._labels: dict[int, list[str]] = {}  # each plot's bottom labels, longest first
        # The plots are built when the charts are first shown (or rendered): four pyqtgraph
        # plots were a quarter of building the app's window, for a tab many never open.
        self.widgets: list[pg.PlotWidget] = []
        self._plots: list[pg.PlotItem] = []
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(SPACING)
        # The grid's least size before its plots are there, as they will make it.
        self.setMinimumSize(2 * PLOT_MIN[0] + SPACING, 2 * PLOT_MIN[1] + SPACING)

        #: What the charts draw now (the tests and the CSV read these).
        self.drawn_categories: dict[str, tuple[int, int]] = {}
        self.drawn_lengths: dict[int, int] = {}
        self.drawn_usage: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))
        self.drawn_tail: tuple[int, int] | None = None
        self.drawn_overlap: dict[str, tuple[int, int, int]] = {}
        self._cat_rows: list[tuple[str, int, int]] = []  # name, tokens, with leading space
        self._cat_heading = "Categories"
        self._cat_note_text = "Pick a tokenizer to see what it is made of"
        self._makeup_shown = False  # whether a make-up (not a note) is shown
        self._usage: tuple[UsageResult | None, int, str, str] = (
            None, 0, "Usage", CHOOSE_CORPUS
        )  # fmt: skip
        self._ov_rows: list[tuple[str, int, int, int]] = []
        self._ov_heading = "Overlap"
        self._ov_note_text = CHOOSE_AGAINST
        self._ov_names = ("", "")
        self._ov_words: tuple[str, ...] = ()  # the overlap legend's words now
        # A chart's key whose words are cut or hidden, whole (its tooltip's second line).
        self._legend_tips: dict[int, str] = {}
        self._ov_shown = False  # whether an overlap (not a note) is shown
        themed(self, LabCharts._restyle)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        self._build()
        super().showEvent(event)

    def _build(self) -> None:
        """The four plots, drawing what the charts hold (once)."""
        if self.widgets:
            return
        self.widgets = [pg.PlotWidget(background=colours().plot_background) for _ in range(4)]
        plots = [w.getPlotItem() for w in self.widgets]
        self.categories_plot, self.lengths_plot, self.usage_plot, self.overlap_plot = plots
        self._plots = plots
        for plot in plots:
            style_plot(plot)
        names = ("Categories", "Byte lengths", "Usage by rank of count", "Overlap")
        for i, widget in enumerate(self.widgets):
            widget.setAccessibleName(f"{names[i]} chart")
            not_a_tab_stop(widget)
            widget.setMinimumSize(*PLOT_MIN)
            self._grid.addWidget(widget, i // 2, i % 2)

        c = self.categories_plot
        c.invertY(True)
        c.showGrid(x=True, y=False, alpha=0.15)
        c.setLabel("bottom", "ordinary tokens")
        lab = lab_colours(colours())
        self._cat_bars, self._cat_lead = _bars(lab.bar), _bars(lab.leading)
        c.addItem(self._cat_bars)
        c.addItem(self._cat_lead)
        c.getAxis("left").setStyle(tickFont=self._axis_font)
        # Bottom right, beside the smallest categories' bars (the largest are on top).
        self._cat_legend = c.addLegend(offset=(-6, -6))
        self._cat_words: tuple[str, str] = ("", "")  # the legend's words now (_redraw_categories)
        self._cat_note = _note(c)
        c.vb.sigResized.connect(self._redraw_categories)
        c.scene().sigMouseClicked.connect(self._on_click)

        n = self.lengths_plot
        n.showGrid(x=False, y=True, alpha=0.15)
        n.setLabel("bottom", "bytes")
        n.setLabel("left", "tokens")
        self._len_bars = pg.BarGraphItem(
            x=np.zeros(0), height=np.zeros(0), width=0.8, pen=pg.mkPen(None),
            brush=pg.mkBrush(colours().bar),
        )  # fmt: skip
        n.addItem(self._len_bars)
        self._len_note = _note(n)

        u = self.usage_plot
        u.setLogMode(x=False, y=True)
        u.showGrid(x=True, y=True, alpha=0.15)
        u.setLabel("bottom", "rank (ordinary tokens by count)")
        u.setLabel("left", "count (log)")
        self._curve = u.plot([], [], pen=pg.mkPen(colours().curve, width=2))
        self._curve.setDownsampling(auto=True, method="peak")
        self._curve.setClipToView(True)
        self._tail = pg.LinearRegionItem((0, 1), movable=False)
        u.addItem(self._tail, ignoreBounds=True)
        self._tail_label = pg.TextItem("", anchor=(0.5, 0.0))
        u.addItem(self._tail_label, ignoreBounds=True)
        self._usage_note = _note(u)
        u.vb.sigResized.connect(self._space_usage_ticks)
        self._usage_range = (0.0, 1.0)

        o = self.overlap_plot
        o.invertY(True)
        o.showGrid(x=True, y=False, alpha=0.15)
        o.setLabel("bottom", "distinct ordinary tokens (by their bytes)")
        self._ov_bars = [_bars(lab.only_a), _bars(lab.shared), _bars(lab.only_b)]
        for bars in self._ov_bars:
            o.addItem(bars)
        o.getAxis("left").setStyle(tickFont=self._axis_font)
        # Bottom right: the largest bars are on top (the smallest categories leave room below).
        self._ov_legend = o.addLegend(offset=(-6, -6))
        self._ov_note = _note(o)
        o.vb.sigResized.connect(self._redraw_overlap)
        self._restyle()
        self._draw_makeup()
        self._draw_usage()
        self._draw_overlap()

    def _restyle(self) -> None:
        """Every chart in the scheme's colours: backgrounds, axes, titles, legends, notes,
        bars, the curve and the never-used band (plots not built yet: when they are built)."""
        if not self.widgets:
            return
        c = colours()
        lab = lab_colours(c)
        for widget in self.widgets:
            _colour_plot(widget, c)
        for legend in (self._cat_legend, self._ov_legend):
            _colour_legend(legend, c)
        for bars, colour in (
            (self._cat_bars, lab.bar),
            (self._cat_lead, lab.leading),
            *zip(self._ov_bars, (lab.only_a, lab.shared, lab.only_b)),
        ):
            bars.setOpts(brush=pg.mkBrush(colour))
        self._curve.setPen(pg.mkPen(c.curve, width=2))
        band = QColor(lab.only_b)
        band.setAlpha(TAIL_ALPHA)
        self._tail.setBrush(pg.mkBrush(band))
        for line in self._tail.lines:
            line.setPen(pg.mkPen(lab.only_b, width=1))
        self._tail.update()
        self._tail_label.setColor(lab.tail_text)
        for note in (self._cat_note, self._len_note, self._usage_note, self._ov_note):
            note.setColor(c.plot_muted)
        for plot in self._plots:
            plot.titleLabel.text = ""  # so that the same title is set again, in this colour
            self._fit_title(plot)

    # ---------------------------------------------------------- make-up
    def show_makeup(self, makeup: Makeup | None, heading: str, note: str = "") -> None:
        """The categories and lengths of ``makeup`` (None: empty charts with ``note``)."""
        self._cat_heading = heading
        if makeup is None:
            self._cat_rows = []
            self.drawn_categories, self.drawn_lengths = {}, {}
        else:
            self._cat_rows = [(k, c.tokens, c.leading_space) for k, c in makeup.categories.items()]
            self.drawn_categories = {k: (t, s) for k, t, s in self._cat_rows}
            self.drawn_lengths = dict(sorted(makeup.length_histogram.items()))
        self._cat_note_text = note if makeup is None else ""
        self._makeup_shown = makeup is not None
        self._draw_makeup()

    def _draw_makeup(self) -> None:
        if not self.widgets:
            return
        self._cat_note.setText(self._cat_note_text)
        _values_shown(self.categories_plot, self._makeup_shown)
        _values_shown(self.lengths_plot, self._makeup_shown)
        self._redraw_categories()
        self._draw_lengths(self._cat_note_text)

    def _fitting(self, plot: pg.PlotItem, rows: int) -> int:
        height = plot.vb.height()
        return rows if height <= 0 else max(1, min(rows, int(height // BAR_PIXELS)))

    @Slot()
    def _redraw_categories(self, *args: object) -> None:
        if not self.widgets:
            return
        rows = self._cat_rows
        plot = self.categories_plot
        total = sum(t for _, t, _ in rows)
        heading = self._cat_heading
        counted_label = [f"ordinary tokens ({total:,})"] if rows else []
        self._label(plot, [*counted_label, "ordinary tokens", "tokens"])
        # The legend in words that fit the view box beside the smaller bars (at 1280 x 800
        # the long ones ran past its left edge, which hid the swatches), else none.
        legend = self._cat_legend
        for words in (("with a leading space", "without"), ("leading space", "none")):
            if self._cat_words != words:
                legend.clear()
                legend.addItem(self._cat_lead, words[0])
                legend.addItem(self._cat_bars, words[1])
                self._cat_words = words
            if legend.width() + 16 <= plot.vb.width():
                break
        fits = legend.width() + 16 <= plot.vb.width()
        legend.setVisible(bool(rows) and fits)
        fit = self._fitting(plot, len(rows))
        shown = list(rows[:fit])
        if len(rows) > fit:  # the last bar stands for the rest
            rest = rows[fit - 1 :]
            shown[-1] = ("", sum(t for _, t, _ in rest), sum(s for _, _, s in rest))
            self._rest = [name for name, _, _ in rest]
        else:
            self._rest = []
        self._cat_shown = shown
        ys = np.arange(len(shown), dtype=float)
        tokens = np.array([t for _, t, _ in shown], dtype=float)
        leading = np.array([s for _, _, s in shown], dtype=float)
        self._cat_bars.setOpts(x0=np.zeros(len(shown)), y=ys, width=tokens, height=0.72)
        self._cat_lead.setOpts(x0=np.zeros(len(shown)), y=ys, width=leading, height=0.72)
        names = [label(name) if name else f"{len(self._rest)} {MORE}" for name, _, _ in shown]
        labels = [f"{n}  {t:>9,}" for n, (_, t, _) in zip(names, shown)]
        metrics = QFontMetrics(self._axis_font)
        widest = max((metrics.horizontalAdvance(t) for t in labels), default=0)
        widget = self.widgets[self._plots.index(plot)]
        if widget.width() - widest < MIN_BARS_WIDTH:
            # A narrow chart (1280 x 800) keeps its bars and legend: the counts, which the
            # bars and the x axis also give (and the CSV exactly), go.
            labels = names
            widest = max((metrics.horizontalAdvance(t) for t in labels), default=0)
        plot.getAxis("left").setTicks([[(float(i), text) for i, text in enumerate(labels)]])
        plot.getAxis("left").setWidth(min(max(widest + 14, 40), 300))
        self._title(plot, heading)
        top = float(tokens.max()) if len(tokens) else 1.0
        plot.setXRange(0, top * 1.02, padding=0)
        plot.setYRange(-0.6, max(len(shown), 1) - 0.4, padding=0)
        plot.getAxis("bottom").setTicks([linear_ticks(0, top * 1.02)])
        self._centre(self._cat_note, plot)

    def _draw_lengths(self, note: str) -> None:
        plot, lengths = self.lengths_plot, self.drawn_lengths
        xs = np.array(list(lengths), dtype=float)
        hs = np.array(list(lengths.values()), dtype=float)
        self._len_bars.setOpts(x=xs, height=hs, width=0.8)
        if lengths:
            longest = max(lengths)
            commonest = max(lengths, key=lambda n: lengths[n])
            # A few very long tokens (o200k's run to 128 bytes) would squeeze every bar into
            # the left edge: the view ends where 99.9% of the tokens are, and says so.
            cumulative = np.cumsum(hs)

            def reach(share: float) -> int:
                return int(xs[int(np.searchsorted(cumulative, share * cumulative[-1]))])

            share, end = TAIL_SHARE, reach(TAIL_SHARE)
            if end > 3 * reach(WIDE_TAIL_SHARE):
                share, end = WIDE_TAIL_SHARE, reach(WIDE_TAIL_SHARE)
            if longest > 2 * end:
                title = f"Byte lengths, {share:.1%} shown"
                detail = f"bytes · most often {commonest:,} · longest {longest:,}"
            else:
                end, title = longest, f"Byte lengths, 1 to {longest:,}"
                detail = f"bytes · most often {commonest:,}"
            self._title(plot, title)
            self._label(plot, [detail, f"bytes · most often {commonest:,}", "bytes"])
            plot.setXRange(0.4, end + 0.6, padding=0)
            plot.setYRange(0, float(hs.max()) * 1.05, padding=0)
            plot.getAxis("left").setTicks([linear_ticks(0, float(hs.max()) * 1.05)])
        else:
            self._title(plot, "Byte lengths")
            self._label(plot, ["bytes"])
        self._len_note.setText(note)
        self._centre(self._len_note, plot)

    # ------------------------------------------------------------ usage
    def show_usage(
        self, usage: UsageResult | None, ordinary: int, heading: str, note: str = ""
    ) -> None:
        """``usage``'s ranked counts and its never-used tail to ``ordinary`` tokens."""
        self._usage = (usage, ordinary, heading, note)
        if usage is None or not ordinary:
            self.drawn_usage, self.drawn_tail = (np.zeros(0), np.zeros(0)), None
        else:
            counts = usage.ranked_counts.astype(float)
            self.drawn_usage = (np.arange(1, len(counts) + 1, dtype=float), counts)
            used = len(counts)
            self.drawn_tail = (used, ordinary) if ordinary > used else None
        self._draw_usage()

    def _draw_usage(self) -> None:
        if not self.widgets:
            return
        usage, ordinary, heading, note = self._usage
        plot = self.usage_plot
        _values_shown(plot, usage is not None and bool(ordinary))
        if usage is None or not ordinary:
            self._curve.setData([], [])
            self._tail.setVisible(False)
            self._tail_label.setText("")
            self._title(plot, heading)
            self._usage_note.setText(note)
            self._centre(self._usage_note, plot)
            return
        ranks, counts = self.drawn_usage
        self._curve.setData(ranks, counts)
        used = len(counts)
        self._tail.setVisible(self.drawn_tail is not None)
        top = math.log10(float(counts.max())) if used else 1.0
        top = max(top, 1.0)
        if self.drawn_tail is not None:
            self._tail.setRegion((used + 0.5, ordinary + 0.5))
        self._title(plot, f"{heading}: {used:,} of {ordinary:,} used")
        plot.setXRange(0, ordinary + 0.5, padding=0.01)
        self._usage_range = (0.0, top)
        plot.setYRange(0.0, top, padding=0.04)
        self._place_tail_label()
        plot.getAxis("bottom").setTicks([linear_ticks(0, ordinary)])
        self._space_usage_ticks()
        self._usage_note.setText("")

    def _place_tail_label(self) -> None:
        """The never-used band's label: inside the band where it fits on one line or two;
        else left of it, pointing at it (a narrow band: the curve is low there). (Placed by
        the band's share alone, a band of 40-50% put it left, across the curve's start and
        the axis.)"""
        label, tail = self._tail_label, self.drawn_tail
        if tail is None:
            label.setText("")
            return
        used, ordinary = tail
        top = self._usage_range[1]
        count, share = f"{ordinary - used:,}", f"{100 * (ordinary - used) / ordinary:.1f}%"
        vb = self.usage_plot.vb
        span = vb.viewRect().width()
        per_rank = vb.width() / span if span > 0 else 0.0
        room = (ordinary - used) * per_rank - 2 * TAIL_LABEL_MARGIN
        metrics = QFontMetrics(label.textItem.font())
        for text in (f"never used: {count} ({share})", f"never used:\n{count} ({share})"):
            wide = max(metrics.horizontalAdvance(line) for line in text.split("\n"))
            if wide <= room:
                label.setAnchor((0.5, 0.0))
                label.setText(text)
                label.setPos((used + ordinary + 1) / 2, top)
                return
        label.setAnchor((1.0, 0.0))
        label.setText(f"never used: {count} ({share}) →")
        label.setPos(used, top)

    @Slot()
    def _space_usage_ticks(self, *args: object) -> None:
        if not self.widgets:
            return
        self._place_tail_label()
        low, high = self._usage_range
        height = self.usage_plot.vb.height()
        per_unit = height / ((high - low) * 1.08) if height > 0 and high > low else 1e9
        line = QFontMetrics(self.usage_plot.getAxis("left").font()).height() + 2
        self.usage_plot.getAxis("left").setTicks(
            [spaced_ticks(log_ticks(low, high), per_unit, line)]
        )
        self._centre(self._usage_note, self.usage_plot)

    # ---------------------------------------------------------- overlap
    def show_overlap(
        self,
        overlap: OverlapResult | None,
        heading: str,
        note: str = "",
        names: tuple[str, str] = ("", ""),
    ) -> None:
        """``overlap``'s shares per category (``names``: the two tokenizers')."""
        self._ov_names = names
        if overlap is None:
            self._ov_rows, self.drawn_overlap = [], {}
        else:
            self._ov_rows = [
                (k, s.only_this, s.shared, s.only_other)
                for k, s in overlap.overlap.categories.items()
            ]
            self.drawn_overlap = {k: (sh, a, b) for k, a, sh, b in self._ov_rows}
        self._ov_heading = heading
        self._ov_note_text = note if overlap is None else ""
        self._ov_shown = overlap is not None
        self._draw_overlap()

    def _draw_overlap(self) -> None:
        if not self.widgets:
            return
        self._ov_note.setText(self._ov_note_text)
        _values_shown(self.overlap_plot, self._ov_shown)
        self._ov_legend.clear()
        self._ov_words = ()
        self._redraw_overlap()

    @Slot()
    def _redraw_overlap(self, *args: object) -> None:
        if not self.widgets:
            return
        rows, plot = self._ov_rows, self.overlap_plot
        fit = self._fitting(plot, len(rows))
        shown = list(rows[:fit])
        if len(rows) > fit:
            rest = rows[fit - 1 :]
            shown[-1] = (
                "",
                sum(r[1] for r in rest),
                sum(r[2] for r in rest),
                sum(r[3] for r in rest),
            )
        ys = np.arange(len(shown), dtype=float)
        left = np.zeros(len(shown))
        for i, bars in enumerate(self._ov_bars):
            widths = np.array([r[i + 1] for r in shown], dtype=float)
            bars.setOpts(x0=left.copy(), y=ys, width=widths, height=0.72)
            left += widths
        rest_count = len(rows) - fit + 1
        labels = [label(r[0]) if r[0] else f"{rest_count} {MORE}" for r in shown]
        plot.getAxis("left").setTicks([[(float(i), text) for i, text in enumerate(labels)]])
        widest = max(
            (QFontMetrics(self._axis_font).horizontalAdvance(t) for t in labels), default=0
        )
        plot.getAxis("left").setWidth(min(max(widest + 14, 40), 240))
        self._fit_overlap_legend(plot)
        self._title(plot, self._ov_heading)
        self._label(
            plot,
            [
                "distinct ordinary tokens (by their bytes)",
                "distinct ordinary tokens",
                "distinct tokens",
                "tokens",
            ],
        )
        top = float(left.max()) if len(left) else 1.0
        plot.setXRange(0, top * 1.25, padding=0)  # room for the legend on the right
        plot.setYRange(-0.6, max(len(shown), 1) - 0.4, padding=0)
        plot.getAxis("bottom").setTicks([linear_ticks(0, top * 1.25)])
        self._centre(self._ov_note, plot)

    def _fit_overlap_legend(self, plot: pg.PlotItem) -> None:
        """The legend's words with each tokenizer's name cut as far as the view box needs,
        else no legend (at 1024 x 700 the whole names ran left past the view box, over the
        category labels: the swatches were hidden, the words cut); the whole key is then in
        the chart's tooltip."""
        legend, tips = self._ov_legend, self._legend_tips
        tips.pop(id(plot), None)
        if not self._ov_shown:
            legend.setVisible(False)
            return
        a, b = self._ov_names
        whole = (f"only {a}", "shared", f"only {b}")
        room = plot.vb.width() - 16
        for most in (None, 16, 12, 8):
            words = (f"only {_cut(a, most)}", "shared", f"only {_cut(b, most)}")
            if words != self._ov_words:
                legend.clear()
                for bars, text in zip(self._ov_bars, words, strict=True):
                    legend.addItem(bars, text)
                self._ov_words = words
            if legend.width() <= room:
                break
        legend.setVisible(legend.width() <= room)
        if not legend.isVisible() or words != whole:
            tips[id(plot)] = "Colours: " + ", ".join(whole)

    # ------------------------------------------------------------- misc
    def _title(self, plot: pg.PlotItem, text: str) -> None:
        """Title ``plot`` with ``text``, cut with "…" to the plot's width: a title wider than
        its plot would widen the plot past its widget, which then shows it cut."""
        self._titles[id(plot)] = text
        self._fit_title(plot)

    def _title_room(self, plot: pg.PlotItem) -> int:
        """The title sits over the view box, beside the left axis: that is its room."""
        widget = self.widgets[self._plots.index(plot)]
        return widget.width() - int(plot.getAxis("left").width()) - 28

    def _fit_title(self, plot: pg.PlotItem) -> None:
        whole = text = self._titles.get(id(plot), "")
        room = self._title_room(plot)
        if room > 40:
            text = self._title_metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
        tips = [whole] if text != whole else []
        tips += [self._legend_tips[id(plot)]] if id(plot) in self._legend_tips else []
        self.widgets[self._plots.index(plot)].setToolTip("\n".join(tips))
        if text != plot.titleLabel.text:
            plot.setTitle(text, color=colours().plot_text, size=f"{points(TITLE_POINTS):.1f}pt")

    def _wrap_titles(self) -> list[pg.PlotItem]:
        """Each title cut on screen, whole on as many lines as it needs (an image has no
        tooltip): its row made that tall. The plots changed, to fit again afterwards."""
        changed = []
        metrics = self._title_metrics
        for plot in self._plots:
            text = self._titles.get(id(plot), "")
            room = self._title_room(plot)
            if room <= 40 or metrics.horizontalAdvance(text) <= room:
                continue
            lines = _wrapped(text, metrics, room)
            size = f"{points(TITLE_POINTS):.1f}pt"
            rich = "<br>".join(html.escape(line) for line in lines)
            plot.setTitle(rich, color=colours().plot_text, size=size)
            # subtle: setTitle fixes the title's row at one line's height.
            height = plot.titleLabel.item.boundingRect().height() + 4
            plot.titleLabel.setMaximumHeight(height)
            plot.layout.setRowFixedHeight(0, height)
            plot.layout.activate()  # laid out now: the grab below paints at once
            changed.append(plot)
        return changed

    def _label(self, plot: pg.PlotItem, texts: list[str]) -> None:
        """Label the bottom axis with the first of ``texts`` (longest first) its view box has
        room for, the last one else (a label wider than its plot was cut at 1280 x 800)."""
        self._labels[id(plot)] = texts
        self._fit_label(plot)

    def _fit_label(self, plot: pg.PlotItem) -> None:
        texts = self._labels.get(id(plot))
        if not texts:
            return
        axis = plot.getAxis("bottom")
        metrics = QFontMetrics(axis.label.font())
        room = plot.vb.width() - 8
        text = next((t for t in texts if metrics.horizontalAdvance(t) <= room), texts[-1])
        if axis.labelText != text:
            plot.setLabel("bottom", text)
            # subtle: pyqtgraph centres an axis label only when the axis is resized, so a
            # label set afterwards (as the view box's resize sets it) stood where the one
            # before was centred: a longer one ran off the plot's side, cut off.
            axis.resizeEvent()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        for plot in self._plots:
            self._fit_title(plot)
            self._fit_label(plot)

    @staticmethod
    def _centre(note: pg.TextItem, plot: pg.PlotItem) -> None:
        if note.toPlainText():
            (x0, x1), (y0, y1) = plot.vb.viewRange()
            note.setPos((x0 + x1) / 2, (y0 + y1) / 2)
        note.setVisible(bool(note.toPlainText()))

    @Slot(object)
    def _on_click(self, event: object) -> None:
        pos = event.scenePos()  # type: ignore[attr-defined]
        vb = self.categories_plot.vb
        if not vb.sceneBoundingRect().contains(pos):
            return
        point: QPointF = vb.mapSceneToView(pos)
        row = round(point.y())
        shown = getattr(self, "_cat_shown", [])
        if 0 <= row < len(shown) and 0 <= point.x() <= shown[row][1]:
            name = shown[row][0]
            self.category_clicked.emit(name or tuple(self._rest))

    def png(self, title: str = "") -> bytes | None:
        """The four charts as one PNG image, under ``title`` (what they are of: the file
        alone does not say) when given (None if it could not be rendered)."""
        self._build()
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        wrapped = self._wrap_titles()
        try:
            image = self.grab()
        finally:
            for plot in wrapped:  # as on screen again: one line, cut, whole in the tooltip
                plot.titleLabel.text = ""  # so that the title is set again (one line high)
                self._fit_title(plot)
                plot.layout.activate()
        ok = (self._titled(image, title) if title else image).save(buffer, "PNG")
        buffer.close()
        return bytes(data.data()) if ok else None

    def _titled(self, grid: QPixmap, title: str) -> QPixmap:
        """``grid`` under ``title``, wrapped to its width, in the window's colours."""
        ratio = grid.devicePixelRatio()
        width = round(grid.width() / ratio)
        font = QFont(self.font())
        font.setPointSizeF(points(TITLE_POINTS))
        font.setBold(True)
        flags = Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap
        room = QRect(PNG_MARGIN, PNG_MARGIN, width - 2 * PNG_MARGIN, 10_000)
        height = QFontMetrics(font).boundingRect(room, flags, title).height() + 2 * PNG_MARGIN
        out = QPixmap(grid.width(), grid.height() + round(height * ratio))
        out.setDevicePixelRatio(ratio)
        palette = self.palette()
        out.fill(palette.color(QPalette.ColorRole.Window))
        painter = QPainter(out)
        painter.setFont(font)
        painter.setPen(palette.color(QPalette.ColorRole.WindowText))
        painter.drawText(QRect(PNG_MARGIN, PNG_MARGIN, room.width(), height), flags, title)
        painter.drawPixmap(0, height, grid)
        painter.end()
        return out
