"""The merge list, vocabulary table and pair chart at the timeline's step k (issue 9), and the
run's record of the pairs before each merge that the chart reads.

References are computed here, independently: the pre-token counts with ``count_file``, the pairs
before merge k by applying merges one after another in plain Python
(``core.reference.top_pairs_after``), the marks at k from the
trainer's own merge records.
"""

from __future__ import annotations

import pytest
from gui_helpers import EOT, train_in_window
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from bpe_studio.core import count_file
from bpe_studio.core.reference import top_pairs_after
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.views.pair_chart import pair_label
from bpe_studio.gui.views.table_models import TOKEN_ID_ROLE
from bpe_studio.gui.views.theme import colours

VOCAB = 600


@pytest.fixture
def trained_window(qtbot, window):
    train_in_window(qtbot, window, DEMO_CORPUS, VOCAB)
    qtbot.waitUntil(lambda: not window.chart.pending, timeout=30_000)
    return window


def at_step(qtbot, window, k):
    window.hub.select_step(k)
    qtbot.waitUntil(lambda: not window.chart.pending, timeout=30_000)


def test_the_run_keeps_the_pairs_before_every_merge(trained_window):
    state = trained_window.hub.state
    history = state.pair_history
    assert history is not None and len(history) == state.published + 1
    for s in state.record:
        assert history.top_pairs(s.rank, 1) == [(s.left, s.right, s.count)]


def test_pair_chart_shows_the_pairs_before_merge_k(qtbot, trained_window):
    state, chart = trained_window.hub.state, trained_window.chart
    steps = list(state.record)
    counts = dict(count_file(DEMO_CORPUS, [EOT]))
    for k in (0, 1, 9, 30):
        at_step(qtbot, trained_window, k)
        merges = [(s.left, s.right) for s in steps[:k]]
        shown = chart.shown_pairs()  # as many as the chart has room to label
        assert len(shown) >= 5
        assert shown == top_pairs_after(counts, merges, chart.top_k)[: len(shown)], f"k={k}"
    for k in (0, 57, 200, len(steps) - 1):
        at_step(qtbot, trained_window, k)
        s = steps[k]
        # Independent of any recount: the pair the trainer merged next, with its count.
        assert chart.shown_pairs()[0] == (s.left, s.right, s.count)
        assert pair_label(s.left, s.right) in chart.pairs_plot.titleLabel.item.toPlainText()
        assert chart.cursor_step() == k


def test_pair_chart_step_requests_latest_wins(qtbot, trained_window):
    # Many steps asked for at once: the chart ends on the last one asked.
    for k in range(100, 140):
        trained_window.hub.select_step(k)
    qtbot.waitUntil(lambda: not trained_window.chart.pending, timeout=30_000)
    s = trained_window.hub.state.record[139]
    assert trained_window.chart.shown_pairs()[0] == (s.left, s.right, s.count)


def test_merge_list_selects_merge_k_and_greys_the_rest(qtbot, trained_window):
    view, hub = trained_window.merge_list, trained_window.hub
    picked: list[int] = []
    hub.token_selected.connect(lambda value: picked.append(value))
    at_step(qtbot, trained_window, 25)
    assert view.selected_rank() == 24
    assert picked == []  # following the step selects no token
    model = view.model
    fg = Qt.ItemDataRole.ForegroundRole
    assert model.data(model.index(24, 1), fg) is None
    assert model.data(model.index(25, 1), fg) == QColor(colours().later)
    # A click on a merge selects the token it made; a double-click shows the step after it.
    row = 40
    rect = view.table.visualRect(model.index(row, 1))
    view.table.scrollTo(model.index(row, 1))
    rect = view.table.visualRect(model.index(row, 1))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert picked == [hub.state.record[row].new_id]
    # The monkey audit: the click's highlight on merge 41 was all that marked a row, while
    # every other view stayed at step 25. The step's row keeps a mark of its own.
    assert hub.state.step == 25 and view.selected_rank() == row
    ranks = [model.data(model.index(r, 0)) for r in (23, 24, row)]
    assert ranks == ["23", "▸ 24", "40"]
    qtbot.mouseDClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert hub.state.step == row + 1 and not hub.state.live
    qtbot.waitUntil(lambda: model.data(model.index(row, 0)) == "▸ 40", timeout=10_000)
    assert model.data(model.index(24, 0)) == "24"


