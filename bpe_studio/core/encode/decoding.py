"""Token ids back to bytes (``Tokenizer.decode_bytes``).

What it does: :func:`decode_bytes` joins the ids' tokens, refusing ids that are not ints
(``1.0`` would pass a dict lookup) and naming an unknown id; many ids at once are gathered
from one array of every token's bytes (:class:`ByteTable`), not joined one object at a time.
What it leaves out: text (UTF-8 decoding with replacement is ``Tokenizer.decode``) and
character offsets (``token_spans``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from numbers import Integral
from typing import Any

import numpy as np

from ..train.vocab import missing_id

# From this many ids on, the ids go through ``ByteTable`` (1.6M ids of o200k: 36 ms from an
# array, against 180 ms joined one by one; tiktoken 39 ms). Below it, building the table the
# first time (about 30 ms for o200k) would cost more than it saves.
TABLE_FROM = 1 << 15
# Ids gathered per step: the step's index arrays stay in the CPU's cache (2-4 ms faster per
# million ids than one step for all).
_STEP = 1 << 14


class ByteTable:
    """Every token's bytes in one array, by id: ``blob[starts[i]:starts[i] + lengths[i]]``;
    ``known[i]`` says whether ``i`` is in the vocabulary (ids may have gaps)."""

    def __init__(self, vocab: Mapping[int, bytes]) -> None:
        self.vocab = vocab
        self.size = len(vocab)
        size = max(vocab, default=-1) + 1
        self.known = np.zeros(size, dtype=bool)
        ids = np.fromiter(vocab, dtype=np.int64, count=len(vocab))
        self.known[ids] = True
        self.lengths = np.zeros(size, dtype=np.int64)
        self.lengths[ids] = np.fromiter(map(len, vocab.values()), dtype=np.int64, count=len(ids))
        self.starts = np.zeros(size, dtype=np.int64)
        np.cumsum(self.lengths[:-1], out=self.starts[1:])
        self.blob = np.frombuffer(b"".join([vocab.get(i, b"") for i in range(size)]), np.uint8)

    def fits(self, vocab: Mapping[int, bytes]) -> bool:
        return self.vocab is vocab and self.size == len(vocab)

    def known_all(self, ids: np.ndarray) -> bool:
        """Whether every id of ``ids`` (int64) is in the vocabulary."""
        if not len(ids):
            return True
        return bool(ids.min() >= 0 and ids.max() < len(self.known) and self.known[ids].all())

    def length(self, ids: np.ndarray) -> int | None:
        """How many bytes ``ids`` (int64) decode to, or None when one is not in the
        vocabulary."""
        return int(self.lengths[ids].sum()) if self.known_all(ids) else None

    def gather(self, ids: np.ndarray) -> bytes | None:
        """The bytes of ``ids`` (int64), or None when one is not in the vocabulary."""
        if not len(ids):
            return b""
        if not self.known_all(ids):
            return None
        lengths = self.lengths[ids]
        out = np.empty(int(lengths.sum()), dtype=np.uint8)
        at = 0
        for i in range(0, len(ids), _STEP):
            step = lengths[i : i + _STEP]
            ends = np.cumsum(step)
            total = int(ends[-1])
            # Each output byte's place in the blob: its token's start, then one on per byte.
            where = np.repeat(self.starts[ids[i : i + _STEP]] - (ends - step), step)
            where += np.arange(total)
            np.take(self.blob, where, out=out[at : at + total])
            at += total
        return out.tobytes()


def _as_int64(ids: np.ndarray | list[int] | tuple[int, ...]) -> np.ndarray | None:
    """``ids`` as an int64 array when that is exact: ints (checked before), or a NumPy array
    of integers; None otherwise (a value out of int64's range, a float array)."""
    if isinstance(ids, np.ndarray):
        if ids.ndim != 1 or ids.dtype.kind not in "iu":
            return None
        if ids.dtype.kind == "u" and len(ids) and ids.max() > np.iinfo(np.int64).max:
            return None
        return ids.astype(np.int64, copy=False)
    try:
        return np.fromiter(ids, dtype=np.int64, count=len(ids))
    except OverflowError:
        return None


def _check_ids(ids: Iterable[object], types: set[type]) -> None:
    """TypeError naming the first id that is not an int (``1.0``, ``"7"``, ``True``);
    ``types`` are the ids' types (each is looked at once)."""
    wrong = {t for t in types if issubclass(t, bool) or not issubclass(t, Integral)}
    if wrong:
        bad = next(i for i in ids if type(i) in wrong)
        raise TypeError(f"token ids must be ints, got {bad!r} ({type(bad).__name__})")


def refuse_unordered(ids: object) -> None:
    """TypeError for a set or a mapping of ids: it has no order to decode in; and for a str or
    bytes, which is text, not ids (each character would be refused as "not an int")."""
    if isinstance(ids, (str, bytes, bytearray)):
        raise TypeError(
            f"decoding takes token ids (a list of ints), not a {type(ids).__name__}: "
            f"{bytes(ids[:40]) if not isinstance(ids, str) else ids[:40]!r}"
        )
    if isinstance(ids, (AbstractSet, Mapping)):
        raise TypeError(
            f"ids must be in order (a list, tuple or array), not a {type(ids).__name__}"
        )
    if isinstance(ids, Integral):
        raise TypeError(f"decoding takes a sequence of token ids: for one id, [{ids}]")
    if isinstance(ids, np.ndarray) and ids.ndim != 1:
        # A 0-d array has no length; a 2-D one's rows would be refused as "not an int".
        one = f": for one id, [{ids.item()}]" if ids.ndim == 0 else ""
        raise TypeError(
            f"token ids must be a one-dimensional array, not one of shape {ids.shape}{one}"
        )


def decode_bytes(
    vocab: Mapping[int, bytes], ids: Iterable[int], cache: dict[str, Any] | None = None
) -> bytes:
    """The bytes of ``ids``, concatenated. An id that is not an int (``1.0``, ``"7"``) raises
    TypeError, one not in ``vocab`` ValueError naming the ids it has; so does a set or a
    mapping of ids, which has no order to decode in (tiktoken raises too). ``cache`` (the
    tokenizer's ``__dict__``) keeps the :class:`ByteTable` for ``vocab`` between calls."""
    refuse_unordered(ids)
    if cache is not None and isinstance(ids, np.ndarray) and len(ids) >= TABLE_FROM:
        # An integer array holds no floats or bools: no per-id type check is needed.
        data = _from_table(vocab, _as_int64(ids), cache)
        if data is not None:
            return data
    if not isinstance(ids, (list, tuple)):
        # A NumPy array's tolist() gives Python ints (or floats, refused below).
        tolist = getattr(ids, "tolist", None)
        ids = tolist() if callable(tolist) else list(ids)
    # subtle: checked before the lookup, which 1.0 would pass (it hashes as 1). Counting the
    # exact ints in a list of the types compares pointers: about half the time of a set of
    # them (1.6M ids: 19 ms against 34).
    if list(map(type, ids)).count(int) != len(ids):
        _check_ids(ids, set(map(type, ids)))
    if cache is not None and len(ids) >= TABLE_FROM:
        data = _from_table(vocab, _as_int64(ids), cache)
        if data is not None:
            return data
    try:
        return b"".join([vocab[i] for i in ids])
    except KeyError:
        bad = int(next(i for i in ids if i not in vocab))
        raise ValueError(f"unknown token id {bad}: {missing_id(bad, vocab)}") from None


def decode_text(
    vocab: Mapping[int, bytes],
    ids: Iterable[int],
    errors: str = "replace",
    cache: dict[str, Any] | None = None,
) -> str:
    """:func:`decode_bytes` of ``ids`` decoded as UTF-8 with ``errors`` (``bytes.decode``'s).
    Under "strict", the UnicodeDecodeError's reason also names the id whose bytes were not
    valid UTF-8 and where it is among ``ids`` (the codec names only a byte position)."""
    if not isinstance(ids, (list, tuple, np.ndarray)):
        refuse_unordered(ids)
        ids = list(ids)  # read twice where the text is not valid UTF-8
    data = decode_bytes(vocab, ids, cache)
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as error:
        sizes = [len(vocab[int(i)]) for i in ids]
        raise naming_the_id(error, data, ids, sizes) from None


def naming_the_id(
    error: UnicodeDecodeError,
    data: bytes,
    ids: Sequence[int] | np.ndarray,
    sizes: Sequence[int],
    skipped: int = 0,
) -> UnicodeDecodeError:
    """``error``, of decoding ``data`` (the bytes of ``ids``, ``sizes`` bytes each, in order,
    but for the first ``skipped``: a decoder's leading space dropped), with a reason that
    also names the id whose bytes were not valid UTF-8 and where it is among ``ids`` (the
    codec names only a byte position)."""
    ends = np.cumsum(sizes) - skipped
    at = int(np.searchsorted(ends, error.start, side="right"))
    where = f"id {int(ids[at])} (ids[{at}])" if at < len(ids) else "the last id"
    reason = f"{error.reason}, in the bytes of {where}"
    return UnicodeDecodeError("utf-8", data, error.start, error.end, reason)


def _from_table(
    vocab: Mapping[int, bytes], ids: np.ndarray | None, cache: dict[str, Any]
) -> bytes | None:
    """The bytes of ``ids`` from ``vocab``'s table, or None where the slow path must answer
    (an unknown id, whose message it writes)."""
    if ids is None:
        return None
    slot = cache.get("_decode_table")
    if not isinstance(slot, _TableSlot):
        slot = cache["_decode_table"] = _TableSlot()
    # subtle: a truncated tokenizer starts from a copy of the full one's __dict__, so the
    # table is checked to be this vocabulary's before it is used.
    if slot.table is None or not slot.table.fits(vocab):
        slot.table = ByteTable(vocab)
    return slot.table.gather(ids)


class _TableSlot:
    """Where a tokenizer keeps its :class:`ByteTable`: pickled empty (a worker process, or a
    tokenizer saved with pickle, builds its own; o200k's is 5 MB)."""

    def __init__(self) -> None:
        self.table: ByteTable | None = None

    def __reduce__(self) -> tuple[type[_TableSlot], tuple[()]]:
        return _TableSlot, ()
