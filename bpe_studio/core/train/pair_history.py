"""The pair counts of a training run as they stood before each merge, recorded while it trained.

What it does: :class:`PairHistory` answers "which pairs led, and with what counts, before merge
``k``" for any step of a run, at once: :meth:`~PairHistory.top_pairs` gives the best pairs in
the trainer's order (count descending, then the lexicographically greater pair of bytes), so
the first pair is the merge the trainer made at rank ``k``, with that merge's count; the row
after the last merge holds the pairs a longer run would have chosen from. The merge engines
write the rows while they train (``BpeTrainer(..., record_pairs=n)``), one per merge, before
handing the merge out, so another thread may read every row below ``len(history)`` while the
run goes on. The app's pair chart reads it for the step the timeline shows, live or not.
What it leaves out: how the engines keep their rows exact cheaply (``merge_python``,
``merge_kernel``: candidates carried from merge to merge, taken anew from the queue when the
rows could no longer be told apart from the pairs outside them); counts of pairs below the
``n`` best; the count of each merge against its rank (the run's ``MergeStep`` records hold it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

Pair = tuple[bytes, bytes, int]


class RecordedRows(Protocol):
    """What a merge engine records: row ``k`` is the best pairs before merge ``k``, as token
    ids ``(left, right, count)``, best first."""

    def __len__(self) -> int: ...
    def row(self, k: int) -> list[tuple[int, int, int]]: ...


class PairHistory:
    """The ``width`` best pairs before every merge of one run, in bytes.

    ``rows`` is the engine's record and ``vocab`` the run's growing vocabulary (read, never
    changed: an id below the rows' step is never redefined).

    >>> from bpe_studio.core import BpeTrainer
    >>> trainer = BpeTrainer({b"abab": 2, b"ab": 1, b"ba": 4}, 258, record_pairs=2)
    >>> steps = list(trainer)
    >>> history = trainer.pair_history
    >>> history.top_pairs(0)
    [(b'b', b'a', 6), (b'a', b'b', 5)]
    >>> history.top_pairs(1)
    [(b'ba', b'b', 2), (b'a', b'ba', 2)]
    """

    def __init__(self, rows: RecordedRows, vocab: Mapping[int, bytes], width: int) -> None:
        self._rows = rows
        self._vocab = vocab
        self.width = width

    def __len__(self) -> int:
        """Steps recorded so far: merges made, plus one (the pairs after the last merge)."""
        return len(self._rows)

    def top_pairs(self, k: int, n: int | None = None) -> list[Pair]:
        """The ``n`` (default: all recorded, :attr:`width`) best pairs before merge ``k``
        (0-based; ``k`` = merges made, for the pairs after them), best first, as
        ``(left, right, count)``. Raises IndexError for a step not recorded (yet)."""
        if n is not None and n < 0:
            raise ValueError(f"top_pairs: n = {n} must not be negative")
        if not 0 <= k < len(self._rows):
            raise IndexError(f"step {k} is not recorded: steps 0..{len(self._rows) - 1} are")
        vocab = self._vocab
        row = self._rows.row(k)
        return [(vocab[a], vocab[b], c) for a, b, c in (row if n is None else row[:n])]
