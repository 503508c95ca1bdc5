"""Token spans for the editor, computed off the GUI thread.

What it does: :class:`SpanService` runs ``core.explain.span_arrays.compute_spans`` (Qt-free:
the text piece by piece, packed into NumPy arrays) on a :class:`~.latest.LatestJob` after a
debounce (latest request wins; a superseded job stops between pieces). Edits wait a little
longer than timeline moves, which must re-colour at once. A timeline move does not stop the
computation under way (it is throttled, ``LatestJob.submit(throttle=True)``): while the step
keeps moving, each result shown is the newest step that could be finished. A step move (the
text unchanged) is served from the text's spans under the whole tokenizer, split back to the
step (``core.explain.spans_at_step.SpanSplitter``: a few vectorised passes, any step,
backward too): on the GUI thread itself once those spans are known
(:meth:`SpanService.advance`), so the editor shows the timeline's step in the frame that moves
it. Where tokens cannot be split back (two merges make one token) or the text is too long for
the GUI thread, a step a little ahead of the spans shown is reached by applying the merges in
between to them (``core.explain.spans_at_step.step_forward``), on the GUI thread when that is
little work, otherwise in the thread, from the nearest spans known below the step
(``core.explain.spans_at_step.SpanLadder``'s rungs, kept for the text shown). The tokenizer
comes from a :class:`~.model.tokenizer_source.TokenizerSource`, built lazily in that same
thread. Painting is the editor's (``views/token_editor``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from ...core import Tokenizer
from ...core.encode.foreign import ForeignTokenizer
from ...core.explain.merge_tree import MergeTree
from ...core.explain.span_arrays import SpanArrays, compute_spans
from ...core.explain.spans_at_step import SpanLadder, SpanSplitter, pretoken_starts, step_forward
from ..model.tokenizer_source import TokenizerSource
from ..responsiveness.debounce import single_shot
from .latest import LatestJob

EDIT_DEBOUNCE_MS = 120  # typing: wait for a pause
STEP_DEBOUNCE_MS = 0  # timeline moves: start at the next turn of the event loop
# At most this many merges ahead, the spans shown are moved forward rather than the text
# encoded again (each merge is a pass over the text's ids; a fresh encode costs as much as a
# few hundred of them on 10,000 characters).
FORWARD_MERGES = 512
# The spans of the text shown are kept at every this many steps, so a random step costs at
# most this many merges of moving forward once the rung below it was visited.
RUNG_STEPS = 256
RUNG_TOKENS = 2_000_000  # tokens kept in all the rungs of a text (their memory's bound)
# Tokens times merges the GUI thread may move the spans forward by itself (each merge is one
# vectorised pass over the tokens): a replay's or a drag's frame for a screenful of text.
GUI_FORWARD_WORK = 1_000_000
# Characters tokenized between two checks for a newer request: during a drag, a superseded
# job stops within one piece instead of finishing the whole text. Also the longest the job
# keeps the GIL in one call: core.explain.span_arrays packs each piece's spans with one NumPy
# call that never lets go of it (docs/responsiveness.md).
SPAN_PIECE_CHARS = 1024
# Tokens of the whole tokenizer's spans the GUI thread may split back to any step by itself
# (a few vectorised passes over them per level of the merge trees split).
GUI_SPLIT_TOKENS = 100_000


@dataclass(frozen=True)
class SpanResult:
    """A result of the span service, with the key of what it was computed for: the spans of
    ``source`` at ``step`` (its merges used; ``asked``: the step requested, None for all) of
    the text ``spans.text``; the pre-token starts of that text once a forward step has needed
    them, and the text's splitter (``core.explain.spans_at_step.SpanSplitter``: any step from
    the whole tokenizer's spans) where it has one."""

    source: TokenizerSource
    step: int
    spans: SpanArrays
    starts: np.ndarray | None
    splitter: SpanSplitter | None = None
    asked: int | None = None


