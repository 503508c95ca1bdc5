"""From a vocabulary, merges and special tokens to the tables a ``Tokenizer`` encodes with.

What it does: checks the merges' form (:func:`merge_list`) and the byte tokens
(:func:`byte_ids`), gives special tokens their ids (:func:`append_specials`,
:func:`place_specials`), and finds the whole tokens a pre-token may be looked up as
(:func:`whole_tokens`). What it leaves out: the rank table (``packed``) and reading files
(``formats``).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence


def inverse(vocab: Mapping[int, bytes]) -> dict[bytes, int]:
    """token -> id; where ids share a token, the lowest id."""
    inv = dict(zip(vocab.values(), vocab.keys()))
    if len(inv) != len(vocab):
        inv = {}
        for idx, tok in sorted(vocab.items()):
            inv.setdefault(tok, idx)
    return inv


def merge_list(
    merges: Sequence[tuple[bytes, bytes]],
) -> tuple[list[tuple[bytes, bytes]], Sequence[bytes], Sequence[bytes]]:
    """The merges as a list of ``(bytes, bytes)`` tuples, and their left and right parts.
    The usual input (such tuples already) is copied as a list of the same tuples; all the
    work is in C loops."""
    merges = list(merges)
    if not merges:
        return [], (), ()
    if set(map(len, merges)) != {2}:
        bad = next(i for i, n in enumerate(map(len, merges)) if n != 2)
        raise ValueError(f"merge {bad} ({merges[bad]!r}) is not a pair of tokens")
    lefts: Sequence[bytes] = list(map(operator.itemgetter(0), merges))
    rights: Sequence[bytes] = list(map(operator.itemgetter(1), merges))
    if set(map(type, merges)) == {tuple} and set(map(type, lefts)) | set(map(type, rights)) == {
        bytes
    }:
        return merges, lefts, rights
    lefts, rights = tuple(map(bytes, lefts)), tuple(map(bytes, rights))
    return list(zip(lefts, rights)), lefts, rights


def byte_ids(inv: Mapping[bytes, int]) -> list[int]:
    """The id of each byte's token; ValueError when the vocabulary lacks one."""
    missing = [b for b in range(256) if bytes([b]) not in inv]
    if missing:
        raise ValueError(
            f"the vocabulary lacks {len(missing)} single-byte token(s), e.g. byte "
            f"0x{missing[0]:02x}: a byte-level vocabulary needs all 256"
        )
    return [inv[bytes([b])] for b in range(256)]


def append_specials(
    vocab: dict[int, bytes], tokens: Iterable[str], inv: dict[bytes, int]
) -> dict[str, int]:
    """Ids of listed special tokens: their token's id, or for one missing from the vocabulary a
    new id after the largest (entered in ``vocab`` and ``inv``)."""
    ids: dict[str, int] = {}
    for s in tokens:
        sb = s.encode("utf-8")
        if sb not in inv:
            new_id = max(vocab) + 1
            vocab[new_id] = sb
            inv[sb] = new_id
        ids[s] = inv[sb]
    return ids


def place_specials(
    vocab: dict[int, bytes],
    tokens: Iterable[str],
    explicit: Mapping[str, int],
    inv: dict[bytes, int],
) -> dict[str, int]:
    """Ids of special tokens given with their ids: each id holds its token's bytes (it is
    entered in ``vocab`` when absent there)."""
    ids: dict[str, int] = {}
    owner: dict[int, str] = {}
    for s in tokens:
        idx = explicit[s]
        if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
            raise ValueError(f"special token {s!r}: id {idx!r} is not a non-negative integer")
        if idx in owner:
            raise ValueError(f"special tokens {owner[idx]!r} and {s!r} share id {idx}")
        sb = s.encode("utf-8")
        held = vocab.setdefault(idx, sb)
        if held != sb:
            raise ValueError(f"special token {s!r}: id {idx} already holds {held!r}")
        inv.setdefault(sb, idx)
        owner[idx] = s
        ids[s] = idx
    return ids


def whole_tokens(
    vocab: Mapping[int, bytes],
    inv: dict[bytes, int],
    whole_except: Iterable[int] | None,
    special_ids: Iterable[int],
) -> dict[bytes, int] | None:
    """token bytes -> id, special tokens left out, when the caller knows that every token's own
    bytes merge into that one token except the tokens of ``whole_except``
    (``TokenizerData.whole_tokens``); else None: a token that merging cannot reach (its bytes
    merge into other tokens) would be looked up wrongly. ``inv`` is consumed."""
    if whole_except is None:
        return None
    for idx in {*whole_except, *special_ids}:
        if inv.get(vocab[idx]) == idx:
            del inv[vocab[idx]]
    return inv
