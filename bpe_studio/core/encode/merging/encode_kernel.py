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
- A piece table (the cache, and the vocabulary's whole tokens) is ``(slots, ents, keys,
  vals, meta)``: ``slots`` open addressing, slot ``i`` a hash at ``slots[2 * i]`` and its
  entry ``j`` after it (-1 = empty), so a probe that finds another hash reads no entry;
  entry ``j`` is ``ents[4 * j:4 * j + 4]`` (one cache line): the hash of its code points,
  where they are in ``keys`` and its ids in ``vals``, and their counts (``code points << 32
  | ids``); ``meta`` = [entries, keys used, vals used].
- Items: piece ``k`` is ``cp[starts[k]:ends[k]]`` when ``special[k] < 0``, else the special
  token of id ``special[k]`` (``starts[k]:ends[k]`` its characters).
- ``tree = (birth, left, right, monotone)``: the merge tree of every token (``merge_tree``).
  ``chars = (info, alone, memo_keys, memo_vals, seen)``: what ``_from_chars`` has learnt,
  kept across calls: per BMP code point ``c`` its tokens at ``info[4 * c:4 * c + 4]`` (count
  first; 0: not yet), per token whether it is valid alone (0: not yet, 1, 2: not), per pair
  of tokens whether no merge crosses it; and bits of the pieces cut into parts once seen.
- ``cuts``: ``char_cuts``' tables (``CutTables``), where a new piece may be cut into parts
  (each merged alone and kept in ``part_cache``, a piece table of its own).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...io.kernel_options import allocating, helper
from ...io.numba_cache import cache_in_user_dir
from . import packed

NO_MERGE = np.int64(packed.NO_MERGE)
_ID_MASK = np.int64(0xFFFFFFFF)
_MIX = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15, as a signed 64-bit integer
_FNV = np.int64(0x100000001B3)
# Pieces of more bytes than this are merged with a heap (O(n log n)) instead of scans of the
# pair ranks (O(n^2), faster for the short pieces that are nearly all of them).
LONG_PIECE = 128
# Pieces of more code points than this are never cached (a run of 100,000 spaces).
CACHED_MAX = 256
ENTRIES, KEYS_USED, VALS_USED = 0, 1, 2
# Short pieces (``_short_key``): this many code points at most; their table's values hold
# this many ids of this many bits each (a vocabulary of more ids has no short table).
SHORT_MAX = 8
SHORT_IDS = 3
SHORT_ID_BITS = 21


# ----------------------------------------------------------------- the rank table
@helper
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


@helper
def _rank(table, a, b, limit):  # type: ignore[no-untyped-def]
    key = (np.int64(a) << np.int64(32)) | np.int64(b)
    s = _pair_slot(table, key)
    if table[2 * s] != key:
        return NO_MERGE
    v = table[2 * s + 1]
    return v if v < limit else NO_MERGE


# ------------------------------------------------------------------- merging a piece
@helper
def _first_ranks(raw, n, ranks, by_bytes, limit):  # type: ignore[no-untyped-def]
    """``ranks[i]``: the rank of the pair of bytes ``raw[i], raw[i + 1]`` (a piece's pairs
    before any merge), from the direct table of byte pairs."""
    for i in range(n - 1):
        r = by_bytes[(np.int64(raw[i]) << np.int64(8)) | np.int64(raw[i + 1])]
        ranks[i] = r if r < limit else NO_MERGE


@helper
def _pair_ranks(ids, n, ranks, table, limit):  # type: ignore[no-untyped-def]
    """``ranks[i]``: the rank of the pair ``ids[i], ids[i + 1]``."""
    for i in range(n - 1):
        ranks[i] = _rank(table, ids[i], ids[i + 1], limit)


@helper
def _merge_short(ids, n, ranks, table, limit):  # type: ignore[no-untyped-def]
    """Merge ``ids[:n]`` in place; return the new length. ``ranks[i]`` is (given filled in)
    the packed rank of the pair ``ids[i], ids[i + 1]``; after a merge only its two
    neighbours change."""
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


@helper
def _merged(ids, n, ranks, table, limit):  # type: ignore[no-untyped-def]
    """``ids[:n]`` merged (``ranks`` filled in), by scans or, for a long piece, a heap."""
    if n > LONG_PIECE:
        return _merge_long(ids, n, ranks, table, limit)
    return _merge_short(ids, n, ranks, table, limit)


