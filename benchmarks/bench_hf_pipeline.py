"""Why ``formats/hf/`` runs a ``tokenizer.json``'s normalizers and pre-tokenizers itself: our
pipeline against ``tokenizers``' own on the same components and text (docs/formats.md, "Why
our own pipeline").

Components: the shapes of ``tests/core/hf_shapes.py`` that the tests prove exact: GPT-2 and
Llama 3 (one pattern each, no normalizer: a file that comes down to one regex), Qwen2 (NFC,
then Llama 3's Split) and DeepSeek-V3 (three Splits), which take our pipeline. (Gemma 3's file
is not byte-level BPE: ``tokenizers`` runs it whole, as a ``ForeignTokenizer``, so nothing of
ours is compared there.) Text: 256 KB of each of ``english_books.txt``, ``chinese.txt``,
``code.txt`` and ``mixed_web.txt`` from byte 5,000,000 (cut at line breaks), and as much of
accented words of six languages with their accents decomposed (NFD). Files: trained
by ``tokenizers`` to 32,000 tokens on 1 MB of each corpus (``bench_hf_json``'s; GPT-2: its
own files).

P1. Pre-tokens of the text: ours (``HfPipeline.findall``, or the one pattern; the compiled
    scanners loaded first, as the app and the command line load them) against
    ``tokenizers``' ``normalizer.normalize_str`` then ``pre_tokenizer.pre_tokenize_str``
    (which gives each piece's offsets too, in the normalized text). The pieces must be the
    same (else the row says FAIL).
P2. Ours with each pre-token's characters in the *original* text (the stage's ``spans``,
    through the normalizers), against the same call of ``tokenizers`` (it has no call that
    maps pre-tokens back through the normalizer).
P3. The editor's spans, model included: ``Tokenizer.packed_spans`` (each token's characters in
    the original text, and whether it holds part of a character) against ``tokenizers``'
    ``encode(text).offsets``. The ids must be the same; the row counts the tokens whose
    characters differ.
P4. The same at step k (half the merges: what the editor shows while the timeline is moved):
    ours ``Tokenizer.truncated(k)`` then its spans, against a ``tokenizers`` tokenizer built
    from the file with its merges cut to k (``Tokenizer.from_str``), then ``encode``.

Each figure is the median of ``--reps`` runs in this process, ours and ``tokenizers``
alternating; the ratio is ``tokenizers``' time over ours (above 1: ours is faster).

    python benchmarks/bench_hf_pipeline.py [--reps 5] [--kb 256]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import unicodedata
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
from bench_encode_presets import SLICE_AT, TEXTS  # noqa: E402  (the same texts)
from corpora import REPO_ROOT  # noqa: E402

# Words of French, German, Spanish, Portuguese, Vietnamese and Swedish with their accents.
ACCENTED = [
    "café", "naïve", "résumé", "façade", "über", "Größe", "mañana", "São", "Paulo", "coração",
    "tiếng", "Việt", "người", "Ångström", "déjà", "vu", "élève", "crème", "brûlée", "Zürich",
]  # fmt: skip


def _shapes() -> dict[str, tuple[object, object]]:
    sys.path.insert(0, str(REPO_ROOT / "tests" / "core"))
    import hf_shapes

    return {k: hf_shapes.FAMILIES[k] for k in ("gpt2", "llama3", "qwen2", "deepseek_v3")}


def _timed(fn, *args):  # type: ignore[no-untyped-def]
    gc.collect()
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def _ours(shape):  # type: ignore[no-untyped-def]
    """Our pre-tokens and pre-token spans of a shape's components."""
    import hf_shapes

    from bpe_studio.core.formats.hf.components import read_components
    from bpe_studio.core.pretokenization.pretokenizer import pretokenizer

    parts = read_components(hf_shapes.components(*shape), "tokenizer.json", {})
    if parts.pipeline is not None and parts.pipeline.needed:
        stage = parts.pipeline.pretokenizer()
        label = "pipeline"
    else:
        stage = pretokenizer(parts.pattern)
        label = "one pattern"
    return stage.findall, stage.spans, label


def _theirs(shape):  # type: ignore[no-untyped-def]
    normalizer, pre = shape

    def pretokens(text: str) -> list[tuple[str, tuple[int, int]]]:
        if normalizer is not None:
            text = normalizer.normalize_str(text)
        return pre.pre_tokenize_str(text)

    return pretokens


def _as_text(pieces: list[tuple[str, tuple[int, int]]]) -> list[str]:
    import hf_shapes

    return [hf_shapes.unbyte(p) for p, _ in pieces]


def _cut(hf, k: int):  # type: ignore[no-untyped-def]
    """A ``tokenizers`` tokenizer with the first ``k`` merges of ``hf`` (its JSON edited)."""
    import tokenizers

    obj = json.loads(hf.to_str())
    obj["model"]["merges"] = obj["model"]["merges"][:k]
    return tokenizers.Tokenizer.from_str(json.dumps(obj))


