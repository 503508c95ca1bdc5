"""The vocabulary report (issue 36): the make-up of o200k, cold, and a corpus's usage against
encoding the same corpus with the same workers.

I1. Make-up of o200k, cold, in a new process each time: from the interpreter's first line to
    ``token_table(open_tokenizer("o200k_base")).makeup()`` returned (imports, loading the
    preset, categories, the Reach rule), against tiktoken building the same encoding in a new
    process (``tiktoken.Encoding`` from the shared ``o200k_base.tiktoken.gz``): what loading
    alone costs a peer. Target: ours <= 2 s.
I2. Usage of a 100 MB corpus (english_books, code, chinese and mixed_web, repeated to 100 MB,
    cut at line breaks) with o200k and ``--workers`` processes: ``corpus_usage`` (both passes:
    encoding and counting, then the scan for the unused tokens' bytes) against
    ``encode_file`` (the pool ``bpe-studio encode`` runs) writing the ids, each in a new
    process given the tokenizer built (and, for usage, its table: I1 is that), alternating;
    then the two commands end to end
    (``bpe-studio inspect o200k_base --corpus F --json`` against ``bpe-studio encode F
    --tokenizer o200k_base --out ids.npy``). Target: usage at the speed of encode (ratio of
    times <= 1.1).
I2b. The same usage without the scan (``scan=False``, ``--no-scan``: the counts, the used and
    unused tokens, those inside used ones; no across/absent split) against ``encode_file``
    again, alternating. No target of its own: it says what the scan costs.

Medians of ``--reps`` runs; the machine is shared, so only same-run ratios mean anything
(the load average is printed with them).

Run: ``BPE_STUDIO_CORPORA=/path/to/corpora python benchmarks/bench_inspect.py [--reps N]
[--workers K] [--mb 100]``.
"""

from __future__ import annotations

import argparse
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

MAKEUP = """
import time
start = time.perf_counter()
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain.vocabulary import token_table
makeup = token_table(open_tokenizer("o200k_base")).makeup()
assert makeup.tokens == 200_000
print(time.perf_counter() - start)
"""
TIKTOKEN = """
import time
start = time.perf_counter()
import tiktoken
from tiktoken.load import load_tiktoken_bpe
ranks = load_tiktoken_bpe({path!r})
enc = tiktoken.Encoding("o200k_base", pat_str={pattern!r}, mergeable_ranks=ranks,
                        special_tokens={{"<|endoftext|>": 199999, "<|endofprompt|>": 200018}})
enc.encode("warm")
print(time.perf_counter() - start)
"""


def _load() -> str:
    return os.popen("uptime").read().strip().split("load average:")[-1].strip()


def _child(code: str, *args: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(corpora.REPO_ROOT), OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def _wall(args: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(corpora.REPO_ROOT))
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bpe_studio", *args],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def _alternate(
    reps: int, ours: Callable[[], float], peer: Callable[[], float]
) -> tuple[float, float]:
    mine, theirs = [], []
    for _ in range(reps):
        mine.append(ours())
        theirs.append(peer())
    return statistics.median(mine), statistics.median(theirs)


def bench_makeup(reps: int) -> None:
    from bpe_studio.core.pretokenization.names import PATTERNS

    rank_file = corpora.REPO_ROOT / "resources" / "tokenizers" / "o200k_base.tiktoken.gz"
    import gzip

    with tempfile.TemporaryDirectory() as folder:
        plain = Path(folder) / "o200k_base.tiktoken"
        plain.write_bytes(gzip.decompress(rank_file.read_bytes()))
        peer = TIKTOKEN.format(path=str(plain), pattern=PATTERNS["o200k"])
        ours, theirs = _alternate(reps, lambda: _child(MAKEUP), lambda: _child(peer))
    print(
        f"I1 make-up of o200k, cold (median of {reps}): {ours:.2f} s; tiktoken loading the "
        f"same encoding {theirs:.2f} s; ratio {ours / theirs:.2f}x; target <= 2 s: "
        f"{'PASS' if ours <= 2.0 else 'FAIL'}  [load {_load()}]"
    )


def _corpus(folder: Path, mb: int) -> Path:
    names = ("english_books.txt", "code.txt", "chinese.txt", "mixed_web.txt")
    parts = [p.read_bytes() for p in corpora.corpus(*names)]
    path = folder / "corpus.txt"
    size, want = 0, mb * corpora.MB
    with open(path, "wb") as f:
        while size < want:
            for part in parts:
                piece = part[: want - size]
                piece = piece[: piece.rfind(b"\n") + 1] if len(piece) < len(part) else piece
                f.write(piece)
                size += len(piece)
                if size >= want or not piece:
                    size = want
                    break
    return path


USAGE = """
import sys, time
from bpe_studio.core.encode.encode_file import encode_file
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain.usage import corpus_usage
from bpe_studio.core.explain.vocabulary import token_table
mode, path, out, workers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
tok = open_tokenizer("o200k_base")
if mode in ("usage", "bare"):
    table = token_table(tok)
    start = time.perf_counter()
    corpus_usage(tok, path, table=table, workers=workers, scan=mode == "usage")
else:
    start = time.perf_counter()
    encode_file(tok, path, out, workers=workers)
print(time.perf_counter() - start)
"""


def bench_usage(reps: int, workers: int, mb: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bpe_studio_bench_") as folder:
        path = _corpus(Path(folder), mb)
        size = path.stat().st_size / corpora.MB
        out = Path(folder) / "ids.npy"

        def child(mode: str) -> float:
            # A new process each time, as the command runs: a pool left by the run before
            # would leave threads behind, and a process with threads does not fork.
            return _child(USAGE, mode, str(path), str(out), str(workers))

        ours, theirs = _alternate(reps, lambda: child("usage"), lambda: child("encode"))
        print(
            f"I2 usage of {size:.0f} MB, o200k, {workers} workers (median of {reps}): "
            f"corpus_usage {ours:.1f} s ({size / ours:.1f} MB/s); encode_file {theirs:.1f} s "
            f"({size / theirs:.1f} MB/s); ratio {ours / theirs:.2f}x time; target <= 1.1x: "
            f"{'PASS' if ours <= 1.1 * theirs else 'FAIL'}  [load {_load()}]"
        )
        bare, theirs = _alternate(reps, lambda: child("bare"), lambda: child("encode"))
        print(
            f"I2b the same without the scan (scan=False, --no-scan): corpus_usage {bare:.2f} s; "
            f"encode_file {theirs:.2f} s; ratio {bare / theirs:.2f}x time  [load {_load()}]"
        )
        w = str(workers)
        inspect = ["inspect", "o200k_base", "--corpus", str(path), "--workers", w, "--json"]
        encode_cmd = ["encode", str(path), "--tokenizer", "o200k_base", "--workers", w]
        encode_cmd += ["--out", str(out), "--force"]
        ours, theirs = _alternate(reps, lambda: _wall(inspect), lambda: _wall(encode_cmd))
        print(
            f"I2 end to end: bpe-studio inspect --corpus --json {ours:.1f} s; bpe-studio encode "
            f"{theirs:.1f} s; ratio {ours / theirs:.2f}x time  [load {_load()}]"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--only", choices=("makeup", "usage"), default=None)
    args = parser.parse_args()
    if args.only in (None, "makeup"):
        bench_makeup(max(args.reps, 5))
    if args.only in (None, "usage"):
        try:
            bench_usage(args.reps, args.workers, args.mb)
        except corpora.Skip as e:
            print(f"I2 SKIP: {e}")


if __name__ == "__main__":
    main()
