"""The packed formats the encoder works in: ids as native 32-bit bytes, and the rank table.

What it does: a merge is entered in the rank table as ``(left id, right id) -> rank << 32 |
merged id``: one int, so ``min()`` finds the lowest rank and ``made`` (the mask) gives the merged
id. Ids are held packed as native unsigned 32-bit integers (``pack``, ``unpack``,
``split_ids``). :func:`rank_table` builds the table from the merges' tokens or ids. What it
leaves out: merging itself (``merger``) and the vocabulary (``building``).
"""

from __future__ import annotations

import operator
import struct
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import numpy

ID_MASK = (1 << 32) - 1
# Greater than any packed rank: "no merge" for a pair, so min() over a pre-token's pairs works;
# the largest int64, so that the same value fills the NumPy and compiled kernels' rank arrays.
NO_MERGE = (1 << 63) - 1
# The cache holds each pre-token's ids packed as native unsigned 32-bit integers (the array
# module's typecode "I"): bytes are never tracked by the cyclic garbage collector, where tens of
# thousands of new tuples made its next pass walk every one of them after a long encode, and a
# text's ids are one ``bytes.join`` of its pre-tokens' values.
PACKED = "I"
WIDTH = 4
if array(PACKED).itemsize != WIDTH:  # pragma: no cover - no supported platform
    raise ImportError("array typecode 'I' is not 32 bits wide on this platform")
ONE_ID = struct.Struct(f"={PACKED}")  # one id, packed as the cache holds it
NUMPY_DTYPE = f"={PACKED}"  # the NumPy dtype of packed ids

# (left ids, right ids, made ids) of the merges, in rank order.
MergeLists = tuple[list[int], list[int], list[int]]
RankTable = dict[tuple[int, int], int]


def rank_of(packed: int) -> int:
    """The rank of a rank-table entry."""
    return packed >> 32


def made(packed: int) -> int:
    """The merged id of a rank-table entry."""
    return packed & ID_MASK


def pack(ids: Iterable[int]) -> bytes:
    """``ids`` packed (see ``PACKED``)."""
    return array(PACKED, ids).tobytes()


def unpack(packed: bytes) -> list[int]:
    """The ids of packed bytes."""
    return array(PACKED, packed).tolist()


def split_ids(flat: numpy.ndarray, ends: list[int]) -> Iterator[bytes]:
    """Each pre-token's ids packed, from a batch's one array of ids and where each pre-token's
    ids end in it."""
    data = flat.astype(NUMPY_DTYPE).tobytes()
    cuts = [e * WIDTH for e in ends]
    return map(data.__getitem__, map(slice, [0, *cuts], cuts))


def rank_table_of_ids(
    lefts: list[int], rights: list[int], made_ids: list[int]
) -> tuple[RankTable, MergeLists | None]:
    """The rank table of the merges' ids, in rank order; a repeated pair keeps its first
    (lowest) rank. With it, the merge lists themselves when no pair repeats: in rank order
    they are the table too, and the batch merger reads them several times faster than the
    dict's keys. Built with C-level maps: for o200k's 200,000 merges a Python loop was most
    of the construction time."""
    packed = map(operator.or_, map(operator.lshift, range(len(made_ids)), repeat(32)), made_ids)
    # subtle: reversed, so that the first occurrence of a repeated pair is written last and wins.
    pairs = list(zip(lefts, rights))
    ranks = dict(zip(reversed(pairs), reversed(list(packed))))
    lists = (lefts, rights, made_ids) if len(ranks) == len(made_ids) else None
    return ranks, lists


def rank_table(
    inverse: dict[bytes, int],
    merges: Sequence[tuple[bytes, bytes]],
    lefts_b: Sequence[bytes],
    rights_b: Sequence[bytes],
) -> tuple[RankTable, MergeLists | None]:
    """``rank_table_of_ids`` of merges given as tokens (``inverse``: token -> id); a merge whose
    part or result is not in the vocabulary is a ValueError naming it."""
    if not merges:
        return {}, None
    get = inverse.get
    lefts = list(map(get, lefts_b))
    rights = list(map(get, rights_b))
    made_ids = list(map(get, map(bytes.__add__, lefts_b, rights_b)))
    if None in lefts or None in rights or None in made_ids:
        rank = next(i for i, t in enumerate(zip(lefts, rights, made_ids)) if None in t)
        a, b = merges[rank]
        absent = a if lefts[rank] is None else b if rights[rank] is None else a + b
        raise ValueError(f"merge {rank} ({a!r}, {b!r}): token {absent!r} is not in the vocabulary")
    # no None, see above
    return rank_table_of_ids(*cast("MergeLists", (lefts, rights, made_ids)))
