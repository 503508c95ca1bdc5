"""Encoding a file in parallel: the hand-written fork crew against a standard process pool.

What it measures: the wall time of ``encode_file(build, path, out, workers=2)`` (what
``bpe-studio encode`` runs: the tokenizer is built from its source inside the call) in a fresh
child process per run, median of ``--reps``, for two drivers:

- crew: ``encode_file`` as it was at ``--crew-rev`` (the hand-written crew of forked children,
  an ``fcntl`` counter and a pipe protocol; the caller encodes chunks too), run from a
  ``git archive`` of that revision;
- pool: ``encode_file`` of this checkout (a ``ProcessPoolExecutor`` on the fork context whose
  initializer builds the tokenizer in each worker).

Texts: line-aligned slices of ``--mb`` MB of english_books, chinese, code and mixed_web (the
last two whole if shorter). Tokenizers: o200k_base (the preset) and a 32k tokenizer trained on a
mix of the four corpora (trained once, kept in ``$BPE_STUDIO_BENCH_CACHE`` or
``~/.cache/bpe-studio-bench``). Both drivers' ids must be equal, or the run fails.
The crew was to be kept only if it beat the pool by more than 10% of wall time; it did not
(``benchmarks/RESULTS.md``), and was removed after ``e6f2f0c``, the default ``--crew-rev``.

Run: ``python benchmarks/bench_encode_drivers.py [--reps 3] [--mb 8] [--crew-rev e6f2f0c]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402

CORPORA = ("english_books.txt", "chinese.txt", "code.txt", "mixed_web.txt")
TRAINED_VOCAB = 32_000
SPECIAL = "<|endoftext|>"

# One run in a fresh process: build (inside the call, as the command line does), encode, and
# report the wall time of the whole call and a digest of the ids.
RUN = """
import hashlib, json, sys, time
import numpy as np
from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.encode_file import encode_file
source, path, out = sys.argv[1:4]
def build():
    return Tokenizer.preset(source) if "/" not in source else Tokenizer.load(source)
start = time.perf_counter()
encode_file(build, path, out, workers=2)
wall = time.perf_counter() - start
digest = hashlib.sha256(np.load(out).astype(np.uint32).tobytes()).hexdigest()
print(json.dumps({"wall": wall, "digest": digest}))
"""


def cache_dir() -> Path:
    d = Path(os.environ.get("BPE_STUDIO_BENCH_CACHE", Path.home() / ".cache/bpe-studio-bench"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def trained_tokenizer() -> Path:
    """A 32k tokenizer trained on 3 MB of each corpus (GPT-2 files), trained once."""
    from bpe_studio.core import Tokenizer, train_bpe

    folder = cache_dir() / f"drivers_trained_{TRAINED_VOCAB}"
    if (folder / "merges.txt").exists():
        return folder
    with tempfile.TemporaryDirectory() as tmp:
        mix = Path(tmp) / "mix.txt"
        with open(mix, "wb") as f:
            for path in corpora.corpus(*CORPORA):
                f.write(corpora.line_slice(path, 0, 3 * corpora.MB))
                f.write(b"\n")
        vocab, merges = train_bpe(mix, TRAINED_VOCAB, [SPECIAL])
    Tokenizer(vocab, merges, [SPECIAL]).save(folder)
    return folder


def revision_tree(rev: str, into: Path) -> Path:
    """The repository at ``rev``, unpacked into ``into``."""
    data = subprocess.run(
        ["git", "-C", str(corpora.REPO_ROOT), "archive", rev],
        check=True,
        capture_output=True,
    ).stdout
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        with tarfile.open(fileobj=f) as tar:
            tar.extractall(into, filter="data")
    return into


def run_once(code_root: Path, source: str, text: Path, out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code_root))
    proc = subprocess.run(
        [sys.executable, "-c", RUN, source, str(text), str(out)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{code_root} {source} {text.name}: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mb", type=int, default=8, help="MB of each corpus")
    ap.add_argument("--crew-rev", default="e6f2f0c", help="a revision that has the crew")
    args = ap.parse_args()
    try:
        paths = corpora.corpus(*CORPORA)
    except corpora.Skip as e:
        print(f"SKIP: {e}")
        return 0
    tokenizers = {"o200k_base": "o200k_base", "trained 32k": str(trained_tokenizer())}
    rows = []
    failed = False
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        crew_root = revision_tree(args.crew_rev, tmp / "crew")
        roots = {"crew": crew_root, "pool": corpora.REPO_ROOT}
        texts = {
            p.stem: corpora.write_temp(corpora.line_slice(p, 0, args.mb * corpora.MB), p.name, tmp)
            for p in paths
        }
        for tok_name, source in tokenizers.items():
            for text_name, text in texts.items():
                walls: dict[str, list[float]] = {"crew": [], "pool": []}
                digests = set()
                for _ in range(args.reps):
                    # Alternating drivers: a change in the machine's load hits both alike.
                    for driver, root in roots.items():
                        got = run_once(root, source, text, tmp / "ids.npy")
                        walls[driver].append(got["wall"])
                        digests.add(got["digest"])
                crew, pool = (statistics.median(walls[d]) for d in ("crew", "pool"))
                same = len(digests) == 1
                failed |= not same
                mb = text.stat().st_size / corpora.MB
                rows.append((tok_name, text_name, mb, crew, pool, same))
                print(
                    f"{tok_name:12} {text_name:14} {mb:5.1f} MB  crew {crew:6.2f} s  "
                    f"pool {pool:6.2f} s  pool/crew {pool / crew:5.2f}  "
                    f"{'ids equal' if same else 'IDS DIFFER'}",
                    flush=True,
                )
    print()
    print("| tokenizer | text | MB | crew s | pool s | pool / crew |")
    print("|---|---|---|---|---|---|")
    for tok_name, text_name, mb, crew, pool, _ in rows:
        cells = [tok_name, text_name, f"{mb:.1f}", f"{crew:.2f}", f"{pool:.2f}"]
        print("| " + " | ".join([*cells, f"{pool / crew:.2f}"]) + " |")
    ratios = [pool / crew for *_, crew, pool, _ in rows]
    total = sum(r[4] for r in rows) / sum(r[3] for r in rows)
    print(
        f"\npool / crew wall time: median {statistics.median(ratios):.2f}, geometric mean "
        f"{statistics.geometric_mean(ratios):.2f}, all runs' sum {total:.2f} "
        "(the crew is kept only if the pool takes more than 1.10 times as long)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
