"""Reading a tiktoken rank file into a :class:`~..base.data.TokenizerData`: its ranks as ids,
its merges derived (or shipped, or cached), its pattern and special tokens given, from its
sidecar, or for OpenAI's own files tiktoken's.

What it does: :func:`read_tiktoken`, over the modules beside it (``ranks``, ``merges``,
``shipped``, ``rank_cache``, ``sidecar``, ``openai``). What it leaves out: the presets' choice
of pattern and special tokens (``presets``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from ...io.gc_pause import gc_paused
from ...pretokenization.names import pattern_name
from ..base.data import TokenizerData, check_id_range
from ..base.preset_table import preset_settings
from . import rank_cache
from .merges import derive_merges
from .openai import openai_encoding
from .ranks import check_entries, line_of, parse, read_raw
from .shipped import merges_from_shipped
from .sidecar import RANK_COUNT, read_sidecar, sidecar_beside, sidecar_name, stem_of

# Ids a special token may stand past the last rank before that reads as ranks lost: OpenAI's
# own files leave a few for ids they reserve.
_SPECIAL_GAP = 1024
# The key of a rank file's settings naming the sidecar they were read from, which errors in
# its special tokens name.
_READ_FROM = "read from"


class PatternNeeded(ValueError):
    """A rank file was read without a pattern and holds none (nor a sidecar with one)."""


def _add_specials(
    vocab: dict[int, bytes],
    inverse: Mapping[bytes, int],
    special_tokens: Mapping[str, int],
    where: str,
) -> dict[str, int]:
    """Check the special tokens against the ranks and enter them in ``vocab``."""
    specials: dict[str, int] = {}
    taken: dict[int, str] = {}
    for s, idx in special_tokens.items():
        if not isinstance(s, str) or not s:
            raise ValueError(f"{where}: special token {s!r} must be a non-empty string")
        if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
            raise ValueError(
                f"{where}: special token {s!r}: id must be a non-negative integer, got {idx!r:.60}"
            )
        if idx in taken:
            raise ValueError(f"{where}: special tokens {taken[idx]!r} and {s!r} share id {idx}")
        sb = s.encode("utf-8")
        if idx in vocab:
            raise ValueError(
                f"{where}: special token {s!r}: id {idx} is the rank of {vocab[idx]!r}"
            )
        if sb in inverse:
            raise ValueError(
                f"{where}: special token {s!r} is also the token of rank {inverse[sb]}"
            )
        taken[idx] = s
        specials[s] = idx
    for s, idx in specials.items():
        vocab[idx] = s.encode("utf-8")
    return specials


def _derived(
    raw: bytes, sha256: str, name: str
) -> tuple[
    dict[int, bytes],
    dict[bytes, int],
    list[tuple[bytes, bytes]],
    tuple[list[int], list[int], list[int]] | None,
]:
    """rank -> token, token -> rank, the merges and (when known) their ids, of the rank file
    whose bytes are ``raw``: from the user's cache (``rank_cache``) when it holds them, else
    read, checked and derived (and then kept there)."""
    cached = rank_cache.load(sha256)
    if cached is not None:
        tokens, ranks, merges, merge_ids = cached
        order = range(len(tokens)) if ranks is None else ranks
        return dict(zip(order, tokens)), dict(zip(tokens, order)), merges, merge_ids
    tokens, rank_list, linenos = parse(raw, name)
    vocab, inverse = check_entries(tokens, rank_list, linenos, name)
    shipped = merges_from_shipped(sha256, tokens, rank_list, inverse)
    if shipped is not None:
        merges, merge_ids = shipped
    else:
        line_of_rank = {rank: line_of(linenos, i) for i, rank in enumerate(rank_list)}
        try:
            merges = derive_merges(inverse, lambda r: f"{name}: line {line_of_rank[r]}")
        except ValueError as error:
            raise ValueError(f"{error}{_skipped(rank_list, linenos)}") from None
        merge_ids = None
    usual = rank_list == list(range(len(rank_list)))
    rank_cache.store(sha256, (tokens, None if usual else rank_list, merges, merge_ids))
    return vocab, inverse, merges, merge_ids


def _skipped(ranks: list[int], linenos: list[int] | None) -> str:
    """Where ranks that skip a number went wrong, for the error of a token that cannot be
    built (which names a later line, whose token needed the one out of place): the first
    number no line holds, and the lines around where it would be."""
    if ranks == list(range(len(ranks))):
        return ""
    held = set(ranks)
    missing = next(r for r in range(len(ranks) + 1) if r not in held)
    said = f"; no line holds rank {missing:,}"
    if missing > 0:
        before = ranks.index(missing - 1)
        said += f" (line {line_of(linenos, before)} holds {missing - 1:,}"
        if before + 1 < len(ranks):
            said += f", the next, line {line_of(linenos, before + 1)}, {ranks[before + 1]:,}"
        said += ")"
    return said


def read_tiktoken(
    path: str | os.PathLike,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> TokenizerData:
    """Read a tiktoken rank file (plain or gzip): ids are its ranks, merges are derived.

    A rank file holds neither pattern nor special tokens: pass them, or keep the
    ``NAME.tiktoken.json`` that :func:`write_tiktoken` writes beside ``NAME.tiktoken`` (what
    is passed wins; see :func:`sidecar_beside`). OpenAI's own rank files (cl100k_base,
    o200k_base) need neither: they are recognised by their bytes and get the pattern and
    special tokens tiktoken publishes for them. Raises ValueError naming the file and line
    (see :func:`read_ranks`, :func:`derive_merges`).
    """
    name = os.fspath(path)
    raw = read_raw(path)
    sha256 = hashlib.sha256(raw).hexdigest()
    # subtle: reading makes hundreds of thousands of tuples and bytes and no reference
    # cycles; the cyclic collector, set off again and again by those allocations, would walk
    # them all (as in ``Tokenizer.__init__``).
    with gc_paused():
        vocab, inverse, merges, merge_ids = _derived(raw, sha256, name)
    if special_tokens is not None and not isinstance(special_tokens, Mapping):
        raise TypeError(
            "a rank file's special tokens map each token to its id, e.g. "
            f"{{'<|endoftext|>': 100257}}; got {special_tokens!r:.60}"
        )
    settings = None
    if pattern is None or special_tokens is None:
        settings = _settings_for(Path(path), sha256, len(inverse))
    if pattern is None:
        if settings is None:
            raise PatternNeeded(
                f"{name}: a rank file holds no pre-tokenization pattern; pass one (gpt2, cl100k, "
                "o200k or a regex: --pattern on the command line, pattern= in Python) or keep "
                f"{sidecar_name(stem_of(Path(path)))} beside it"
            )
        pattern = settings["pat_str"]
    where = name
    if special_tokens is None:
        special_tokens = settings["special_tokens"] if settings else {}
        where = settings.get(_READ_FROM, name) if settings else name
    last_rank = max(vocab, default=-1)
    specials = _add_specials(vocab, inverse, special_tokens, where)
    counted = settings is not None and settings.get(RANK_COUNT) is not None
    note = None if counted else _gap_note(name, last_rank, specials)
    # subtle: OpenAI's own rank files are the presets' (same bytes), whose every token is
    # checked to merge into itself (tests/core/test_whole_tokens.py).
    whole = openai_encoding(sha256) is not None
    check_id_range(vocab, name)
    return TokenizerData(
        vocab,
        merges,
        specials,
        pattern_name(pattern),
        merge_ids,
        whole,
        notes=() if note is None else (note,),
    )


def _gap_note(name: str, last_rank: int, specials: Mapping[str, int]) -> str | None:
    """What to say of a rank file (``name``) whose first special token past its last rank
    stands far past it, as after a copy cut short at a line's end; None when none does."""
    after = [(idx, s) for s, idx in specials.items() if idx > last_rank]
    if not after:
        return None
    idx, s = min(after)
    if idx - last_rank - 1 <= _SPECIAL_GAP:
        return None
    return (
        f"{name}: its last rank is {last_rank:,}, and special token {s!r} is id {idx:,}: the "
        f"{idx - last_rank - 1:,} ids between hold nothing (a rank file cut short by an "
        "interrupted copy? compare it with the original)"
    )


def _settings_for(rank_file: Path, sha256: str, n_ranks: int) -> dict | None:
    """``pat_str`` and ``special_tokens`` for a rank file holding ``n_ranks`` ranks: its
    sidecar's (refused when it says another number of ranks was written), else for one of
    OpenAI's own rank files (recognised by its bytes, whatever its name) the ones tiktoken
    publishes for it, else None."""
    sidecar = sidecar_beside(rank_file)
    if sidecar is not None:
        settings = read_sidecar(sidecar)
        written = settings.get(RANK_COUNT)
        if written is not None and written != n_ranks:
            raise ValueError(
                f"{os.fspath(rank_file)}: holds {n_ranks:,} ranks, where its sidecar "
                f"{os.fspath(sidecar)} says {written:,} were written: the rank file is cut "
                "short (an interrupted copy?) or is not the one the sidecar was written with; "
                "copy it again"
            )
        return {**settings, _READ_FROM: os.fspath(sidecar)}
    encoding = openai_encoding(sha256)
    if encoding is None:
        return None
    pattern, special_tokens = preset_settings(encoding)
    return {"pat_str": pattern, "special_tokens": special_tokens}