@njit(nogil=True)
def merge_ids(ids, table, limit):  # type: ignore[no-untyped-def]
    """``ids`` (one pre-token's, maybe partly merged) merged by rank in place; their new
    count. A piece the Python merger finds too long to merge itself quickly (a token of
    megabytes whose reach is asked)."""
    n = ids.size
    ranks = np.empty(max(n - 1, 1), np.int64)
    _pair_ranks(ids, n, ranks, table, limit)
    return _merged(ids, n, ranks, table, limit)


@helper
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


@helper
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


@allocating
def _merge_long(ids, n, ranks, table, limit):  # type: ignore[no-untyped-def]
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


@helper
def _put(raw, ids, n, byte, byte_ids):  # type: ignore[no-untyped-def]
    raw[n] = byte
    ids[n] = byte_ids[byte]


@helper
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
@helper
def _hash(cp, s, e):  # type: ignore[no-untyped-def]
    lo, hi = np.int64(s), np.int64(e)
    h = (hi - lo) * _MIX
    for i in range(lo, hi):
        h = (h ^ np.int64(cp[i])) * _FNV
    return h ^ ((h >> np.int64(31)) & np.int64(0x1FFFFFFFF))


@helper
def _hash_top(cp, s, e):  # type: ignore[no-untyped-def]
    """``_hash(cp, s, e)`` and the bits of all its code points ORed (below 0x80: ASCII;
    below 0x800: no character ``char_cuts`` may cut beside), in one pass."""
    lo, hi = np.int64(s), np.int64(e)
    h = (hi - lo) * _MIX
    top = np.int64(0)
    for i in range(lo, hi):
        c = np.int64(cp[i])
        h = (h ^ c) * _FNV
        top |= c
    return h ^ ((h >> np.int64(31)) & np.int64(0x1FFFFFFFF)), top


@helper
def _find(table, cp, s, e, h):  # type: ignore[no-untyped-def]
    """(entry, slot): the entry holding ``cp[s:e]`` (-1 if none) and the slot where it is
    (or would go)."""
    slots, ents, keys, _, _ = table
    mask = (slots.size >> 1) - 1
    i = h & mask
    n = e - s
    while True:
        j = slots[2 * i + 1]
        if j < 0:
            return np.int64(-1), i
        if slots[2 * i] == h and (ents[4 * j + 3] >> np.int64(32)) == n:
            at = ents[4 * j + 1]
            same = True
            for t in range(n):
                if keys[at + t] != cp[s + t]:
                    same = False
                    break
            if same:
                return j, i
        i = (i + 1) & mask


@helper
def _has_room(table, n_cp, n_ids):  # type: ignore[no-untyped-def]
    slots, ents, keys, vals, meta = table
    return (
        meta[ENTRIES] < (ents.size >> 2)
        and 2 * (meta[ENTRIES] + 1) <= (slots.size >> 1)
        and meta[KEYS_USED] + n_cp <= keys.size
        and meta[VALS_USED] + n_ids <= vals.size
    )


@helper
def _insert(table, slot, h, cp, s, e, ids, o, m):  # type: ignore[no-untyped-def]
    """Enter ``cp[s:e]`` -> ``ids[o:o + m]`` at the empty ``slot`` (room checked)."""
    slots, ents, keys, vals, meta = table
    j = meta[ENTRIES]
    ka = meta[KEYS_USED]
    va = meta[VALS_USED]
    for t in range(e - s):
        keys[ka + t] = cp[s + t]
    for t in range(m):
        vals[va + t] = ids[o + t]
    ents[4 * j] = h
    ents[4 * j + 1] = ka
    ents[4 * j + 2] = va
    ents[4 * j + 3] = (np.int64(e - s) << np.int64(32)) | np.int64(m)
    slots[2 * slot] = h
    slots[2 * slot + 1] = j
    meta[ENTRIES] = j + 1
    meta[KEYS_USED] = ka + (e - s)
    meta[VALS_USED] = va + m


@helper
def _utf8_decoded(data, s, e, out):  # type: ignore[no-untyped-def]
    """The code points of the strict UTF-8 ``data[s:e]`` (no overlong forms, surrogates or
    code points past U+10FFFF, as Python's decoder) written to ``out``: their count, or -1
    when the bytes are not such UTF-8."""
    n = 0
    i = s
    while i < e:
        b0 = np.int64(data[i])
        if b0 < 0x80:
            out[n] = b0
            i += 1
        else:
            if 0xC2 <= b0 <= 0xDF:
                size, lo, hi, c = 2, 0x80, 0xBF, b0 & 0x1F
            elif 0xE0 <= b0 <= 0xEF:
                size, c = 3, b0 & 0x0F
                lo = 0xA0 if b0 == 0xE0 else 0x80
                hi = 0x9F if b0 == 0xED else 0xBF
            elif 0xF0 <= b0 <= 0xF4:
                size, c = 4, b0 & 0x07
                lo = 0x90 if b0 == 0xF0 else 0x80
                hi = 0x8F if b0 == 0xF4 else 0xBF
            else:
                return -1
            if i + size > e:
                return -1
            for t in range(1, size):
                bt = np.int64(data[i + t])
                # subtle: only the second byte has the narrower range (overlong forms,
                # surrogates, past U+10FFFF); the others are any continuation byte.
                if bt < (lo if t == 1 else 0x80) or bt > (hi if t == 1 else 0xBF):
                    return -1
                c = (c << 6) | (bt & 0x3F)
            out[n] = c
            i += size
        n += 1
    return n


