"""Incremental byte-level BPE training, CS336 assignment 1 semantics.

What it does: from pre-token counts, repeatedly merges the most frequent adjacent pair (ties:
the lexicographically greater pair of bytes) and yields one immutable :class:`MergeStep` per
merge. :func:`train_bpe` is that generator run to the end; the GUI iterates the same generator.
What it leaves out: reading files and pre-tokenizing (``pretokenize``), encoding (``tokenizer``).

The loop never rescans all pairs: ``merge_engine`` keeps pair counts, where each pair occurs
(positions within words) and a priority queue, in flat arrays worked on by compiled kernels
(``merge_kernel``), and a merge touches only the places where the merged pair occurs.

Ids: 0..255 are the bytes, then the special tokens in order, then one id per merge.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from .merge_engine import MergeEngine
from .pretokenize import ProgressFn, TrainingCancelled, count_file, validate_special_tokens

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


def initial_vocab(special_tokens: Sequence[str]) -> dict[int, bytes]:
    """The vocabulary before any merge: 256 bytes, then the special tokens in order."""
    vocab = {i: bytes([i]) for i in range(256)}
    for tok in special_tokens:
        vocab[len(vocab)] = tok.encode("utf-8")
    return vocab


def check_vocab_size(vocab_size: int, special_tokens: Sequence[str]) -> None:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    floor = 256 + len(special_tokens)
    if vocab_size < floor:
        raise ValueError(
            f"vocab_size {vocab_size} is too small: it must be at least {floor} "
            f"(256 byte tokens + {len(special_tokens)} special token(s))"
        )


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
        self._engine = MergeEngine(pretoken_counts, list(self.vocab.values()), vocab_size)

    @property
    def target_merges(self) -> int:
        """How many merges reaching ``vocab_size`` takes (fewer happen if pairs run out)."""
        return self.vocab_size - 256 - len(self.special_tokens)

    def cancel(self) -> None:
        self._cancel.set()

    def close(self) -> None:
        """End training and free its working state (pre-tokens, pair index, queue); ``vocab``
        and ``merges`` stay. The state is a few flat arrays, each freed in one short call, so
        a GUI thread is not stalled. With the queue emptied, iterating makes no more merges."""
        self._engine.close()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def top_pairs(self, k: int) -> list[tuple[bytes, bytes, int]]:
        """The ``k`` pairs that would be merged next, best first, with their counts."""
        vocab = self.vocab
        return [(vocab[a], vocab[b], c) for a, b, c in self._engine.top(k)]

    def __iter__(self) -> Iterator[MergeStep]:
        engine, vocab = self._engine, self.vocab
        while len(vocab) < self.vocab_size and not self._cancel.is_set():
            best = engine.best()
            if best is None:
                return
            a, b, count = best
            new_id = len(vocab)
            left, right = vocab[a], vocab[b]
            vocab[new_id] = left + right
            engine.add_token(new_id, left + right)
            self.merges.append((left, right))
            engine.merge(new_id)
            yield MergeStep(len(self.merges) - 1, left, right, new_id, count)


def trainer_from_file(
    input_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    cancel_event: threading.Event | None = None,
) -> BpeTrainer:
    """Pre-tokenize ``input_path`` (in parallel) and return a trainer ready to iterate.

    Raises :class:`~bpe_studio.core.pretokenize.TrainingCancelled` if ``cancel_event`` is set
    during pre-tokenization.
    """
    specials = validate_special_tokens(special_tokens)
    check_vocab_size(vocab_size, specials)
    event = cancel_event or threading.Event()
    counts = count_file(
        input_path, specials, workers=workers, progress=progress, should_stop=event.is_set
    )
    if event.is_set():
        raise TrainingCancelled("training cancelled during pre-tokenization")
    return BpeTrainer(counts, vocab_size, specials, cancel_event=event)


def iter_merges(
    input_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    workers: int | None = None,
    progress: ProgressFn | None = None,
) -> Iterator[MergeStep]:
    """Train on a file, yielding each merge as it is made."""
    yield from trainer_from_file(
        input_path, vocab_size, special_tokens, workers=workers, progress=progress
    )


def train_bpe(
    input_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    workers: int | None = None,
    progress: ProgressFn | None = None,
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Train a byte-level BPE tokenizer on a UTF-8 text file.

    Returns ``(vocab, merges)``: ``vocab`` maps id -> token bytes (0..255 the bytes, then the
    special tokens, then one token per merge), ``merges`` lists ``(left, right)`` in order.
    """
    trainer = trainer_from_file(
        input_path, vocab_size, special_tokens, workers=workers, progress=progress
    )
    for _ in trainer:
        pass
    return dict(trainer.vocab), list(trainer.merges)
