"""What the screenshot scripts share: the repo on the import path, the ``--out`` folder,
waiting for the app to reach a state, letting it repaint, and a window trained on the bundled
sample.

Imported by ``scripts/screenshots.py`` and ``scripts/screenshot_inspector.py`` (run as scripts,
so this folder is on the path). It sets ``QT_QPA_PLATFORM=offscreen`` unless the caller chose a
platform, and leaves out what each script shows.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SIZE = (1600, 1000)


def out_folder(description: str) -> Path:
    """The ``--out`` folder given on the command line (docs/screenshots by default), created."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    out: Path = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    return out


def wait(app: Any, condition: Callable[[], object], timeout: float = 60.0) -> None:
    """Process events until ``condition()`` holds; TimeoutError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not get there in time")
        app.processEvents()
        time.sleep(0.005)


def settle(app: Any, window: Any, seconds: float = 0.6) -> None:
    """Let timers fire (editor spans, the last frame), everything repaint, and the editor's
    colouring finish."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)
    wait(app, lambda: not window.editor.busy)
    app.processEvents()


def new_window(app: Any, editor_text: str) -> Any:
    """A shown main window of SIZE with ``editor_text`` in its editor."""
    from bpe_studio.gui.main_window import MainWindow

    window = MainWindow()
    window.resize(*SIZE)
    window.show()
    window.editor.set_text(editor_text)
    app.processEvents()
    return window


def trained_on_sample(app: Any, editor_text: str, vocab_size: int) -> Any:
    """A new window that has trained on the bundled TinyStories sample to ``vocab_size``."""
    from bpe_studio.gui.app import DEMO_CORPUS
    from bpe_studio.gui.model.state import Phase

    window = new_window(app, editor_text)
    window.open_corpus(DEMO_CORPUS)
    window.panel.vocab_spin.setValue(vocab_size)
    window.start_training()
    wait(app, lambda: window.state.phase is Phase.FINISHED)
    return window
