"""GPT-2's byte <-> printable-character alphabet and its file formats, written for the tests
independently of ``bpe_studio.core.formats.gpt2``.

GPT-2 stores each byte of a token as one character: the 188 bytes that are printable in
Latin-1 (``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``) stand for themselves, and the other 68 bytes,
taken in increasing order, become U+0100, U+0101, ... (so the space 0x20 is ``Ġ`` U+0120).
"""

from __future__ import annotations

import json
from pathlib import Path


def _printable_latin1(b: int) -> bool:
    return 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF


def gpt2_byte_to_char() -> dict[int, str]:
    others = [b for b in range(256) if not _printable_latin1(b)]
    table = {b: chr(b) for b in range(256) if _printable_latin1(b)}
    table.update({b: chr(0x100 + k) for k, b in enumerate(others)})
    return table


BYTE_TO_CHAR = gpt2_byte_to_char()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def token_from_gpt2(text: str) -> bytes:
    return bytes(CHAR_TO_BYTE[c] for c in text)


def token_to_gpt2(token: bytes) -> str:
    return "".join(BYTE_TO_CHAR[b] for b in token)


def read_gpt2_merges(path: Path) -> list[tuple[bytes, bytes]]:
    """``merges.txt`` -> ``[(left, right), ...]``; a ``#version`` first line is skipped."""
    merges = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").split("\n")):
        if not line or (n == 0 and line.startswith("#version")):
            continue
        left, right = line.split(" ")
        merges.append((token_from_gpt2(left), token_from_gpt2(right)))
    return merges


def read_gpt2_vocab(path: Path) -> dict[int, bytes]:
    """``vocab.json`` (token string -> id) -> ``{id: token bytes}``."""
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    vocab = {idx: token_from_gpt2(tok) for tok, idx in raw.items()}
    assert len(vocab) == len(raw), "duplicate ids in " + str(path)
    return vocab
