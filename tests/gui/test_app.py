"""``main()`` in a subprocess: no display, ``--demo`` and ``gui CORPUS``."""

from __future__ import annotations

import configparser
import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest
from gui_helpers import EOT, FIXTURES, ROOT

from bpe_studio.core import train_bpe
from bpe_studio.gui.app import DEMO_CORPUS, EXIT_FAULTY_QT, ICON, RESOURCES, has_display
from bpe_studio.gui.qt_check import faulty_build

# Runs main() with a QApplication made first, so a timer can look at the window, print what
# it sees as JSON and quit; main() reuses that application.
PROBE = textwrap.dedent("""
    import json, sys
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    from bpe_studio.gui.app import main
    app = QApplication([])
    wait_for_result = {wait!r}

    def probe():
        win = next(w for w in app.topLevelWidgets() if type(w).__name__ == "MainWindow")
        state = win.state
        waiting = state.result is None if wait_for_result == "run" else win.controller.busy
        if wait_for_result and waiting and win.last_error is None:
            QTimer.singleShot(50, probe)
            return
        print(json.dumps({{
            "corpus": str(state.corpus) if state.corpus else None,
            "loaded": str(state.loaded.vocab_file) if state.loaded else None,
            "merges": win.merge_list.model.rowCount(),
            "vocab": win.vocab_table.model.rowCount(),
            "error": win.last_error,
            "status": win.panel.status.text(),
            "icon_sizes": [s.width() for s in win.windowIcon().availableSizes()],
        }}))
        win.ask_close = lambda title, question: "discard"  # quitting closes the window
        app.quit()

    QTimer.singleShot(100, probe)
    sys.exit(main({argv!r}))
""")


def _run(argv: list[str], wait: str | bool, env_update: dict[str, str] | None = None):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.update(env_update or {})
    code = PROBE.format(argv=argv, wait=wait)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    line = [x for x in proc.stdout.splitlines() if x.startswith("{")][-1]
    return json.loads(line)


def test_demo_trains_the_bundled_corpus():
    seen = _run(["--demo"], wait="run")
    merges = train_bpe(DEMO_CORPUS, 10_000, [EOT])[1]
    assert seen["error"] is None
    assert seen["corpus"] == str(DEMO_CORPUS.resolve())
    assert seen["merges"] == len(merges)
    assert seen["vocab"] == 256 + 1 + len(merges)
    assert {16, 32, 64, 256} <= set(seen["icon_sizes"])


def test_gui_with_a_tokenizer_file_loads_it_as_a_drop_does(tmp_path):
    """A session audit: `bpe-studio gui DIR/vocab.json` opened a saved tokenizer as the
    corpus ("Ready to train on vocab.json"), where dropping it on the window loads it."""
    vocab = FIXTURES / "gpt2_vocab.json"
    seen = _run(["gui", str(vocab)], wait="load")
    assert seen["error"] is None
    assert seen["corpus"] is None and seen["loaded"] == str(vocab)
    assert seen["merges"] == 50_000 and seen["vocab"] == 50_257


def test_gui_with_a_corpus_loads_it(tmp_path):
    corpus = tmp_path / "mine.txt"
    corpus.write_text("hello world\n" * 10, encoding="utf-8")
    seen = _run(["gui", str(corpus)], wait=False)
    assert seen["corpus"] == str(corpus.resolve()) and seen["merges"] == 0


def test_no_display_says_so_in_one_line():
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    code = "import sys; from bpe_studio.gui.app import main; sys.exit(main([]))"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
    )
    if sys.platform.startswith("linux"):
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1
        # What a user can act on: a display, or the headless commands; not an offscreen
        # platform, which would run the app where nobody can see it.
        assert "offscreen" not in lines[0]
        assert "display" in lines[0] and "bpe-studio train" in lines[0]
    else:
        pytest.skip("the no-display check applies to Linux and BSD")


def _free_x_display() -> int:
    """A display number no X server answers on here: no socket file, no abstract socket, no
    TCP listener on its port."""
    for number in range(77, 200):
        if os.path.exists(f"/tmp/.X11-unix/X{number}"):
            continue
        addresses = [(socket.AF_INET, ("127.0.0.1", 6000 + number))]
        if sys.platform.startswith("linux"):
            addresses.append((socket.AF_UNIX, f"\0/tmp/.X11-unix/X{number}"))
        taken = False
        for family, address in addresses:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                taken = taken or probe.connect_ex(address) == 0
        if not taken:
            return number
    raise AssertionError("no free X display number")