@njit(nogil=True)
def fill_tokens(table, data, offsets, ids, ascii_only, skip_short):  # type: ignore[no-untyped-def]
    """Enter each token ``data[offsets[i]:offsets[i + 1]]`` (bytes) -> ``ids[i]`` as the
    piece of its code points, if it is UTF-8 (no text is made of the others), and ASCII when
    ``ascii_only``; a piece already present keeps its first id. The table is sized for all."""
    longest = 1
    for i in range(ids.size):
        longest = max(longest, offsets[i + 1] - offsets[i])
    cp = np.empty(longest, np.uint32)
    one = np.empty(1, np.int64)
    # subtle: no literal integer arguments below. numba types a literal as a constant of its
    # own, and arithmetic mixing one with int64 came out as float64 here: every hash the
    # same, and filling the table quadratic.
    zero, single = np.int64(0), np.int64(1)
    for i in range(ids.size):
        n = np.int64(_utf8_decoded(data, offsets[i], offsets[i + 1], cp))
        if n <= 0 or (ascii_only and n != offsets[i + 1] - offsets[i]):
            continue
        if skip_short and _short_key(cp, zero, n)[0] != 0:
            continue  # in the short pieces' table instead
        h = _hash(cp, zero, n)
        j, slot = _find(table, cp, zero, n, h)
        if j < 0:
            one[0] = ids[i]
            _insert(table, slot, h, cp, zero, n, one, zero, single)
    return table[4][ENTRIES]


@njit(nogil=True)
def rehash(table, slots):  # type: ignore[no-untyped-def]
    """Enter every entry of ``table`` in the empty ``slots`` (twice a larger power of two)."""
    ents = table[1]
    mask = (slots.size >> 1) - 1
    for j in range(table[4][ENTRIES]):
        h = ents[4 * j]
        i = h & mask
        while slots[2 * i + 1] >= 0:
            i = (i + 1) & mask
        slots[2 * i] = h
        slots[2 * i + 1] = j


# ------------------------------------------------------------- from characters
@njit(nogil=True)
def merge_tree(lefts, rights, made, bound):  # type: ignore[no-untyped-def]
    """Per token id: the rank of the merge that makes it and its two parts (-1: a byte or a
    special token), or the rank -2 when several merges make it (no single tree); and whether
    the merges are monotone (each ranks after every merge that makes one of its parts),
    which ``_from_chars`` needs."""
    birth = np.full(bound, -1, np.int64)
    left = np.full(bound, -1, np.int64)
    right = np.full(bound, -1, np.int64)
    for r in range(made.size):
        t = made[r]
        # subtle: the last merge that makes a token is the one the monotone check needs.
        birth[t] = -2 if birth[t] != -1 else r
        left[t], right[t] = lefts[r], rights[r]
    last = np.full(bound, -1, np.int64)
    for r in range(made.size):
        last[made[r]] = r
    monotone = True
    for r in range(made.size):
        if last[lefts[r]] >= r or last[rights[r]] >= r:
            monotone = False
            break
    return birth, left, right, monotone


@allocating
def _char_tokens(c, info, table, byte_ids, limit):  # type: ignore[no-untyped-def]
    """The tokens of the BMP character ``c`` merged alone, at ``info[4 * c:]`` (count, ids)."""
    toks = np.empty(4, np.int64)
    raw = np.empty(4, np.int64)
    ranks = np.empty(4, np.int64)
    n = _bytes_of(np.array([c], np.uint32), np.int64(0), np.int64(1), byte_ids, raw, toks)
    _pair_ranks(toks, n, ranks, table, limit)
    n = _merge_short(toks, n, ranks, table, limit)
    for t in range(n):
        info[4 * c + 1 + t] = toks[t]
    info[4 * c] = n


