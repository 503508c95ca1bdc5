"""The app gives freed memory back to the system when a run's thread ends and when a loaded
tokenizer replaces the one shown (``core.io.worker_memory.give_back_freed_memory``): a session
audit saw a long session grow with every train-and-load cycle, memory free to Python and to
glibc never returned."""

from __future__ import annotations

from gui_helpers import FIXTURES, train_in_window


def test_a_finished_run_and_a_load_give_freed_memory_back(qtbot, window, monkeypatch):
    from bpe_studio.gui.training import controller, session

    calls: list[str] = []
    monkeypatch.setattr(session, "give_back_freed_memory", lambda: calls.append("run") or True)
    monkeypatch.setattr(controller, "give_back_freed_memory", lambda: calls.append("load") or True)
    train_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 300)
    qtbot.waitUntil(lambda: "run" in calls, timeout=30_000)  # once the thread has ended
    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000):
        window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
    assert calls.count("load") == 1
