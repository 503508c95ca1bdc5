"""The app's stderr holds what a user should read (issue 33, defect 17): Qt's "OpenType
support missing" lines (one per font family, for every font a script no installed font shapes
is laid out in) become one line per script naming it; Qt's other messages pass as they were.
``main()`` runs in a subprocess (its message handler is the whole process's)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from gui_helpers import ROOT

# Malayalam and Telugu (o200k_base's last tokens), and Devanagari: scripts Qt shapes only with
# OpenType, in three fonts (the editor's, a label's, a bold title's).
PROBE = textwrap.dedent("""
    import sys
    from PySide6.QtCore import QTimer, qWarning
    from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics
    from PySide6.QtWidgets import QApplication
    from bpe_studio.gui.app import main
    app = QApplication([])
    TEXT = "\\u0d15\\u0d3e\\u0d32\\u0d02 \\u0c15\\u0c3e\\u0c32\\u0c02 \\u0915\\u093e\\u0932"
    covered = QFontDatabase.families(QFontDatabase.WritingSystem.Malayalam)
    print("COVERED" if covered else "UNCOVERED", flush=True)

    def probe():
        win = next(w for w in app.topLevelWidgets() if type(w).__name__ == "MainWindow")
        win.editor.set_text(TEXT)
        for font in (win.font(), win.editor.font(), QFont("Monospace", 15, QFont.Weight.Bold)):
            QFontMetrics(font).horizontalAdvance(TEXT)
        app.processEvents()
        qWarning("a message of the app's own")
        win.close_without_asking()
        app.quit()

    QTimer.singleShot(100, probe)
    sys.exit(main(["gui"]))
""")


def test_font_messages_are_one_line_per_script_others_pass():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("BPE_STUDIO_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    if "UNCOVERED" not in proc.stdout:
        pytest.skip("a Malayalam font is installed here: Qt has nothing to say about it")
    lines = proc.stderr.splitlines()
    assert not [line for line in lines if "OpenType support missing" in line], proc.stderr
    told = [line for line in lines if "no installed font shapes" in line]
    assert [line for line in told if "Malayalam" in line] and len(told) == len(set(told))
    assert all(line.startswith("bpe-studio: ") for line in told)
    assert len(told) <= 3  # one per script laid out, whatever the number of fonts
    assert "a message of the app's own" in proc.stderr