@allocating
def _valid_alone(t, chars, tree, table, byte_ids, limit):  # type: ignore[no-untyped-def]
    """Whether merging the bytes of token ``t`` gives ``t`` back (remembered per token)."""
    alone = chars[1]
    if alone[t] == 0:
        birth, left, right, _ = tree
        if birth[t] == -1:
            alone[t] = 1  # a byte: nothing to merge
        elif birth[t] < 0:
            alone[t] = 2  # several merges make it: no single tree to reason with
        else:
            # Its bytes' ids, left to right, by walking its tree.
            ids = np.empty(64, np.int64)
            stack = np.empty(64, np.int64)
            n, top = 0, 1
            stack[0] = t
            while top > 0 and n < 64:
                top -= 1
                u = stack[top]
                if left[u] < 0:
                    ids[n] = u
                    n += 1
                elif top + 2 <= 64:
                    stack[top] = right[u]
                    stack[top + 1] = left[u]
                    top += 2
                else:
                    n = 64
            if n >= 64 or top > 0:
                alone[t] = 2  # too long to check here: treated as not valid (safe)
            else:
                ranks = np.empty(64, np.int64)
                _pair_ranks(ids, n, ranks, table, limit)
                m = _merge_short(ids, n, ranks, table, limit)
                alone[t] = 1 if m == 1 and ids[0] == t else 2
    return alone[t] == 1


@helper
def _no_cross(a, b, chars, tree, table, limit):  # type: ignore[no-untyped-def]
    """Whether no merge can join a token at the right edge of ``a`` with one at the left edge
    of ``b`` while both live, each merging alone (``char_bpe``'s check, which says why that
    makes the pair's boundary final); remembered per pair."""
    memo_keys, memo_vals = chars[2], chars[3]
    key = ((np.int64(a) << np.int64(32)) | np.int64(b)) + 1
    at = ((key * _MIX) >> np.int64(40)) & np.int64(memo_keys.size - 1)
    if memo_keys[at] == key:
        return memo_vals[at] == 1
    birth, left, right, _ = tree
    ok = True
    x, end_x = np.int64(a), NO_MERGE
    while ok and x >= 0:
        y, end_y = np.int64(b), NO_MERGE
        while y >= 0:
            if birth[x] == -2 or birth[y] == -2:
                ok = False  # an edge token several merges make: no single tree
                break
            # subtle: a merge of x and y ranks after both were made (the merges are
            # monotone), so only one ranked before both end can cross; none can when they
            # end before the later of them is made.
            if min(end_x, end_y) > max(birth[x], birth[y]):
                r = _rank(table, x, y, limit)
                if r != NO_MERGE and (r >> np.int64(32)) <= min(end_x, end_y):
                    ok = False
                    break
            end_y = birth[y]
            y = left[y]
        end_x = birth[x]
        x = right[x]
    memo_keys[at] = key
    memo_vals[at] = 1 if ok else 2
    return ok


@helper
def _from_chars(cp, s, e, chars, tree, ids, ranks, table, byte_ids, limit):  # type: ignore[no-untyped-def]
    """``cp[s:e]`` merged from its characters' tokens (each character merged alone first),
    or -1 when the result is not checked to be what merging its bytes gives. The check
    (``char_bpe``'s, exact for monotone merges): a sequence of tokens is the merge result
    of its bytes when each token is valid alone (``_valid_alone``) and no merge can cross
    the boundary of two neighbours (``_no_cross``). BMP characters only."""
    info = chars[0]
    n = np.int64(0)
    size = np.int64(0)
    for i in range(s, e):
        c = np.int64(cp[i])
        if c >= 0x10000:
            return np.int64(-1)
        if info[4 * c] == 0:
            _char_tokens(c, info, table, byte_ids, limit)
        for t in range(info[4 * c]):
            ids[n] = info[4 * c + 1 + t]
            n += 1
        size += _utf8_size(c)
    if 2 * n > size:
        # subtle: the characters merged alone saved less than half the merges (GPT-2 makes
        # most Han characters two tokens): merging from bytes costs less than the check.
        return np.int64(-1)
    _pair_ranks(ids, n, ranks, table, limit)
    m = _merged(ids, n, ranks, table, limit)
    for i in range(m):
        if not _valid_alone(ids[i], chars, tree, table, byte_ids, limit):
            return np.int64(-1)
        if i > 0 and not _no_cross(ids[i - 1], ids[i], chars, tree, table, limit):
            return np.int64(-1)
    return m


