"""A frame paints the window once, after the frame: no widget repaints synchronously inside it
(docs/responsiveness.md). Timing is benchmarks/gui_bench.py's; this tests the behaviour."""

from __future__ import annotations

from gui_helpers import PaintCounter
from PySide6.QtCore import QCoreApplication, QEvent, QObject


def test_progress_bar_is_repainted_after_the_frame_not_inside_it(qtbot, window):
    window.show()
    qtbot.waitExposed(window)
    bar = window.panel.progress
    counter = PaintCounter()
    bar.installEventFilter(counter)
    try:
        # What each frame does while training (controls._show_progress).
        window.panel._set_bar(1000, 10, "%p%")
        for value in (250, 500, 750):
            window.panel._set_bar(1000, value, "%p%")
            assert bar.value() == value
            assert counter.paints == 0  # QProgressBar.setValue alone would have painted here
        qtbot.waitUntil(lambda: counter.paints > 0, timeout=10_000)
        assert bar.text() == "75%"
    finally:
        bar.removeEventFilter(counter)


class LayoutCounter(QObject):
    """Counts the layout requests that reach the widgets it watches."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[str] = []

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.LayoutRequest:
            self.requests.append(type(obj).__name__)
        return False


def _deliver_posted_events() -> None:
    """Deliver the layout requests and repaints posted so far, and those they post in turn."""
    for _ in range(10):
        QCoreApplication.sendPostedEvents()
        QCoreApplication.processEvents()


def test_frames_never_re_lay_out_the_window(qtbot, window, monkeypatch):
    """The labels, counts and ranges a training frame changes stay inside their own widgets:
    no layout request reaches the tab widget (which repaints its whole page for each) or the
    window (docs/responsiveness.md). Driven through the hub, one frame at a time, once what a
    run shows only once (the compression legend, the editor's first spans) has settled."""
    from gui_helpers import wait_for_spans

    from bpe_studio.core import trainer_from_file
    from bpe_studio.core.train.vocab import initial_vocab
    from bpe_studio.gui.app import DEMO_CORPUS
    from bpe_studio.gui.model.corpus_source import corpus_source
    from bpe_studio.gui.model.state import RunSettings
    from bpe_studio.gui.responsiveness import frame_budget

    monkeypatch.setattr(frame_budget, "EDITOR_REFRESH_SECONDS", 1e9)  # no rebuild meanwhile
    window.curve.record_box.setChecked(False)

    trainer = trainer_from_file(DEMO_CORPUS, 1500, ["<|endoftext|>"], record_pairs=20)
    steps = list(trainer)
    hub = window.hub
    hub.set_corpus(corpus_source([str(DEMO_CORPUS)]))
    specials = ("<|endoftext|>",)
    hub.begin_run(RunSettings(1500, specials), initial_vocab(list(specials)))
    hub.set_progress(10, 100)
    hub.publish()
    hub.set_pair_history(trainer.pair_history)
    hub.start_merging()
    hub.append_merges(steps[:5])
    hub.publish()
    wait_for_spans(qtbot, window.editor)
    _deliver_posted_events()  # the phase change may change what is shown: settle it first
    counter = LayoutCounter()
    watched = (window, window.centralWidget(), window.page_scroll.widget(), window.tabs)
    for widget in watched:
        widget.installEventFilter(counter)
    try:
        # Frames whose counts gain digits (9 -> 10 -> 100 -> 1,000 merges).
        for end in (9, 10, 99, 100, 999, 1000, len(steps)):
            hub.append_merges(steps[len(hub.state.record) : end])
            hub.set_clock(1000.0 + end, end / 100)
            hub.publish()
            assert window.timeline.spin.maximum() == end
            _deliver_posted_events()
        assert counter.requests == []
    finally:
        for widget in watched:
            widget.removeEventFilter(counter)


def test_the_compression_curves_repaint_once_per_draw(qtbot):
    """The curves' auto range is applied when they are drawn, not while they paint (which
    would paint the plot a second time for every frame; docs/responsiveness.md)."""
    from array import array

    from bpe_studio.gui.model.app_model import AppModel
    from bpe_studio.gui.model.curves import IN_SAMPLE, CurveSeries
    from bpe_studio.gui.views.compression_plot import CompressionPlot

    plot = CompressionPlot(AppModel())
    qtbot.addWidget(plot)
    plot.record_box.setChecked(False)  # no feeder thread: the series are set here
    plot.resize(500, 400)
    plot.show()
    qtbot.waitExposed(plot)
    series = CurveSeries(IN_SAMPLE, "text", 10_000, array("q", [10_000]))
    plot.feeder.series = {IN_SAMPLE: series}

    def draw_more(n: int) -> None:
        # Fewer tokens with every merge (a made-up curve): the ranges change at every draw.
        series.tokens.extend(10_000 - 3 * k for k in range(len(series.tokens), n))
        plot.feeder.version += 1
        plot._draw()
        _deliver_posted_events()

    counter = PaintCounter()
    viewport = plot.plot_widget.viewport()
    try:
        draw_more(50)  # the first curve replaces the hint: the axes appear
        viewport.installEventFilter(counter)
        for n in (100, 200, 400):
            draw_more(n)
        # subtle: Qt may fold one draw's repaint into the next, so the count is bounded, not
        # exact; painting the range lazily gave two repaints per draw.
        assert 1 <= counter.paints <= 3
    finally:
        viewport.removeEventFilter(counter)
        plot.shutdown()
