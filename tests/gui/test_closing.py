"""Closing the window with merges no file holds asks Save / Discard / Cancel (issue 33, defect
1): a finished run, a paused one, one still training (paused while asked, and stopped cleanly
once closed), the demo's. Save writes the merges asked about and then closes; Cancel (or a
Save that did not happen) keeps the window and the run as they were."""

from __future__ import annotations

import io
import sys
import threading
from unittest import mock

import pytest
from gui_helpers import (
    EOT,
    FIXTURES,
    held_in_compile,
    paused_in_window,
    save_and_wait,
    save_ended,
    train_in_window,
)

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.gui.jobs import loader as loader_module
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.training.session import SETTLE_SECONDS, live_training_threads
from bpe_studio.gui.views.picker import preset_key

TINY = FIXTURES / "tinystories_sample.txt"
SLICE = FIXTURES / "tinystories_slice.txt"


def asking(window, answer: str) -> list[str]:
    """Answer the close question with ``answer``; the questions asked."""
    asked: list[str] = []

    def ask(title: str, question: str) -> str:
        asked.append(question)
        return answer

    window.ask_close = ask
    return asked


def test_closing_a_finished_run_nobody_saved_asks_and_cancel_keeps_it(qtbot, window):
    result = train_in_window(qtbot, window, TINY, 400)
    asked = asking(window, "cancel")
    window.close()
    assert len(asked) == 1 and f"{len(result.merges):,} merges" in asked[0]
    assert window.isVisible() and window.state.result is result  # nothing was lost


def test_save_from_the_close_question_writes_the_run_then_closes(qtbot, window, tmp_path):
    result = train_in_window(qtbot, window, TINY, 400)
    asking(window, "save")
    window.choose_save_target = lambda: (str(tmp_path / "out"), "gpt2")
    window.close()
    assert window.isVisible() and window.controller.saving  # until it has written
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    saved = Tokenizer.load(tmp_path / "out")
    assert saved.merges == result.merges


def test_a_save_that_does_not_happen_keeps_the_window(qtbot, window):
    train_in_window(qtbot, window, TINY, 400)
    asking(window, "save")
    window.choose_save_target = lambda: None  # the folder dialog was cancelled
    window.close()
    assert window.isVisible()


def test_a_saved_run_closes_without_a_question(qtbot, window, tmp_path):
    train_in_window(qtbot, window, TINY, 400)
    assert save_and_wait(qtbot, window, tmp_path, "gpt2")
    asked = asking(window, "cancel")
    window.close()
    assert asked == [] and not window.isVisible()


def test_after_a_partial_save_the_questions_count_the_merges_in_no_file(qtbot, window, tmp_path):
    """Audit h_tui61: saved at merge 500, resumed and finished at 1,743, the questions said
    the tokenizer "(1,243 merges) has not been saved"; 500 of its merges were."""
    session = paused_in_window(qtbot, window, TINY, 400, after=99)
    assert save_and_wait(qtbot, window, tmp_path, "hf")
    with qtbot.waitSignal(session.finished, timeout=60_000) as blocker:
        window.toggle_pause()
    total = len(blocker.args[0].merges)
    qtbot.waitUntil(lambda: not window.controller.busy, timeout=10_000)
    said = (
        f"{total - 100:,} of the {total:,} merges of the tokenizer trained on this run are in "
        "no file (a Save wrote its first 100)."
    )
    asked = asking(window, "cancel")
    window.close()
    assert asked == [f"{said} Closing the window discards those {total - 100:,}."]
    questions: list[str] = []
    window.ask = lambda title, question: questions.append(question) or False
    assert not window.start_training()
    assert questions == [f"{said} Training again discards those {total - 100:,}.\n\nDiscard them?"]
    assert "not been saved" not in questions[0]