# ------------------------------------------------------------ cut into parts
_NO_ROOM = np.int64(-2)
# ``char_cuts``' flags of a character: two per partial table from bit 16, two for the pairs of
# whole characters at bit 24 (each a left flag, then a right one).
_TABLE_LEFT, _WHOLE_LEFT = np.int64(16), np.int64(24)
_MEET_MASK = np.int64(0x1550000)  # the left flags: bits 16, 18, 20, 22 and 24
_CLEAN_LEFT, _CLEAN_RIGHT = np.int64(1), np.int64(2)
_NO_LEAD_MASK, _NO_LAST_MASK = np.int64(4), np.int64(8)
CUT_FILTER_BITS = 22  # the filter of the pairs of whole characters some token holds


@helper
def whole_pair_slot(key):  # type: ignore[no-untyped-def]
    """The filter bit of a pair of whole characters ``x << 16 | y`` (``char_cuts``)."""
    return ((key * _MIX) >> np.int64(64 - CUT_FILTER_BITS)) & np.int64((1 << CUT_FILTER_BITS) - 1)


@helper
def _cut_between(x, y, cuts):  # type: ignore[no-untyped-def]
    """Whether no token straddles the characters ``x``, ``y`` (``char_cuts``' test: both of
    three UTF-8 bytes, and none of the vocabulary's straddles between them), so a piece may
    be cut between them. Reads the two characters' entries (``CharCuts.kernel_tables``), and
    a larger table only where both characters' flags meet (seldom). ``_from_parts`` writes
    out its first two steps (``_meet``'s and before)."""
    per_char, clean = cuts[2], cuts[5]
    if x < 0x800 or x >= 0x10000 or y < 0x800 or y >= 0x10000:
        return False
    # Most characters hold no straddle on one side: one byte each says so.
    cx, cy = np.int64(clean[x]), np.int64(clean[y])
    if (cx & _CLEAN_LEFT and cy & _NO_LAST_MASK) or (cx & _NO_LEAD_MASK and cy & _CLEAN_RIGHT):
        return True
    meet = _meet(x, y, per_char)
    return meet == 0 or (meet > 0 and _cut_in_tables(x, y, meet, cuts))


@helper
def _meet(x, y, per_char):  # type: ignore[no-untyped-def]
    """-1 when a token holds the end of ``x`` and ``y`` whole, or ``x`` whole and the start
    of ``y`` (no cut); else the flags of the tables both characters appear in (0: none, a
    cut; else ``_cut_in_tables`` decides)."""
    x_flags = per_char[2 * x + 1]
    y_flags = per_char[2 * y + 1]
    if (per_char[2 * y] >> (x & np.int64(0x3F))) & np.int64(1):
        return np.int64(-1)  # the end of x, then y whole
    if (x_flags >> ((y >> np.int64(12)) & np.int64(0xF))) & np.int64(1):
        return np.int64(-1)  # x whole, then the start of y
    # subtle: each table's (or the whole pairs') left flag of x is one bit below its right
    # flag of y, so one AND finds every table both may meet in.
    return x_flags & (y_flags >> np.int64(1)) & _MEET_MASK


@helper
def _cut_in_tables(x, y, meet, cuts):  # type: ignore[no-untyped-def]
    """Whether no straddle of the tables ``meet`` names lies between ``x`` and ``y``."""
    params, bits, _, whole, seen, _ = cuts
    for t in range(params.shape[0]):
        if (meet >> (_TABLE_LEFT + 2 * t)) & np.int64(1):
            at = params[t, 3] + (((x & params[t, 0]) << params[t, 1]) | (y >> params[t, 2]))
            if (np.int64(bits[at >> np.int64(3)]) >> (at & np.int64(7))) & np.int64(1):
                return False
    if (meet >> _WHOLE_LEFT) & np.int64(1):
        key = (x << np.int64(16)) | y
        at = whole_pair_slot(key)
        if (np.int64(seen[at >> np.int64(3)]) >> (at & np.int64(7))) & np.int64(1):
            lo, hi = np.int64(0), np.int64(whole.size)
            while lo < hi:
                mid = (lo + hi) >> np.int64(1)
                if whole[mid] < key:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < whole.size and whole[lo] == key:
                return False
    return True


