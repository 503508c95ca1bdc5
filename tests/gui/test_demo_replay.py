"""``bpe-studio --demo`` in a subprocess: it trains, then replays the run with Skip on offer,
and quitting mid-replay ends cleanly (no thread left to hang the exit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from gui_helpers import ROOT

PROBE = textwrap.dedent("""
    import json, sys
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    from bpe_studio.gui.app import main
    app = QApplication([])
    seen = {}

    def probe():
        win = next(w for w in app.topLevelWidgets() if type(w).__name__ == "MainWindow")
        state, bar = win.state, win.timeline
        if win.last_error is None and not (state.replaying and state.step > 0):
            QTimer.singleShot(20, probe)
            return
        seen.update(
            error=win.last_error,
            replaying=state.replaying,
            step=state.step,
            published=state.published,
            skip=bar.skip_button.isVisible() and bar.skip_button.isEnabled(),
            pace=bar.replay.pace.whole_run_seconds,
        )
        win.ask_close = lambda title, question: "discard"  # quitting closes the window
        app.quit()

    QTimer.singleShot(100, probe)
    code = main(["--demo"])
    from bpe_studio.gui.model.curves import live_curve_threads
    seen["curve_threads"] = live_curve_threads()
    print(json.dumps(seen))
    sys.exit(code)
""")


def test_demo_replays_the_run_after_training():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads([x for x in proc.stdout.splitlines() if x.startswith("{")][-1])
    assert seen["error"] is None
    assert seen["replaying"] and seen["skip"] and seen["pace"] == 20
    assert 0 < seen["step"] < seen["published"]
    assert seen["curve_threads"] == 0