def _spans_at(tok, k: int, text: str):  # type: ignore[no-untyped-def]
    return tok.truncated(k).packed_spans(text)


def _offsets_at(hf, k: int, text: str):  # type: ignore[no-untyped-def]
    return _cut(hf, k).encode(text, add_special_tokens=False)


def _differ(packed, enc, length: int) -> str:  # type: ignore[no-untyped-def]
    """How many tokens' characters differ, and how many characters of the text no token holds
    in ours and in ``tokenizers``' offsets."""
    import numpy as np

    ours = list(zip(packed[:, 1].tolist(), packed[:, 2].tolist()))
    theirs = [tuple(o) for o in enc.offsets]
    differ = sum(a != b for a, b in zip(ours, theirs))

    def uncovered(spans: list) -> int:  # type: ignore[type-arg]
        held = np.zeros(length + 1, dtype=np.int64)
        for a, b in spans:
            held[a] += 1
            held[b] -= 1
        return int(np.count_nonzero(np.cumsum(held)[:length] == 0))

    return (
        f"  {differ:,} of {len(theirs):,} spans differ; characters in no token: "
        f"ours {uncovered(ours):,}, tokenizers {uncovered(theirs):,}"
    )


def _line(label: str, ours: list[float], theirs: list[float], note: str = "") -> str:
    o, t = statistics.median(ours), statistics.median(theirs)
    return (
        f"  {label:34s} ours {1000 * o:8.1f} ms  tokenizers {1000 * t:8.1f} ms  {t / o:5.2f}x{note}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--kb", type=int, default=256)
    args = ap.parse_args(argv)
    corpora.require("tokenizers")
    import tokenizers
    from bench_hf_json import TRAIN_BYTES, _build

    from bpe_studio.core import Tokenizer
    from bpe_studio.core.encode.merging import kernel_start

    kernel_start.prepare()
    paths = dict(zip(TEXTS, corpora.corpus(*TEXTS.values())))
    texts = {
        k: corpora.line_slice(p, SLICE_AT, args.kb * 1024).decode("utf-8") for k, p in paths.items()
    }
    # Accents decomposed, as some sources write them (the corpora have almost none): a
    # normalizer that composes them (Qwen2's NFC) makes one character of two.
    accented = " ".join(ACCENTED) + "\n"
    texts["accents NFD"] = unicodedata.normalize("NFD", accented * (args.kb * 1024 // 200))
    train = [corpora.line_slice(p, 0, TRAIN_BYTES).decode("utf-8") for p in paths.values()]
    print(f"tokenizers {tokenizers.__version__}; {args.kb} KB slices; medians of {args.reps}")
    failed = False
    with corpora.scratch_dir() as tmp_name:
        for name, shape in _shapes().items():
            findall, spans, kind = _ours(shape)
            pretokens = _theirs(shape)
            path = _build(name, shape, train, Path(tmp_name))
            tok = Tokenizer.from_hf(path)
            hf = tokenizers.Tokenizer.from_file(str(path))
            hf_encode = partial(hf.encode, add_special_tokens=False)
            k = len(tok.merges) // 2
            print(f"{name} ({kind}; P4 at step {k:,})", flush=True)
            for label, text in texts.items():
                times: dict[str, list[float]] = {}
                out: dict[str, object] = {}
                runs = {
                    "p1o": (findall, text),
                    "p1t": (pretokens, text),
                    "p2o": (spans, text),
                    "p3o": (tok.packed_spans, text),
                    "p3t": (hf_encode, text),
                    "p4o": (_spans_at, tok, k, text),
                    "p4t": (_offsets_at, hf, k, text),
                }
                for _ in range(args.reps):
                    for key, (fn, *fn_args) in runs.items():
                        out[key], s = _timed(fn, *fn_args)
                        times.setdefault(key, []).append(s)
                same = out["p1o"] == _as_text(out["p1t"])  # type: ignore[arg-type]
                print(_line(f"P1 {label} pre-tokens", times["p1o"], times["p1t"],
                            "" if same else "  FAIL"))  # fmt: skip
                print(_line(f"P2 {label} with original offsets", times["p2o"], times["p1t"]))
                for step in ("p3", "p4"):
                    packed, enc = out[f"{step}o"], out[f"{step}t"]
                    ids_same = packed[:, 0].tolist() == enc.ids  # type: ignore[index,attr-defined]
                    same &= ids_same
                    note = _differ(packed, enc, len(text))
                    what = "token spans" if step == "p3" else "token spans at k"
                    print(_line(f"{step.upper()} {label} {what}", times[f"{step}o"],
                                times[f"{step}t"], note if ids_same else "  FAIL"))  # fmt: skip
                failed |= not same
                sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
