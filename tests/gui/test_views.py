"""Behaviour of single views: the merge list follows the newest merge unless scrolled away."""

from __future__ import annotations

from gui_helpers import history_of

from bpe_studio.core import trainer_from_file
from bpe_studio.core.train.vocab import initial_vocab
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.state import RunSettings
from bpe_studio.gui.views.merge_list import MergeListView
from bpe_studio.gui.views.pair_chart import PairChart, pair_label

EOT = "<|endoftext|>"


def run_hub() -> AppModel:
    hub = AppModel()
    hub.begin_run(RunSettings(2000, (EOT,)), initial_vocab([EOT]))
    hub.start_merging()
    return hub


def frame(hub: AppModel, steps) -> None:
    hub.append_merges(steps)
    hub.publish()


def shown_chart(qtbot, hub: AppModel, width: int, height: int) -> PairChart:
    chart = PairChart(hub)
    qtbot.addWidget(chart)
    chart.resize(width, height)
    chart.show()
    qtbot.waitExposed(chart)
    return chart


def shown_merge_list(qtbot, hub: AppModel) -> MergeListView:
    view = MergeListView(hub)
    qtbot.addWidget(view)
    view.resize(400, 300)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_merge_list_follows_until_scrolled_away(qtbot):
    steps = list(trainer_from_file(DEMO_CORPUS, 1000, [EOT]))
    hub = run_hub()
    view = shown_merge_list(qtbot, hub)
    bar = view.table.verticalScrollBar()
    frame(hub, steps[:200])
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    frame(hub, steps[200:400])
    assert bar.value() == bar.maximum()
    bar.setValue(0)  # the user scrolls away
    frame(hub, steps[400:600])
    assert bar.value() == 0 and not view.following
    bar.setValue(bar.maximum())  # and back to the bottom
    frame(hub, steps[600:])
    assert bar.value() == bar.maximum()


def test_pair_chart_marks_the_next_merge(qtbot):
    hub = run_hub()
    chart = PairChart(hub)
    qtbot.addWidget(chart)
    pairs = [(b" t", b"he", 900), (b"a", b"nd", 500), (b"\n", b"\n", 20)]
    hub.set_pair_history(history_of(pairs))
    hub.publish()  # the chart draws on the frame
    assert chart.shown_pairs() == pairs
    assert chart.shown_bar_counts() == [900, 500, 20]
    assert pair_label(b" t", b"he") in chart.pairs_plot.titleLabel.text
    ticks = chart.pairs_plot.getAxis("left")._tickLevels[0]
    assert ticks[2][1].startswith("↵ + ↵")


def test_decay_plot_range_covers_every_merge(qtbot):
    import math

    steps = list(trainer_from_file(DEMO_CORPUS, 1500, [EOT]))
    hub = run_hub()
    chart = shown_chart(qtbot, hub, 900, 300)
    frame(hub, steps[:700])
    frame(hub, steps[700:])
    ranks, counts_drawn = chart.curve_data()
    assert list(ranks) == list(range(len(steps)))
    assert list(counts_drawn) == [max(s.count, 1) for s in steps]
    (x0, x1), (y0, y1) = chart.decay_plot.viewRange()
    counts = [s.count for s in steps]
    assert x0 <= 0 and x1 >= len(steps) - 1
    # The plot is log-scaled: its view range is in log10 units.
    assert y0 <= math.log10(min(counts)) and y1 >= math.log10(max(counts))
    assert y1 - y0 < 1.5 * (math.log10(max(counts)) - math.log10(min(counts))) + 0.5


