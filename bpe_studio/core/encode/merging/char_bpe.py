"""Long non-ASCII pre-tokens (runs of Han characters, words in other scripts) merged from their
characters' tokens, each result checked and the few that fail merged afresh.

What it does: :class:`CharBpe` merges a batch of pre-tokens in two steps. Each character is
first merged on its own (cached per character: cl100k and o200k make every Han character one
to three tokens), then the pieces, now a third as long, go through the batch merger's rounds
(``batch_bpe``). Far fewer rounds are left than from bytes, since the merges inside characters
are done. That is a guess: merging from bytes could have joined bytes across two characters
before either was whole. So every result is checked, and the pieces whose check fails are
reported back for exact merging.

The check, and why it is exact. Call a token sequence valid when merging its bytes gives it
back. A sequence is valid iff each of its tokens is valid alone and each adjacent pair is
(merges are monotone, ``batch_bpe``): if merging the whole text joined bytes across the
boundary of ``t1 t2``, take the first merge that does; before it, each token's bytes evolve as
they would alone, so merging ``t1 t2`` alone would make the same merge at the same step. And a
valid sequence is the merge result, which is unique. A pair ``t1 t2`` of valid tokens is
valid unless some merge crosses its boundary. Merging ``t1`` alone follows its merge tree, so
the tokens at its right edge are ``t1``, its right part, that one's right part, and so on down
to a byte; each lives from the merge that makes it until the merge that makes its parent. The
same holds for the left edge of ``t2``. A crossing merge joins one edge token of each side
while both live: so the pair is valid when no pair of edge tokens has a merge ranked no later
than both of their ends (counting "at their end" as crossing keeps the check safe, never
wrong). A token is valid alone iff merging its bytes gives it, which is checked by merging them
(cached per token). Tokens more than one merge makes have no single tree: their pairs fail.

What it leaves out: pre-tokenization, caching of pieces (``merger``), merging from bytes
(``batch_bpe``), characters above U+FFFF (their pieces are reported back).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .batch_bpe import BatchBpe
from .packed import NO_MERGE

_BMP = 0x10000
_MAX_CHAR_TOKENS = 3  # a BMP character is at most three bytes
_UNKNOWN, _VALID, _INVALID = 0, 1, 2
_LIVES_ON = np.iinfo(np.int64).max  # the end of a token that is never merged further


class CharBpe:
    """Merges pre-tokens from their characters' tokens; see the module docstring."""

    def __init__(
        self,
        batch: BatchBpe,
        token_bytes: Callable[[int], bytes],
    ) -> None:
        self._batch = batch
        self._token_bytes = token_bytes
        self._tree = batch.tree()
        # Per BMP code point: how many tokens the character is (0: not looked up yet) and
        # which.
        self._count = np.zeros(_BMP, dtype=np.int64)
        self._ids = np.zeros((_BMP, _MAX_CHAR_TOKENS), dtype=np.int64)
        # Per token id: valid alone (see the module docstring), invalid, or not known yet.
        self._alone = np.zeros(batch.id_bound, dtype=np.int8)

    def merge(
        self, pieces: Sequence[str], finish_one: Callable[[list[int]], list[int]]
    ) -> tuple[np.ndarray, list[int], np.ndarray]:
        """The ids of ``pieces`` (non-empty) in one array, where each piece's ids end in it,
        and which pieces' ids are checked exact (a boolean array). The ids of unchecked
        pieces are to be thrown away."""
        text = "".join(pieces)
        points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
        chars = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        astral = points >= _BMP
        points[astral] = 0  # their pieces fail below; NUL stands in meanwhile
        counts, ids = self.char_tokens(points, finish_one)
        char_first = np.cumsum(chars) - chars
        lengths = np.add.reduceat(counts, char_first)
        flat, ends = self._batch.merge_ids(ids, lengths, finish_one)
        ok = self._checked(flat, ends, finish_one)
        if astral.any():
            ok &= np.add.reduceat(astral.astype(np.int64), char_first) == 0
        return flat, ends, ok

    def char_tokens(
        self, points: np.ndarray, finish_one: Callable[[list[int]], list[int]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each character's own ids (``points``: BMP code points): how many each has, and
        all of them in one array. Exact: each character is merged from its bytes alone."""
        self._learn(points, finish_one)
        counts = self._count[points]
        starts = np.cumsum(counts) - counts
        within = np.arange(int(counts.sum())) - np.repeat(starts, counts)
        ids = self._ids.reshape(-1)[np.repeat(points * _MAX_CHAR_TOKENS, counts) + within]
        return counts, ids

    def _learn(self, points: np.ndarray, finish_one: Callable[[list[int]], list[int]]) -> None:
        """Merge each character of ``points`` not seen before on its own (together, from
        bytes: exact)."""
        seen = np.zeros(_BMP, dtype=bool)
        seen[points] = True
        new = np.flatnonzero(seen & (self._count == 0))
        if not len(new):
            return
        chars = "".join(map(chr, new.tolist()))
        # subtle: surrogate code points cannot be UTF-8 encoded; the tokenizer replaces them
        # before any text gets here, so none is among them.
        flat, ends = self._batch.merge([c.encode("utf-8") for c in chars], finish_one)
        bounds = np.array([0, *ends], dtype=np.int64)
        counts = bounds[1:] - bounds[:-1]
        starts = np.cumsum(counts) - counts
        within = np.arange(len(flat)) - np.repeat(starts, counts)
        self._ids[np.repeat(new, counts), within] = flat
        self._count[new] = counts

    def _checked(
        self, flat: np.ndarray, ends: list[int], finish_one: Callable[[list[int]], list[int]]
    ) -> np.ndarray:
        """Which pieces' ids form a valid sequence."""
        count = len(ends)
        end = np.array(ends, dtype=np.int64)
        owner = np.repeat(np.arange(count), np.diff(end, prepend=0))
        present = np.zeros(self._batch.id_bound, dtype=bool)
        present[flat] = True
        tokens = np.flatnonzero(present)
        self._learn_alone(tokens, finish_one)
        bad = np.zeros(count, dtype=bool)
        bad[owner[self._alone[flat] != _VALID]] = True
        # Adjacent pairs inside one piece, as keys over the tokens present (in 32 bits when
        # they fit: faster to sort); each distinct pair is checked once.
        inside = np.flatnonzero(owner[:-1] == owner[1:])
        n = len(tokens)
        index = np.zeros(self._batch.id_bound, dtype=np.uint32 if n * n < 1 << 32 else np.int64)
        index[tokens] = np.arange(n)
        compact = index[flat]
        keys = compact[inside] * index.dtype.type(n) + compact[inside + 1]
        distinct = np.sort(keys)
        distinct = distinct[np.concatenate(([True], distinct[1:] != distinct[:-1]))[: len(keys)]]
        pair_bad = self._pairs_cross(tokens[distinct // n], tokens[distinct % n])
        bad_keys = distinct[pair_bad]
        if len(bad_keys):
            at = np.minimum(np.searchsorted(bad_keys, keys), len(bad_keys) - 1)
            bad[owner[inside[bad_keys[at] == keys]]] = True
        return ~bad

    def _learn_alone(
        self, tokens: np.ndarray, finish_one: Callable[[list[int]], list[int]]
    ) -> None:
        """Whether each token of ``tokens`` not known yet is valid alone: merging its bytes
        gives it back."""
        tree = self._tree
        new = tokens[self._alone[tokens] == _UNKNOWN]  # distinct, as ``tokens`` are
        single = tree.left[new] < 0  # bytes (and special tokens): nothing to merge
        self._alone[new[single]] = _VALID
        new = new[~single]
        if not len(new):
            return
        flat, ends = self._batch.merge(list(map(self._token_bytes, new.tolist())), finish_one)
        end = np.array(ends, dtype=np.int64)
        whole = (np.diff(end, prepend=0) == 1) & (flat[end - 1] == new)
        self._alone[new] = np.where(whole & ~tree.ambiguous[new], _VALID, _INVALID)

    def _pairs_cross(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """For each pair ``(left[i], right[i])`` of tokens valid alone: whether a merge
        could cross its boundary (see the module docstring); True is safe, never wrong."""
        tree = self._tree
        bad = tree.ambiguous[left] | tree.ambiguous[right]
        # Walk down the right edge of the left tokens (a) and, for each step, down the left
        # edge of the right tokens (b); `end_*` is when each edge token is merged further.
        a_at = np.arange(len(left))
        a, end_a = left.copy(), np.full(len(left), _LIVES_ON)
        while len(a_at):
            b_at = a_at
            b, end_b = right[b_at], np.full(len(b_at), _LIVES_ON)
            a_b, end_ab = a, end_a
            while len(b_at):
                packed = self._batch.lookup(a_b, b)
                rank = np.where(packed == NO_MERGE, _LIVES_ON, packed >> 32)
                crossing = (packed != NO_MERGE) & (rank <= np.minimum(end_ab, end_b))
                bad[b_at[crossing]] = True
                nxt = tree.left[b]
                go = nxt >= 0
                end_b = tree.rank[b][go]
                b, b_at, a_b, end_ab = nxt[go], b_at[go], a_b[go], end_ab[go]
            nxt = tree.right[a]
            go = nxt >= 0
            end_a = tree.rank[a][go]
            a, a_at = nxt[go], a_at[go]
        return bad
