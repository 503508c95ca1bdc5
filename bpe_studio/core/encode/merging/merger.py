"""The merger under ``Tokenizer``: the rank table, the per-pre-token cache and the strategies
that merge pre-tokens into ids.

What it does: :class:`Merger` turns pre-tokens into ids, merging within each one the adjacent
pair with the lowest merge rank until none is left, and caches each pre-token's ids (packed,
``packed``). Many uncached pre-tokens at once are merged together with NumPy (``batch_bpe``;
runs of multi-byte characters from their characters' tokens, ``char_bpe``, cut first where no
merge can cross, ``char_cuts``); few, one by one (a list scan, or a heap for long ones). It
answers the questions ``explain`` asks of the merges (:meth:`Merger.pair_rank`,
:meth:`Merger.merges`, :meth:`Merger.merge_rank`), and gives the merger of the first ``k``
merges (:meth:`Merger.truncated`). What it leaves out: text (pre-tokenization and special
tokens are ``tokenizer``'s), building the tables (``building``, ``packed``) and decoding.
"""

from __future__ import annotations

import heapq
import operator
from collections.abc import Collection, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from functools import cached_property
from itertools import compress, repeat
from types import ModuleType
from typing import TYPE_CHECKING, cast

from ...io.read_only import ReadOnlyDict
from .packed import (
    NO_MERGE,
    NUMPY_DTYPE,
    ONE_ID,
    WIDTH,
    MergeLists,
    RankTable,
    made,
    pack,
    rank_of,
    split_ids,
    unpack,
)

if TYPE_CHECKING:
    import numpy

    from .batch_bpe import BatchBpe
    from .char_bpe import CharBpe
    from .char_cuts import CharCuts, CutTables
    from .compiled import CompiledMerger, RankArrays

# Pre-token results are cached; past this many entries the cache starts afresh, so streaming
# an endless corpus cannot grow it without bound.
CACHE_LIMIT = 500_000
# Pre-tokens longer than this many bytes are merged with a heap instead of list scans.
LONG_PIECE = 64
# Pre-tokens of at least this many ids are merged by the compiled encoder's kernel when it is
# loaded (a token of megabytes whose reach is asked: seconds a megabyte in Python).
COMPILED_LONG = 4096
# In a batch, pre-tokens longer than LONG_PIECE bytes and up to this many are merged in a
# second batch of their own (a batch's rounds go on while any of its pre-tokens still merges,
# so long ones would keep the short ones' rounds going); longer ones one by one.
BATCH_LONG_MAX = 1024
# The second batch needs this many long pre-tokens; fewer are merged one by one.
BATCH_LONG_MIN = 32
# In a batch, pre-tokens of at least this many bytes with multi-byte characters (a run of Han
# characters) are merged from their characters' tokens (``char_bpe``) when there are at least
# BATCH_LONG_MIN of them: far fewer rounds than from bytes.
CHAR_MIN_BYTES = 10
# The tables for cutting such pre-tokens into parts (``char_cuts``) take a while to build, so
# they are built for this many of them at once (or when a preset is loaded).
CUTS_BUILD_MIN = 1000
# This many uncached pre-tokens at once are merged together with NumPy (``batch_bpe``): faster
# per pre-token than one by one, past a fixed cost of a few rounds of array operations.
# Building the batch merger's tables waits for a larger batch (the figures:
# docs/patterns.md, "Thresholds and the figures behind them").
BATCH_MIN = 200
BATCH_BUILD_MIN = 2000


