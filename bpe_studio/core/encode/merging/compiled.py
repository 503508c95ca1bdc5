"""The compiled merger: a text's pieces to ids in compiled code, with a bounded piece cache.

What it does: :class:`RankArrays` is the rank table as the kernels read it (built once per
tokenizer and shared by all its truncations, which pass their own rank limit).
:class:`CompiledMerger` holds one tokenizer's side of it: the rank table and limit, the byte
tokens' ids, its piece cache (``piece_table``; kept across calls, bounded) and, for
``ignore_merges``, the whole tokens; :meth:`CompiledMerger.encode` gives the ids of a text's
pieces and special tokens, :meth:`CompiledMerger.spans` each token's characters. What the
kernels write (the piece caches, the memo of merging from characters) is a :class:`Lane`;
each thread that encodes at the same time holds one of its own (:meth:`CompiledMerger.hold`),
so threads encode in parallel (the kernels release Python's lock) and a short encode on one
thread never waits for a long one on another; a thread that finds every lane taken (four per
processor) uses the Python path. What it leaves out: finding the pieces (``encoder``), the
kernels (``encode_kernel``), loading them (``kernel_start``).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Mapping
from types import ModuleType
from typing import NamedTuple

import numpy as np

from .char_cuts import CutTables
from .packed import NO_MERGE, RankTable
from .piece_table import PieceTable, ShortTable, pow2_at_least, readonly

# (starts, ends, special ids): a text's pieces and special tokens in order (``encode_kernel``).
Items = tuple[np.ndarray, np.ndarray, np.ndarray]
# The memo of pairs of tokens (``encode_kernel._no_cross``): its slots, a power of two.
TOKEN_PAIRS = 1 << 18
# The bits of the pieces cut into parts seen once (``encode_kernel._seen_before``): a power of
# two, 128 KB.
SEEN_BITS = 1 << 20
# Texts of this many characters or more are encoded thriftily (``CompiledMerger.encode``).
THRIFTY_CHARS = 1 << 18
# The processors this process may run on.
PROCESSORS = (
    len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
)
# Lanes per merger at most: each lane's caches may grow to about 70 MB, and a thread past the
# last takes the Python path, so a few more than the processors (threads of their own, the
# app's editor beside a Report on two).
MAX_LANES = 4 * max(2, PROCESSORS)
# Seconds a thread waits for the list of free lanes (held for microseconds) before it takes
# the Python path.
_LANES_WAIT = 1.0
# Every merger, so that a forked child gives each a lanes' lock of its own (one another
# thread held at the fork stays held in the child).
_MERGERS: weakref.WeakSet[CompiledMerger] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    # subtle: the free lanes stay as they were; a lane another thread held at the fork may be
    # half written, and is in no list, so the child never uses it.
    for merger in list(_MERGERS):
        merger._lanes_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class RankArrays(NamedTuple):
    """The rank table in open addressing, the pairs of bytes' ranks and the merge tree
    (``encode_kernel``'s layout; ``tree`` without a monotone flag set when the merges'
    tokens are not known in rank order: merging from characters is then off)."""

    table: np.ndarray
    by_bytes: np.ndarray
    tree: tuple[np.ndarray, np.ndarray, np.ndarray, bool]

    @classmethod
    def of_lists(
        cls,
        kernels: ModuleType,
        lefts: np.ndarray,
        rights: np.ndarray,
        made: np.ndarray,
        byte_ids: np.ndarray,
    ) -> RankArrays:
        """The table of the merges' ids in rank order (a repeated pair keeps its first rank)."""
        lefts, rights = np.asarray(lefts, np.int64), np.asarray(rights, np.int64)
        made = np.asarray(made, np.int64)
        pairs = (lefts << 32) | rights
        packed = (np.arange(len(pairs), dtype=np.int64) << 32) | made
        bound = int(max(made.max(initial=0), byte_ids.max(initial=0))) + 1
        tree = kernels.merge_tree(lefts, rights, made, bound)
        return cls._built(kernels, pairs, packed, byte_ids, tree)

    @classmethod
    def of_table(cls, kernels: ModuleType, ranks: RankTable, byte_ids: np.ndarray) -> RankArrays:
        """The table of a Python rank table (``packed.rank_table``: pair -> packed rank)."""
        pairs = np.array(list(ranks), dtype=np.int64).reshape(-1, 2)
        packed = np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))
        empty = np.zeros(0, np.int64)
        tree = kernels.merge_tree(empty, empty, empty, 1)
        no_tree = (*tree[:3], False)
        return cls._built(kernels, (pairs[:, 0] << 32) | pairs[:, 1], packed, byte_ids, no_tree)

    @classmethod
    def _built(
        cls,
        kernels: ModuleType,
        pairs: np.ndarray,
        packed: np.ndarray,
        byte_ids: np.ndarray,
        tree: tuple[np.ndarray, np.ndarray, np.ndarray, bool],
    ) -> RankArrays:
        cap = 2 * pow2_at_least(max(len(pairs), 1))
        table, by_bytes = kernels.rank_table(pairs, packed, cap, np.asarray(byte_ids, np.int64))
        return cls(table, by_bytes, tree)


