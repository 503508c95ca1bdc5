"""Compiled kernels of the merge loop: pair index, occurrence lists and priority queue.

What it does: numba functions over flat NumPy arrays that build the pair counts of a corpus's
unique pre-tokens ("words"), pop the best pair and replace its occurrences, touching only the
positions where it occurs. :class:`~.merge_engine.CompiledMergeEngine` owns the arrays and
calls these; nothing else should. What it leaves out: token bytes as Python objects, the
vocabulary, growing arrays (the engine sizes them before each call).

Layout (all words concatenated, one slot per byte):
- ``tok[p]`` the token id at position ``p`` (-1 once merged into its left neighbour),
  ``nxt[p]`` / ``prv[p]`` the next / previous live position in the same word (-1 at an end),
  ``ppair[p]`` the id of the pair starting at ``p`` (-1 at a word's end or once merged away),
  ``wof[p]`` the word ``p`` belongs to, ``wfreq[w]`` that word's count.
- A pair id ``i`` has ``pa[i], pb[i]`` (its tokens), ``pcount[i]`` (weighted count, the truth),
  ``phead[i]`` / ``plen[i]`` (its occurrence list: the head slot in ``opos``/``onext`` and the
  list's length). An occurrence is the position of the pair's left token; lists are
  append-only and may hold stale positions: ``p`` is a live occurrence of ``i`` iff
  ``ppair[p] == i``.
- ``hkeys``/``hvals``: open-addressing hash ``a << 32 | b`` -> pair id (-1 = empty slot).
- The queue ``hc``/``hp`` is a binary heap of (count, pair id) with lazy invalidation: every
  pair with a positive count has an entry whose count is >= its live count (an increase
  pushes a new entry; a decrease leaves the old one, corrected when it surfaces).
- ``tbuf``/``toff``: the bytes of token ``t`` are ``tbuf[toff[t]:toff[t + 1]]``, for ties.
- ``meta``: [number of pairs, occurrence slots used, heap size].

- The record of the best pairs before every merge (``track``; no rows when not recording):
  row ``r`` of ``rec`` holds the ``n`` best pairs before merge ``r``: their left tokens,
  right tokens and counts, ``n`` of each (count 0 past the last pair). ``cand`` is
  [candidates, boundary count, boundary pair, rows written, then the candidate pair ids]:
  every pair not a candidate comes out of the queue after the boundary (count -1: no pair is
  outside). Two arrays, not five: numba's dispatcher types every array of a call, each time.

The kernels take them in four tuples (numba passes a tuple of arrays as it passes the arrays):
``words = (tok, nxt, prv, ppair, wof, wfreq)``, ``pairs = (hkeys, hvals, meta, pa, pb, pcount,
phead, plen, opos, onext)``, ``queue = (hc, hp, tbuf, toff)`` and ``track = (cand, rec)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..io.kernel_options import helper
from ..io.numba_cache import cache_in_user_dir

# Every kernel is compiled with nogil=True: the merge loop may run in a worker thread while a
# GUI thread draws.
NPAIRS, NOCC, HSIZE = 0, 1, 2
NCAND, BCOUNT, BPAIR, ROWS, CAND = 0, 1, 2, 3, 4


@helper
def _slot(hkeys: np.ndarray, key: np.int64) -> np.int64:
    """The slot holding ``key``, or the empty slot where it would go."""
    mask = hkeys.size - 1
    h = (key * np.int64(-7046029254386353131)) >> np.int64(20)
    i = h & mask
    while hkeys[i] != key and hkeys[i] != -1:
        i = (i + 1) & mask
    return i


@njit(nogil=True)
def rehash(hkeys: np.ndarray, hvals: np.ndarray, new_cap: int) -> tuple[np.ndarray, np.ndarray]:
    keys = np.full(new_cap, -1, np.int64)
    vals = np.empty(new_cap, np.int32)
    for i in range(hkeys.size):
        k = hkeys[i]
        if k != -1:
            s = _slot(keys, k)
            keys[s] = k
            vals[s] = hvals[i]
    return keys, vals


@helper
def _above(c1, p1, c2, p2, pa, pb, tbuf, toff) -> bool:  # type: ignore[no-untyped-def]
    """Whether queue entry (c1, p1) comes out before (c2, p2): the greater count, then the
    lexicographically greater (left bytes, right bytes)."""
    if c1 != c2:
        return c1 > c2
    for side in range(2):
        t1 = pa[p1] if side == 0 else pb[p1]
        t2 = pa[p2] if side == 0 else pb[p2]
        if t1 == t2:
            continue
        s1, e1, s2, e2 = toff[t1], toff[t1 + 1], toff[t2], toff[t2 + 1]
        n1, n2 = e1 - s1, e2 - s2
        for j in range(min(n1, n2)):
            x, y = tbuf[s1 + j], tbuf[s2 + j]
            if x != y:
                return x > y
        # subtle: distinct tokens may still be equal bytes (a special token spelled like a
        # merge); then the right tokens decide, as Python's tuple comparison would.
        if n1 != n2:
            return n1 > n2
    return False


@helper
def _sift_up(hc, hp, i, pa, pb, tbuf, toff):  # type: ignore[no-untyped-def]
    c, p = hc[i], hp[i]
    while i > 0:
        parent = (i - 1) >> 1
        if not _above(c, p, hc[parent], hp[parent], pa, pb, tbuf, toff):
            break
        hc[i], hp[i] = hc[parent], hp[parent]
        i = parent
    hc[i], hp[i] = c, p


@helper
def _sift_down(hc, hp, i, n, pa, pb, tbuf, toff):  # type: ignore[no-untyped-def]
    c, p = hc[i], hp[i]
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and _above(
            hc[child + 1], hp[child + 1], hc[child], hp[child], pa, pb, tbuf, toff
        ):
            child += 1
        if not _above(hc[child], hp[child], c, p, pa, pb, tbuf, toff):
            break
        hc[i], hp[i] = hc[child], hp[child]
        i = child
    hc[i], hp[i] = c, p


@helper
def _push(hc, hp, meta, c, p, pa, pb, tbuf, toff):  # type: ignore[no-untyped-def]
    n = meta[HSIZE]
    hc[n], hp[n] = c, p
    meta[HSIZE] = n + 1
    _sift_up(hc, hp, n, pa, pb, tbuf, toff)


@helper
def _pop(hc, hp, meta, pa, pb, tbuf, toff):  # type: ignore[no-untyped-def]
    c, p = hc[0], hp[0]
    n = meta[HSIZE] - 1
    meta[HSIZE] = n
    if n > 0:
        hc[0], hp[0] = hc[n], hp[n]
        _sift_down(hc, hp, 0, n, pa, pb, tbuf, toff)
    return c, p


@helper
def _pop_valid(hc, hp, meta, pcount, pa, pb, tbuf, toff):  # type: ignore[no-untyped-def]
    """Pop entries until one whose count is the pair's live count; (-1, 0) if none is left.
    An entry above its pair's live count is pushed back at the live count."""
    while meta[HSIZE] > 0:
        c, p = _pop(hc, hp, meta, pa, pb, tbuf, toff)
        live = pcount[p]
        if live == c:
            return p, c
        if 0 < live < c:
            _push(hc, hp, meta, live, p, pa, pb, tbuf, toff)
        # live > c: a newer entry holds the live count; live == 0: the pair is gone.
    return np.int32(-1), np.int64(0)


