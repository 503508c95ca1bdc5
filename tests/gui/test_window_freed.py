"""A window closed and deleted is freed, with its model and views, in a process that goes on
(the tests, an embedder), even after the app froze what was alive (``gc.freeze``: after a run
ends, a tokenizer loads, the encoder is ready). Frozen reference cycles are never collected:
the window clears its deleted objects' attributes instead (``collector.free_when_deleted``).
"""

from __future__ import annotations

import weakref

from gui_helpers import FIXTURES, train_in_window
from PySide6.QtCore import QCoreApplication, QEvent

from bpe_studio.gui.main_window import MainWindow
from bpe_studio.gui.responsiveness.collector import keep_out_of_collections


def new_window(qtbot) -> MainWindow:
    """The ``window`` fixture's window, without pytest-qt's hold on it (it would close the
    window again after the test, once deleted)."""
    window = MainWindow()
    window.ask = lambda title, question: True
    window.ask_close = lambda title, question: "discard"
    window.resize(1440, 900)
    window.show()
    qtbot.waitExposed(window)
    return window


def close_and_delete(qtbot, window) -> tuple[weakref.ref, weakref.ref, weakref.ref]:
    """Close the window, freeze what is alive (as the app does when a tokenizer loads), delete
    the window; weak references to its model, a view and a chart's plot item."""
    refs = weakref.ref(window.hub), weakref.ref(window.curve), weakref.ref(window.chart)
    window.close_without_asking()
    qtbot.waitUntil(lambda: not window.isVisible())
    keep_out_of_collections()  # the window's cycles are frozen: no collection frees them
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return refs


def test_an_idle_window_deleted_is_freed(qtbot):
    window = new_window(qtbot)
    refs = close_and_delete(qtbot, window)
    qtbot.waitUntil(lambda: all(ref() is None for ref in refs), timeout=5_000)


def test_a_window_that_trained_a_run_is_freed(qtbot):
    window = new_window(qtbot)
    train_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 300)
    refs = close_and_delete(qtbot, window)
    qtbot.waitUntil(lambda: all(ref() is None for ref in refs), timeout=5_000)


def test_a_window_that_loaded_a_tokenizer_is_freed(qtbot):
    window = new_window(qtbot)
    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000):
        assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
    refs = close_and_delete(qtbot, window)
    qtbot.waitUntil(lambda: all(ref() is None for ref in refs), timeout=5_000)
