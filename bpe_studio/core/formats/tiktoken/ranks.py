"""Reading a tiktoken rank file (``<base64 token> <rank>`` per line, plain or gzip).

What it does: reads the bytes (gunzipped when they are gzip), parses them (one C-level check
of the whole file, else line by line with an error naming the file and line), and checks the
entries (no rank or token twice, every single byte ranked). What it leaves out: the merges
behind the ranks (``merges``), pattern and special tokens (``reading``).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import os
import re
import sys
from pathlib import Path

# A whole well-formed rank file: checked in one C-level pass, so the fast parse below can
# take fields two by two without looking at lines. Possessive (Python 3.11+), `re` keeps no
# backtracking state for the runs: the greedy ones before 3.11 match the same (no field's
# characters can end a run early).
_POSSESSIVE = b"+" if sys.version_info >= (3, 11) else b""
_WELL_FORMED = re.compile(
    rb"(?:[A-Za-z0-9+/]+={0,2}%b (?:0|[1-9][0-9]*%b)\n)*%b" % ((_POSSESSIVE,) * 3)
)


def read_raw(path: str | os.PathLike) -> bytes:
    name = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"{name}: cannot read ({e.strerror or e})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise ValueError(f"{name}: not a readable gzip file ({e})") from None
    return data


def _parse_slowly(data: bytes, name: str) -> tuple[list[bytes], list[int], list[int]]:
    """Line by line, for files the fast check refused: the first bad line raises."""
    tokens: list[bytes] = []
    ranks: list[int] = []
    linenos: list[int] = []
    for lineno, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        fields = line.split()
        where = f"{name}: line {lineno}"
        if len(fields) != 2:
            shown = line[:60].decode("utf-8", "replace")
            raise ValueError(f"{where}: expected '<base64 token> <rank>', got {shown!r}")
        try:
            token = base64.b64decode(fields[0], validate=True)
        except binascii.Error as e:
            shown = fields[0][:60].decode("utf-8", "replace")
            raise ValueError(f"{where}: {shown!r} is not base64 ({e})") from None
        if not token:
            raise ValueError(f"{where}: the token is empty")
        if not fields[1].isdigit():
            shown = fields[1][:30].decode("utf-8", "replace")
            raise ValueError(f"{where}: rank {shown!r} is not a non-negative integer")
        tokens.append(token)
        ranks.append(int(fields[1]))
        linenos.append(lineno)
    return tokens, ranks, linenos


def parse(data: bytes, name: str) -> tuple[list[bytes], list[int], list[int] | None]:
    """Tokens and ranks in file order, and their line numbers (None: entry i is on line i+1)."""
    if data.endswith(b"\n") and _WELL_FORMED.fullmatch(data):
        fields = data.split()
        try:
            # subtle: the C decoder straight away; the check above already allowed only
            # base64 characters and at most two "=" at the end of each token, which is what
            # b64decode(validate=True) checks besides (in a Python wrapper, per token).
            tokens = list(map(binascii.a2b_base64, fields[0::2]))
            if all(tokens):
                return tokens, list(map(int, fields[1::2])), None
        except binascii.Error:
            pass
    return _parse_slowly(data, name)


def line_of(linenos: list[int] | None, index: int) -> int:
    return index + 1 if linenos is None else linenos[index]


def check_entries(
    tokens: list[bytes], ranks: list[int], linenos: list[int] | None, name: str
) -> tuple[dict[int, bytes], dict[bytes, int]]:
    """rank -> token and token -> rank, refusing duplicates and missing single bytes."""
    vocab = dict(zip(ranks, tokens))
    inverse = dict(zip(tokens, ranks))
    if len(vocab) != len(ranks) or len(inverse) != len(tokens):
        seen_rank: dict[int, int] = {}
        seen_token: dict[bytes, int] = {}
        for i, (tok, rank) in enumerate(zip(tokens, ranks)):
            line = line_of(linenos, i)
            if rank in seen_rank:
                raise ValueError(
                    f"{name}: line {line}: rank {rank} is already on line {seen_rank[rank]}"
                )
            if tok in seen_token:
                raise ValueError(
                    f"{name}: line {line}: token {tok!r} is already on line {seen_token[tok]}"
                )
            seen_rank[rank], seen_token[tok] = line, line
    missing = [b for b in range(256) if bytes([b]) not in inverse]
    if missing:
        raise ValueError(
            f"{name}: {len(missing)} of the 256 single bytes have no rank "
            f"(e.g. 0x{missing[0]:02x}); a byte-level rank file needs all of them"
        )
    return vocab, inverse


def read_ranks(path: str | os.PathLike) -> dict[int, bytes]:
    """Read a rank file: rank -> token bytes.

    Raises ValueError naming the file and line for a malformed line, bad base64, a rank that is
    not a non-negative integer, a rank or token given twice, or a missing single byte.
    """
    name = os.fspath(path)
    tokens, ranks, linenos = parse(read_raw(path), name)
    return check_entries(tokens, ranks, linenos, name)[0]