@njit(nogil=True)
def pop_best(pairs, queue):  # type: ignore[no-untyped-def]
    """The next pair to merge and its count, taken off the queue; (-1, 0) when none is left."""
    _, _, meta, pa, pb, pcount, _, _, _, _ = pairs
    hc, hp, tbuf, toff = queue
    return _pop_valid(hc, hp, meta, pcount, pa, pb, tbuf, toff)


@njit(nogil=True)
def top(pairs, queue, k):  # type: ignore[no-untyped-def]
    """The ``k`` best distinct pairs (ids, counts), best first; the queue keeps them."""
    ids = np.empty(k, np.int32)
    n = _top_into(pairs, queue, ids)
    return ids[:n], pairs[5][ids[:n]]


@njit(nogil=True)
def _top_into(pairs, queue, ids):  # type: ignore[no-untyped-def]
    """Write the ``ids.size`` best distinct pair ids into ``ids``, best first; return how
    many there are. The queue keeps them."""
    _, _, meta, pa, pb, pcount, _, _, _, _ = pairs
    hc, hp, tbuf, toff = queue
    k = ids.size
    counts = np.empty(k, np.int64)
    n = 0
    while n < k:
        p, c = _pop_valid(hc, hp, meta, pcount, pa, pb, tbuf, toff)
        if p < 0:
            break
        dup = False
        for j in range(n):
            if ids[j] == p:
                dup = True  # a second valid entry of a pair already taken; one is kept
        if not dup:
            ids[n], counts[n] = p, c
            n += 1
    for j in range(n):
        _push(hc, hp, meta, counts[j], ids[j], pa, pb, tbuf, toff)
    return n


