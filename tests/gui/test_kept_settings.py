"""What the app keeps for the next start (``QSettings``), and saying once when it cannot.

A session audit: with the settings folder on a read-only mount, or ``bpe-studio.conf`` a
folder, the appearance, the recent Hub models and the dialogs' folders were forgotten at the
next start and nothing said so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from gui_helpers import ROOT

from bpe_studio.gui.views import file_dialogs, hub_models, kept_settings, theme
from bpe_studio.gui.views.common import app_settings


def settings_file() -> Path:
    return Path(app_settings().fileName())


def unkept_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "settings are not kept" in line]


def set_everything(tmp_path: Path) -> None:
    theme.remember_choice(theme.DARK)
    hub_models.remember_model("acme/x")
    file_dialogs.remember(file_dialogs.CORPUS, tmp_path)


def test_settings_that_are_kept_say_nothing(qtbot, window, tmp_path, capsys):
    set_everything(tmp_path)
    assert unkept_lines(capsys.readouterr().err) == []
    assert window.statusBar().currentMessage() == ""
    assert theme.saved_choice() == theme.DARK


def test_a_settings_file_that_is_a_folder_is_said_once(qtbot, window, tmp_path, capsys):
    conf = settings_file()
    conf.mkdir(parents=True)
    set_everything(tmp_path)
    set_everything(tmp_path)  # every write fails again: still said once
    lines = unkept_lines(capsys.readouterr().err)
    assert len(lines) == 1
    assert lines[0].startswith(f"bpe-studio: settings are not kept: {conf}: is a directory. ")
    message = window.statusBar().currentMessage()
    assert message.startswith(f"Settings are not kept: {conf}: is a directory. ")
    assert message.endswith("; move that folder out of the way.")


def test_a_read_only_settings_folder_is_said_even_when_qt_says_no_error(
    qtbot, window, tmp_path, capsys, monkeypatch
):
    # A read-only mount cannot be made here (the tests may run as root, whom permissions do
    # not stop): the folder's file system says it is read-only, and nothing may be written
    # there. Qt's status of an object that wrote nothing is NoError.
    folder = settings_file().parent
    monkeypatch.setattr(kept_settings, "_writable", lambda path: path != folder)
    monkeypatch.setattr(kept_settings, "_file_system", lambda path: (path == folder, False))
    theme.remember_choice(theme.LIGHT)
    lines = unkept_lines(capsys.readouterr().err)
    assert len(lines) == 1
    assert f"settings are not kept: {settings_file()}: read-only file system. " in lines[0]
    message = window.statusBar().currentMessage()
    assert message.startswith(f"Settings are not kept: {settings_file()}: read-only file system. ")
    assert "make its folder writable" in message


def test_a_settings_file_that_keeps_nothing_is_said_at_start(qtbot, capsys):
    """The review: the message came with the first write, whose action's own notice ("Saved
    ...") replaced it at once, or at closing, where nobody saw it: it is said at start."""
    from bpe_studio.gui.main_window import MainWindow

    conf = settings_file()
    conf.mkdir(parents=True)
    win = MainWindow()
    qtbot.addWidget(win)
    win.ask_close = lambda title, question: "discard"
    message = win.statusBar().currentMessage()
    assert message.startswith(f"Settings are not kept: {conf}: is a directory. ")
    assert len(unkept_lines(capsys.readouterr().err)) == 1


def test_a_settings_file_the_user_may_not_write_is_said_at_start_as_the_file(
    qtbot, capsys, monkeypatch
):
    """A house audit: a settings file left owned by root (a run under sudo) in the user's own
    folder was said nothing of at start, though Qt then read none of it and wrote nothing;
    the first setting said "it could not be written ... make its folder writable", of a
    folder that was. (The tests may run as root, whom permissions do not stop: the system's
    answer for that one file is given here.)"""
    from bpe_studio.gui.main_window import MainWindow

    conf = settings_file()
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text("[view]\nappearance=dark\n", encoding="utf-8")
    real_access = os.access

    def access(path, mode, *args, **kwargs):
        if Path(path) == conf:
            return mode == os.F_OK
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    win = MainWindow()
    qtbot.addWidget(win)
    win.ask_close = lambda title, question: "discard"
    message = win.statusBar().currentMessage()
    assert message.startswith(f"Settings are not kept: {conf}: permission denied")
    assert "folder writable" not in message  # its folder is writable
    assert message.endswith("make it readable and writable by you, or remove it.")
    assert len(unkept_lines(capsys.readouterr().err)) == 1