@helper
def _from_parts(cp, s, e, ids, cuts, cache, parts, chars, tree, rank, byte_ids, limit):  # type: ignore[no-untyped-def]
    """The ids of ``cp[s:e]`` written to ``ids`` from its parts between the places no merge
    can cross (``_cut_between``): their count, or -1 when it has no such place, or
    ``_NO_ROOM`` when the cache had no room for a new part (the parts entered so far stay).
    A part of one character has that character's tokens (``_char_tokens``, kept per
    character); a longer one is looked up in the cache, else merged and entered."""
    part_ids, raw, ranks, stops = parts
    per_char, clean = cuts[2], cuts[5]
    n_parts = 0
    for i in range(s, e - 1):
        x, y = np.int64(cp[i]), np.int64(cp[i + 1])
        if x < 0x800 or x >= 0x10000 or y < 0x800 or y >= 0x10000:
            continue
        # subtle: ``_cut_between`` written out here up to its tables: a call passing the
        # tables cost more than the test itself (0.05 us a pair, 35 ms in 2 MB of Chinese
        # under o200k), and nearly every pair is settled before them.
        cx, cy = np.int64(clean[x]), np.int64(clean[y])
        cut = ((cx & _CLEAN_LEFT) != 0 and (cy & _NO_LAST_MASK) != 0) or (
            (cx & _NO_LEAD_MASK) != 0 and (cy & _CLEAN_RIGHT) != 0
        )
        if not cut:
            meet = _meet(x, y, per_char)
            cut = meet == 0 or (meet > 0 and _cut_in_tables(x, y, meet, cuts))
        if cut:
            stops[n_parts] = i + 1
            n_parts += 1
    if n_parts == 0:
        return np.int64(-1)
    stops[n_parts] = e
    info = chars[0]
    table = rank[0]
    cache_ents, cache_vals = cache[1], cache[3]
    m = np.int64(0)
    a = np.int64(s)
    for p in range(n_parts + 1):
        b = stops[p]
        if b - a == 1:
            c = np.int64(cp[a])
            if info[4 * c] == 0:
                _char_tokens(c, info, table, byte_ids, limit)
            for t in range(info[4 * c]):
                ids[m] = info[4 * c + 1 + t]
                m += 1
        else:
            h = _hash(cp, a, b)
            j, slot = _find(cache, cp, a, b, h)
            if j >= 0:
                at = cache_ents[4 * j + 2]
                for t in range(cache_ents[4 * j + 3] & _ID_MASK):
                    ids[m] = cache_vals[at + t]
                    m += 1
            else:
                n = _new_piece(cp, a, b, part_ids, raw, ranks, rank, byte_ids, limit, chars, tree)
                if b - a <= CACHED_MAX:
                    if not _has_room(cache, b - a, n):
                        return _NO_ROOM
                    _insert(cache, slot, h, cp, a, b, part_ids, np.int64(0), n)
                for t in range(n):
                    ids[m] = part_ids[t]
                    m += 1
        a = b
    return m


@helper
def _seen_before(seen, h):  # type: ignore[no-untyped-def]
    """Whether the bit of hash ``h`` in the bits ``seen`` was set; it is now."""
    at = (h >> np.int64(32)) & np.int64(8 * seen.size - 1)
    byte, bit = at >> np.int64(3), np.int64(1) << (at & np.int64(7))
    if np.int64(seen[byte]) & bit:
        return True
    seen[byte] = np.int64(seen[byte]) | bit
    return False


@helper
def _new_piece(cp, s, e, ids, raw, ranks, rank, byte_ids, limit, chars, tree):  # type: ignore[no-untyped-def]
    """The ids of ``cp[s:e]`` merged by rank, written to ``ids``: from its characters'
    tokens where that is checked to be exact, else from its bytes. Their count."""
    table, by_bytes = rank
    m = np.int64(-1)
    if tree[3] and not _ascii(cp, s, e):
        m = _from_chars(cp, s, e, chars, tree, ids, ranks, table, byte_ids, limit)
    if m < 0:
        n = _bytes_of(cp, s, e, byte_ids, raw, ids)
        _first_ranks(raw, n, ranks, by_bytes, limit)
        m = _merged(ids, n, ranks, table, limit)
    return m


# ------------------------------------------------------------- short pieces
@helper
def _short_key(cp, s, e):  # type: ignore[no-untyped-def]
    """``cp[s:e]`` packed in one integer when it is a short piece (``SHORT_MAX`` code points
    or fewer, each below 0xFF): byte ``i`` holds code point ``i`` plus one, so no two pieces
    share a key and none is 0 (an empty slot). Else 0. With the bits of its code points ORed
    (``_hash_top``'s)."""
    key = np.int64(0)
    top = np.int64(0)
    if e - s > SHORT_MAX:
        return key, top
    shift = np.int64(0)
    for i in range(s, e):
        c = np.int64(cp[i])
        if c >= 0xFF:
            return np.int64(0), top
        key |= (c + np.int64(1)) << shift
        top |= c
        shift += np.int64(8)
    return key, top


@helper
def _short_slot(slots, key):  # type: ignore[no-untyped-def]
    """The slot of ``key`` in a short table (its key at ``2 * slot``, its value next to it),
    or the empty one where it would go."""
    mask = (slots.size >> 1) - 1
    # subtle: the product's top bits, which every bit of the key reaches (its low bits see
    # only the key's low bytes, the pieces' first characters).
    i = ((key * _MIX) >> np.int64(40)) & mask
    while slots[2 * i] != key and slots[2 * i] != 0:
        i = (i + 1) & mask
    return i


