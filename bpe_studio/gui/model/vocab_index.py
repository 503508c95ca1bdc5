"""The vocabulary table's sort keys and filter columns as NumPy arrays, and the row order they give.

What it does: :class:`VocabIndex` keeps, for every token row, its id, byte length, merge rank,
count, readable text (lower-cased for the filter) and the rank of that text in sorted order,
grown as rows arrive and rebuilt when the rows are replaced. :meth:`VocabIndex.order` turns a
:class:`ViewSpec` (filter text, sort column and direction, "unreachable only", "hide tokens
after step") into the source rows to show, in order, with one ``argsort`` and boolean masks:
no Python comparison per pair of rows. For 200,000 tokens the first call renders every token
(about a second), so the table runs it off the GUI thread; later calls reuse it.
What it leaves out: Qt (the proxy model in ``table_models`` applies the order), threads
(``jobs``).
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np

from ...core.io.gc_pause import gc_paused
from ...core.text.display import readable_token
from .state import VocabRow

_SLICE = 8192  # texts sorted, ints converted per C call (a few milliseconds holding the GIL)

# The vocabulary table's columns, in order.
COL_ID, COL_TOKEN, COL_BYTES, COL_MERGE, COL_COUNT, COL_REACH = range(6)


@dataclass(frozen=True, slots=True)
class ViewSpec:
    """What the vocabulary table shows: which rows, in which order."""

    text: str = ""  # filter: readable token contains it (any case), or the id typed
    sort_column: int = -1  # -1: id order, as the rows arrive
    descending: bool = False
    unreachable_only: bool = False
    hide_after: int | None = None  # hide tokens made by merge ``hide_after`` or later

    @property
    def trivial(self) -> bool:
        """Every row, in source order: the proxy passes rows straight through."""
        return (
            not self.needle
            and self.typed_id is None
            and self.sort_column < 0
            and not self.unreachable_only
            and self.hide_after is None
        )

    @property
    def needle(self) -> str:
        """The filter text as the table shows tokens (a typed space matches "␣"), lower-cased."""
        return readable_token(self.text.encode("utf-8")).lower() if self.text else ""

    @property
    def typed_id(self) -> int | None:
        """The id typed in the filter ("50256" or "50,256"), if it is one."""
        digits = self.text.strip().replace(",", "")
        # ASCII only: "²" and "①" pass isdigit() but are no number int() reads, and "٣" is
        # a character to look for in tokens, not id 3.
        return int(digits) if digits.isascii() and digits.isdigit() else None


def _int_array(values: list[int]) -> np.ndarray:
    """``values`` as an int64 array, converted a slice per C call.

    subtle: one ``np.asarray`` of 200,000 Python ints is one C call holding the GIL for tens
    of milliseconds, and the GUI thread waits for it: two such conversions were most of
    o200k's first sort by Token (docs/responsiveness.md)."""
    if len(values) <= _SLICE:
        return np.asarray(values, dtype=np.int64)
    parts = [
        np.asarray(values[start : start + _SLICE], dtype=np.int64)
        for start in range(0, len(values), _SLICE)
    ]
    return np.concatenate(parts)