@helper
def _pair_id(hkeys, hvals, meta, pa, pb, pcount, phead, plen, a, b):  # type: ignore[no-untyped-def]
    key = (np.int64(a) << np.int64(32)) | np.int64(b)
    s = _slot(hkeys, key)
    if hkeys[s] == key:
        return hvals[s]
    i = meta[NPAIRS]
    meta[NPAIRS] = i + 1
    hkeys[s] = key
    hvals[s] = i
    pa[i], pb[i], pcount[i], phead[i], plen[i] = a, b, 0, -1, 0
    return np.int32(i)


@helper
def _add_occurrence(opos, onext, meta, phead, plen, pid, pos):  # type: ignore[no-untyped-def]
    o = meta[NOCC]
    meta[NOCC] = o + 1
    opos[o] = pos
    onext[o] = phead[pid]
    phead[pid] = o
    plen[pid] += 1


@njit(nogil=True)
def build(words, pairs, queue):  # type: ignore[no-untyped-def]
    """Count every adjacent pair, index its occurrences and heapify the queue."""
    tok, nxt, _, ppair, wof, wfreq = words
    hkeys, hvals, meta, pa, pb, pcount, phead, plen, opos, onext = pairs
    hc, hp, tbuf, toff = queue
    for p in range(tok.size):
        q = nxt[p]
        if q < 0:
            ppair[p] = -1
            continue
        i = _pair_id(hkeys, hvals, meta, pa, pb, pcount, phead, plen, tok[p], tok[q])
        pcount[i] += wfreq[wof[p]]
        _add_occurrence(opos, onext, meta, phead, plen, i, p)
        ppair[p] = i
    n = meta[NPAIRS]
    for i in range(n):
        hc[i], hp[i] = pcount[i], i
    meta[HSIZE] = n
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(hc, hp, i, n, pa, pb, tbuf, toff)


@njit(nogil=True)
def apply(pid, new_id, words, pairs, queue, track):  # type: ignore[no-untyped-def]
    """Replace every occurrence of pair ``pid`` by ``new_id``, left to right within a word,
    and update the counts, occurrence lists and queue of exactly the pairs it changes; then,
    when recording, record the best pairs before the next merge. Returns the number of places
    merged."""
    tok, nxt, prv, ppair, wof, wfreq = words
    hkeys, hvals, meta, pa, pb, pcount, phead, plen, opos, onext = pairs
    hc, hp, tbuf, toff = queue
    a, b = pa[pid], pb[pid]
    sites = np.empty(plen[pid], np.int32)
    k = 0
    e = phead[pid]
    while e >= 0:
        p = opos[e]
        if ppair[p] == pid:
            sites[k] = p
            k += 1
        e = onext[e]
    sites = sites[:k]
    if a == b:
        # subtle: in "a a a" both positions are listed but only the left one merges, so
        # overlapping sites must be taken left to right (positions ascend within a word).
        sites.sort()
    first_new = meta[NPAIRS]
    for j in range(k):
        p = sites[j]
        if ppair[p] != pid:  # merged away by the site just left of it (a == b)
            continue
        q = nxt[p]
        f = wfreq[wof[p]]
        left, right = prv[p], nxt[q]
        # The pairs around the site move to the new token. A left neighbour that an earlier
        # site already merged shows up here as new_id, so "a b a b" nets (ab, ab) +1.
        if left >= 0:
            pcount[ppair[left]] -= f
            i = _pair_id(hkeys, hvals, meta, pa, pb, pcount, phead, plen, tok[left], new_id)
            pcount[i] += f
            _add_occurrence(opos, onext, meta, phead, plen, i, left)
            ppair[left] = i
        if right >= 0:
            pcount[ppair[q]] -= f
            i = _pair_id(hkeys, hvals, meta, pa, pb, pcount, phead, plen, new_id, tok[right])
            pcount[i] += f
            _add_occurrence(opos, onext, meta, phead, plen, i, p)
            ppair[p] = i
        else:
            ppair[p] = -1
        tok[p] = new_id
        tok[q] = -1
        ppair[q] = -1
        nxt[p] = right
        if right >= 0:
            prv[right] = p
    pcount[pid] = 0
    # Only pairs holding new_id can have gained, and those are exactly the pairs created by
    # this call; the others lost and keep their (higher) entries until those surface.
    for i in range(first_new, meta[NPAIRS]):
        if pcount[i] > 0:
            _push(hc, hp, meta, pcount[i], i, pa, pb, tbuf, toff)
    if track[1].shape[0]:
        record(pairs, queue, track, first_new)
    return k


