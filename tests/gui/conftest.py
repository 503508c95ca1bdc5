"""Fixtures for the GUI tests (pytest-qt, offscreen).

Every test is checked afterwards for threads left behind: all windows are closed (which stops
training and waits for its thread), and then no training thread and no span-computing pool
thread may still be running.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

import bpe_studio.gui  # noqa: F401 - applies the PySide6 fix before any Qt object exists

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from gui_helpers import FIXTURES  # noqa: E402


@pytest.fixture(autouse=True)
def no_dangling_threads(qapp):
    yield
    from bpe_studio.gui.session import live_training_threads
    from bpe_studio.gui.spans import busy_span_threads

    for widget in qapp.topLevelWidgets():
        widget.close()
    deadline = time.monotonic() + 10
    while (live_training_threads() or busy_span_threads()) and time.monotonic() < deadline:
        qapp.processEvents()
        time.sleep(0.01)
    assert live_training_threads() == 0, "a training QThread was left running"
    assert busy_span_threads() == 0, "a span-computing thread was left running"


@pytest.fixture
def window(qtbot):
    from bpe_studio.gui.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(win.sizeHint())
    win.show()
    qtbot.waitExposed(win)
    return win


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES
