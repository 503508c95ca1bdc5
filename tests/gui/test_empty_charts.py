"""Empty charts say what they wait for (issue 33, defect 15), never meaningless axes: the
compression plot before a run, while the corpus is pre-tokenized and while its first counts
are computed; the Report while its samples are encoded (no empty 0-0.9 axes, no empty
legend)."""

from __future__ import annotations

import threading

from gui_helpers import train_in_window

from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.curves import CurveFeeder
from bpe_studio.gui.views import compression_plot, report


def axes_shown(plot) -> bool:
    return any(plot.getAxis(name).isVisible() for name in ("left", "bottom"))


def test_the_compression_plot_says_what_it_waits_for(qtbot, window, monkeypatch):
    curve = window.curve
    assert curve.showing_hint and not axes_shown(curve.plot)
    assert curve.hint.toPlainText() == compression_plot.EMPTY_HINT
    # The counts never come (their process is held back): the run is over, the plot waits
    # for its counts, and says so rather than asking for a run.
    monkeypatch.setattr(CurveFeeder, "begin", lambda self, *args, **kwargs: None)
    monkeypatch.setattr(CurveFeeder, "feed", lambda self, merges: None)
    window.editor.set_text("")  # no editor points either
    train_in_window(qtbot, window, DEMO_CORPUS, 500)
    assert curve.showing_hint and not axes_shown(curve.plot)
    hint = curve.hint.toPlainText()
    assert hint != compression_plot.EMPTY_HINT
    assert hint == compression_plot.counting_hint(["in-sample", "held-out"])
    # Record off: it says how to get the curves back.
    curve.record_box.setChecked(False)
    curve._show_hint()
    assert curve.hint.toPlainText() == compression_plot.RECORD_OFF_HINT


def test_the_report_shows_no_axes_or_legend_while_it_computes(qtbot, window, monkeypatch):
    release = threading.Event()
    build = report.build_report

    def slow_build(*args, **kwargs):
        release.wait(30)  # the samples are still being encoded while the test looks
        return build(*args, **kwargs)

    monkeypatch.setattr(report, "build_report", slow_build)
    page = window.report
    plot = page.chart.getPlotItem()
    try:
        window.tabs.setCurrentWidget(page)
        qtbot.waitUntil(lambda: "Encoding the samples" in page.status.text(), timeout=10_000)
        assert not axes_shown(plot)
        assert not page.legend.isVisible() and not page.legend.items
        assert page.hint.isVisible() and page.hint.toPlainText().startswith("Encoding the samples")
    finally:
        release.set()
    qtbot.waitUntil(lambda: page.report is not None and not page.busy, timeout=180_000)
    assert axes_shown(plot) and page.legend.isVisible() and not page.hint.isVisible()
    assert [label.text for _, label in page.legend.items] == list(page.report.tokenizers)
