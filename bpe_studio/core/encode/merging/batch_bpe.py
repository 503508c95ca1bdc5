"""Rank-based BPE of many pre-tokens at once, with NumPy.

What it does: :class:`BatchBpe` merges a whole batch of pre-tokens in rounds. In each round
every pre-token that still has a mergeable pair applies its lowest-ranked pair at every place
it occurs (left to right, so ``a a a`` becomes ``aa a``), as one set of array operations over
all pre-tokens together. Pre-tokens with nothing left to merge leave the working arrays.

Why it is exact: the one-at-a-time algorithm (``Tokenizer._bpe``) merges the leftmost
occurrence of the lowest-ranked pair, then looks again. When every merge ranks after the
merges that made its two parts ("monotone" merges; BPE training always produces such lists,
GPT-2's included), a merge of rank ``r`` only creates pairs that rank after ``r``, so the next
lowest pair is ``r`` again at its next occurrence, until none is left: exactly what one round
does. :meth:`BatchBpe.build` returns None for a merge list that is not monotone.

What it leaves out: pre-tokenization (``pretokenization``) and caching pieces (``merger``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain
from typing import NamedTuple

import numpy as np

from .packed import ID_MASK, NO_MERGE

_NONE = np.int64(NO_MERGE)  # "no merge" in a packed rank array
_EMPTY = -1
# Golden-ratio multiplier for the pair hash table (Fibonacci hashing).
_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)
# The pair table's filter has 2 ** _FILTER_BITS bits (1 MiB), for tables of a few hundred
# thousand merges: about one in 40 pairs that are no merge gets past it.
_FILTER_BITS = 23
# Rounds stop once this few pre-tokens are left: the per-round array overhead (tens of
# microseconds) is then more than merging them one by one.
SCALAR_TAIL = 16


class _PairTable:
    """(left id, right id) -> packed ``rank << 32 | merged id``: an open-addressing hash table
    in NumPy arrays, looked up for a whole array of pairs at once."""

    def __init__(self, left: np.ndarray, right: np.ndarray, packed: np.ndarray, id_bound: int):
        self.radix = np.int64(id_bound)
        keys = left * self.radix + right
        bits = max(8, (4 * len(keys)).bit_length())  # load factor at most 1/4
        self.shift = np.uint64(64 - bits)
        self.mask = np.int64((1 << bits) - 1)
        self.keys = np.full(1 << bits, _EMPTY, dtype=np.int64)
        self.values = np.full(1 << bits, _NONE, dtype=np.int64)
        slots = self._home(keys)
        todo = np.arange(len(keys))
        while len(todo):
            # Every key whose slot is free writes itself there; of several aiming at one slot,
            # one write lands. The rest, and keys whose slot was taken, try the next slot.
            s = slots[todo]
            free = np.flatnonzero(self.keys[s] == _EMPTY)
            self.keys[s[free]] = keys[todo[free]]
            landed = free[self.keys[s[free]] == keys[todo[free]]]
            self.values[s[landed]] = packed[todo[landed]]
            left_over = np.ones(len(todo), dtype=bool)
            left_over[landed] = False
            todo = todo[left_over]
            slots[todo] = (slots[todo] + 1) & self.mask
        # A bit per hash value of a finer hash than the slots', set for every key: most pairs
        # looked up are no merge, and one look at this small array (an eighth of a byte per
        # hash value) turns nearly all of them away before the probing.
        self.filter_shift = np.uint64(64 - _FILTER_BITS)
        hashed = np.zeros(1 << _FILTER_BITS, dtype=bool)
        hashed[self._fine(keys)] = True
        self.filter = np.packbits(hashed, bitorder="little")

    def _home(self, keys: np.ndarray) -> np.ndarray:
        h = (keys.astype(np.uint64) * _HASH_MUL) >> self.shift
        return h.astype(np.int64)

    def _fine(self, keys: np.ndarray) -> np.ndarray:
        return ((keys.astype(np.uint64) * _HASH_MUL) >> self.filter_shift).astype(np.int64)

    def lookup(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Packed ranks of the pairs ``(left[i], right[i])``; ``_NONE`` where no merge."""
        keys = left * self.radix + right
        out = np.full(len(keys), _NONE, dtype=np.int64)
        fine = self._fine(keys)
        # subtle: a key whose bit is clear is in no slot; a set bit may be another key's.
        todo = np.flatnonzero((self.filter[fine >> 3] >> (fine & 7).astype(np.uint8)) & 1)
        slots = np.zeros(len(keys), dtype=np.int64)
        slots[todo] = self._home(keys[todo])
        while len(todo):
            s = slots[todo]
            found = self.keys[s]
            hit = found == keys[todo]
            out[todo[hit]] = self.values[s[hit]]
            todo = todo[~hit & (found != _EMPTY)]
            slots[todo] = (slots[todo] + 1) & self.mask
        return out