class Merger:
    """Pre-tokens to ids under one rank table (see the module docstring).

    ``vocab`` is the tokenizer's vocabulary (read, never changed); ``byte_ids`` the id of each
    byte's token; ``special_ids`` the special tokens' ids; ``ranks`` and ``merge_lists`` the
    rank table and, when no pair repeats, the merges' ids in rank order (``packed.rank_table``);
    ``whole``: token bytes -> id when every such token's own bytes merge into that one token
    (a pre-token that is a whole token is then looked up, not merged, as tiktoken's encoder
    does first), else None; ``lookup_all``: every pre-token is looked up whole first (a
    ``tokenizer.json``'s ``ignore_merges``), not only ASCII ones; ``kept_ids``: entries no merge
    makes that every truncation keeps besides the bytes and special tokens (the file's special
    tokens a tokenizer opened with ``no_specials`` reads as text).
    """

    def __init__(
        self,
        vocab: dict[int, bytes],
        byte_ids: list[int],
        special_ids: Collection[int],
        ranks: RankTable,
        merge_lists: MergeLists | None,
        whole: dict[bytes, int] | None,
        *,
        lookup_all: bool = False,
        kept_ids: Collection[int] = (),
    ) -> None:
        self.vocab = vocab
        self.byte_ids = byte_ids
        self.special_ids = frozenset(special_ids)
        self._kept_ids = self.special_ids.union(kept_ids)
        self._ranks = ranks
        self._merge_lists = merge_lists
        self._whole = whole
        self._lookup_all = lookup_all
        # When the byte tokens have ids 0..255 in some order (GPT-2's and ours do), a piece's
        # byte ids are one bytes.translate away.
        self._byte_table = bytes(byte_ids) if max(byte_ids) < 256 else None
        self._cache: dict[str, bytes] = {}  # pre-token -> its ids, packed
        self._batch: BatchBpe | None = None
        self._batch_state = "unbuilt"  # then "built", or "unusable" (merges not monotone)
        self._char: CharBpe | None = None  # built with the batch merger, on first use
        self._cuts: CharCuts | None = None  # built on first use
        # The compiled path's merger (``compiled``), built on first use once the kernels are
        # loaded; its rank table is shared with every truncation.
        self._compiled: CompiledMerger | None = None
        self._rank_arrays: RankArrays | None = None
        self._cut_tables: CutTables | None = None

    def __getstate__(self) -> dict[str, object]:
        # subtle: the compiled merger holds a lock (not picklable) and a cache; a worker
        # process builds its own. The batch, char_bpe and char_cuts tables are left out too:
        # rebuilt (or read from the rank cache) where they are used, they cost less than
        # pickling them, four fifths of a preset's pickle, with every task of a user's pool.
        state = dict(self.__dict__)
        state["_compiled"] = None
        state["_rank_arrays"] = None
        state["_cut_tables"] = None
        state["_batch"], state["_char"], state["_cuts"] = None, None, None
        if state["_batch_state"] == "built":
            state["_batch_state"] = "unbuilt"
        return state

    # ---------------------------------------------------------------- queries
    def pair_rank(self, left: int, right: int) -> tuple[int, int] | None:
        """(rank, merged id) of the merge of the pair ``left, right``, None if no merge."""
        packed = self._ranks.get((left, right))
        return None if packed is None else (rank_of(packed), made(packed))

    def merges(self) -> Iterator[tuple[int, int, int, int]]:
        """(rank, left id, right id, merged id) of each merge the encoder applies, by rank (a
        merge repeating an earlier pair is left out)."""
        for (a, b), packed in sorted(self._ranks.items(), key=operator.itemgetter(1)):
            yield rank_of(packed), a, b, made(packed)

    @cached_property
    def _rank_of_id(self) -> dict[int, int]:
        """merged id -> the rank of the first merge that makes it (built on first use)."""
        ranks: dict[int, int] = {}
        for packed in sorted(self._ranks.values()):
            ranks.setdefault(made(packed), rank_of(packed))
        return ranks

    def merge_rank(self, token_id: int) -> int | None:
        """The rank of the merge that made ``token_id``; None for bytes and special tokens."""
        return self._rank_of_id.get(token_id)

    def truncated(self, k: int) -> Merger:
        """The merger of the first ``k`` merges (see ``Tokenizer.truncated``)."""
        return _Truncated.of(self, k)

    # ---------------------------------------------------------------- compiled
    def compiled(self, kernels: ModuleType | None = None) -> CompiledMerger | None:
        """The compiled merger of these merges (``compiled``), or None while the kernels are
        not loaded (``kernel_start``). ``kernels``: the caller has just had them from
        ``kernel_start.kernels()`` (asking again cost a short text's encode a microsecond)."""
        if kernels is None:
            from . import kernel_start

            kernels = kernel_start.kernels()
            if kernels is None:
                return None
        if self._compiled is None:
            import numpy as np  # subtle: lazily, so importing the core starts no BLAS threads

            from .compiled import CompiledMerger

            self._compiled = CompiledMerger(
                kernels,
                self._compiled_ranks(kernels),
                np.array(self.byte_ids, np.int64),
                limit=self._compiled_limit(),
                whole=self._compiled_whole(),
                whole_all=self._lookup_all,
                cuts=None if self._lookup_all else self._compiled_cuts(kernels),
            )
        return self._compiled

    def _compiled_ranks(self, kernels: ModuleType) -> RankArrays:
        if self._rank_arrays is None:
            import numpy as np

            from .compiled import RankArrays

            byte_ids = np.array(self.byte_ids, np.int64)
            if self._merge_lists is not None:
                lefts, rights, made_ids = map(np.array, self._merge_lists)
                rank = RankArrays.of_lists(kernels, lefts, rights, made_ids, byte_ids)
            else:
                rank = RankArrays.of_table(kernels, self._ranks, byte_ids)
            self._rank_arrays = rank
        return self._rank_arrays

    def _compiled_limit(self) -> int | None:
        return None

    def _compiled_whole(self) -> Mapping[bytes, int] | None:
        return self._whole

    def _compiled_cuts(self, kernels: ModuleType) -> CutTables:
        """``char_cuts``' tables as the kernels read them (built once, shared with every
        truncation)."""
        if self._cut_tables is None:
            self._cut_tables = self._char_cuts().kernel_tables(kernels.CUT_FILTER_BITS)
        return self._cut_tables

    def token_sizes(self) -> numpy.ndarray:
        """The byte count of each id's token (0 for ids not in the vocabulary), built once."""
        sizes = self.__dict__.get("_token_sizes")
        if sizes is None:
            import numpy as np

            vocab = self.vocab
            sizes = np.zeros(max(vocab) + 1, dtype=np.int64)
            ids = np.fromiter(vocab.keys(), dtype=np.int64, count=len(vocab))
            sizes[ids] = np.fromiter(map(len, vocab.values()), dtype=np.int64, count=len(vocab))
            self.__dict__["_token_sizes"] = sizes
        return sizes

    # ---------------------------------------------------------------- merging
    def ids(self, pieces: list[str]) -> list[int]:
        """The ids of these pre-tokens, in order."""
        cache = self._cache
        try:
            # subtle: most calls (a line of a book, a stream's chunk) find every piece cached,
            # and the set and its difference below cost more than the lookups.
            return unpack(b"".join(map(cache.__getitem__, pieces)))
        except KeyError:
            cache = self._ensure_cached(set(pieces))
            return unpack(b"".join(map(cache.__getitem__, pieces)))

    def packed(self, segments: Sequence[tuple[list[str], int | None]]) -> bytes:
        """The ids, packed, of each segment's pre-tokens followed by its special id (if any).
        The pre-tokens of every segment are merged together: a corpus of short documents
        between special tokens then still gets the batch merger (``BATCH_BUILD_MIN``)."""
        cache = self._ensure_cached(set().union(*(pieces for pieces, _ in segments)))
        if len(segments) == 1 and segments[0][1] is None:
            return b"".join(map(cache.__getitem__, segments[0][0]))
        # One list of every piece's packed ids and every special id, joined once.
        parts: list[bytes] = []
        extend, append, lookup = parts.extend, parts.append, cache.__getitem__
        packed_special = {s: ONE_ID.pack(s) for _, s in segments if s is not None}
        for pieces, special in segments:
            extend(map(lookup, pieces))
            if special is not None:
                append(packed_special[special])
        return b"".join(parts)

    def piece_ids(self, piece: str) -> list[int]:
        """The ids of one pre-token (cached)."""
        cache = self._cache
        packed = cache.get(piece)
        if packed is None:
            packed = cache[piece] = self._piece_ids(piece)
        return unpack(packed)

    def merges_together(self, count: int) -> bool:
        """Whether ``count`` pieces are merged together (``batch_bpe``) rather than one by one;
        builds the batch merger's tables when they are first worth it."""
        return self._batch_for(count) is not None

    def merge_many(self, pieces: list[bytes]) -> tuple[numpy.ndarray, list[int]]:
        """Each piece's bytes merged (uncached): all their ids in one array, and where in it
        each piece's ids end."""
        import numpy as np  # subtle: lazily, so importing the core starts no BLAS threads

        batch = self._batch_for(len(pieces))
        if batch is not None:
            return batch.merge(pieces, self._merge_ids)
        merged = list(map(self.bpe, pieces))
        ends = np.cumsum(np.fromiter(map(len, merged), dtype=np.int64, count=len(merged)))
        flat = np.fromiter((i for ids in merged for i in ids), dtype=np.int64)
        return flat, ends.tolist()

    def prepare(self) -> None:
        """Build the batch merger's, ``char_bpe``'s and ``char_cuts``' tables now, so that worker
        processes forked afterwards start with them."""
        batch = self._batch_for(BATCH_BUILD_MIN)
        if batch is not None:
            self._char_bpe(batch)
            self._char_cuts()

    def bpe(self, data: bytes) -> list[int]:
        """Ids of one pre-token's bytes: merge the lowest-ranked adjacent pair (leftmost
        first) until no pair of the merge list is left."""
        table = self._byte_table
        if table is not None:
            ids = list(data.translate(table))
        else:
            byte_ids = self.byte_ids
            ids = [byte_ids[b] for b in data]
        return self._merge_ids(ids)

    @property
    def looks_up_whole(self) -> bool:
        """Whether every pre-token is looked up whole before any merge (``ignore_merges``):
        its tokens then need not be the merges' of its bytes."""
        return self._lookup_all

    def whole_id(self, data: bytes) -> int | None:
        """The id a pre-token of these bytes is looked up as before any merge, or None
        (merged). Under ``ignore_merges`` any token is, those merging cannot reach included."""
        return None if self._whole is None else self._whole.get(data)

    def found_whole_only(self) -> list[bytes]:
        """The tokens looked up whole (``ignore_merges``) that merging their bytes does not
        give: the look-up changes the ids of a pre-token that is one of them, and only of
        those. Empty when nothing is looked up."""
        if self._whole is None:
            return []
        longer = [(tok, idx) for tok, idx in self._whole.items() if len(tok) > 1]
        if not longer:
            return []
        flat, ends = self.merge_many([tok for tok, _ in longer])
        starts = [0, *ends[:-1]]
        return [
            tok
            for (tok, idx), start, end in zip(longer, starts, ends)
            if end - start != 1 or int(flat[start]) != idx
        ]

    def _piece_ids(self, piece: str) -> bytes:
        """Ids of one pre-token (uncached), packed."""
        data = piece.encode("utf-8")
        if self._whole is not None and (idx := self._whole.get(data)) is not None:
            return ONE_ID.pack(idx)
        return pack(self.bpe(data))

    def _ensure_cached(self, pieces: set[str]) -> dict[str, bytes]:
        """The cache, holding the ids of each of these pre-tokens.

        subtle: a full cache is replaced by a new one, never cleared, and the one this call
        fills is handed down to every helper and back: another thread (sharing the
        tokenizer, as tiktoken's users do) may start a new one meanwhile, but no entry of
        the one this thread reads from ever goes away (a clear() here raised KeyError there)."""
        cache = self._cache
        if len(cache) > CACHE_LIMIT:
            cache = self._cache = {}
        missing = list(pieces.difference(cache))
        merged = self._merge_batch(missing, cache)
        if merged is None:
            piece_ids = self._piece_ids
            for piece in missing:
                cache[piece] = piece_ids(piece)
            return cache
        short, flat, ends = merged
        cache.update(zip(short, split_ids(flat, ends)))
        return cache

    def _cache_whole(
        self,
        pieces: list[str],
        encoded: list[bytes],
        looked_up: numpy.ndarray,
        cache: dict[str, bytes],
    ) -> numpy.ndarray:
        """Cache the ids of the ``pieces`` (where ``looked_up``) that are whole vocabulary
        tokens (see ``whole``); return where those are. Only ASCII ones are looked up unless
        ``lookup_all``: a run of Han characters is seldom one token, and looking the runs of a
        Chinese text up cost more than the few found saved (merging gives the same ids)."""
        import numpy as np  # subtle: lazily (loaded already: the batch merger uses it)

        assert self._whole is not None
        looked = np.flatnonzero(looked_up)
        ids = list(map(self._whole.get, map(encoded.__getitem__, looked.tolist())))
        found = list(map(operator.is_not, ids, repeat(None)))
        hits = looked[np.array(found, dtype=bool)]
        cache.update(
            zip(map(pieces.__getitem__, hits.tolist()), map(ONE_ID.pack, compress(ids, found)))
        )
        whole = np.zeros(len(pieces), dtype=bool)
        whole[hits] = True
        return whole

    def _merge_batch(
        self, pieces: list[str], cache: dict[str, bytes]
    ) -> tuple[list[str], numpy.ndarray, list[int]] | None:
        """Merge many distinct pre-tokens together, if there are enough of them; None when
        one by one is faster. Pre-tokens that are whole tokens (where ``whole`` knows) and
        those longer than ``LONG_PIECE`` bytes go straight into the cache (the latter merged
        in a batch of their own, see ``BATCH_LONG_MAX``); for the others, returns them, all
        their ids in one array, and where in it each one's ids end."""
        batch = self._batch_for(len(pieces))
        if batch is None:
            return None
        import numpy as np  # subtle: lazily (loaded already: the batch merger uses it)

        encoded = list(map(str.encode, pieces))
        count = len(pieces)
        nbytes = np.fromiter(map(len, encoded), dtype=np.int64, count=count)
        nchars = np.fromiter(map(len, pieces), dtype=np.int64, count=count)
        rest = np.ones(count, dtype=bool)
        if self._whole is not None:
            looked = nbytes > 0 if self._lookup_all else nbytes == nchars
            rest = ~self._cache_whole(pieces, encoded, looked, cache)
        # subtle: more bytes than characters means some character takes several bytes. A
        # pre-token found whole (``rest`` false) keeps its one id: under ``lookup_all`` it may
        # be a token its own bytes do not merge into.
        char_mask = (nbytes >= CHAR_MIN_BYTES) & (nbytes <= BATCH_LONG_MAX) & (nbytes > nchars)
        char_mask &= rest
        short_mask = ~char_mask & (nbytes <= LONG_PIECE) & rest
        long_mask = ~char_mask & (nbytes > LONG_PIECE) & (nbytes <= BATCH_LONG_MAX) & rest
        by_char = list(compress(pieces, char_mask.tolist()))
        short_flags, long_flags = short_mask.tolist(), long_mask.tolist()
        short = list(compress(pieces, short_flags))
        short_bytes = list(compress(encoded, short_flags))
        long = list(compress(pieces, long_flags))
        long_bytes = list(compress(encoded, long_flags))
        huge = ((nbytes > BATCH_LONG_MAX) & rest).tolist()
        for piece, data in compress(zip(pieces, encoded), huge):
            cache[piece] = pack(self.bpe(data))
        if len(by_char) >= BATCH_LONG_MIN:
            by_char = self._merge_by_char(batch, by_char, cache)
        for piece in by_char:
            data = piece.encode("utf-8")
            if len(data) <= LONG_PIECE:
                short.append(piece)
                short_bytes.append(data)
            else:
                long.append(piece)
                long_bytes.append(data)
        if len(long) >= BATCH_LONG_MIN:
            cache.update(zip(long, split_ids(*batch.merge(long_bytes, self._merge_ids))))
        else:
            for piece, data in zip(long, long_bytes):
                cache[piece] = pack(self.bpe(data))
        flat, ends = batch.merge(short_bytes, self._merge_ids)
        return short, flat, ends

    def _merge_by_char(
        self, batch: BatchBpe, pieces: list[str], cache: dict[str, bytes]
    ) -> list[str]:
        """Cache the ids of ``pieces``, merged from their characters' tokens (``char_bpe``);
        return those to be merged from their bytes instead. With the tables of ``char_cuts``
        (built for ``CUTS_BUILD_MIN`` pieces at once) each piece is first cut where no merge
        can cross, and its parts' ids are joined: a part of one character has that
        character's own ids (cached per character); longer parts are cached once per
        distinct part, merged from their bytes when short, else from their characters'
        tokens, those the check rejects from their bytes."""
        import numpy as np  # subtle: lazily (loaded already: the batch merger uses it)

        char = self._char_bpe(batch)
        # subtle: parts share the cache with whole pre-tokens, and under ``lookup_all`` a
        # pre-token that is a token its bytes do not merge into is that one token whole but
        # not as a part: the two meanings would meet in one entry, so no cuts then (the
        # compiled merger keeps parts apart; it cuts nothing under ``lookup_all`` either).
        if self._lookup_all or (self._cuts is None and len(pieces) < CUTS_BUILD_MIN):
            flat, ends, ok = char.merge(pieces, self._merge_ids)
            good = ok.tolist()
            cache.update(compress(zip(pieces, split_ids(flat, ends)), good))
            return list(compress(pieces, map(operator.not_, good)))
        cut = self._char_cuts().parts(pieces)
        # Parts of one character (a BMP one: the per-character tables hold no others).
        single = (cut.stops - cut.starts == 1) & (cut.points[cut.starts] < 0x10000)
        multi = ~single
        text = cut.text
        parts = list(map(text.__getitem__, map(slice, cut.starts[multi].tolist(),
                                                 cut.stops[multi].tolist())))  # fmt: skip
        self._cache_parts(batch, char, list(set(parts).difference(cache)), cache)
        held = list(map(cache.__getitem__, parts))
        single_counts, single_ids = char.char_tokens(
            cut.points[cut.starts[single]], self._merge_ids
        )
        sizes = np.empty(len(single), dtype=np.int64)
        sizes[single] = single_counts
        sizes[multi] = np.fromiter(map(len, held), dtype=np.int64, count=len(held)) // WIDTH
        from_single = np.repeat(single, sizes)
        flat = np.empty(len(from_single), dtype=np.int64)
        flat[from_single] = single_ids
        flat[~from_single] = np.frombuffer(b"".join(held), dtype=NUMPY_DTYPE)
        first_part = np.cumsum(cut.per_piece) - cut.per_piece
        ends = np.cumsum(np.add.reduceat(sizes, first_part)).tolist()
        cache.update(zip(pieces, split_ids(flat, ends)))
        return []

    def _cache_parts(
        self, batch: BatchBpe, char: CharBpe, parts: list[str], cache: dict[str, bytes]
    ) -> None:
        """Cache the ids of ``parts`` in ``cache`` (see ``_merge_by_char``)."""
        encoded = list(map(str.encode, parts))
        long_flags = [len(data) >= CHAR_MIN_BYTES for data in encoded]
        short_flags = list(map(operator.not_, long_flags))
        short = list(compress(parts, short_flags))
        if short:
            merged = batch.merge(list(compress(encoded, short_flags)), self._merge_ids)
            cache.update(zip(short, split_ids(*merged)))
        long = list(compress(parts, long_flags))
        if not long:
            return
        flat, ends, ok = char.merge(long, self._merge_ids)
        good = ok.tolist()
        cache.update(compress(zip(long, split_ids(flat, ends)), good))
        failed = list(compress(long, map(operator.not_, good)))
        if len(failed) >= BATCH_LONG_MIN:
            merged = batch.merge(list(map(str.encode, failed)), self._merge_ids)
            cache.update(zip(failed, split_ids(*merged)))
        else:
            for part in failed:
                cache[part] = pack(self.bpe(part.encode("utf-8")))

    def _char_bpe(self, batch: BatchBpe) -> CharBpe:
        if self._char is None:
            from .char_bpe import CharBpe  # subtle: lazily; it imports NumPy

            self._char = CharBpe(batch, self.vocab.__getitem__)
        return self._char

    def _char_cuts(self) -> CharCuts:
        if self._cuts is None:
            from .char_cuts import CharCuts  # subtle: lazily; it imports NumPy

            # subtle: built from every vocabulary token (special tokens included), a
            # superset of the tokens merges make: it can only find fewer safe cuts.
            self._cuts = CharCuts(self.vocab.values())
        return self._cuts

    def _batch_for(self, count: int) -> BatchBpe | None:
        """The batch merger if ``count`` pre-tokens are worth merging together, else None."""
        if count < BATCH_MIN or self._batch_state == "unusable":
            return None
        if self._batch_state == "unbuilt":
            if count < BATCH_BUILD_MIN:
                return None
            from .batch_bpe import BatchBpe  # subtle: lazily; it imports NumPy

            self._batch = BatchBpe.build(self._ranks, self.byte_ids, self.vocab, self._merge_lists)
            self._batch_state = "unusable" if self._batch is None else "built"
        return self._batch

    def _merge_ids(self, ids: list[int]) -> list[int]:
        """``ids`` with the lowest-ranked adjacent pair merged (leftmost first) until no pair
        of the merge list is left; ``ids`` may already be partly merged."""
        n = len(ids)
        if n < 2:
            return ids
        if n > LONG_PIECE:
            return self._bpe_long(ids)
        get = self._ranks.get
        # ranks[i] is the packed (rank, merged id) of the pair ids[i], ids[i + 1]; after a
        # merge only the two neighbouring entries change.
        ranks = [get(pair, NO_MERGE) for pair in zip(ids, ids[1:])]
        while True:
            best = min(ranks)
            if best == NO_MERGE:
                return ids
            i = ranks.index(best)
            ids[i : i + 2] = [made(best)]
            del ranks[i]
            if i > 0:
                ranks[i - 1] = get((ids[i - 1], ids[i]), NO_MERGE)
            if i < len(ranks):
                ranks[i] = get((ids[i], ids[i + 1]), NO_MERGE)
            elif not ranks:
                return ids

    def _bpe_long(self, ids: list[int]) -> list[int]:
        """``_merge_ids`` for long pre-tokens (a run of 100,000 spaces) in O(n log n): a linked
        list of tokens and a heap of (rank, position) with stale entries skipped on the way
        out; the compiled kernel's, the same, when it is loaded and the piece is very long."""
        if len(ids) >= COMPILED_LONG:
            from . import kernel_start

            kernels = kernel_start.kernels()  # subtle: never loads them (a GUI thread may ask)
            if kernels is not None:
                import numpy as np

                table = self._compiled_ranks(kernels).table
                limit = self._compiled_limit()
                work = np.array(ids, np.int64)
                n = kernels.merge_ids(work, table, NO_MERGE if limit is None else limit << 32)
                return work[:n].tolist()
        get = self._ranks.get
        n = len(ids)
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        alive = [True] * n
        heap = [
            (packed >> 32, i, packed)
            for i in range(n - 1)
            if (packed := get((ids[i], ids[i + 1]))) is not None
        ]
        heapq.heapify(heap)
        while heap:
            rank, i, packed = heapq.heappop(heap)
            j = nxt[i] if alive[i] else n
            # Stale unless i and its right neighbour still form the pair this entry was for.
            if j >= n or get((ids[i], ids[j])) != packed:
                continue
            ids[i] = made(packed)
            alive[j] = False
            nxt[i] = k = nxt[j]
            if k < n:
                prv[k] = i
                if (p := get((ids[i], ids[k]))) is not None:
                    heapq.heappush(heap, (p >> 32, i, p))
            h = prv[i]
            if h >= 0 and (p := get((ids[h], ids[i]))) is not None:
                heapq.heappush(heap, (p >> 32, h, p))
        return [t for t, a in zip(ids, alive) if a]


