"""Scrub latency: how soon the editor shows the timeline's new step (issue 9's "within 100 ms").

GPT-2's own files (``tests/fixtures``, 50,000 merges) are loaded into the real hub and editor
(offscreen Qt), the editor holds 10,000 characters of real English (``english_books_slice``),
and the step is moved with ``AppModel.select_step``; the latency is the time from that call to
the editor's ``spans_ready`` with the tokenizer of exactly that step (``editor.encoded`` is
sent at the same moment). Three ways of moving:
- jumps: one position at a time, waiting for each (random positions over 0..N, fresh ones: no
  cached truncation);
- back: positions visited a moment ago (the editor keeps the last few truncations);
- drag: a slider drag, one position every 16 ms (a 60 Hz mouse), measured from the last
  position to its colours; earlier positions may be skipped (latest wins).
The figures are the median and 95th percentile per kind, for positions up to 32,000 and all.
The compiled encoder's kernels are loaded first, where this code has them (the app's window
loads them in the background at start): what the editor works with once the app is up.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_scrub.py [--positions 40] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIXTURES = ROOT / "tests" / "fixtures"
EOT = "<|endoftext|>"
TEXT_CHARS = 10_000


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "median_ms": round(1000 * statistics.median(values), 1),
        "p95_ms": round(1000 * _percentile(values, 0.95), 1),
        "max_ms": round(1000 * max(values), 1),
    }


def run(positions: int, seed: int) -> dict:
    from PySide6.QtCore import QEventLoop, QTimer

    from bpe_studio.core import Tokenizer
    from bpe_studio.gui.app import application
    from bpe_studio.gui.model.app_model import AppModel
    from bpe_studio.gui.model.state import LoadedTokenizer, MergeRow
    from bpe_studio.gui.views.token_editor import TokenEditor

    app = application()  # styled as the app is: Fusion, its style sheet, antialiased plots
    try:
        from bpe_studio.core.encode.merging import kernel_start
    except ImportError:  # code from before the compiled encoder
        pass
    else:
        kernel_start.prepare()
        gc.freeze()  # as the window does once they are loaded (keep_out_of_collections)
    tok = Tokenizer.from_files(
        FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", special_tokens=[EOT]
    )
    inverse = {t: i for i, t in tok.vocab.items()}
    rows = [MergeRow(r, a, b, inverse[a + b]) for r, (a, b) in enumerate(tok.merges)]
    hub = AppModel()
    hub.show_loaded(
        LoadedTokenizer(
            tok, FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", [EOT], rows, []
        )
    )
    text = (FIXTURES / "english_books_slice.txt").read_text(encoding="utf-8")[:TEXT_CHARS]
    editor = TokenEditor()
    editor.resize(900, 600)
    editor.show()
    editor.bind(hub)
    editor.set_text(text)
    n = len(tok.merges)

    arrived: dict[int, float] = {}
    loop = QEventLoop()
    waiting_for: list[int] = [-1]

    def on_ready(spans: object) -> None:
        k = len(spans.tokenizer.merges)  # type: ignore[attr-defined]
        arrived[k] = time.perf_counter()
        if k == waiting_for[0]:
            loop.quit()

    editor.spans_ready.connect(on_ready)

    def show(k: int) -> float:
        arrived.pop(k, None)
        waiting_for[0] = k
        start = time.perf_counter()
        hub.select_step(k)
        if k not in arrived:
            QTimer.singleShot(30_000, loop.quit)
            loop.exec()
        return arrived[k] - start

    show(n)  # the full tokenizer, and the text's first encoding
    rng = random.Random(seed)
    fresh = rng.sample(range(0, n), positions)
    jumps = [(k, show(k)) for k in fresh]
    back = [(k, show(k)) for k in fresh[-3:] * 3]  # the cache holds the last few

    drags: list[tuple[int, float]] = []
    for _ in range(max(positions // 4, 3)):
        a = rng.randrange(0, n - 2000)
        path = list(range(a, a + rng.randrange(500, 2000), 97))
        for k in path[:-1]:
            hub.select_step(k)
            deadline = time.perf_counter() + 0.016
            while time.perf_counter() < deadline:
                app.processEvents()
        drags.append((path[-1], show(path[-1])))

    editor.shutdown()
    editor.close()

    def kinds(pairs: list[tuple[int, float]]) -> dict:
        return {
            "up to 32,000 merges": _summary([t for k, t in pairs if k <= 32_000]),
            "all": _summary([t for _, t in pairs]),
        }

    return {
        "tokenizer": f"GPT-2 ({n:,} merges)",
        "text_chars": len(text),
        "jumps": kinds(jumps),
        "back": kinds(back),
        "drag": kinds(drags),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=40)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(args.positions, args.seed)
    print(f"{result['tokenizer']}, {result['text_chars']:,} characters")
    for kind in ("jumps", "back", "drag"):
        for scope, s in result[kind].items():
            if s["n"]:
                print(
                    f"  {kind:6} {scope:20} n={s['n']:3}  median {s['median_ms']:6.1f} ms  "
                    f"p95 {s['p95_ms']:6.1f} ms  max {s['max_ms']:6.1f} ms"
                )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