@helper
def _short_ids(ids, m):  # type: ignore[no-untyped-def]
    """``ids[:m]`` packed as a short table's value (each id plus one in ``SHORT_ID_BITS``
    bits, the first lowest), or -1 when there are more than ``SHORT_IDS``."""
    if m > SHORT_IDS:
        return np.int64(-1)
    packed = np.int64(0)
    for t in range(m):
        packed |= (np.int64(ids[t]) + np.int64(1)) << (np.int64(SHORT_ID_BITS) * t)
    return packed


@njit(nogil=True)
def rehash_short(table, slots):  # type: ignore[no-untyped-def]
    """Enter every entry of the short table ``table`` in the empty (larger) ``slots``."""
    old = table[0]
    for i in range(old.size >> 1):
        key = old[2 * i]
        if key != 0:
            at = _short_slot(slots, key)
            slots[2 * at] = key
            slots[2 * at + 1] = old[2 * i + 1]


@njit(nogil=True)
def fill_short_tokens(table, data, offsets, ids, ascii_only):  # type: ignore[no-untyped-def]
    """Enter the tokens ``data[offsets[i]:offsets[i + 1]]`` -> ``ids[i]`` that are short
    pieces (``_short_key``) when decoded from UTF-8 (of ASCII only when ``ascii_only``) in the
    empty short table ``table``; the count entered."""
    slots, meta = table
    longest = 1
    for i in range(ids.size):
        longest = max(longest, offsets[i + 1] - offsets[i])
    cp = np.empty(longest, np.uint32)
    zero = np.int64(0)
    for i in range(ids.size):
        n = np.int64(_utf8_decoded(data, offsets[i], offsets[i + 1], cp))
        if n <= 0 or (ascii_only and n != offsets[i + 1] - offsets[i]):
            continue
        key, _ = _short_key(cp, zero, n)
        if key == 0:
            continue
        at = _short_slot(slots, key)
        if slots[2 * at] != key:
            slots[2 * at] = key
            slots[2 * at + 1] = ids[i]
            meta[0] += 1
    return meta[0]