def test_a_display_no_server_answers_on_says_so_in_one_line():
    """Found by the CLI audit: ``DISPLAY=:77 bpe-studio gui`` with no X server there (a stale
    ssh -X or tmux session) printed Qt's four lines advising to reinstall, then aborted
    (SIGABRT, exit 134)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the display check applies to Linux and BSD")
    number = _free_x_display()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    env["DISPLAY"] = f":{number}"
    code = "import sys; from bpe_studio.gui.app import main; sys.exit(main([]))"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"bpe-studio: cannot connect to display :{number} ")
    assert "bpe-studio train" in lines[0] and "Reinstalling" not in lines[0]


def test_display_problem_rules(tmp_path):
    from bpe_studio.gui.display import display_problem

    number = _free_x_display()
    stale = {"DISPLAY": f":{number}"}
    assert display_problem(stale, "linux") is not None
    assert display_problem({"DISPLAY": f"127.0.0.1:{number}.0"}, "linux") is not None
    # Another platform plugin, or another system: not for this check to say.
    assert display_problem({**stale, "QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert display_problem(stale, "darwin") is None
    assert display_problem({}, "linux") is None  # no display named: has_display says so
    # A server that answers, over TCP as ssh -X forwards it.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        if port > 6000:
            assert display_problem({"DISPLAY": f"127.0.0.1:{port - 6000}.0"}, "linux") is None
    # Wayland: WAYLAND_DISPLAY's socket in XDG_RUNTIME_DIR, or an absolute path.
    wayland = {"WAYLAND_DISPLAY": "wayland-9", "XDG_RUNTIME_DIR": str(tmp_path)}
    assert display_problem(wayland, "linux") is not None
    assert "wayland-9" in (display_problem(wayland, "linux") or "")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(tmp_path / "wayland-9"))
        server.listen()
        assert display_problem(wayland, "linux") is None
        # Either display that answers will do, unless the platform is chosen.
        assert display_problem({**wayland, **stale}, "linux") is None
        assert display_problem({**wayland, **stale, "QT_QPA_PLATFORM": "xcb"}, "linux")
    # A platform chosen with nothing named for it (a profile's QT_QPA_PLATFORM over ssh): Qt
    # aborted with advice to reinstall (the third review).
    assert display_problem({"QT_QPA_PLATFORM": "xcb"}, "linux") == (
        "QT_QPA_PLATFORM is xcb, but DISPLAY names no X display"
    )
    runtime = {"XDG_RUNTIME_DIR": str(tmp_path), "QT_QPA_PLATFORM": "wayland"}
    assert "wayland-0" in (display_problem(runtime, "linux") or "")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(tmp_path / "wayland-0"))
        server.listen()
        assert display_problem(runtime, "linux") is None


def test_a_faulty_pyside_build_is_refused_in_one_line():
    """PySide6 6.12.0 on CPython < 3.12 crashes; main() refuses it before making any window
    (the version is simulated: the installed one is fine)."""
    code = textwrap.dedent("""
        import sys
        import PySide6
        from bpe_studio.gui import app, qt_check
        PySide6.__version__ = "6.12.0"  # what the installed package reports
        app.faulty_build = lambda: qt_check.faulty_build(python_version=(3, 11))
        sys.exit(app.main([]))
    """)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
    )
    assert proc.returncode == EXIT_FAULTY_QT
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "PySide6 6.12.0" in lines[0] and "pip install 'PySide6!=6.12.0'" in lines[0]


def test_faulty_build_rules():
    assert faulty_build("6.12.0", (3, 11)) is not None
    assert faulty_build("6.12.0", (3, 10, 4)) is not None
    assert faulty_build("6.12.0", (3, 12)) is None
    assert faulty_build("6.11.3", (3, 11)) is None
    assert faulty_build("6.12.1", (3, 11)) is None
    assert faulty_build() is None  # the installed build


def test_icon_and_desktop_file_are_resources():
    from PySide6.QtCore import QByteArray
    from PySide6.QtSvg import QSvgRenderer

    assert QSvgRenderer(QByteArray(ICON.read_bytes())).isValid()
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # keys are case-sensitive
    entry.read_string((RESOURCES / "bpe-studio.desktop").read_text(encoding="utf-8"))
    desktop = entry["Desktop Entry"]
    assert desktop["Type"] == "Application" and desktop["Exec"].startswith("bpe-studio")
    assert desktop["Icon"] == "bpe-studio" and desktop["Name"] == "BPE Studio"
    assert DEMO_CORPUS.is_file()


def test_has_display_rules():
    assert not has_display({}, "linux")
    assert has_display({"DISPLAY": ":0"}, "linux")
    assert has_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert has_display({"QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert has_display({}, "darwin") and has_display({}, "win32")


def test_bad_arguments_return_an_error_code():
    code = "import sys; from bpe_studio.gui.app import main; sys.exit(main(['frobnicate']))"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
        timeout=60,
    )
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_missing_xcb_libraries_are_named_with_their_fix():
    from bpe_studio.gui.qt_check import missing_xcb_library

    def absent(name):
        return None

    def present(name):
        return f"lib{name}.so.0"

    def no_cursor_or_icccm(name):
        return None if name in ("xcb-cursor", "xcb-icccm") else present(name)

    x11 = {"DISPLAY": ":0"}
    message = missing_xcb_library(x11, "linux", absent)
    assert message is not None and "libxcb-cursor0" in message and "\n" not in message
    two = missing_xcb_library(x11, "linux", no_cursor_or_icccm)
    assert two is not None and two.endswith("sudo apt install libxcb-cursor0 libxcb-icccm4")
    assert missing_xcb_library(x11, "linux", present) is None
    assert missing_xcb_library(x11, "darwin", absent) is None
    assert missing_xcb_library({}, "linux", absent) is None  # no X display: not Qt's xcb
    assert missing_xcb_library({**x11, "WAYLAND_DISPLAY": "w"}, "linux", absent) is None
    assert missing_xcb_library({**x11, "QT_QPA_PLATFORM": "offscreen"}, "linux", absent) is None
    assert missing_xcb_library({**x11, "QT_QPA_PLATFORM": "xcb"}, "linux", absent) is not None