def test_closing_while_training_pauses_asks_and_saves_the_merges_it_asked_about(
    qtbot, window, tmp_path
):
    full = train_bpe(SLICE, 3000, [EOT])[1]
    assert window.open_corpus(SLICE)
    window.panel.vocab_spin.setValue(3000)
    window.panel.workers_spin.setValue(1)
    assert window.start_training()
    session = window.controller.session
    session.pause_after(2000)  # it cannot end before the close comes
    qtbot.waitUntil(lambda: window.state.published >= 50, timeout=60_000)
    seen: dict[str, object] = {}

    def ask(title: str, question: str) -> str:
        seen["phase"] = window.state.phase  # the run holds still while the user reads
        seen["merges"] = window.state.merges_done
        return "save"

    window.ask_close = ask
    window.choose_save_target = lambda: (str(tmp_path / "out"), "hf")
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    assert seen["phase"] is Phase.PAUSED
    qtbot.waitUntil(lambda: live_training_threads() == 0, timeout=30_000)  # stopped cleanly
    saved = Tokenizer.load(tmp_path / "out" / "tokenizer.json")
    n = len(saved.merges)
    assert n == seen["merges"] and saved.merges == full[:n]


def test_closing_right_after_the_worker_paused_itself_asks_in_the_paused_state(
    qtbot, window, tmp_path
):
    """The worker reached its pause point (``pause_after``) and its report has not reached
    the GUI when the window closes (here it never does: the report's connection is cut): the
    question is asked in the paused state, and the merges saved are those asked about."""
    full = train_bpe(SLICE, 3000, [EOT])[1]
    assert window.open_corpus(SLICE)
    window.panel.vocab_spin.setValue(3000)
    window.panel.workers_spin.setValue(1)
    assert window.start_training()
    session = window.controller.session
    session.pause_after(2000)
    session._worker.paused.disconnect(session._on_worker_paused)
    qtbot.waitUntil(lambda: session.control.paused and window.state.published >= 50, timeout=60_000)
    assert window.state.phase is Phase.MERGING  # what the GUI knows
    seen: dict[str, object] = {}

    def ask(title: str, question: str) -> str:
        seen["phase"] = window.state.phase
        seen["merges"] = window.state.merges_done
        return "save"

    window.ask_close = ask
    window.choose_save_target = lambda: (str(tmp_path / "out"), "hf")
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    assert seen["phase"] is Phase.PAUSED
    qtbot.waitUntil(lambda: live_training_threads() == 0, timeout=30_000)
    saved = Tokenizer.load(tmp_path / "out" / "tokenizer.json")
    n = len(saved.merges)
    assert n == seen["merges"] and saved.merges == full[:n]


def test_closing_a_paused_run_and_discarding_it_closes(qtbot, window):
    paused_in_window(qtbot, window, SLICE, 3000, 300, workers=1)
    asked = asking(window, "discard")
    window.close()
    assert "301 merges" in asked[0] and not window.isVisible()


def test_closing_the_demo_asks_too(qtbot, window):
    from bpe_studio.gui.app import start_demo

    assert start_demo(window)
    with qtbot.waitSignal(window.controller.session.finished, timeout=60_000):
        pass
    asked = asking(window, "cancel")
    window.close()
    assert asked and window.isVisible()
    window.timeline.replay.skip()


INTERRUPTED = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from bpe_studio.gui.app import main
app = QApplication([])

def shown():
    if any(type(w).__name__ == "MainWindow" and w.isVisible() for w in app.topLevelWidgets()):
        print("shown", flush=True)
    else:
        QTimer.singleShot(20, shown)

