"""The merge loop in pure Python: the engine for small corpora, where it starts instantly.

What it does: :class:`PythonMergeEngine` keeps
- ``pair -> count`` over all unique pre-tokens ("words"), weighted by their frequency,
- ``pair -> words that (may) contain it`` (a list; stale and repeated entries are skipped),
  so a merge touches only those words,
- a heap of ``(-count, tie-break keys, pair)`` with lazy invalidation: an entry whose count no
  longer matches the live count is dropped when it surfaces,
and answers in token ids, with the same small interface as the compiled engine
(``merge_engine.CompiledMergeEngine``): ``best``, ``add_token``, ``merge``, ``top``, ``close``.
A merge rebuilds each word holding the pair, so its cost follows those words' lengths: fine for
small corpora, slow for long unique pre-tokens (Chinese runs, code), where the compiled engine
takes over (``trainer`` chooses). What it leaves out: MergeStep records, the vocabulary,
cancelling (``trainer.BpeTrainer`` does those).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

Pair = tuple[int, int]

_INVERT = bytes(range(255, -1, -1))
# close() frees this many entries per step (well under a millisecond each).
_FREE_SLICE = 4096


def _tie_key(token: bytes) -> tuple[int, ...]:
    # subtle: the heap pops the *smallest* entry but ties must go to the *greatest* bytes.
    # Inverting each byte reverses the order of differing bytes; the trailing 256 (greater
    # than any inverted byte) makes a proper prefix sort after its extensions, as it must.
    return (*token.translate(_INVERT), 256)


class PythonMergeEngine:
    """``engine.best()`` -> ``(a, b, count)`` or None; then ``engine.add_token(new_id, bytes)``
    and ``engine.merge(new_id)``; ``engine.top(k)``; ``engine.close()``."""

    def __init__(
        self, pretoken_counts: Mapping[bytes, int], tokens: Sequence[bytes], max_tokens: int
    ) -> None:
        """``tokens``: the bytes of ids 0, 1, ...; ``max_tokens`` is not needed here."""
        self._keys: list[tuple[int, ...]] = [_tie_key(t) for t in tokens]
        # A one-byte word has no pair and can never change, so it is left out.
        self._words: list[list[int]] = []
        self._freqs: list[int] = []
        for token, freq in pretoken_counts.items():
            if len(token) > 1 and freq > 0:
                self._words.append(list(token))
                self._freqs.append(freq)

        self._pair_counts: dict[Pair, int] = {}
        # subtle: lists, not sets: a word is appended once per call that finds the pair in it
        # (``_index`` skips a repeat of the last one), so a list may hold a word twice or a word
        # the pair has since left; ``merge`` removes repeats and skips stale words. A list costs
        # 8 bytes a word where a set costs 20-40.
        self._where: dict[Pair, list[int]] = {}
        counts = self._pair_counts
        index = self._index
        for w, word in enumerate(self._words):
            freq = self._freqs[w]
            for pair in zip(word, word[1:]):
                counts[pair] = counts.get(pair, 0) + freq
                index(pair, w)
        keys = self._keys
        self._heap = [(-c, keys[a], keys[b], a, b) for (a, b), c in counts.items()]
        heapq.heapify(self._heap)
        self._pending: Pair = (-1, -1)

    def add_token(self, token_id: int, token: bytes) -> None:
        """Record the bytes of the next token id (ids come in order), for tie-breaking."""
        if token_id != len(self._keys):
            raise ValueError(f"token id {token_id} is out of order (expected {len(self._keys)})")
        self._keys.append(_tie_key(token))

    def best(self) -> tuple[int, int, int] | None:
        """The pair to merge next ``(a, b, count)``, or None when no pair is left. The pair
        leaves the queue: call :meth:`merge` on it next."""
        heap, counts = self._heap, self._pair_counts
        while heap:
            negc, _, _, a, b = heapq.heappop(heap)
            if counts.get((a, b)) == -negc:
                self._pending = (a, b)
                return a, b, -negc
        return None

    def top(self, k: int) -> list[tuple[int, int, int]]:
        """The ``k`` pairs :meth:`best` would return next, best first: ``(a, b, count)``."""
        heap, counts = self._heap, self._pair_counts
        found: list[tuple[int, tuple[int, ...], tuple[int, ...], int, int]] = []
        seen: set[Pair] = set()
        while heap and len(found) < k:
            entry = heapq.heappop(heap)
            pair = (entry[3], entry[4])
            if counts.get(pair) == -entry[0] and pair not in seen:
                seen.add(pair)
                found.append(entry)
        for entry in found:
            heapq.heappush(heap, entry)
        return [(e[3], e[4], -e[0]) for e in found]

    def close(self) -> None:
        """Free the working state (words, pair index, heap) a slice at a time. Letting go of
        it all at once would be one long deallocation that holds the GIL, stalling every other
        thread (a GUI's) meanwhile. With the heap emptied, :meth:`best` returns None."""
        for seq in (self._heap, self._words, self._freqs):
            while seq:
                del seq[-_FREE_SLICE:]
        for table in (self._where, self._pair_counts):
            pop = table.popitem
            while table:
                for _ in range(min(_FREE_SLICE, len(table))):
                    pop()

    def _index(self, pair: Pair, w: int) -> None:
        s = self._where.get(pair)
        if s is None:
            self._where[pair] = [w]
        elif s[-1] != w:
            s.append(w)

    def merge(self, new_id: int) -> int:
        """Replace every occurrence of the pair :meth:`best` returned with ``new_id`` in the
        words that hold it, updating pair counts, the pair -> words index and the heap for
        exactly the pairs whose count changed. Returns the number of words changed."""
        a, b = self._pending
        words, freqs, counts, where = self._words, self._freqs, self._pair_counts, self._where
        delta: dict[Pair, int] = {}
        dget = delta.get
        changed_words = 0
        for w in set(where.pop((a, b), ())):
            word = words[w]
            n = len(word)
            freq = freqs[w]
            new: list[int] = []
            i = 0
            changed = False
            # Merge left to right ("a a a" with (a, a) becomes "aa a", as encoding does) and
            # record how the pairs around each merge site change. Consecutive sites see the
            # new token on their left, so "a b a b" nets (b, a) -1 and (ab, ab) +1.
            while i < n:
                x = word[i]
                if x == a and i + 1 < n and word[i + 1] == b:
                    changed = True
                    if new:
                        p = new[-1]
                        delta[(p, a)] = dget((p, a), 0) - freq
                        pair = (p, new_id)
                        delta[pair] = dget(pair, 0) + freq
                        self._index(pair, w)
                    if i + 2 < n:
                        nx = word[i + 2]
                        delta[(b, nx)] = dget((b, nx), 0) - freq
                        pair = (new_id, nx)
                        delta[pair] = dget(pair, 0) + freq
                        self._index(pair, w)
                    new.append(new_id)
                    i += 2
                else:
                    new.append(x)
                    i += 1
            if changed:  # subtle: otherwise a stale index entry, the pair left this word earlier
                words[w] = new
                changed_words += 1
        delta.pop((a, b), None)
        keys, heap = self._keys, self._heap
        for pair, d in delta.items():
            if d == 0:
                continue
            c = counts.get(pair, 0) + d
            if c > 0:
                counts[pair] = c
                heapq.heappush(heap, (-c, keys[pair[0]], keys[pair[1]], pair[0], pair[1]))
            else:
                counts.pop(pair, None)
                where.pop(pair, None)
        counts.pop((a, b), None)
        return changed_words