@njit(nogil=True)
def record(pairs, queue, track, first_new):  # type: ignore[no-untyped-def]
    """Write the next row of the record: the best pairs now, in the queue's order, after a
    merge that created the pairs ``first_new`` on (all pairs created before are listed in
    ``cand`` or come after the boundary, and only new pairs can have gained).

    The candidates are kept from row to row: those the merge left are re-sorted by their live
    counts, new pairs that beat the boundary join them, and only when fewer than a row's
    width of them still beat it (nothing outside can come between) are they taken anew from
    the queue, twice a row's width of them."""
    _, _, meta, pa, pb, pcount, _, _, _, _ = pairs
    _, _, tbuf, toff = queue
    tmeta, rec = track
    cand = tmeta[CAND:]
    width = rec.shape[1] // 3
    n = 0
    for i in range(tmeta[NCAND]):
        if pcount[cand[i]] > 0:
            cand[n] = cand[i]
            n += 1
    bc, bp = tmeta[BCOUNT], tmeta[BPAIR]
    full = False
    for i in range(first_new, meta[NPAIRS]):
        c = pcount[i]
        if c > 0 and (bc < 0 or _above(c, i, bc, bp, pa, pb, tbuf, toff)):
            if n == cand.size:
                full = True
                break
            cand[n] = i
            n += 1
    # Insertion sort, best first: the candidates were sorted, and a merge moves few of them.
    for i in range(1, n):
        p = cand[i]
        j = i
        while j > 0 and _above(pcount[p], p, pcount[cand[j - 1]], cand[j - 1], pa, pb, tbuf, toff):
            cand[j] = cand[j - 1]
            j -= 1
        cand[j] = p
    sure = n
    if bc >= 0:
        sure = 0
        while sure < n and not _above(bc, bp, pcount[cand[sure]], cand[sure], pa, pb, tbuf, toff):
            sure += 1
    if full or (sure < width and bc >= 0):
        fresh = np.empty(2 * width, np.int32)
        n = _top_into(pairs, queue, fresh)
        cand[:n] = fresh[:n]
        if n == fresh.size:
            bc, bp = pcount[fresh[n - 1]], fresh[n - 1]
        else:
            bc, bp = -1, 0
    tmeta[NCAND], tmeta[BCOUNT], tmeta[BPAIR] = n, bc, bp
    r = tmeta[ROWS]
    for i in range(width):
        if i < n:
            p = cand[i]
            rec[r, i], rec[r, width + i], rec[r, 2 * width + i] = pa[p], pb[p], pcount[p]
        else:
            rec[r, i], rec[r, width + i], rec[r, 2 * width + i] = -1, -1, 0
    tmeta[ROWS] = r + 1


# Compiled code is cached outside the source tree (see numba_cache); the first run compiles.
KERNELS = (rehash, pop_best, top, build, apply, record)
cache_in_user_dir(*KERNELS)
