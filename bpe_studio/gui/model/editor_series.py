"""The editor's own points on the compression plot, kept per text and per run.

What it does: :class:`EditorSeries` keeps, for each (run, text) pair, the editor's bytes per
token at every step it was measured (``add``), and gives the points of one pair (``points``):
the plot shows those of the text in the editor and the run on screen only, so a dot never
joins the curve of another text or another run. The last few texts of each run are kept, so
going back to a text shows its points again.
What it leaves out: measuring (the editor's spans) and drawing (``views.compression_plot``).
"""

from __future__ import annotations

from collections import OrderedDict

KEPT_TEXTS = 8  # texts whose points are kept (each key holds its text)


class EditorSeries:
    """Points ``step -> bytes per token`` by (run id, text)."""

    def __init__(self) -> None:
        self._series: OrderedDict[tuple[int, str], dict[int, float]] = OrderedDict()

    def add(self, run_id: int, text: str, step: int, bytes_per_token: float) -> None:
        key = (run_id, text)
        points = self._series.get(key)
        if points is None:
            points = self._series[key] = {}
            while len(self._series) > KEPT_TEXTS:
                self._series.popitem(last=False)
        self._series.move_to_end(key)
        points[step] = bytes_per_token

    def points(self, run_id: int, text: str) -> dict[int, float]:
        """The points of ``text`` under run ``run_id`` (a copy; empty when none)."""
        return dict(self._series.get((run_id, text), {}))

    def forget_run(self, run_id: int) -> None:
        """Drop every point of a run that is gone for good (discarded)."""
        for key in [k for k in self._series if k[0] == run_id]:
            del self._series[key]
