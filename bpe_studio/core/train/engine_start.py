"""What a merge engine starts from, the same for both engines.

What it does: :class:`EngineStart` holds the pre-tokens that hold a pair ("words") with their
counts, the bytes of the ids so far, the most ids there will be and how many best pairs to
record before every merge. :func:`pairable` is the rule for which pre-tokens count: a one-byte
pre-token, or one counted zero times, has no pair that could ever be merged, so neither engine
holds it and it does not size the run. What it leaves out: merging (``merge_python``,
``merge_engine``), choosing an engine (``trainer``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass


def pairable(pretoken_counts: Mapping[bytes, int]) -> Iterator[tuple[bytes, int]]:
    """The pre-tokens of ``pretoken_counts`` that hold a pair, with their counts."""
    return ((t, f) for t, f in pretoken_counts.items() if len(t) > 1 and f > 0)


@dataclass(frozen=True)
class EngineStart:
    """``words`` and ``freqs``: the pairable pre-tokens and their counts; ``tokens``: the bytes
    of ids 0, 1, ...; ``max_tokens``: the most ids there will be; ``record``: keep the
    ``record`` best pairs before every merge (0: keep none)."""

    words: list[bytes]
    freqs: list[int]
    tokens: Sequence[bytes]
    max_tokens: int
    record: int = 0

    @classmethod
    def of(
        cls,
        pretoken_counts: Mapping[bytes, int],
        tokens: Sequence[bytes],
        max_tokens: int,
        record: int = 0,
    ) -> EngineStart:
        words: list[bytes] = []
        freqs: list[int] = []
        sites = 0
        for token, freq in pairable(pretoken_counts):
            words.append(token)
            freqs.append(freq)
            sites += len(token) - 1
        # subtle: a merge joins two places of a word into one, so no run makes more merges
        # than its words have places after their first; the engines size their tables by
        # max_tokens, which a vocabulary size far beyond the corpus would otherwise set.
        return cls(words, freqs, tokens, min(max_tokens, len(tokens) + sites), record)
