"""The pair-frequency chart: the pairs that will be merged next, and how counts decay.

What it does: on the left, the top pairs (20 by default) as horizontal bars, best on top, each
labelled with its readable pair and count; the pair about to be merged is drawn in the accent
colour. They are the pairs *before merge k* of the step the timeline shows (``state.step``),
read from the run's :class:`~bpe_studio.core.train.pair_history.PairHistory`, which the trainer
fills in as it merges: live, replayed or scrubbed, one step shows the same pairs, at once, on
the GUI thread. On the right, the count of each merge against its rank on a log scale with a
cursor at step k. The title says what the chart is waiting for (no run, pre-tokenizing,
failed, a loaded tokenizer without counts); an empty plot shows a short hint instead of axes.
Drawn once per published frame, updated in place (``BarGraphItem.setOpts``,
``PlotDataItem.setData``), never rebuilt. Every text that goes into the plots' rich-text titles
is escaped: byte tokens read ``<e6>``.
What it leaves out: where the pairs come from (the trainer's record, ``core.train.pair_history``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from operator import attrgetter

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, Qt, Slot
from PySide6.QtGui import QFont, QFontMetrics, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from ...core import MergeStep
from ...core.formats.files import TIKTOKEN_SUFFIXES
from ..model.app_model import AppModel
from ..model.file_names import named_file
from ..model.state import LoadedTokenizer, Phase
from ..model.status import compiling_shown, compiling_text
from .common import monospace_font, not_a_tab_stop, plain_text, points, title_label, token_text
from .theme import colours, themed

TOP_K = 20
LOADED_DECAY_NOTE = "Only a trained run knows the count of each merge's pair"
IDLE_NOTE = "Open a corpus and click Train: the pairs about to be merged appear here"
IDLE_DECAY_NOTE = "Each merge's pair count against its rank appears here while training"
COUNTED_WHEN_MERGING = "pairs are counted when merging starts"
PRETOKENIZING_NOTE = f"Pre-tokenizing the corpus: {COUNTED_WHEN_MERGING}"
FAILED_NOTE = "The run failed before merging: no pairs to show"
NO_COUNTS_NOTE = "This run kept no pre-token counts: no pairs to show for this step"
MIN_WIDTH = 540  # px: below this the two plots' titles and axes are cut
_LABEL_CHARS = 12  # longer tokens are cut with "…" in axis labels
_LABEL_WIDTH = 320  # pixels: the widest the bars' labels may be
AXIS_HEIGHT = 40  # px: the bottom axes' tick labels and title
DECAY_AXIS_WIDTH = 56  # px: room for "100k" and the axis title
TITLE_POINTS = 10.0
_RANK, _COUNT = attrgetter("rank"), attrgetter("count")


def loaded_note(loaded: LoadedTokenizer) -> str:
    """Why a loaded tokenizer shows no pairs, naming its files and their format."""
    vocab, merges = loaded.vocab_file, loaded.merges_file
    name = named_file(vocab)
    if merges != vocab:
        files = f"{name} and {merges.name} (GPT-2 files) hold"
    elif vocab.name.lower().endswith(TIKTOKEN_SUFFIXES):
        files = f"{name} (a tiktoken rank file) holds"
    else:
        files = f"{name} (a Hugging Face tokenizer) holds"
    return f"{files} merge ranks, no pair counts: train a tokenizer to see them"


def _accent(text: str) -> str:
    """``text`` in bold and the accent colour, for a rich-text title."""
    return f"<b style='color:{colours().accent_text}'>{html.escape(text)}</b>"


def pair_label(left: bytes, right: bytes) -> str:
    def cut(token: bytes) -> str:
        text = token_text(token)
        return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"

    return f"{cut(left)} + {cut(right)}"


def fitted_pair_label(
    left: bytes, right: bytes, tail: str, metrics: QFontMetrics, room: int
) -> str:
    """``pair_label`` followed by ``tail``, its tokens cut with "…" until it is at most
    ``room`` pixels wide; a short token keeps its width and the long one gets the rest (a
    Han token of 12 characters is twice as wide as a Latin one)."""
    label = f"{pair_label(left, right)}{tail}"
    if metrics.horizontalAdvance(label) <= room:
        return label
    a, b = pair_label(left, right).split(" + ", 1)
    total = max(room - metrics.horizontalAdvance(f" + {tail}"), 2)
    wa, wb = metrics.horizontalAdvance(a), metrics.horizontalAdvance(b)
    if wa <= total // 2:
        wb = total - wa
    elif wb <= total // 2:
        wa = total - wb
    else:
        wa = wb = total // 2
    cut = Qt.TextElideMode.ElideRight
    return (
        f"{metrics.elidedText(a, cut, wa) or '…'} + {metrics.elidedText(b, cut, wb) or '…'}{tail}"
    )


def compact_count(value: float) -> str:
    """``1``, ``20``, ``300``, ``4k``, ``50k``, ``6M``: short tick labels for counts."""
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:g}{suffix}"
    return f"{value:g}"


def linear_ticks(low: float, high: float, most: int = 4) -> list[tuple[float, str]]:
    """At most ``most`` ticks at round values (1, 2 or 5 times a power of ten) from ``low`` to
    ``high``, labelled compactly; none in the last 8% of the range, where a label centred on
    its tick would be cut at the plot's edge."""
    span = high - low
    if span <= 0:
        return [(low, compact_count(low))]
    raw = span / most
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    values = [first + i * step for i in range(int((high - first) / step) + 1)]
    kept = [v for v in values if v <= high - 0.08 * span] or values[:1]
    return [(v, compact_count(v)) for v in kept]