class MergeParts(NamedTuple):
    """How each token is made, indexed by id: its two parts (-1 for a byte or special token)
    and the rank of the merge that makes it (-1 likewise). ``ambiguous`` marks tokens that
    more than one merge makes: their history within a text is not one fixed tree."""

    left: np.ndarray
    right: np.ndarray
    rank: np.ndarray
    ambiguous: np.ndarray


class BatchBpe:
    """Merges many pre-tokens at once; see the module docstring."""

    def __init__(
        self, table: _PairTable, byte_ids: Sequence[int], merges: tuple[np.ndarray, ...]
    ) -> None:
        self._table = table
        self._byte_ids = np.array(byte_ids, dtype=np.int64)
        # Every pair of two byte tokens, in one flat array: the first round's lookups.
        left = np.repeat(self._byte_ids, 256)
        right = np.tile(self._byte_ids, 256)
        self._byte_pairs = table.lookup(left, right)
        self._merges = merges  # (left, right, made, rank), for the merge tree on demand
        self._tree: MergeParts | None = None

    @property
    def id_bound(self) -> int:
        """One more than the largest id any merge uses or makes."""
        return int(self._table.radix)

    def lookup(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Packed ranks (``rank << 32 | merged id``) of the pairs ``(left[i], right[i])``;
        ``NO_MERGE`` where there is none."""
        return self._table.lookup(left, right)

    def tree(self) -> MergeParts:
        """Each token's two parts and the rank of the merge that makes it (built on first
        use; ``explain.merge_tree.MergeTree`` is the one a reader of a token's history uses)."""
        if self._tree is None:
            left, right, made, rank = self._merges
            bound = self.id_bound
            parts_left = np.full(bound, -1, dtype=np.int64)
            parts_right = np.full(bound, -1, dtype=np.int64)
            made_rank = np.full(bound, -1, dtype=np.int64)
            parts_left[made], parts_right[made], made_rank[made] = left, right, rank
            ambiguous = np.bincount(made, minlength=bound) > 1
            self._tree = MergeParts(parts_left, parts_right, made_rank, ambiguous)
        return self._tree

    @classmethod
    def build(
        cls,
        ranks: Mapping[tuple[int, int], int],
        byte_ids: Sequence[int],
        vocab_ids: Iterable[int],
        in_rank_order: tuple[Sequence[int], Sequence[int], Sequence[int]] | None = None,
    ) -> BatchBpe | None:
        """A batch merger for these packed ranks (``packed.rank_table``), or None if the
        merges are not monotone. ``in_rank_order``, when given, is the same table as three
        lists (left ids, right ids, made ids) in rank order: faster to read."""
        if not ranks:
            return None
        if in_rank_order is not None:
            left, right, made = (
                np.fromiter(part, dtype=np.int64, count=len(part)) for part in in_rank_order
            )
            rank = np.arange(len(made), dtype=np.int64)
            packed = rank << 32 | made
        else:
            pairs = np.fromiter(chain.from_iterable(ranks), dtype=np.int64, count=2 * len(ranks))
            left, right = pairs[0::2], pairs[1::2]
            packed = np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))
            rank, made = packed >> 32, packed & ID_MASK
        bound = max(max(vocab_ids), int(left.max()), int(right.max()), int(made.max())) + 1
        if bound > 1 << 31:
            return None  # a pair's key, left * bound + right, would not fit in 63 bits
        # made_at[t]: the last rank that makes token t (-1 for bytes and special tokens).
        made_at = np.full(bound, -1, dtype=np.int64)
        np.maximum.at(made_at, made, rank)
        if (rank <= made_at[left]).any() or (rank <= made_at[right]).any():
            return None
        return cls(_PairTable(left, right, packed, bound), byte_ids, (left, right, made, rank))

    def merge(
        self, pieces: Sequence[bytes], finish_one: Callable[[list[int]], list[int]]
    ) -> tuple[np.ndarray, list[int]]:
        """The ids of ``pieces`` (non-empty byte strings), all in one array, and where each
        piece's ids end in it. ``finish_one(ids)`` merges a list of ids one pair at a time;
        it takes the last few stragglers."""
        count = len(pieces)
        if not count:
            return np.empty(0, dtype=np.int64), []
        lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=count)
        if not lengths.all():
            # An empty piece would shift every later piece's ids by one, silently.
            raise ValueError("an empty piece cannot be merged (a pre-tokenizer gave one)")
        raw = np.frombuffer(b"".join(pieces), dtype=np.uint8)
        ranks = np.empty(len(raw), dtype=np.int64)
        ranks[:-1] = self._byte_pairs[raw[:-1].astype(np.int64) * 256 + raw[1:]]
        return self._rounds(self._byte_ids[raw], ranks, lengths, finish_one)

    def merge_ids(
        self,
        ids: np.ndarray,
        lengths: np.ndarray,
        finish_one: Callable[[list[int]], list[int]],
    ) -> tuple[np.ndarray, list[int]]:
        """As :meth:`merge`, for pieces given as ids already partly merged: ``ids`` holds
        them all, one after another, ``lengths`` how many ids each has (each at least one).
        Exact only when each piece's ids are a state its one-at-a-time merging can reach
        (``char_bpe`` checks its results afterwards)."""
        if not len(lengths):
            return np.empty(0, dtype=np.int64), []
        ranks = np.empty(len(ids), dtype=np.int64)
        ranks[:-1] = self._table.lookup(ids[:-1], ids[1:])
        return self._rounds(ids.astype(np.int64), ranks, lengths, finish_one)

    def _rounds(
        self,
        ids: np.ndarray,
        ranks: np.ndarray,
        lengths: np.ndarray,
        finish_one: Callable[[list[int]], list[int]],
    ) -> tuple[np.ndarray, list[int]]:
        """The rounds of :meth:`merge`: ``ranks[i]`` is the packed rank of the pair
        ``ids[i], ids[i + 1]`` (set here to none across pieces)."""
        count = len(lengths)
        owner = np.repeat(np.arange(count, dtype=np.int32), lengths)
        first = np.cumsum(lengths) - lengths
        ranks[first[1:] - 1] = _NONE  # the last id of a piece pairs with nothing
        ranks[-1] = _NONE

        done_ids: list[np.ndarray] = []
        done_owner: list[np.ndarray] = []
        lookup = self._table.lookup
        while len(ids):
            sizes = np.diff(first, append=len(ids))
            best = np.minimum.reduceat(ranks, first)
            live = best != _NONE
            live_count = int(np.count_nonzero(live))
            on = np.repeat(live, sizes)
            if live_count < len(first):
                done_ids.append(ids[~on])
                done_owner.append(owner[~on])
            if live_count <= SCALAR_TAIL:
                starts = first[live]
                for a, n, who in zip(starts.tolist(), sizes[live].tolist(), owner[starts]):
                    merged = finish_one(ids[a : a + n].tolist())
                    done_ids.append(np.array(merged, dtype=np.int64))
                    done_owner.append(np.full(len(merged), who, dtype=np.int32))
                break
            at = np.flatnonzero(ranks == np.repeat(np.where(live, best, -1), sizes))
            # subtle: a pair of two equal ids can occur overlapping ("a a a"); of each run of
            # adjacent positions only every other one, from the left, is merged.
            adjacent = at[1:] == at[:-1] + 1
            if adjacent.any():
                run_start = np.concatenate(([True], ~adjacent))
                start_pos = np.maximum.accumulate(np.where(run_start, np.arange(len(at)), 0))
                at = at[(np.arange(len(at)) - start_pos) % 2 == 0]
            ids[at] = ranks[at] & ID_MASK
            keep = on
            keep[at + 1] = False
            new_pos = np.cumsum(keep) - 1
            # A live piece keeps its first element (a merge drops the right one of a pair).
            first = new_pos[first[live]]
            at = new_pos[at]
            ids, owner, ranks = ids[keep], owner[keep], ranks[keep]
            # Re-rank the pairs each merged token now starts and ends; a position listed
            # twice gets the same value twice.
            ranks[at] = _NONE
            touched = np.concatenate((at[at > 0] - 1, at))
            touched = touched[touched < len(ids) - 1]
            touched = touched[owner[touched] == owner[touched + 1]]
            ranks[touched] = lookup(ids[touched], ids[touched + 1])
        all_ids = np.concatenate(done_ids) if done_ids else np.empty(0, dtype=np.int64)
        all_owner = np.concatenate(done_owner) if done_owner else np.empty(0, dtype=np.int32)
        # subtle: a piece leaves the working arrays whole, in one round, so each piece's ids
        # are one run of all_ids: sorting the runs by piece puts every id in place.
        starts = np.flatnonzero(np.concatenate(([True], all_owner[1:] != all_owner[:-1])))
        run_length = np.diff(starts, append=len(all_owner))
        order = np.argsort(all_owner[starts])
        starts, run_length = starts[order], run_length[order]
        ends = np.cumsum(run_length)
        at = np.arange(len(all_ids)) - np.repeat(ends - run_length - starts, run_length)
        return all_ids[at], ends.tolist()
