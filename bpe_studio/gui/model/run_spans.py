"""A text's spans under the run's tokenizer at any step: encoded once, split back per step.

What it does: :class:`RunSpans` keeps, for one text and one run's tokenizer source (the run
with every merge shown, which the views cut to the timeline's step), the text's spans under
that whole tokenizer as a ``core.explain.spans_at_step.SpanSplitter``; each step's spans are
split back from them in a few vectorised passes (:meth:`RunSpans.at`), with the step's
tokenizer (``TokenizerSource.at``: a truncation, its tables shared). :meth:`RunSpans.ready_at`
gives a step's spans only when that is that little work and nothing needs building, for the
GUI thread.
Why: Compare showing the run's tokenizer encoded its text again at every step moved to (a
paused run's replay moves it every frame): on a 1 MB text it trailed the timeline by hundreds
of merges, as the editor did before it split its spans back (``jobs.span_service``).
What it leaves out: the comparison itself and its display (``views/compare``).
"""

from __future__ import annotations

from collections.abc import Callable

from ...core import Tokenizer
from ...core.explain.merge_tree import MergeTree
from ...core.explain.span_arrays import SpanArrays, compute_spans
from ...core.explain.spans_at_step import SpanSplitter
from .tokenizer_source import TokenizerSource

# Tokens the GUI thread splits a text's spans back to by itself (those at the step asked
# for: a split's work grows with them): a 1 MB English text's late in a run, about 12 ms
# (docs/responsiveness.md). Early steps, many more tokens, are left to the page's job.
GUI_SPLIT_TOKENS = 300_000


class RunSpans:
    """The spans of the text last asked for under the run's source last asked for, at any
    step (see the module docstring). One thread computes (a page's job); the GUI thread only
    reads what was kept (one tuple, replaced whole)."""

    def __init__(self) -> None:
        # (source, text, its splitter or None: its tokens cannot be split back).
        self._kept: tuple[TokenizerSource, str, SpanSplitter | None] | None = None

    def _splitter(self, source: TokenizerSource, text: str) -> tuple[bool, SpanSplitter | None]:
        """Whether the text and source are those kept, and their splitter."""
        kept = self._kept
        # subtle: the text by identity first; an equal copy (a page's snapshot) is compared
        # in full only when it is not the very string.
        if kept is None or kept[0] is not source or not (kept[1] is text or kept[1] == text):
            return False, None
        return True, kept[2]

    def at(
        self, source: TokenizerSource, text: str, k: int | None, is_stale: Callable[[], bool]
    ) -> SpanArrays | None:
        """The spans of ``text`` under ``source`` at step ``k`` (None: every merge), split
        back from the whole tokenizer's (encoded here once per text and source); None when
        its tokens cannot be split back (then the caller encodes the step itself) or when
        ``is_stale`` says so while encoding. Call it off the GUI thread."""
        found, splitter = self._splitter(source, text)
        if not found:
            splitter = self._split(source, text, is_stale)
        if splitter is None:
            return None
        tokenizer = source.at(k)
        assert isinstance(tokenizer, Tokenizer)  # a splitter is made for byte-level BPE only
        return splitter.at(len(tokenizer.merges), tokenizer)

    def tokens_at(
        self, source: TokenizerSource, text: str, k: int | None, is_stale: Callable[[], bool]
    ) -> int | None:
        """How many tokens ``text`` has under ``source`` at step ``k`` (None: every merge),
        counted from the whole tokenizer's spans (encoded here once per text and source)
        without splitting them back (``SpanSplitter.tokens_at``); None as for :meth:`at`."""
        found, splitter = self._splitter(source, text)
        if not found:
            splitter = self._split(source, text, is_stale)
        if splitter is None:
            return None
        # (as ``TokenizerSource.at`` cuts: every merge for None or a step past the end)
        return splitter.tokens_at(splitter.steps if k is None else min(max(k, 0), splitter.steps))

    def _split(
        self, source: TokenizerSource, text: str, is_stale: Callable[[], bool]
    ) -> SpanSplitter | None:
        self._kept = None
        merges = source.merge_ids()
        whole = source.get()
        # Another kind than byte-level BPE has no merges to split back; neither do merges
        # that are not plain steps, or that make a token twice.
        if merges is None or not isinstance(whole, Tokenizer) or not MergeTree.of(whole).one_way:
            self._kept = (source, text, None)
            return None
        top = compute_spans(whole, text, is_stale)
        if top is None:
            return None  # stale: nothing to keep
        splitter = SpanSplitter.of(whole, top, len(merges.left))
        self._kept = (source, text, splitter)
        return splitter

    def ready_at(self, source: TokenizerSource, text: str, k: int | None) -> SpanArrays | None:
        """For the GUI thread: the spans at step ``k`` if the text's splitter under
        ``source`` is kept, the step's tokenizer is at hand (``TokenizerSource.ready_at``)
        and the text has at most ``GUI_SPLIT_TOKENS`` tokens at that step; else None."""
        found, splitter = self._splitter(source, text)
        if not found or splitter is None:
            return None
        ready = source.ready_at(k)
        if ready is None or not isinstance(ready[0], Tokenizer):
            return None
        tokenizer = ready[0]
        step = len(tokenizer.merges)
        if splitter.tokens_at(step) > GUI_SPLIT_TOKENS:
            return None
        return splitter.at(step, tokenizer)
