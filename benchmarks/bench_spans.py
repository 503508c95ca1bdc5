"""The editor's re-tokenization: ``explain.span_arrays.compute_spans`` of 100,000 characters
(what the app's span thread runs for the text on screen), in this process, one thread.

Text: the first 100,000 characters from byte 5,000,000 of ``english_books.txt``,
``chinese.txt`` and ``code.txt`` (shared corpora). Tokenizers: the presets GPT-2 and o200k_base.
Each figure is the median of ``--reps`` runs: cold, a freshly loaded tokenizer (its caches
empty); warm, the same tokenizer on the same text again (an edit re-tokenizes a text it has
seen). The compiled encoder's kernels are loaded first where this code has them (the app's
window loads them in the background at start), and its objects kept out of the collector's
full passes as the window does.

Run the same file against another checkout to compare: ``PYTHONPATH=OTHER python
benchmarks/bench_spans.py`` uses ``OTHER``'s ``bpe_studio``.

    python benchmarks/bench_spans.py [--reps 5] [--chars 100000]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402

TEXTS = {k: v for k, v in corpora.TEXT_KINDS.items() if k != "web"}
PRESETS = ("gpt2", "o200k_base")


def _text(path: Path, chars: int) -> str:
    data = corpora.line_slice(path, 5 * corpora.MB, 4 * chars)
    return data.decode("utf-8")[:chars]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--chars", type=int, default=100_000)
    args = ap.parse_args(argv)
    import bpe_studio
    from bpe_studio.core import Tokenizer

    try:
        from bpe_studio.core.explain.span_arrays import compute_spans
    except ImportError:  # code from before the spans modules were renamed
        from bpe_studio.core.explain.spans import compute_spans  # type: ignore[no-redef]

    try:
        from bpe_studio.core.encode.merging import kernel_start
    except ImportError:  # code from before the compiled encoder
        kernel_start = None
    if kernel_start is not None:
        kernel_start.prepare()
        gc.freeze()
    print(f"bpe_studio from {Path(bpe_studio.__file__).parent}")
    paths = dict(zip(TEXTS, corpora.corpus(*TEXTS.values())))
    for name in PRESETS:
        for label, path in paths.items():
            text = _text(path, args.chars)
            cold, warm = [], []
            for _ in range(args.reps):
                tok = Tokenizer.preset(name)
                gc.collect()
                start = time.perf_counter()
                first = compute_spans(tok, text)
                cold.append(time.perf_counter() - start)
                start = time.perf_counter()
                again = compute_spans(tok, text)
                warm.append(time.perf_counter() - start)
                assert first is not None and again is not None
                assert first.ids.tolist() == again.ids.tolist()
                # subtle: freed here, untimed: the spans hold their tokenizer, and freeing
                # the one before (o200k: 20 ms) landed in the next "warm" call's time.
                spans = len(first)
                del first, again, tok
            print(
                f"{name:11s} {label:8s} {spans:7,} spans  cold "
                f"{1000 * statistics.median(cold):7.1f} ms  warm "
                f"{1000 * statistics.median(warm):7.1f} ms",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
