"""Counting pieces without a Python object per piece (numba): in a worker, the pieces of a
text's stretches; in the process that adds the workers' counts up, a table of byte strings.

What it does: :func:`count_pieces` scans stretches of code points (``scan_kernels``) and counts
each distinct piece in an open-addressing hash table keyed by the piece's code points (where
it first occurs, its length), and :func:`packed_counts` writes the distinct pieces as UTF-8
joined by 0xFF, a byte UTF-8 never holds (the packed form ``corpus.counting`` sends between
processes). :func:`tally_add` adds such packed counts into a table of byte strings held in
flat arrays (``corpus.tally`` keeps them), :func:`tally_counts` gives its counts and
:func:`tally_packed` writes it out packed.
Every kernel is compiled with nogil=True and cached in the user's cache folder.
What it leaves out: the patterns (``scan_kernels``), when counting is compiled
(``corpus.counting``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..io.kernel_options import helper
from ..io.numba_cache import cache_in_user_dir
from .scan_kernels import scan_into

_SEPARATOR = 0xFF


_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@helper
def _hash(p, a, b):  # type: ignore[no-untyped-def]
    """FNV-1a over ``p[a:b]`` (code points or bytes), its high bits folded in (the table
    takes the low ones); never 0."""
    h = _FNV_OFFSET
    for j in range(a, b):
        h = (h ^ np.uint64(p[j])) * _FNV_PRIME
    return (h ^ (h >> np.uint64(29))) | np.uint64(1)


@helper
def _same(p, a, b, c):  # type: ignore[no-untyped-def]
    """Whether ``p[a:b]`` equals ``p[c:c + b - a]``."""
    for j in range(b - a):
        if p[a + j] != p[c + j]:
            return False
    return True


@njit(nogil=True)
def _grow(slots, size, hashes):  # type: ignore[no-untyped-def]
    bigger = np.full(slots.size * 2, -1, np.int32)
    mask = np.uint64(bigger.size - 1)
    for u in range(size):
        if hashes[u] == 0:
            continue  # not in this table (count_pieces' short pieces)
        h = hashes[u] & mask
        while bigger[h] >= 0:
            h = (h + np.uint64(1)) & mask
        bigger[h] = u
    return bigger


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_SHORT = 7  # code points of a short piece: each under 256, packed with the length in 64 bits


@helper
def _short_key(p, a, b):  # type: ignore[no-untyped-def]
    """``p[a:b]`` packed in 64 bits (a byte per code point, the length in the top byte), or 0
    when it does not fit (longer than :data:`_SHORT`, or a code point of 256 or more)."""
    if b - a > _SHORT:
        return np.uint64(0)
    key = np.uint64(b - a) << np.uint64(56)
    for j in range(a, b):
        c = p[j]
        if c > 255:
            return np.uint64(0)
        key |= np.uint64(c) << np.uint64(8 * (j - a))
    return key


@njit(nogil=True)
def _grow_short(keys, index, bits):  # type: ignore[no-untyped-def]
    """The short pieces' table (``1 << bits`` slots; ``keys`` 0: free) at twice the size."""
    bigger_keys = np.zeros(keys.size * 2, np.uint64)
    bigger_index = np.empty(keys.size * 2, np.int64)
    shift = np.uint64(64 - (bits + 1))
    mask = np.uint64(bigger_keys.size - 1)
    for s in range(keys.size):
        if keys[s]:
            r = (keys[s] * _GOLDEN) >> shift
            while bigger_keys[r]:
                r = (r + np.uint64(1)) & mask
            bigger_keys[r], bigger_index[r] = keys[s], index[s]
    return bigger_keys, bigger_index