def log_ticks(low: float, high: float) -> list[tuple[float, str]]:
    """Ticks for a log10 axis from ``low`` to ``high`` (log10 units): the powers of ten in
    range, and 2 and 5 times them when fewer than three powers fit, so labels never crowd
    (pyqtgraph's own ticks label fractional powers that overlap over a short range)."""
    first, last = math.floor(low), math.ceil(high)
    steps = (1,) if last - first > 2 else (1, 2, 5)
    ticks = []
    for power in range(first, last + 1):
        for m in steps:
            value = m * 10.0**power
            pos = math.log10(value)
            if low - 1e-9 <= pos <= high + 1e-9 and value >= 1:
                ticks.append((pos, compact_count(value)))
    if len(ticks) < 2:  # a range inside one step of the sequence: its two ends
        ticks = [(p, compact_count(round(10**p))) for p in (low, high)]
    return ticks


def spaced_ticks(
    ticks: list[tuple[float, str]], pixels_per_unit: float, min_pixels: float
) -> list[tuple[float, str]]:
    """The ticks, dropping each one closer than ``min_pixels`` to the last one kept, so
    labels never overlap however short the axis."""
    kept: list[tuple[float, str]] = []
    for tick in ticks:
        if not kept or (tick[0] - kept[-1][0]) * pixels_per_unit >= min_pixels:
            kept.append(tick)
    return kept


def _colour_plot(plot: pg.PlotItem) -> None:
    """The plot's axes in the scheme's colours."""
    c = colours()
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setPen(pg.mkPen(c.plot_axis))
        axis.setTextPen(pg.mkPen(c.plot_text))


def _style_plot(plot: pg.PlotItem) -> None:
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.showGrid(x=True, y=True, alpha=0.15)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        # subtle: by default an axis resizes itself to its tick labels while it paints, which
        # relays out the plot and paints it again: four extra repaints per live update.
        axis.setStyle(autoExpandTextSpace=False, autoReduceTextSpace=False)
    plot.getAxis("bottom").setHeight(AXIS_HEIGHT)


NOTE_WIDTH = 220  # an empty plot's hint, at most (pixels)


def fit_note(note: pg.TextItem, room: float) -> None:
    """Wrap ``note`` to the plot's ``room`` (less a margin either side), at most
    :data:`NOTE_WIDTH`."""
    width = max(60.0, min(float(NOTE_WIDTH), room - 16))
    if note.textItem.textWidth() != width:
        note.setTextWidth(width)


