"""Training through the window, checked against the core's own results computed here."""

from __future__ import annotations

import threading

import pytest
from gui_helpers import (
    EOT,
    drop_event,
    held_in_compile,
    paused_in_window,
    save_and_wait,
    train_in_window,
    wait_for_spans,
)
from PySide6.QtCore import QEvent, QMimeData, QObject, QPoint, Qt, QTimer, QUrl
from PySide6.QtGui import QDragEnterEvent

from bpe_studio.core import Tokenizer, train_bpe, trainer_from_file
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.main_window import SAMPLE_TEXT
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.training.session import live_training_threads
from bpe_studio.gui.views.table_models import SORT_ROLE, TOKEN_ID_ROLE

VOCAB = 1000


@pytest.fixture(scope="module")
def reference():
    """The core's own run on the bundled corpus: merges, vocab, counts, the final top pairs."""
    vocab, merges = train_bpe(DEMO_CORPUS, VOCAB, [EOT])
    trainer = trainer_from_file(DEMO_CORPUS, VOCAB, [EOT])
    steps = list(trainer)
    return {"vocab": vocab, "merges": merges, "steps": steps, "top": trainer.top_pairs(20)}


def test_full_training_matches_core(qtbot, window, reference):
    result = train_in_window(qtbot, window, DEMO_CORPUS, VOCAB)
    assert result is not None and not result.stopped
    assert result.merges == reference["merges"]
    assert result.vocab == reference["vocab"]

    # Merge list: one row per merge, rank / tokens / count as the trainer made them.
    model = window.merge_list.model
    assert model.rowCount() == len(reference["merges"]) == VOCAB - 257
    for row in (0, 1, 100, model.rowCount() - 1):
        step, expected = model.step_at(row), reference["steps"][row]
        assert step == expected
        assert model.data(model.index(row, 4)) == f"{expected.count:,}"
    # Vocabulary table: vocab_size rows, ids and bytes as the core's vocabulary.
    vocab_model = window.vocab_table.model
    assert vocab_model.rowCount() == VOCAB
    assert {
        vocab_model.token_at(r)[0]: vocab_model.token_at(r)[1]
        for r in range(vocab_model.rowCount())
    } == reference["vocab"]
    # Chart: the final top pairs the trainer reports, and one decay point per merge.
    # (As many of them as the chart has room to label.)
    shown = window.chart.shown_pairs()
    assert len(shown) >= 5
    assert shown == reference["top"][: len(shown)]
    assert window.chart.shown_bar_counts() == [c for _, _, c in shown]
    ranks, counts = window.chart.curve_data()
    assert list(counts) == [max(s.count, 1) for s in reference["steps"]]
    assert list(ranks) == list(range(len(reference["steps"])))
    # Editor: spans equal to the core tokenizer's for the same text.
    spans = wait_for_spans(qtbot, window.editor)
    tok = Tokenizer(reference["vocab"], reference["merges"], [EOT])
    assert window.editor.text() == SAMPLE_TEXT
    assert spans.to_spans() == tok.spans(SAMPLE_TEXT)
    assert window.panel.status.text().startswith(f"Done: {VOCAB - 257:,} merges")
    assert window.panel.save_button.isEnabled() and window.panel.train_button.isEnabled()
    # One state: the record of the run is the trainer's, and every view shows its last step.
    state = window.state
    assert state.phase is Phase.FINISHED and state.record == reference["steps"]
    assert state.step == state.published == len(reference["steps"]) and state.live


def test_views_update_on_the_gui_thread(qtbot, window):
    seen: list[bool] = []
    main = threading.get_ident()

    def record(first, last):
        seen.append(threading.get_ident() == main)

    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(600)
    window.hub.merges_added.connect(record)
    window.start_training()
    with qtbot.waitSignal(window.controller.session.finished, timeout=60_000):
        pass
    assert seen and all(seen)


