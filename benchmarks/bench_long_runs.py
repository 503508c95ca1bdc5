"""Encoding text made of long runs (one character repeated, digits, an emoji sequence, base64):
how time grows with the length, ours against tiktoken, for the presets GPT-2, cl100k_base and
o200k_base. A run of one kind is one pre-token (a word of letters, a run of spaces) or many
short ones (cl100k and o200k cut digits in threes): either way encoding should grow about
linearly. A growth per x4 far above 4 is a quadratic path (cl100k's digit runs took 24 s for
256 KB before the scanners bounded them; tiktoken is itself quadratic on some long pre-tokens).

L1. In-process, one thread, the compiled kernels loaded first: ``Tokenizer.encode`` and
    tiktoken's ``encode_ordinary`` of each text at ``--sizes`` characters (default 64K, 256K,
    1M), median of ``--reps``, ours cold (each time a freshly loaded preset, whose piece cache
    is empty, as tiktoken has none); the ids must equal tiktoken's (a mismatch marks the row FAIL
    and the run exits non-zero). Growth: time at the largest size over time at the one a
    quarter of it. tiktoken's own stack overflows on some runs of spaces ("Max stack size"):
    its column then says so.
L2. A fresh process that has not loaded the kernels, ``Tokenizer.encode`` of 1M characters of
    one letter (GPT-2): the text holds a pre-token long enough to load them
    (``encoder.PREPARE_PIECE_CHARS``), so the load is timed with it. Before that rule it took
    the Python path (8.4 s for 2M characters).

Run: ``python benchmarks/bench_long_runs.py [--reps 3] [--sizes 65536,262144,1048576]``.
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers  # noqa: E402
from timing import median_seconds  # noqa: E402

# tiktoken's stack overflow on long runs of spaces is a Rust panic: its one line, no backtrace.
os.environ["RUST_BACKTRACE"] = "0"

PRESETS = ("gpt2", "cl100k_base", "o200k_base")
KINDS: dict[str, Callable[[int], str]] = {
    "digits": lambda n: "".join(random.Random(1).choices("0123456789", k=n)),
    "one letter": lambda n: "a" * n,
    "letters": lambda n: "".join(random.Random(2).choices("abcdefghijklmnopqrstuvwxyz", k=n)),
    "equals signs": lambda n: "=" * n,
    "spaces": lambda n: " " * n,
    "newlines": lambda n: "\n" * n,
    "one Han character": lambda n: "中" * n,
    "emoji sequence": lambda n: ("\U0001f469\u200d\U0001f4bb" * n)[:n],
    "base64": lambda n: base64.b64encode(random.Random(3).randbytes(n))[:n].decode(),
}
FRESH = """
import time
from bpe_studio.core import Tokenizer
tok = Tokenizer.preset("gpt2")
text = "a" * {n}
start = time.perf_counter()
tok.encode(text)
print(time.perf_counter() - start)
"""


def _tiktoken(name: str):  # type: ignore[no-untyped-def]
    return peers.tiktoken_gpt2() if name == "gpt2" else peers.tiktoken_preset(name)


def _cold_seconds(tokenizer_class, name: str, text: str, reps: int) -> tuple[float, list[int]]:  # type: ignore[no-untyped-def]
    """The median time of ``reps`` first encodes of ``text``, each by a freshly loaded preset
    (loading and ``prepare_bulk`` untimed), and the ids."""
    times, ids = [], []
    for _ in range(reps):
        tok = tokenizer_class.preset(name)
        tok.prepare_bulk()
        start = time.perf_counter()
        ids = tok.encode(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times), ids


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", default="65536,262144,1048576")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    from bpe_studio.core import Tokenizer
    from bpe_studio.core.encode.merging import kernel_start

    kernel_start.prepare()
    failed = False
    print(f"L1. encode, one thread, kernels loaded; median of {args.reps}; growth = time at "
          f"{sizes[-1]:,} / time at {sizes[-1] // 4:,} characters")  # fmt: skip
    for name in PRESETS:
        theirs = _tiktoken(name)
        for kind, make in KINDS.items():
            cells, timings = [], {}
            for n in sizes:
                text = make(n)
                # subtle: a fresh tokenizer for each timed encode: its piece cache would
                # otherwise hold the text's pieces from the run before, and tiktoken has none.
                t_ours, ids = _cold_seconds(Tokenizer, name, text, args.reps)
                try:
                    expected = theirs.encode_ordinary(text)
                    t_theirs = median_seconds(lambda: theirs.encode_ordinary(text), args.reps)  # noqa: B023
                    status = "" if ids == expected else " FAIL"
                except BaseException as e:  # tiktoken's own "Max stack size exceeded"
                    t_theirs, status = float("nan"), f" (tiktoken: {type(e).__name__})"
                failed |= status == " FAIL"
                timings[n] = (t_ours, t_theirs)
                cells.append(f"{n:>9,}: {t_ours:7.3f} s / {t_theirs:7.3f} s{status}")
            quarter = sizes[-1] // 4
            growth = ""
            if quarter in timings:
                g_ours = timings[sizes[-1]][0] / max(timings[quarter][0], 1e-9)
                g_theirs = timings[sizes[-1]][1] / max(timings[quarter][1], 1e-9)
                growth = f"  growth x4: ours {g_ours:5.1f}, tiktoken {g_theirs:5.1f}"
            print(f"  {name:12} {kind:18} " + "; ".join(cells) + growth)
    n = 1 << 20
    fresh = []
    for _ in range(args.reps):
        # subtle: run from elsewhere: ``-c`` puts the working directory first on sys.path,
        # which from a checkout's root would import that checkout, not PYTHONPATH's.
        done = subprocess.run(
            [sys.executable, "-c", FRESH.format(n=n)], capture_output=True, text=True,
            check=True, cwd=tempfile.gettempdir(),
        )  # fmt: skip
        fresh.append(float(done.stdout.strip()))
    print(f"L2. a fresh process, GPT-2, encode {n:,} characters of 'a' (the kernels' load "
          f"included): {statistics.median(fresh):.3f} s (median of {args.reps})")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
