"""Deterministic training corpora for ``bench_train_mixed.py``, built from the shared corpora.

What it does: ``mixed(size)`` splits every shared corpus file (English books, code, Chinese,
mixed web, TinyStories) into documents on ``<|endoftext|>``, shuffles all of them with a fixed
seed and writes them, each followed by ``<|endoftext|>``, until ``size`` bytes; ``scaled(size)``
repeats the mixed documents, varying a few percent of the words in each copy (case, a suffix, a
number), so the number of unique pre-tokens grows with size as it does in real data. Files are
written once to a cache directory outside the repo (``$BPE_STUDIO_BENCH_CACHE`` or
``~/.cache/bpe-studio-bench``) and reused. What it leaves out: measuring anything.
Run ``python benchmarks/train_corpora.py`` to build both and print their paths.
"""

from __future__ import annotations

import os
import random
import re
import sys
from pathlib import Path

SPECIAL = "<|endoftext|>"
SOURCES = ("english_books.txt", "code.txt", "chinese.txt", "mixed_web.txt", "tinystories.txt")
MB = 1_000_000
_WORD = re.compile(r"[A-Za-z]{3,}")
_SUFFIXES = ("s", "ed", "ing", "er", "ly")


def corpora_dir() -> Path:
    return Path(os.environ.get("BPE_STUDIO_CORPORA", "/work/shared/corpora"))


def cache_dir() -> Path:
    d = Path(os.environ.get("BPE_STUDIO_BENCH_CACHE", Path.home() / ".cache/bpe-studio-bench"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def english_books_20mb() -> Path:
    """The first 20 MB of ``english_books.txt``, cut at a line break (the small training case)."""
    path = cache_dir() / "english_books_20MB.txt"
    if not path.exists():
        data = (corpora_dir() / "english_books.txt").read_bytes()[: 20 * MB]
        _write_bytes(path, data[: data.rfind(b"\n") + 1])
    return path


def _write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.replace(path)


def documents() -> list[str]:
    """Every document of every source, shuffled with a fixed seed."""
    docs: list[str] = []
    for name in SOURCES:
        text = (corpora_dir() / name).read_text(encoding="utf-8")
        docs += [d.strip("\n") for d in text.split(SPECIAL) if d.strip()]
    random.Random(1234).shuffle(docs)
    return docs


def _write(path: Path, pieces) -> Path:
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        for piece in pieces:
            f.write(piece)
    tmp.replace(path)
    return path


def mixed(size: int = 50 * MB) -> Path:
    path = cache_dir() / f"mixed_{size // MB}MB.txt"
    if path.exists():
        return path

    def pieces():
        total = 0
        for doc in documents():
            piece = f"{doc}\n{SPECIAL}\n"
            total += len(piece.encode("utf-8"))
            if total > size:
                return
            yield piece

    return _write(path, pieces())


def _vary(doc: str, rng: random.Random, rate: float) -> str:
    def sub(m: re.Match[str]) -> str:
        w = m.group(0)
        if rng.random() >= rate:
            return w
        kind = rng.randrange(3)
        if kind == 0:
            return w.upper() if w.islower() else w.lower()
        if kind == 1:
            return w + rng.choice(_SUFFIXES)
        return f"{w}{rng.randrange(1000)}"

    return _WORD.sub(sub, doc)


def scaled(size: int = 1000 * MB, rate: float = 0.03) -> Path:
    """Copies of the mixed documents; copy 0 unchanged, each later copy varies ``rate`` of
    its words (a seeded choice per copy)."""
    path = cache_dir() / f"scaled_{size // MB}MB.txt"
    if path.exists():
        return path
    docs = documents()

    def pieces():
        total = 0
        copy = 0
        while True:
            rng = random.Random(copy)
            for doc in docs:
                text = doc if copy == 0 else _vary(doc, rng, rate)
                piece = f"{text}\n{SPECIAL}\n"
                total += len(piece.encode("utf-8"))
                if total > size:
                    return
                yield piece
            copy += 1

    return _write(path, pieces())


if __name__ == "__main__":
    print(mixed())
    if "--scaled" in sys.argv:
        print(scaled())