QTimer.singleShot(50, shown)
sys.exit(main([]))
"""


def app_shown(preexec_fn=None):
    """The app started in a process group of its own, as a terminal starts a command, once
    its window is shown; ``preexec_fn`` runs in it first."""
    import os
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
        start_new_session=True, preexec_fn=preexec_fn,  # noqa: PLW1509 - a signal's handler
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "shown"
    return proc


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_ctrl_c_in_the_terminal_closes_the_app_as_its_close_button_does(name):
    # Found by fuzzing the app: Ctrl-C printed tracebacks (the window's event filter, the
    # curve process) and the app ran on. Now it closes the window, which ends the app. A
    # plain kill (SIGTERM) and the terminal closing (SIGHUP) ended it at once, unsaved
    # merges unasked about (a hostile-machine audit); they close it the same way.
    import os
    import signal

    proc = app_shown()
    try:
        os.killpg(proc.pid, getattr(signal, name))  # as a terminal sends: the whole group
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr


def test_a_hangup_the_app_was_started_to_ignore_stays_ignored():
    """The second review: under nohup, closing the terminal closed the app, as SIGHUP's
    handler replaced nohup's ignoring it. SIGTERM still closes it."""
    import os
    import signal
    import subprocess

    proc = app_shown(lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))  # as nohup does
    try:
        os.killpg(proc.pid, signal.SIGHUP)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=3)  # a signal ignored: the app runs on
        os.killpg(proc.pid, signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, stderr


def test_the_close_question_counts_the_merge_under_way_when_it_paused(
    qtbot, window, tmp_path, monkeypatch
):
    """A merge under way when closing pauses the run is made, and recorded, before the
    question counts the merges: the count asked about is what Save writes. Before, it came in
    while the question was open (its dialog runs the event loop), and Save wrote one more
    than the question said. Here the merge after the 50th is held until the pause is on
    screen, as a slow merge would be."""
    import re
    import threading

    from bpe_studio.gui.training import worker as worker_module

    real = worker_module.trainer_from_file
    state = window.state

    class SlowAfter50:
        def __init__(self, trainer) -> None:
            self._trainer = trainer

        def __getattr__(self, name: str):
            return getattr(self._trainer, name)

        def __iter__(self):
            for step in self._trainer:
                if step.rank == 50:
                    while state.phase is not Phase.PAUSED:  # the GUI has paused meanwhile
                        threading.Event().wait(0.001)
                yield step

    monkeypatch.setattr(
        worker_module, "trainer_from_file", lambda *a, **k: SlowAfter50(real(*a, **k))
    )
    assert window.open_corpus(SLICE)
    window.panel.vocab_spin.setValue(3000)
    window.panel.workers_spin.setValue(1)
    assert window.start_training()
    session = window.controller.session
    qtbot.waitUntil(lambda: window.state.published == 50, timeout=60_000)
    asked: list[int] = []

    def ask(title: str, question: str) -> str:
        asked.append(int(re.search(r"\(([\d,]+) merges\)", question)[1].replace(",", "")))
        # The question's dialog runs the event loop while it is open: the worker's report
        # that it sits at its pause point comes in, with every merge it made.
        qtbot.waitUntil(lambda: session.worker_waiting, timeout=10_000)
        return "save"

    window.ask_close = ask
    window.choose_save_target = lambda: (str(tmp_path / "out"), "hf")
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    saved = Tokenizer.load(tmp_path / "out" / "tokenizer.json")
    assert asked == [len(saved.merges)] == [51]


def test_holding_a_run_still_while_its_corpus_is_counted_waits_for_no_merge(
    qtbot, window, monkeypatch
):
    """``hold_still`` (the close question's) waits for the merge under way; a run still
    counting its corpus has none, and reaches no pause point until counting ends, so the GUI
    thread must not wait (it froze for up to 2 s). Counting is held here until the end."""
    import threading

    from bpe_studio.gui.training import worker as worker_module

    real = worker_module.trainer_from_file
    release = threading.Event()

    def counting_until_released(*args, **kwargs):
        release.wait(60)  # still counting, as far as the window knows
        return real(*args, **kwargs)

    monkeypatch.setattr(worker_module, "trainer_from_file", counting_until_released)
    assert window.open_corpus(SLICE)
    window.panel.workers_spin.setValue(1)
    assert window.start_training()
    session = window.controller.session
    try:
        assert window.state.phase is Phase.PRE_TOKENIZING
        waited: list[float | None] = []
        monkeypatch.setattr(
            session.control.holding_still, "wait", lambda t=None: waited.append(t) or False
        )
        session.hold_still()
        assert waited == [] and session.paused
        # An audit: the window says "counting" until the frame after merging began; a close
        # in between did not wait for the merge under way, and Save wrote one merge more
        # than the question named. Once the worker is past counting, it waits.
        session.resume()
        session.control.merging.set()  # as the worker sets it before its first merge
        assert window.state.phase is Phase.PRE_TOKENIZING
        session.hold_still()
        assert waited == [SETTLE_SECONDS] and session.paused
    finally:
        release.set()
    session.resume()
    qtbot.waitUntil(lambda: not window.state.phase.training, timeout=60_000)


def test_the_close_questions_save_offers_the_last_format_and_is_remembered(
    qtbot, window, tmp_path, monkeypatch
):
    # Found on a real display: the Format box always offered GPT-2, and a save from it was
    # not the "format saved last" Ctrl+S uses.
    from PySide6.QtWidgets import QInputDialog

    from bpe_studio.gui.views import file_dialogs
    from bpe_studio.gui.views.controls import SAVE_FORMATS
    from bpe_studio.gui.views.menu_bar import last_save_format, remember_save_format

    remember_save_format("tiktoken")  # the format saved last
    result = train_in_window(qtbot, window, TINY, 400)
    offered: list[tuple[list[str], int]] = []

    def get_item(parent, title, label, items, current, editable):
        offered.append((list(items), current))
        return next(i for i in items if i.startswith("Hugging Face")), True

    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(get_item))
    monkeypatch.setattr(file_dialogs, "existing_folder", lambda *a, **k: str(tmp_path / "out"))
    asking(window, "save")
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    ((items, current),) = offered
    assert items[current].startswith("tiktoken")
    assert Tokenizer.load(tmp_path / "out" / "tokenizer.json").merges == result.merges
    assert last_save_format(SAVE_FORMATS) == "hf"
    assert "Hugging Face" in window.menus.save_action.text()