class PairChart(QWidget):
    def __init__(self, hub: AppModel, top_k: int = TOP_K, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.top_k = top_k
        self.setMinimumWidth(MIN_WIDTH)
        self.title = title_label("Pair counts")
        self._pairs: list[tuple[bytes, bytes, int]] = []
        # What the bars show: (history, step, live, ended), or ("pending", step) while the
        # step's row is not recorded yet.
        self._drawn: tuple | None = None
        # The decay curve's points, a plotting cache of the state's record (grown, not copied).
        self._ranks = np.zeros(1024, dtype=np.float64)
        self._counts = np.zeros(1024, dtype=np.float64)
        self._n = 0
        self._decay_title = ""
        self._titles: dict[int, tuple[str, ...]] = {}  # id(plot) -> its title, longest first
        # id(plot) -> plain prefixes (longest first, the shortest still naming the rank) and
        # the pair's text after them: where no variant fits, the words go before the pair
        # does, and only then is the pair's text elided.
        self._elidable: dict[int, tuple[tuple[str, ...], str]] = {}
        title_font = QFont()
        title_font.setPointSizeF(points(TITLE_POINTS))
        self._title_metrics = QFontMetrics(title_font)
        self._all_pairs: list[tuple[bytes, bytes, int]] = []  # the step's pairs, drawn or not
        self._label_room: int | None = None  # how wide their labels were let be
        self._next_marked = True  # the first bar is the pair merged next

        self.pairs_widget = pg.PlotWidget()
        self.pairs_widget.setAccessibleName("Pair counts: the pairs left before the next merge")
        not_a_tab_stop(self.pairs_widget)
        self.pairs_plot = self.pairs_widget.getPlotItem()
        _style_plot(self.pairs_plot)
        self.pairs_plot.invertY(True)
        self.pairs_plot.setMouseEnabled(x=False, y=False)
        self.pairs_plot.showGrid(x=True, y=False, alpha=0.15)
        self.pairs_plot.setLabel("bottom", "pair count")
        self._bars = pg.BarGraphItem(
            x0=np.zeros(0),
            y=np.zeros(0),
            width=np.zeros(0),
            height=0.72,
            pen=pg.mkPen(None),
            brush=pg.mkBrush(colours().bar),
        )
        self.pairs_plot.addItem(self._bars)
        self._axis_font = monospace_font()
        self.pairs_plot.getAxis("left").setStyle(tickFont=self._axis_font)
        self.pairs_plot.getAxis("left").setWidth(80)
        self._pairs_note = self._note_item(self.pairs_plot)
        self.pairs_plot.vb.sigResized.connect(self._on_pairs_resized)

        self.decay_widget = pg.PlotWidget()
        self.decay_widget.setAccessibleName("Pair count of each merge, by merge rank")
        not_a_tab_stop(self.decay_widget)
        self.decay_widget.setMinimumWidth(200)
        self.pairs_widget.setMinimumWidth(MIN_WIDTH - 200 - 6)
        self.decay_plot = self.decay_widget.getPlotItem()
        _style_plot(self.decay_plot)
        self.decay_plot.setLogMode(x=False, y=True)
        self.decay_plot.setLabel("bottom", "merge rank")
        self.decay_plot.setLabel("left", "pair count (log)")
        self.decay_plot.getAxis("left").setWidth(DECAY_AXIS_WIDTH)
        self.decay_plot.vb.sigResized.connect(self._space_decay_ticks)
        self.decay_plot.vb.sigResized.connect(lambda *_: self._fit_title(self.decay_plot))
        self.decay_plot.setMouseEnabled(x=False, y=False)
        self._curve = self.decay_plot.plot([], [])
        self._curve.setDownsampling(auto=True, method="peak")
        self._curve.setClipToView(True)
        self._cursor = pg.InfiniteLine(0, angle=90)
        self.decay_plot.addItem(self._cursor, ignoreBounds=True)
        self._cursor.setVisible(False)
        self._note = self._note_item(self.decay_plot)

        row = QHBoxLayout()
        row.setSpacing(6)
        row.addWidget(self.pairs_widget, 3)
        row.addWidget(self.decay_widget, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addLayout(row)
        hub.reset.connect(self._on_reset)
        hub.updated.connect(self.redraw)
        hub.step_changed.connect(self._on_step)
        themed(self, PairChart._restyle)
        self._on_reset()

    def _restyle(self) -> None:
        """Both plots in the scheme's colours, the bars and titles drawn again with them."""
        c = colours()
        for widget, plot in (
            (self.pairs_widget, self.pairs_plot),
            (self.decay_widget, self.decay_plot),
        ):
            widget.setBackground(c.plot_background)
            _colour_plot(plot)
        self._curve.setPen(pg.mkPen(c.curve, width=2))
        self._cursor.setPen(pg.mkPen(c.accent, width=1))
        for note in (self._pairs_note, self._note):
            note.setColor(c.plot_muted)
        if self._titles:  # built: the bars and titles are drawn anew in these colours
            for plot in (self.pairs_plot, self.decay_plot):
                plot.titleLabel.text = ""  # so that the same title is set again
            self._drawn = None
            self._decay_title = ""
            self.redraw(force=True)

    @staticmethod
    def _note_item(plot: pg.PlotItem) -> pg.TextItem:
        note = pg.TextItem("", anchor=(0.5, 0.5))
        note.setTextWidth(NOTE_WIDTH)
        plot.addItem(note, ignoreBounds=True)
        note.setVisible(False)
        # As wide as the plot has room for (a line no wider than NOTE_WIDTH reads best): a
        # fixed width wider than a narrow plot was cut on both sides.
        plot.vb.sigResized.connect(lambda vb: fit_note(note, vb.width()))
        return note

    def _title_next(self, pairs: list, long: str, short: str, *prefixes: str) -> bool:
        """Title the pairs plot with its first pair, the one merged next: ``long`` or, where
        that does not fit, ``short`` (``{pair}`` and ``{c}``, its count, are filled in), then
        the first of ``prefixes`` (longest first) that leaves the pair whole, else the last
        with the pair's text elided to fit. False, untitled, when there is no pair."""
        if not pairs:
            return False
        a, b, c = pairs[0]
        label = pair_label(a, b)
        fill = {"pair": _accent(label), "c": f"{c:,}"}
        self._set_title(
            self.pairs_plot, long.format(**fill), short.format(**fill), elide=(prefixes, label)
        )
        return True

    def _set_title(
        self,
        plot: pg.PlotItem,
        rich: str,
        *shorter: str,
        elide: tuple[tuple[str, ...], str] | None = None,
    ) -> None:
        """Title ``plot`` with the first of ``rich, *shorter`` that fits its width; where none
        does, the first of ``elide``'s prefixes that leaves its pair whole, else the shortest
        and the pair's text cut to fit (else the last one, cut). A title cut has its whole
        text in the plot's tooltip.

        subtle: pyqtgraph makes a title's width the plot's minimum width, so a long title
        widens the plot past its widget, which then cuts off its right side (bars included)."""
        self._titles[id(plot)] = (rich, *shorter)
        if elide is None:
            self._elidable.pop(id(plot), None)
        else:
            self._elidable[id(plot)] = elide
        self._fit_title(plot)

    def showEvent(self, event: QShowEvent) -> None:
        # A title set while another tab was shown was not fitted (no width then), and
        # showing the tab again resizes nothing: fitted now, or it stays cut at the edge.
        super().showEvent(event)
        for plot in (self.pairs_plot, self.decay_plot):
            self._fit_title(plot)

    def _fit_title(self, plot: pg.PlotItem) -> None:
        variants = self._titles.get(id(plot))
        if not variants:
            return
        widget = self.pairs_widget if plot is self.pairs_plot else self.decay_widget
        chosen = variants[0]
        if widget.isVisible():  # else not laid out yet: its width means nothing
            # The title sits over the plot area, right of the left axis: as wide as it was
            # last set (pyqtgraph fixes it as its maximum at once; the layout follows later).
            room = widget.width() - int(plot.getAxis("left").maximumWidth()) - 16
            metrics = self._title_metrics
            fitting = [v for v in variants if metrics.horizontalAdvance(plain_text(v)) <= room]
            elide = self._elidable.get(id(plot))
            elided = Qt.TextElideMode.ElideRight
            if fitting:
                chosen = fitting[0]
            elif elide is not None:
                # The pair is what the title is for: the words before it go first (a rank of
                # six digits left no room for it after "Next, rank ").
                prefixes, label = elide
                pair = metrics.horizontalAdvance(label)
                prefix = next(
                    (p for p in prefixes if metrics.horizontalAdvance(p) + pair <= room),
                    prefixes[-1],
                )
                rest = room - metrics.horizontalAdvance(prefix)
                # subtle: elidedText measures otherwise than horizontalAdvance, and cut a
                # pair that the prefix was chosen to leave whole by one character.
                whole = pair <= rest
                cut = label if whole else metrics.elidedText(label, elided, rest) or "…"
                chosen = html.escape(prefix) + _accent(cut)
            else:
                chosen = html.escape(metrics.elidedText(plain_text(variants[-1]), elided, room))
        widget.setToolTip("" if chosen == variants[0] else plain_text(variants[0]))
        if chosen != plot.titleLabel.text:
            plot.setTitle(chosen, color=colours().plot_text, size=f"{points(TITLE_POINTS):.1f}pt")
            # subtle: the view laid the plot out at least as wide as the title it had (its
            # minimum width), and lays it out again only when the view is resized: with a
            # shorter title the plot must be fitted to the view again, or it stays wider
            # than the widget, which cuts off the title's pair and the bars' right side.
            central = widget.centralWidget
            if central is not None and central.geometry().width() > widget.range.width():
                central.setGeometry(widget.range)  # the view's own rectangle

    # ------------------------------------------------------------- state
    @Slot()
    def _on_reset(self) -> None:
        self._n = 0
        self._curve.setData([], [])
        self._cursor.setVisible(False)
        self._decay_title = ""  # the last run's title ("Step 5,000") goes with it
        self._draw_decay()
        self.redraw(force=True)

    @Slot(int)
    def _on_step(self, step: int) -> None:
        # The frame's ``updated`` redraws; a step chosen on the timeline comes alone.
        if not self.hub.state.live:
            self.redraw()

    def phase_note(self) -> str:
        """What the pairs plot is waiting for, or "" when it shows pairs."""
        state = self.hub.state
        if state.loaded is not None:
            return loaded_note(state.loaded)
        if state.phase is Phase.IDLE:
            return IDLE_NOTE
        if state.phase is Phase.PRE_TOKENIZING or (
            state.phase is Phase.PAUSED and state.resume_to is Phase.PRE_TOKENIZING
        ):
            if compiling_shown(state):  # what the status line says holds the run up
                return f"{compiling_text().removesuffix('…')}: {COUNTED_WHEN_MERGING}"
            return PRETOKENIZING_NOTE
        if state.phase is Phase.FAILED and not state.published:
            return FAILED_NOTE
        if state.pair_history is None:
            if state.phase in (Phase.STOPPED, Phase.FINISHED) and not state.published:
                return "Nothing was learned: the run ended before its first merge"
            return NO_COUNTS_NOTE
        return ""

    def _live(self) -> bool:
        """The live pairs stand for the step shown: training, following the newest merge."""
        state = self.hub.state
        return state.live and state.phase is Phase.MERGING

    @Slot()
    def redraw(self, force: bool = False) -> None:
        """Draw what changed in the state since the last redraw (once per published frame)."""
        state = self.hub.state
        note = self.phase_note()
        if state.loaded is not None:
            if force:
                self._show_notes(note, LOADED_DECAY_NOTE)
                self._draw_decay()  # its title, in the colours of a new scheme too
            return
        self._add_merges(state.record[self._n : state.published])
        if note:
            self._show_notes(note, IDLE_DECAY_NOTE if not self._n else "")
        else:
            self._show_notes("", "")
            self._draw_step()
        self._draw_decay()
        # subtle: pyqtgraph applies layout and range changes lazily, while it paints, and
        # then paints again; applied here, they cost one repaint instead of four.
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest.value)
        for plot in (self.pairs_plot, self.decay_plot):
            plot.vb.prepareForPaint()

    def _show_notes(self, pairs_note: str, decay_note: str) -> None:
        """A short hint in place of an empty plot (and its meaningless axes)."""
        for plot, item, note in (
            (self.pairs_plot, self._pairs_note, pairs_note),
            (self.decay_plot, self._note, decay_note),
        ):
            if item.isVisible() == bool(note) and item.toPlainText() == note:
                continue
            item.setText(note)
            item.setVisible(bool(note))
            for name in ("left", "bottom"):
                plot.showAxis(name, not note)
            if note:
                plot.setXRange(0, 1, padding=0)
                plot.setYRange(0, 1, padding=0)
                item.setPos(0.5, 0.5)
            elif plot is self.decay_plot:
                self._fit_decay_range()
        if pairs_note:
            self._drawn = None
            self._draw_pairs([])
            self._set_title(self.pairs_plot, "Pair counts")

    # ------------------------------------------------------------- pairs
    def _draw_step(self) -> None:
        state = self.hub.state
        history, k, live = state.pair_history, state.step, self._live()
        assert history is not None  # phase_note said so
        # subtle: the trainer records the pairs before every merge, also after its last one;
        # a run that has ended makes none of them: no bar is "next".
        ended = state.phase in (Phase.FINISHED, Phase.STOPPED) and k >= state.published
        key = (history, k, live, ended)
        if key == self._drawn:
            return
        if k >= len(history):
            # subtle: the trainer writes each row before handing out the merge it precedes,
            # so a published step is always recorded; this only guards a step set by hand.
            if self._drawn != ("pending", k):
                self._drawn = ("pending", k)
                self._bars.setOpts(brushes=None, brush=pg.mkBrush(colours().grey_bar))
                self._set_title(self.pairs_plot, "Counting pairs…")
            return
        self._drawn = key
        pairs = history.top_pairs(k, self.top_k)
        self._draw_pairs(pairs, next_marked=not ended)
        if ended and pairs:
            self._set_title(
                self.pairs_plot,
                f"Pairs left after the last merge ({k:,}): none merged",
                "Pairs left, none merged",
            )
            return
        if live:
            titled = self._title_next(
                pairs, "Next merge: {pair} ({c}) · live", "Next: {pair} ({c})", "Next: ", ""
            )
        else:
            rank = f"{k:,}"
            titled = self._title_next(
                pairs,
                f"Next merge, rank {rank}: {{pair}} ({{c}})",
                f"Next, rank {rank}: {{pair}}",
                f"Next, rank {rank}: ",
                f"Rank {rank}: ",
                f"#{rank}: ",
            )
        if not titled:
            self._set_title(
                self.pairs_plot, f"No pairs left to merge after {k:,} merges", "No pairs left"
            )

    def _bars_that_fit(self) -> int:
        """How many bars the plot's height has room to label, one line each (at least one)."""
        height = self.pairs_plot.vb.height()
        if height <= 0:  # not laid out yet
            return self.top_k
        line = QFontMetrics(self._axis_font).height()
        return max(1, min(self.top_k, int(height // line)))

    def _draw_pairs(self, pairs: list[tuple[bytes, bytes, int]], next_marked: bool = True) -> None:
        # Only the bars that can each carry their label are drawn: an unlabelled bar tells
        # nothing about which pair it is.
        self._all_pairs = pairs
        self._next_marked = next_marked
        self._pairs = pairs[: self._bars_that_fit()]
        n = len(self._pairs)
        counts = np.array([c for _, _, c in self._pairs], dtype=np.float64)
        ys = np.arange(n, dtype=np.float64)
        c = colours()
        marked = 0 if next_marked else -1  # the pair merged next, in the accent colour
        brushes = [pg.mkBrush(c.accent if i == marked else c.bar) for i in range(n)] or None
        self._bars.setOpts(x0=np.zeros(n), y=ys, width=counts, height=0.72, brushes=brushes)
        # Counts go into the axis labels: one axis repaint is far cheaper than a text item per
        # bar, each of which runs Python on every view change. Axis labels are plain text.
        metrics = QFontMetrics(self._axis_font)
        room = self._label_room = self._label_width()
        # The counts are right-aligned (a monospaced font) as wide as the widest drawn.
        digits = max((len(f"{c:,}") for _, _, c in self._pairs), default=1)
        self._labels = [
            fitted_pair_label(a, b, f"  {c:>{digits},}", metrics, room - 16)
            for a, b, c in self._pairs
        ]
        self._label_ticks()
        axis = self.pairs_plot.getAxis("left")
        widest = max((metrics.horizontalAdvance(t) for t in self._labels), default=40)
        # The width only grows while training: each change relays the plot out.
        want = min(max(widest + 16, 60), room)
        if want > axis.width() or axis.width() > room or not self.hub.state.phase.training:
            axis.setWidth(want)
        if not n:
            return
        top = float(counts.max())
        self.pairs_plot.setXRange(0, top * 1.02, padding=0)
        self.pairs_plot.setYRange(-0.6, max(n, 1) - 0.4, padding=0)
        self.pairs_plot.getAxis("bottom").setTicks([linear_ticks(0, top * 1.02)])

    def _label_width(self) -> int:
        """How wide the bars' labels may be: at most 320 pixels, and at most 45% of the chart
        once laid out, so that two long Chinese tokens never leave the bars a sliver."""
        widget = self.pairs_widget
        if not widget.isVisible():
            return _LABEL_WIDTH
        return max(60, min(_LABEL_WIDTH, int(widget.width() * 0.45)))

    @Slot()
    def _on_pairs_resized(self, *args: object) -> None:
        self._fit_title(self.pairs_plot)
        fit = self._bars_that_fit()
        relabel = self._all_pairs and self._label_width() != self._label_room
        if relabel or len(self._pairs) != min(fit, len(self._all_pairs)):
            self._draw_pairs(self._all_pairs, self._next_marked)
        else:
            self._label_ticks()

    def _label_ticks(self) -> None:
        """Label every bar drawn (only bars that have room for a label are drawn)."""
        labels = getattr(self, "_labels", [])
        self.pairs_plot.getAxis("left").setTicks(
            [[(float(i), label) for i, label in enumerate(labels)]]
        )

    def shown_pairs(self) -> list[tuple[bytes, bytes, int]]:
        """The pairs drawn now, best first."""
        return list(self._pairs)

    def shown_bar_counts(self) -> list[int]:
        """The bar lengths as drawn, best first."""
        width = self._bars.opts.get("width")
        return [int(w) for w in (width if width is not None else [])]

    @property
    def pending(self) -> bool:
        """The step shown is not recorded yet (older bars are drawn greyed)."""
        return self._drawn is not None and self._drawn[0] == "pending"

    @property
    def shown_step(self) -> int | None:
        """The step whose pairs the bars show; None when they show none."""
        drawn = self._drawn
        return None if drawn is None or drawn[0] == "pending" else int(drawn[1])

    def pairs_title(self) -> str:
        return str(self.pairs_plot.titleLabel.text)

    # ------------------------------------------------------------- decay
    def _add_merges(self, steps: Sequence[MergeStep]) -> None:
        if not steps:
            return
        need = self._n + len(steps)
        if need > len(self._ranks):
            size = max(need, 2 * len(self._ranks))
            self._ranks = np.resize(self._ranks, size)
            self._counts = np.resize(self._counts, size)
        # C-level loops: a frame can bring thousands of merges (a third of a frame's time).
        self._ranks[self._n : need] = np.fromiter(map(_RANK, steps), np.int64, len(steps))
        counts = np.fromiter(map(_COUNT, steps), np.int64, len(steps))
        self._counts[self._n : need] = np.maximum(counts, 1)
        self._n = need
        self._curve.setData(self._ranks[: self._n], self._counts[: self._n])
        self._fit_decay_range()

    def _draw_decay(self) -> None:
        state = self.hub.state
        at_step = bool(self._n) and not (state.live and state.phase.training)
        title = (
            f"Count at merge time · step {state.step:,}"
            if at_step
            else "Count at merge time vs rank"
        )
        if title != self._decay_title:  # a changed title relays the plot out: only then
            self._decay_title = title
            short = f"Step {state.step:,}" if at_step else "Count vs rank"
            self._set_title(self.decay_plot, title, short)
        self._cursor.setVisible(at_step)
        if at_step:
            self._cursor.setValue(state.step)

    def _fit_decay_range(self) -> None:
        """Set the decay plot's ranges and ticks from the data now (pyqtgraph's auto-range
        would do it while painting, and paint again)."""
        if not self._n:
            return
        logs = np.log10(self._counts[: self._n])
        low, high = float(logs.min()), float(logs.max())
        if high <= low:
            high = low + 1
        self.decay_plot.setXRange(0, max(self._n - 1, 1), padding=0.02)
        self.decay_plot.setYRange(low, high, padding=0.05)
        self._decay_range = (low, high)
        self._space_decay_ticks()
        self.decay_plot.getAxis("bottom").setTicks([linear_ticks(0, max(self._n - 1, 1))])

    @Slot()
    def _space_decay_ticks(self, *args: object) -> None:
        """The log axis' ticks, as many as the plot's height has room for."""
        low, high = getattr(self, "_decay_range", (0.0, 1.0))
        height = self.decay_plot.vb.height()
        span = (high - low) * 1.1  # the range's 5% padding on each side
        per_unit = height / span if height > 0 and span > 0 else 1e9
        axis = self.decay_plot.getAxis("left")
        line = QFontMetrics(axis.style.get("tickFont") or axis.font()).height() + 2
        ticks = spaced_ticks(log_ticks(low, high), per_unit, line)
        self.decay_plot.getAxis("left").setTicks([ticks])

    def curve_data(self) -> tuple[np.ndarray, np.ndarray]:
        return self._ranks[: self._n].copy(), self._counts[: self._n].copy()

    def cursor_step(self) -> int | None:
        """Where the step cursor is drawn on the decay plot; None when hidden."""
        return int(self._cursor.value()) if self._cursor.isVisible() else None
