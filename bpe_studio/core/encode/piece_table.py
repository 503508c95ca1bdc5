"""The compiled encoder's piece tables: pieces of code points -> ids, in NumPy arrays.

What it does: :class:`PieceTable` holds the arrays of one table (layout: ``encode_kernel``),
grows them when a kernel stops for room (:meth:`PieceTable.made_room`) and starts afresh
past its bounds, so a cache fed an endless stream stays bounded (about 50 MB at most). The
tokenizer's cache of piece -> ids is one; a ``tokenizer.json``'s whole tokens (looked up
before merging, ``ignore_merges``) another (:meth:`PieceTable.of_pieces`). What it leaves
out: the hashing and probing (``encode_kernel``), when to look up (``compiled``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType

import numpy as np

# A new cache's capacity (entries, code points of keys, ids), doubled as it fills ...
START_ENTRIES = 1 << 12
START_KEYS = 1 << 14
START_VALS = 1 << 13
# ... up to these; past them the cache starts afresh. 500,000 entries as the Python path's
# cache (``merger.CACHE_LIMIT``); keys and ids for pieces of 8 code points on average.
MAX_ENTRIES = 1 << 19
MAX_KEYS = 1 << 22
MAX_VALS = 1 << 21
ENTRIES, KEYS_USED, VALS_USED = 0, 1, 2


def readonly(points: np.ndarray) -> np.ndarray:
    """Code points as every kernel call takes them: uint32, read-only (numba compiles a kernel
    once per array type, and text's code points come from ``numpy.frombuffer``)."""
    points = np.ascontiguousarray(points, dtype=np.uint32)
    if points.flags.writeable:
        points = points.view()
        points.flags.writeable = False
    return points


def _pow2_at_least(n: int) -> int:
    return 1 << max(4, (int(n) - 1).bit_length())


class PieceTable:
    """One piece table's arrays (see ``encode_kernel``); ``arrays`` is what the kernels take."""

    def __init__(self, entries: int, keys: int, vals: int, slots: int | None = None) -> None:
        self.slots = np.full(slots or 2 * _pow2_at_least(entries), -1, np.int64)
        self.hashes = np.zeros(entries, np.int64)
        self.key_at = np.zeros(entries, np.int64)
        self.val_at = np.zeros(entries, np.int64)
        self.sizes = np.zeros(entries, np.int64)
        self.keys = np.zeros(keys, np.uint32)
        self.vals = np.zeros(vals, np.uint32)
        self.meta = np.zeros(3, np.int64)

    @classmethod
    def new_cache(cls) -> PieceTable:
        return cls(START_ENTRIES, START_KEYS, START_VALS)

    @classmethod
    def empty(cls) -> PieceTable:
        """A table with no entries (what the kernels take for "no whole tokens")."""
        return cls(1, 1, 1, slots=2)

    @classmethod
    def of_pieces(
        cls, kernels: ModuleType, cp: np.ndarray, ends: np.ndarray, ids: np.ndarray
    ) -> PieceTable:
        """The table of pieces ``cp[ends[i - 1]:ends[i]]`` -> ``ids[i]`` (one id each)."""
        n = len(ends)
        table = cls(max(n, 1), max(len(cp), 1), max(n, 1))
        ends, ids = ends.astype(np.int64), ids.astype(np.int64)
        kernels.fill_table(table.arrays, readonly(cp), ends, ids)
        return table

    @classmethod
    def of_tokens(
        cls, kernels: ModuleType, tokens: Mapping[bytes, int], ascii_only: bool
    ) -> PieceTable:
        """The table of the tokens (bytes -> id) as pieces of code points: those of ASCII only
        when ``ascii_only`` (all that is looked up then), else every one that is valid UTF-8
        (no piece of text is made of the others)."""
        if ascii_only:
            chosen = [(t, i) for t, i in tokens.items() if t.isascii()]
            joined = b"".join(t for t, _ in chosen)
            # subtle: an ASCII byte is its own code point.
            cp = np.frombuffer(joined, dtype=np.uint8).astype(np.uint32)
            lens = np.fromiter((len(t) for t, _ in chosen), dtype=np.int64, count=len(chosen))
            ids = np.fromiter((i for _, i in chosen), dtype=np.int64, count=len(chosen))
            return cls.of_pieces(kernels, cp, np.cumsum(lens), ids)
        texts: list[str] = []
        kept: list[int] = []
        for token, idx in tokens.items():
            try:
                texts.append(token.decode("utf-8"))
            except UnicodeDecodeError:
                continue
            kept.append(idx)
        cp = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
        ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))
        return cls.of_pieces(kernels, cp, ends, np.array(kept, dtype=np.int64))

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        return (self.slots, self.hashes, self.key_at, self.val_at, self.sizes, self.keys,
                self.vals, self.meta)  # fmt: skip

    @property
    def entries(self) -> int:
        return int(self.meta[ENTRIES])

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays)

    def made_room(self, kernels: ModuleType, key_room: int, val_room: int) -> PieceTable:
        """This table with room for one more entry of ``key_room`` code points and
        ``val_room`` ids: grown (each array that is short, doubled), or, past the bounds, a
        new empty one."""
        used = self.meta
        short_entries = used[ENTRIES] + 1 > len(self.hashes) or 2 * (used[ENTRIES] + 1) > len(
            self.slots
        )
        short_keys = used[KEYS_USED] + key_room > len(self.keys)
        short_vals = used[VALS_USED] + val_room > len(self.vals)
        too_big = (
            (short_entries and 2 * len(self.hashes) > MAX_ENTRIES)
            or (short_keys and 2 * len(self.keys) > MAX_KEYS)
            or (short_vals and 2 * len(self.vals) > MAX_VALS)
        )
        if too_big:
            return PieceTable.new_cache()
        return self.grown(kernels, short_entries, short_keys, short_vals)

    def grown(
        self, kernels: ModuleType, entries: bool = False, keys: bool = False, vals: bool = False
    ) -> PieceTable:
        """A copy with the entry arrays, the keys or the ids doubled (as asked)."""
        out = object.__new__(PieceTable)
        n_entries = 2 * len(self.hashes) if entries else len(self.hashes)
        for name in ("hashes", "key_at", "val_at", "sizes"):
            old = getattr(self, name)
            new = np.zeros(n_entries, np.int64)
            new[: len(old)] = old
            setattr(out, name, new)
        for name, more in (("keys", keys), ("vals", vals)):
            old = getattr(self, name)
            if more:
                new = np.zeros(2 * len(old), np.uint32)
                new[: len(old)] = old
                old = new
            setattr(out, name, old)
        out.meta = self.meta.copy()
        if entries:
            out.slots = np.full(2 * _pow2_at_least(n_entries), -1, np.int64)
            kernels.rehash(out.arrays, out.slots)
        else:
            out.slots = self.slots
        return out
