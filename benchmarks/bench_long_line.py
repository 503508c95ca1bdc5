"""The GUI thread's largest gap while the token editor holds a text of one line (minified
code, a one-line web dump: one paragraph, which Qt lays out whole).

Text: ``--chars`` characters from byte 5,000,000 of ``english_books.txt``, ``chinese.txt`` and
``code.txt`` (shared corpora), line breaks made spaces. Tokenizer: the preset o200k_base. In the
real ``TokenEditor`` (offscreen, 1200 x 700), the largest gap between the ticks of a 10 ms
``QTimer`` while: the text is pasted (until its colours are painted), the cursor moves to its
end, a character is typed there (until the new colours are painted), the view scrolls to the
middle, the top and the end, and the editor switches to GPT-2 (until its colours are painted).
The gap counts the wait for a core, so run it on a quiet machine.

Run the same file against another checkout to compare: ``PYTHONPATH=OTHER python
benchmarks/bench_long_line.py`` uses ``OTHER``'s ``bpe_studio``.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_long_line.py
        [--chars 1000000 300000 100000]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402

KINDS = ("English", "Chinese", "code")


def _one_line(path: Path, chars: int) -> str:
    data = corpora.line_slice(path, 5 * corpora.MB, 4 * chars + 4096).decode("utf-8")
    return data.replace("\r", " ").replace("\n", " ")[:chars]


class _Heartbeat:
    """The largest gap between the ticks of a 10 ms timer on the GUI thread."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self._timer = QTimer()
        self._timer.setInterval(10)
        self._timer.timeout.connect(self._tick)
        self._last = self.gap = 0.0

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gap = max(self.gap, now - self._last)
        self._last = now

    def start(self) -> None:
        self._last, self.gap = time.perf_counter(), 0.0
        self._timer.start()

    def stop(self) -> float:
        self._tick()
        self._timer.stop()
        return 1000 * self.gap


def _run(app, seconds: float, until: Callable[[], bool] = lambda: True) -> None:
    """Handle events for ``seconds`` and until ``until()`` (two minutes at most)."""
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or not until():
        if time.perf_counter() - start > 120:
            raise TimeoutError("the editor's colours did not come back")
        app.processEvents()
        time.sleep(0.001)


def measure(app, editor, text: str, o200k, gpt2) -> dict[str, float]:
    from PySide6.QtGui import QTextCursor
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    edit, beat = editor.edit, _Heartbeat()

    def settled() -> bool:
        return editor.spans is not None and not editor.busy

    editor.set_text("")
    editor.set_tokenizer(o200k)
    _run(app, 0.5, settled)
    QApplication.clipboard().setText(text)
    edit.setFocus()
    gaps = {}
    beat.start()
    edit.paste()
    _run(app, 1.0, settled)
    _run(app, 0.3)
    gaps["paste"] = beat.stop()
    if edit.text() != text:
        raise AssertionError("the editor changed the text pasted")
    beat.start()
    edit.moveCursor(QTextCursor.MoveOperation.End)
    _run(app, 0.3, settled)
    gaps["to end"] = beat.stop()
    beat.start()
    QTest.keyClicks(edit, "x")
    _run(app, 1.0, settled)
    _run(app, 0.3)
    gaps["type"] = beat.stop()
    bar = edit.verticalScrollBar()
    beat.start()
    for value in (bar.maximum() // 2, 0, bar.maximum()):
        bar.setValue(value)
        _run(app, 0.2)
    gaps["scroll"] = beat.stop()
    beat.start()
    editor.set_tokenizer(gpt2)
    _run(app, 1.0, settled)
    _run(app, 0.3)
    gaps["switch"] = beat.stop()
    return gaps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chars", type=int, nargs="+", default=[1_000_000, 300_000, 100_000])
    args = ap.parse_args(argv)
    from PySide6.QtWidgets import QApplication

    import bpe_studio
    from bpe_studio.core import Tokenizer
    from bpe_studio.gui.model.tokenizer_source import TokenizerSource
    from bpe_studio.gui.views.token_editor import TokenEditor

    app = QApplication.instance() or QApplication(sys.argv)
    print(f"bpe_studio from {Path(bpe_studio.__file__).parent}")
    o200k = TokenizerSource("o200k_base", tokenizer=Tokenizer.preset("o200k_base"))
    gpt2 = TokenizerSource("gpt2", tokenizer=Tokenizer.preset("gpt2"))
    editor = TokenEditor()
    editor.resize(1200, 700)
    editor.show()
    paths = dict(zip(corpora.TEXT_KINDS, corpora.corpus(*corpora.TEXT_KINDS.values())))
    for chars in args.chars:
        for kind in KINDS:
            gaps = measure(app, editor, _one_line(paths[kind], chars), o200k, gpt2)
            shown = "  ".join(f"{name} {gap:6.0f}" for name, gap in gaps.items())
            print(f"{chars:>9,} chars {kind:8s} largest gap (ms): {shown}", flush=True)
    editor.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