@njit(nogil=True)
def count_pieces(kinds, p, t, starts, stops):  # type: ignore[no-untyped-def]
    """Count the pieces of the stretches ``p[starts[j]:stops[j]]``: returns ``(first, lens,
    counts)``, for each distinct piece where it first occurs in ``p``, its length and how
    often it occurs, in order of first occurrence.

    Two hash tables share those lists: short pieces (most of them: " the", "ing", ",") are
    keyed by their code points packed in 64 bits, compared in the table itself; the others by
    a hash of their code points, compared with their first occurrence."""
    longest = 0
    for j in range(starts.size):
        longest = max(longest, stops[j] - starts[j])
    ends = np.empty(longest, np.int64)
    cap = 1024
    first = np.empty(cap, np.int64)
    lens = np.empty(cap, np.int64)
    counts = np.empty(cap, np.int64)
    hashes = np.empty(cap, np.uint64)
    slots = np.full(4 * cap, -1, np.int32)
    short_bits = 12
    short_keys = np.zeros(1 << short_bits, np.uint64)
    short_index = np.empty(1 << short_bits, np.int64)
    shorts = longs = 0
    size = 0
    for j in range(starts.size):
        a = starts[j]
        m = scan_into(kinds, p, t, a, stops[j], ends, 0)
        for q in range(m):
            b = ends[q]
            key = _short_key(p, a, b)
            h = np.uint64(0)  # a short piece's entry has hash 0 (never a long one's)
            found = -1
            if key:
                shift = np.uint64(64 - short_bits)
                mask = np.uint64(short_keys.size - 1)
                r = (key * _GOLDEN) >> shift
                while short_keys[r]:
                    if short_keys[r] == key:
                        found = short_index[r]
                        break
                    r = (r + np.uint64(1)) & mask
            else:
                h = _hash(p, a, b)
                mask = np.uint64(slots.size - 1)
                r = h & mask
                while slots[r] >= 0:
                    u = slots[r]
                    if hashes[u] == h and lens[u] == b - a and _same(p, a, b, first[u]):
                        found = u
                        break
                    r = (r + np.uint64(1)) & mask
            if found >= 0:
                counts[found] += 1
                a = b
                continue
            # A new piece: listed, then indexed at the free slot r of its table.
            if size == cap:
                cap *= 2
                first = _resized(first, cap)
                lens = _resized(lens, cap)
                counts = _resized(counts, cap)
                hashes = _resized(hashes, cap)
            first[size], lens[size], counts[size], hashes[size] = a, b - a, 1, h
            if key:
                short_keys[r], short_index[r] = key, size
                shorts += 1
                if 2 * shorts > short_keys.size:
                    short_keys, short_index = _grow_short(short_keys, short_index, short_bits)
                    short_bits += 1
            else:
                slots[r] = size
                longs += 1
                if 2 * longs > slots.size:
                    slots = _grow(slots, size + 1, hashes)
            size += 1
            a = b
    return first[:size].copy(), lens[:size].copy(), counts[:size].copy()


@njit(nogil=True)
def _resized(array, size):  # type: ignore[no-untyped-def]
    bigger = np.empty(size, array.dtype)
    bigger[: array.size] = array
    return bigger


@helper
def _utf8_len(c):  # type: ignore[no-untyped-def]
    if c < 0x80:
        return 1
    if c < 0x800:
        return 2
    if c < 0x10000:
        return 3
    return 4


@njit(nogil=True)
def packed_counts(p, first, lens):  # type: ignore[no-untyped-def]
    """The pieces ``p[first[u]:first[u] + lens[u]]`` as UTF-8, joined by 0xFF (a byte UTF-8
    never holds), and True; or an empty array and False when one holds a surrogate (UTF-8
    cannot encode it)."""
    total = max(first.size - 1, 0)
    for u in range(first.size):
        for j in range(first[u], first[u] + lens[u]):
            if 0xD800 <= p[j] <= 0xDFFF:
                return np.empty(0, np.uint8), False
            total += _utf8_len(p[j])
    out = np.empty(total, np.uint8)
    w = 0
    for u in range(first.size):
        if u:
            out[w] = _SEPARATOR
            w += 1
        for j in range(first[u], first[u] + lens[u]):
            c = p[j]
            if c < 0x80:
                out[w] = c
                w += 1
            elif c < 0x800:
                out[w] = 0xC0 | (c >> 6)
                out[w + 1] = 0x80 | (c & 0x3F)
                w += 2
            elif c < 0x10000:
                out[w] = 0xE0 | (c >> 12)
                out[w + 1] = 0x80 | ((c >> 6) & 0x3F)
                out[w + 2] = 0x80 | (c & 0x3F)
                w += 3
            else:
                out[w] = 0xF0 | (c >> 18)
                out[w + 1] = 0x80 | ((c >> 12) & 0x3F)
                out[w + 2] = 0x80 | ((c >> 6) & 0x3F)
                out[w + 3] = 0x80 | (c & 0x3F)
                w += 4
    return out, True


@helper
def _same_bytes(arena, a, tokens, c, length):  # type: ignore[no-untyped-def]
    for j in range(length):
        if arena[a + j] != tokens[c + j]:
            return False
    return True


# A tally's index: four int64 per slot, the key in two (a string of up to _INLINE bytes held
# in them, its length + 1 in the top byte of the second; a longer one as its hash and _LONG),
# the string's number and its count. A second word of 0 marks a free slot.
_INLINE = 15
_LONG = np.int64(0xFF) << np.int64(56)


