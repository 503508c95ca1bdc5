"""The compression curve: bytes per token against merges, live while training.

What it does: :class:`CompressionPlot` draws, for the run on screen, the bytes per token of an
in-sample slice of the corpus (its first ~1 MB) and of a held-out text (the bundled TinyStories
validation sample unless the user opens another, "Open held-out...", of which the first ~10 MB
count; the legend, under the plot, names it, and says when the corpus is unlike it), as
curves over the merge index, plus the editor's own bytes per token as points at the
steps it was measured. A vertical cursor marks the timeline's step, and the line above the plot
gives each value at that step. The counts are computed by a
:class:`~bpe_studio.gui.model.curves.CurveFeeder` (its own process) fed the merges as they are
published (for a loaded tokenizer: all its merges at once); this view polls it a few
times a second while it works and redraws in place (``setData``). "Record" turns it off.
What it leaves out: the counting (``core.explain.compression``), its thread and process
(``curves``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QTimer, Signal, Slot
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QPushButton, QWidget

from ..model.app_model import AppModel
from ..model.curves import (
    DEFAULT_HELDOUT,
    HELD_OUT,
    HELD_OUT_BYTES,
    IN_SAMPLE,
    IN_SAMPLE_BYTES,
    BuildOrder,
    CurveFeeder,
    CurveSeries,
    TextSpec,
    build_order,
)
from ..model.heldout import english_like, heldout_label, heldout_problem
from ..model.state import Phase
from ..responsiveness.busy import wait_while_gui_busy
from .common import not_a_tab_stop, points, steady_label, title_label
from .fitted_legend import FittedLegend
from .layouts import column
from .theme import Colours, colours, muted, themed

# What the editor's dots are: its text under the run's tokenizer at each step, whichever
# tokenizer the editor itself shows (only the run's adds dots).
EDITOR_TEXT = "editor text, run's tokenizer"
POLL_MS = 200  # how often the view looks at the feeder's progress while it works
DRAW_EVERY = 0.5  # s: the least time between two redraws while the curves grow


def curve_colour(name: str, c: Colours) -> str:
    return c.curve if name == IN_SAMPLE else c.held_out


def bytes_per_token(series: CurveSeries, k: int) -> float | None:
    """The series' bytes per token after ``k`` merges, or None if not computed (yet)."""
    tokens = series.tokens
    if not 0 <= k < len(tokens) or tokens[k] == 0:
        return None
    return series.bytes / tokens[k]


def order_note(order: BuildOrder) -> str:
    """What the legend says of a file whose merges are not in the order their tokens are
    made: how they are drawn, and why the curve may differ from the tokenizer's own counts."""
    parts = []
    if order.moved:
        parts.append(
            f"{order.moved:,} merges of this file come before the merges that make their parts: "
            "each is drawn right after its parts exist"
        )
    if order.unmade:
        parts.append(
            f"{order.unmade:,} merge{'s' if order.unmade != 1 else ''} of parts no "
            "merge makes are left out"
        )
    return "; ".join(parts) + " (the tokenizer itself may count a little differently)"


class MergeAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph is untyped
    """The merges axis: whole numbers with thousands separators, never a scale factor
    ("merges (x0.001)")."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802 - pyqtgraph override
        # Merges are whole: a tick between two (a short axis) is left unlabelled.
        return [f"{round(v):,}" if v >= 0 and abs(v - round(v)) < 1e-6 else "" for v in values]


EMPTY_HINT = (
    "Train, or load a tokenizer: bytes per token on the corpus and on held-out text, "
    "merge by merge, appear here"
)
PRETOKENIZING_HINT = "The curves start with the first merge: the corpus is being pre-tokenized"
RECORD_OFF_HINT = "Record is off: tick it to draw bytes per token as the run learns"
Y_TITLE = "bytes/token"  # short: a low plot shows it whole
FAILED_HINT = "The run failed before its first merge: no curve to draw"


def counting_hint(names: list[str]) -> str:
    """What the plot waits for once there are merges: the counts of its texts."""
    return f"Counting bytes per token on the {' and the '.join(names)} text…"


def least_plot_height(plot_widget: pg.PlotWidget) -> int:
    """The plot's least height in its font: the left axis's title upright, and the merges
    axis (its numbers and title) and the margins under and above it."""
    metrics = QFontMetrics(plot_widget.font())
    return metrics.horizontalAdvance(Y_TITLE) + 3 * metrics.lineSpacing()


class CompressionPlot(QWidget):
    error = Signal(str, str)  # title, message: a held-out text could not be read
    # The step's line. It hides QWidget.cursor(), which nothing asks of the plot.
    cursor: pg.InfiniteLine

    def __init__(self, hub: AppModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.feeder = CurveFeeder(between_commands=wait_while_gui_busy)
        self._drawn = -1  # the feeder's version last drawn
        self._x_end = -1.0  # the merges axis's end (``_fit_x``)
        self._order: BuildOrder | None = None  # a loaded file's merges as drawn
        # The editor's points (step -> bytes per token) for the text it shows and the run on
        # screen, as the model keeps them (AppModel.editor_points): no dot of another text.
        self._editor_points: dict[int, float] = {}

        self.record_box = QCheckBox("Record")
        self.record_box.setChecked(True)
        self.record_box.setToolTip("Compute the curves while training (in a background thread)")
        self.open_button = QPushButton("Open held-out…")
        self.open_button.setToolTip("Measure another held-out text file (UTF-8)")
        self.value_label = muted(
            steady_label(QLabel(), "step 00,000: in-sample 0.00 · held-out 0.00")
        )
        self.value_label.setToolTip(
            "Bytes per token at the timeline's step; the editor's (the dots) are its text under "
            "the run's tokenizer, given here while the editor shows that tokenizer"
        )
        self.plot_widget = pg.PlotWidget(axisItems={"bottom": MergeAxis("bottom")})
        self.plot_widget.setAccessibleName("Compression curve: bytes per token by merge")
        not_a_tab_stop(self.plot_widget)
        plot = self.plot = self.plot_widget.getPlotItem()
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.setLabel("bottom", "merges")
        plot.setLabel("left", Y_TITLE)
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")
        for name in ("left", "bottom"):
            plot.getAxis(name).setStyle(autoExpandTextSpace=False, autoReduceTextSpace=False)
        plot.getAxis("left").setWidth(48)
        # Its least height shows the axis title whole (and a data area as tall) at any font.
        self.plot_widget.setMinimumHeight(least_plot_height(self.plot_widget))
        # The legend is a wrapped label under the plot: inside the plot no corner stays clear
        # of the curves (a held-out text unlike the corpus runs flat along the bottom), and a
        # pyqtgraph legend as wide as its longest entry would widen the plot past its widget.
        # At most three lines, cut with the whole in its tooltip: the plot keeps its height.
        self.legend = FittedLegend(lines=3)
        themed(
            self.legend,
            lambda w: w.setStyleSheet(f"color: {colours().muted}; font-size: {points(8):.1f}pt"),
        )
        self.lines: dict[str, pg.PlotDataItem] = {}
        for name in (IN_SAMPLE, HELD_OUT):
            self.lines[name] = plot.plot([], [], name=name)
        # Listed in the legend once the editor reports a count (TokenEditor.encoded).
        self.editor_dots = pg.ScatterPlotItem(size=7)
        plot.addItem(self.editor_dots)
        self.cursor = pg.InfiniteLine(pos=0, angle=90)
        plot.addItem(self.cursor, ignoreBounds=True)
        # Before any curve: a hint in place of empty axes.
        self.hint = pg.TextItem(EMPTY_HINT, anchor=(0.5, 0.5))
        self.hint.setTextWidth(240)
        plot.addItem(self.hint, ignoreBounds=True)
        themed(self, CompressionPlot._restyle)
        self._show_hint()

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(title_label("Compression"))
        top.addStretch(1)
        top.addWidget(self.record_box)
        top.addWidget(self.open_button)
        column(self, top, self.value_label, (self.plot_widget, 1), self.legend)

        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._on_poll)
        self.record_box.toggled.connect(self._record_toggled)
        hub.reset.connect(self._on_reset)
        hub.merges_added.connect(self._on_merges)
        hub.step_changed.connect(self._show_step)
        hub.tokenizer_changed.connect(self._show_step)  # the editor's value is the run's only
        hub.updated.connect(self._draw_with_frame)
        self._last_draw = 0.0  # time.perf_counter() of the last redraw
        self._corpus_english = True  # the corpus reads as English prose (heldout.english_like)
        hub.corpus_changed.connect(self._on_corpus)
        hub.phase_changed.connect(self._show_hint)
        self._held_failures: list[str] = []  # the curves' failures not reported yet
        # The held-out texts before the one opened last, newest last: the newest one that
        # can be read is measured again if that one cannot (an open checks only its start),
        # so that the file named and measured stays one that can be.
        self._heldout_before: list[Path] = []
        self._heldout_unreadable: set[Path] = set()  # found so since it was last opened
        hub.phase_changed.connect(self._report_failures)
        hub.editor_series_changed.connect(self._show_editor_points)
        self._legend_for: dict[str, tuple[str, int, str | None]] = {}  # what the legend says

    def _restyle(self) -> None:
        """The plot in the scheme's colours."""
        c = colours()
        self.plot_widget.setBackground(c.plot_background)
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setPen(pg.mkPen(c.plot_axis))
            axis.setTextPen(pg.mkPen(c.plot_text))
        for name, line in self.lines.items():
            line.setPen(pg.mkPen(curve_colour(name, c), width=2))
        self.editor_dots.setBrush(pg.mkBrush(c.editor_dot))
        self.editor_dots.setPen(pg.mkPen(c.editor_dot))
        self.cursor.setPen(pg.mkPen(c.plot_muted, width=1, dash=[4, 3]))
        self.hint.setColor(c.plot_muted)
        if hasattr(self, "_legend_for"):
            self._legend_for = {}
            self._label_legend(self.feeder.series)

    # ------------------------------------------------------------ inputs
    @property
    def recording(self) -> bool:
        return self.record_box.isChecked()

    def _texts(self) -> dict[str, TextSpec]:
        state = self.hub.state
        texts: dict[str, TextSpec] = {}
        # The run's own corpus: a corpus opened since, not trained on, says nothing of it.
        corpus = state.run_corpus_ref
        if state.loaded is None and corpus is not None:
            texts[IN_SAMPLE] = TextSpec.of_corpus(corpus, IN_SAMPLE_BYTES)
        texts[HELD_OUT] = TextSpec(self.heldout, HELD_OUT_BYTES)
        return texts

    def _begin(self, rows: Sequence) -> None:
        """Start the curves over with ``rows``, the texts cut as the tokenizer on screen cuts
        them."""
        state = self.hub.state
        if state.loaded is None:
            pattern = state.settings.pattern if state.settings is not None else "gpt2"
            self.feeder.begin(self._texts(), state.special_tokens, pattern, rows)
            return
        # subtle: a loaded tokenizer's own cutting: its added tokens, and a tokenizer.json's
        # normalizers and pre-tokenizer steps. Its pattern alone counts another text than the
        # one it encodes (lowercased, NFKC'd), and the editor's dot would leave the curve.
        tok = state.loaded.tokenizer
        specials = tok.specials
        self.feeder.begin(
            self._texts(), specials.tokens, tok.pattern, rows, tok.hf_pipeline,
            sorted(specials.ordinary),
        )  # fmt: skip

    @property
    def heldout(self) -> Path:
        """The held-out text measured (the model's)."""
        return self.hub.heldout

    @Slot()
    def _on_reset(self) -> None:
        """A new run or a loaded tokenizer: start the curves over (a loaded tokenizer's merges
        all at once, in the background)."""
        self._legend_for = {}  # relabel at the next draw
        self._drawn = -1
        self._held_failures.clear()  # of the run that is gone
        self._corpus_english = self._english_corpus()
        self._show_heldout_advice()
        if not self.recording:
            self.feeder.cancel()
            self._draw()
            return
        state = self.hub.state
        self._order = None
        failed_at_start = state.phase is Phase.FAILED and not state.published
        # A run (going or over) or a loaded tokenizer; a run that failed before its first
        # merge has no curve (its step 0 was measured again, and the cursor named it).
        if state.phase is not Phase.IDLE and not failed_at_start:
            rows = state.merge_rows[: state.published]
            if state.loaded is not None:
                # subtle: a file's merges may come before the merges that make their parts
                # (Llama 3's): applied one by one they are drawn in the order their tokens
                # can be made, and the legend says so (curves.build_order).
                self._order = build_order(rows)
                rows = self._order.rows
            self._begin(rows)
        else:
            self.feeder.cancel()
        self._draw()  # no curve of the run that is gone stays while the new ones are counted
        self._work_started()

    @Slot(int, int)
    def _on_merges(self, first: int, last: int) -> None:
        if self.recording:
            self.feeder.feed(self.hub.state.merge_rows[first : last + 1])
            self._work_started()

    @Slot(bool)
    def _record_toggled(self, on: bool) -> None:
        if on:
            self._on_reset()
        else:
            self.feeder.cancel()
            self._work_started()

    def open_heldout(self, path: str | Path) -> bool:
        """Measure ``path`` as the held-out text (read in the background); False, with
        ``error`` and the held-out text unchanged, for a file that cannot be (missing,
        empty, not UTF-8), whether or not a run is on screen to measure."""
        problem = heldout_problem(path)
        if problem is not None:
            self.error.emit("Cannot measure compression", problem)
            return False
        if Path(path) != self.heldout:
            self._heldout_before = [*self._heldout_before[-7:], self.heldout]
        self._heldout_unreadable.discard(Path(path))
        self.hub.set_heldout(Path(path))
        self._show_heldout_advice()
        state = self.hub.state
        if self.recording and state.phase is not Phase.IDLE:
            self.feeder.add_text(HELD_OUT, TextSpec(self.heldout, HELD_OUT_BYTES))
            self._work_started()
        return True

    @Slot()
    def _show_editor_points(self) -> None:
        """The editor's points of the text it shows now, under the run on screen (the model's
        series for that text and run; a tokenizer picked instead of the run's adds none)."""
        points = self.hub.editor_points()
        listed = bool(self._editor_points)
        self._editor_points = points
        xs = np.fromiter(points.keys(), dtype=float, count=len(points))
        ys = np.fromiter(points.values(), dtype=float, count=len(points))
        self.editor_dots.setData(xs, ys)
        if listed != bool(points):  # the legend lists the points while there are any
            self._label_legend(self.feeder.series)
        self._show_hint()
        self._fit_x()
        self._show_step()

    # ------------------------------------------------------------ output
    def _work_started(self) -> None:
        if not self._poll.isActive():
            self._poll.start()

    @Slot()
    def _on_poll(self) -> None:
        for failure in self.feeder.take_failure_records():
            message = failure.message
            if message.startswith(f"{IN_SAMPLE} text") and self._run_reads_corpus():
                # The corpus itself: the run reading it reports what is wrong with it, once.
                # Past that (the corpus deleted after the run, then Record off and on) no
                # one else would say why its curve is gone.
                continue
            if failure.name == HELD_OUT and failure.path is not None:
                self._heldout_unreadable.add(failure.path)
                if failure.path == self.heldout:
                    message += self._go_back_from_heldout()
            self._held_failures.append(message)
        self._report_failures()
        busy = self.feeder.busy
        if self.feeder.version != self._drawn and not self.hub.state.phase.training:
            # subtle: every redraw repaints the plot with the trainer held (trainer_hold), so
            # while the curves grow they are redrawn at most every DRAW_EVERY seconds; while a
            # run trains, with a frame (_draw_with_frame), whose repaint it joins.
            if not busy or time.perf_counter() - self._last_draw >= DRAW_EVERY:
                self._draw()
        if not busy and self.feeder.version == self._drawn:
            self._poll.stop()

    def _go_back_from_heldout(self) -> str:
        """The held-out text just found unreadable (bad UTF-8 past the start an open checks,
        or gone since) gives way to the newest one before it not found unreadable, measured
        again where a run is on screen;
        what the message about it adds ("" with none to go back to). Kept, the unreadable
        file stayed the model's while the plot showed the old curve, and every later Train
        failed on it again."""
        gone = self._heldout_unreadable | {self.heldout}
        readable = [p for p in self._heldout_before if p not in gone]
        if not readable:
            return ""
        before = readable[-1]
        self._heldout_before = readable[:-1]
        self.hub.set_heldout(before)
        self._show_heldout_advice()
        if self.recording and self.hub.state.phase is not Phase.IDLE:
            self.feeder.add_text(HELD_OUT, TextSpec(before, HELD_OUT_BYTES))
        return f"\n\nThe held-out text is {heldout_label(before)} again."

    def _run_reads_corpus(self) -> bool:
        """Whether the run is reading its corpus now, or failed reading it: it says then
        what is wrong with the corpus."""
        state = self.hub.state
        return state.phase in (Phase.PRE_TOKENIZING, Phase.FAILED) or (
            state.phase is Phase.PAUSED and state.resume_to is Phase.PRE_TOKENIZING
        )

    @Slot()
    def _report_failures(self, *_: object) -> None:
        """Report the curves' failures once the run is past its start. Until its first merge
        they wait: a run that fails then (a custom pattern that misses characters fails the
        held-out text's curve and the run alike) has no curve to measure, and its own
        dialog tells the cause, once."""
        phase = self.hub.state.phase
        if phase is Phase.FAILED:
            self._held_failures.clear()
        elif not (
            phase is Phase.PRE_TOKENIZING
            or (phase is Phase.PAUSED and self.hub.state.resume_to is Phase.PRE_TOKENIZING)
        ):
            held, self._held_failures = self._held_failures, []
            for message in held:
                self.error.emit("Cannot measure compression", message)

    @Slot()
    def _draw_with_frame(self) -> None:
        """At the end of a frame while training: the curves' new points, if any, and at most
        every DRAW_EVERY seconds."""
        if (
            self.hub.state.phase.training
            and self.feeder.version != self._drawn
            and time.perf_counter() - self._last_draw >= DRAW_EVERY
        ):
            self._draw()

    def _draw(self) -> None:
        self._drawn = self.feeder.version
        self._last_draw = time.perf_counter()
        series = self.feeder.series
        for name, line in self.lines.items():
            s = series.get(name)
            if s is None:
                line.setData([], [])
                continue
            counts = np.frombuffer(s.counts(), dtype=np.int64).astype(np.float64)
            ys = np.divide(s.bytes, counts, out=np.zeros_like(counts), where=counts > 0)
            line.setData(np.arange(len(ys), dtype=np.float64), ys)
        self._show_hint()
        self._fit_x()
        legend = {n: (s.source, s.bytes, s.error) for n, s in series.items()}
        legend[""] = (str(self.heldout), 0, None)  # another held-out file is another label
        if legend != self._legend_for:
            self._legend_for = legend
            self._label_legend(series)
        self._show_step()
        # subtle: pyqtgraph applies the auto range (and any layout change) lazily, while it
        # paints, and then paints the plot again: one more repaint per frame with the curves
        # growing. Applied here, the window's repaint is the plot's only one.
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest.value)
        self.plot.vb.prepareForPaint()

    def hint_text(self) -> str:
        """What the empty plot waits for, in words."""
        state = self.hub.state
        phase = state.resume_to if state.phase is Phase.PAUSED else state.phase
        if state.phase is Phase.IDLE and state.loaded is None:
            return EMPTY_HINT
        if not self.recording:
            return RECORD_OFF_HINT
        if phase is Phase.PRE_TOKENIZING:
            return PRETOKENIZING_HINT
        if state.phase is Phase.FAILED and not state.published:
            return FAILED_HINT
        return counting_hint(list(self._texts()))

    @Slot()
    def _show_hint(self, *_: object) -> None:
        """The hint instead of axes, cursor and legend while nothing is plotted, saying what
        the plot waits for."""
        empty = not self._editor_points and all(
            line.xData is None or len(line.xData) == 0 for line in self.lines.values()
        )
        was_empty = self.hint.isVisible()
        self.hint.setVisible(empty)
        if empty:
            text = self.hint_text()
            if self.hint.toPlainText() != text:
                self.hint.setText(text)
            self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)  # the hint's frame
            self._x_end = -1.0  # the merges axis is the hint's now: fit it again after
            self.hint.setPos(0.5, 0.5)
        elif was_empty:
            self.plot.enableAutoRange(y=True)  # setRange turned it off: follow the curves again
            self._fit_x()
        for name in ("left", "bottom"):
            self.plot.showAxis(name, not empty)
        self.legend.setVisible(not empty)
        self.cursor.setVisible(not empty)

    def _fit_x(self) -> None:
        """The merges axis runs from 0 to the last merge drawn (a curve's end, an editor dot,
        the step shown), never a point's width: one dot alone at step 280,147 made every tick
        read 280147."""
        if self.hint.isVisible():
            return
        ends = [float(self.hub.state.step), 1.0]
        ends += [
            float(len(line.xData) - 1) for line in self.lines.values() if line.xData is not None
        ]
        if self._editor_points:
            ends.append(float(max(self._editor_points)))
        end = max(ends)
        if end != self._x_end:
            self._x_end = end
            self.plot.setXRange(0, end, padding=0.02)

    @property
    def showing_hint(self) -> bool:
        return self.hint.isVisible()

    @Slot()
    def _on_corpus(self) -> None:
        self._corpus_english = self._english_corpus()
        self._legend_for = {}  # relabel at the next draw
        self._label_legend(self.feeder.series)
        self._show_heldout_advice()

    def _english_corpus(self) -> bool:
        """The run's corpus (the in-sample text), else the one opened (the next Train's),
        reads as English prose, or is none that can be read here."""
        state = self.hub.state
        # The advice is for the held-out text chosen now, which also measures the next run.
        source = state.run_corpus if state.run_corpus is not None else state.corpus_source
        corpus = source.plain if source is not None else None
        return corpus is None or english_like(corpus)

    def _show_heldout_advice(self) -> None:
        unlike = not self._corpus_english and self.heldout == DEFAULT_HELDOUT
        self.open_button.setToolTip(
            "The held-out text is English prose and the corpus is not: open a held-out text "
            "like the corpus (UTF-8), not part of it"
            if unlike
            else "Measure another held-out text file (UTF-8)"
        )

    def _label_legend(self, series: dict[str, CurveSeries]) -> None:
        """One entry per curve shown (its colour, what text it measures), and the editor's
        points once there are any."""
        entries = []
        for name in (IN_SAMPLE, HELD_OUT):
            s = series.get(name)
            if s is None:
                continue
            source = heldout_label(self.heldout) if name == HELD_OUT else s.source
            note = f" (stopped: {s.error})" if s.error else ""
            if name == HELD_OUT and not self._corpus_english and self.heldout == DEFAULT_HELDOUT:
                note += "; the corpus is not English: Open held-out…"
            text = f" {name}: {source}, {s.bytes:,} bytes{note}"
            entries.append([("━━", curve_colour(name, colours())), (text, None)])
        order = self._order
        if entries and order is not None and (order.moved or order.unmade):
            entries.append([(order_note(order), None)])
        if self._editor_points:
            entries.append([("●", colours().editor_dot), (f" {EDITOR_TEXT}", None)])
        self.legend.set_entries(entries)

    @property
    def legend_html(self) -> str:
        """The whole legend (the label shows what fits of it)."""
        return self.legend.full_html

    @Slot()
    def _show_step(self, *_: object) -> None:
        k = self.hub.state.step
        self.cursor.setValue(k)
        if self.hint.isVisible():  # nothing plotted: no value to read at the step
            self.value_label.setText("")
            return
        parts = [f"step {k:,}"]
        for name in (IN_SAMPLE, HELD_OUT):
            s = self.feeder.series.get(name)
            value = bytes_per_token(s, k) if s is not None else None
            if value is not None:
                parts.append(f"{name} {value:.2f}")
        editor = self._editor_points.get(k)
        if editor is not None and self.hub.state.picked is None:
            # Only while the editor shows the run's tokenizer, whose figure its footer gives
            # too: beside another tokenizer's (GPT-4's, say) it read as a contradiction. The
            # dots stay, the legend naming whose they are; a longer name here is cut off.
            parts.append(f"editor {editor:.2f}")
        text = parts[0] + (": " + " · ".join(parts[1:]) + " bytes/token" if parts[1:] else "")
        self.value_label.setText(text)

    def value_at(self, name: str, k: int) -> float | None:
        """The curve ``name``'s bytes per token at step ``k``, if computed (for tests)."""
        s = self.feeder.series.get(name)
        return bytes_per_token(s, k) if s is not None else None

    def shutdown(self) -> None:
        """Stop polling and end the feeder's thread (the window is closing)."""
        self._poll.stop()
        self.feeder.shutdown()
