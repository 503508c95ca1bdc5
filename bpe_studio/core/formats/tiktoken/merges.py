"""The merge list a tiktoken rank table implies (:func:`derive_merges`).

Why derived merges reproduce tiktoken: tiktoken's encoder joins, again and again, the
adjacent pair whose concatenation has the lowest rank. When it forms a token ``t``, every join
inside ``t``'s bytes so far was the lowest-ranked one available there, so the two parts it
joins are exactly what BPE over ``t``'s own bytes ends with when only ranks below ``t``'s may
join. Listing that one pair per token, in rank order, gives a merge list under which
rank-by-merge BPE takes the same steps as tiktoken on every text; a token whose bytes do not
end in two parts that way is one this module refuses.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping

# Tokens longer than this are split with a heap (O(n log n)) rather than by scans of every
# pair after each join (O(n^2) joins of bytes: a run's token of 64 KB took minutes).
SCAN_MAX = 64


def _split_point(token: bytes, rank: int, ranks: Mapping[bytes, int]) -> int:
    """BPE over ``token``'s bytes joining only pairs ranked below ``rank``, until two parts
    remain: the length of the left one, or 0 if it gets stuck at three or more parts."""
    if len(token) > SCAN_MAX:
        return _split_point_long(token, rank, ranks)
    parts = [token[i : i + 1] for i in range(len(token))]
    get = ranks.get
    while len(parts) > 2:
        best, at = rank, -1
        for i in range(len(parts) - 1):
            r = get(parts[i] + parts[i + 1])
            # subtle: strict "<" keeps the leftmost of equal ranks, as tiktoken does.
            if r is not None and r < best:
                best, at = r, i
        if at < 0:
            return 0
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return len(parts[0])


def _split_point_long(token: bytes, rank: int, ranks: Mapping[bytes, int]) -> int:
    """:func:`_split_point` with a heap of (rank, start) over the parts, each part known by
    where it starts (``end[start]``, -1 once joined into the part before), stale entries
    skipped on the way out; the leftmost of equal ranks first, as the scans take it."""
    n, get = len(token), ranks.get
    end = list(range(1, n + 1))
    prev = list(range(-1, n - 1))
    heap = []
    for s in range(n - 1):
        r = get(token[s : s + 2])
        if r is not None and r < rank:
            heap.append((r, s, s + 1, s + 2))
    heapq.heapify(heap)
    parts = n
    while parts > 2 and heap:
        _, s, m, e = heapq.heappop(heap)
        if end[s] != m or m >= n or end[m] != e:
            continue  # stale: a part it joins has been joined otherwise since
        end[s], end[m] = e, -1
        if e < n:
            prev[e] = s
        parts -= 1
        p = prev[s]
        if p >= 0 and (r := get(token[p:e])) is not None and r < rank:
            heapq.heappush(heap, (r, p, s, e))
        if e < n and (r := get(token[s : end[e]])) is not None and r < rank:
            heapq.heappush(heap, (r, s, e, end[e]))
    return end[0] if parts == 2 else 0


def derive_merges(
    ranks: Mapping[bytes, int], describe: Callable[[int], str] | None = None
) -> list[tuple[bytes, bytes]]:
    """The merge list a rank table implies: for each multi-byte token in rank order, the two
    parts tiktoken's encoder joins into it (see the module docstring).

    ``describe(rank)`` names a token in the error for one that cannot be built from lower
    ranks (default: ``"rank N"``).

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    >>> derive_merges(ranks)
    [(b'a', b'b'), (b'ab', b'c')]
    """
    merges: list[tuple[bytes, bytes]] = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        k = _split_point(token, rank, ranks)
        if k == 0:
            what = describe(rank) if describe else f"rank {rank}"
            raise ValueError(
                f"{what}: token {token!r} cannot be built from lower-ranked tokens (BPE over its "
                "bytes with lower ranks stops at three or more parts)"
            )
        merges.append((token[:k], token[k:]))
    return merges
