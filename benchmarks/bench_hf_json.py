"""``tokenizer.json`` files shaped like the open models' (GPT-2, Llama 3, Qwen2, DeepSeek-V3,
StarCoder, BLOOM, tiktoken's cl100k pattern in a file): how long bpe_studio takes to load them
and how fast it encodes English, Chinese, code and web text, against Hugging Face
``tokenizers`` on the same files.

Files: the shapes of ``tests/core/hf_shapes.py`` (the same components the tests prove
exact), each trained by ``tokenizers``' BpeTrainer to 32,000 tokens on 1 MB of each corpus
(GPT-2's: its own vocabulary and merges). Text: 1 MB of each of ``english_books.txt``,
``chinese.txt``, ``code.txt`` and ``mixed_web.txt`` from byte 5,000,000 (cut at line breaks).
Every result's ids must equal ``tokenizers``' (a mismatch marks the row FAIL and the run
exits non-zero).

H1. Loading: ``Tokenizer.from_hf(path)`` against ``tokenizers.Tokenizer.from_file(path)``,
    median of the repetitions, in this process.
H2. ``encode`` of the text, cold: a freshly loaded tokenizer's first call (tables built on
    first use included), against ``tokenizers``' ``encode(text, add_special_tokens=False)``
    (one text: one thread), medians; the ratio is ours / theirs in MB/s. No target: these
    are figures to watch (the pipeline files run the normalizers and pre-tokenizer steps in
    Python).

Run: ``python benchmarks/bench_hf_json.py [--reps N]``. The machine is shared: only same-run
ratios mean anything.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
import results  # noqa: E402
from bench_encode_presets import SLICE_AT, TEXTS  # noqa: E402  (the same texts)
from corpora import REPO_ROOT, Skip  # noqa: E402
from results import Row, Section  # noqa: E402

SLICE_BYTES = 1 * corpora.MB
TRAIN_BYTES = 1 * corpora.MB
VOCAB = 32_000
REPS = 3


def _shapes():
    sys.path.insert(0, str(REPO_ROOT / "tests" / "core"))
    import hf_shapes

    return hf_shapes.FAMILIES


def _build(name: str, shape, train: list[str], folder: Path) -> Path:
    import tokenizers
    from tokenizers import decoders, models, pre_tokenizers, trainers

    path = folder / f"{name}.json"
    if name == "gpt2":
        fixtures = REPO_ROOT / "tests" / "fixtures"
        tok = tokenizers.Tokenizer(
            models.BPE.from_file(
                str(fixtures / "gpt2_vocab.json"), str(fixtures / "gpt2_merges.txt")
            )
        )
        tok.add_special_tokens(["<|endoftext|>"])
    else:
        tok = tokenizers.Tokenizer(models.BPE())
        trainer = trainers.BpeTrainer(
            vocab_size=VOCAB,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            special_tokens=["<|endoftext|>"],
            show_progress=False,
        )
        normalizer, pre = shape
        if normalizer is not None:
            tok.normalizer = normalizer
        tok.pre_tokenizer = pre
        tok.train_from_iterator(train, trainer)
    if name == "gpt2":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.save(str(path))
    return path


def _timed(fn, *args, **kwargs):
    gc.collect()
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def _family(name: str, path: Path, texts: dict[str, str], reps: int, log) -> list[Row]:
    import tokenizers

    from bpe_studio.core import Tokenizer

    loads = {"ours": [], "hf": []}
    for _ in range(reps):
        loads["ours"].append(_timed(Tokenizer.from_hf, path)[1])
        loads["hf"].append(_timed(tokenizers.Tokenizer.from_file, str(path))[1])
    ours_load, hf_load = results.median(loads["ours"]), results.median(loads["hf"])
    kind = "pipeline" if Tokenizer.from_hf(path)._pipeline is not None else "one pattern"
    log(f"  [H1] {name}: load ours {ours_load:.2f} s, tokenizers {hf_load:.2f} s ({kind})")
    rows = [
        Row("H1", f"H1. load {name} tokenizer.json ({kind})", f"{ours_load:.2f} s",
            f"tokenizers {hf_load:.2f} s", f"{ours_load / hf_load:.1f}x time", "-", "N/A")
    ]  # fmt: skip
    for label, text in texts.items():
        mb = len(text.encode("utf-8")) / corpora.MB
        rates = {"ours": [], "hf": []}
        same = True
        for _ in range(reps):
            ours = Tokenizer.from_hf(path)
            ids, seconds = _timed(ours.encode, text)
            rates["ours"].append(mb / seconds)
            hf = tokenizers.Tokenizer.from_file(str(path))
            enc, seconds = _timed(hf.encode, text, add_special_tokens=False)
            rates["hf"].append(mb / seconds)
            same &= ids == enc.ids
        ours_rate, hf_rate = results.median(rates["ours"]), results.median(rates["hf"])
        log(f"  [H2] {name} {label}: ours {ours_rate:.2f} MB/s, tokenizers {hf_rate:.2f} MB/s")
        rows.append(
            Row("H2", f"H2. {name} encode 1 MB {label}, cold", f"{ours_rate:.2f} MB/s",
                f"tokenizers {hf_rate:.2f} MB/s", f"{ours_rate / hf_rate:.2f}x", "-",
                "N/A" if same else "FAIL (ids differ from tokenizers')")
        )  # fmt: skip
    return rows


def run(log=print, reps: int = REPS) -> Section:
    try:
        corpora.require("tokenizers")
        paths = dict(zip(TEXTS, corpora.corpus(*TEXTS.values())))
        texts = {
            k: corpora.line_slice(p, SLICE_AT, SLICE_BYTES).decode("utf-8")
            for k, p in paths.items()
        }
        train = [corpora.line_slice(p, 0, TRAIN_BYTES).decode("utf-8") for p in paths.values()]
    except Skip as e:
        return Section(rows=[Row("H1", "H1-H2. tokenizer.json files", "-", "-", "-", "-",
                                 f"SKIP: {e}")])  # fmt: skip
    sec = Section()
    with corpora.scratch_dir() as tmp_name:
        folder = Path(tmp_name)
        for name, shape in _shapes().items():
            log(f"building {name}")
            path = _build(name, shape, train, folder)
            sec.rows += _family(name, path, texts, reps, log)
    sec.notes.append(
        f"[H1-H2] 1 MB slices from byte 5,000,000 of each corpus; {VOCAB:,}-token files trained "
        f"by tokenizers on 1 MB of each corpus (GPT-2: its own files); medians of {reps} "
        "repetitions in one process, ours and tokenizers alternating; a shared machine."
    )
    return sec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=REPS, help="repetitions per figure")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    sec = run(log=log, reps=args.reps)
    print(results.section_markdown(sec))
    return 1 if any(r.status.startswith("FAIL") for r in sec.rows) else 0


if __name__ == "__main__":
    sys.exit(main())
