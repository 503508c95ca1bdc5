"""What a merge engine starts from, the same for both engines.

What it does: :class:`EngineStart` holds the pre-tokens that hold a pair ("words") with their
counts, the bytes of the ids so far, the most ids there will be and how many best pairs to
record before every merge. The words come as lists (``words``, ``freqs``: what the Python
engine reads) or as arrays (``packed``: the words' bytes back to back, their lengths and
counts: what the compiled engine reads); each form is made from the other only when an engine
asks for it, so counts that compiled counting left in arrays (``corpus.tally.PieceCounts``)
reach the compiled engine without a Python object per pre-token. :func:`pairable` is the
rule for which pre-tokens count: a one-byte pre-token, or one counted zero times, has no pair
that could ever be merged, so neither engine holds it and it does not size the run.
What it leaves out: merging (``merge_python``, ``merge_engine``), choosing an engine
(``trainer``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from numbers import Integral
from typing import Any


def pairable(pretoken_counts: Mapping[bytes, int]) -> Iterator[tuple[bytes, int]]:
    """The pre-tokens of ``pretoken_counts`` that hold a pair, with their counts."""
    return ((t, f) for t, f in pretoken_counts.items() if len(t) > 1 and f > 0)


class EngineStart:
    """``words`` and ``freqs``: the pairable pre-tokens and their counts (or ``packed``, the
    same as arrays); ``tokens``: the bytes of ids 0, 1, ...; ``max_tokens``: the most ids
    there will be; ``record``: keep the ``record`` best pairs before every merge (0: none)."""

    def __init__(
        self,
        tokens: Sequence[bytes],
        max_tokens: int,
        record: int = 0,
        *,
        words: list[bytes] | None = None,
        freqs: list[int] | None = None,
        packed: tuple[Any, Any, Any] | None = None,
    ) -> None:
        if packed is None and (words is None or freqs is None):
            raise ValueError("give words and freqs, or packed")
        self.tokens, self.max_tokens, self.record = tokens, max_tokens, record
        self._words, self._freqs, self._packed = words, freqs, packed

    @classmethod
    def of(
        cls,
        pretoken_counts: Mapping[bytes, int],
        tokens: Sequence[bytes],
        max_tokens: int,
        record: int = 0,
    ) -> EngineStart:
        # Counts held as arrays hand them over as they are (corpus.tally.PieceCounts).
        arrays = getattr(pretoken_counts, "pairable_arrays", None)
        if arrays is not None:
            packed = arrays()
            lens = packed[1]
            sites = int(lens.sum()) - len(lens)
            return cls(tokens, _most_ids(max_tokens, tokens, sites), record, packed=packed)
        words: list[bytes] = []
        freqs: list[int] = []
        sites = 0
        for token, freq in pairable(pretoken_counts):
            words.append(token)
            # Python's integers: NumPy's (which check_counts takes as counts) would sum and
            # negate in their own width in the Python engine (an int32 wrapping, a uint64's
            # negation positive), merging otherwise than the compiled engine.
            freqs.append(int(freq))
            sites += len(token) - 1
        return cls(tokens, _most_ids(max_tokens, tokens, sites), record, words=words, freqs=freqs)

    @property
    def words(self) -> list[bytes]:
        if self._words is None:
            joined, lens, _ = self.packed()
            data = joined.tobytes()
            ends = lens.cumsum().tolist()
            self._words = [data[a:b] for a, b in zip([0, *ends], ends)]
        return self._words

    @property
    def freqs(self) -> list[int]:
        if self._freqs is None:
            self._freqs = self.packed()[2].tolist()
        return self._freqs

    def packed(self) -> tuple[Any, Any, Any]:
        """The words as numpy arrays: their bytes back to back (uint8), their lengths and
        their counts (int64)."""
        if self._packed is None:
            import numpy as np  # subtle: here, so that the Python engine never loads it

            words = self.words
            joined = np.frombuffer(b"".join(words), np.uint8)
            lens = np.fromiter(map(len, words), np.int64, len(words))
            self._packed = joined, lens, np.array(self.freqs, np.int64)
        return self._packed


_INT64_MAX = (1 << 63) - 1


def check_counts(pretoken_counts: object) -> None:
    """TypeError or ValueError naming the first bad entry of pre-token counts given by a
    caller (counts held as arrays, ``corpus.tally.PieceCounts``, are the counter's own and
    pass as they are): not a mapping,
    a pre-token that is not bytes, a count that is not a whole number (2.6 was merged as 2.6
    by the Python engine and as 2 by the compiled one), negative, or beyond 64 bits (the
    compiled engine's counts), alone or as the pairs' counts may add up."""
    if hasattr(pretoken_counts, "pairable_arrays"):
        return
    if not isinstance(pretoken_counts, Mapping):
        raise TypeError(
            f"pre-token counts must be a mapping of bytes -> count, not "
            f"{type(pretoken_counts).__name__}"
        )
    if set(map(type, pretoken_counts)) - {bytes}:
        bad = next(t for t in pretoken_counts if not isinstance(t, bytes))
        raise TypeError(f"pre-tokens must be bytes, got {bad!r}")
    counts = pretoken_counts.values()
    if set(map(type, counts)) - {int}:  # NumPy's integers are whole numbers too
        for token, count in pretoken_counts.items():
            if isinstance(count, bool) or not isinstance(count, Integral):
                raise TypeError(f"pre-token {token!r}: count {count!r} is not a whole number")
    if counts and min(counts) < 0:
        token = next(t for t, c in pretoken_counts.items() if c < 0)
        raise ValueError(f"pre-token {token!r}: count {pretoken_counts[token]} is negative")
    if counts and max(counts) > _INT64_MAX:
        token = next(t for t, c in pretoken_counts.items() if c > _INT64_MAX)
        raise ValueError(f"pre-token {token!r}: count {pretoken_counts[token]} is beyond 2**63 - 1")
    # A pair's count is a sum over the pre-tokens: counts each within 64 bits may add up past
    # them, where the compiled engine's would wrap and merge otherwise than the Python one.
    # No pair ever counts more than the byte pair where its two tokens meet did at the start
    # (each place it occurs is a place that byte pair occurred), so the largest byte pair's
    # count is the one to check; the cheap bound (the largest count times all the bytes,
    # in Python's integers: NumPy's would wrap too) spares counting them almost always.
    if counts and int(max(counts)) * sum(map(len, pretoken_counts)) > _INT64_MAX:
        pair, total = _most_counted_byte_pair(pretoken_counts)
        if total > _INT64_MAX:
            raise ValueError(
                f"pre-token counts: the byte pair {pair!r} occurs {total:,} times in all, "
                "beyond 2**63 - 1 (the engines' pair counts are 64-bit integers); scale the "
                "counts down"
            )


def _most_counted_byte_pair(pretoken_counts: Mapping[bytes, Any]) -> tuple[bytes, int]:
    """The byte pair the counts hold most often, weighted by each pre-token's count (as
    Python integers), and that count; ``(b"", 0)`` for none."""
    totals: dict[bytes, int] = {}
    for token, count in pretoken_counts.items():
        count = int(count)
        for i in range(len(token) - 1):
            pair = token[i : i + 2]
            totals[pair] = totals.get(pair, 0) + count
    if not totals:
        return b"", 0
    pair = max(totals, key=totals.__getitem__)
    return pair, totals[pair]


def _most_ids(max_tokens: int, tokens: Sequence[bytes], sites: int) -> int:
    """``max_tokens``, or fewer when the words cannot make that many merges."""
    # subtle: a merge joins two places of a word into one, so no run makes more merges than
    # its words have places after their first; the engines size their tables by max_tokens,
    # which a vocabulary size far beyond the corpus would otherwise set.
    return min(max_tokens, len(tokens) + sites)