def test_a_replay_holds_still_while_the_close_question_is_asked(qtbot, window):
    train_in_window(qtbot, window, TINY, 400)
    replay = window.timeline.replay
    replay.start()
    assert replay.running
    seen: dict[str, object] = {}

    def ask(title: str, question: str) -> str:
        seen["running"] = replay.running
        seen["step"] = window.state.step
        qtbot.wait(200)  # the user reads; the replay's frames would move the step
        seen["after"] = window.state.step
        return "cancel"

    window.ask_close = ask
    window.close()
    assert seen["running"] is False and seen["step"] == seen["after"]
    assert window.isVisible() and replay.running  # Cancel: the replay goes on


def test_the_close_questions_save_remembers_its_folder_only_once_saved(
    qtbot, window, tmp_path, monkeypatch
):
    # A session audit: a folder the save failed in (read-only, full) became the folder the
    # next save dialog opened in.
    from PySide6.QtWidgets import QInputDialog

    from bpe_studio.gui.views import file_dialogs

    train_in_window(qtbot, window, TINY, 400)
    failing, out = tmp_path / "failing", tmp_path / "out"
    (failing / "vocab.json").mkdir(parents=True)  # the save cannot write its vocab.json
    out.mkdir()
    folders = [str(failing), str(out)]
    first = staticmethod(lambda parent, title, label, items, *rest: (items[0], True))
    monkeypatch.setattr(QInputDialog, "getItem", first)
    monkeypatch.setattr(file_dialogs, "run_dialog", lambda *a, **k: [folders.pop(0)])
    asking(window, "save")
    window.close()
    assert not save_ended(qtbot, window)
    assert window.isVisible() and str(failing) in (window.last_error or "")
    assert file_dialogs.start_folder(file_dialogs.SAVE) != str(failing)
    window.error_box.close()
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    assert file_dialogs.start_folder(file_dialogs.SAVE) == str(out)


def test_the_close_questions_save_remembers_its_format_only_once_saved(
    qtbot, window, tmp_path, monkeypatch
):
    # A house audit: the format chosen for a save that then failed became Ctrl+S's (and the
    # next start's), as its folder did before.
    from PySide6.QtWidgets import QInputDialog

    from bpe_studio.gui.views import file_dialogs
    from bpe_studio.gui.views.controls import SAVE_FORMATS
    from bpe_studio.gui.views.menu_bar import last_save_format

    window.menus.note_save_format("hf")  # the format saved last
    train_in_window(qtbot, window, TINY, 400)
    failing = tmp_path / "failing"
    (failing / "tokenizer.tiktoken").mkdir(parents=True)  # the save cannot write it
    tiktoken = staticmethod(lambda parent, title, label, items, *rest: (items[2], True))
    monkeypatch.setattr(QInputDialog, "getItem", tiktoken)
    monkeypatch.setattr(file_dialogs, "run_dialog", lambda *a, **k: [str(failing)])
    asking(window, "save")
    window.close()
    assert not save_ended(qtbot, window)
    assert window.isVisible() and str(failing) in (window.last_error or "")
    assert last_save_format(SAVE_FORMATS) == "hf"
    assert "Hugging Face" in window.menus.save_action.text()
    window.error_box.close()


