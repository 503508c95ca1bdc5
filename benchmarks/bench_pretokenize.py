"""Pre-tokenization throughput: each compiled scanner against the regex path it replaces, per
kind of text, and what the scanners cost to start.

What it measures, one thread, in this process, on 1 MB of each of ``english_books.txt``,
``chinese.txt``, ``code.txt`` and ``mixed_web.txt`` from byte 5,000,000 (cut at line breaks):
- the regex path as the core runs it without a scanner: GPT-2's, cl100k's and o200k's
  patterns on the standard library's ``re`` (``re_split``), Llama 3's and Qwen2's regexes on
  ``regex`` (as a custom pattern), DeepSeek-V3's three Splits and StarCoder's digits then
  ByteLevel as the ``tokenizer.json`` pipeline runs them (``pre_tokenizers.step_texts``);
- the scanner's ``ends`` (the pieces' end offsets: what counting and the compiled encoder
  read; code points made from the text included) and its ``findall`` (the pieces as
  strings, the same list as the regex path's, checked);
MB/s of CPU time (``thread_time``: the machine is shared, and CPU time moves less with other
load than wall time), median of ``--reps`` runs, the two alternating.
Then the start-up: in a fresh process, importing numba and loading the kernels from the
cache (what every first use pays), and with an empty numba cache, compiling them (the first
run on a machine; in a child process, as ``scan_load.prepare`` does).

Run: ``python benchmarks/bench_pretokenize.py [--reps N] [--no-cold]``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402

TEXTS = corpora.TEXT_KINDS
SLICE_AT = 5 * corpora.MB
SLICE_BYTES = corpora.MB


def _contestants() -> list[tuple[str, Callable[[str], list[str]], object]]:
    """(label, the regex path's findall, the scanner) for every scanner."""
    import regex

    from bpe_studio.core.formats.hf.components import read_components
    from bpe_studio.core.formats.hf.pre_tokenizers import step_texts
    from bpe_studio.core.pretokenization import re_split
    from bpe_studio.core.pretokenization.scan_patterns import (
        DEEPSEEK_V3_PATTERNS,
        DIGIT_PATTERN,
        LLAMA3_PATTERN,
        QWEN2_PATTERN,
        isolated,
    )
    from bpe_studio.core.pretokenization.scanner import compiled_scanner, compiled_steps

    out = []
    for name in ("gpt2", "cl100k", "o200k"):
        out.append((name, lambda text, n=name: re_split.findall(n, text), compiled_scanner(name)))
    for label, pattern in (("llama3", LLAMA3_PATTERN), ("qwen2", QWEN2_PATTERN)):
        out.append((label, regex.compile(pattern).findall, compiled_scanner(pattern)))

    def split(pattern: str) -> dict:
        return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated"}

    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}
    files = {
        "deepseek_v3": [*map(split, DEEPSEEK_V3_PATTERNS), byte_level],
        "starcoder": [
            {"type": "Digits", "individual_digits": True},
            {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        ],
    }
    patterns = {
        "deepseek_v3": [isolated(p) for p in DEEPSEEK_V3_PATTERNS],
        "starcoder": [isolated(DIGIT_PATTERN), isolated(compiled_scanner("gpt2").pattern)],
    }
    for label, steps in files.items():
        obj = {"pre_tokenizer": {"type": "Sequence", "pretokenizers": steps}}
        pipeline = read_components(obj, label, {}).pipeline
        assert pipeline is not None
        out.append(
            (label, lambda t, s=pipeline.steps: step_texts(s, t), compiled_steps(patterns[label]))
        )
    return out


def _cpu(fn: Callable[[str], object], text: str) -> float:
    t0 = time.thread_time()
    fn(text)
    return time.thread_time() - t0


def measure(reps: int) -> list[list[str]]:
    from bpe_studio.core.pretokenization import scan_load
    from bpe_studio.core.pretokenization.scanner import codepoints

    scan_load.prepare()
    paths = dict(zip(TEXTS, corpora.corpus(*TEXTS.values())))
    texts = {k: corpora.line_slice(p, SLICE_AT, SLICE_BYTES).decode() for k, p in paths.items()}
    rows = []
    for label, regex_path, scanner in _contestants():
        cells = [label]
        for kind, text in texts.items():
            mb = len(text.encode("utf-8")) / corpora.MB
            if scanner.findall(text) != regex_path(text):  # type: ignore[attr-defined]
                raise SystemExit(f"{label} on {kind}: the scanner's pieces differ")
            runs: dict[str, Callable[[str], object]] = {
                "regex": regex_path,
                "ends": lambda t, s=scanner: s.ends(codepoints(t)),  # type: ignore[attr-defined]
                "findall": scanner.findall,  # type: ignore[attr-defined]
            }
            times: dict[str, list[float]] = {k: [] for k in runs}
            for _ in range(reps):
                for k, fn in runs.items():
                    times[k].append(_cpu(fn, text))
            rate = {k: mb / statistics.median(v) for k, v in times.items()}
            cells.append(
                f"{rate['regex']:.0f} / {rate['ends']:.0f} / {rate['findall']:.0f} "
                f"({rate['findall'] / rate['regex']:.1f}x)"
            )
            print(f"  {label} {kind}: {cells[-1]}", file=sys.stderr, flush=True)
        rows.append(cells)
    return rows


STARTUP = """
import json, time
t0 = time.perf_counter(); c0 = time.process_time()
from bpe_studio.core.pretokenization import scan_load
said = []
scan_load.prepare(said.append)
print(json.dumps([time.perf_counter() - t0, time.process_time() - c0, said]))
"""


def startup(cache_dir: str | None) -> tuple[float, float, list[str]]:
    env = dict(os.environ, PYTHONPATH=str(corpora.REPO_ROOT))
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    out = subprocess.run(
        [sys.executable, "-c", STARTUP], env=env, capture_output=True, text=True, check=True
    ).stdout
    wall, cpu, said = json.loads(out.strip().splitlines()[-1])
    return wall, cpu, said


def main(argv: list[str]) -> int:
    if "--help" in argv or "-h" in argv:
        print(__doc__)
        return 0
    reps = int(argv[argv.index("--reps") + 1]) if "--reps" in argv else 5
    print(f"load average at the start: {os.getloadavg()}", file=sys.stderr)
    rows = measure(reps)
    header = ["scanner", *(f"{k}: regex path / ends / findall MB/s" for k in TEXTS)]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    warm = startup(None)
    print(f"\nStart-up in a fresh process, kernels in the cache: {warm[0]:.2f} s "
          f"({warm[1]:.2f} s CPU: numba imported, class table and kernels loaded).")  # fmt: skip
    if "--no-cold" not in argv:
        with tempfile.TemporaryDirectory() as cold_dir:
            cold = startup(cold_dir)
        print(f"First run on a machine (empty numba cache): {cold[0]:.2f} s; it said {cold[2]}.")
    print(f"load average at the end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