class Lane:
    """What one thread's encode writes (see the module docstring): the piece cache, the short
    pieces' cache, the parts' cache, and what merging from characters knows."""

    __slots__ = ("cache", "short", "part_cache", "chars")

    def __init__(self, fits: bool, tokens: int) -> None:
        self.cache = PieceTable.new_cache()
        self.short = ShortTable.new_cache() if fits else ShortTable.empty()
        # The parts of pieces cut by ``cuts`` (short runs of characters, a few thousand in a
        # Chinese text): a table of their own stays small enough for the processor's caches,
        # where the pieces' would not.
        self.part_cache = PieceTable.new_cache()
        # What merging from characters knows (``encode_kernel._from_chars``): 16 slots per
        # BMP code point and a memo of pairs of characters; and the bits of pieces cut into
        # parts seen once. numpy.zeros leaves the pages untouched until first written.
        self.chars = (
            np.zeros(4 << 16, np.int64),
            np.zeros(tokens, np.int8),
            np.zeros(TOKEN_PAIRS, np.int64),
            np.zeros(TOKEN_PAIRS, np.int8),
            np.zeros(SEEN_BITS // 8, np.uint8),
        )


class CompiledMerger:
    """One tokenizer's compiled merging (see the module docstring). ``limit``: merges of this
    rank or later are left out (a truncated tokenizer's); ``whole``: the whole tokens (bytes ->
    id) to look a piece up as first, or None; ``whole_all``: every piece, not only ASCII ones
    (``ignore_merges``); ``cuts``: where new pieces may be cut into parts, merged and cached
    each (``char_cuts``), or None (nowhere)."""

    def __init__(
        self,
        kernels: ModuleType,
        rank: RankArrays,
        byte_ids: np.ndarray,
        *,
        limit: int | None = None,
        whole: Mapping[bytes, int] | None = None,
        whole_all: bool = False,
        cuts: CutTables | None = None,
    ) -> None:
        self._kernels = kernels
        self.rank = rank
        self.limit = NO_MERGE if limit is None else limit << 32  # every merge
        self.byte_ids = np.asarray(byte_ids, np.int64)
        self.whole_all = whole_all
        self.cuts = cuts if cuts is not None else CutTables.none()
        # Short pieces have a cache of their own when every id fits its values, and so do the
        # whole tokens that are short pieces (a short piece is looked up there only).
        # subtle: a whole token may be no merge's (``ignore_merges`` looks up every token), so
        # its id counts too.
        top_id = max(len(rank.tree[0]) - 1, max(whole.values(), default=0) if whole else 0)
        self._fits = top_id < (1 << kernels.SHORT_ID_BITS) - 1
        self.whole, self.short_whole = PieceTable.empty(), ShortTable.empty()
        if whole is not None:
            # The whole tokens are looked up for ASCII pieces only, unless ``whole_all``.
            self.whole = PieceTable.of_tokens(
                kernels, whole, ascii_only=not whole_all, skip_short=self._fits
            )
            if self._fits:
                self.short_whole = ShortTable.of_tokens(kernels, whole, ascii_only=not whole_all)
        # The lane a thread uses when it holds none (a direct call, the warm-up), the lanes
        # free now (the first is taken first: its caches are the warmest), how many exist.
        self._first = self._new_lane()
        self._free = [self._first]
        self._lanes = 1
        self._lanes_lock = threading.Lock()
        self._held = threading.local()
        _MERGERS.add(self)

    def _new_lane(self) -> Lane:
        return Lane(self._fits, len(self.rank.tree[0]))

    # The first lane's tables, as a single thread sees them.
    @property
    def cache(self) -> PieceTable:
        return self._first.cache

    @property
    def short(self) -> ShortTable:
        return self._first.short

    @property
    def part_cache(self) -> PieceTable:
        return self._first.part_cache

    def hold(self) -> Hold:
        """A block (``with merger.hold() as mine:``) in which this thread holds a lane, if
        ``mine`` (False: every lane is taken by threads encoding now); :meth:`encode` and
        :meth:`spans` in the block write to it."""
        return Hold(self)

    def _take_lane(self) -> Lane | None:
        lane = None
        lock = self._lanes_lock
        # subtle: a wait, not a blocking acquire: the lock is held for microseconds, and a
        # forked child gets a new one (``_after_fork_in_child``); should one stay held all
        # the same, the caller takes the Python path rather than waiting for ever. The try
        # without a wait first costs a third of one with it (a short text's encode).
        if lock.acquire(False) or lock.acquire(timeout=_LANES_WAIT):
            try:
                lane = self._free.pop() if self._free else None
                if lane is None and self._lanes < MAX_LANES:
                    self._lanes += 1
                    lane = self._new_lane()
            finally:
                lock.release()
        return lane

    def _give_lane(self, lane: Lane) -> None:
        lock = self._lanes_lock
        if lock.acquire(False) or lock.acquire(timeout=_LANES_WAIT):
            try:
                if lane is self._first:
                    self._free.append(lane)
                else:
                    self._free.insert(0, lane)
            finally:
                lock.release()

    def encode(
        self, cp: np.ndarray, items: Items, record: bool = False
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The ids (uint32) of ``items`` over the code points ``cp``, and with ``record`` where
        each item's ids end, in the lane this thread holds (:meth:`hold`), else the first."""
        kernels = self._kernels
        lane = getattr(self._held, "lane", None) or self._first
        cp = readonly(cp)
        starts = items[0]
        out = np.empty(_id_bound(cp, items), np.uint32)
        item_end = np.empty(len(starts) if record else 0, np.int64)
        k = o = 0
        # A long text (a file, a corpus) enters a piece cut into parts whole only from its
        # second sighting (most of a Chinese text's pieces occur once); a short one (what
        # the editor re-tokenizes after each edit) enters every piece.
        thrifty = len(cp) >= THRIFTY_CHARS
        # subtle: measured once here, not by the kernel each time it starts again after a
        # cache grew: reading every remaining item again cost more than the new pieces'
        # merges in a long text's first encode (docs/encoding.md, "Growing the caches").
        longest = kernels.longest_piece(items)
        while True:
            k, o = kernels.encode(
                cp, items, k, o, out, item_end, self.byte_ids, self.rank[:2], self.limit,
                lane.cache.arrays, self.whole.arrays, self.whole_all, lane.chars,
                self.rank.tree, self.cuts, lane.part_cache.arrays, thrifty,
                lane.short.arrays, self.short_whole.arrays, longest,
            )  # fmt: skip
            if k >= len(starts):
                break
            # A cache had no room for item k (or a part of it): grow it (or start afresh) and
            # go on there.
            if lane.short.full():
                # subtle: then the short table stopped it (or will at its next new piece);
                # the piece caches are looked at when the kernel stops again, so that a short
                # piece never empties one that is merely full.
                lane.short = lane.short.made_room(kernels)
                continue
            n_cp = int(items[1][k] - items[0][k])
            if lane.cache.short_of(n_cp, 4 * n_cp):
                lane.cache = lane.cache.made_room(kernels, n_cp, 4 * n_cp)
            if lane.part_cache.short_of(n_cp, 4 * n_cp):
                lane.part_cache = lane.part_cache.made_room(kernels, n_cp, 4 * n_cp)
        return out[:o], (item_end if record else None)

    def spans(
        self, cp: np.ndarray, items: Items, token_size: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(ids, starts, ends, partial) of every token of ``items``: its characters in
        ``cp``'s text (``token_size``: each id's byte count), as :meth:`encode`."""
        ids, item_end = self.encode(cp, items, record=True)
        assert item_end is not None
        spans = self._kernels.spans(readonly(cp), items, item_end, ids, token_size)
        starts, ends, partial = spans
        return ids, starts, ends, partial


class Hold:
    """``CompiledMerger.hold``'s block. A class rather than a generator: entering and leaving
    one cost a short text's encode a tenth of its time."""

    __slots__ = ("_merger", "_lane", "_outer")

    def __init__(self, merger: CompiledMerger) -> None:
        self._merger = merger
        self._lane: Lane | None = None
        self._outer: Lane | None = None

    def __enter__(self) -> bool:
        merger = self._merger
        self._lane = lane = merger._take_lane()
        held = merger._held
        self._outer = getattr(held, "lane", None)
        held.lane = lane
        return lane is not None

    def __exit__(self, *exc: object) -> None:
        merger = self._merger
        merger._held.lane = self._outer
        if self._lane is not None:
            merger._give_lane(self._lane)


# Below this many code points the ids' bound is four per code point and one per item: the
# exact count of UTF-8 bytes (four passes over the text) cost a short text 4 us of its 20.
ROUGH_BOUND_CHARS = 1 << 12


def _id_bound(cp: np.ndarray, items: Items) -> int:
    """At most as many ids as the pieces' UTF-8 bytes, one per special token."""
    n = len(cp)
    if n < ROUGH_BOUND_CHARS:
        return 4 * n + len(items[0])
    specials = int(np.count_nonzero(items[2] >= 0))
    if n and int(cp.max()) >= 0x80:
        n += int(np.count_nonzero(cp >= 0x80)) + int(np.count_nonzero(cp >= 0x800))
        n += int(np.count_nonzero(cp >= 0x10000))
    return n + specials
