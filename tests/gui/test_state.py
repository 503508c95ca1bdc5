"""RunState and AppModel: the record, publishing frames, the step every view shows."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bpe_studio.core import MergeStep, trainer_from_file
from bpe_studio.core.train.vocab import initial_vocab
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.state import Phase, RunSettings, RunState

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def steps() -> list[MergeStep]:
    return list(trainer_from_file(DEMO_CORPUS, 400, [EOT]))


# Imports every module of the GUI's model, then lists the Qt modules loaded.
MODEL_QT = (
    "import importlib, pkgutil, sys, bpe_studio.gui.model as m\n"
    "for info in pkgutil.iter_modules(m.__path__):\n"
    "    importlib.import_module(f'{m.__name__}.{info.name}')\n"
    "qt = ('PySide6', 'shiboken6', 'pyqtgraph')\n"
    "print(sorted(n for n in sys.modules if n.startswith(qt)))"
)


def _qt_loaded_by(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_state_is_plain_python():
    # Every module of gui.model, the state among them, loads no Qt (nor does the check pass
    # vacuously: with Qt imported first, it lists it).
    assert _qt_loaded_by(MODEL_QT) == "[]"
    assert "PySide6" in _qt_loaded_by("import PySide6.QtCore\n" + MODEL_QT)
    assert RunState().phase is Phase.IDLE and not Phase.IDLE.training
    assert {p for p in Phase if p.training} == {Phase.PRE_TOKENIZING, Phase.MERGING, Phase.PAUSED}


def test_vocab_and_merges_at_a_step(steps):
    state = RunState(base_vocab=initial_vocab([EOT]), record=list(steps))
    for k in (0, 1, 57, len(steps)):
        # Reference: bytes, then the special token, then one id per merge, in order.
        expected = {i: bytes([i]) for i in range(256)} | {256: EOT.encode()}
        for s in steps[:k]:
            expected[s.new_id] = s.left + s.right
        assert state.vocab_at(k) == expected
        assert state.merges_at(k) == [(s.left, s.right) for s in steps[:k]]


def test_frames_publish_rows_and_move_a_live_step(qtbot, steps):
    hub = AppModel()
    added: list[tuple[int, int]] = []
    step_seen: list[int] = []
    hub.merges_added.connect(lambda a, b: added.append((a, b)))
    hub.step_changed.connect(lambda value: step_seen.append(value))
    hub.begin_run(RunSettings(400, (EOT,)), initial_vocab([EOT]))
    assert hub.state.phase is Phase.PRE_TOKENIZING and hub.state.shown is not None
    hub.start_merging()
    hub.append_merges(steps[:10])
    assert hub.state.published == 0 and hub.state.step == 0  # recorded, not shown yet
    hub.publish()
    hub.append_merges(steps[10:25])
    hub.publish()
    assert added == [(0, 9), (10, 24)] and step_seen == [10, 25]
    assert hub.state.step == hub.state.published == 25

    # The timeline: choosing a step leaves live mode; frames no longer move it.
    hub.select_step(7)
    assert hub.state.step == 7 and not hub.state.live
    hub.append_merges(steps[25:30])
    hub.publish()
    assert hub.state.step == 7 and hub.state.published == 30
    hub.select_step(10_000)
    assert hub.state.step == 30  # clamped to what is shown
    hub.follow_live()
    assert hub.state.live and hub.state.step == 30


def test_pause_remembers_the_phase_it_returns_to(qtbot):
    hub = AppModel()
    hub.begin_run(RunSettings(400, (EOT,)), initial_vocab([EOT]))
    hub.set_paused(True)
    assert hub.state.phase is Phase.PAUSED and hub.state.resume_to is Phase.PRE_TOKENIZING
    hub.start_merging()  # pre-tokenizing ended while paused
    assert hub.state.phase is Phase.PAUSED
    hub.set_paused(False)
    assert hub.state.phase is Phase.MERGING
