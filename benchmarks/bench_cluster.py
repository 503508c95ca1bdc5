"""Pre-token counting on a Dask cluster (#28): its overhead on one machine, and its scaling.

What it does, each run in a fresh child process (``--child``), timed from the call:
- overhead: ``train_bpe`` on English books + code (``english_books.txt`` and ``code.txt``,
  69 MB, two files counted as one corpus) at ``--vocab`` (2,000 by default: the shorter the
  merging, the larger the cluster's start-up's share), with local counting (``workers=2``)
  and with ``cluster="local:2"`` (a LocalCluster of 2 worker processes started by the run),
  alternating, ``--reps`` times each: median wall time, the time to the end of counting, the
  ratio (target <= 1.3x) and whether the merges are identical. ``--before PATH`` adds
  ``cluster="local:2"`` from another checkout (the code before a change) to the same
  alternation;
- scaling: counting only (``count_on_cluster``) the ~1 GB varied corpus that
  ``train_corpora.scaled()`` builds (the one ``bench_train_mixed.py --scale`` trains on), on
  a LocalCluster of 1, 2 and (oversubscribed on 2 cores) 4 workers, once each: wall time,
  MB/s, MB/s per worker, the client's peak RSS (this process only: the workers are apart),
  and the unique pre-tokens the client receives; then 100 GB on 16 machines, extrapolated
  from the measured per-worker rate.
What it leaves out: a real multi-machine cluster (none here), object stores.
Machine load is printed beside the figures: the machine is shared, and wall times move with it.
Run: ``python benchmarks/bench_cluster.py [--reps N] [--vocab N] [--before PATH] [--no-scale]``.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import train_corpora
from corpora import MB, corpus

REPO = Path(__file__).resolve().parent.parent
SPECIAL = "<|endoftext|>"
VOCAB = 2_000


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


# ------------------------------------------------------------------------ in the child
def child_train(mode: str, vocab: int, paths: list[str]) -> dict:
    from bpe_studio.core import train_bpe

    counted = [0.0]
    start = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if done >= total:
            counted[0] = time.perf_counter() - start

    options = {"workers": 2} if mode == "local" else {"cluster": "local:2"}
    _, merges = train_bpe(paths, vocab, [SPECIAL], progress=progress, **options)
    seconds = time.perf_counter() - start
    digest = hashlib.sha256(repr(merges).encode()).hexdigest()
    return {"seconds": seconds, "counted": counted[0], "merges": len(merges), "digest": digest}


def child_count(workers: int, path: str) -> dict:
    from distributed import Client, LocalCluster

    from bpe_studio.core.corpus.cluster import count_on_cluster
    from bpe_studio.core.corpus.sources import resolve_corpus

    files = resolve_corpus(path)
    lc = LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with lc, Client(lc) as client:
        start = time.perf_counter()
        counts = count_on_cluster(files, [SPECIAL], cluster=client)
        seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2**20
    return {"seconds": seconds, "unique": len(counts), "client_peak_mib": peak}


# ------------------------------------------------------------------------ in the parent
def run_child(*args: object, repo: Path = REPO) -> dict:
    env = dict(os.environ, PYTHONPATH=str(repo))
    argv = [sys.executable, __file__, "--child", *map(str, args)]
    out = subprocess.run(argv, stdout=subprocess.PIPE, text=True, env=env, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def overhead(reps: int, vocab: int, before: Path | None) -> list[str]:
    paths = [str(p) for p in corpus("english_books.txt", "code.txt")]
    size = sum(os.path.getsize(p) for p in paths)
    modes = {"local": REPO, "cluster": REPO}
    if before is not None:
        modes["cluster, before"] = before
    names = {
        "local": "local, 2 processes",
        "cluster": "LocalCluster, 2 workers",
        "cluster, before": f"LocalCluster, 2 workers, before ({before})",
    }
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    loads = []
    for _ in range(reps):
        for mode, repo in modes.items():
            loads.append(os.getloadavg()[0])
            kind = "local" if mode == "local" else "cluster"
            runs[mode].append(run_child("train", kind, vocab, *paths, repo=repo))
    med = {m: statistics.median(r["seconds"] for r in rs) for m, rs in runs.items()}
    cnt = {m: statistics.median(r["counted"] for r in rs) for m, rs in runs.items()}
    same = len({r["digest"] for rs in runs.values() for r in rs}) == 1
    lines = [
        f"### `--cluster local:2` against local counting ({size / MB:.0f} MB, vocab {vocab:,})",
        "",
        "| counting | wall time (median) | to the end of counting | merges | cluster / local |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| {names[m]} | {med[m]:.1f} s | {cnt[m]:.1f} s | {runs[m][0]['merges']:,} | "
            f"{med[m] / med['local']:.2f}x |"
            for m in runs
        ),
        "",
        f"Ratio cluster / local: {med['cluster'] / med['local']:.2f}x wall time "
        f"(target <= 1.3x), {cnt['cluster'] / cnt['local']:.2f}x to the end of counting. "
        f"Merges identical in every run: {'yes' if same else 'NO'}. {reps} runs each, "
        f"alternating; load average at the starts: {', '.join(f'{x:.1f}' for x in loads)}.",
    ]
    return lines


def scaling() -> list[str]:
    path = train_corpora.scaled()
    size = os.path.getsize(path)
    lines = [
        f"### Scaling: counting {size / MB:,.0f} MB on a LocalCluster of 1, 2 and 4 workers",
        "",
        "| workers | wall time | MB/s | MB/s per worker | client peak RSS | unique pre-tokens "
        "| load at start |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rates = {}
    for workers in (1, 2, 4):
        load = os.getloadavg()[0]
        r = run_child("count", workers, path)
        rate = size / MB / r["seconds"]
        rates[workers] = rate
        lines.append(
            f"| {workers} | {r['seconds']:.1f} s | {rate:.1f} | {rate / workers:.1f} | "
            f"{r['client_peak_mib']:,.0f} MiB | {r['unique']:,} | {load:.1f} |"
        )
    per_worker = rates[1]
    lines += [
        "",
        f"Extrapolation: 100 GB on 16 machines at the measured {per_worker:.1f} MB/s per "
        "worker (1 worker, one core to itself): "
        + ", ".join(
            f"{k} workers a machine: {100_000 / (per_worker * 16 * k) / 60:.1f} min"
            for k in (2, 8, 32)
        )
        + " of counting, plus the reduction and the transfer of one counter to the client.",
    ]
    return lines


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        kind = argv[1]
        if kind == "train":
            result = child_train(argv[2], int(argv[3]), argv[4:])
        else:
            result = child_count(int(argv[2]), argv[3])
        print(json.dumps(result))
        return 0
    reps = int(argv[argv.index("--reps") + 1]) if "--reps" in argv else 3
    vocab = int(argv[argv.index("--vocab") + 1]) if "--vocab" in argv else VOCAB
    before = Path(argv[argv.index("--before") + 1]) if "--before" in argv else None
    print(_load(), flush=True)
    lines = overhead(reps, vocab, before)
    print("\n".join(lines), flush=True)
    if "--no-scale" not in argv:
        print("\n".join(["", *scaling()]), flush=True)
    print(_load(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
