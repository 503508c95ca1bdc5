"""The GUI thread keeps ticking while training runs in its worker thread.

A 10 ms QTimer heartbeat records its largest gap during a full training run on the bundled
corpus. The bound here is loose on purpose (shared CI machines stall whole processes now and
then); ``benchmarks/gui_bench.py`` measures the real figures for the README.
"""

from __future__ import annotations

import time

from gui_helpers import EOT
from PySide6.QtCore import QTimer

from bpe_studio.gui.app import DEMO_CORPUS

LIMIT_MS = 500


def test_gui_thread_heartbeat_during_training(qtbot, window):
    assert window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(10_000)
    window.panel.specials_edit.setText(EOT)
    state = {"last": time.perf_counter(), "max": 0.0, "beats": 0}

    def beat():
        now = time.perf_counter()
        state["max"] = max(state["max"], now - state["last"])
        state["last"] = now
        state["beats"] += 1

    heart = QTimer()
    heart.setInterval(10)
    heart.timeout.connect(beat)
    heart.start()
    state["last"] = time.perf_counter()
    window.start_training()
    with qtbot.waitSignal(window.session.finished, timeout=60_000) as blocker:
        pass
    heart.stop()
    assert blocker.args[0] is not None
    assert state["beats"] > 0
    assert state["max"] * 1000 < LIMIT_MS, f"GUI thread stalled {state['max'] * 1000:.0f} ms"
