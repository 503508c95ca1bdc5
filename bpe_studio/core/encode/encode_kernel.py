"""Compiled kernels of encoding: pieces of code points to ids, through a cache and merges.

What it does: numba functions over flat NumPy arrays that take a text's code points and its
pieces (their start and end offsets, from a pre-tokenizer) and write the ids of every piece in
order: a piece seen before is looked up in the piece cache; a new one is encoded to UTF-8,
mapped to its bytes' ids and merged by rank (the adjacent pair with the lowest rank, leftmost
first, until none is left), then entered in the cache. Also each token's characters
(:func:`spans`), and building the hash tables. ``compiled`` owns the arrays and calls these;
nothing else should. What it leaves out: finding the pieces (``pretokenization``), special
tokens' matching (the caller puts their ids between the pieces), growing the cache (the
kernel stops when it is full; the caller grows or empties it and calls again).

Layout:
- The rank table ``rank = (table, by_bytes)``: open addressing over ``left << 32 | right``
  (-1 = empty slot; a key at ``table[2 * slot]``, its value after it) -> ``rank << 32 |
  merged id``, the first (lowest) rank of a pair kept; ``by_bytes[a << 8 | b]`` the value
  of the pair of the bytes ``a``, ``b``'s tokens. A call passes ``limit``: values at or
  above it count as absent, so the tokenizer of the first ``k`` merges (``k << 32``)
  shares the whole tokenizer's table.
- A piece table (the cache, and for ``ignore_merges`` the vocabulary's whole tokens) is
  ``(slots, hashes, key_at, val_at, sizes, keys, vals, meta)``: ``slots`` open addressing
  (-1 = empty) -> entry ``j``; entry ``j`` has the hash of its code points, its code points
  at ``keys[key_at[j]:]`` and ids at ``vals[val_at[j]:]``, their counts in ``sizes[j]``
  (``code points << 32 | ids``); ``meta`` = [entries, keys used, vals used].
- Items: piece ``k`` is ``cp[starts[k]:ends[k]]`` when ``special[k] < 0``, else the special
  token of id ``special[k]`` (``starts[k]:ends[k]`` its characters).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..io.numba_cache import cache_in_user_dir

NO_MERGE = np.int64(0x7FFFFFFFFFFFFFFF)
EVERY_RANK = NO_MERGE  # a ``limit`` that keeps every merge
_ID_MASK = np.int64(0xFFFFFFFF)
_MIX = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15, as a signed 64-bit integer
_FNV = np.int64(0x100000001B3)
# Pieces of more bytes than this are merged with a heap (O(n log n)) instead of scans of the
# pair ranks (O(n^2), faster for the short pieces that are nearly all of them).
LONG_PIECE = 128
# Pieces of more code points than this are never cached (a run of 100,000 spaces).
CACHED_MAX = 256
ENTRIES, KEYS_USED, VALS_USED = 0, 1, 2


# ----------------------------------------------------------------- the rank table
@njit(nogil=True)
def _pair_slot(table, key):  # type: ignore[no-untyped-def]
    """The slot of ``key`` in ``table`` (its key at ``2 * slot``, its value next to it: one
    cache line for a lookup), or the empty slot where it would go."""
    mask = (table.size >> 1) - 1
    i = ((key * _MIX) >> np.int64(29)) & mask
    while table[2 * i] != key and table[2 * i] != -1:
        i = (i + 1) & mask
    return i


@njit(nogil=True)
def rank_table(pairs, packed, cap, byte_ids):  # type: ignore[no-untyped-def]
    """The rank table (``cap`` slots, a power of two) of the pairs ``left << 32 | right``
    and their ``rank << 32 | merged id``, in rank order; and the rank of every pair of
    bytes, directly (``bytes[a << 8 | b]``: most lookups are of the first pairs)."""
    table = np.full(2 * cap, -1, np.int64)
    for i in range(pairs.size):
        s = _pair_slot(table, pairs[i])
        if table[2 * s] != pairs[i]:  # subtle: a repeated pair keeps its first (lowest) rank
            table[2 * s] = pairs[i]
            table[2 * s + 1] = packed[i]
    by_bytes = np.empty(1 << 16, np.int64)
    for a in range(256):
        for b in range(256):
            by_bytes[(a << 8) | b] = _rank(table, byte_ids[a], byte_ids[b], NO_MERGE)
    return table, by_bytes


@njit(nogil=True)
def _rank(table, a, b, limit):  # type: ignore[no-untyped-def]
    key = (np.int64(a) << np.int64(32)) | np.int64(b)
    s = _pair_slot(table, key)
    if table[2 * s] != key:
        return NO_MERGE
    v = table[2 * s + 1]
    return v if v < limit else NO_MERGE


# ------------------------------------------------------------------- merging a piece
@njit(nogil=True)
def _first_ranks(raw, n, ranks, by_bytes, limit):  # type: ignore[no-untyped-def]
    """``ranks[i]``: the rank of the pair of bytes ``raw[i], raw[i + 1]`` (a piece's pairs
    before any merge), from the direct table of byte pairs."""
    for i in range(n - 1):
        r = by_bytes[(np.int64(raw[i]) << np.int64(8)) | np.int64(raw[i + 1])]
        ranks[i] = r if r < limit else NO_MERGE


@njit(nogil=True)
def _merge_short(ids, raw, n, ranks, table, by_bytes, limit):  # type: ignore[no-untyped-def]
    """Merge ``ids[:n]`` (the ids of the bytes ``raw[:n]``) in place; return the new length.
    ``ranks[i]`` is the packed rank of the pair ``ids[i], ids[i + 1]``; after a merge only
    its two neighbours change."""
    _first_ranks(raw, n, ranks, by_bytes, limit)
    while n > 1:
        best = NO_MERGE
        at = -1
        for i in range(n - 1):
            if ranks[i] < best:  # subtle: strictly less, so the leftmost lowest rank wins
                best = ranks[i]
                at = i
        if at < 0:
            break
        ids[at] = best & _ID_MASK
        for j in range(at + 1, n - 1):
            ids[j] = ids[j + 1]
        for j in range(at + 1, n - 2):
            ranks[j] = ranks[j + 1]
        n -= 1
        if at > 0:
            ranks[at - 1] = _rank(table, ids[at - 1], ids[at], limit)
        if at < n - 1:
            ranks[at] = _rank(table, ids[at], ids[at + 1], limit)
    return n


@njit(nogil=True)
def _heap_push(heap, size, item):  # type: ignore[no-untyped-def]
    i = size
    heap[i] = item
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] <= item:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = item
    return size + 1


@njit(nogil=True)
def _heap_pop(heap, size):  # type: ignore[no-untyped-def]
    top = heap[0]
    size -= 1
    last = heap[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= last:
            break
        heap[i] = heap[child]
        i = child
    if size > 0:
        heap[i] = last
    return top, size


@njit(nogil=True)
def _merge_long(ids, raw, n, ranks, table, by_bytes, limit):  # type: ignore[no-untyped-def]
    """``_merge_short`` in O(n log n) for long pieces: a linked list of tokens and a heap of
    ``rank << 32 | position`` (the leftmost first among equal ranks), stale entries skipped."""
    nxt = np.empty(n, np.int64)
    prv = np.empty(n, np.int64)
    alive = np.ones(n, np.bool_)
    heap = np.empty(3 * n, np.int64)
    size = 0
    for i in range(n):
        nxt[i] = i + 1
        prv[i] = i - 1
    _first_ranks(raw, n, ranks, by_bytes, limit)
    for i in range(n - 1):
        if ranks[i] != NO_MERGE:
            size = _heap_push(heap, size, ((ranks[i] >> np.int64(32)) << np.int64(32)) | i)
    while size > 0:
        item, size = _heap_pop(heap, size)
        i = item & _ID_MASK
        rank = item >> np.int64(32)
        if not alive[i]:
            continue
        j = nxt[i]
        if j >= n:
            continue
        r = _rank(table, ids[i], ids[j], limit)
        # Stale unless ``i`` and its right neighbour still form the pair this entry was for
        # (a rank names one pair).
        if r == NO_MERGE or (r >> np.int64(32)) != rank:
            continue
        ids[i] = r & _ID_MASK
        alive[j] = False
        k = nxt[j]
        nxt[i] = k
        if k < n:
            prv[k] = i
            r = _rank(table, ids[i], ids[k], limit)
            if r != NO_MERGE:
                size = _heap_push(heap, size, ((r >> np.int64(32)) << np.int64(32)) | i)
        h = prv[i]
        if h >= 0:
            r = _rank(table, ids[h], ids[i], limit)
            if r != NO_MERGE:
                size = _heap_push(heap, size, ((r >> np.int64(32)) << np.int64(32)) | h)
    m = 0
    for i in range(n):
        if alive[i]:
            ids[m] = ids[i]
            m += 1
    return m


@njit(nogil=True)
def _put(raw, ids, n, byte, byte_ids):  # type: ignore[no-untyped-def]
    raw[n] = byte
    ids[n] = byte_ids[byte]


@njit(nogil=True)
def _bytes_of(cp, s, e, byte_ids, raw, ids):  # type: ignore[no-untyped-def]
    """The UTF-8 bytes of ``cp[s:e]`` written to ``raw``, their ids to ``ids``; their count."""
    n = 0
    for i in range(s, e):
        c = np.int64(cp[i])
        if c < 0x80:
            _put(raw, ids, n, c, byte_ids)
            n += 1
        elif c < 0x800:
            _put(raw, ids, n, 0xC0 | (c >> 6), byte_ids)
            _put(raw, ids, n + 1, 0x80 | (c & 0x3F), byte_ids)
            n += 2
        elif c < 0x10000:
            _put(raw, ids, n, 0xE0 | (c >> 12), byte_ids)
            _put(raw, ids, n + 1, 0x80 | ((c >> 6) & 0x3F), byte_ids)
            _put(raw, ids, n + 2, 0x80 | (c & 0x3F), byte_ids)
            n += 3
        else:
            _put(raw, ids, n, 0xF0 | (c >> 18), byte_ids)
            _put(raw, ids, n + 1, 0x80 | ((c >> 12) & 0x3F), byte_ids)
            _put(raw, ids, n + 2, 0x80 | ((c >> 6) & 0x3F), byte_ids)
            _put(raw, ids, n + 3, 0x80 | (c & 0x3F), byte_ids)
            n += 4
    return n


# -------------------------------------------------------------------- piece tables
@njit(nogil=True)
def _hash(cp, s, e):  # type: ignore[no-untyped-def]
    h = np.int64(e - s) * _MIX
    for i in range(s, e):
        h = (h ^ np.int64(cp[i])) * _FNV
    return h ^ ((h >> np.int64(31)) & np.int64(0x1FFFFFFFF))


@njit(nogil=True)
def _find(table, cp, s, e, h):  # type: ignore[no-untyped-def]
    """(entry, slot): the entry holding ``cp[s:e]`` (-1 if none) and the slot where it is
    (or would go)."""
    slots, hashes, key_at, _, sizes, keys, _, _ = table
    mask = slots.size - 1
    i = h & mask
    n = e - s
    while True:
        j = slots[i]
        if j < 0:
            return -1, i
        if hashes[j] == h and (sizes[j] >> np.int64(32)) == n:
            at = key_at[j]
            same = True
            for t in range(n):
                if keys[at + t] != cp[s + t]:
                    same = False
                    break
            if same:
                return j, i
        i = (i + 1) & mask


@njit(nogil=True)
def _has_room(table, n_cp, n_ids):  # type: ignore[no-untyped-def]
    slots, hashes, _, _, _, keys, vals, meta = table
    return (
        meta[ENTRIES] < hashes.size
        and 2 * (meta[ENTRIES] + 1) <= slots.size
        and meta[KEYS_USED] + n_cp <= keys.size
        and meta[VALS_USED] + n_ids <= vals.size
    )


@njit(nogil=True)
def _insert(table, slot, h, cp, s, e, ids, o, m):  # type: ignore[no-untyped-def]
    """Enter ``cp[s:e]`` -> ``ids[o:o + m]`` at the empty ``slot`` (room checked)."""
    slots, hashes, key_at, val_at, sizes, keys, vals, meta = table
    j = meta[ENTRIES]
    ka = meta[KEYS_USED]
    va = meta[VALS_USED]
    for t in range(e - s):
        keys[ka + t] = cp[s + t]
    for t in range(m):
        vals[va + t] = ids[o + t]
    hashes[j], key_at[j], val_at[j] = h, ka, va
    sizes[j] = (np.int64(e - s) << np.int64(32)) | np.int64(m)
    slots[slot] = j
    meta[ENTRIES] = j + 1
    meta[KEYS_USED] = ka + (e - s)
    meta[VALS_USED] = va + m


@njit(nogil=True)
def fill_table(table, cp, ends, ids):  # type: ignore[no-untyped-def]
    """Enter each piece ``cp[ends[i - 1]:ends[i]]`` -> ``ids[i]`` (the table sized for them;
    a piece already present keeps its first id)."""
    s = 0
    for i in range(ends.size):
        e = ends[i]
        h = _hash(cp, s, e)
        j, slot = _find(table, cp, s, e, h)
        if j < 0:
            _insert(table, slot, h, cp, s, e, ids, i, 1)
        s = e
    return table[7][ENTRIES]


@njit(nogil=True)
def rehash(table, slots):  # type: ignore[no-untyped-def]
    """Enter every entry of ``table`` in the empty ``slots`` (a larger power of two)."""
    hashes = table[1]
    mask = slots.size - 1
    for j in range(table[7][ENTRIES]):
        i = hashes[j] & mask
        while slots[i] >= 0:
            i = (i + 1) & mask
        slots[i] = j


# --------------------------------------------------------------------- the text
@njit(nogil=True)
def encode(cp, items, k, o, out, item_end, byte_ids, rank, limit, cache, whole, whole_all):  # type: ignore[no-untyped-def]
    """Write the ids of items ``k``, ``k + 1``, ... (see the module docstring) to ``out`` from
    ``out[o]`` on; ``item_end[k]`` (when ``item_end`` is not empty) the end of item ``k``'s ids
    in ``out``. Stops before a new piece the cache has no room for. Returns the next item and
    the next free place of ``out``. ``whole``: the whole tokens a piece is looked up as before
    it is merged, or a table without entries: ASCII pieces only, unless ``whole_all``
    (``ignore_merges``: a run of Han characters is seldom one token, and a failed lookup
    costs a miss in a large table, as the Python path found)."""
    starts, ends, special = items
    table, by_bytes = rank
    record = item_end.size > 0
    longest = 1
    for t in range(k, starts.size):
        if special[t] < 0 and ends[t] - starts[t] > longest:
            longest = ends[t] - starts[t]
    ids = np.empty(4 * longest, np.int64)
    raw = np.empty(4 * longest, np.int64)
    ranks = np.empty(4 * longest, np.int64)
    look_whole = whole[7][ENTRIES] > 0
    while k < starts.size:
        if special[k] >= 0:
            out[o] = special[k]
            o += 1
        else:
            s, e = starts[k], ends[k]
            h = _hash(cp, s, e)
            j, slot = _find(cache, cp, s, e, h)
            if j >= 0:
                at = cache[3][j]
                for t in range(cache[4][j] & _ID_MASK):
                    out[o] = cache[6][at + t]
                    o += 1
            else:
                m = -1
                if look_whole and (whole_all or _ascii(cp, s, e)):
                    w, _ = _find(whole, cp, s, e, h)
                    if w >= 0:
                        ids[0] = whole[6][whole[3][w]]
                        m = 1
                if m < 0:
                    n = _bytes_of(cp, s, e, byte_ids, raw, ids)
                    if n > LONG_PIECE:
                        m = _merge_long(ids, raw, n, ranks, table, by_bytes, limit)
                    else:
                        m = _merge_short(ids, raw, n, ranks, table, by_bytes, limit)
                if e - s <= CACHED_MAX:
                    if not _has_room(cache, e - s, m):
                        return k, o
                    _insert(cache, slot, h, cp, s, e, ids, 0, m)
                for t in range(m):
                    out[o + t] = ids[t]
                o += m
        if record:
            item_end[k] = o
        k += 1
    return k, o


@njit(nogil=True)
def _ascii(cp, s, e):  # type: ignore[no-untyped-def]
    for i in range(s, e):
        if cp[i] >= 0x80:
            return False
    return True


@njit(nogil=True)
def spans(cp, items, item_end, out, token_size):  # type: ignore[no-untyped-def]
    """Each token's characters: ``(starts, ends, partial)`` of the ids ``out`` that
    :func:`encode` wrote for ``items`` (``item_end`` recorded). A token that starts or ends
    inside a character covers that whole character and is ``partial``."""
    starts, ends, special = items
    n_tok = out.size
    t_start = np.empty(n_tok, np.int64)
    t_end = np.empty(n_tok, np.int64)
    partial = np.zeros(n_tok, np.bool_)
    o = 0
    for k in range(starts.size):
        stop = item_end[k]
        if special[k] >= 0:
            t_start[o], t_end[o] = starts[k], ends[k]
            o += 1
            continue
        # (c, c0, cn): the character c of the piece, its first byte c0 and its byte count cn.
        c = starts[k]
        c0 = 0
        cn = _utf8_size(cp[c]) if c < ends[k] else 1
        b = 0
        while o < stop:
            b1 = b + token_size[out[o]]
            while c0 + cn <= b:
                c0 += cn
                c += 1
                cn = _utf8_size(cp[c])
            first, at_start = c, c0 == b
            while c0 + cn < b1:
                c0 += cn
                c += 1
                cn = _utf8_size(cp[c])
            t_start[o], t_end[o] = first, c + 1
            partial[o] = not at_start or c0 + cn != b1
            b = b1
            o += 1
    return t_start, t_end, partial


@njit(nogil=True)
def _utf8_size(c):  # type: ignore[no-untyped-def]
    if c < 0x80:
        return 1
    if c < 0x800:
        return 2
    if c < 0x10000:
        return 3
    return 4


KERNELS = (rank_table, fill_table, rehash, encode, spans)
cache_in_user_dir(*KERNELS)