def test_closing_during_the_first_compile_hides_the_window_at_once(
    qtbot, window, monkeypatch, tmp_path
):
    """First-hour audit (h_first62): File > Quit (or the close button, Ctrl-C, SIGTERM) during
    the merge engine's first compile froze the window, its menu drawn open, until the compile
    ended: closing waited on the GUI thread for the worker, which sees the stop only once the
    compile is over. The window goes at once; the wait comes with the app's last close
    (``app.main`` once its event loop has ended), said in one line on stderr."""
    session, go = held_in_compile(qtbot, window, monkeypatch, tmp_path)

    class Stderr(io.StringIO):
        def write(self, text: str) -> int:
            go.set()  # the compile ends once the wait is said (here, at once)
            return super().write(text)

    said = Stderr()
    monkeypatch.setattr(sys, "stderr", said)
    try:
        window.close()
        # The close returned with the compile still holding the worker: nothing waited.
        assert not go.is_set() and not window.isVisible()
        assert session.is_running and said.getvalue() == ""
        window.close_without_asking()  # as main() does, the window gone: this one waits
    finally:
        go.set()
    assert live_training_threads() == 0
    assert said.getvalue() == (
        "bpe-studio: waiting for the merge engine to finish compiling before exiting "
        "(first run only)…\n"
    )


def test_the_window_is_gone_before_closing_waits_for_the_jobs_under_way(qtbot, window):
    """An audit (wrong order): closing while the editor's tokenizer was still being built
    (o200k over a long text) left the window on screen, frozen, while closing waited for
    that job (and the Report's, the lab's): 1.3 s with three. It is hidden before any wait."""
    train_in_window(qtbot, window, TINY, 400)
    window.picker.pick(preset_key("o200k_base"))  # built in the background
    seen: list[bool] = []
    for view in (window.editor_tokenizer, window.report, window.lab, window.controller):
        wait = view.shutdown

        def shutdown(*args, wait=wait, **kwargs):
            seen.append(window.isVisible())
            return wait(*args, **kwargs)

        view.shutdown = shutdown
    window.close()
    assert seen == [False] * 4 and not window.isVisible()


def test_the_title_marks_a_run_whose_merges_no_file_holds(qtbot, window, tmp_path):
    """An audit (wrong order): nothing on screen said whether the run shown was saved once
    a Save's notice had ended (at the next action), nor that a run resumed after a Save
    had learned merges no file holds, until closing asked. The title carries "*" (Qt's
    window-modified mark) exactly while there are such merges: what closing asks about."""
    assert window.windowTitle() == "BPE Studio[*]" and not window.isWindowModified()
    session = paused_in_window(qtbot, window, TINY, 400, after=99)
    qtbot.waitUntil(window.isWindowModified)
    assert save_and_wait(qtbot, window, tmp_path / "first", "gpt2")
    assert not window.isWindowModified()
    with qtbot.waitSignal(session.finished, timeout=60_000):
        window.toggle_pause()
    qtbot.waitUntil(lambda: window.hub.unsaved > 0 and window.isWindowModified())
    assert save_and_wait(qtbot, window, tmp_path / "whole", "hf")
    assert not window.isWindowModified()
    assert window.load_tokenizer(tmp_path / "whole" / "tokenizer.json")
    qtbot.waitUntil(lambda: not window.controller.busy, timeout=30_000)
    assert window.state.loaded is not None and not window.isWindowModified()
    window.ask = lambda title, question: True  # the run after it is let go when asked
    train_in_window(qtbot, window, TINY, 300)
    assert window.isWindowModified()
    window.controller.confirm = lambda title, question: True
    assert window.open_corpus(SLICE)  # discards the run: nothing left to save
    assert window.hub.unsaved == 0 and not window.isWindowModified()


