"""A text's spans moved forward by a few merges, without encoding the text again.

What it does: BPE with the first ``k1`` merges equals BPE with the first ``k0`` followed by
merges ``k0..k1-1``, each applied everywhere, left to right, inside each pre-token (the
tokenizer's rank-based merging and training's merge-by-merge one agree). So the spans of a text
at step ``k1`` follow from its spans at ``k0`` (``SpanArrays``) by replacing adjacent ids
``(left, right)`` of merge ``r`` with its token, one merge after another, never across a
pre-token's edge: :func:`step_forward`. A replay or a drag moves by a few dozen merges a frame,
which costs a few vectorised passes over the ids instead of a truncated tokenizer's fresh
encode. :class:`MergeIds` holds a tokenizer's merges as ids; :func:`pretoken_starts` where the
text's pre-tokens (and special tokens) begin. :class:`SpanLadder` keeps a text's spans at every
``every``-th step as they are passed ("rungs"), so that any step, backward too, is reached by
moving forward at most ``every`` merges from a rung once that rung is known.
What it leaves out: threads (the app's ``gui/jobs/spans.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..encode.tokenizer import Tokenizer
from ..pretokenization.pretokenizer import pretokenizer
from .spans import SpanArrays


@dataclass(frozen=True)
class MergeIds:
    """Merge ``r`` of a tokenizer as ids: ``left[r] + right[r] -> new[r]``."""

    left: np.ndarray
    right: np.ndarray
    new: np.ndarray

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> MergeIds | None:
        """The merges of ``tokenizer`` as ids; None when they are not plain BPE steps (a merge
        repeating an earlier pair, or a token the vocabulary does not hold), which only a
        fresh encode handles."""
        ids = {token: i for i, token in tokenizer.vocab.items()}
        seen: set[tuple[bytes, bytes]] = set()
        left, right, new = [], [], []
        for a, b in tokenizer.merges:
            if (a, b) in seen or a not in ids or b not in ids or a + b not in ids:
                return None
            seen.add((a, b))
            left.append(ids[a])
            right.append(ids[b])
            new.append(ids[a + b])
        return cls(
            np.array(left, dtype=np.int32),
            np.array(right, dtype=np.int32),
            np.array(new, dtype=np.int32),
        )


def pretoken_starts(tokenizer: Tokenizer, text: str) -> np.ndarray | None:
    """The sorted character offsets where a pre-token or a special token of ``text`` begins
    (and where each special token ends); None for a text with lone surrogates, whose spans
    are mapped back from a repaired text."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    compiled = pretokenizer(tokenizer.pattern).compiled
    starts: list[int] = []
    for a, b, special in tokenizer.specials.segments(text):
        starts.extend(m.start() for m in compiled.finditer(text, a, b))
        if special is not None:
            starts += [b, b + len(special)]
    return np.array(starts, dtype=np.int64)


def step_forward(
    spans: SpanArrays,
    merges: MergeIds,
    k0: int,
    k1: int,
    tokenizer: Tokenizer,
    starts_at: np.ndarray,
) -> SpanArrays:
    """The spans of the same text after merges ``k0..k1-1`` more (``spans`` are those with the
    first ``k0``), with ``tokenizer`` (the one with ``k1`` merges) as theirs. ``starts_at`` is
    :func:`pretoken_starts` of the text."""
    if not 0 <= k0 <= k1 <= len(merges.left):
        raise ValueError(f"step_forward: need 0 <= k0 = {k0} <= k1 = {k1} <= {len(merges.left)}")
    ids = spans.ids.astype(np.int32)
    starts, ends = spans.starts.astype(np.int32), spans.ends.astype(np.int32)
    # A token opens a pre-token where one begins, unless it shares its first character with
    # the token before it (a character whose bytes two tokens split).
    overlap = np.zeros(len(ids), dtype=bool)
    overlap[1:] = ends[:-1] > starts[1:]
    opens = np.isin(starts, starts_at) & ~overlap
    for r in range(k0, k1):
        a, b = merges.left[r], merges.right[r]
        at = np.flatnonzero((ids[:-1] == a) & (ids[1:] == b) & ~opens[1:])
        if not len(at):
            continue
        if a == b and len(at) > 1:
            at = _left_to_right(at)
        ids[at] = merges.new[r]
        ends[at] = ends[at + 1]
        keep = np.ones(len(ids), dtype=bool)
        keep[at + 1] = False
        ids, starts, ends, opens = ids[keep], starts[keep], ends[keep], opens[keep]
    partial = np.zeros(len(ids), dtype=bool)
    split = ends[:-1] > starts[1:]  # a character shared by two neighbours: both are partial
    partial[:-1] |= split
    partial[1:] |= split
    return dataclasses.replace(
        spans, ids=ids, starts=starts, ends=ends, partial=partial, tokenizer=tokenizer
    )


