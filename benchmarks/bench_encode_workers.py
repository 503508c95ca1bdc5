"""``bpe-studio encode --workers 2`` on a 100 MB file against the same command with one worker:
how well encoding a file scales over the processes.

File: 100 MB of mixed documents built in a temporary folder from the shared corpora
(``english_books.txt``, ``code.txt``, ``chinese.txt`` and ``mixed_web.txt`` one after the
other, again from the start until 100 MB, each cut at a line break), so the file is cut
before its ``<|endoftext|>`` lines and where each pattern allows. Tokenizers: GPT-2 and
o200k_base (GPT-4o), both on the compiled path.

W1. ``python -m bpe_studio encode FILE --tokenizer NAME --workers N --out IDS.npy`` for N = 1
    and 2, alternating, median of the repetitions: the throughput the command prints (timed
    from the start of encoding, after the tokenizer and the kernels are loaded) and its whole
    wall time. The ids of the two must be equal. Target (issue #34): two workers >= 1.8 x one
    (printed throughput). On a shared 2-core machine the second worker competes with other
    people's jobs: the load average and the cores others used are in the notes.

Run: ``python benchmarks/bench_encode_workers.py [--reps N] [--mb 100]``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import child  # noqa: E402
import corpora  # noqa: E402
import results  # noqa: E402
from corpora import Skip  # noqa: E402
from results import Row, Section  # noqa: E402

SOURCES = ("english_books.txt", "code.txt", "chinese.txt", "mixed_web.txt")
TOKENIZERS = ("gpt2", "o200k_base")
MB_DEFAULT = 100
REPS = 3
TARGET = 1.8
_THROUGHPUT = re.compile(r"throughput[^0-9]*([0-9]+(?:\.[0-9]+)?)\s*MB/s", re.IGNORECASE)


def build_file(folder: Path, size: int) -> Path:
    """About ``size`` bytes of the shared corpora one after another (see the module
    docstring), the last one cut at a line break."""
    out = folder / "mixed.txt"
    written = 0
    with open(out, "wb") as f:
        for path in itertools.cycle(corpora.corpus(*SOURCES)):
            data = path.read_bytes()
            room = size - written
            if len(data) > room:
                data = data[: data.rfind(b"\n", 0, room) + 1]
            f.write(data)
            written += len(data)
            if not data or written >= size - corpora.MB:
                return out
    return out


def _encode(path: Path, name: str, workers: int, out: Path) -> tuple[float, float, str]:
    """(printed MB/s, wall seconds, sha256 of the ids) of one run of the command."""
    import numpy as np

    run = child.run_child(
        [sys.executable, "-m", "bpe_studio", "encode", str(path), "--tokenizer", name,
         "--workers", str(workers), "--out", str(out)],
        timeout=3600,
    )  # fmt: skip
    m = _THROUGHPUT.search(run.stderr)
    if run.returncode != 0 or m is None:
        tail = (run.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise RuntimeError(f"encode --workers {workers} failed: {tail}")
    ids = np.load(out)
    digest = hashlib.sha256(ids.astype("<u4").tobytes()).hexdigest()
    out.unlink()
    return float(m.group(1)), run.wall_s, digest


def run(log=print, reps: int = REPS, mb: int = MB_DEFAULT) -> Section:
    try:
        corpora.corpus(*SOURCES)
    except Skip as e:
        return Section(rows=[Row("W1", "W1. encode --workers 2 vs 1", "-", "-", "-", "-",
                                 f"SKIP: {e}")])  # fmt: skip
    sec = Section()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    with corpora.scratch_dir() as tmp_name:
        tmp = Path(tmp_name)
        path = build_file(tmp, mb * corpora.MB)
        size = path.stat().st_size
        log(f"built {size / 1e6:.1f} MB at {path}")
        for name in TOKENIZERS:
            rates: dict[int, list[float]] = {1: [], 2: []}
            walls: dict[int, list[float]] = {1: [], 2: []}
            digests: set[str] = set()
            for rep in range(reps):
                for workers in (1, 2):
                    rate, wall, digest = _encode(path, name, workers, tmp / "ids.npy")
                    rates[workers].append(rate)
                    walls[workers].append(wall)
                    digests.add(digest)
                    log(f"  [W1] {name} rep {rep + 1}/{reps} workers {workers}: "
                        f"{rate:.2f} MB/s printed, {wall:.1f} s wall")  # fmt: skip
            one, two = results.median(rates[1]), results.median(rates[2])
            wall_one, wall_two = results.median(walls[1]), results.median(walls[2])
            ratio = two / one
            status = (
                "FAIL (the ids differ)"
                if len(digests) != 1
                else results.verdict(ratio, TARGET, higher_is_better=True)
            )
            sec.rows.append(
                Row("W1", f"W1. {name} `encode --workers 2` on {size / 1e6:.0f} MB, vs 1 worker",
                    f"{two:.2f} MB/s ({wall_two:.1f} s wall)",
                    f"1 worker {one:.2f} MB/s ({wall_one:.1f} s wall)",
                    f"{ratio:.2f}x (wall: {wall_one / wall_two:.2f}x)", f">= {TARGET}x", status)
            )  # fmt: skip
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    sec.notes.append(
        f"[W1] {size:,} bytes of mixed documents; medians of {reps} runs per worker count, "
        f"alternating; the printed throughput is timed from the start of encoding. Load "
        f"average {load:.1f} before, {load_after:.1f} after (2 cores)."
    )
    return sec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=REPS, help="repetitions per figure")
    ap.add_argument("--mb", type=int, default=MB_DEFAULT, help="size of the file in MB")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    sec = run(log=log, reps=args.reps, mb=args.mb)
    print(results.section_markdown(sec))
    return 1 if any(r.status.startswith("FAIL") for r in sec.rows) else 0


if __name__ == "__main__":
    sys.exit(main())
