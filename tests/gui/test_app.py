"""``main()`` in a subprocess: no display, ``--demo`` and ``gui CORPUS``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from gui_helpers import EOT, ROOT

from bpe_studio.core import train_bpe
from bpe_studio.gui.app import DEMO_CORPUS, has_display

# Runs main() with a QApplication made first, so a timer can look at the window, print what
# it sees as JSON and quit; main() reuses that application.
PROBE = textwrap.dedent("""
    import json, sys
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    import bpe_studio.gui
    from bpe_studio.gui.app import main
    app = QApplication([])
    wait_for_result = {wait}

    def probe():
        win = next(w for w in app.topLevelWidgets() if type(w).__name__ == "MainWindow")
        if wait_for_result and win.result is None and win.last_error is None:
            QTimer.singleShot(50, probe)
            return
        print(json.dumps({{
            "corpus": str(win.corpus) if win.corpus else None,
            "merges": win.merge_model.rowCount(),
            "vocab": win.vocab_model.rowCount(),
            "error": win.last_error,
            "status": win.panel.status.text(),
        }}))
        app.quit()

    QTimer.singleShot(100, probe)
    sys.exit(main({argv!r}))
""")


def _run(argv: list[str], wait: bool, env_update: dict[str, str] | None = None):
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
    seen = _run(["--demo"], wait=True)
    merges = train_bpe(DEMO_CORPUS, 10_000, [EOT])[1]
    assert seen["error"] is None
    assert seen["corpus"] == str(DEMO_CORPUS.resolve())
    assert seen["merges"] == len(merges)
    assert seen["vocab"] == 256 + 1 + len(merges)


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