def test_vocabulary_greys_and_hides_tokens_after_step(qtbot, trained_window):
    view, hub = trained_window.vocab_table, trained_window.hub
    steps = list(hub.state.record)
    k = 50
    at_step(qtbot, trained_window, k)
    model, fg = view.model, Qt.ItemDataRole.ForegroundRole
    for s in (steps[0], steps[k - 1], steps[k], steps[-1]):
        row = model.row_of_id(s.new_id)
        expected = QColor(colours().later) if s.rank >= k else None
        assert model.data(model.index(row, 1), fg) == expected
    view.hide_box.setChecked(True)
    qtbot.waitUntil(lambda: not view.busy, timeout=30_000)
    shown = {
        view.proxy.data(view.proxy.index(r, 0), TOKEN_ID_ROLE) for r in range(view.proxy.rowCount())
    }
    assert shown == set(range(257)) | {s.new_id for s in steps[:k]}
    # The timeline moves: the hidden set follows.
    at_step(qtbot, trained_window, 10)
    qtbot.waitUntil(lambda: not view.busy and view.proxy.rowCount() == 267, timeout=30_000)
    view.hide_box.setChecked(False)
    qtbot.waitUntil(lambda: not view.busy, timeout=30_000)
    assert view.proxy.rowCount() == VOCAB


def test_all_views_show_the_same_step_in_every_frame(qtbot, window):
    seen: list[tuple[int, int, int, int]] = []
    table = window.vocab_table
    waiting_in_view: list[int] = []  # frames where a token that waits would be in view

    def check() -> None:
        s = window.hub.state
        seen.append(
            (
                s.step,
                window.merge_list.model.rowCount(),
                # Every token counts (the title's count); while merging, the rows that would
                # land below the rows in view may wait for a later frame (vocab_table).
                table.model.total_rows - 257,
                len(window.chart.curve_data()[0]),
            )
        )
        rows = table.model.rowCount()
        if rows < table.model.total_rows:
            last_in_view = table.table.rowAt(table.table.viewport().height() - 1)
            if not 0 <= last_in_view < rows - 1:
                waiting_in_view.append(s.step)

    window.hub.updated.connect(check)
    train_in_window(qtbot, window, DEMO_CORPUS, 1500)
    merging = [frame for frame in seen if frame[0] > 0]
    assert merging, "no frame was published"
    for frame in merging:
        assert len(set(frame)) == 1, frame
    assert not waiting_in_view
    assert table.model.rowCount() == table.model.total_rows  # all there once the run is over


def test_live_pairs_are_those_before_the_merge_after_the_step_shown(qtbot, window, monkeypatch):
    from bpe_studio.gui.responsiveness import frame_budget

    # Frames as often as the machine allows: many live frames to check.
    monkeypatch.setattr(frame_budget, "FRAME_BUDGET", 1.0)
    monkeypatch.setattr(frame_budget, "MIN_FRAME_SECONDS", 0.0)
    frames: list[tuple[int, list]] = []
    held_back: list[tuple[int, int]] = []

    def check() -> None:
        s = window.hub.state
        if s.phase.value == "merging" and s.live and s.step > 0:
            frames.append((s.step, window.chart.shown_pairs()))
            # A frame shows every merge drained into the record: none waits for a report.
            if s.published != len(s.record):
                held_back.append((s.published, len(s.record)))

    window.hub.updated.connect(check)
    train_in_window(qtbot, window, DEMO_CORPUS, 10_000)
    steps = window.hub.state.record
    live = [(k, shown) for k, shown in frames if k < len(steps)]
    assert live, "no live frame before the last merge"
    for k, shown in live:
        # Independent of the chart's source: the pair the trainer merged next, and its count.
        nxt = steps[k]
        assert shown and shown[0] == (nxt.left, nxt.right, nxt.count), k
    assert not held_back