class SpanService(QObject):
    """Debounced, cancellable span computation on a :class:`~.latest.LatestJob`; ``ready`` fires
    on the GUI thread with the latest result only."""

    ready = Signal(object)  # SpanResult: the spans and the key they were computed for
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None, debounce_ms: int = EDIT_DEBOUNCE_MS) -> None:
        super().__init__(parent)
        self._job = LatestJob("bpe-spans", self)
        self._job.done.connect(self._on_done)
        self._job.failed.connect(self.failed)
        # The last result shown: its source and step, its spans, its text's pre-token starts.
        self._shown: SpanResult | None = None
        # Read and written by the span thread only: the rungs of the text shown.
        self._ladder: tuple[TokenizerSource, str, SpanLadder] | None = None
        # Read and written by the span thread only: the splitter of the text shown.
        self._splitter: tuple[TokenizerSource, str, SpanSplitter | None] | None = None
        self._starts: tuple[TokenizerSource, str, np.ndarray | None] | None = None
        self._is_stale: Callable[[], bool] = lambda: False  # the job under way's
        self._timer = single_shot(self, debounce_ms, self._submit)
        self._debounce_ms = debounce_ms
        self._pending: tuple[TokenizerSource, int | None, Callable[[], str]] | None = None
        self._throttle = False  # the pending request only moves the step

    def active_threads(self) -> int:
        return self._job.active_threads()

    def request(
        self,
        source: TokenizerSource | None,
        text: Callable[[], str],
        *,
        step: int | None = None,
        debounce_ms: int | None = None,
        throttle: bool = False,
    ) -> None:
        """Mark the current result stale and compute anew with ``source.at(step)`` after the
        debounce (the service's own unless ``debounce_ms`` is given). ``text`` is read when the
        timer fires, so a burst of edits costs one copy of the document. ``throttle``: the
        text is unchanged (only the step or tokenizer moved), so a computation under way is
        finished and shown first."""
        pending_edit = self._pending is not None and self._timer.isActive() and not self._throttle
        if source is None or not throttle:
            self._job.cancel()
        if source is None:
            self._pending = None
            self._timer.stop()
            return
        wait = self._debounce_ms if debounce_ms is None else debounce_ms
        if self._pending is not None and self._timer.isActive():
            # subtle: a pending edit's longer wait is not cut short by a step move.
            wait = max(wait, self._timer.remainingTime())
        self._pending = (source, step, text)
        self._throttle = throttle and not pending_edit
        self._timer.start(wait)

    @property
    def busy(self) -> bool:
        return self._pending is not None or self._job.busy

    @Slot()
    def _submit(self) -> None:
        if self._pending is None:
            return
        (source, step, text), self._pending = self._pending, None
        snapshot = text()
        shown = self._shown

        def job(is_stale: Callable[[], bool]) -> SpanResult | None:
            tokenizer = source.at(step)
            if is_stale():
                return None
            k = len(tokenizer.merges)
            self._is_stale = is_stale  # the ladder's fresh encodes stop when this job is stale
            splitter = self._splitter_for(source, snapshot)
            if is_stale():
                return None
            if splitter is not None and isinstance(tokenizer, Tokenizer):
                split = splitter.at(k, tokenizer)
                starts = self._starts_for(source, snapshot)
                return SpanResult(source, k, split, starts, splitter, step)
            ladder = self._ladder_for(source, snapshot)
            if ladder is None:
                spans = compute_spans(tokenizer, snapshot, is_stale, piece=SPAN_PIECE_CHARS)
                if spans is None:
                    return None
                return SpanResult(source, k, spans, None, None, step)
            held = None
            if shown is not None and shown.source is source and shown.spans.text == snapshot:
                held = (shown.step, shown.spans)
            spans = ladder.at(k, held)
            return (
                None
                if spans is None
                else SpanResult(source, k, spans, ladder.starts_at, None, step)
            )

        self._job.submit(job, throttle=self._throttle)

    def _splitter_for(self, source: TokenizerSource, text: str) -> SpanSplitter | None:
        """The splitter of ``text`` under ``source`` (in the span thread; one encode with
        the whole tokenizer, kept while the text and source stay), or None when its tokens
        cannot be split back (then the ladder's rungs serve) or the job became stale."""
        kept = self._splitter
        if kept is not None and kept[0] is source and kept[1] == text:
            return kept[2]
        self._splitter = None
        merges = source.merge_ids()
        whole = source.get()
        # Another kind than byte-level BPE has no merges to split back; neither do merges
        # that are not plain steps, or that make a token twice.
        if merges is None or not isinstance(whole, Tokenizer) or not MergeTree.of(whole).one_way:
            self._splitter = (source, text, None)
            return None
        top = compute_spans(whole, text, self._is_stale, piece=SPAN_PIECE_CHARS)
        if top is None:
            return None  # stale: nothing to keep
        splitter = SpanSplitter.of(whole, top, len(merges.left))
        self._splitter = (source, text, splitter)
        return splitter

    def _starts_for(self, source: TokenizerSource, text: str) -> np.ndarray | None:
        """The pre-token starts of ``text`` (in the span thread; kept with its splitter), for
        the GUI thread's forward moves when the text is too long to split back there."""
        kept = self._starts
        if kept is None or kept[0] is not source or kept[1] != text:
            whole = source.get()
            if not isinstance(whole, Tokenizer):
                return None
            kept = self._starts = (source, text, pretoken_starts(whole, text))
        return kept[2]

    def _ladder_for(self, source: TokenizerSource, text: str) -> SpanLadder | None:
        """The rungs of ``text`` under ``source`` (in the span thread), new for another text
        or source; None when its spans cannot be moved forward (merges that are not plain
        steps, a text with lone surrogates)."""
        kept = self._ladder
        if kept is not None and kept[0] is source and kept[1] == text:
            return kept[2]
        self._ladder = None
        merges = source.merge_ids()
        tokenizer = source.get()
        if merges is None or isinstance(tokenizer, ForeignTokenizer):
            return None
        starts = pretoken_starts(tokenizer, text)
        if starts is None:
            return None

        def fresh(k: int) -> SpanArrays | None:
            tok = source.at(k)
            spans = compute_spans(tok, text, self._is_stale, piece=SPAN_PIECE_CHARS)
            return spans

        def at(k: int) -> Tokenizer:
            tok = source.at(k)
            assert isinstance(tok, Tokenizer)  # a source with merges: byte-level BPE
            return tok

        ladder = SpanLadder(
            merges,
            starts,
            fresh,
            at,
            every=RUNG_STEPS,
            reach=FORWARD_MERGES,
            keep_tokens=RUNG_TOKENS,
        )
        self._ladder = (source, text, ladder)
        return ladder

    def advance(self, source: TokenizerSource, step: int | None, painted: SpanArrays) -> bool:
        """Show ``source`` at ``step`` at once, on the GUI thread, when that is little work
        and the tokenizer is at hand: any step, by splitting the whole tokenizer's spans of
        the text back (``GUI_SPLIT_TOKENS``), else a step ahead, by moving the spans shown
        (``painted``, still those of the text) forward (``GUI_FORWARD_WORK``). The result is
        emitted as ``ready`` before this returns, and work pending or under way is dropped.
        False: the caller requests the step as usual."""
        shown = self._shown
        if shown is None or shown.source is not source or shown.spans is not painted:
            return False
        ready = source.ready_at(step)
        if ready is None:
            return False
        tokenizer, merges = ready
        if isinstance(tokenizer, ForeignTokenizer):
            return False
        k = len(tokenizer.merges)
        splitter = shown.splitter
        if splitter is not None and len(splitter.top.ids) <= GUI_SPLIT_TOKENS:
            if k == shown.step:
                return False
            result = SpanResult(source, k, splitter.at(k, tokenizer), None, splitter, step)
        else:
            if shown.starts is None:
                return False
            if not 0 < k - shown.step or len(painted.ids) * (k - shown.step) > GUI_FORWARD_WORK:
                return False
            spans = step_forward(painted, merges, shown.step, k, tokenizer, shown.starts)
            result = SpanResult(source, k, spans, shown.starts, None, step)
        self._job.cancel()
        self._pending = None
        self._timer.stop()
        self._on_done(result)
        return True

    @Slot(object)
    def _on_done(self, result: SpanResult) -> None:
        self._shown = result
        self.ready.emit(result)

    def shutdown(self) -> None:
        """Abandon pending work and wait for the pool thread to finish its current piece."""
        self._pending = None
        self._timer.stop()
        self._job.shutdown()
