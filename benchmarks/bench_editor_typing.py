"""The token editor's paint and keystroke times in one long paragraph (the GUI thread's own
work, which a slow paint makes the typist wait for).

Text: ``--chars`` characters from byte 5,000,000 of ``english_books.txt``, ``chinese.txt``,
``code.txt`` and ``mixed_web.txt`` (shared corpora), as one paragraph (line breaks made
spaces) and, for contrast, as lines of at most 100 characters. Tokenizer: the preset
o200k_base. In the real ``TokenEditor`` (offscreen, 1200 x 700), the cursor in the middle of
the text and the tokens on screen painted: the median of ``--reps`` repaints of the viewport,
and of ``--reps`` keystrokes (a key typed and the events it posts handled, the new colours
not waited for), each after the colours of the text so far came back.

Run the same file against another checkout to compare: ``PYTHONPATH=OTHER python
benchmarks/bench_editor_typing.py`` uses ``OTHER``'s ``bpe_studio``.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_editor_typing.py [--reps 7]
        [--chars 2000 5000 100000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402


def _paragraph(path: Path, chars: int) -> str:
    data = corpora.line_slice(path, 5 * corpora.MB, 4 * chars + 4096)
    return " ".join(data.decode("utf-8").split())[:chars]


def _lines(text: str, width: int = 100) -> str:
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


def _wait(app, done, seconds: float = 120.0) -> None:
    end = time.perf_counter() + seconds
    while not done():
        if time.perf_counter() > end:
            raise TimeoutError("the editor's colours did not come back")
        app.processEvents()
        time.sleep(0.002)


def _painted(edit) -> int:
    """How many ranges are painted (``extraSelections`` in code from before the formats)."""
    painted = getattr(edit, "painted", None)
    return len(painted() if painted else edit.extraSelections())


def measure(app, editor, text: str, reps: int) -> tuple[int, float, float]:
    from PySide6.QtTest import QTest

    edit = editor.edit
    editor.set_text(text)
    _wait(app, lambda: editor.spans is not None and not editor.busy)
    cursor = edit.textCursor()
    cursor.setPosition(len(text) // 2)
    edit.setTextCursor(cursor)
    edit.centerCursor()
    edit.paint_visible_tokens()
    for _ in range(10):
        app.processEvents()
    painted = _painted(edit)
    paints = []
    for _ in range(reps):
        start = time.perf_counter()
        edit.viewport().repaint()
        paints.append(time.perf_counter() - start)
    keys = []
    edit.setFocus()
    for _ in range(reps):
        start = time.perf_counter()
        QTest.keyClicks(edit, "x")
        app.processEvents()
        keys.append(time.perf_counter() - start)
        _wait(app, lambda: editor.spans is not None and not editor.busy)
        edit.paint_visible_tokens()
        app.processEvents()
    return painted, statistics.median(paints), statistics.median(keys)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--chars", type=int, nargs="+", default=[2_000, 5_000, 100_000])
    args = ap.parse_args(argv)
    from PySide6.QtWidgets import QApplication

    import bpe_studio
    from bpe_studio.core import Tokenizer
    from bpe_studio.gui.model.tokenizer_source import TokenizerSource
    from bpe_studio.gui.views.token_editor import TokenEditor

    app = QApplication.instance() or QApplication(sys.argv)
    print(f"bpe_studio from {Path(bpe_studio.__file__).parent}")
    editor = TokenEditor()
    editor.resize(1200, 700)
    editor.show()
    editor.set_tokenizer(TokenizerSource("o200k_base", tokenizer=Tokenizer.preset("o200k_base")))
    paths = dict(zip(corpora.TEXT_KINDS, corpora.corpus(*corpora.TEXT_KINDS.values())))
    for chars in args.chars:
        for label, path in paths.items():
            paragraph = _paragraph(path, chars)
            shapes = (("one paragraph", paragraph), ("100-char lines", _lines(paragraph)))
            for shape, text in shapes:
                painted, paint, key = measure(app, editor, text, args.reps)
                print(
                    f"{chars:>7,} chars {label:8s} {shape:15s} {painted:5,} painted  "
                    f"paint {1000 * paint:7.1f} ms  keystroke {1000 * key:7.1f} ms",
                    flush=True,
                )
    editor.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
