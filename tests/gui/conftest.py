"""Fixtures for the GUI tests (pytest-qt, offscreen).

Every test is checked afterwards for threads left behind: all windows are closed (which stops
training and waits for its thread), and then no training thread and no background-job
thread (tokenizer loading, span computing) may still be running. The windows are then
destroyed: each test starts with none alive (and checks that).

The core tests' helpers (``core_helpers``, ``reference_encoder``) live in ``tests/core``,
which is put on the path here, as the command-line tests' conftest does.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE.parent / "core"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from gui_helpers import FIXTURES, threads_running  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def short_debounces():
    """Every debounce waits a tenth of what it waits for a person: the tests act as soon as
    the app has settled, and waiting at a person's pace (150-200 ms) was an eighth of the app's
    tests' wall time. What a debounce does (the latest request wins) is unchanged."""
    from bpe_studio.gui.responsiveness import debounce

    before, debounce.time_scale = debounce.time_scale, 0.1
    yield
    debounce.time_scale = before


@pytest.fixture(autouse=True)
def settings_in_tmp(tmp_path_factory, monkeypatch):
    """The app's QSettings (recent Hub models, the window's layout) go to a fresh temporary
    folder for each test, never the user's: no test sees what another remembered. The app
    started in a subprocess (``main()``) keeps its settings there too."""
    from PySide6.QtCore import QSettings

    from bpe_studio.gui.views import kept_settings

    folder = tmp_path_factory.mktemp("qsettings")
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    # Settings not kept are said once per process: once per test here.
    kept_settings.notifier().told = None
    return folder


@pytest.fixture(autouse=True)
def no_dangling_threads(qapp, qtbot):
    from bpe_studio.gui.responsiveness.collector import collect_on_gui_thread

    collect_on_gui_thread()  # as the app does: the collector never runs on a worker thread
    left = [type(w).__name__ for w in qapp.topLevelWidgets()]
    if left and not threads_running():
        # Only this test fails for them, not every later one. (A window whose thread still
        # runs is not destroyed: the test that left it has failed already.)
        delete_windows(qapp)
    assert left == [], f"windows of an earlier test are still alive: {left[:5]}"
    yield
    from bpe_studio.gui.jobs.latest import busy_job_threads
    from bpe_studio.gui.model.curves import live_curve_threads
    from bpe_studio.gui.model.lab_process import live_lab_processes
    from bpe_studio.gui.training.session import live_training_threads

    for widget in qapp.topLevelWidgets():
        # A window a test left with unsaved merges would ask; the test is over: no question.
        close = getattr(widget, "close_without_asking", widget.close)
        close()
    try:
        qtbot.waitUntil(lambda: not threads_running(), timeout=10_000)
    except qtbot.TimeoutError:
        pass  # reported below
    assert live_training_threads() == 0, "a training QThread was left running"
    assert busy_job_threads() == 0, "a background-job thread was left running"
    assert live_curve_threads() == 0, "a compression-curve thread or process was left running"
    assert live_lab_processes() == 0, "a Vocabulary lab process was left running"
    delete_windows(qapp)


def delete_windows(qapp) -> None:
    """Destroy every window the test left (closed above), with all its widgets.

    subtle: a closed window is only hidden, and the ``deleteLater`` pytest-qt gives the
    windows it closes waits for an event loop that never returns to its level (tests run
    nested loops): without this the windows of every earlier test stay alive, about a hundred
    widgets each, and a test that restyles the application (a colour scheme, a palette)
    restyles all of them, minutes late in a full run."""
    from PySide6.QtCore import QCoreApplication, QEvent

    for widget in qapp.topLevelWidgets():
        widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def window(qtbot):
    from bpe_studio.gui.main_window import MainWindow

    win = MainWindow()
    win.ask = lambda title, question: True  # no blocking dialog; tests that ask replace it
    win.ask_close = lambda title, question: "discard"  # closing never blocks either
    win.ask_records = lambda title, question: "cancel"  # nor a .json of records opened
    qtbot.addWidget(win)
    win.resize(1440, 900)  # a fixed size: the offscreen screen is small
    win.show()
    qtbot.waitExposed(win)
    return win


@pytest.fixture
def compare_view(qtbot):
    """The Compare tab alone, as wide as a window."""
    from bpe_studio.gui.model.app_model import AppModel
    from bpe_studio.gui.views.compare import CompareView

    view = CompareView(AppModel())
    qtbot.addWidget(view)
    view.resize(1400, 800)
    yield view
    view.shutdown()


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def app_style(qapp):
    """Style the test's application as the app does (``application(scheme)``: the style sheet
    and a colour scheme), light from the start (list this fixture before ``window``);
    ``app_style(theme.DARK)`` switches. The application is left unstyled again afterwards, as
    the other tests know it."""
    from PySide6.QtGui import QPalette

    from bpe_studio.gui.app import application
    from bpe_studio.gui.views import theme

    def style(scheme: str = theme.LIGHT) -> None:
        application(scheme)

    style()  # before a window the test asks for after this fixture is built
    yield style
    theme.apply_scheme(qapp, theme.SYSTEM)
    qapp.setStyleSheet("")
    qapp.setPalette(QPalette())
