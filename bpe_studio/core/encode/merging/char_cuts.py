"""Where a run of three-byte characters (Han, kana, Hangul, ...) can be cut without changing its
tokens: between two characters that no token of the vocabulary straddles.

What it does: :class:`CharCuts` answers, for many adjacent character pairs at once, whether
the boundary between them is safe. Why a safe cut is exact: every merge makes a vocabulary
token, so a merge joining bytes across a boundary makes a token holding some (non-empty) end
of the left character followed by some (non-empty) start of the right one. When no vocabulary
token holds such bytes, no merge ever joins across the boundary: each side's bytes then take
the same merges, in the same order, as they would alone (the lowest-ranked pair of the whole
is the lowest of one side, and the leftmost of equal ranks is the leftmost on its side), so
the run's ids are the two sides' ids one after the other.

The vocabulary's straddles are read once, per position in a token where a character starts
(a lead byte): what lies before it within one character (``s``: the character's last one or
two bytes, or the whole character) and what lies after it within one character (``p``: its
first one or two bytes, or the whole character). Boundary ``x|y`` is unsafe iff some ``(s,
p)`` has ``s`` ending ``x`` and ``p`` starting ``y``. The test is split by how much of each
character a straddle holds: partial both sides (one table over ``x``'s last two bytes and
``y``'s first two), partial ``x`` with whole ``y`` and whole ``x`` with partial ``y`` (a bit
mask per character, widened to "any such straddle with this byte": never less safe), and
whole both sides (a sorted key array).

What it leaves out: boundaries next to a character of another width (ASCII, two- or four-byte
characters): never reported safe. Merging the parts (``merger``, ``char_bpe``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

_THREE_BYTE_MIN = 0x800  # the first code point UTF-8 writes in three bytes
_BMP = 0x10000
_HASH_BITS = 22
_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing
_KERNEL_MIX = np.int64(-7046029254386353131)  # the same constant as a signed integer
# Flags of a character in ``CutTables.per_char`` (above its 16 bits of lead bytes): two per
# partial table from TABLE_LEFT on, two for the pairs of whole characters at WHOLE_LEFT.
TABLE_LEFT = 16
WHOLE_LEFT = 24
# Bits of ``CutTables.clean``: the character has no straddle as x (or as y) at all, no
# lead-byte mask, no last-byte mask.
CLEAN_LEFT, CLEAN_RIGHT, NO_LEAD_MASK, NO_LAST_MASK = 1, 2, 4, 8


def filter_slot(keys: np.ndarray, bits: int) -> np.ndarray:
    """The bit of each key (int64) in a filter of ``2 ** bits``: its top ``bits`` bits times
    ``_KERNEL_MIX`` (wrapping), as ``encode_kernel.whole_pair_slot`` computes it."""
    with np.errstate(over="ignore"):
        mixed = keys.astype(np.int64) * _KERNEL_MIX
    return (mixed >> np.int64(64 - bits)) & np.int64((1 << bits) - 1)


def _hash(keys: np.ndarray) -> np.ndarray:
    return ((keys.astype(np.uint64) * _HASH_MUL) >> np.uint64(64 - _HASH_BITS)).astype(np.int64)


class CharCuts:
    """Safe boundaries between three-byte characters; see the module docstring."""

    def __init__(self, tokens: Iterable[bytes]) -> None:
        tokens = list(tokens)
        data = np.frombuffer(b"".join(tokens), dtype=np.uint8)
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        token_end = np.cumsum(lengths)
        # k: a three-byte lead byte inside a token, not its first byte; with where its token
        # starts and ends (exclusive).
        k = np.flatnonzero((data & 0xF0) == 0xE0)
        owner = np.searchsorted(token_end, k, side="right")
        stop = token_end[owner]
        first = stop - lengths[owner]
        inner = k > first
        k, first, stop = k[inner], first[inner], stop[inner]

        def at(offset: int) -> tuple[np.ndarray, np.ndarray]:
            """Byte ``k + offset`` for each ``k`` (0 where outside its token) and whether it
            is inside."""
            j = k + offset
            inside = (j >= first) & (j < stop)
            return np.where(inside, data[np.clip(j, 0, len(data) - 1)], 0).astype(np.int64), inside

        b1, _ = at(-1)
        b2, in2 = at(-2)
        b3, in3 = at(-3)
        n1, has1 = at(1)
        n2, has2 = at(2)
        c1, c2 = (b1 & 0xC0) == 0x80, (b2 & 0xC0) == 0x80
        # The left character's end: whole (lead, cont, cont), or the token starts inside it
        # with one or two continuation bytes. Anything else matches no three-byte character.
        left_whole = c1 & c2 & in3 & ((b3 & 0xF0) == 0xE0)
        left_one = c1 & ~in2
        left_two = c1 & c2 & ~in3
        # The right character's start: whole, or the token ends inside it.
        d1, d2 = has1 & ((n1 & 0xC0) == 0x80), has2 & ((n2 & 0xC0) == 0x80)
        right_whole = d1 & d2
        right_one = ~has1
        right_two = d1 & ~has2
        lead = data[k].astype(np.int64)
        x = (b3 & 0x0F) << 12 | (b2 & 0x3F) << 6 | (b1 & 0x3F)
        y = (lead & 0x0F) << 12 | (n1 & 0x3F) << 6 | (n2 & 0x3F)
        x_tail = (b2 & 0x3F) << 6 | (b1 & 0x3F)  # x & 0xFFF: its last two bytes
        y_head = (lead & 0x0F) << 6 | (n1 & 0x3F)  # y >> 6: its first two bytes
        last = b1 & 0x3F  # x & 0x3F: its last byte
        left_part = left_one | left_two
        right_part = right_one | right_two

        # Partial on both sides: one table per pair of widths, over x's last one or two
        # bytes and y's first one or two (x & 0x3F or x & 0xFFF; y >> 12 or y >> 6).
        self._partial: list[tuple[int, int, int, np.ndarray]] = []
        for x_bits, x_key, left in ((6, last, left_one), (12, x_tail, left_two)):
            for y_shift, y_key, right in ((12, lead & 0x0F, right_one), (6, y_head, right_two)):
                y_bits = 16 - y_shift
                m = left & right
                table = np.zeros(1 << (x_bits + y_bits), dtype=bool)
                table[x_key[m] << y_bits | y_key[m]] = True
                self._partial.append(((1 << x_bits) - 1, y_bits, y_shift, table))
        # Partial x, whole y: per y, a bit per last byte of x (for a two-byte end, its last
        # byte: wider, never less safe).
        m = left_part & right_whole
        self._ends_before = np.zeros(_BMP, dtype=np.uint64)
        np.bitwise_or.at(self._ends_before, y[m], np.uint64(1) << last[m].astype(np.uint64))
        # Whole x, partial y: per x, a bit per lead byte of y.
        m = left_whole & right_part
        self._starts_after = np.zeros(_BMP, dtype=np.uint16)
        np.bitwise_or.at(self._starts_after, x[m], (1 << (lead[m] & 0x0F)).astype(np.uint16))
        # Whole on both sides: sorted keys, and which characters have any.
        m = left_whole & right_whole
        self._whole = np.unique(x[m] << 16 | y[m])
        # A bit per hash value of the keys: most pairs looked up are not among them.
        self._whole_hashed = np.zeros(1 << _HASH_BITS, dtype=bool)
        self._whole_hashed[_hash(self._whole)] = True

    def safe(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """For code points ``left[i]``, ``right[i]`` (adjacent in a text): whether the text may
        be cut between them (False for any pair not both of three bytes)."""
        ok = (left >= _THREE_BYTE_MIN) & (left < _BMP) & (right >= _THREE_BYTE_MIN) & (right < _BMP)
        x = np.where(ok, left, _THREE_BYTE_MIN)
        y = np.where(ok, right, _THREE_BYTE_MIN)
        bad = np.zeros(len(x), dtype=bool)
        for x_mask, y_bits, y_shift, table in self._partial:
            bad |= table[(x & x_mask) << y_bits | (y >> y_shift)]
        bad |= ((self._ends_before[y] >> (x & 0x3F).astype(np.uint64)) & np.uint64(1)).astype(bool)
        bad |= ((self._starts_after[x] >> ((y >> 12) & 0x0F).astype(np.uint16)) & 1).astype(bool)
        keys = x << 16 | y
        check = np.flatnonzero(self._whole_hashed[_hash(keys)])
        if len(check):
            keys = keys[check]
            at = np.minimum(np.searchsorted(self._whole, keys), len(self._whole) - 1)
            bad[check[self._whole[at] == keys]] = True
        return ok & ~bad

    def kernel_tables(self, filter_bits: int) -> CutTables:
        """These tables as the compiled encoder reads them (``encode_kernel._cut_between``),
        laid out so that a test nearly always reads only its two characters' entries (the
        vocabulary's straddles are few: o200k's partial tables hold 6 of 4.3 million): per
        BMP character ``c``, ``per_char[2 * c]`` its mask of last bytes (whole ``c`` after
        a partial ``x``), ``per_char[2 * c + 1]`` its mask of lead bytes (a partial ``y``
        after whole ``c``, bits 0-15) and flags: for partial table ``t``, whether ``c``'s key
        in it (as ``x``) starts some straddle of it (bit ``TABLE_LEFT + 2 * t``) and whether
        its key (as ``y``) ends one (the next bit); whether ``c`` is the left
        (``WHOLE_LEFT``) or the right (the next bit) character of some pair of whole
        characters. A table is read only when both characters' flags meet. The partial
        tables as bits one after the other, per table (mask of x, bits of y, shift of y,
        where its bits start); the pairs of whole characters sorted, and a filter of ``2 **
        filter_bits`` bits set at :func:`filter_slot` of each."""
        params = np.zeros((len(self._partial), 4), dtype=np.int64)
        chars = np.arange(_BMP, dtype=np.int64)
        flags = self._starts_after.astype(np.int64)
        at = 0
        for t, (x_mask, y_bits, y_shift, table) in enumerate(self._partial):
            params[t] = (x_mask, y_bits, y_shift, at)
            at += len(table)
            grid = table.reshape(x_mask + 1, 1 << y_bits)
            lefts: np.ndarray = np.any(grid, axis=1)
            rights: np.ndarray = np.any(grid, axis=0)
            flags |= lefts[chars & x_mask].astype(np.int64) << (TABLE_LEFT + 2 * t)
            flags |= rights[chars >> y_shift].astype(np.int64) << (TABLE_LEFT + 2 * t + 1)
        bits = np.packbits(np.concatenate([t[3] for t in self._partial]), bitorder="little")
        whole = self._whole.astype(np.int64)
        left = np.zeros(_BMP, dtype=np.int64)
        left[whole >> 16] = 1
        right = np.zeros(_BMP, dtype=np.int64)
        right[whole & 0xFFFF] = 1
        flags |= left << WHOLE_LEFT | right << (WHOLE_LEFT + 1)
        per_char = np.empty(2 * _BMP, dtype=np.int64)
        per_char[0::2] = self._ends_before.view(np.int64)
        per_char[1::2] = flags
        seen = np.zeros(1 << filter_bits, dtype=bool)
        seen[filter_slot(whole, filter_bits)] = True
        # One byte per character for the common case (a few pages, where ``per_char`` is a
        # megabyte): no lead-byte mask, no left flag, no last-byte mask, no right flag.
        left_flags = 1 << WHOLE_LEFT
        for t in range(len(self._partial)):
            left_flags |= 1 << (TABLE_LEFT + 2 * t)
        no_mask_x = (flags & 0xFFFF) == 0
        no_mask_y = per_char[0::2] == 0
        clean = (
            (no_mask_x & ((flags & left_flags) == 0)).astype(np.uint8) * CLEAN_LEFT
            | (no_mask_y & ((flags & (left_flags << 1)) == 0)).astype(np.uint8) * CLEAN_RIGHT
            | no_mask_x.astype(np.uint8) * NO_LEAD_MASK
            | no_mask_y.astype(np.uint8) * NO_LAST_MASK
        )
        return CutTables(params, bits, per_char, whole, np.packbits(seen, bitorder="little"), clean)

    def parts(self, pieces: Sequence[str]) -> Parts:
        """``pieces`` cut at every safe boundary (see :class:`Parts`)."""
        text = "".join(pieces)
        points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
        chars = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        # cut[i]: a part ends after character i (at every piece's end, and where safe).
        cut = np.zeros(len(points), dtype=bool)
        cut[:-1] = self.safe(points[:-1], points[1:])
        cut[np.cumsum(chars) - 1] = True
        stops = np.flatnonzero(cut) + 1
        starts = np.concatenate(([0], stops[:-1]))
        per_piece = np.add.reduceat(cut.astype(np.int64), np.cumsum(chars) - chars)
        return Parts(text, points, starts, stops, per_piece)


class Parts(NamedTuple):
    """Pieces cut into parts: ``text`` (the pieces joined) and its code points; part ``i`` is
    ``text[starts[i]:stops[i]]``; piece ``j`` is ``per_piece[j]`` parts, in order."""

    text: str
    points: np.ndarray
    starts: np.ndarray
    stops: np.ndarray
    per_piece: np.ndarray


class CutTables(NamedTuple):
    """:meth:`CharCuts.kernel_tables`: what the compiled test of a boundary reads."""

    params: np.ndarray
    bits: np.ndarray
    per_char: np.ndarray
    whole: np.ndarray
    seen: np.ndarray
    clean: np.ndarray

    @classmethod
    def none(cls) -> CutTables:
        """No tables (no cut anywhere), of the same types: numba compiles one kernel."""
        return cls(
            np.zeros((0, 4), np.int64),
            np.zeros(0, np.uint8),
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(0, np.uint8),
            np.zeros(0, np.uint8),
        )
