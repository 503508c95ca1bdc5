"""The run's end shown in two turns, and background work waiting while the window repaints
(docs/responsiveness.md, "The run's end"). Timing is benchmarks/gui_bench.py's; this tests
the order of things and what every view shows."""

from __future__ import annotations

import threading

from gui_helpers import EOT, train_in_window

from bpe_studio.core import trainer_from_file
from bpe_studio.core.train import trainer as core_trainer
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.curves import FEED_CHUNK, CurveFeeder
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.responsiveness import busy
from bpe_studio.gui.responsiveness.busy import gui_busy, wait_while_gui_busy
from bpe_studio.gui.responsiveness.trainer_hold import GuiTurn


def test_the_window_shows_the_last_merge_before_the_trainer_frees_its_state(
    qtbot, window, monkeypatch
):
    seen: list[tuple[bool, int]] = []  # at close: was the end shown, merges published
    close = core_trainer.BpeTrainer.close

    def noting_close(self) -> None:
        session = window.controller.session
        seen.append((session.turn.end_shown.is_set(), window.state.published))
        close(self)

    monkeypatch.setattr(core_trainer.BpeTrainer, "close", noting_close)
    result = train_in_window(qtbot, window, DEMO_CORPUS, 700)
    n = len(result.merges)
    assert seen == [(True, n)]
    # Every view shows the finished run at its last merge, however the end was sliced.
    state = window.state
    assert state.phase is Phase.FINISHED and state.step == state.published == n
    assert [(s.left, s.right) for s in state.record] == result.merges
    assert window.merge_list.model.rowCount() == n
    assert window.vocab_table.model.rowCount() == 700
    expected = list(trainer_from_file(DEMO_CORPUS, 700, [EOT]))
    assert state.record == expected
    ranks, counts = window.chart.curve_data()
    assert ranks.tolist() == [s.rank for s in expected]
    assert counts.tolist() == [max(s.count, 1) for s in expected]


def test_a_stopped_run_ends_without_waiting_for_the_window(qtbot, window):
    """Stopping releases the turn, end_shown with it: the worker never waits for a frame."""
    turn = GuiTurn()
    turn.active = True
    assert not turn.end_shown.is_set()
    turn.release()
    assert turn.end_shown.is_set() and turn.gui_free.is_set()


def test_background_work_waits_while_the_window_repaints_or_a_frame_holds():
    returned = threading.Event()

    def background() -> None:
        wait_while_gui_busy(limit=30.0)
        returned.set()

    turn = GuiTurn()
    turn.active = True
    assert turn.begin_hold()
    with gui_busy():
        pass  # a repaint inside the frame's hold: the hold still counts after it
    waiter = threading.Thread(target=background)
    waiter.start()
    # subtle: a negative check can only be bounded; were the gate broken, the thread would
    # have returned at once.
    assert not returned.wait(0.2)
    turn.end_hold()
    assert returned.wait(30.0)
    waiter.join()
    # Not held (no worker): nothing to wait for.
    idle = GuiTurn()
    assert not idle.begin_hold()
    wait_while_gui_busy(limit=30.0)
    assert busy._gui_quiet.is_set()


def test_the_curve_feeder_sends_a_frame_of_merges_in_chunks(monkeypatch):
    feeder = CurveFeeder()
    sent: list[tuple] = []
    monkeypatch.setattr(feeder, "_put", sent.append)
    rows = list(range(2 * FEED_CHUNK + 3))
    feeder.feed(rows)
    assert [len(c[1]) for c in sent] == [FEED_CHUNK, FEED_CHUNK, 3]
    assert [r for c in sent for r in c[1]] == rows
    feeder.feed([])
    assert len(sent) == 3


def test_the_curve_process_starts_in_the_feeder_thread_not_the_gui_thread(qtbot, monkeypatch):
    # The app's first process also starts multiprocessing's fork server and waits for it: on
    # the GUI thread, the first Train with the curve on froze the window meanwhile.
    started_in: list[threading.Thread] = []
    start_process = CurveFeeder._start_process

    def noting(self) -> None:
        started_in.append(threading.current_thread())
        start_process(self)

    monkeypatch.setattr(CurveFeeder, "_start_process", noting)
    feeder = CurveFeeder()
    try:
        feeder.begin({})
        qtbot.waitUntil(lambda: not feeder.busy, timeout=60_000)
        assert started_in and started_in[0] is not threading.main_thread()
        assert feeder.running and not feeder.take_failures()
    finally:
        feeder.shutdown()
    assert not feeder.running


def test_a_curve_process_that_cannot_start_is_reported_and_drops_the_work(qtbot, monkeypatch):
    def failing(self) -> None:
        raise OSError("no more processes")

    monkeypatch.setattr(CurveFeeder, "_start_process", failing)
    feeder = CurveFeeder()
    try:
        feeder.begin({})
        feeder.feed([1, 2, 3])
        qtbot.waitUntil(lambda: not feeder.busy, timeout=60_000)
        failures = feeder.take_failures()
        assert len(failures) == 1 and "no more processes" in failures[0]
    finally:
        feeder.shutdown()
    assert not feeder.running
