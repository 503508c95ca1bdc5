"""Encoding with the shipped presets GPT-2, cl100k_base (GPT-4) and o200k_base (GPT-4o):
bpe_studio against tiktoken on English, Chinese, code and web text, how long each preset takes
to load, and what the compiled encoder's kernels cost to load and, once per machine, to
compile.

Text: 2 MB of each of ``english_books.txt``, ``chinese.txt``, ``code.txt`` and
``mixed_web.txt``, starting at byte 5,000,000 (both ends cut at line breaks). tiktoken is built
offline from the same rank files (``resources/tokenizers``; GPT-2's from its own vocabulary)
with the pattern and special tokens of its own constructor (``peers``); every result's ids
must equal tiktoken's (a mismatch marks the row FAIL and the run exits non-zero).

P1. In-process ``encode`` of the text, single thread, cold: a fresh ``Tokenizer.preset(name)``
    (loading untimed, and the compiled encoder's kernels loaded after it, untimed, as
    tiktoken's compiled code is loaded by its import: P4 times them), first call on the text,
    so tables built on first use (the rank table, the piece cache) are timed. Each repetition
    is a fresh child process; ours and tiktoken alternate; the ratio is of the medians of
    this run (the machine is shared: only same-run ratios mean anything), with the ratio of
    CPU times beside it. Target (issue #34): ours >= 1.0 x tiktoken.
P2. ``python -m bpe_studio encode TEXT --tokenizer NAME --workers 2`` on the same text; its
    printed throughput (timed from the start of encoding) against tiktoken's P1 median.
    Target: >= 0.8 x.
P3. Loading: ``Tokenizer.preset(name)`` in a fresh process (imports untimed), median; tiktoken
    building its encoding from the same rank file, for context. Target (issue #10): o200k <= 1 s.
P4. The compiled encoder's kernels (and the scanners') made ready in a fresh process: numba
    imported and the machine code read from its cache (every run but a machine's first).
P5. The same with an empty numba cache (``NUMBA_CACHE_DIR`` a new folder): the first run on a
    machine, which compiles (in a child process) and says so. One run.
P6. What a script gets from the public API alone: a fresh process, ``Tokenizer.preset(name)``
    (untimed) and its first ``encode`` of the text with nothing loaded before (a text under 2M
    characters takes the Python path), against tiktoken's P1 median; and the same with
    ``prepare_bulk()`` (the kernels' load) timed with the encode. No target: it says what a
    one-off encode costs.

Run: ``python benchmarks/bench_encode_presets.py [--reps N] [--wait-quiet S] [--no-cli]
[--presets gpt2,o200k_base] [--texts Chinese,web] [--no-loading] [--no-one-off]``.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import child  # noqa: E402
import corpora  # noqa: E402
import quiet  # noqa: E402
import results  # noqa: E402
from corpora import Skip  # noqa: E402
from results import Row, Section  # noqa: E402

PRESETS = ("gpt2", "cl100k_base", "o200k_base")
TEXTS = corpora.TEXT_KINDS
SLICE_AT = 5 * corpora.MB
SLICE_BYTES = 2 * corpora.MB
REPS = 3
IN_PROCESS_TARGET = 1.0
CLI_TARGET = 0.8
LOAD_LIMIT_S = 1.0
_THROUGHPUT = re.compile(r"throughput[^0-9]*([0-9]+(?:\.[0-9]+)?)\s*MB/s", re.IGNORECASE)


def _status(ratio: float, target: float, same_ids: bool) -> str:
    if not same_ids:
        return "FAIL (ids differ from tiktoken's)"
    return results.verdict(ratio, target, higher_is_better=True)


def _in_process(preset: str, label: str, text: Path, reps: int, log) -> tuple[Row, float, tuple]:
    runs: dict[str, list[child.ChildRun]] = {"ours": [], "tiktoken": []}
    for rep in range(reps):
        for impl in runs:
            run = child.run_workload("encode_preset", impl=impl, preset=preset, text_path=str(text))
            runs[impl].append(run)
            log(f"  [P1] {preset} {label} rep {rep + 1}/{reps} {impl:8s} "
                f"{run.result['mb_per_s']:6.2f} MB/s")  # fmt: skip
    reference = (runs["tiktoken"][0].result["ids"], runs["tiktoken"][0].result["sha256"])
    same = all(
        (r.result["ids"], r.result["sha256"]) == reference for rs in runs.values() for r in rs
    )
    ours = results.median([r.result["mb_per_s"] for r in runs["ours"]])
    peer = results.median([r.result["mb_per_s"] for r in runs["tiktoken"]])
    ratio = ours / peer
    # CPU time too: on a shared machine a process waiting for a core loses wall time that
    # its CPU time does not count (the single-threaded encodes use one core each).
    cpu = {impl: results.median([r.result["cpu_seconds"] for r in rs]) for impl, rs in runs.items()}
    cpu_ratio = cpu["tiktoken"] / cpu["ours"]
    row = Row(
        "P1",
        f"P1. {preset} encode 2 MB {label}, 1 thread, cold",
        f"{ours:.2f} MB/s",
        f"tiktoken {peer:.2f} MB/s",
        f"{ratio:.2f}x (CPU time: {cpu_ratio:.2f}x)",
        f">= {IN_PROCESS_TARGET}x",
        _status(ratio, IN_PROCESS_TARGET, same),
    )
    return row, peer, reference


def _one_off(preset: str, label: str, text: Path, peer: float, reference, reps: int, log) -> Row:
    """P6: what a script gets from the public API alone, nothing loaded before."""
    rates: dict[bool, list[float]] = {False: [], True: []}
    same = True
    for rep in range(reps):
        for prepare in rates:
            run = child.run_workload(
                "encode_preset_oneoff", preset=preset, text_path=str(text), prepare=prepare
            )
            rates[prepare].append(run.result["mb_per_s"])
            same &= (run.result["ids"], run.result["sha256"]) == reference
        log(f"  [P6] {preset} {label} rep {rep + 1}/{reps} one-off {rates[False][-1]:6.2f} "
            f"MB/s, with prepare_bulk() {rates[True][-1]:6.2f} MB/s")  # fmt: skip
    plain, prepared = results.median(rates[False]), results.median(rates[True])
    return Row(
        "P6",
        f"P6. {preset} 2 MB {label}: public API only, fresh process, nothing loaded before "
        f"(with prepare_bulk() timed: {prepared:.2f} MB/s, {prepared / peer:.2f}x)",
        f"{plain:.2f} MB/s",
        f"tiktoken {peer:.2f} MB/s",
        f"{plain / peer:.2f}x",
        "-",
        "N/A" if same else "FAIL (ids differ from tiktoken's)",
    )


def _cli(preset: str, label: str, text: Path, tmp: Path, peer: float, reference, reps: int, log):
    import numpy as np

    rates: list[float] = []
    same = True
    for rep in range(reps):
        out = tmp / f"{preset}_{label}_{rep}.npy"
        run = child.run_child(
            [
                sys.executable,
                "-m",
                "bpe_studio",
                "encode",
                str(text),
                "--tokenizer",
                preset,
                "--workers",
                "2",
                "--out",
                str(out),
            ],  # fmt: skip
            timeout=600,
        )
        m = _THROUGHPUT.search(run.stderr)
        if run.returncode != 0 or m is None:
            tail = (run.stderr.strip().splitlines() or ["(no message)"])[-1]
            return Row("P2", f"P2. {preset} CLI --workers 2, {label}", "-", "-", "-",
                       f">= {CLI_TARGET}x", f"FAIL: {tail}")  # fmt: skip
        rates.append(float(m.group(1)))
        ids = np.load(out).astype("<u4")
        same &= (int(ids.size), hashlib.sha256(ids.tobytes()).hexdigest()) == reference
        log(f"  [P2] {preset} {label} rep {rep + 1}/{reps} CLI {rates[-1]:6.2f} MB/s")
    ours = results.median(rates)
    ratio = ours / peer
    return Row(
        "P2",
        f"P2. {preset} `encode --workers 2` CLI, same 2 MB {label}, vs tiktoken 1 thread",
        f"{ours:.2f} MB/s",
        f"tiktoken {peer:.2f} MB/s",
        f"{ratio:.2f}x",
        f">= {CLI_TARGET}x",
        _status(ratio, CLI_TARGET, same),
    )


def _loading(preset: str, reps: int, log) -> Row:
    seconds: dict[str, list[float]] = {"ours": [], "tiktoken": []}
    for _ in range(reps):
        for impl in seconds:
            run = child.run_workload("load_preset", impl=impl, preset=preset)
            seconds[impl].append(run.result["seconds"])
    ours, peer = results.median(seconds["ours"]), results.median(seconds["tiktoken"])
    log(f"  [P3] {preset} load: ours {ours:.2f} s, tiktoken {peer:.2f} s")
    ok = preset != "o200k_base" or ours <= LOAD_LIMIT_S
    return Row(
        "P3",
        f"P3. load {preset} (Tokenizer.preset)",
        f"{ours:.2f} s",
        f"tiktoken {peer:.2f} s",
        f"{ours / peer:.2f}x time",
        f"<= {LOAD_LIMIT_S:.0f} s" if preset == "o200k_base" else "-",
        ("PASS" if ok else "MISS") if preset == "o200k_base" else "N/A",
    )


def _kernels(reps: int, log) -> list[Row]:
    seconds = []
    for _ in range(reps):
        seconds.append(child.run_workload("load_kernels").result["seconds"])
    cached = results.median(seconds)
    log(f"  [P4] kernels from the cache: {cached:.2f} s")
    rows = [
        Row("P4", "P4. compiled encoder's kernels ready in a fresh process (numba cache)",
            f"{cached:.2f} s", "-", "-", "-", "N/A")
    ]  # fmt: skip
    with corpora.scratch_dir() as empty:
        run = child.run_workload("load_kernels", extra_env={"NUMBA_CACHE_DIR": empty})
    first = run.result["seconds"]
    said = "; ".join(run.result["compiled"]) or "nothing said"
    log(f"  [P5] first run, empty cache: {first:.1f} s ({said})")
    rows.append(
        Row("P5", "P5. the same, first run on a machine (empty numba cache: compiles)",
            f"{first:.1f} s", "-", "-", "-", "N/A")
    )  # fmt: skip
    return rows


def run(
    log=print,
    reps: int = REPS,
    cli: bool = True,
    presets: tuple[str, ...] = PRESETS,
    labels: tuple[str, ...] = tuple(TEXTS),
    loading: bool = True,
    one_off: bool = True,
) -> Section:
    try:
        corpora.require("tiktoken", "numpy")
        names = {k: TEXTS[k] for k in labels}
        paths = dict(zip(names, corpora.corpus(*names.values())))
        slices = {k: corpora.line_slice(p, SLICE_AT, SLICE_BYTES) for k, p in paths.items()}
    except Skip as e:
        return Section(rows=[Row("P1", "P1-P3. presets against tiktoken", "-", "-", "-", "-",
                                 f"SKIP: {e}")])  # fmt: skip
    sec = Section()
    with corpora.scratch_dir() as tmp_name:
        tmp = Path(tmp_name)
        texts = {k: corpora.write_temp(v, f"{k}.txt", tmp) for k, v in slices.items()}
        for preset in presets:
            for label, text in texts.items():
                row, peer, reference = _in_process(preset, label, text, reps, log)
                sec.rows.append(row)
                if one_off:
                    sec.rows.append(_one_off(preset, label, text, peer, reference, reps, log))
                if cli:
                    sec.rows.append(_cli(preset, label, text, tmp, peer, reference, reps, log))
            if loading:
                sec.rows.append(_loading(preset, reps, log))
        if loading:
            sec.rows += _kernels(reps, log)
    sec.notes.append(
        f"[P1-P3] 2 MB slices from byte 5,000,000 of each corpus; medians of {reps} "
        "fresh processes per figure, ours and tiktoken alternating. P1 is cold: the first "
        "encode of a fresh tokenizer, tables built on first use included (the compiled "
        "encoder's kernels loaded before it: P4). P6 is what a script gets from the public "
        "API alone in a fresh process: a text under 2M characters takes the Python path "
        "unless prepare_bulk() loads the kernels (timed in its second figure)."
    )
    return sec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=REPS, help="repetitions per figure")
    ap.add_argument("--no-cli", action="store_true", help="skip P2 (the command line)")
    ap.add_argument(
        "--wait-quiet",
        type=float,
        default=quiet.QUIET_MAX_WAIT_S,
        metavar="S",
        help="before each run wait up to S seconds for the machine to be quiet (0: never)",
    )
    ap.add_argument(
        "--presets", default=",".join(PRESETS), help="comma-separated presets (default: all)"
    )
    ap.add_argument(
        "--texts", default=",".join(TEXTS), help=f"comma-separated, of {', '.join(TEXTS)}"
    )
    ap.add_argument("--no-loading", action="store_true", help="skip P3-P5 (loading)")
    ap.add_argument("--no-one-off", action="store_true", help="skip P6 (public API alone)")
    args = ap.parse_args(argv)
    quiet.QUIET_MAX_WAIT_S = args.wait_quiet
    presets = tuple(args.presets.split(","))
    labels = tuple(args.texts.split(","))
    unknown = [p for p in presets if p not in PRESETS] + [t for t in labels if t not in TEXTS]
    if unknown:
        ap.error(f"unknown preset or text: {', '.join(unknown)}")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    sec = run(
        log=log,
        reps=args.reps,
        cli=not args.no_cli,
        presets=presets,
        labels=labels,
        loading=not args.no_loading,
        one_off=not args.no_one_off,
    )
    print(results.section_markdown(sec))
    return 1 if any(r.status.startswith("FAIL") for r in sec.rows) else 0


if __name__ == "__main__":
    sys.exit(main())
