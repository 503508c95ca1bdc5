"""Command-line start-up (#32): how long ``bpe-studio`` takes to answer before any work.

What it does: runs ``python -m bpe_studio`` with ``--version``, ``--help``, ``train --help``
and ``train`` of a missing corpus (every module training imports, then a one-line error), in
fresh processes, ``--reps`` times each, this checkout and (``--before PATH``) another one
alternating, one command after the other; prints the median wall time of each and the ratio.
What it leaves out: the desktop app's start, anything after the arguments are checked.
Machine load is printed beside the figures: the machine is shared, and wall times move with it.
Run: ``python benchmarks/bench_cli_startup.py [--reps N] [--before PATH]``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMMANDS = {
    "--version": ["--version"],
    "--help": ["--help"],
    "train --help": ["train", "--help"],
    "train, a missing corpus": ["train", "absent.txt", "--vocab-size", "300", "--out", "o"],
}


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def timed(repo: Path, args: list[str], cwd: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(repo))
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bpe_studio", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    reps = int(argv[argv.index("--reps") + 1]) if "--reps" in argv else 15
    before = Path(argv[argv.index("--before") + 1]) if "--before" in argv else None
    repos = {"this checkout": REPO} | ({f"before ({before})": before} if before else {})
    print(_load(), flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as cwd:
        for label, args in COMMANDS.items():
            times: dict[str, list[float]] = {name: [] for name in repos}
            timed(REPO, args, cwd)  # the first run of each fills the page cache
            for _ in range(reps):
                for name, repo in repos.items():
                    times[name].append(timed(repo, args, cwd))
            rows.append((label, {n: statistics.median(t) for n, t in times.items()}))
    names = list(repos)
    print(f"| command | {' | '.join(names)} |" + (" ratio |" if before else ""))
    print("|---|" + "---:|" * len(names) + ("---:|" if before else ""))
    for label, med in rows:
        cells = " | ".join(f"{med[n]:.3f} s" for n in names)
        ratio = f" {med[names[0]] / med[names[1]]:.2f}x |" if before else ""
        print(f"| `{label}` | {cells} |{ratio}")
    print(f"\nMedians of {reps} fresh processes each, alternating. {_load()}.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