class _Truncated(Merger):
    """The merger of the first ``k`` merges of a full one. The tables that depend on the merges
    (the vocabulary, the rank table, the rank of each id) are cut from the full merger's on
    first use, so a truncation only asked for its tokens' ranks never builds a table."""

    _full: Merger
    _k: int

    @classmethod
    def of(cls, merger: Merger, k: int) -> Merger:
        full = merger._full if isinstance(merger, _Truncated) else merger
        out = object.__new__(cls)
        # subtle: every attribute is taken over as it is (byte tables, special ids: read-only)
        # except those that depend on the merges, and the caches, which must be fresh: a cache
        # shared with the full merger would hand out its pre-tokens' ids under more merges.
        out.__dict__.update(full.__dict__)
        for lazy in ("vocab", "_ranks", "_rank_of_id", "_token_sizes"):
            out.__dict__.pop(lazy, None)
        out._full, out._k = full, k
        if full._merge_lists is not None:
            out._merge_lists = cast("MergeLists", tuple(part[:k] for part in full._merge_lists))
        out._cache = {}
        if full._lookup_all:
            # Built on first use from the full table (``_whole`` below).
            del out.__dict__["_whole"]
        else:
            # subtle: that every token's bytes merge into it is known of the full merge list
            # only; merging gives the same ids without the table.
            out._whole = None
        out._batch = None
        out._batch_state = "unbuilt"
        out._char = None
        # The compiled merger: the full one's rank table, with the first k merges' limit.
        out._compiled = None
        out._rank_arrays = None
        out._cut_tables = None
        # subtle: ``_cuts`` is kept: the cuts it allows were found over the full vocabulary, a
        # superset of the truncated one's, so no merge of fewer crosses them either.
        return out

    def _compiled_ranks(self, kernels: ModuleType) -> RankArrays:
        return self._full._compiled_ranks(kernels)

    def _compiled_limit(self) -> int | None:
        return self._k

    def _compiled_cuts(self, kernels: ModuleType) -> CutTables:
        return self._full._compiled_cuts(kernels)

    def _compiled_whole(self) -> Mapping[bytes, int] | None:
        # The compiled merger's tables read every entry: from a dict (dropped once they are
        # built), not through the filter's lookups.
        whole = self._whole
        return whole.copy() if isinstance(whole, _KeptWhole) else whole

    def token_sizes(self) -> numpy.ndarray:
        # subtle: an id keeps its bytes in every truncation; the full vocabulary's sizes
        # serve them all (building the truncated vocabulary would cost far more).
        return self._full.token_sizes()

    @cached_property
    def _ranks(self) -> RankTable:  # type: ignore[override]
        # The packed rank table holds rank << 32 | id, so one comparison keeps the first k
        # merges whatever order the table was filled in. A merge repeating an earlier pair is
        # in neither table; its token is that earlier merge's, so the ids kept are complete.
        limit = self._k << 32
        return {pair: packed for pair, packed in self._full._ranks.items() if packed < limit}

    @cached_property
    def _whole(self) -> Mapping[bytes, int] | None:  # type: ignore[override]
        # Under ``lookup_all`` (a tokenizer.json's ignore_merges) tokenizers looks a pre-token
        # up in model.vocab, and the file a truncation saves holds there the tokens of its
        # vocabulary (and the added tokens the file read held there): the full table's
        # entries whose ids this vocabulary keeps. subtle: a model.vocab spells each token
        # once, so no id left out here had bytes another kept id holds.
        whole = self._full._whole
        if whole is None:
            return None
        base = frozenset(self.byte_ids).union(self._kept_ids)
        return _KeptWhole(whole, base, self._full._rank_of_id, self._k)

    @cached_property
    def _rank_of_id(self) -> dict[int, int]:
        k = self._k
        return {i: r for i, r in self._full._rank_of_id.items() if r < k}

    @cached_property
    def vocab(self) -> dict[int, bytes]:  # type: ignore[override]
        # The vocabulary loses the tokens of merges k.. and any entry no merge makes.
        full = self._full
        base = set(self.byte_ids).union(self._kept_ids)
        drop = full.vocab.keys() - base - self._rank_of_id.keys()
        if 2 * len(drop) < len(full.vocab):
            vocab = ReadOnlyDict(full.vocab)
            for i in drop:
                dict.__delitem__(vocab, i)  # filling it: refused to its users only
            return vocab
        return ReadOnlyDict((i, t) for i, t in full.vocab.items() if i not in drop)