class SpanLadder:
    """The spans of one text under the first merges of one tokenizer, at any step: from the
    highest step known at or below it (a rung, or spans the caller holds), moved forward.
    A step farther than ``reach`` merges from everything known is encoded afresh at the rung
    below it (``fresh(step)``), then moved forward: the rungs fill in as steps are visited.
    ``truncated(k)`` gives the tokenizer the spans at step ``k`` are handed out with; the
    rungs keep none of their own (a tokenizer that has encoded holds its tables). Rungs are
    kept while they hold fewer than ``keep_tokens`` tokens in all (a long text keeps few)."""

    def __init__(
        self,
        merges: MergeIds,
        starts_at: np.ndarray,
        fresh: Callable[[int], SpanArrays | None],
        truncated: Callable[[int], Tokenizer],
        *,
        every: int,
        reach: int,
        keep_tokens: int,
    ) -> None:
        if not 0 < every <= reach:
            raise ValueError(f"SpanLadder: need 0 < every = {every} <= reach = {reach}")
        self.merges, self.starts_at = merges, starts_at
        self._fresh, self._truncated = fresh, truncated
        self.every, self.reach = every, reach
        self.rungs: dict[int, SpanArrays] = {}
        self._room = keep_tokens

    def _keep(self, step: int, spans: SpanArrays) -> None:
        if step not in self.rungs and len(spans.ids) <= self._room:
            self.rungs[step] = spans
            self._room -= len(spans.ids)

    def at(self, k: int, held: tuple[int, SpanArrays] | None = None) -> SpanArrays | None:
        """The spans at step ``k`` (None when ``fresh`` gave up), starting from the spans
        ``held`` at a step if they are the nearest known below ``k``."""
        below = [r for r in self.rungs if r <= k]
        base = (max(below), self.rungs[max(below)]) if below else None
        if held is not None and held[0] <= k and (base is None or held[0] > base[0]):
            base = held
        if base is None or k - base[0] > self.reach:
            rung = k - k % self.every
            spans = self._fresh(rung)
            if spans is None:
                return None
            base = (rung, spans)
        # Rungs are kept with the whole tokenizer: a truncation that encoded holds its tables.
        whole = self._truncated(len(self.merges.left))
        step, spans = base
        if step % self.every == 0:
            self._keep(step, dataclasses.replace(spans, tokenizer=whole))
        while step < k:  # rung by rung, keeping each rung passed
            stop = min(k, step - step % self.every + self.every)
            spans = step_forward(spans, self.merges, step, stop, whole, self.starts_at)
            step = stop
            if step % self.every == 0:
                self._keep(step, spans)
        return dataclasses.replace(spans, tokenizer=self._truncated(k))


def _left_to_right(at: np.ndarray) -> np.ndarray:
    """The places a pair of equal ids merges when places overlap ("a a a" merges once, on
    the left): in each run of consecutive places, every other one from the first."""
    # subtle: a place right after a kept place is taken by it; one after a dropped place is
    # free again. In a run of consecutive places that is every other one.
    run_start = np.ones(len(at), dtype=bool)
    run_start[1:] = at[1:] != at[:-1] + 1
    first = np.maximum.accumulate(np.where(run_start, np.arange(len(at)), 0))
    return at[(np.arange(len(at)) - first) % 2 == 0]
