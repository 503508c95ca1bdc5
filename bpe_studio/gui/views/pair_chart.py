"""The pair-frequency chart: the pairs that will be merged next, and how counts decay.

What it does: on the left, the current top pairs (20 by default) as horizontal bars, best on
top, each labelled with its readable pair and count; the pair about to be merged is drawn in
the accent colour. On the right, the count of each merge against its rank on a log scale,
which shows the frequency decay as training goes. Both are drawn from ``StateHub.state`` (its
latest top pairs and its record of merges) once per published frame, updated in place
(``BarGraphItem.setOpts``, ``PlotDataItem.setData``), never rebuilt.
What it leaves out: where the pairs come from (the worker's ``top_pairs`` reports).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, Slot
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from ...core import MergeStep
from ...core.display import readable_token
from ..hub import StateHub
from ..state import Phase
from .common import ACCENT, BAR, CURVE, MUTED, monospace_font, title_label

TOP_K = 20
LOADED_NOTE = "vocab.json and merges.txt hold no pair counts: train a tokenizer to see them"
_LABEL_CHARS = 12  # longer tokens are cut with "…" in axis labels
AXIS_HEIGHT = 40  # px: the bottom axes' tick labels and title
DECAY_AXIS_WIDTH = 56  # px: room for "10^7" and the axis title


def pair_label(left: bytes, right: bytes) -> str:
    def cut(token: bytes) -> str:
        text = readable_token(token)
        return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"

    return f"{cut(left)} + {cut(right)}"


def _style_plot(plot: pg.PlotItem) -> None:
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.showGrid(x=True, y=True, alpha=0.15)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setPen(pg.mkPen("#9ca3af"))
        axis.setTextPen(pg.mkPen("#374151"))
        # subtle: by default an axis resizes itself to its tick labels while it paints, which
        # relays out the plot and paints it again: four extra repaints per live update.
        axis.setStyle(autoExpandTextSpace=False, autoReduceTextSpace=False)
    plot.getAxis("bottom").setHeight(AXIS_HEIGHT)


class PairChart(QWidget):
    def __init__(self, hub: StateHub, top_k: int = TOP_K, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.top_k = top_k
        self.title = title_label("Pair counts")
        self._pairs: list[tuple[bytes, bytes, int]] = []
        self._drawn_pairs: tuple | None = None  # the state's top_pairs as last drawn
        # The decay curve's points, a plotting cache of the state's record (grown, not copied).
        self._ranks = np.zeros(1024, dtype=np.float64)
        self._counts = np.zeros(1024, dtype=np.float64)
        self._n = 0

        self.pairs_widget = pg.PlotWidget(background="w")
        self.pairs_plot = self.pairs_widget.getPlotItem()
        _style_plot(self.pairs_plot)
        self.pairs_plot.setTitle("Next merges: top pairs by count", color="#111827", size="10pt")
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
            brush=pg.mkBrush(BAR),
        )
        self.pairs_plot.addItem(self._bars)
        self._axis_font = monospace_font()
        self.pairs_plot.getAxis("left").setStyle(tickFont=self._axis_font)
        self.pairs_plot.getAxis("left").setWidth(80)

        self.decay_widget = pg.PlotWidget(background="w")
        self.decay_plot = self.decay_widget.getPlotItem()
        _style_plot(self.decay_plot)
        self.decay_plot.setTitle("Count at merge time vs rank", color="#111827", size="10pt")
        self.decay_plot.setLogMode(x=False, y=True)
        self.decay_plot.setLabel("bottom", "merge rank")
        self.decay_plot.setLabel("left", "pair count (log)")
        self.decay_plot.getAxis("left").setWidth(DECAY_AXIS_WIDTH)
        self.decay_plot.setMouseEnabled(x=False, y=False)
        self._curve = self.decay_plot.plot([], [], pen=pg.mkPen(CURVE, width=2))
        self._curve.setDownsampling(auto=True, method="peak")
        self._curve.setClipToView(True)
        self._note = pg.TextItem("", color=MUTED, anchor=(0.5, 0.5))
        self._note.setTextWidth(220)
        self.decay_plot.addItem(self._note, ignoreBounds=True)
        self._note.setVisible(False)

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
        self._on_reset()

    @Slot()
    def _on_reset(self) -> None:
        self.clear(LOADED_NOTE if self.hub.state.phase is Phase.LOADED else "")

    @Slot()
    def redraw(self) -> None:
        """Draw what changed in the state since the last redraw (once per published frame)."""
        state = self.hub.state
        if state.loaded is not None:
            return
        pairs_changed = state.top_pairs is not self._drawn_pairs
        new_merges = state.published > self._n
        if not pairs_changed and not new_merges:
            return
        if pairs_changed:
            self._drawn_pairs = state.top_pairs
            self._draw_pairs(list(state.top_pairs[: self.top_k]))
        if new_merges:
            self._add_merges(state.record[self._n : state.published])
            self._curve.setData(self._ranks[: self._n], self._counts[: self._n])
            self._fit_decay_range()
        # subtle: pyqtgraph applies layout and range changes lazily, while it paints, and
        # then paints again; applied here, they cost one repaint instead of four.
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest.value)
        for plot in (self.pairs_plot, self.decay_plot):
            plot.vb.prepareForPaint()

    def _draw_pairs(self, pairs: list[tuple[bytes, bytes, int]]) -> None:
        self._pairs = pairs
        n = len(self._pairs)
        counts = np.array([c for _, _, c in self._pairs], dtype=np.float64)
        ys = np.arange(n, dtype=np.float64)
        brushes = [pg.mkBrush(ACCENT if i == 0 else BAR) for i in range(n)] or None
        self._bars.setOpts(x0=np.zeros(n), y=ys, width=counts, height=0.72, brushes=brushes)
        # Counts go into the axis labels: one axis repaint is far cheaper than a text item per
        # bar, each of which runs Python on every view change.
        labels = [f"{pair_label(a, b)}  {c:>9,}" for a, b, c in self._pairs]
        axis = self.pairs_plot.getAxis("left")
        axis.setTicks([list(zip(ys.tolist(), labels))])
        widest = max(
            (QFontMetrics(self._axis_font).horizontalAdvance(t) for t in labels), default=40
        )
        # The width only grows while training: each change relays the plot out.
        want = min(max(widest + 16, 60), 320)
        if want > axis.width() or not self.hub.state.phase.training:
            axis.setWidth(want)
        top = float(counts.max()) if n else 1.0
        self.pairs_plot.setXRange(0, top * 1.02, padding=0)
        self.pairs_plot.setYRange(-0.6, max(n, 1) - 0.4, padding=0)
        if n:
            a, b, c = self._pairs[0]
            self.pairs_plot.setTitle(
                f"Next merge: <b style='color:{ACCENT}'>{pair_label(a, b)}</b>"
                f" ({c:,}) · top {n} pairs",
                color="#111827",
                size="10pt",
            )
        else:
            self.pairs_plot.setTitle("No pairs left to merge", color="#111827", size="10pt")

    def shown_pairs(self) -> list[tuple[bytes, bytes, int]]:
        """The pairs drawn now, best first."""
        return list(self._pairs)

    def shown_bar_counts(self) -> list[int]:
        """The bar lengths as drawn, best first."""
        width = self._bars.opts.get("width")
        return [int(w) for w in (width if width is not None else [])]

    # ------------------------------------------------------------- decay
    def _add_merges(self, steps: Sequence[MergeStep]) -> None:
        if not steps:
            return
        need = self._n + len(steps)
        if need > len(self._ranks):
            size = max(need, 2 * len(self._ranks))
            self._ranks = np.resize(self._ranks, size)
            self._counts = np.resize(self._counts, size)
        self._ranks[self._n : need] = [s.rank for s in steps]
        self._counts[self._n : need] = [max(s.count, 1) for s in steps]
        self._n = need
        if self._note.isVisible():
            self._note.setText("")
            # subtle: a visible TextItem re-places itself while painting, after every range
            # change of its plot, and so makes the plot paint twice.
            self._note.setVisible(False)

    def _fit_decay_range(self) -> None:
        """Set the decay plot's ranges from the data now (pyqtgraph's auto-range would do it
        while painting, and paint again)."""
        if not self._n:
            return
        logs = np.log10(self._counts[: self._n])
        low, high = float(logs.min()), float(logs.max())
        self.decay_plot.setXRange(0, max(self._n - 1, 1), padding=0.02)
        self.decay_plot.setYRange(low, high if high > low else low + 1, padding=0.05)

    def curve_data(self) -> tuple[np.ndarray, np.ndarray]:
        return self._ranks[: self._n].copy(), self._counts[: self._n].copy()

    def clear(self, note: str = "") -> None:
        """Empty both plots; with a ``note``, show it instead of empty axes."""
        self._n = 0
        self._drawn_pairs = None
        self._curve.setData([], [])
        self._draw_pairs([])
        self._note.setText(note)
        self._note.setVisible(bool(note))
        for plot in (self.pairs_plot, self.decay_plot):
            for name in ("left", "bottom"):
                plot.showAxis(name, not note)
        if note:
            self.decay_plot.setXRange(0, 1, padding=0)
            self.decay_plot.setYRange(0, 1, padding=0)
            self._note.setPos(0.5, 0.5)
            self.pairs_plot.setTitle(note, color="#111827", size="10pt")
        else:
            self.decay_plot.setTitle("Count at merge time vs rank", color="#111827", size="10pt")
