"""The sidecar of a rank file: ``NAME.tiktoken.json`` beside ``NAME.tiktoken``, holding what a
rank file lacks (``pat_str`` and ``special_tokens``, with a format name and version, and
since it was added the number of ranks written, ``rank_count``).

What it does: names the sidecar (:func:`sidecar_name`), finds it beside a rank file
(:func:`sidecar_beside`; also the ``NAME.json`` earlier versions wrote, when it says it is
one) and reads it with errors naming the file (:func:`read_sidecar`). What it leaves out:
writing it (``writing``).
"""

from __future__ import annotations

import os
from pathlib import Path

from ...pretokenization.pretokenizer import pretokenizer
from ..base.json_errors import json_or_none, read_json

SIDECAR_FORMAT = "bpe-studio tiktoken sidecar"
SIDECAR_VERSION = 1
# The number of ranks the rank file was written with; sidecars written before it lack it.
RANK_COUNT = "rank_count"
# NAME.tiktoken's sidecar is NAME.tiktoken.json (see ``sidecar_name``).
SIDECAR_SUFFIX = ".tiktoken.json"
# A sidecar holds a pattern and a few special tokens: far less than this many bytes.
_SIDECAR_MAX = 1 << 20


def stem_of(rank_file: Path) -> str:
    """``NAME`` of ``NAME.tiktoken`` or ``NAME.tiktoken.gz``."""
    stem = rank_file.name
    for suffix in (".gz", ".tiktoken"):
        stem = stem.removesuffix(suffix)
    return stem


def given_stem(name: str) -> str:
    """The ``NAME`` a tiktoken name given as its rank file's name means: ``--name
    mytok.tiktoken`` writes ``mytok.tiktoken``, not ``mytok.tiktoken.tiktoken``."""
    return name.removesuffix(".tiktoken") or name


def sidecar_name(name: str) -> str:
    """The sidecar's file name for the rank file ``NAME.tiktoken``: ``NAME.tiktoken.json``.
    subtle: never plain ``NAME.json``, which for the default name would be
    ``tokenizer.json``, the name of a Hugging Face file."""
    return f"{name}{SIDECAR_SUFFIX}"


def sidecar_beside(rank_file: Path) -> Path | None:
    """The sidecar of ``rank_file`` if there is one: ``NAME.tiktoken.json``, or the
    ``NAME.json`` earlier versions wrote, when that file says it is a sidecar (a Hugging Face
    ``tokenizer.json`` beside ``tokenizer.tiktoken`` is not one)."""
    stem = stem_of(rank_file)
    current = rank_file.with_name(sidecar_name(stem))
    if current.is_file():
        return current
    old = rank_file.with_name(f"{stem}.json")
    return old if old.is_file() and _is_sidecar(old) else None


def _is_sidecar(path: Path) -> bool:
    """Whether the JSON file ``path`` declares itself a sidecar (read only when it is small,
    as a sidecar is: a larger file is some other JSON, a tokenizer.json)."""
    try:
        if path.stat().st_size > _SIDECAR_MAX:
            return False
    except OSError:
        return False
    obj = json_or_none(path)
    return isinstance(obj, dict) and obj.get("format") == SIDECAR_FORMAT


def read_sidecar(path: Path) -> dict:
    name = os.fspath(path)
    obj = read_json(path)
    if not isinstance(obj, dict) or obj.get("format") != SIDECAR_FORMAT:
        raise ValueError(f"{name}: not a {SIDECAR_FORMAT!r} file")
    if obj.get("version") != SIDECAR_VERSION:
        raise ValueError(f"{name}: version {obj.get('version')!r}, expected {SIDECAR_VERSION}")
    if not isinstance(obj.get("pat_str"), str) or not isinstance(obj.get("special_tokens"), dict):
        raise ValueError(f"{name}: needs a string 'pat_str' and an object 'special_tokens'")
    count = obj.get(RANK_COUNT)
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
        raise ValueError(f"{name}: {RANK_COUNT} must be a non-negative integer, got {count!r}")
    try:
        pretokenizer(obj["pat_str"])
    except ValueError as e:
        raise ValueError(f"{name}: pat_str: {e}") from None
    return obj