def _close_while_loading(qtbot, window, answer: str, vocab_size: int, out) -> list[tuple]:
    """Train a run, let it go for a tokenizer whose load is held until the close question
    comes, then close, answering ``answer``; the run's merges."""
    result = train_in_window(qtbot, window, TINY, vocab_size)
    window.controller.confirm = lambda title, question: True  # the run let go for the file
    started, released = threading.Event(), threading.Event()
    real = loader_module.prepare_file

    def slow(*args, **kwargs):
        started.set()
        released.wait(30)
        return real(*args, **kwargs)

    def ask(title: str, question: str) -> str:
        assert f"{len(result.merges):,} merges" in question
        released.set()  # the load would end now
        qtbot.waitUntil(lambda: window.controller.loader._job.active_threads() == 0)
        qtbot.wait(50)  # its result, were it kept, would be delivered meanwhile
        return answer

    with mock.patch.object(loader_module, "prepare_file", slow):
        assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
        assert started.wait(30)
        window.ask_close = ask
        window.choose_save_target = lambda: (str(out), "gpt2")
        window.close()
    return result.merges


def test_a_load_under_way_when_the_window_closes_does_not_replace_what_is_saved(
    qtbot, window, tmp_path
):
    """A keyboard audit: a run let go for a tokenizer still loading, then Ctrl+Q. The load
    ended while the question was open: the loaded tokenizer replaced the run on screen, and
    Save wrote it (o200k's 199,742 merges) in place of the run's merges it asked about. The
    load now stops when the question comes; the run stays, as after a load that failed."""
    merges = _close_while_loading(qtbot, window, "cancel", 400, tmp_path / "out")
    assert window.isVisible() and window.state.result.merges == merges
    assert window.state.loading is None and window.state.phase is Phase.FINISHED
    assert window.hub.notice == "Loading gpt2_vocab.json was stopped: the window was closing"
    merges = _close_while_loading(qtbot, window, "save", 450, tmp_path / "out")
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    assert Tokenizer.load(tmp_path / "out").merges == merges


def test_closing_before_the_first_merge_asks_whether_to_stop(qtbot, window, monkeypatch, tmp_path):
    """A keyboard audit: Ctrl+Q while a large corpus was still pre-tokenizing closed the app
    at once, the minutes of counting lost. With no merge to save, it asks whether to stop."""
    session, go = held_in_compile(qtbot, window, monkeypatch, tmp_path)
    asked: list[str] = []
    try:
        window.ask = lambda title, question: asked.append(title) or False
        window.close()
        assert asked == ["Stop training and close?"] and window.isVisible()
        assert session.is_running
        window.ask = lambda title, question: asked.append(title) or True
        window.close()
        assert len(asked) == 2 and not window.isVisible()
    finally:
        go.set()
    window.close_without_asking()
    assert live_training_threads() == 0


def test_the_run_holds_still_while_the_stop_question_is_open(qtbot, window, monkeypatch, tmp_path):
    """A real-display audit: with "Stop training and close?" left open, the run went on
    behind it and finished, the question no longer true, and Yes then asked a second
    question about the merges made meanwhile. The run now holds still while it is asked
    (at its pause point before the first merge), and No lets it go on."""
    session, go = held_in_compile(qtbot, window, monkeypatch, tmp_path)
    seen: list[tuple[bool, int]] = []

    def ask(title: str, question: str) -> bool:
        paused = session.control.paused
        go.set()  # the compile ends while the user reads
        qtbot.waitUntil(session.control.holding_still.is_set, timeout=60_000)
        seen.append((paused, window.hub.unsaved))
        return False

    window.ask = ask
    window.ask_close = lambda title, question: pytest.fail(f"asked {title!r} with no merge")
    try:
        window.close()
    finally:
        go.set()
    assert seen == [(True, 0)] and window.isVisible()
    assert not session.control.paused  # No: the run goes on, as it was
    qtbot.waitUntil(lambda: window.state.phase is Phase.FINISHED, timeout=120_000)
    assert window.hub.unsaved > 0
    window.close_without_asking()
    assert live_training_threads() == 0
