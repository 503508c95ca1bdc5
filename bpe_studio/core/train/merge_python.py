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
Asked to (``record``), it also keeps the best pairs before every merge (:class:`RecordedEntries`),
from a few candidates it carries from merge to merge (:meth:`PythonMergeEngine._record`); the
candidates are then the front of the queue, taken out of the heap, and the best pair is the
first of them.
What it leaves out: MergeStep records, the vocabulary, cancelling (``trainer.BpeTrainer`` does
those), choosing an engine (``trainer``).
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left, insort
from collections import defaultdict
from collections.abc import Iterable, Mapping

from .engine_start import EngineStart

# Token ids are characters, so they must be code points.
MAX_TOKENS = 0x110000

_INVERT = bytes(range(255, -1, -1))
# Closes every tie-break key; greater than any inverted byte (see _tie_key).
_END = chr(256)
# close() frees this many entries per step (well under a millisecond each).
_FREE_SLICE = 4096
# Candidates taken for the record, in row widths: more means fewer, longer refreshes, and
# each refresh costs the heap about a row's width of pops and pushes beyond what merging takes.
_CANDIDATES = 5

_Entry = tuple[int, str, str, str]


def _tie_key(token: bytes) -> str:
    # subtle: the heap pops the *smallest* entry but ties must go to the *greatest* bytes.
    # Inverting each byte reverses the order of differing bytes; the closing _END (greater
    # than any inverted byte) makes a proper prefix sort after its extensions, as it must.
    return token.translate(_INVERT).decode("latin-1") + _END


class PythonMergeEngine:
    """``engine.best()`` -> ``(a, b, count)`` or None; then ``engine.add_token(new_id, bytes)``
    and ``engine.merge(new_id)``; ``engine.top(k)``; ``engine.close()``."""

    def __init__(self, start: EngineStart) -> None:
        """Ids are characters here, so ``start.max_tokens`` is at most :data:`MAX_TOKENS`."""
        tokens, max_tokens, record = start.tokens, start.max_tokens, start.record
        if max_tokens > MAX_TOKENS:
            raise ValueError(
                f"the Python merge engine holds at most {MAX_TOKENS:,} tokens, not "
                f"{max_tokens:,}; train with engine='compiled'"
            )
        self._keys: list[str] = [_tie_key(t) for t in tokens]
        # Bytes are ids 0..255, so latin-1 turns a pre-token into its word of ids as it is.
        self._words: list[str] = [word.decode("latin-1") for word in start.words]
        self._freqs: list[int] = start.freqs

        counts: dict[str, int] = {}
        # subtle: lists, not sets: here a word is listed once per pair it holds (a repeat of the
        # list's last word is skipped), and a merge lists it once per pair it gains. A list may
        # hold a word the pair has since left; ``merge`` skips it, as ``replace`` leaves it
        # unchanged. A list costs 8 bytes a word where a set costs 20-40.
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
        # When recording: the front of the queue, live entries out of the heap, best first.
        # subtle: a pair in _cand may also have an entry in the heap (a new pair is pushed
        # there as well); entries taken from the heap are told apart by pair, and the pair's
        # live count decides, so such an entry is harmless.
        self._width = record
        self._cand: list[_Entry] = []
        self._cand_at: dict[str, _Entry] = {}  # pair -> its entry in _cand
        # Every pair outside _cand comes after this entry (None: no pair is outside).
        self._bound: _Entry | None = None
        self.recorded = RecordedEntries() if record > 0 else None
        if self.recorded is not None:
            self._refresh_candidates()
            self.recorded.append(self._cand[:record])

    def add_token(self, token_id: int, token: bytes) -> None:
        """Record the bytes of the next token id (ids come in order), for tie-breaking."""
        if token_id != len(self._keys):
            raise ValueError(f"token id {token_id} is out of order (expected {len(self._keys)})")
        self._keys.append(_tie_key(token))

    def best(self) -> tuple[int, int, int] | None:
        """The pair to merge next ``(a, b, count)``, or None when no pair is left. The pair
        leaves the queue: call :meth:`merge` on it next."""
        if self.recorded is not None:
            # The record's step made sure the first candidate comes before any other pair.
            if not self._cand:
                return None
            entry = self._cand.pop(0)
            del self._cand_at[entry[3]]
        else:
            live = self._pop_live()
            if live is None:
                return None
            entry = live
        pair = self._pending = entry[3]
        return ord(pair[0]), ord(pair[1]), -entry[0]

    def top(self, k: int) -> list[tuple[int, int, int]]:
        """The ``k`` pairs :meth:`best` would return next, best first: ``(a, b, count)``."""
        if self.recorded is None:
            return [_ids(e) for e in self._top_entries(k)]
        self._release_candidates()
        found = [_ids(e) for e in self._top_entries(k)]
        self._refresh_candidates()
        return found

    def _top_entries(self, k: int, *, keep: bool = True, skip: Iterable[str] = ()) -> list[_Entry]:
        """The heap entries of the ``k`` best pairs, best first, at their live counts, leaving
        out the pairs in ``skip`` (their entries are dropped); they stay in the heap if
        ``keep``."""
        found: list[_Entry] = []
        seen: set[str] = set(skip)
        while len(found) < k:
            entry = self._pop_live()
            if entry is None:
                break
            if entry[3] not in seen:
                seen.add(entry[3])
                found.append(entry)
        if keep:
            for entry in found:
                heapq.heappush(self._heap, entry)
        return found

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
        self._cand, self._cand_at = [], {}
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
            if len(new) == len(word):  # the pair left this word earlier
                continue
            words[w] = new
            changed_words += 1
            freq = freqs[w]
            last = len(new) - 1
            # The pairs gained are the new word's pairs that hold x: at each merge site, the
            # one on its left, and the one on its right unless the next site is there (then
            # that pair, (x, x), is the next site's left one).
            i = new.find(x)
            if new.find(x, i + 1) < 0:
                # One site, as in most words: its two pairs differ.
                if i:
                    gained = new[i - 1 : i + 1]
                    gained_by[gained] += freq
                    gained_in[gained].append(w)
                if i < last:
                    gained = new[i : i + 2]
                    gained_by[gained] += freq
                    gained_in[gained].append(w)
                continue
            # Several: the word is listed once per pair gained however often it holds it.
            # Listed at each site, a long pre-token (a line of DNA, a run of spaces) made the
            # next merge of that pair replace the whole word again for each of its sites,
            # quadratic in its length.
            listed: set[str] = set()
            while i >= 0:
                if i:
                    gained = new[i - 1 : i + 1]
                    gained_by[gained] += freq
                    if gained not in listed:
                        listed.add(gained)
                        gained_in[gained].append(w)
                if i < last and new[i + 1] != x:
                    gained = new[i : i + 2]
                    gained_by[gained] += freq
                    if gained not in listed:
                        listed.add(gained)
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
        if self.recorded is not None:
            self._record(ab, lost_by, gained_by)
        return changed_words

    def _record(self, ab: str, lost_by: Mapping[str, int], gained_by: Mapping[str, int]) -> None:
        """Record the best pairs before the next merge, after the merge of ``ab`` that
        lowered the counts in ``lost_by`` and created the pairs of ``gained_by``.

        The candidates are carried over: the merged pair leaves them (``best`` took it),
        those whose count fell move down to it, new pairs that come out before the bound join
        them, and only when fewer than a row's width of them still come out before it (nothing
        outside can come between) are they taken anew from the heap."""
        cand, at, counts = self._cand, self._cand_at, self._pair_counts
        width, bound = self._width, self._bound
        if not at.keys().isdisjoint(lost_by):
            for pair in at.keys() & lost_by.keys():
                entry = at.pop(pair)
                # Found by bisection (the candidates are sorted and distinct), not by a scan.
                del cand[bisect_left(cand, entry)]
                live = counts.get(pair)
                if live:
                    entry = at[pair] = (-live, entry[1], entry[2], pair)
                    insort(cand, entry)
        if gained_by:
            floor = 1 if bound is None else -bound[0]
            if max(gained_by.values()) >= floor:
                keys = self._keys
                for pair, c in gained_by.items():
                    if c >= floor:
                        entry = (-c, keys[ord(pair[0])], keys[ord(pair[1])], pair)
                        if bound is None or entry < bound:
                            at[pair] = entry
                            insort(cand, entry)
        if len(cand) > 2 * _CANDIDATES * width:
            self._release_candidates()
            self._refresh_candidates()
        elif bound is not None and (len(cand) < width or cand[width - 1] > bound):
            # Fewer than a row's width of candidates come out before the bound.
            self._refresh_candidates()
        assert self.recorded is not None
        self.recorded.append(self._cand[:width])

    def _release_candidates(self) -> None:
        """Put the candidates back into the heap."""
        push, heap = heapq.heappush, self._heap
        for entry in self._cand:
            push(heap, entry)
        self._cand, self._cand_at, self._bound = [], {}, None

    def _refresh_candidates(self) -> None:
        """Take the best pairs of the heap (all of them come after the bound) into the
        candidates, up to a few times a row's width of candidates and at least a row's width
        of new ones, so that many merges pass before the next refresh; the last one taken is
        the new bound. The candidates kept are exact, so none goes back: the heap gives up
        about as many entries as merging takes from the candidates meanwhile."""
        at = self._cand_at
        need = max(_CANDIDATES * self._width - len(at), self._width)
        fresh = self._top_entries(need, keep=False, skip=at)
        self._bound = fresh[-1] if len(fresh) == need else None
        at.update((e[3], e) for e in fresh)
        self._cand = sorted(self._cand + fresh)


