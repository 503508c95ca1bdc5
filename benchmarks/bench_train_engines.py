"""Where the compiled merge engine starts to pay: both engines and Hugging Face by corpus size.

What it does: for slices of several corpora (English, Chinese, code, web text; each cut at a
line end and written once to ``train_corpora.cache_dir()``, outside the repo) it trains with
the Python engine forced, the compiled engine forced, and Hugging Face ``tokenizers``, each run
in a fresh process as ``bench_train_mixed.run_child`` does (so the compiled side pays numba's
import and the load of its cached kernels, as a command-line run does; peak memory is the PSS
of the process tree), alternating, best of ``--reps`` by time. The kernels are compiled once
first (a warm cache: the first-run compile is not counted). Prints one Markdown row per
(slice, vocab): positions (bytes of the unique pre-tokens with a pair), then time and peak for
each, and the load average. ``trainer.COMPILED_FROM`` is set from this table and
``bench_train_mixed``'s (docs/training.md, "The threshold"). What it leaves out: rustbpe and
ffbpe (see ``bench_train_mixed``).
Run: ``python benchmarks/bench_train_engines.py [--reps N] [--vocab 10000,32000]
[--only NAME]``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import train_corpora
from bench_train_mixed import REPO, SPECIAL, run_child

SLICES = {
    "english_books.txt": (4_000_000, 20_000_000),
    "chinese.txt": (256_000, 1_000_000, 2_000_000),
    "code.txt": (4_000_000, 30_780_092),
    "mixed_web.txt": (2_000_000, 7_143_254),
}
IMPLS = ("ours-python", "ours-compiled", "hf")


def slice_file(name: str, size: int) -> Path:
    """The first ``size`` bytes of a shared corpus, cut after its last line break."""
    path = train_corpora.cache_dir() / f"{name}.{size}"
    if not path.exists():
        with open(train_corpora.corpora_dir() / name, "rb") as f:
            data = f.read(size)
        path.write_bytes(data[: data.rfind(b"\n") + 1])
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--vocab", default="10000,32000")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    vocabs = [int(v) for v in args.vocab.split(",")]
    sys.path.insert(0, str(REPO))
    from bpe_studio.core import count_text
    from bpe_studio.core.train import merge_engine
    from bpe_studio.core.train.trainer import count_positions

    merge_engine.prepare(lambda m: print(m, file=sys.stderr))
    print("| corpus | bytes | positions | vocab | Python engine | compiled engine | HF | load |")
    print("|---|---:|---:|---:|---|---|---|---|")
    for name, sizes in SLICES.items():
        for size in sizes if args.only in name else ():
            path = slice_file(name, size)
            text = path.read_text(encoding="utf-8")
            positions = count_positions(count_text(text, [SPECIAL]))
            del text
            for vocab in vocabs:
                best: dict[str, dict] = {}  # impl -> its fastest run
                for _ in range(args.reps):
                    for impl in IMPLS:
                        r = run_child(impl, path, vocab)
                        if impl not in best or r["seconds"] < best[impl]["seconds"]:
                            best[impl] = r
                cells = [
                    f"{best[i]['seconds']:.2f} s / {best[i]['peak_mib']:.0f} MiB" for i in IMPLS
                ]
                print(
                    f"| {name} | {path.stat().st_size:,} | {positions:,} | {vocab:,} | "
                    f"{' | '.join(cells)} | {os.getloadavg()[0]:.1f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