def _same(a: object, b: object) -> bool:
    """Whether two row keys name the same rows: the same objects, element by element (the
    lists themselves are never compared: that would read every row)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b))
    return a is b


class VocabIndex:
    """Sort keys and filter columns of the first ``n`` rows; see the module docstring.

    Thread-safe: one lock around everything, so the GUI thread (small tables, tests) and the
    table's job thread may both ask."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: object = None  # identifies the rows indexed (a new run, a loaded file)
        self._clear()

    def _clear(self) -> None:
        self._ids: list[int] = []
        self._lengths: list[int] = []
        self._ranks: list[int] = []
        self._counts: list[int] = []
        self._lowered: list[str] = []
        self._arrays: dict[str, np.ndarray] = {}  # built from the lists for the current n
        self._text_rank: np.ndarray | None = None

    @property
    def size(self) -> int:
        return len(self._ids)

    def order(
        self,
        key: object,
        rows: Callable[[int], VocabRow],
        n: int,
        spec: ViewSpec,
        unreachable: Collection[int] | None,
        is_stale: Callable[[], bool] = lambda: False,
    ) -> np.ndarray | None:
        """Source rows to show for ``spec``, in order (None: all ``n`` rows in source order).

        ``key`` names the rows: a new key drops what was indexed. ``rows(i)`` gives row ``i``
        for ``i < n``. ``unreachable`` holds the ids encoding never produces (None: unknown,
        and "unreachable only" shows nothing). Returns an empty array early when
        ``is_stale()`` turns true (the caller drops it)."""
        if spec.trivial:
            return None  # nothing to index: every row in source order
        # subtle: indexing 200,000 rows allocates a million objects; each would count towards
        # the cyclic collector, whose full passes walk every object of the app (o200k's
        # tables) holding the GIL for half a second: the GUI thread would freeze meanwhile.
        # Nothing made here forms a cycle.
        with gc_paused(), self._lock:
            if not _same(key, self._key) or n < self.size:
                self._key = key
                self._clear()
            self._extend(rows, n, is_stale)
            if is_stale():
                return np.empty(0, dtype=np.int64)
            return self._order(n, spec, unreachable)

    def _extend(
        self, rows: Callable[[int], VocabRow], n: int, is_stale: Callable[[], bool]
    ) -> None:
        start = self.size
        if n == start:
            return
        for i in range(start, n):
            if (i - start) % 4096 == 0 and is_stale():
                # Keep what is indexed so far: the next request carries on from here.
                n = i
                break
            row = rows(i)
            self._ids.append(row.token_id)
            self._lengths.append(len(row.token))
            self._ranks.append(-1 if row.rank is None else row.rank)
            self._counts.append(-1 if row.count is None else row.count)
            self._lowered.append(readable_token(row.token).lower())
        self._arrays = {}
        self._text_rank = None

    def _array(self, name: str) -> np.ndarray:
        arr = self._arrays.get(name)
        if arr is None:
            values: list[int] = getattr(self, f"_{name}")
            arr = self._arrays[name] = _int_array(values)
        return arr

    def _text_ranks(self) -> np.ndarray:
        if self._text_rank is None:
            texts = self._lowered
            ranks = np.empty(len(texts), dtype=np.int64)
            # subtle: one sorted() call over 200,000 texts is a single C call that holds the
            # GIL for half a second, freezing the GUI thread; sorted slices merged by
            # heapq.merge (Python code, so the GIL changes hands) never hold it for long.
            get = texts.__getitem__
            slices = [
                sorted(range(start, min(start + _SLICE, len(texts))), key=get)
                for start in range(0, len(texts), _SLICE)
            ]
            order = list(heapq.merge(*slices, key=get))
            # subtle: equal texts ("The" and "the" lower-cased) share a rank, so that the
            # stable sort keeps them in source order in both directions.
            dense, previous, rank = [], None, -1
            for i in order:
                if texts[i] != previous:
                    previous, rank = texts[i], rank + 1
                dense.append(rank)
            ranks[_int_array(order)] = _int_array(dense)
            self._text_rank = ranks
        return self._text_rank

    def _order(self, n: int, spec: ViewSpec, unreachable: Collection[int] | None) -> np.ndarray:
        ids = self._array("ids")[:n]
        mask = np.ones(n, dtype=bool)
        needle, typed = spec.needle, spec.typed_id
        if needle or typed is not None:
            found = np.zeros(n, dtype=bool)
            if needle:
                found |= np.fromiter((needle in t for t in self._lowered[:n]), dtype=bool, count=n)
            if typed is not None:
                found |= ids == typed
            mask &= found
        unreach = self._unreachable_mask(ids, unreachable)
        if spec.unreachable_only:
            mask &= unreach if unreachable is not None else False
        if spec.hide_after is not None:
            ranks = self._array("ranks")[:n]
            mask &= ranks < spec.hide_after  # bytes and specials (-1) always stay
        col = spec.sort_column
        if col < 0:
            return np.flatnonzero(mask)
        if col == COL_ID:
            keys = ids
        elif col == COL_TOKEN:
            keys = self._text_ranks()[:n]
        elif col == COL_BYTES:
            keys = self._array("lengths")[:n]
        elif col == COL_MERGE:
            keys = self._array("ranks")[:n]
        elif col == COL_COUNT:
            keys = self._array("counts")[:n]
        else:  # reachable: unknown (-1), unreachable (0), reachable (1)
            keys = (
                np.full(n, -1, dtype=np.int64)
                if unreachable is None
                else np.where(unreach, 0, 1).astype(np.int64)
            )
        # subtle: a stable sort of the negated keys keeps equal keys in source (id) order in
        # both directions, as a stable sort of the keys themselves does ascending.
        perm = np.argsort(-keys if spec.descending else keys, kind="stable")
        return perm[mask[perm]]

    def _unreachable_mask(self, ids: np.ndarray, unreachable: Collection[int] | None) -> np.ndarray:
        if not unreachable:
            return np.zeros(len(ids), dtype=bool)
        return np.isin(ids, np.fromiter(unreachable, dtype=np.int64, count=len(unreachable)))