class _KeptWhole(Mapping[bytes, int]):
    """A truncation's whole tokens: the full merger's table, shared, answering only for the
    ids the truncation keeps (those of ``base``, and of merges ranked below ``k``), as
    ``_Truncated.vocab`` keeps them. A timeline makes a truncation per step: a copy of the
    table, and the vocabulary built to filter it, would each be the vocabulary's size."""

    def __init__(
        self, whole: Mapping[bytes, int], base: AbstractSet[int], rank_of_id: dict[int, int], k: int
    ) -> None:
        self._table, self._base, self._rank_of_id, self._k = whole, base, rank_of_id, k

    def _keeps(self, idx: int) -> bool:
        return idx in self._base or self._rank_of_id.get(idx, self._k) < self._k

    def get(self, token: bytes, default: int | None = None) -> int | None:  # type: ignore[override]
        idx = self._table.get(token)
        return idx if idx is not None and self._keeps(idx) else default

    def __getitem__(self, token: bytes) -> int:
        idx = self.get(token)
        if idx is None:
            raise KeyError(token)
        return idx

    def __iter__(self) -> Iterator[bytes]:
        keeps = self._keeps
        return (token for token, idx in self._table.items() if keeps(idx))

    def copy(self) -> dict[bytes, int]:
        """The entries kept, as a dict."""
        keeps = self._keeps
        return {token: idx for token, idx in self._table.items() if keeps(idx)}

    @cached_property
    def _count(self) -> int:
        return sum(map(self._keeps, self._table.values()))

    def __len__(self) -> int:
        return self._count
