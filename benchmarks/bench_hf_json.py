"""``tokenizer.json`` files shaped like the open models' (GPT-2, Llama 3, Qwen2/Qwen3,
DeepSeek-V3, StarCoder, gpt-oss, BLOOM, tiktoken's cl100k pattern in a file): how long
bpe_studio takes to load them and how fast it encodes English, Chinese, code and web text,
against Hugging Face ``tokenizers`` and ``fastokens`` (a Rust encoder of such files) on the
same files.

Files: the shapes of ``tests/core/hf_shapes.py`` (the same components the tests prove
exact; gpt-oss's: o200k's pattern in one Split; ours for a custom regex, as ``train
--pattern REGEX`` writes it: a Split that keeps only its matches), each trained by
``tokenizers``' BpeTrainer to 32,000 tokens on 1 MB of each corpus (GPT-2's: its own
vocabulary and merges). Text: 1 MB of
each of ``english_books.txt``, ``chinese.txt``, ``code.txt`` and ``mixed_web.txt`` from byte
5,000,000 (cut at line breaks). Every result's ids must equal ``tokenizers``' (a mismatch
marks the row FAIL and the run exits non-zero); fastokens' are checked too.

H1. Loading: ``Tokenizer.from_hf(path)`` against ``tokenizers.Tokenizer.from_file(path)``,
    median of the repetitions, in this process.
H2. ``encode`` of the text, cold: a freshly loaded tokenizer's first call (tables built on
    first use included; the compiled encoder's kernels are loaded once, untimed, before the
    first measurement, as the peers' compiled code is by their import), against
    ``tokenizers``' and ``fastokens``' ``encode(text, add_special_tokens=False)`` (one text:
    one thread), medians, the three alternating; the ratios are ours / theirs in MB/s, with
    the ratio of CPU times beside them (the machine is shared). Targets (issue #34), for the
    files that take the compiled path (Llama 3, Qwen2/3, DeepSeek-V3, gpt-oss; GPT-2 and
    StarCoder too): >= 1.0 x tokenizers and >= 0.3 x fastokens. BLOOM's, the verbatim
    cl100k pattern and the custom regex have no compiled scanner: their rows are figures
    to watch.

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
HF_TARGET = 1.0
FASTOKENS_TARGET = 0.3
# The shapes whose files take the compiled path, with targets (the others: figures to watch).
TARGETED = {"gpt2", "llama3", "qwen2", "deepseek_v3", "starcoder", "gpt_oss"}


# A custom regex as ``bpe-studio train --pattern REGEX`` writes it: a Split that keeps only
# its matches, then ByteLevel without its regex.
CUSTOM_REGEX = r"\p{L}+|\p{N}+|[^\s\p{L}\p{N}]+|\s+"


def _shapes():
    sys.path.insert(0, str(REPO_ROOT / "tests" / "core"))
    import hf_shapes
    from tokenizers import Regex
    from tokenizers import pre_tokenizers as pt

    ours = pt.Sequence(
        [
            pt.Split(Regex(CUSTOM_REGEX), "removed", invert=True),
            pt.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    return {**hf_shapes.FAMILIES, "gpt_oss": hf_shapes.GPT_OSS, "custom_regex": (None, ours)}


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
    cpu, start = time.process_time(), time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start, time.process_time() - cpu


def _family(name: str, path: Path, texts: dict[str, str], reps: int, log) -> list[Row]:
    import fastokens
    import tokenizers

    from bpe_studio.core import Tokenizer

    loads = {"ours": [], "hf": []}
    for _ in range(reps):
        loads["ours"].append(_timed(Tokenizer.from_hf, path)[1])
        loads["hf"].append(_timed(tokenizers.Tokenizer.from_file, str(path))[1])
    ours_load, hf_load = results.median(loads["ours"]), results.median(loads["hf"])
    probe = Tokenizer.from_hf(path)
    kind = "pipeline" if probe.hf_pipeline is not None else "one pattern"
    path_taken = "compiled" if probe._encoder.scanner is not None else "Python path"
    log(f"  [H1] {name}: load ours {ours_load:.2f} s, tokenizers {hf_load:.2f} s ({kind}, "
        f"{path_taken})")  # fmt: skip
    rows = [
        Row("H1", f"H1. load {name} tokenizer.json ({kind}; {path_taken})", f"{ours_load:.2f} s",
            f"tokenizers {hf_load:.2f} s", f"{ours_load / hf_load:.1f}x time", "-", "N/A")
    ]  # fmt: skip
    encoders = {
        "ours": lambda: Tokenizer.from_hf(path).encode,
        "tokenizers": lambda: _ids_of(tokenizers.Tokenizer.from_file(str(path))),
        "fastokens": lambda: _ids_of(fastokens.Tokenizer.from_file(str(path))),
    }
    for label, text in texts.items():
        mb = len(text.encode("utf-8")) / corpora.MB
        rates: dict[str, list[float]] = {k: [] for k in encoders}
        cpu: dict[str, list[float]] = {k: [] for k in encoders}
        ids: dict[str, list[int]] = {}
        for _ in range(reps):
            for impl, fresh in encoders.items():
                encode = fresh()  # loading untimed
                got, seconds, cpu_seconds = _timed(encode, text)
                rates[impl].append(mb / seconds)
                cpu[impl].append(cpu_seconds)
                ids.setdefault(impl, got)
        med = {k: results.median(v) for k, v in rates.items()}
        cpu_med = {k: results.median(v) for k, v in cpu.items()}
        same = ids["ours"] == ids["tokenizers"]
        fast_same = ids["fastokens"] == ids["tokenizers"]
        log(f"  [H2] {name} {label}: ours {med['ours']:.2f} MB/s, tokenizers "
            f"{med['tokenizers']:.2f}, fastokens {med['fastokens']:.2f}")  # fmt: skip
        for peer, target in (("tokenizers", HF_TARGET), ("fastokens", FASTOKENS_TARGET)):
            ratio = med["ours"] / med[peer]
            cpu_ratio = cpu_med[peer] / cpu_med["ours"]
            status = "N/A"
            if not same:
                status = "FAIL (ids differ from tokenizers')"
            elif name in TARGETED:
                status = results.verdict(ratio, target, higher_is_better=True)
            note = "" if peer == "tokenizers" or fast_same else " (its ids differ)"
            rows.append(
                Row("H2", f"H2. {name} encode 1 MB {label}, cold, vs {peer}",
                    f"{med['ours']:.2f} MB/s", f"{peer} {med[peer]:.2f} MB/s{note}",
                    f"{ratio:.2f}x (CPU time: {cpu_ratio:.2f}x)",
                    f">= {target}x" if name in TARGETED else "-", status)
            )  # fmt: skip
    return rows


def _ids_of(tokenizer):
    """The ids function of a ``tokenizers`` or ``fastokens`` tokenizer (no template)."""
    return lambda text: tokenizer.encode(text, add_special_tokens=False).ids


def run(log=print, reps: int = REPS) -> Section:
    try:
        corpora.require("tokenizers", "fastokens")
        paths = dict(zip(TEXTS, corpora.corpus(*TEXTS.values())))
        texts = {
            k: corpora.line_slice(p, SLICE_AT, SLICE_BYTES).decode("utf-8")
            for k, p in paths.items()
        }
        train = [corpora.line_slice(p, 0, TRAIN_BYTES).decode("utf-8") for p in paths.values()]
    except Skip as e:
        return Section(rows=[Row("H1", "H1-H2. tokenizer.json files", "-", "-", "-", "-",
                                 f"SKIP: {e}")])  # fmt: skip
    from bpe_studio.core.encode.merging import kernel_start

    sec = Section()
    kernels_start = time.perf_counter()
    if not kernel_start.prepare(log):
        why = f"SKIP: no compiled encoder ({kernel_start.failure()})"
        return Section(rows=[Row("H1", "H1-H2. tokenizer.json files", "-", "-", "-", "-", why)])
    kernels_seconds = time.perf_counter() - kernels_start
    with corpora.scratch_dir() as tmp_name:
        folder = Path(tmp_name)
        for name, shape in _shapes().items():
            log(f"building {name}")
            path = _build(name, shape, train, folder)
            sec.rows += _family(name, path, texts, reps, log)
    sec.notes.append(
        f"[H1-H2] 1 MB slices from byte 5,000,000 of each corpus; {VOCAB:,}-token files trained "
        f"by tokenizers on 1 MB of each corpus (GPT-2: its own files); medians of {reps} "
        "repetitions in one process, ours, tokenizers and fastokens alternating; a shared "
        f"machine. The compiled encoder's kernels were loaded once first ({kernels_seconds:.2f}"
        " s, untimed)."
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
