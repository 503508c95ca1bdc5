"""Training time and peak memory on every kind of text: bpe_studio against Hugging Face, and
beside them rustbpe and ffbpe.

What it does: trains bpe_studio (``train_bpe``) and Hugging Face ``tokenizers`` (BpeTrainer,
``ByteLevel(add_prefix_space=False, use_regex=True)``, i.e. the same GPT-2 regex, special token
<|endoftext|>, same vocab size, ``show_progress=False``) on each corpus below, each run in a
fresh child process, alternating, and prints a markdown table of median wall time and peak
memory (PSS of the child and its worker processes, sampled every 20 ms). All use every core of
the machine. With them, when installed (``pip install rustbpe ffbpe``, not project
dependencies), rustbpe and ffbpe, trained as ``peers.train_rustbpe`` / ``peers.train_ffbpe``
say: ffbpe does the same job (its merges equal ours on ``corpus.en``; its records are cut
after a line break in a file with no special token, see ``peers``); rustbpe has no special
tokens (it gets the documents between them and one id less) and breaks ties its own way.
Corpora (built by ``train_corpora.py`` in a cache dir outside the repo):
- ``cs336/corpus.en`` at 500 (start-up counts; target <= 1.5x),
- the first 20 MB of ``english_books.txt`` at 10,000 (target <= 0.9x),
- the 50 MB mixed corpus at 10,000 and 32,000 (target <= 1.0x, memory <= HF's),
- ``chinese.txt`` at 32,000 (target <= 1.0x), ``code.txt`` and ``mixed_web.txt`` at 32,000,
- with ``--scale``: the 200 MB and ~1 GB varied corpora at 32,000 (one run each).
Then pre-tokenization against its limit: for each corpus, our pre-tokenizing speed (MB/s, from
the start of ``train_bpe`` to the last progress call) beside ``cores x`` the speed of one bare
``regex.findall`` of GPT-2's pattern over the same text's first 20 MB in one process.
Also one cold run on ``corpus.en`` with an empty numba cache (the first run after install).
What it leaves out: saving the tokenizers, interpreter start-up (timed from the call).
CPU seconds (all threads and worker processes) are reported beside wall time: on a shared
machine they move less with other load than wall time does.
Run: ``python benchmarks/bench_train_mixed.py [--reps N] [--scale] [--only NAME] [--no-peers]
[--no-cold]``.
"""

from __future__ import annotations

import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import train_corpora
from child import cpu_seconds, run_json_child

REPO = Path(__file__).resolve().parent.parent
SPECIAL = "<|endoftext|>"


# ------------------------------------------------------------------------- in the child
def _train_ours(path: str, vocab_size: int, engine: str = "auto") -> dict:
    from bpe_studio.core.train.trainer import train_bpe

    marks: dict[str, float] = {}

    def progress(done: int, total: int) -> None:
        if done >= total and "pretok" not in marks:
            marks["pretok"] = time.perf_counter()

    c0, t0 = cpu_seconds(), time.perf_counter()
    vocab, _ = train_bpe(path, vocab_size, [SPECIAL], progress=progress, engine=engine)
    t1 = time.perf_counter()
    pre = marks.get("pretok", t0) - t0
    from bpe_studio.core.train import trainer

    used = "compiled" if "bpe_studio.core.train.merge_kernel" in sys.modules else "python"
    positions_from = trainer.COMPILED_FROM
    return {
        "seconds": t1 - t0,
        "cpu": cpu_seconds() - c0,
        "pretok": pre,
        "vocab": len(vocab),
        "engine": f"{used} (from {positions_from:,})",
    }


def bare_findall_mb_s(path: Path, nbytes: int = 20 * 10**6) -> float:
    """MB/s of one ``regex.findall`` of GPT-2's pattern in this process over the first
    ``nbytes`` of ``path`` (best of 2), the per-core limit of pre-tokenizing."""
    import regex

    from bpe_studio.core.pretokenization.names import pattern_regex

    with open(path, "rb") as f:
        data = f.read(nbytes)
    text = data[: data.rfind(b"\n") + 1].decode("utf-8")
    pat = regex.compile(pattern_regex("gpt2"))
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        pat.findall(text)
        best = min(best, time.perf_counter() - t0)
    return len(text.encode("utf-8")) / 1e6 / best


def _train_peer(name: str, path: str, vocab_size: int) -> dict:
    import peers

    train = {"rustbpe": peers.train_rustbpe, "ffbpe": peers.train_ffbpe}[name]
    # The peer's module imported untimed, as ours is (its import was 47-62 ms of ffbpe's
    # 0.68 s at 20 MB).
    importlib.import_module(name)
    c0, t0 = cpu_seconds(), time.perf_counter()
    size = train(Path(path), vocab_size)
    return {"seconds": time.perf_counter() - t0, "cpu": cpu_seconds() - c0, "vocab": size}


def _train_hf(path: str, vocab_size: int) -> dict:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[SPECIAL],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    c0, t0 = cpu_seconds(), time.perf_counter()
    tok.train([path], trainer)
    t1 = time.perf_counter()
    return {"seconds": t1 - t0, "cpu": cpu_seconds() - c0, "vocab": tok.get_vocab_size()}


# ------------------------------------------------------------------------ in the parent
def run_child(impl: str, path: Path, vocab_size: int, env: dict | None = None) -> dict:
    """One training run of ``impl`` in a fresh child process (``child.run_json_child``): its
    timings, ``peak_mib`` and ``process_s``."""
    argv = [sys.executable, __file__, "--child", impl, str(path), str(vocab_size)]
    return run_json_child(argv, env)


