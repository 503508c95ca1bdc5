"""What the demo and the charts tell a new user (issue 33, defect 11): the demo says it is
replaying while it does (the status line and the timeline); the editor has a legend for its
marks, drawn in the very colours it marks with; at the last step of a run that has ended, the
pair chart marks no pair as "next", since no merge comes after it (a paused run's next merge
still is)."""

from __future__ import annotations

from gui_helpers import paused_in_window, train_in_window

from bpe_studio.gui.app import DEMO_CORPUS, start_demo
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.views.theme import colours


def test_the_demo_says_it_is_replaying(qtbot, window):
    assert start_demo(window)
    state = window.state
    qtbot.waitUntil(lambda: state.replaying and 0 < state.step < state.published, timeout=60_000)
    assert window.panel.status.text().startswith("Replaying the run: step ")
    assert "Skip" in window.panel.status.text()
    assert window.timeline.label.text().startswith("Replaying: step ")
    window.timeline.replay.skip()
    assert not state.replaying
    assert window.panel.status.text().startswith("Done: ")
    assert window.timeline.label.text().startswith("step ")


def test_the_editor_has_a_legend_of_its_marks(qtbot, window):
    legend, edit = window.editor.legend, window.editor.edit
    assert legend.isVisible()
    assert legend.captions_text() == ["split character", "special", "selected", "line break"]
    c = colours()
    split, special, selected, line_break = legend.samples
    # Each sample in the colours the editor paints that mark with.
    assert edit._split_formats[0].background().color().name() == c.split[0]
    assert c.split[0] in split.styleSheet() and c.split_underline in split.styleSheet()
    assert edit._special_formats[0].background().color().name() == c.special[0]
    assert c.special[0] in special.styleSheet()
    assert c.accent in selected.styleSheet() and "border" in selected.styleSheet()
    assert line_break.text() == "↵"
    for sample in legend.samples:
        assert sample.toolTip()  # the meaning in full


def bar_colours(chart) -> list[str]:
    brushes = chart._bars.opts.get("brushes") or []
    return [brush.color().name() for brush in brushes]


def test_no_pair_is_next_after_the_last_merge_of_an_ended_run(qtbot, window):
    train_in_window(qtbot, window, DEMO_CORPUS, 600)
    state, chart = window.state, window.chart
    assert state.phase is Phase.FINISHED
    window.timeline.select_step(state.published)
    qtbot.waitUntil(lambda: chart.shown_step == state.published, timeout=10_000)
    assert chart.shown_pairs()  # pairs are left: none of them was merged
    assert "Next" not in chart.pairs_title() and "none merged" in chart.pairs_title()
    assert colours().accent not in bar_colours(chart)
    # One step back, the last merge was next: marked.
    window.timeline.select_step(state.published - 1)
    qtbot.waitUntil(lambda: chart.shown_step == state.published - 1, timeout=10_000)
    assert "Next" in chart.pairs_title() and bar_colours(chart)[0] == colours().accent


def test_a_paused_run_still_shows_its_next_merge(qtbot, window):
    paused_in_window(qtbot, window, DEMO_CORPUS, 2_000, 99)
    state, chart = window.state, window.chart
    qtbot.waitUntil(lambda: state.phase is Phase.PAUSED and state.published == 100, timeout=30_000)
    window.timeline.select_step(100)
    qtbot.waitUntil(lambda: chart.shown_step == 100, timeout=10_000)
    assert "Next" in chart.pairs_title() and bar_colours(chart)[0] == colours().accent
