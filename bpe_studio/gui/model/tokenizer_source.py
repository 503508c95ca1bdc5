"""A tokenizer the views show, built on first use, with its last few truncations kept.

What it does: :class:`TokenizerSource` holds a label and either a tokenizer or how to build
one; the span thread builds it on first use and keeps the few truncations (``at(k)``: the first
``k`` merges) asked for last, so scrubbing back is cheap. The state (``RunState.shown``,
``picked``, ``selected_in``) holds these.
What it leaves out: computing spans (``jobs.span_service``) and choosing the tokenizer (the picker).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from functools import partial

from cachetools import LRUCache

from ...core import Tokenizer
from ...core.encode.foreign import AnyTokenizer, ForeignTokenizer
from ...core.explain.spans_at_step import MergeIds
from .run_steps import StepBuild

TRUNCATED_KEPT = 4  # each is about a tokenizer's rank table


class TokenizerSource:
    """A tokenizer to highlight with, built on first use (in the span thread), plus a label."""

    def __init__(
        self,
        label: str,
        *,
        tokenizer: AnyTokenizer | None = None,
        vocab: Mapping[int, bytes] | None = None,
        merges: Sequence[tuple[bytes, bytes]] = (),
        special_tokens: Sequence[str] = (),
        pattern: str = "gpt2",
        run_id: int | None = None,
    ) -> None:
        if tokenizer is None and vocab is None:
            raise ValueError("give a tokenizer, or a vocabulary to build one from")
        self.label = label
        # The run (``RunState.run_id``) this is the tokenizer of, at some step; None: not a
        # run's (a tokenizer picked instead). Two sources of one run are one tokenizer cut at
        # different steps, so a view may show one while the other is being worked out.
        self.run_id = run_id
        self._tokenizer = tokenizer
        # How to build the tokenizer on first use; None once built (or given).
        self._make: Callable[[], AnyTokenizer] | None = None
        if tokenizer is None:
            self._make = partial(
                Tokenizer, dict(vocab or {}), list(merges), list(special_tokens), pattern
            )
        # subtle: a foreign tokenizer's merges are read from tokenizers on first use (seconds
        # for a large model), and this runs on the GUI thread; it is never a run with steps.
        foreign = isinstance(tokenizer, ForeignTokenizer)
        given = 0 if foreign or tokenizer is None else len(tokenizer.merges)
        self._merge_count = given if tokenizer is not None else len(merges)
        self._lock = threading.Lock()
        self._truncated: LRUCache[int, AnyTokenizer] = LRUCache(TRUNCATED_KEPT)
        # The merges as ids (core.explain.spans_at_step.MergeIds), once asked for; None
        # inside: not plain steps.
        self._merge_ids: tuple[MergeIds | None] | None = None
        # How to get them other than ``MergeIds.of`` (a run's step, ``run_steps``), or None.
        self._merge_ids_of: Callable[[], MergeIds | None] | None = None

    @classmethod
    def deferred(
        cls,
        label: str,
        make: Callable[[], Tokenizer],
        merge_count: int,
        run_id: int | None = None,
    ) -> TokenizerSource:
        """A source whose tokenizer ``make()`` builds on first use, in the span thread, with
        ``merge_count`` merges. subtle: ``make`` runs in another thread, later: it must read
        only what cannot change meanwhile (a run's record only grows, so its first
        ``merge_count`` steps stay those of this run)."""
        source = cls(label, vocab={}, run_id=run_id)
        source._make, source._merge_count = make, merge_count
        if isinstance(make, StepBuild):  # a run's step: its merges as ids are cut too
            source._merge_ids_of = make.merge_ids
        return source

    @property
    def built(self) -> AnyTokenizer | None:
        """The tokenizer, if it was given or has been built (None: not yet)."""
        return self._tokenizer

    def same_as(self, other: TokenizerSource | None) -> bool:
        """Whether ``other`` gives the very same tokenizer (the same source, or another
        source of the same tokenizer object: a preset picked again)."""
        if other is None:
            return False
        return other is self or (self._tokenizer is not None and other.built is self._tokenizer)

    @property
    def merge_count(self) -> int:
        """Merges of the whole tokenizer (known without building it)."""
        return self._merge_count

    def get(self) -> AnyTokenizer:
        with self._lock:
            return self._get()

    def _get(self) -> AnyTokenizer:
        if self._tokenizer is None:
            # subtle: the recipe is dropped only once the tokenizer is built; a build that
            # raises keeps it, so the next use raises the same error.
            assert self._make is not None
            self._tokenizer = self._make()
            self._make = None
            self._merge_count = len(self._tokenizer.merges)
        return self._tokenizer

    def at(self, k: int | None) -> AnyTokenizer:
        """The tokenizer with its first ``k`` merges (all for None or ``k`` past the end),
        from a cache of the last ``TRUNCATED_KEPT`` asked for."""
        with self._lock:
            return self._at(k)

    def _at(self, k: int | None) -> AnyTokenizer:
        full = self._get()
        # A foreign tokenizer is shown whole: it has no run's steps (and see __init__).
        if k is None or isinstance(full, ForeignTokenizer) or k >= len(full.merges):
            return full
        k = max(k, 0)
        tok = self._truncated.get(k)  # a hit counts as a use
        if tok is None:
            tok = self._truncated[k] = full.truncated(k)  # the least recently used goes
        return tok

    def merge_ids(self) -> MergeIds | None:
        """The merges as ids (None: not plain BPE steps), worked out once (in the span
        thread: it builds the tokenizer)."""
        with self._lock:
            if self._merge_ids is None:
                tok = self._get()
                # A foreign tokenizer has no merges to step: its spans are always encoded.
                if isinstance(tok, ForeignTokenizer):
                    plain = None
                elif self._merge_ids_of is not None:
                    plain = self._merge_ids_of()
                else:
                    plain = MergeIds.of(tok)
                self._merge_ids = (plain,)
            return self._merge_ids[0]

    def ready_at(self, k: int | None) -> tuple[AnyTokenizer, MergeIds] | None:
        """For the GUI thread: ``at(k)`` and the merges as ids if both come at once (the
        tokenizer built, its merges as ids worked out, no other thread inside); else None."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if self._tokenizer is None or self._merge_ids is None or self._merge_ids[0] is None:
                return None
            return self._at(k), self._merge_ids[0]
        finally:
            self._lock.release()
