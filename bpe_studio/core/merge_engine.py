"""The merge loop's working state: unique pre-tokens as linked positions in flat arrays.

What it does: :class:`MergeEngine` turns ``{pre-token bytes: count}`` into the arrays that
:mod:`~bpe_studio.core.merge_kernel` works on (layout described there), sizes them before each
kernel call, and answers in token ids: the best pair, the ``k`` best pairs, and "merge this pair
into that new id". A merge costs in proportion to the places the pair occurs, not to the
length of the words holding it. What it leaves out: the vocabulary's bytes beyond tie-breaking,
MergeStep records, cancelling (``trainer.BpeTrainer`` does those).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

# Byte pairs: at most 256 * 256 distinct pairs before any merge.
_BYTE_PAIRS = 256 * 256


def _pow2_at_least(n: int) -> int:
    return 1 << max(4, (n - 1).bit_length())


class MergeEngine:
    """``engine.best()`` -> ``(a, b, count)`` or None; ``engine.merge(a, b, new_id)`` after
    ``engine.add_token(new_id, bytes)``; ``engine.top(k)``; ``engine.close()``."""

    def __init__(
        self, pretoken_counts: Mapping[bytes, int], tokens: Sequence[bytes], max_tokens: int
    ) -> None:
        """``tokens``: the bytes of ids 0, 1, ...; ``max_tokens``: the most ids there will be."""
        # subtle: numba is imported here, on first training, not with the package: importing it
        # takes most of a second that encoding, converting and the app's start need not pay.
        from . import merge_kernel

        self._k = K = merge_kernel
        # A one-byte word has no pair and can never change, so it is left out.
        words = [t for t, f in pretoken_counts.items() if len(t) > 1 and f > 0]
        freqs = np.fromiter((pretoken_counts[t] for t in words), np.int64, len(words))
        lens = np.fromiter(map(len, words), np.int64, len(words))
        tok = np.frombuffer(b"".join(words), np.uint8).astype(np.int32)
        del words
        n = tok.size
        ends = np.cumsum(lens)
        starts = ends - lens
        nxt = np.arange(1, n + 1, dtype=np.int32)
        prv = np.arange(-1, n - 1, dtype=np.int32)
        if n:
            nxt[ends - 1] = -1
            prv[starts] = -1
        wof = np.repeat(np.arange(lens.size, dtype=np.int32), lens)
        del lens, ends, starts
        # Every merge site removes one position, so there are at most `sites` of them in all,
        # each creating at most two pairs and two occurrences. np.empty leaves the pages of
        # these upper bounds unmapped until written: memory follows what is actually used.
        sites = max(n - freqs.size, 1)
        pair_cap = min(_BYTE_PAIRS, sites) + 2 * sites
        self.tok, self.nxt, self.prv, self.wof, self.wfreq = tok, nxt, prv, wof, freqs
        self.ppair = np.empty(n, np.int32)
        self.meta = np.zeros(3, np.int64)
        self.pa = np.empty(pair_cap, np.int32)
        self.pb = np.empty(pair_cap, np.int32)
        self.pcount = np.empty(pair_cap, np.int64)
        self.phead = np.empty(pair_cap, np.int32)
        self.plen = np.empty(pair_cap, np.int32)
        self.opos = np.empty(3 * sites, np.int32)
        self.onext = np.empty(3 * sites, np.int32)
        self.hc = np.empty(pair_cap, np.int64)
        self.hp = np.empty(pair_cap, np.int32)
        self.hkeys = np.full(_pow2_at_least(4 * min(_BYTE_PAIRS, sites)), -1, np.int64)
        self.hvals = np.empty(self.hkeys.size, np.int32)
        self.toff = np.zeros(max(max_tokens, len(tokens)) + 1, np.int64)
        self.toff[1 : len(tokens) + 1] = np.cumsum([len(t) for t in tokens])
        self.n_tokens = len(tokens)
        used = int(self.toff[self.n_tokens])
        self.tbuf = np.empty(max(4096, 2 * used), np.uint8)
        self.tbuf[:used] = np.frombuffer(b"".join(tokens), np.uint8)
        K.build(
            self.tok, self.nxt, self.ppair, self.wof, self.wfreq, self.hkeys, self.hvals, self.meta,
            self.pa, self.pb, self.pcount, self.phead, self.plen, self.opos, self.onext,
            self.hc, self.hp, self.tbuf, self.toff,
        )  # fmt: skip

    def add_token(self, token_id: int, token: bytes) -> None:
        """Record the bytes of the next token id (ids come in order), for tie-breaking."""
        if token_id != self.n_tokens or token_id + 1 >= self.toff.size:
            raise ValueError(f"token id {token_id} is out of order or beyond max_tokens")
        start = int(self.toff[token_id])
        end = start + len(token)
        if end > self.tbuf.size:
            grown = np.empty(2 * end, np.uint8)
            grown[:start] = self.tbuf[:start]
            self.tbuf = grown
        self.tbuf[start:end] = np.frombuffer(token, np.uint8)
        self.toff[token_id + 1] = end
        self.n_tokens = token_id + 1

    def best(self) -> tuple[int, int, int] | None:
        """The pair to merge next ``(a, b, count)``, or None when no pair is left. The pair
        leaves the queue: call :meth:`merge` on it next."""
        pid, count = self._k.pop_best(
            self.hc, self.hp, self.meta, self.pcount, self.pa, self.pb, self.tbuf, self.toff
        )
        if pid < 0:
            return None
        self._pending = int(pid)
        return int(self.pa[pid]), int(self.pb[pid]), int(count)

    def merge(self, new_id: int) -> int:
        """Merge the pair :meth:`best` returned into ``new_id`` everywhere; returns how many
        places were merged."""
        pid = self._pending
        # Each place merged creates at most two pairs: keep the hash at most half full.
        need = 2 * (int(self.meta[self._k.NPAIRS]) + 2 * int(self.plen[pid]))
        if need > self.hkeys.size:
            self.hkeys, self.hvals = self._k.rehash(
                self.hkeys, self.hvals, _pow2_at_least(2 * need)
            )
        return int(
            self._k.apply(
                pid, new_id, self.tok, self.nxt, self.prv, self.ppair, self.wof, self.wfreq,
                self.hkeys, self.hvals, self.meta, self.pa, self.pb, self.pcount, self.phead,
                self.plen, self.opos, self.onext, self.hc, self.hp, self.tbuf, self.toff,
            )
        )  # fmt: skip

    def top(self, k: int) -> list[tuple[int, int, int]]:
        """The ``k`` pairs :meth:`best` would return next, best first: ``(a, b, count)``."""
        k = max(0, min(k, int(self.meta[self._k.HSIZE])))
        ids, counts = self._k.top(
            self.hc, self.hp, self.meta, self.pcount, self.pa, self.pb, self.tbuf, self.toff, k
        )
        return [
            (int(self.pa[p]), int(self.pb[p]), int(c))
            for p, c in zip(ids.tolist(), counts.tolist())
        ]

    def close(self) -> None:
        """Drop the arrays (each is one allocation, freed at once) and empty the queue."""
        empty32, empty64 = np.zeros(0, np.int32), np.zeros(0, np.int64)
        self.meta = np.zeros(3, np.int64)
        self.tok = self.nxt = self.prv = self.ppair = self.wof = self.pa = self.pb = empty32
        self.phead = self.plen = self.opos = self.onext = self.hp = self.hvals = empty32
        self.wfreq = self.pcount = self.hc = empty64
        self.hkeys = np.full(16, -1, np.int64)