PRETOK: dict[str, tuple[Path, float]] = {}


def available_peers() -> list[str]:
    """rustbpe and ffbpe, those that import."""
    import importlib.util

    return [name for name in ("rustbpe", "ffbpe") if importlib.util.find_spec(name)]


IMPLS = ["ours", "hf"]


def compare(name: str, path: Path, vocab_size: int, reps: int, target: float) -> list[str]:
    runs: dict[str, list[dict]] = {impl: [] for impl in IMPLS}
    for rep in range(reps):
        for impl in IMPLS:
            r = run_child(impl, path, vocab_size)
            runs[impl].append(r)
            print(f"  {name} rep {rep + 1}/{reps} {impl}: {r['seconds']:.2f} s, "
                  f"CPU {r.get('cpu', 0):.2f} s, {r['peak_mib']:.0f} MiB",
                  file=sys.stderr, flush=True)  # fmt: skip
    t = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
    m = {k: statistics.median(r["peak_mib"] for r in v) for k, v in runs.items()}
    pre = statistics.median(r["pretok"] for r in runs["ours"])
    PRETOK[name] = (path, pre)
    print(f"  {name}: engine {runs['ours'][0]['engine']}", file=sys.stderr, flush=True)
    cpu = {k: statistics.median(r["cpu"] for r in v) for k, v in runs.items()}
    ratio = t["ours"] / t["hf"]
    ok = ratio <= target and m["ours"] <= m["hf"]
    return [
        name, f"{vocab_size:,}", str(reps),
        f"{t['ours']:.2f} s ({pre:.2f} + {t['ours'] - pre:.2f})", f"{t['hf']:.2f} s",
        f"{ratio:.2f}x (<= {target:g}x)", f"{cpu['ours']:.1f} / {cpu['hf']:.1f} s",
        f"{m['ours']:.0f} MiB", f"{m['hf']:.0f} MiB",
        *(f"{t[p]:.2f} s, {m[p]:.0f} MiB" for p in IMPLS[2:]),
        "ok" if ok else "MISS",
    ]  # fmt: skip


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        impl, path, vocab_size = argv[1], argv[2], int(argv[3])
        if impl.startswith("ours"):  # "ours", or "ours-python" / "ours-compiled" (forced)
            result = _train_ours(path, vocab_size, impl.partition("-")[2] or "auto")
        elif impl == "hf":
            result = _train_hf(path, vocab_size)
        else:
            result = _train_peer(impl, path, vocab_size)
        print(json.dumps(result))
        return 0
    if "--help" in argv or "-h" in argv:
        print(__doc__)
        return 0
    reps = int(argv[argv.index("--reps") + 1]) if "--reps" in argv else 3
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    if "--no-peers" not in argv:
        IMPLS[2:] = available_peers()
    corpora = train_corpora.corpora_dir()
    books20 = train_corpora.english_books_20mb()
    mixed = train_corpora.mixed()
    cases = [
        ("corpus.en", corpora / "cs336" / "corpus.en", 500, max(reps, 5), 1.5),
        ("english books 20 MB", books20, 10_000, reps, 0.9),
        ("mixed 50 MB", mixed, 10_000, reps, 1.0),
        ("mixed 50 MB", mixed, 32_000, reps, 1.0),
        ("chinese.txt", corpora / "chinese.txt", 32_000, reps, 1.0),
        ("code.txt", corpora / "code.txt", 32_000, reps, 1.0),
        ("mixed_web.txt", corpora / "mixed_web.txt", 32_000, reps, 1.0),
    ]
    if "--scale" in argv:
        scaled_200 = train_corpora.scaled(200 * train_corpora.MB)
        cases.append(("scaled 200 MB", scaled_200, 32_000, 1, 1.0))
        cases.append(("scaled 1 GB", train_corpora.scaled(), 32_000, 1, 1.0))
    if only:
        cases = [c for c in cases if only in c[0]]
    rows = [compare(*case) for case in cases]
    cold = None
    if "--no-cold" not in argv:
        with tempfile.TemporaryDirectory() as cold_dir:
            small = corpora / "cs336" / "corpus.en"
            cold = run_child("ours", small, 500, {"NUMBA_CACHE_DIR": cold_dir})
    header = ["corpus", "vocab", "runs", "bpe_studio (pre-tokenize + merge)", "HF tokenizers",
              "time ratio (target)", "CPU ours / HF", "peak ours", "peak HF",
              *IMPLS[2:], "verdict"]  # fmt: skip
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    cores = os.cpu_count() or 1
    print(f"\nPre-tokenization against its limit ({cores} cores x one bare regex.findall):")
    print("| corpus | ours MB/s | limit MB/s | ours / limit |")
    print("|---|---:|---:|---:|")
    for name, (path, pre) in PRETOK.items():
        ours = path.stat().st_size / 1e6 / pre if pre > 0 else float("nan")
        limit = cores * bare_findall_mb_s(path)
        print(f"| {name} | {ours:.1f} | {limit:.1f} | {ours / limit:.2f} |")
    print(f"load average at the end: {os.getloadavg()}")
    if cold is None:
        return 0
    print(f"\nCold start (empty numba cache; corpus.en is below the threshold, nothing "
          f"compiles): corpus.en at 500 took "
          f"{cold['seconds']:.2f} s, {cold['peak_mib']:.0f} MiB.")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