def _ids(entry: _Entry) -> tuple[int, int, int]:
    """A heap entry as ``(left id, right id, count)``."""
    return ord(entry[3][0]), ord(entry[3][1]), -entry[0]


class RecordedEntries:
    """The best pairs before each merge, as the Python engine recorded them: row ``k`` holds
    those before merge ``k`` (0-based) as heap entries, best first. Rows are appended before
    the merge they precede is handed out, so a reader in another thread may read every row
    below ``len()``.

    Kept flat, every row's entries in one list and where each row ends in an array: one
    container for the whole record, where a tuple per row (a new container every merge) made
    the cyclic collector run more often, walking the trainer's young state each time."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._ends = array("q", [0])  # row k is _entries[_ends[k] : _ends[k + 1]]

    def append(self, row: list[_Entry]) -> None:
        """Add the next row (its entries first, then its end: a reader sees it whole)."""
        self._entries += row
        self._ends.append(len(self._entries))

    def __len__(self) -> int:
        return len(self._ends) - 1

    def row(self, k: int) -> list[tuple[int, int, int]]:
        """The pairs before merge ``k``, best first: ``(left id, right id, count)``."""
        if not 0 <= k < len(self):
            raise IndexError(f"no recorded row {k} (rows 0..{len(self) - 1})")
        return [_ids(e) for e in self._entries[self._ends[k] : self._ends[k + 1]]]

    @property
    def nbytes(self) -> int:
        """Memory the record takes beyond the entries the engine made anyway: the list of
        entries and the rows' ends (not the entries made for the record alone)."""
        return 8 * (len(self._entries) + len(self._ends))
