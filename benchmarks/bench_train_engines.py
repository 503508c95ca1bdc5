"""Where the compiled merge engine starts to pay: the two engines side by side by corpus size.

What it does: for slices of several corpora (English, Chinese, code, web text) it counts the
pre-tokens once, then times ``BpeTrainer(counts, vocab, engine=...)`` built and run to the end,
each run in a fresh Python process (so the compiled side pays numba's import and the load of
its cached kernels, as a command-line run does), alternating the engines, best of ``--reps``.
The kernels are compiled once first (a warm cache: the first-run compile is not counted).
Prints one Markdown row per (slice, vocab): positions (bytes of the unique pre-tokens with a
pair), Python seconds, compiled seconds, their ratio, and the load average. ``trainer.
COMPILED_FROM`` is set from this table (docs/training.md). What it leaves out: pre-tokenizing
(the same for both engines), Hugging Face (see ``bench_train_mixed``).
Run: ``python benchmarks/bench_train_engines.py [--reps N] [--vocab 500,2000,10000]``.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPORA = Path(os.environ.get("BPE_STUDIO_CORPORA", "/work/shared/corpora"))
SPECIAL = "<|endoftext|>"
SLICES = {
    "english_books.txt": (64_000, 256_000, 1_000_000, 4_000_000),
    "chinese.txt": (32_000, 128_000, 512_000, 2_000_000),
    "code.txt": (64_000, 256_000, 1_000_000, 4_000_000),
    "mixed_web.txt": (64_000, 256_000, 1_000_000, 4_000_000),
}

CHILD = """
import pickle, sys, time
t0 = time.perf_counter()
from bpe_studio.core.trainer import BpeTrainer
counts = pickle.load(open(sys.argv[1], "rb"))
t1 = time.perf_counter()
trainer = BpeTrainer(counts, int(sys.argv[2]), [sys.argv[4]], engine=sys.argv[3])
for _ in trainer:
    pass
print(time.perf_counter() - t1, trainer.engine_used)
"""


def _child(path: str, vocab: int, engine: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, path, str(vocab), engine, SPECIAL],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert out[1] == engine, out
    return float(out[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--vocab", default="500,2000,10000")
    args = parser.parse_args()
    vocabs = [int(v) for v in args.vocab.split(",")]
    sys.path.insert(0, str(REPO))
    from bpe_studio.core import count_text, merge_engine
    from bpe_studio.core.trainer import count_positions

    merge_engine.prepare(lambda m: print(m, file=sys.stderr))
    print("| corpus | bytes | positions | vocab | python s | compiled s | compiled/python | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, sizes in SLICES.items():
            data = (CORPORA / name).read_bytes()
            for size in sizes:
                text = data[:size].decode("utf-8", "ignore")
                counts = dict(count_text(text, [SPECIAL]))
                path = os.path.join(tmp, "counts.pkl")
                with open(path, "wb") as f:
                    pickle.dump(counts, f)
                for vocab in vocabs:
                    best = {"python": float("inf"), "compiled": float("inf")}
                    for _ in range(args.reps):
                        for engine in best:
                            best[engine] = min(best[engine], _child(path, vocab, engine))
                    load = os.getloadavg()[0]
                    print(
                        f"| {name} | {size:,} | {count_positions(counts):,} | {vocab:,} | "
                        f"{best['python']:.3f} | {best['compiled']:.3f} | "
                        f"{best['compiled'] / best['python']:.2f} | {load:.1f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
