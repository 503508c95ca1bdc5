"""The merge loop in pure Python: the engine for small and medium corpora, where it starts
instantly and holds no more memory than its words and pair tables.

What it does: :class:`PythonMergeEngine` holds each unique pre-token ("word") as a ``str`` with
one character per token id (``chr(id)``), so that the work of a merge that grows with a word's
length happens inside ``str`` methods, in C: ``word.replace(pair, new)`` merges every
occurrence left to right, exactly as BPE does ("a a a" with (a, a) becomes "aa a"), and
``str.find`` walks from one merge site to the next. Python code runs once per merge site, not
once per token of the word. Beside the words it keeps
- ``pair -> count`` over all words, weighted by their frequency; a pair is the 2-character
  string of its two ids, which is also the needle ``replace`` looks for,
- ``pair -> words that (may) contain it`` (a list; stale and repeated entries are skipped),
  so a merge touches only those words,
- a heap of ``(-count, tie-break key of a, of b, pair)``, checked lazily: an entry whose
  count is not the live count is dropped, or moved down to it, when it surfaces,
and answers in token ids, with the same small interface as the compiled engine
(``merge_engine.CompiledMergeEngine``): ``best``, ``add_token``, ``merge``, ``top``, ``close``.
What it leaves out: MergeStep records, the vocabulary, cancelling (``trainer.BpeTrainer`` does
those), choosing an engine (``trainer``).
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Mapping, Sequence

# Token ids are characters, so they must be code points.
MAX_TOKENS = 0x110000

_INVERT = bytes(range(255, -1, -1))
# Closes every tie-break key; greater than any inverted byte (see _tie_key).
_END = chr(256)
# close() frees this many entries per step (well under a millisecond each).
_FREE_SLICE = 4096

_Entry = tuple[int, str, str, str]


def _tie_key(token: bytes) -> str:
    # subtle: the heap pops the *smallest* entry but ties must go to the *greatest* bytes.
    # Inverting each byte reverses the order of differing bytes; the closing _END (greater
    # than any inverted byte) makes a proper prefix sort after its extensions, as it must.
    return token.translate(_INVERT).decode("latin-1") + _END


class PythonMergeEngine:
    """``engine.best()`` -> ``(a, b, count)`` or None; then ``engine.add_token(new_id, bytes)``
    and ``engine.merge(new_id)``; ``engine.top(k)``; ``engine.close()``."""

    def __init__(
        self, pretoken_counts: Mapping[bytes, int], tokens: Sequence[bytes], max_tokens: int
    ) -> None:
        """``tokens``: the bytes of ids 0, 1, ...; ``max_tokens``: the most ids there will be
        (at most :data:`MAX_TOKENS`, since ids are characters here)."""
        if max_tokens > MAX_TOKENS:
            raise ValueError(
                f"the Python merge engine holds at most {MAX_TOKENS:,} tokens, not "
                f"{max_tokens:,}; train with engine='compiled'"
            )
        self._keys: list[str] = [_tie_key(t) for t in tokens]
        # A one-byte word has no pair and can never change, so it is left out. Bytes are
        # ids 0..255, so latin-1 turns a pre-token into its word of ids as it is.
        self._words: list[str] = []
        self._freqs: list[int] = []
        for token, freq in pretoken_counts.items():
            if len(token) > 1 and freq > 0:
                self._words.append(token.decode("latin-1"))
                self._freqs.append(freq)

        counts: dict[str, int] = {}
        # subtle: lists, not sets: here a word is listed once per pair it holds (a repeat of the
        # list's last word is skipped), a merge lists it once per pair it gains, so a list may
        # hold a word twice or a word the pair has since left; ``merge`` skips both, as
        # ``replace`` leaves them unchanged. A list costs 8 bytes a word where a set costs 20-40.
        where: dict[str, list[int]] = {}
        cget, wget = counts.get, where.get
        for w, word in enumerate(self._words):
            freq = self._freqs[w]
            for i in range(len(word) - 1):
                pair = word[i : i + 2]
                counts[pair] = cget(pair, 0) + freq
                s = wget(pair)
                if s is None:
                    where[pair] = [w]
                elif s[-1] != w:
                    s.append(w)
        self._pair_counts = counts
        self._where = where
        keys = self._keys
        self._heap: list[_Entry] = [
            (-c, keys[ord(p[0])], keys[ord(p[1])], p) for p, c in counts.items()
        ]
        heapq.heapify(self._heap)
        self._pending = ""

    def add_token(self, token_id: int, token: bytes) -> None:
        """Record the bytes of the next token id (ids come in order), for tie-breaking."""
        if token_id != len(self._keys):
            raise ValueError(f"token id {token_id} is out of order (expected {len(self._keys)})")
        self._keys.append(_tie_key(token))

    def best(self) -> tuple[int, int, int] | None:
        """The pair to merge next ``(a, b, count)``, or None when no pair is left. The pair
        leaves the queue: call :meth:`merge` on it next."""
        entry = self._pop_live()
        if entry is None:
            return None
        pair = self._pending = entry[3]
        return ord(pair[0]), ord(pair[1]), -entry[0]

    def top(self, k: int) -> list[tuple[int, int, int]]:
        """The ``k`` pairs :meth:`best` would return next, best first: ``(a, b, count)``."""
        found: list[_Entry] = []
        seen: set[str] = set()
        while len(found) < k:
            entry = self._pop_live()
            if entry is None:
                break
            if entry[3] not in seen:
                seen.add(entry[3])
                found.append(entry)
        for entry in found:
            heapq.heappush(self._heap, entry)
        return [(ord(e[3][0]), ord(e[3][1]), -e[0]) for e in found]

    def _pop_live(self) -> _Entry | None:
        """Pop the best entry whose count is its pair's live count.

        subtle: a count that grows gets a new entry; one that shrinks keeps its old, higher
        entry, which is moved down to the live count only when it surfaces. So every live pair
        has an entry at or above its count, and the first entry popped at its pair's live count
        is the best pair: any other pair's live count is at most its own best entry's."""
        heap, counts = self._heap, self._pair_counts
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            entry = pop(heap)
            live = counts.get(entry[3])
            if live is None or live > -entry[0]:
                continue  # merged or gone, or a stale entry below a newer, higher one
            if live == -entry[0]:
                return entry
            push(heap, (-live, *entry[1:]))
        return None

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

    def merge(self, new_id: int) -> int:
        """Replace every occurrence of the pair :meth:`best` returned with ``new_id`` in the
        words that hold it, updating pair counts, the pair -> words index and the heap for
        exactly the pairs whose count changed. Returns the number of words changed."""
        ab = self._pending
        a, b = ab[0], ab[1]
        x = chr(new_id)
        ba, xx = b + a, x + x
        words, freqs, counts, where = self._words, self._freqs, self._pair_counts, self._where
        # subtle: every pair gained holds x, which no word held before, so gained pairs are new
        # (their count and word list start here), and no pair lost holds x.
        gained_by: defaultdict[str, int] = defaultdict(int)
        gained_in: defaultdict[str, list[int]] = defaultdict(list)
        changed_words = 0
        for w in where.pop(ab, ()):
            word = words[w]
            new = word.replace(ab, x)
            if len(new) == len(word):  # a repeat, or the pair left this word earlier
                continue
            words[w] = new
            changed_words += 1
            freq = freqs[w]
            last = len(new) - 1
            # The pairs gained are the new word's pairs that hold x: at each merge site, the
            # one on its left, and the one on its right unless the next site is there (then
            # that pair, (x, x), is the next site's left one). A word holding a gained pair
            # twice is listed twice; ``merge`` skips the repeat, as ``replace`` changes nothing.
            i = new.find(x)
            while i >= 0:
                if i:
                    gained = new[i - 1 : i + 1]
                    gained_by[gained] += freq
                    gained_in[gained].append(w)
                if i < last and new[i + 1] != x:
                    gained = new[i : i + 2]
                    gained_by[gained] += freq
                    gained_in[gained].append(w)
                i = new.find(x, i + 1)
        # Each pair gained replaced exactly one pair, as often: (l, x) replaced (l, a),
        # (x, r) replaced (b, r), and (x, x) replaced (b, a) between two sites.
        lost_by: defaultdict[str, int] = defaultdict(int)
        for gained, c in gained_by.items():
            left, right = gained[0], gained[1]
            if gained == xx:
                lost_by[ba] += c
            elif right == x:
                lost_by[left + a] += c
            else:
                lost_by[b + right] += c
        # subtle: no occurrence of (a, b) is left, and none can form again (merges only make
        # new ids), so its count goes, whatever was lost from it ("a a a" loses (a, a) once).
        lost_by.pop(ab, None)
        counts.pop(ab, None)
        for pair, d in lost_by.items():
            c = counts[pair] - d
            if c > 0:
                counts[pair] = c  # a count that shrinks keeps its entry (see _pop_live)
            else:
                del counts[pair]
                where.pop(pair, None)
        where.update(gained_in)
        keys, heap, push = self._keys, self._heap, heapq.heappush
        for pair, c in gained_by.items():
            counts[pair] = c
            push(heap, (-c, keys[ord(pair[0])], keys[ord(pair[1])], pair))
        return changed_words
