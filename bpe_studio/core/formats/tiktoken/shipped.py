"""Derived merges shipped with the package for OpenAI's rank files, so that loading one
derives nothing.

What it does: :func:`encode_splits` writes the file (``scripts/derive_tiktoken_splits.py``:
:func:`splits_file_for`); :func:`shipped_splits` finds the files shipped in
``bpe_studio.resources`` by the sha256 of the rank file they belong to;
:func:`merges_from_shipped` reads one back. File format: a header naming the rank file (sha256
of its uncompressed bytes), then one byte per multi-byte token, in rank order: the length of
its left part. What it leaves out: which OpenAI encoding a file is (``openai``).
"""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Mapping
from functools import cache
from importlib import resources
from itertools import repeat

from .merges import derive_merges
from .ranks import check_entries, parse, read_raw

_SPLITS_MAGIC = b"bpe-studio tiktoken splits 1"


def encode_splits(raw: bytes, merges: list[tuple[bytes, bytes]]) -> bytes:
    """The gzip'd file shipping ``merges`` (derived from the rank file whose bytes are
    ``raw``): written by ``scripts/derive_tiktoken_splits.py``."""
    lengths = [len(a) for a, _ in merges]
    if any(n > 255 for n in lengths):
        raise ValueError("a left part longer than 255 bytes does not fit the splits format")
    sha = hashlib.sha256(raw).hexdigest()
    header = b"%s %s %d\n" % (_SPLITS_MAGIC, sha.encode(), len(lengths))
    return gzip.compress(header + bytes(lengths), mtime=0)


@cache
def shipped_splits() -> dict[str, str]:
    """sha256 of a rank file -> the shipped splits resource for it (headers read once)."""
    found: dict[str, str] = {}
    folder = resources.files("bpe_studio.resources") / "tokenizers"
    if not folder.is_dir():
        return found  # installed without the tokenizer files: every rank file is derived
    for entry in folder.iterdir():
        if not entry.name.endswith(".splits.gz"):
            continue
        with entry.open("rb") as f, gzip.open(f) as g:
            fields = g.readline().split()
        if b" ".join(fields[:4]) == _SPLITS_MAGIC and len(fields) == 6:
            found[fields[4].decode()] = entry.name
    return found


def merges_from_shipped(
    sha256: str, tokens: list[bytes], ranks: list[int], inverse: Mapping[bytes, int]
) -> tuple[list[tuple[bytes, bytes]], tuple[list[int], list[int], list[int]]] | None:
    """The shipped merges for this exact rank file (``sha256`` of its bytes; its ``tokens``
    and ``ranks`` in file order, ``inverse`` token -> rank), if there are any, and their ids
    (left, right, made)."""
    resource = shipped_splits().get(sha256)
    if resource is None:
        return None
    blob = (resources.files("bpe_studio.resources") / "tokenizers" / resource).read_bytes()
    header, _, lengths = gzip.decompress(blob).partition(b"\n")
    if ranks != list(range(len(ranks))):  # the usual order makes sorting unnecessary
        tokens = [tok for _, tok in sorted(zip(ranks, tokens))]
    long_tokens = [tok for tok in tokens if len(tok) > 1]
    if int(header.split()[-1]) != len(long_tokens) or len(lengths) != len(long_tokens):
        raise ValueError(f"{resource}: holds a different number of merges than its rank file")
    # The header's sha256 ties the file to these exact ranks, and a test re-derives every
    # split from the rank file; here only the shape is checked, to keep loading fast.
    lefts = list(map(bytes.__getitem__, long_tokens, map(slice, repeat(None), lengths)))
    rights = list(map(bytes.__getitem__, long_tokens, map(slice, lengths, repeat(None))))
    get = inverse.__getitem__
    ids = (list(map(get, lefts)), list(map(get, rights)), list(map(get, long_tokens)))
    return list(zip(lefts, rights)), ids


def splits_file_for(path: str | os.PathLike) -> bytes:
    """The shipped-splits file (gzip bytes) for the rank file at ``path``, derived from it."""
    name = os.fspath(path)
    raw = read_raw(path)
    tokens, ranks, linenos = parse(raw, name)
    vocab, inverse = check_entries(tokens, ranks, linenos, name)
    return encode_splits(raw, derive_merges(inverse, lambda r: f"{name}: rank {r}"))
