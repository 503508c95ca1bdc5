"""The run's tokenizer at any step, built once from the record and cut to each step.

What it does: :class:`RunSteps` (one per run: ``RunState.steps``) builds the run's tokenizer
from its record when a step is first asked for, with every merge recorded then, keeps it,
and gives the tokenizer after the first ``k`` merges as its truncation
(``Tokenizer.truncated``: the merge list sliced, the tables cut from the kept one's on first
use, its compiled encoder's tables shared). A step past the kept tokenizer (the run resumed
and merged more) builds it again, with every merge recorded by then. The merges as ids
(``MergeIds``, what the editor moves a text's tokens between steps with) are worked out once
for the kept tokenizer and sliced for each step. :class:`StepBuild` is one step's recipe,
captured on the GUI thread (references, no copies) and called in a background job.

Why: a paused run's replay (or the step moved while the run trains or pauses) asks for a new
tokenizer of the run at every frame, about 30 a second: each was built from the record and
had its merges as ids and its compiled tables worked out anew (at 9,000 merges, about 7 ms,
9 ms and 10 ms a frame, on the core beside the trainer's).

subtle: the record is read in another thread after it was captured; a run's record only
grows (appended to, never edited) and a new run gets a new list, so its first rows stay this
run's. The kept tokenizer is told apart by the very record, vocabulary and settings it was
built from: a state put back (``AppModel.restore``) or emptied in place holds other ones.
What it leaves out: capturing the state (``run_tokenizer``), a loaded tokenizer's steps (its
own truncations), keeping sources (``tokenizer_source``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...core import MergeStep, Tokenizer
from ...core.explain.spans_at_step import MergeIds


@dataclass(frozen=True, eq=False)
class StepBuild:
    """How to get the run's tokenizer after its first ``k`` merges (``k`` at most the
    merges recorded when captured): call it off the GUI thread."""

    steps: RunSteps
    record: Sequence[MergeStep]
    base: Mapping[int, bytes]
    specials: tuple[str, ...]
    pattern: str
    k: int

    def __call__(self) -> Tokenizer:
        return self.steps.tokenizer(self)

    def merge_ids(self) -> MergeIds | None:
        """The step's merges as ids (``MergeIds.of`` of its tokenizer), sliced from the kept
        tokenizer's."""
        return self.steps.merge_ids(self)


class RunSteps:
    """The run's tokenizer, kept, and its steps cut from it (see the module docstring).
    Safe to call from several threads: one builds, the others wait and cut from it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made_of: tuple[object, ...] = ()  # what the kept tokenizer was built from
        self._full: Tokenizer | None = None
        self._ids: tuple[MergeIds | None] | None = None  # the kept tokenizer's, once asked

    def tokenizer(self, build: StepBuild) -> Tokenizer:
        """The tokenizer of ``build``'s step: the kept one, or its truncation."""
        with self._lock:
            full = self._kept(build)
        return full if build.k == len(full.merges) else full.truncated(build.k)

    def merge_ids(self, build: StepBuild) -> MergeIds | None:
        """``MergeIds.of`` the tokenizer of ``build``'s step."""
        with self._lock:
            full = self._kept(build)
            if self._ids is None:
                self._ids = (MergeIds.of(full),)
            ids = self._ids[0]
        k = build.k
        if ids is None:
            # subtle: merges that are not plain steps as a whole may be in their first k
            # (a later merge breaking the order); that is the step's own question.
            return MergeIds.of(self.tokenizer(build))
        # The first k merges of plain steps are plain steps, with the same ids.
        return ids if k == len(ids.new) else MergeIds(ids.left[:k], ids.right[:k], ids.new[:k])

    def _kept(self, build: StepBuild) -> Tokenizer:
        """The kept tokenizer, built now if there is none of ``build``'s run holding its
        step (called with the lock held: a second caller waits for the first one's build)."""
        made_of = (build.record, build.base, build.specials, build.pattern)
        full, kept = self._full, self._made_of
        # The very record and vocabulary (comparing a record's rows would cost a build).
        same = bool(kept) and kept[0] is made_of[0] and kept[1] is made_of[1]
        if full is None or not same or kept[2:] != made_of[2:] or len(full.merges) < build.k:
            # Every merge recorded now: the steps the replay moves on to are cut from it too.
            rows = build.record[: len(build.record)]
            vocab = dict(build.base)
            vocab.update((s.new_id, s.left + s.right) for s in rows)
            merges = [(s.left, s.right) for s in rows]
            full = Tokenizer(vocab, merges, list(build.specials), build.pattern)
            self._full, self._made_of, self._ids = full, made_of, None
        return full
