"""The cyclic garbage collector runs on the GUI thread only (responsiveness.collector's
GuiThreadCollector): a collection on a worker thread can destroy Qt wrappers there and
deadlock with the GUI."""

from __future__ import annotations

import gc
import threading

from bpe_studio.gui.responsiveness import collector


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_collections_happen_on_the_gui_thread_only(qtbot):
    collector.collect_on_gui_thread()
    assert not gc.isenabled()
    threads: list[str] = []

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            threads.append(threading.current_thread().name)

    def make_garbage() -> None:
        for _ in range(50 * gc.get_threshold()[0]):
            Cycle()

    gc.callbacks.append(record)
    try:
        worker = threading.Thread(target=make_garbage, name="garbage-maker")
        worker.start()
        worker.join()
        assert "garbage-maker" not in threads  # far past the threshold, still no collection
        qtbot.waitUntil(lambda: threading.main_thread().name in threads, timeout=10_000)
    finally:
        gc.callbacks.remove(record)
    assert set(threads) == {threading.main_thread().name}


def test_no_collection_while_a_run_trains(qtbot):
    collector.collect_on_gui_thread()
    mode = collector.TrainingMode()
    collected: list[int] = []

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            collected.append(info["generation"])

    mode.enter()
    gc.callbacks.append(record)
    try:
        for _ in range(10 * gc.get_threshold()[0]):
            Cycle()
        collector._collector.collect()  # as the timer would
        assert collected == []
        mode.leave()
        collector._collector.collect()
        assert collected  # caught up once the run is over
    finally:
        gc.callbacks.remove(record)
        mode.leave()