def test_frames_and_repaints_hold_the_trainer(qtbot, window):
    """Each frame the views draw, and each repaint of the window, runs with the trainer held
    at a merge boundary (responsiveness.trainer_hold.GuiTurn): checked while merging and while
    paused."""
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(10_000)
    held_in_frames: list[bool] = []
    hub = window.hub

    def on_frame(first, last):
        turn = window.controller.gui_turn()
        if turn is not None and turn.active:
            held_in_frames.append(not turn.gui_free.is_set())

    hub.merges_added.connect(on_frame)
    window.start_training()
    session = window.controller.session
    session.pause_after(200)
    qtbot.waitUntil(lambda: session.worker_waiting, timeout=30_000)
    assert hub.state.phase is Phase.PAUSED and hub.state.published == 201
    assert held_in_frames and all(held_in_frames)

    painted: list[bool] = []

    class PaintProbe(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt override
            if event.type() == QEvent.Type.Paint:
                painted.append(not session.turn.gui_free.is_set())
            return False

    probe = PaintProbe()
    viewport = window.merge_list.table.viewport()
    viewport.installEventFilter(probe)
    viewport.update()
    qtbot.waitUntil(lambda: bool(painted), timeout=10_000)
    viewport.removeEventFilter(probe)
    assert all(painted)
    with qtbot.waitSignal(session.finished, timeout=30_000):
        window.stop_training()


def test_selecting_a_merge_selects_its_token(qtbot, window, reference):
    train_in_window(qtbot, window, DEMO_CORPUS, VOCAB)
    window.merge_list.select_rank(42)
    expected = reference["steps"][42].new_id
    model = window.merge_list.model
    assert model.data(model.index(42, 0), TOKEN_ID_ROLE) == expected
    assert window.state.selected_token == expected
    assert window.vocab_table.selected_token_id() == expected


def test_pause_resume_and_stop_midway(qtbot, window, tmp_path):
    full = train_bpe(DEMO_CORPUS, 10_000, [EOT])[1]
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(10_000)
    state = window.state
    window.start_training()
    session = window.controller.session
    session.pause_after(200)
    # The worker pauses after merge 200 and the GUI publishes every merge made before it.
    qtbot.waitUntil(lambda: session.worker_waiting, timeout=30_000)
    assert state.phase is Phase.PAUSED and window.panel.pause_button.text() == "Resume"
    held = state.published
    assert held == len(state.record) == state.step == 201
    assert "Paused" in window.panel.status.text() and f"{held:,}" in window.panel.status.text()
    # Every view shows the same step: the vocabulary table has a row per merge published, and
    # selecting a merge finds its token there.
    assert window.vocab_table.model.rowCount() == 257 + held
    assert window.merge_list.model.rowCount() == held
    window.merge_list.select_rank(held - 1)
    assert window.vocab_table.selected_token_id() == 257 + held - 1  # ids: bytes, EOT, merges
    # Paused, the run's tokenizer is one source with every merge made: a move of the step
    # builds no other (each view cuts the step from it), and nothing waits for a rebuild
    # (the monkey audit: a move rebuilt it only at the next frame, half a second on).
    qtbot.waitUntil(lambda: not window.controller.editor_refresh_pending, timeout=10_000)
    whole = state.shown
    assert whole.merge_count == held
    window.hub.select_step(100)
    assert state.shown is whole and not window.controller.editor_refresh_pending
    window.hub.follow_live()

    # Resume and pause again at once: the worker wakes, makes at least one merge, and stops at
    # its next pause point; then every merge it made is published.
    window.toggle_pause()
    assert state.phase is Phase.MERGING
    window.toggle_pause()
    assert state.phase is Phase.PAUSED
    qtbot.waitUntil(lambda: session.worker_waiting and state.published > held, timeout=30_000)
    held = state.published
    assert held == len(state.record) == state.step
    with qtbot.waitSignal(session.finished, timeout=30_000) as blocker:
        window.stop_training()
    result = blocker.args[0]
    assert result.stopped and len(result.merges) == held
    assert result.merges == full[: len(result.merges)]
    assert window.merge_list.model.rowCount() == len(result.merges)
    assert state.phase is Phase.STOPPED and "Stopped" in window.panel.status.text()

    # A stopped run saves the merges made so far, in GPT-2 format.
    assert save_and_wait(qtbot, window, tmp_path)
    saved = Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert saved.merges == result.merges


def test_closing_mid_training_stops_the_thread(qtbot, window):
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(10_000)
    window.start_training()
    qtbot.waitUntil(lambda: window.state.published > 0, timeout=30_000)
    window.close()  # the autouse fixture then asserts no training thread is left
    assert window.controller.session.control.stopped


def test_train_again_resets_the_views(qtbot, window):
    train_in_window(qtbot, window, DEMO_CORPUS, 400)
    result = train_in_window(qtbot, window, DEMO_CORPUS, 300)
    assert window.merge_list.model.rowCount() == len(result.merges) == 300 - 257
    assert window.vocab_table.model.rowCount() == 300
    assert window.state.record == list(trainer_from_file(DEMO_CORPUS, 300, [EOT]))


def test_editor_retokenizes_while_training(qtbot, window):
    """While paused, the editor tokenizes with the merges up to the step every view shows
    (while merging it does so too, paced: responsiveness.frame_budget.EDITOR_REFRESH_*)."""
    state = window.state
    session = paused_in_window(qtbot, window, DEMO_CORPUS, 3000, 499)
    n = state.published
    assert state.step == n == 500
    label = f"Tokenizer: training, {n:,} merges so far"
    # The rebuild comes in the event loop's next turn after the frame (controller).
    qtbot.waitUntil(lambda: window.editor.source.label == label, timeout=10_000)
    source = window.editor.source
    assert source.get().merges == [(s.left, s.right) for s in state.record[:n]]
    spans = wait_for_spans(qtbot, window.editor)
    expected = Tokenizer(state.vocab_at(n), state.merges_at(n), [EOT]).spans(SAMPLE_TEXT)
    assert spans.to_spans() == expected
    with qtbot.waitSignal(session.finished, timeout=60_000):
        window.toggle_pause()
    assert "trained on" in window.editor.source.label


def test_a_paused_runs_editor_header_says_it_is_paused(qtbot, window):
    """Paused, the editor's header says so and at which merge (it said "training, 500 merges
    so far", as if the run went on); resumed, "training" again; stopped, the result's words."""
    paused_in_window(qtbot, window, DEMO_CORPUS, 3000, 499)
    header = window.editor.source_label
    qtbot.waitUntil(lambda: header.text() == "paused at merge 500", timeout=10_000)
    window.hub.select_step(100)  # the controller rebuilds the editor's tokenizer at step 100
    expected = "100 of 500 merges, paused at merge 500"
    qtbot.waitUntil(lambda: header.text() == expected, timeout=10_000)
    window.toggle_pause()
    # The resume itself makes no tokenizer (the step stays): the words change at once.
    assert header.text() == "training, 100 of 500 merges so far"
    window.stop_training()
    qtbot.waitUntil(lambda: not window.state.phase.training, timeout=60_000)
    qtbot.waitUntil(lambda: "trained on" in header.text(), timeout=10_000)
    assert "paused" not in header.text() and "training" not in header.text()


def test_the_editors_tokenizer_during_a_run_is_built_off_the_gui_thread(qtbot, window, monkeypatch):
    # Building it (the vocabulary and merges so far) on the GUI thread made the largest gaps
    # of a run while the trainer ran (docs/responsiveness.md).
    from bpe_studio.gui.model import run_steps

    built_in: list[threading.Thread] = []

    def noting_tokenizer(*args, **kwargs):
        built_in.append(threading.current_thread())
        return Tokenizer(*args, **kwargs)

    # The run's tokenizer is built once, in run_steps, and each step cut from it.
    monkeypatch.setattr(run_steps, "Tokenizer", noting_tokenizer)
    session = paused_in_window(qtbot, window, DEMO_CORPUS, 3000, 499)
    label = f"Tokenizer: training, {window.state.published:,} merges so far"
    qtbot.waitUntil(lambda: window.editor.source.label == label, timeout=10_000)
    wait_for_spans(qtbot, window.editor)
    assert built_in and threading.main_thread() not in built_in
    with qtbot.waitSignal(session.finished, timeout=60_000):
        window.toggle_pause()


def test_vocabulary_sorts_by_count(qtbot, window):
    train_in_window(qtbot, window, DEMO_CORPUS, 600)
    view = window.vocab_table
    view.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
    proxy = view.proxy
    counts = [proxy.data(proxy.index(r, 4), SORT_ROLE) for r in range(proxy.rowCount())]
    assert counts == sorted(counts, reverse=True) and counts[0] > 0


def test_dropping_a_file_opens_it(qtbot, window, tmp_path):
    corpus = tmp_path / "dropped.txt"
    corpus.write_text("a b c\n", encoding="utf-8")
    event = drop_event(corpus)
    window.dropEvent(event)
    assert window.state.corpus == corpus.resolve()
    assert window.panel.train_button.isEnabled()


def test_a_file_dragged_in_while_a_run_is_paused_is_refused_with_a_reason(qtbot, window, tmp_path):
    """Open is off while a run trains or is paused; a file dragged onto the window then is
    refused, and the status line says why (the cursor alone said nothing)."""
    corpus = tmp_path / "dragged.txt"
    corpus.write_text("a b c\n", encoding="utf-8")
    session = paused_in_window(qtbot, window, DEMO_CORPUS, 3000, 499)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(corpus))])
    event = QDragEnterEvent(
        QPoint(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dragEnterEvent(event)
    assert not event.isAccepted()
    assert "Stop" in window.statusBar().currentMessage()
    assert window.state.corpus != corpus.resolve()
    with qtbot.waitSignal(session.finished, timeout=60_000):
        window.toggle_pause()


def test_closing_right_after_train_is_clicked(qtbot, window):
    assert window.open_corpus(DEMO_CORPUS)
    window.start_training()
    window.close()  # before the thread has even started
    # The deferred start is a zero-interval timer: one queued after it fires after it.
    after: list[bool] = []
    QTimer.singleShot(0, lambda: after.append(True))
    qtbot.waitUntil(lambda: bool(after), timeout=5_000)
    assert live_training_threads() == 0


def test_the_first_compile_of_the_merge_engine_is_a_phase_of_its_own(
    qtbot, window, monkeypatch, tmp_path
):
    """A corpus above the threshold trains with the compiled engine; while its first-run
    compile holds the run up (here after the counting is over), the status line says so and
    the bar is busy, rather than sitting at "100%" of pre-tokenizing. (The threshold is lowered
    and the compile stands in a wrapper that waits, so the test does not depend on numba's
    cache being cold.)"""
    session, go = held_in_compile(qtbot, window, monkeypatch, tmp_path)
    panel = window.panel
    try:
        assert panel.status.text().startswith("Compiling the merge engine (first run only)")
        assert panel.progress.maximum() == 0  # busy, not a fraction of the counting
        assert window.state.phase is Phase.PRE_TOKENIZING
    finally:
        go.set()
    with qtbot.waitSignal(session.finished, timeout=60_000) as blocker:
        pass
    result = blocker.args[0]
    assert result is not None
    assert result.merges == train_bpe(tmp_path / "small.txt", 400, [EOT], engine="python")[1]
    assert panel.status.text().startswith("Done: ")


def test_a_stop_held_by_the_first_compile_says_so(qtbot, window, monkeypatch, tmp_path):
    """First-hour audit (h_first62): Stop during the merge engine's first compile showed
    "Stopping…" for as long as the compile lasted, with no reason (the worker sees the stop
    once the compile ends). The line says what the stop waits for, and the run then ends as
    stopped."""
    session, go = held_in_compile(qtbot, window, monkeypatch, tmp_path)
    status = window.panel.status
    try:
        window.stop_training()
        qtbot.waitUntil(
            lambda: status.text() == "Stopping once the merge engine is compiled (first run only)…",
            timeout=10_000,
        )
    finally:
        go.set()
    with qtbot.waitSignal(session.finished, timeout=60_000) as blocker:
        pass
    assert blocker.args[0] is not None and blocker.args[0].stopped
    assert window.state.phase is Phase.STOPPED


def test_stop_before_the_thread_starts_still_ends_the_run(qtbot, window):
    # The thread starts once the window has repainted after Train (StartWhenSettled); a Stop
    # in between must still end the run, as stopped with nothing learned.
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(1_000)
    assert window.start_training()
    session = window.controller.session
    assert not session._thread.isRunning()  # still waiting for the window to settle
    with qtbot.waitSignal(session.finished, timeout=30_000) as blocker:
        window.stop_training()
    result = blocker.args[0]
    assert result is not None and result.stopped and result.merges == []
    assert window.state.phase is Phase.STOPPED


def test_the_thread_starts_after_the_window_repainted(qtbot, window):
    # Shown and reset for the run, the window repaints before the worker thread starts.
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(300)
    window.show()
    qtbot.waitExposed(window)
    painted_before_start = []
    assert window.start_training()
    session = window.controller.session
    turn = session.turn
    on_painted = turn.on_painted
    assert on_painted is not None

    def note_paint() -> None:
        painted_before_start.append(not session._thread.isRunning())
        on_painted()

    turn.on_painted = note_paint
    with qtbot.waitSignal(session.finished, timeout=60_000) as blocker:
        pass
    assert blocker.args[0] is not None and not blocker.args[0].stopped
    assert painted_before_start and painted_before_start[0]