# --------------------------------------------------------------------- the text
@njit(nogil=True)
def encode(  # type: ignore[no-untyped-def]
    cp,
    items,
    k,
    o,
    out,
    item_end,
    byte_ids,
    rank,
    limit,
    cache,
    whole,
    whole_all,
    chars,
    tree,
    cuts,
    part_cache,
    thrifty,
    short,
    short_whole,
    longest,
):
    """Write the ids of items ``k``, ``k + 1``, ... (see the module docstring) to ``out`` from
    ``out[o]`` on; ``item_end[k]`` (when ``item_end`` is not empty) the end of item ``k``'s ids
    in ``out``. Stops before a new piece the cache has no room for. Returns the next item and
    the next free place of ``out``. ``whole``: the whole tokens a piece is looked up as before
    it is merged, or a table without entries: ASCII pieces only, unless ``whole_all``
    (``ignore_merges``: a run of Han characters is seldom one token, and a failed lookup
    costs a miss in a large table, as the Python path found). ``thrifty``: a piece cut into
    parts is entered whole only when seen before (else always). ``short``: the cache of short
    pieces (``_short_key``: one cache line a lookup), ``(slots, [entries])``, or a table of
    no slots (every piece in ``cache``); ``short_whole``: the whole tokens that are short
    pieces, in the same layout (a short piece is looked up there, never in ``whole``).
    ``longest``: at least the code points of the longest piece (``longest_piece``), what the
    scratch arrays are sized for."""
    starts, ends, special = items
    table, by_bytes = rank
    record = item_end.size > 0
    ids = np.empty(4 * longest, np.int64)
    raw = np.empty(4 * longest, np.int64)
    ranks = np.empty(4 * longest, np.int64)
    # Scratch of ``_from_parts``: a part's ids, bytes and pair ranks, where the parts end.
    parts = (
        np.empty(4 * longest, np.int64),
        np.empty(4 * longest, np.int64),
        np.empty(4 * longest, np.int64),
        np.empty(longest + 1, np.int64),
    )
    look_whole = whole[4][ENTRIES] > 0
    # subtle: not with ``whole_all``: a part is merged, never looked up whole, and the cache
    # it shares with the pieces would then hold a string under two meanings.
    cutting = cuts[1].size > 0 and not whole_all
    cache_ents, cache_vals = cache[1], cache[3]
    short_slots, short_meta = short
    use_short = short_slots.size > 0
    whole_slots = short_whole[0]
    look_short_whole = short_whole[1][0] > 0
    id_mask = np.int64((1 << SHORT_ID_BITS) - 1)
    while k < starts.size:
        key = np.int64(0)
        top = np.int64(0)
        if special[k] >= 0:
            out[o] = special[k]
            o += 1
        elif use_short:
            key, top = _short_key(cp, starts[k], ends[k])
        if key != 0:
            i = _short_slot(short_slots, key)
            packed = short_slots[2 * i + 1]
            if short_slots[2 * i] == key:
                while packed != 0:
                    out[o] = (packed & id_mask) - 1
                    o += 1
                    packed >>= np.int64(SHORT_ID_BITS)
            else:
                if 2 * (short_meta[0] + 1) > (short_slots.size >> 1):
                    return k, o  # no room: the caller grows the table
                s, e = starts[k], ends[k]
                m = -1
                if look_short_whole and (whole_all or top < 0x80):
                    w = _short_slot(whole_slots, key)
                    if whole_slots[2 * w] == key:
                        ids[0] = whole_slots[2 * w + 1]
                        m = 1
                if m < 0:
                    m = _new_piece(cp, s, e, ids, raw, ranks, rank, byte_ids, limit, chars, tree)
                packed = _short_ids(ids, m)
                # subtle: a short piece of more ids than a value holds is merged again at each
                # sighting (seldom: a short piece is nearly always one to three tokens).
                if packed >= 0:
                    short_slots[2 * i] = key
                    short_slots[2 * i + 1] = packed
                    short_meta[0] += 1
                for t in range(m):
                    out[o + t] = ids[t]
                o += m
        elif special[k] < 0:
            s, e = starts[k], ends[k]
            h, top = _hash_top(cp, s, e)
            j, slot = _find(cache, cp, s, e, h)
            if j >= 0:
                at = cache_ents[4 * j + 2]
                for t in range(cache_ents[4 * j + 3] & _ID_MASK):
                    out[o] = cache_vals[at + t]
                    o += 1
            else:
                m = -1
                keep = e - s <= CACHED_MAX
                if look_whole and (whole_all or top < 0x80):
                    w, _ = _find(whole, cp, s, e, h)
                    if w >= 0:
                        ids[0] = whole[3][whole[1][4 * w + 2]]
                        m = 1
                # subtle: only a piece with a character of three UTF-8 bytes may be cut; the
                # call alone (its many tables passed) cost 0.3 us a new piece of English.
                if m < 0 and cutting and top >= 0x800:
                    m = _from_parts(
                        cp, s, e, ids, cuts, part_cache, parts, chars, tree, rank, byte_ids, limit
                    )
                    if m == _NO_ROOM:
                        return k, o
                    if m >= 0 and keep and thrifty:
                        # subtle: a piece cut into parts is cached whole from its second
                        # sighting on: most of a Chinese text's pieces occur once, and
                        # entering them all cost more than cutting them (docs/encoding.md).
                        keep = _seen_before(chars[4], h)
                if m < 0:
                    m = _new_piece(cp, s, e, ids, raw, ranks, rank, byte_ids, limit, chars, tree)
                if keep:
                    if not _has_room(cache, e - s, m):
                        return k, o
                    _insert(cache, slot, h, cp, s, e, ids, np.int64(0), m)
                for t in range(m):
                    out[o + t] = ids[t]
                o += m
        if record:
            item_end[k] = o
        k += 1
    return k, o


@njit(nogil=True)
def longest_piece(items):  # type: ignore[no-untyped-def]
    """The code points of the longest piece of ``items`` (special tokens left out), 1 at
    least."""
    starts, ends, special = items
    longest = 1
    for t in range(starts.size):
        if special[t] < 0 and ends[t] - starts[t] > longest:
            longest = ends[t] - starts[t]
    return longest


@helper
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


@helper
def _utf8_size(c):  # type: ignore[no-untyped-def]
    # subtle: count_kernels has the same four lines; numba's cache checks only the file of
    # the function it compiled, so a kernel calling another module's function would keep
    # running that function's old code after it changed. Each kernel module keeps its own.
    if c < 0x80:
        return 1
    if c < 0x800:
        return 2
    if c < 0x10000:
        return 3
    return 4


KERNELS = (
    rank_table,
    merge_tree,
    fill_tokens,
    rehash,
    encode,
    longest_piece,
    spans,
    rehash_short,
    fill_short_tokens,
    merge_ids,
)
cache_in_user_dir(*KERNELS)