def test_a_settings_file_on_a_full_disk_is_said_at_start_with_the_space_to_free(
    qtbot, capsys, monkeypatch
):
    """A house audit: with the settings file's disk full (a tmpfs of 64 KiB filled), the
    start said nothing, since the file was there and its folder writable; the first setting,
    at the window's closing, said "no space left on device ... make its folder writable", of
    a folder that was. (A full disk cannot be made here: its file system says it is full.)"""
    from bpe_studio.gui.main_window import MainWindow

    conf = settings_file()
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text("[view]\nappearance=dark\n", encoding="utf-8")
    monkeypatch.setattr(kept_settings, "_file_system", lambda path: (False, True))
    win = MainWindow()
    qtbot.addWidget(win)
    win.ask_close = lambda title, question: "discard"
    message = win.statusBar().currentMessage()
    assert message.startswith(f"Settings are not kept: {conf}: no space left on device. ")
    assert "writable" not in message  # its folder and the file are
    assert "free space on its disk" in message
    assert len(unkept_lines(capsys.readouterr().err)) == 1


def test_a_file_system_that_counts_no_blocks_is_not_called_full(qtbot, capsys, monkeypatch):
    """Some mounts (FUSE, /proc) count neither blocks nor free ones: asked at start, such a
    one is not a full disk, and the settings there are kept as anywhere."""
    from types import SimpleNamespace

    from bpe_studio.gui.main_window import MainWindow

    conf = settings_file()
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text("[view]\nappearance=dark\n", encoding="utf-8")
    uncounted = SimpleNamespace(f_flag=0, f_blocks=0, f_bavail=0)
    monkeypatch.setattr(kept_settings.os, "statvfs", lambda path: uncounted)
    win = MainWindow()
    qtbot.addWidget(win)
    win.ask_close = lambda title, question: "discard"
    assert win.statusBar().currentMessage() == ""
    assert unkept_lines(capsys.readouterr().err) == []


def test_an_unreadable_settings_file_replaced_by_a_write_is_no_alarm(qtbot, window, capsys):
    """The review: a settings file of NUL bytes (a crash mid-write) gave "not a settings file
    Qt can read ... will be forgotten", though the write had replaced it and the next start
    read the value back."""
    conf = settings_file()
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_bytes(b"\0" * 64)
    theme.remember_choice(theme.DARK)
    assert unkept_lines(capsys.readouterr().err) == []
    assert theme.saved_choice() == theme.DARK


def test_a_settings_folder_that_cannot_be_made_is_named(tmp_path, monkeypatch):
    # The settings file's folder is missing and its parent refuses it (permissions).
    monkeypatch.setattr(kept_settings, "_writable", lambda path: False)
    monkeypatch.setattr(kept_settings, "_file_system", lambda path: (False, False))
    missing = tmp_path / "config" / "bpe-studio" / "bpe-studio.conf"
    assert kept_settings._why_unwritable(missing) == "permission denied"
    monkeypatch.setattr(kept_settings, "_writable", lambda path: True)
    monkeypatch.setattr(kept_settings, "_file_system", lambda path: (False, True))
    assert kept_settings._why_unwritable(missing) == "no space left on device"


# ------------------------------------------------------------------ the window's layout
# main() in a subprocess, on an offscreen screen of the size given (Qt's offscreen platform
# takes its screens from a JSON file): it prints what the window shows, then changes it as
# asked and quits, which closes the window as the user closing it would.
LAYOUT_PROBE = textwrap.dedent("""
    import json, sys
    from PySide6.QtCore import QRect, QTimer
    from PySide6.QtWidgets import QApplication
    from bpe_studio.gui.app import main
    app = QApplication([])
    change = {change!r}

    def seen(win):
        tab = win.tabs.currentIndex()
        win.tabs.setCurrentIndex(0)  # the splitters' page, laid out
        app.processEvents()
        sizes = {{s.objectName(): s.sizes() for s in win.splitters}}
        win.tabs.setCurrentIndex(tab)
        return dict(
            geometry=win.geometry().getRect(),
            maximized=win.isMaximized(),
            tab=tab,
            sizes=sizes,
        )

    def probe():
        win = next(w for w in app.topLevelWidgets() if type(w).__name__ == "MainWindow")
        print("SEEN", json.dumps(seen(win)), flush=True)
        if change:
            if change.get("normal"):
                win.showNormal()
            if "geometry" in change:
                win.setGeometry(QRect(*change["geometry"]))
            if "tab" in change:
                win.tabs.setCurrentIndex(change["tab"])
            if "body" in change:
                body = next(s for s in win.splitters if s.objectName() == "trainSplitter")
                body.setSizes(change["body"])
            if change.get("maximize"):
                win.showMaximized()
            app.processEvents()
            print("CHANGED", json.dumps(seen(win)), flush=True)
        win.ask_close = lambda title, question: "discard"
        app.quit()

    QTimer.singleShot(100, probe)
    sys.exit(main(["gui"]))
""")


