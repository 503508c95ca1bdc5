"""Incremental byte-level BPE training, CS336 assignment 1 semantics.

What it does: from pre-token counts, repeatedly merges the most frequent adjacent pair (ties:
the lexicographically greater pair of bytes) and yields one immutable :class:`MergeStep` per
merge. :func:`train_bpe` is that generator run to the end; the GUI iterates the same generator.
What it leaves out: reading files and pre-tokenizing (``corpus``), the id layout (``vocab``),
encoding (``tokenizer``).

The loop never rescans all pairs. It keeps
- ``pair -> count`` over all unique pre-tokens ("words"), weighted by their frequency,
- ``pair -> words that (may) contain it``, so a merge touches only those words,
- a heap of ``(-count, tie-break key, pair)`` with lazy invalidation: an entry whose count no
  longer matches the live count is dropped when it surfaces.

Ids: 0..255 are the bytes, then the special tokens in order, then one id per merge.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from .corpus import CorpusPaths, ProgressFn, TrainingCancelled, count_file
from .specials import validate_special_tokens
from .vocab import check_vocab_size, initial_vocab

Pair = tuple[int, int]


@dataclass(frozen=True, slots=True)
class MergeStep:
    """One merge, as the trainer made it.

    ``rank`` is the 0-based merge index, ``count`` the pair's frequency when it was merged
    (pre-token counts weighted), ``new_id`` the id of ``left + right`` in the vocabulary.
    """

    rank: int
    left: bytes
    right: bytes
    new_id: int
    count: int

    @property
    def merged(self) -> bytes:
        return self.left + self.right


_INVERT = bytes(range(255, -1, -1))
# close() frees this many entries per step (well under a millisecond each).
_FREE_SLICE = 4096


def _tie_key(token: bytes) -> tuple[int, ...]:
    # subtle: the heap pops the *smallest* entry but ties must go to the *greatest* bytes.
    # Inverting each byte reverses the order of differing bytes; the trailing 256 (greater
    # than any inverted byte) makes a proper prefix sort after its extensions, as it must.
    return (*token.translate(_INVERT), 256)


class BpeTrainer:
    """Iterate to train: ``for step in BpeTrainer(counts, 1000, ["<|endoftext|>"]): ...``.

    ``vocab`` and ``merges`` grow as the iteration goes; ``top_pairs(k)`` tells the pairs that
    would be merged next; ``cancel()`` (thread-safe) ends the iteration before the next merge.
    """

    def __init__(
        self,
        pretoken_counts: Mapping[bytes, int],
        vocab_size: int,
        special_tokens: Sequence[str] = (),
        *,
        cancel_event: threading.Event | None = None,
    ) -> None:
        self.special_tokens = validate_special_tokens(special_tokens)
        check_vocab_size(vocab_size, self.special_tokens)
        self.vocab_size = vocab_size
        self.vocab = initial_vocab(self.special_tokens)
        self.merges: list[tuple[bytes, bytes]] = []
        self._cancel = cancel_event or threading.Event()
        self._keys: list[tuple[int, ...]] = [_tie_key(t) for t in self.vocab.values()]

        # Unique pre-tokens as lists of ids, with their frequencies. A one-byte word has no
        # pair and can never change, so it is left out.
        self._words: list[list[int]] = []
        self._freqs: list[int] = []
        for token, freq in pretoken_counts.items():
            if len(token) > 1 and freq > 0:
                self._words.append(list(token))
                self._freqs.append(freq)

        self._pair_counts: dict[Pair, int] = {}
        self._where: dict[Pair, set[int]] = {}
        counts, where = self._pair_counts, self._where
        for w, word in enumerate(self._words):
            freq = self._freqs[w]
            for pair in zip(word, word[1:]):
                counts[pair] = counts.get(pair, 0) + freq
                s = where.get(pair)
                if s is None:
                    where[pair] = {w}
                else:
                    s.add(w)
        keys = self._keys
        self._heap = [(-c, keys[a], keys[b], a, b) for (a, b), c in counts.items()]
        heapq.heapify(self._heap)

    @property
    def target_merges(self) -> int:
        """How many merges reaching ``vocab_size`` takes (fewer happen if pairs run out)."""
        return self.vocab_size - 256 - len(self.special_tokens)

    def cancel(self) -> None:
        self._cancel.set()

    def close(self) -> None:
        """End training and free its working state (words, pair index, heap) a slice at a
        time; ``vocab`` and ``merges`` stay. Letting go of it all at once would be one long
        deallocation that holds the GIL, stalling every other thread (a GUI's) meanwhile.
        With the heap emptied, iterating makes no more merges."""
        for seq in (self._heap, self._words, self._freqs):
            while seq:
                del seq[-_FREE_SLICE:]
        for table in (self._where, self._pair_counts):
            pop = table.popitem
            while table:
                for _ in range(min(_FREE_SLICE, len(table))):
                    pop()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def top_pairs(self, k: int) -> list[tuple[bytes, bytes, int]]:
        """The ``k`` pairs that would be merged next, best first, with their counts."""
        heap, counts, vocab = self._heap, self._pair_counts, self.vocab
        found: list[tuple] = []
        seen: set[Pair] = set()
        while heap and len(found) < k:
            entry = heapq.heappop(heap)
            pair = (entry[3], entry[4])
            if counts.get(pair) == -entry[0] and pair not in seen:
                seen.add(pair)
                found.append(entry)
        for entry in found:
            heapq.heappush(heap, entry)
        return [(vocab[e[3]], vocab[e[4]], -e[0]) for e in found]

    def _pop_best(self) -> tuple[Pair, int] | None:
        heap, counts = self._heap, self._pair_counts
        while heap:
            negc, _, _, a, b = heapq.heappop(heap)
            if counts.get((a, b)) == -negc:
                return (a, b), -negc
        return None

    def __iter__(self) -> Iterator[MergeStep]:
        while len(self.vocab) < self.vocab_size and not self._cancel.is_set():
            best = self._pop_best()
            if best is None:
                return
            (a, b), count = best
            new_id = len(self.vocab)
            left, right = self.vocab[a], self.vocab[b]
            self.vocab[new_id] = left + right
            self._keys.append(_tie_key(left + right))
            self.merges.append((left, right))
            self._apply(a, b, new_id)
            yield MergeStep(len(self.merges) - 1, left, right, new_id, count)

    def _index(self, pair: Pair, w: int) -> None:
        s = self._where.get(pair)
        if s is None:
            self._where[pair] = {w}
        else:
            s.add(w)

    def _apply(self, a: int, b: int, new_id: int) -> None:
        """Replace every (a, b) with new_id in the words that hold it, updating pair counts,
        the pair -> words index and the heap for exactly the pairs whose count changed."""
        words, freqs, counts, where = self._words, self._freqs, self._pair_counts, self._where
        delta: dict[Pair, int] = {}
        dget = delta.get
        for w in where.pop((a, b), ()):
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


def trainer_from_file(
    input_path: CorpusPaths,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    cancel_event: threading.Event | None = None,
    pattern: str = "gpt2",
) -> BpeTrainer:
    """Pre-tokenize ``input_path`` (one file, or a sequence of files counted as one corpus)
    in parallel under ``pattern`` (a name or a regex string) and return a trainer ready to
    iterate.

    Raises :class:`~bpe_studio.core.corpus.TrainingCancelled` if ``cancel_event`` is set
    during pre-tokenization.
    """
    specials = validate_special_tokens(special_tokens)
    check_vocab_size(vocab_size, specials)
    event = cancel_event or threading.Event()
    counts = count_file(
        input_path,
        specials,
        workers=workers,
        progress=progress,
        should_stop=event.is_set,
        pattern=pattern,
    )
    if event.is_set():
        raise TrainingCancelled("training cancelled during pre-tokenization")
    return BpeTrainer(counts, vocab_size, specials, cancel_event=event)


def iter_merges(
    input_path: CorpusPaths,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    pattern: str = "gpt2",
) -> Iterator[MergeStep]:
    """Train on a file (or several, as one corpus), yielding each merge as it is made."""
    yield from trainer_from_file(
        input_path, vocab_size, special_tokens, workers=workers, progress=progress, pattern=pattern
    )


def train_bpe(
    input_path: CorpusPaths,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    pattern: str = "gpt2",
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Train a byte-level BPE tokenizer on a UTF-8 text file, or on several files counted as
    one corpus, pre-tokenized with ``pattern`` (a name: "gpt2", "cl100k", "o200k", or a
    regex string). The tokenizer that encodes as it was trained is
    ``Tokenizer(vocab, merges, special_tokens, pattern)``.

    Returns ``(vocab, merges)``: ``vocab`` maps id -> token bytes (0..255 the bytes, then the
    special tokens, then one token per merge), ``merges`` lists ``(left, right)`` in order.
    """
    trainer = trainer_from_file(
        input_path, vocab_size, special_tokens, workers=workers, progress=progress, pattern=pattern
    )
    for _ in trainer:
        pass
    return dict(trainer.vocab), list(trainer.merges)