@helper
def _inline_key(tokens, c, e):  # type: ignore[no-untyped-def]
    """``tokens[c:e]`` (at most _INLINE bytes) as the two words of its key."""
    a = np.int64(0)
    b = np.int64(e - c + 1) << np.int64(56)
    for j in range(c, min(e, c + 8)):
        a |= np.int64(tokens[j]) << np.int64(8 * (j - c))
    for j in range(c + 8, e):
        b |= np.int64(tokens[j]) << np.int64(8 * (j - c - 8))
    return a, b


@helper
def _home(a, b, mask):  # type: ignore[no-untyped-def]
    """The first slot to probe for the key ``(a, b)``."""
    h = np.uint64(a) * _GOLDEN ^ np.uint64(b) * _FNV_PRIME
    return np.int64((h ^ (h >> np.uint64(31))) & np.uint64(mask))


@njit(nogil=True)
def _grow_index(slots):  # type: ignore[no-untyped-def]
    """The tally's index at twice the size."""
    bigger = np.zeros(2 * slots.size, np.int64)
    mask = bigger.size // 4 - 1
    for s in range(0, slots.size, 4):
        if slots[s + 1]:
            r = _home(slots[s], slots[s + 1], mask)
            while bigger[4 * r + 1]:
                r = (r + 1) & mask
            bigger[4 * r : 4 * r + 4] = slots[s : s + 4]
    return bigger


@njit(nogil=True)
def tally_add(arena, offs, slots, size, tokens, freqs):  # type: ignore[no-untyped-def]
    """Add packed counts (``tokens``: byte strings joined by 0xFF, ``freqs`` their counts)
    into the table: ``arena`` holds the distinct strings back to back, string ``u`` being
    ``arena[offs[u]:offs[u + 1]]``; ``slots`` is the open-addressing index (four words a
    slot: the key, the string's number, its count; see _INLINE), ``size`` the strings held.
    Returns the arrays (new ones where they grew), the new size and the positions added (the
    bytes of the new strings of two bytes or more: what the merge engines' size is counted
    in). :func:`tally_counts` gives the counts in the strings' order.

    subtle: on a large corpus the table outgrows the caches and a lookup costs its memory
    reads: a string of up to _INLINE bytes (four in five of those a chunk sends) is found,
    compared and counted in its slot alone; a longer one reads its bytes in the arena too."""
    positions = 0
    c = 0
    mask = slots.size // 4 - 1
    for q in range(freqs.size):
        e = c
        while e < tokens.size and tokens[e] != _SEPARATOR:
            e += 1
        length = e - c
        inline = length <= _INLINE
        if inline:
            a, b = _inline_key(tokens, c, e)
        else:
            a, b = np.int64(_hash(tokens, c, e)), _LONG
        r = _home(a, b, mask)
        while True:
            w = 4 * r
            if slots[w + 1] == 0:
                if size + 2 > offs.size:
                    offs = _resized(offs, 2 * offs.size)
                start = offs[size]
                if start + length > arena.size:
                    arena = _resized(arena, max(2 * arena.size, start + length))
                arena[start : start + length] = tokens[c:e]
                offs[size + 1] = start + length
                slots[w], slots[w + 1], slots[w + 2], slots[w + 3] = a, b, size, freqs[q]
                size += 1
                if length > 1:
                    positions += length
                if 2 * size > mask + 1:
                    slots = _grow_index(slots)
                    mask = slots.size // 4 - 1
                break
            if slots[w] == a and slots[w + 1] == b:
                u = slots[w + 2]
                a0 = offs[u]
                if inline or (
                    offs[u + 1] - a0 == length and _same_bytes(arena, a0, tokens, c, length)
                ):
                    slots[w + 3] += freqs[q]
                    break
            r = (r + 1) & mask
        c = e + 1
    return arena, offs, slots, size, positions


@njit(nogil=True)
def tally_counts(slots, size):  # type: ignore[no-untyped-def]
    """The counts of a tally's strings (``tally_add``), in the strings' order."""
    counts = np.zeros(size, np.int64)
    for s in range(0, slots.size, 4):
        if slots[s + 1]:
            counts[slots[s + 2]] = slots[s + 3]
    return counts


@njit(nogil=True)
def tally_packed(arena, offs, size):  # type: ignore[no-untyped-def]
    """The table's strings joined by 0xFF (``tally_add``'s input form)."""
    used = offs[size]
    out = np.empty(used + max(size - 1, 0), np.uint8)
    w = 0
    for u in range(size):
        if u:
            out[w] = _SEPARATOR
            w += 1
        a, b = offs[u], offs[u + 1]
        out[w : w + b - a] = arena[a:b]
        w += b - a
    return out


# Compiled code is cached outside the source tree (see io.numba_cache); the first run compiles.
KERNELS = (count_pieces, packed_counts, tally_add, tally_counts, tally_packed)
cache_in_user_dir(*KERNELS)
