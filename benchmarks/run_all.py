"""The table benchmarks in one run: training (bench_train), encoding with GPT-2
(bench_encode), with the GPT-2, cl100k_base and o200k_base presets (bench_encode_presets), with
the open models' ``tokenizer.json`` shapes (bench_hf_json) and a 100 MB file in one and two
worker processes (bench_encode_workers), side by side with Hugging Face ``tokenizers``,
``fastokens`` and tiktoken. Prints one Markdown table with a
PASS/MISS per target, then peak memory, and writes it with a description of this machine to
``benchmarks/LATEST.md`` (``--out`` to write elsewhere, ``--no-write`` to only print;
``RESULTS.md`` is the hand-kept log of every round's figures, which this never overwrites).
The others run one by one (each file's docstring says how): bench_train_peers (training
against ffbpe and rustbpe), bench_long_runs, bench_spans, bench_decode, bench_inspect (the
vocabulary report), bench_foreign, bench_lab, bench_train_mixed (``--train-mixed`` here) and
bench_time_travel (``--time-travel``).

Not part of the test suite; it takes several minutes on 2 cores (the presets alone start
about 70 processes). Corpora are looked up in
``$BPE_STUDIO_CORPORA`` or ``<repo root>/../shared/corpora``; a benchmark whose corpus is missing
is reported as SKIP. Exit status: 1 if any encoder's ids differ from tiktoken's or a
benchmark run as a child process fails, else 0 (a MISS is a finding, not an error).

Run: ``python benchmarks/run_all.py``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_encode  # noqa: E402
import bench_encode_presets  # noqa: E402
import bench_encode_workers  # noqa: E402
import bench_hf_json  # noqa: E402
import bench_train  # noqa: E402
import corpora  # noqa: E402
import machine  # noqa: E402
import quiet  # noqa: E402
import results  # noqa: E402

METHOD = """\
How it was measured
- Every measured run is a fresh Python process (`benchmarks/runner.py`); the time is taken
  inside it around the workload only, except the CLI row, which is timed both ways (see notes).
  Ours and the peer alternate, run after run.
- Hugging Face `tokenizers` may use every core (its Rayon thread pool, no RAYON_NUM_THREADS cap,
  TOKENIZERS_PARALLELISM=true); its training is parallel, its single-string `encode` is not.
  tiktoken's `encode` of one string is single-threaded. bpe_studio's `train_bpe` pre-tokenizes
  in one worker process per core (files over 4 MB); its `Tokenizer.encode` is single-threaded.
- HF training uses the same GPT-2 regex (`Split(..., "isolated")` then `ByteLevel(use_regex=False)`)
  and the 256-byte initial alphabet. Note it does not split out `<|endoftext|>` inside the
  training text (it only adds it to the vocabulary), while bpe_studio removes it before counting.
- Peak memory: "largest process" is `ru_maxrss` from `wait4` (the biggest single process in the
  child's tree); "whole process tree" sums PSS of the child and its worker processes, sampled
  every 20 ms with psutil (so forked workers' shared pages are not counted twice).
- Before each measured run the script waits (up to `--wait-quiet` seconds, default 20, and 180 s
  in all) until other processes use under 0.3 cores; the notes say how busy the machine still
  was while each group of runs was timed.
- CPU times count every thread and reaped worker process. Importing numpy (which
  `bpe_studio.core` does) starts an OpenBLAS thread that spins for a moment, so even a
  single-process bpe_studio run can show a CPU/wall ratio near 2 on a short workload.
- 1 MB = 10^6 bytes of UTF-8 text; memory in MiB."""


def render(sec: results.Section, info: dict[str, str], elapsed: float, cmd: str) -> str:
    return (
        "\n\n".join(
            [
                "# BPE Studio benchmarks",
                f"Produced by `{cmd}` on {info['date']} in {elapsed:.0f} s. Regenerate with "
                "the same command; the figures below are from this machine only.",
                "## Machine\n\n" + machine.machine_markdown(info),
                "## Results\n\n" + results.section_markdown(sec),
                "## " + METHOD.split("\n", 1)[0] + "\n\n" + METHOD.split("\n", 1)[1],
            ]
        )
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=corpora.BENCH_DIR / "LATEST.md")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument(
        "--wait-quiet",
        type=float,
        default=20.0,
        metavar="S",
        help="before each measured run wait up to S seconds for other processes to use under "
        f"{quiet.QUIET_BELOW_CORES} cores (0: do not wait; default: %(default)s)",
    )
    ap.add_argument(
        "--train-mixed",
        action="store_true",
        help="also run bench_train_mixed.py --scale (every kind of text, 200 MB and 1 GB; "
        "tens of minutes) and append its tables",
    )
    ap.add_argument(
        "--time-travel",
        action="store_true",
        help="also run bench_time_travel.py both (recording the pairs, and the views at any "
        "step and during a replay, 4 corpora at vocab 32,000; ~15 minutes) and append its tables",
    )
    args = ap.parse_args(argv)
    quiet.QUIET_MAX_WAIT_S = args.wait_quiet

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    info = machine.machine_info()
    log(f"corpora: {corpora.corpora_dir() or 'NOT FOUND (benchmarks will be skipped)'}")
    start = time.perf_counter()
    sec = results.Section()
    log("training benchmarks ...")
    sec.extend(bench_train.run(log=log))
    log("encoding benchmarks ...")
    sec.extend(bench_encode.run(log=log))
    log("encoding with the presets ...")
    sec.extend(bench_encode_presets.run(log=log))
    log("encoding with tokenizer.json files ...")
    sec.extend(bench_hf_json.run(log=log))
    log("encoding a 100 MB file with one and two workers ...")
    sec.extend(bench_encode_workers.run(log=log))
    elapsed = time.perf_counter() - start

    text = render(sec, info, elapsed, "python benchmarks/run_all.py")
    failed: list[str] = []
    if args.train_mixed:
        log("training on every kind of text (bench_train_mixed.py --scale) ...")
        mixed = Path(__file__).resolve().parent / "bench_train_mixed.py"
        out = subprocess.run([sys.executable, str(mixed), "--scale"], stdout=subprocess.PIPE)
        text += "\n## Training on every kind of text\n\n" + out.stdout.decode("utf-8")
        failed += _failure("bench_train_mixed.py", out.returncode)
    if args.time_travel:
        log("time travel (bench_time_travel.py both) ...")
        travel = Path(__file__).resolve().parent / "bench_time_travel.py"
        out = subprocess.run(
            [sys.executable, str(travel), "both", "--markdown"], stdout=subprocess.PIPE
        )
        text += "\n## Time travel (issue 25)\n\n" + out.stdout.decode("utf-8")
        failed += _failure("bench_time_travel.py", out.returncode)
    for line in failed:
        text += f"\n**{line}**\n"
    print(text)
    if not args.no_write:
        args.out.write_text(text, encoding="utf-8")
        log(f"wrote {args.out}")
    return 1 if failed or any(r.status.startswith("FAIL") for r in sec.rows) else 0


def _failure(script: str, returncode: int) -> list[str]:
    """What to say of a benchmark run as a child that failed (its section may be empty)."""
    return [f"FAILED: {script} exited with status {returncode}"] if returncode else []


if __name__ == "__main__":
    sys.exit(main())
