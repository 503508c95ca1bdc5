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
            return cls(tokens, max_tokens, record, packed=arrays())
        words: list[bytes] = []
        freqs: list[int] = []
        for token, freq in pairable(pretoken_counts):
            words.append(token)
            freqs.append(freq)
        return cls(tokens, max_tokens, record, words=words, freqs=freqs)

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