def test_pair_chart_fits_its_widget_and_labels_every_bar(qtbot):
    """A long title once widened the pairs plot past its widget, which cut off its right side:
    the longest bar and the title's end were hidden. Every bar drawn carries its label."""
    hub = run_hub()
    chart = PairChart(hub)
    qtbot.addWidget(chart)
    chart.resize(600, 260)
    chart.show()
    qtbot.waitExposed(chart)
    long_token = "".join(chr(0x4E00 + i) for i in range(6)).encode()
    pairs = [(long_token, long_token, 5_731_000 - 1000 * i) for i in range(20)]
    hub.set_pair_history(history_of(pairs))
    hub.publish()

    def fits() -> bool:
        viewport = chart.pairs_widget.viewport().width()
        return chart.pairs_plot.geometry().width() <= viewport + 1

    qtbot.waitUntil(fits)
    shown = chart.shown_pairs()
    assert 3 <= len(shown) < len(pairs)  # 260 px cannot label 20 bars
    assert shown == pairs[: len(shown)]
    ticks = chart.pairs_plot.getAxis("left")._tickLevels[0]
    assert [t[0] for t in ticks] == list(range(len(shown)))
    (x0, x1), _ = chart.pairs_plot.viewRange()
    assert x0 <= 0 and x1 >= pairs[0][2]
    chart.resize(600, 700)  # taller: more bars, still each labelled
    qtbot.waitUntil(lambda: len(chart.shown_pairs()) > len(shown))
    assert chart.shown_pairs() == pairs[: len(chart.shown_pairs())]


def test_merge_list_at_step_zero_shows_the_first_merge(qtbot):
    """A scale audit: with the timeline moved to step 0, every view said step 0 but the
    merge list stayed scrolled where the step before had left it, rank 0 out of sight."""
    from bpe_studio.gui.model.state import TrainingResult

    steps = list(trainer_from_file(DEMO_CORPUS, 1000, [EOT]))
    hub = run_hub()
    view = shown_merge_list(qtbot, hub)
    frame(hub, steps)
    vocab = dict(initial_vocab([EOT]))
    vocab.update((s.new_id, s.left + s.right) for s in steps)
    hub.finish(TrainingResult(vocab, [(s.left, s.right) for s in steps], (EOT,), 0, False, 0.1))
    bar = view.table.verticalScrollBar()
    hub.select_step(600)
    assert bar.value() > 0 and view.selected_rank() == 599
    hub.select_step(0)
    assert bar.value() == 0 and view.selected_rank() is None
    assert not view.table.visualRect(view.model.index(0, 0)).isEmpty()


def test_long_pairs_leave_the_bars_and_the_title_their_room(qtbot):
    """Found by the app audit: at 1280x800, after 24,000 merges of Chinese text, one pair of
    long Han tokens took 320 of the chart's 340 pixels for its label: the bars shrank to a
    sliver and the title was cut to "#24,21" with no "…". The labels now take at most 45% of
    the chart, their tokens cut with "…", and a short pair keeps its whole label."""
    from PySide6.QtGui import QFontMetrics

    from bpe_studio.gui.views.common import plain_text

    hub = run_hub()
    chart = shown_chart(qtbot, hub, 700, 260)
    long = "党风廉政建设和反腐败斗争".encode()
    pairs = [("掩".encode(), "盖".encode(), 6), ("推进".encode(), long, 6), (long, long, 5)]
    hub.set_pair_history(history_of(pairs))
    hub.publish()
    axis = chart.pairs_plot.getAxis("left")
    width = chart.pairs_widget.width()
    qtbot.waitUntil(lambda: chart.shown_pairs() == pairs and axis.width() <= 0.45 * width + 1)
    metrics = QFontMetrics(chart._axis_font)
    labels = [label for _, label in axis._tickLevels[0]]
    assert labels[0].startswith("掩 + 盖")
    assert "…" in labels[1] and labels[1].startswith("推进 + ")
    assert all(metrics.horizontalAdvance(label) <= axis.width() for label in labels)
    title = plain_text(chart.pairs_plot.titleLabel.text)
    room = width - axis.width() - 16
    assert "掩 + 盖" in title and chart._title_metrics.horizontalAdvance(title) <= room
