"""The compiled encoder's piece tables: pieces of code points -> ids, in NumPy arrays.

What it does: :class:`PieceTable` holds the arrays of one table (layout: ``encode_kernel``),
grows them when a kernel stops for room (:meth:`PieceTable.made_room`) and starts afresh
past its bounds, so a cache fed an endless stream stays bounded (about 50 MB at most). The
tokenizer's cache of piece -> ids is one; its whole tokens (looked up before merging)
another (:meth:`PieceTable.of_tokens`). :class:`ShortTable` is the same for short pieces
(eight characters or fewer below U+00FF, most of a text's), packed in one integer each: a
lookup reads one cache line where a piece table's reads three or four. What it leaves
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
# A short table's slots at first (256 KB, its pages untouched until written) and at most
# (16 MB, 524,288 entries as MAX_ENTRIES; past them it starts afresh).
START_SHORT_SLOTS = 1 << 14
MAX_SHORT_SLOTS = 1 << 20


def readonly(points: np.ndarray) -> np.ndarray:
    """Code points as every kernel call takes them: uint32, read-only (numba compiles a kernel
    once per array type, and text's code points come from ``numpy.frombuffer``)."""
    points = np.ascontiguousarray(points, dtype=np.uint32)
    if points.flags.writeable:
        points = points.view()
        points.flags.writeable = False
    return points


def pow2_at_least(n: int) -> int:
    """The least power of two, 16 or more, that is at least ``n``."""
    return 1 << max(4, (int(n) - 1).bit_length())


class PieceTable:
    """One piece table's arrays (see ``encode_kernel``); ``arrays`` is what the kernels take."""

    def __init__(self, entries: int, keys: int, vals: int, slots: int | None = None) -> None:
        self.slots = np.full(2 * (slots or 2 * pow2_at_least(entries)), -1, np.int64)
        self.ents = np.zeros(4 * entries, np.int64)
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
    def of_tokens(
        cls,
        kernels: ModuleType,
        tokens: Mapping[bytes, int],
        ascii_only: bool,
        skip_short: bool = False,
    ) -> PieceTable:
        """The table of the tokens (bytes -> id) as pieces of code points: those that are
        UTF-8 (no piece of text is made of the others), of ASCII only when ``ascii_only``
        (all that is looked up then), and none that is a short piece when ``skip_short``
        (those are in a :class:`ShortTable`). Built in compiled code from the tokens' bytes joined:
        a Python loop over o200k's 200,000 tokens took longer than encoding a megabyte."""
        data = np.frombuffer(b"".join(tokens), dtype=np.uint8)
        sizes = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        ids = np.fromiter(tokens.values(), dtype=np.int64, count=len(tokens))
        high = np.zeros(len(data) + 1, dtype=np.int64)
        np.cumsum(data >= 0x80, out=high[1:])
        ascii = high[offsets[1:]] == high[offsets[:-1]]
        # Sized for the tokens it may hold: ASCII only (a third of o200k's), and without the
        # short ones (four fifths of those): a smaller table is a lookup that more often
        # stays in the processor's caches.
        wanted = ascii if ascii_only else np.ones(len(tokens), dtype=bool)
        if skip_short:
            wanted &= ~(ascii & (sizes <= 8))
        n = max(int(np.count_nonzero(wanted)), 1)
        table = cls(n, max(int(sizes[wanted].sum()), 1), n)
        kernels.fill_tokens(table.arrays, data, offsets, ids, ascii_only, skip_short)
        return table

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        return self.slots, self.ents, self.keys, self.vals, self.meta

    @property
    def entries(self) -> int:
        return int(self.meta[ENTRIES])

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays)

    def short_of(self, key_room: int, val_room: int) -> bool:
        """Whether one more entry of ``key_room`` code points and ``val_room`` ids may not fit
        (the kernels' own test, ``encode_kernel._has_room``)."""
        used = self.meta
        return bool(
            used[ENTRIES] + 1 > len(self.ents) // 4
            or 2 * (used[ENTRIES] + 1) > len(self.slots) // 2
            or used[KEYS_USED] + key_room > len(self.keys)
            or used[VALS_USED] + val_room > len(self.vals)
        )

    def made_room(self, kernels: ModuleType, key_room: int, val_room: int) -> PieceTable:
        """This table with room for one more entry of ``key_room`` code points and
        ``val_room`` ids: grown (each array that is short, doubled), or, past the bounds, a
        new empty one."""
        used = self.meta
        capacity = len(self.ents) // 4
        short_entries = (
            used[ENTRIES] + 1 > capacity or 2 * (used[ENTRIES] + 1) > len(self.slots) // 2
        )
        short_keys = used[KEYS_USED] + key_room > len(self.keys)
        short_vals = used[VALS_USED] + val_room > len(self.vals)
        too_big = (
            (short_entries and 2 * capacity > MAX_ENTRIES)
            or (short_keys and 2 * len(self.keys) > MAX_KEYS)
            or (short_vals and 2 * len(self.vals) > MAX_VALS)
        )
        if too_big:
            return PieceTable.new_cache()
        return self.grown(kernels, short_entries, short_keys, short_vals)

    def grown(
        self, kernels: ModuleType, entries: bool = False, keys: bool = False, vals: bool = False
    ) -> PieceTable:
        """A copy with the entries, the keys or the ids doubled (as asked)."""
        out = object.__new__(PieceTable)
        out.ents = _doubled(self.ents) if entries else self.ents
        out.keys = _doubled(self.keys) if keys else self.keys
        out.vals = _doubled(self.vals) if vals else self.vals
        out.meta = self.meta.copy()
        if entries:
            out.slots = np.full(2 * 2 * pow2_at_least(len(out.ents) // 4), -1, np.int64)
            kernels.rehash(out.arrays, out.slots)
        else:
            out.slots = self.slots
        return out


class ShortTable:
    """A table of short pieces (``encode_kernel._short_key``): ``slots`` open addressing,
    slot ``i`` a packed piece at ``slots[2 * i]`` (0: empty) and its value after it (packed
    ids, or one id for the whole tokens), filled to half its slots at most; ``meta`` =
    [entries]. ``arrays`` is what the kernels take."""

    def __init__(self, slots: int) -> None:
        self.slots = np.zeros(2 * slots, np.int64)
        self.meta = np.zeros(1, np.int64)

    @classmethod
    def new_cache(cls) -> ShortTable:
        return cls(START_SHORT_SLOTS)

    @classmethod
    def empty(cls) -> ShortTable:
        """No slots: the kernels then keep every piece in the piece table."""
        return cls(0)

    @classmethod
    def of_tokens(
        cls, kernels: ModuleType, tokens: Mapping[bytes, int], ascii_only: bool
    ) -> ShortTable:
        """The tokens (bytes -> id) that are short pieces as UTF-8, of ASCII only when
        ``ascii_only`` (:meth:`PieceTable.of_tokens`' rule)."""
        data = np.frombuffer(b"".join(tokens), dtype=np.uint8)
        sizes = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        ids = np.fromiter(tokens.values(), dtype=np.int64, count=len(tokens))
        # Sized for the tokens that may be short pieces: of eight bytes or fewer, all ASCII
        # (``ascii_only``), else of up to 16 bytes (eight characters of two bytes).
        small = sizes <= (8 if ascii_only else 16)
        if ascii_only:
            high = np.zeros(len(data) + 1, dtype=np.int64)
            np.cumsum(data >= 0x80, out=high[1:])
            small &= high[offsets[1:]] == high[offsets[:-1]]
        table = cls(2 * pow2_at_least(int(np.count_nonzero(small))))
        kernels.fill_short_tokens(table.arrays, data, offsets, ids, ascii_only)
        return table

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self.slots, self.meta

    @property
    def entries(self) -> int:
        return int(self.meta[0])

    def nbytes(self) -> int:
        return self.slots.nbytes + self.meta.nbytes

    def full(self) -> bool:
        """Whether one more entry would fill more than half the slots (the kernel's test);
        never for a table of no slots (the kernels do not use it)."""
        return len(self.slots) > 0 and 2 * (self.entries + 1) > len(self.slots) // 2

    def made_room(self, kernels: ModuleType) -> ShortTable:
        """This table with twice the slots and the same entries, or, past its bound, a new
        empty one."""
        n = len(self.slots) // 2
        if 2 * n > MAX_SHORT_SLOTS:
            return ShortTable.new_cache()
        out = ShortTable(2 * n)
        kernels.rehash_short(self.arrays, out.slots)
        out.meta[:] = self.meta
        return out


def _doubled(array: np.ndarray) -> np.ndarray:
    new = np.zeros(2 * len(array), array.dtype)
    new[: len(array)] = array
    return new