def start_app(tmp_path: Path, screens: list[tuple[int, int, int, int]], change=None) -> dict:
    """main() on ``screens`` (x, y, width, height each), its settings in ``tmp_path``: what
    its window showed (and, with ``change``, showed after it)."""
    config = tmp_path / "screens.json"
    config.write_text(
        json.dumps(
            {
                "windowFrameMargins": False,
                "screens": [
                    {"name": f"screen{i}", "x": x, "y": y, "width": w, "height": h, "dpr": 1}
                    for i, (x, y, w, h) in enumerate(screens)
                ],
            }
        ),
        encoding="utf-8",
    )
    env = dict(
        os.environ,
        QT_QPA_PLATFORM=f"offscreen:configfile={config}",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    proc = subprocess.run(
        [sys.executable, "-c", LAYOUT_PROBE.format(change=change)],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = {line.split(" ", 1)[0]: json.loads(line.split(" ", 1)[1]) for line in
             proc.stdout.splitlines() if line.startswith(("SEEN ", "CHANGED "))}  # fmt: skip
    return lines


def inside(geometry: list[int], screen: tuple[int, int, int, int]) -> bool:
    x, y, w, h = geometry
    sx, sy, sw, sh = screen
    return sx <= x and sy <= y and x + w <= sx + sw and y + h <= sy + sh


BIG = (0, 0, 2560, 1440)


def test_the_window_layout_is_kept_for_the_next_start(tmp_path):
    first = start_app(tmp_path, [BIG], change={"geometry": [300, 200, 1500, 1000], "tab": 1,
                                               "body": [300, 600]})  # fmt: skip
    assert not first["SEEN"]["maximized"]  # a big screen: the first start's roomy size
    changed = first["CHANGED"]
    assert changed["geometry"] == [300, 200, 1500, 1000]
    again = start_app(tmp_path, [BIG], change={"maximize": True})["SEEN"]
    assert again["geometry"] == [300, 200, 1500, 1000]
    assert again["tab"] == 1
    assert again["sizes"] == changed["sizes"]
    assert not again["maximized"]
    assert start_app(tmp_path, [BIG])["SEEN"]["maximized"]  # closed maximized: opens so


def test_a_window_kept_on_a_screen_gone_since_opens_on_the_screen_there_is(tmp_path):
    # Closed on a second monitor, right of the first; started again with the first only.
    right = (2560, 0, 2560, 1440)
    start_app(tmp_path, [BIG, right], change={"geometry": [3000, 300, 1500, 1000]})
    seen = start_app(tmp_path, [BIG])["SEEN"]
    assert inside(seen["geometry"], BIG), seen
    assert seen["geometry"][2:] == [1500, 1000]  # the size kept
    # Closed on a big screen, started again on a 1280 x 800 one: within it, maximized as a
    # first start there is.
    start_app(tmp_path, [BIG], change={"geometry": [900, 400, 1600, 1000]})
    small = start_app(tmp_path, [(0, 0, 1280, 800)])["SEEN"]
    assert small["maximized"] or inside(small["geometry"], (0, 0, 1280, 800)), small


def test_a_window_kept_on_a_screen_of_another_width_keeps_its_size(tmp_path):
    """An audit: Qt's restoreGeometry refuses a geometry saved on a screen whose width differs
    from the one there now by a factor outside 0.8-1.25, and the window opened at the first
    start's size, not maximized. Closed on a 1280-wide second monitor, started again on the
    2560-wide one alone: the size kept, within the screen; maximized stays maximized."""
    narrow = (2560, 0, 1280, 1024)
    kept = [2700, 100, 1000, 700]
    start_app(tmp_path, [BIG, narrow], change={"geometry": kept})
    seen = start_app(tmp_path, [BIG])["SEEN"]
    assert inside(seen["geometry"], BIG), seen
    assert seen["geometry"][2:] == [1000, 700] and not seen["maximized"]
    start_app(tmp_path, [BIG, narrow], change={"geometry": kept, "maximize": True})
    assert start_app(tmp_path, [BIG])["SEEN"]["maximized"]


def test_an_older_settings_file_refused_by_qt_opens_as_a_first_start(tmp_path):
    # Kept before the size was kept apart from Qt's geometry: as before, a first start.
    (tmp_path / "first").mkdir()
    first = start_app(tmp_path / "first", [BIG])["SEEN"]
    start_app(tmp_path, [BIG, (2560, 0, 1280, 1024)], change={"geometry": [2700, 100, 1000, 700]})
    conf = tmp_path / "config" / "bpe-studio" / "bpe-studio.conf"
    lines = conf.read_text(encoding="utf-8").splitlines()
    older = [line for line in lines if not line.startswith(("normal=", "maximized="))]
    assert len(older) == len(lines) - 2
    conf.write_text("\n".join(older) + "\n", encoding="utf-8")
    assert start_app(tmp_path, [BIG])["SEEN"]["geometry"] == first["geometry"]


# Qt's geometry as a settings file holds it: a negative size (right and bottom edges, -256,
# before the left and top ones, 100: Qt accepts it), and the header alone followed by junk.
NEGATIVE = (
    "@ByteArray(\\x1\\xd9\\xd0\\xcb\\0\\x3\\0\\0\\0\\0\\0\\x64\\0\\0\\0\\x64"
    "\\xff\\xff\\xff\\0\\xff\\xff\\xff\\0\\0\\0\\0\\x64\\0\\0\\0\\x64\\xff\\xff\\xff\\0"
    "\\xff\\xff\\xff\\0\\0\\0\\0\\0\\0\\0\\0\\0\\n\\0\\0\\0\\0\\x64\\0\\0\\0\\x64"
    "\\xff\\xff\\xff\\0\\xff\\xff\\xff\\0)"
)
TRUNCATED = "@ByteArray(\\x1\\xd9\\xd0\\xcb\\0\\x3junk)"


def test_a_kept_geometry_of_a_size_the_layout_forbids_is_left(tmp_path):
    """An audit: a kept geometry of a negative or truncated size was accepted by Qt and the
    window opened 68 x 109 (and closing kept that again): the first start's layout is used."""
    (tmp_path / "first").mkdir()
    first = start_app(tmp_path / "first", [BIG])["SEEN"]
    for name, value in (("negative", NEGATIVE), ("truncated", TRUNCATED)):
        conf = tmp_path / name / "config" / "bpe-studio" / "bpe-studio.conf"
        conf.parent.mkdir(parents=True)
        conf.write_text(f"[window]\ngeometry={value}\n", encoding="utf-8")
        seen = start_app(tmp_path / name, [BIG])["SEEN"]
        assert seen["geometry"] == first["geometry"], name
        assert not seen["maximized"], name


def test_the_first_start_on_a_small_screen_opens_maximized(tmp_path):
    assert start_app(tmp_path, [(0, 0, 1280, 800)])["SEEN"]["maximized"]


def test_a_size_chosen_on_a_small_screen_is_kept(tmp_path):
    """The review: on a 1280 x 800 screen a window the user un-maximized and sized opened
    maximized again at every start: only the first start is maximized for the screen."""
    small = (0, 0, 1280, 800)
    start_app(tmp_path, [small], change={"normal": True, "geometry": [20, 30, 1200, 760]})
    seen = start_app(tmp_path, [small])["SEEN"]
    assert not seen["maximized"] and seen["geometry"] == [20, 30, 1200, 760]


def test_a_kept_splitter_state_of_another_shape_and_a_tab_gone_are_left(qtbot, settings_in_tmp):
    """The review: Qt restores a two-pane state into a three-pane splitter (squeezing the new
    pane) or turns a vertical one; and a tab kept by its place named another tab once one was
    added before it. Each is kept with its shape, the tab by its title."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel, QMainWindow, QSplitter, QTabWidget

    from bpe_studio.gui.views.window_layout import restore_layout, save_layout

    def window(panes: int, titles: list[str]):
        win = QMainWindow()
        qtbot.addWidget(win)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("body")
        for i in range(panes):
            splitter.addWidget(QLabel(str(i)))
        tabs = QTabWidget()
        for title in titles:
            tabs.addTab(QLabel(title), title)
        win.setCentralWidget(splitter)
        win.resize(900, 500)
        win.show()
        return win, tabs, splitter

    win, tabs, splitter = window(2, ["Train", "Compare"])
    splitter.setSizes([100, 800])
    tabs.setCurrentIndex(1)
    save_layout(win, tabs, [splitter])
    win2, tabs2, splitter2 = window(3, ["Train", "Lab", "Compare"])
    restore_layout(win2, tabs2, [splitter2])
    sizes = splitter2.sizes()
    assert max(sizes) - min(sizes) <= 2, sizes  # another shape: left evenly split
    assert tabs2.tabText(tabs2.currentIndex()) == "Compare"  # by its title
    win3, tabs3, splitter3 = window(2, ["Train", "Compare"])
    restore_layout(win3, tabs3, [splitter3])
    assert splitter3.sizes()[0] < splitter3.sizes()[1]  # the same shape: restored


def test_a_kept_geometry_is_fitted_within_the_screen():
    from PySide6.QtCore import QRect

    from bpe_studio.gui.views.window_layout import fit_within

    screen = QRect(0, 0, 1280, 800)
    assert fit_within(QRect(5000, 4000, 3000, 2000), screen) == screen
    assert fit_within(QRect(-900, 100, 600, 400), screen) == QRect(0, 100, 600, 400)
    assert fit_within(QRect(1000, 700, 600, 400), screen) == QRect(680, 400, 600, 400)
    assert fit_within(QRect(10, 20, 600, 400), screen) == QRect(10, 20, 600, 400)
