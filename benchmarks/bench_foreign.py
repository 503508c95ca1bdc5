"""WordPiece, Unigram and SentencePiece-style BPE through bpe_studio (``core.encode.foreign``)
against Hugging Face ``tokenizers`` called directly: what the wrapper costs.

Files: three ``tokenizer.json`` files trained here by ``tokenizers``' own trainers (untimed)
on 1 MB of text (250 KB from each corpus below, starting at byte 1,000,000): BERT's shape
(WordPiece, 30,000 tokens), T5/ALBERT's (NFKC, Metaspace, Unigram, 16,000) and Llama 2's
(SentencePiece-style BPE with byte fallback and the 256 ``<0xNN>`` tokens, 16,000).
Text: 1 MB of each of ``english_books.txt``, ``chinese.txt``, ``code.txt`` and
``mixed_web.txt`` from byte 5,000,000 (cut at line breaks). MB/s = UTF-8 bytes / 1e6 / s.

F1. Load: ``open_tokenizer(path)`` (which first reads the file to tell its kind) against
    ``tokenizers.Tokenizer.from_file(path)``.
F2. ``encode``: ``ForeignTokenizer.encode(text)`` against ``tokenizer.encode(text,
    add_special_tokens=False).ids``; the ids must be equal (else FAIL).
F3. Spans: ``packed_spans`` (what the editor and Compare take: each token's id, characters and
    whether it shares them, as one array) against the same direct call reading ``.offsets``.
Each figure is the median of ``--reps`` runs in this process, ours and the library's
alternating (the machine is shared: only same-run ratios mean anything; the load average is
printed).

Run: ``python benchmarks/bench_foreign.py [--reps N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
from timing import median_seconds  # noqa: E402

TEXTS = corpora.TEXT_KINDS
TRAIN_AT, TRAIN_BYTES = 1 * corpora.MB, 250_000
SLICE_AT, SLICE_BYTES = 5 * corpora.MB, 1 * corpora.MB


def _wordpiece(lines: list[str], path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(
        lines, trainers.WordPieceTrainer(vocab_size=30_000, special_tokens=specials)
    )
    tok.save(str(path))


def _unigram(lines: list[str], path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=16_000, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>"
    )
    tok.train_from_iterator(lines, trainer)
    tok.save(str(path))


def _sentencepiece_bpe(lines: list[str], path: Path) -> None:
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, trainers

    normalizer = normalizers.Sequence(
        [normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")]
    )
    trained = Tokenizer(models.BPE(unk_token="<unk>"))
    trained.normalizer = normalizer
    trainer = trainers.BpeTrainer(vocab_size=16_000, special_tokens=["<unk>", "<s>", "</s>"])
    trained.train_from_iterator(lines, trainer)
    model = json.loads(trained.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{f"<0x{b:02X}>": 3 + b for b in range(256)}}
    for token, _ in sorted(model["vocab"].items(), key=lambda item: item[1]):
        vocab.setdefault(token, len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizer
    tok.decoder = decoders.Sequence(
        [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
         decoders.Strip(" ", 1, 0)]
    )  # fmt: skip
    tok.add_special_tokens([AddedToken(t, special=True) for t in ("<unk>", "<s>", "</s>")])
    tok.save(str(path))


KINDS: dict[str, Callable[[list[str], Path], None]] = {
    "WordPiece (BERT shape)": _wordpiece,
    "Unigram (T5 shape)": _unigram,
    "SentencePiece BPE (Llama 2 shape)": _sentencepiece_bpe,
}


def _pair(
    ours: Callable[[], object], theirs: Callable[[], object], reps: int
) -> tuple[float, float]:
    """Medians of ``reps`` alternating runs of each."""
    a, b = [], []
    for _ in range(reps):
        a.append(median_seconds(ours, 1))
        b.append(median_seconds(theirs, 1))
    return statistics.median(a), statistics.median(b)


def _measure(kind: str, path: Path, texts: dict[str, str], reps: int) -> tuple[list[str], bool]:
    """One file's row (F1-F3) and whether its ids equal the library's on every text."""
    import tokenizers

    from bpe_studio.core.encode.foreign import ForeignTokenizer, open_tokenizer

    load = _pair(
        lambda: open_tokenizer(path), lambda: tokenizers.Tokenizer.from_file(str(path)), reps
    )
    ours = open_tokenizer(path)
    assert isinstance(ours, ForeignTokenizer)
    lib = tokenizers.Tokenizer.from_file(str(path))
    cells = [kind, f"{load[0] * 1000:.0f} ms ({load[1] * 1000:.0f} ms)"]
    ok = True
    for label, text in texts.items():
        if ours.encode(text) != lib.encode(text, add_special_tokens=False).ids:
            ok = False
            cells.append("FAIL (ids differ)")
            continue
        mb = len(text.encode()) / corpora.MB
        enc = _pair(
            lambda t=text: ours.encode(t),
            lambda t=text: lib.encode(t, add_special_tokens=False).ids,
            reps,
        )
        spans = _pair(
            lambda t=text: ours.packed_spans(t),
            lambda t=text: lib.encode(t, add_special_tokens=False).offsets,
            reps,
        )
        cells.append(
            f"{mb / enc[0]:.2f} / {mb / enc[1]:.2f} MB/s ({enc[1] / enc[0]:.2f}×); "
            f"spans {mb / spans[0]:.2f} / {mb / spans[1]:.2f} ({spans[1] / spans[0]:.2f}×)"
        )
        print(f"  {label}: {cells[-1]}", flush=True)
    return cells, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    try:
        corpora.require("tokenizers")
        paths = dict(zip(TEXTS, corpora.corpus(*TEXTS.values())))
    except corpora.Skip as skip:
        print(f"SKIP: {skip}")
        return 0
    texts = {k: corpora.line_slice(p, SLICE_AT, SLICE_BYTES).decode() for k, p in paths.items()}
    lines = [
        line
        for p in paths.values()
        for line in corpora.line_slice(p, TRAIN_AT, TRAIN_BYTES).decode().splitlines()
    ]
    print(f"load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    failed = False
    with corpora.scratch_dir() as scratch:
        for kind, make in KINDS.items():
            path = Path(scratch) / f"{len(rows)}" / "tokenizer.json"
            path.parent.mkdir()
            start = time.perf_counter()
            make(lines, path)
            print(f"{kind}: trained in {time.perf_counter() - start:.1f} s")
            cells, ok = _measure(kind, path, texts, args.reps)
            failed = failed or not ok
            rows.append(cells)
    print(f"load average at end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = ["file", "load: ours (tokenizers)", *TEXTS]
    print("\n| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for cells in rows:
        print("| " + " | ".join(cells) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
