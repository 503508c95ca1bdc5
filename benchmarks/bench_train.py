"""Training speed and memory: bpe_studio ``train_bpe`` against Hugging Face ``tokenizers``.

Measures wall time of training alone (no interpreter start-up, no saving), in a fresh child
process per repetition, alternating ours and Hugging Face:
1. ``cs336/corpus.en`` (133 kB), vocab 500, special token <|endoftext|>; median of 7 runs each;
   target: ours <= 1.5 x Hugging Face.
2. the first 20 MB of ``english_books.txt`` (cut at a line boundary, written to a temp file),
   vocab 10,000, <|endoftext|>; median of 3 runs each; target: ours <= 2 x Hugging Face.

Hugging Face gets ``BpeTrainer(vocab_size, special_tokens=[<|endoftext|>], initial_alphabet=
ByteLevel.alphabet())`` and a pre-tokenizer splitting on the same GPT-2 regex followed by
``ByteLevel(use_regex=False)``, and may use every core (its Rayon pool); ``train_bpe`` uses its
default ``workers`` (every core) for pre-tokenization. Run: ``python benchmarks/bench_train.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import child  # noqa: E402
import corpora  # noqa: E402
import results  # noqa: E402
from corpora import Skip  # noqa: E402
from results import MemRow, Row, Section  # noqa: E402

LARGE_BYTES = 20 * corpora.MB


def _compare(
    item: str, what: str, path: Path, vocab_size: int, reps: int, target: float, log=print
) -> Section:
    runs: dict[str, list[child.ChildRun]] = {"ours": [], "hf": []}
    for rep in range(reps):
        for impl in ("ours", "hf"):
            run = child.run_workload(f"train_{impl}", path=str(path), vocab_size=vocab_size)
            runs[impl].append(run)
            log(f"  [{item}] rep {rep + 1}/{reps} {impl:4s} {run.result['seconds']:.3f} s")
    t_ours = results.median([r.result["seconds"] for r in runs["ours"]])
    t_hf = results.median([r.result["seconds"] for r in runs["hf"]])
    ratio = t_ours / t_hf
    sec = Section()
    sec.rows.append(
        Row(
            item=item,
            what=what + f" (median of {reps})",
            ours=f"{t_ours:.3f} s",
            peer=f"HF tokenizers {t_hf:.3f} s",
            ratio=f"{ratio:.2f}x time",
            target=f"<= {target:g}x",
            status=results.verdict(ratio, target, higher_is_better=False),
        )
    )
    sec.mem += [MemRow(what, "bpe_studio", runs["ours"]), MemRow(what, "HF tokenizers", runs["hf"])]
    pre = results.median([r.result["pretokenize_seconds"] for r in runs["ours"]])
    cpu_ours = results.median([r.result["cpu_seconds"] for r in runs["ours"]])
    cpu_hf = results.median([r.result["cpu_seconds"] for r in runs["hf"]])
    sizes = {r.result["vocab_size"] for rs in runs.values() for r in rs}
    sec.notes.append(
        f"[{item}] bpe_studio phases (median): pre-tokenize {pre:.3f} s, "
        f"merges {t_ours - pre:.3f} s; CPU time ours {cpu_ours:.2f} s vs HF {cpu_hf:.2f} s "
        f"(CPU/wall: ours {cpu_ours / t_ours:.2f}, HF {cpu_hf / t_hf:.2f}); "
        f"final vocab sizes {sorted(sizes)}"
    )
    bg = results.background_note(item, runs["ours"] + runs["hf"])
    if bg:
        sec.notes.append(bg)
    return sec


def small(reps: int = 7, log=print) -> Section:
    what = "1. train `cs336/corpus.en`, vocab 500"
    try:
        corpora.require("tokenizers")
        (path,) = corpora.corpus("cs336/corpus.en")
    except Skip as e:
        return Section(rows=[Row("1", what, "-", "-", "-", "<= 1.5x", f"SKIP: {e}")])
    return _compare("1", what, path, 500, reps, 1.5, log)


def large(reps: int = 3, log=print) -> Section:
    what = "2. train first 20 MB of `english_books.txt`, vocab 10,000"
    try:
        corpora.require("tokenizers")
        (src,) = corpora.corpus("english_books.txt")
        data = corpora.line_slice(src, 0, LARGE_BYTES)
    except Skip as e:
        return Section(rows=[Row("2", what, "-", "-", "-", "<= 2x", f"SKIP: {e}")])
    with corpora.scratch_dir() as tmp:
        path = corpora.write_temp(data, "english_books_20MB.txt", Path(tmp))
        sec = _compare("2", what, path, 10_000, reps, 2.0, log)
    sec.notes.append(f"[2] training file: {len(data):,} bytes (first line-aligned 20 MB)")
    return sec


def run(log=print) -> Section:
    sec = small(log=log)
    sec.extend(large(log=log))
    return sec


def main() -> int:
    sec = run()
    print()
    print(results.section_markdown(sec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
