"""A text's spans at any step of a tokenizer's merges, from its spans at another step, without
encoding the text again: the editor's time travel.

What it does: BPE with the first ``k1`` merges equals BPE with the first ``k0`` followed by
merges ``k0..k1-1``, each applied everywhere, left to right, inside each pre-token (the
tokenizer's rank-based merging and training's merge-by-merge one agree). Forward,
:func:`step_forward` replaces adjacent ids ``(left, right)`` of merge ``r`` with its token, one
merge after another, never across a pre-token's edge (:func:`pretoken_starts`); :class:`MergeIds`
holds the merges as ids by rank. :class:`SpanLadder` keeps a text's spans at every ``every``-th
step as they are passed, so that any step, backward too, is at most ``every`` merges forward
from a rung once that rung is known. Both ways need merges in which each ranks after those
that make its parts (``MergeTree.monotone``, as training makes them). Back, when no token
is made by two merges (``MergeTree.one_way``): the encoding after the first ``k`` merges is
the later one with every token made by merge ``k`` or later split into the two tokens that
merge joined, again and again (merges only ever join neighbours), so :func:`split_back`
turns the spans of a text under the whole tokenizer, computed once, into its spans at any
earlier step in a few vectorised passes (:class:`SpanSplitter`). Threads are the app's
(``gui/jobs/span_service.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..encode.tokenizer import Tokenizer
from ..pretokenization.pretokenizer import matches_in, pretokenizer
from .merge_tree import MergeTree
from .span_arrays import SpanArrays


@dataclass(frozen=True)
class MergeIds:
    """Merge ``r`` of a tokenizer as ids: ``left[r] + right[r] -> new[r]``."""

    left: np.ndarray
    right: np.ndarray
    new: np.ndarray

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> MergeIds | None:
        """The merges of ``tokenizer`` as ids; None when they are not plain BPE steps (a merge
        repeating an earlier pair, a token the vocabulary does not hold, or merges that are
        not ``MergeTree.monotone``: applying merge ``r`` everywhere before merge ``r + 1``
        then misses what the encoder merges once a later merge has made a part), which only
        a fresh encode handles."""
        if not MergeTree.of(tokenizer).monotone:
            return None
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
    are mapped back from a repaired text, for a tokenizer whose ``tokenizer.json``
    pipeline changes the text before it cuts it (``HfPipeline.piece_starts``: a normalizer,
    a prefix space), and for one that looks pre-tokens up whole (``ignore_merges``: moving
    forward by merges would not make what the lookup gives). A pipeline that only cuts the
    text gives its own pieces' starts."""
    if tokenizer.merger.looks_up_whole:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    pipeline = tokenizer.hf_pipeline
    if pipeline is not None:
        specials = tokenizer.specials
        found = pipeline.piece_starts(text, specials.tokens, specials.ordinary)
        return None if found is None else np.unique(np.array(found, dtype=np.int64))
    compiled = pretokenizer(tokenizer.pattern).compiled
    starts: list[int] = []
    for a, b, special in tokenizer.specials.segments(text):
        starts.extend(s for s, _ in matches_in(compiled, text, a, b))
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


@dataclass(frozen=True, eq=False)
class TextBytes:
    """Where a text's UTF-8 bytes fall in its characters: what :func:`split_back` places
    tokens by, the same at every step (a splitter works it out once for its text)."""

    length: int  # bytes
    char_of_byte: np.ndarray  # the character each byte is part of
    boundary: np.ndarray  # each byte offset (and the end) begins a character

    @classmethod
    def of(cls, text: str) -> TextBytes:
        data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        lead = (data & 0xC0) != 0x80  # the bytes that begin a character
        # A token may end at the text's end.
        return cls(len(data), np.cumsum(lead) - 1, np.append(lead, True))


def split_back(
    spans: SpanArrays,
    tree: MergeTree,
    k: int,
    tokenizer: Tokenizer,
    sizes: np.ndarray,
    text_bytes: TextBytes | None = None,
) -> SpanArrays:
    """The spans of the same text at step ``k`` (``spans`` are those of a later step; every
    token of theirs made by a merge ``>= k`` is split), with ``tokenizer`` (the one with
    ``k`` merges) as theirs. ``sizes[i]`` is the byte length of token ``i``; the text must be
    valid UTF-8 (its tokens' bytes are then the text's, in order); ``text_bytes``: its
    :class:`TextBytes`, if known."""
    ids = tree.split(spans.ids, k)
    where = text_bytes if text_bytes is not None else TextBytes.of(spans.text)
    ends_b = np.cumsum(sizes[ids])
    starts_b = ends_b - sizes[ids]
    if len(ids) and int(ends_b[-1]) != where.length:
        raise ValueError("split_back: the tokens' bytes are not the text's")
    char_of_byte, boundary = where.char_of_byte, where.boundary
    return dataclasses.replace(
        spans,
        ids=ids,
        starts=char_of_byte[starts_b].astype(np.int32),
        ends=(char_of_byte[ends_b - 1] + 1).astype(np.int32),
        partial=~(boundary[starts_b] & boundary[ends_b]),
        tokenizer=tokenizer,
    )


def token_sizes(tokenizer: Tokenizer) -> np.ndarray:
    """The byte length of each token id of ``tokenizer`` (0 for ids it lacks)."""
    vocab = tokenizer.vocab
    sizes = np.zeros(max(vocab) + 1, dtype=np.int64)
    sizes[np.fromiter(vocab.keys(), dtype=np.int64, count=len(vocab))] = np.fromiter(
        map(len, vocab.values()), dtype=np.int64, count=len(vocab)
    )
    return sizes


class SpanSplitter:
    """The spans of one text at any step of one tokenizer: its spans under the whole
    tokenizer (``top``, at step ``steps``), split back (:func:`split_back`)."""

    def __init__(self, top: SpanArrays, tree: MergeTree, sizes: np.ndarray, steps: int) -> None:
        self.top, self.tree, self.sizes, self.steps = top, tree, sizes, steps
        self.text_bytes = TextBytes.of(top.text)
        # made[r]: the tokens of ``top`` merge r's uses made, in all (each is one token
        # fewer at every step after r): the distinct tokens taken apart once, weighted by
        # how often each occurs.
        ids, uses = np.unique(top.ids, return_counts=True)
        made = np.zeros(steps + 1, dtype=np.int64)
        while len(ids):
            ranks = tree.ranks(ids)
            split = (ranks >= 0) & (ranks < steps)
            made += np.bincount(ranks[split], weights=uses[split], minlength=steps + 1).astype(
                np.int64
            )[: steps + 1]
            ids = np.concatenate([tree.left[ids[split]], tree.right[ids[split]]])
            uses = np.concatenate([uses[split], uses[split]])
        # Tokens at step k: the top's, plus one for every use of a merge k or later.
        self._more = np.cumsum(made[::-1])[::-1]

    def tokens_at(self, k: int) -> int:
        """How many tokens the text has at step ``k`` (what :meth:`at` would give, without
        giving it: the work of a split grows with it)."""
        return len(self.top.ids) + int(self._more[k]) if 0 <= k <= self.steps else 0

    @classmethod
    def of(cls, whole: Tokenizer, top: SpanArrays, steps: int) -> SpanSplitter | None:
        """A splitter over ``top``, the spans of a text under ``whole`` (``steps`` merges);
        None when a token of ``whole`` is made by two merges (its parts in an encoding could
        be either merge's), when its merges are not ``MergeTree.monotone`` (a token made
        before one of its parts is kept whole at a step that lacks the part), or when the
        tokens' bytes are not the text's UTF-8, in order: a text that is not valid UTF-8
        (its spans are mapped back from a repaired text), or a ``tokenizer.json`` that
        changes the text before splitting it (a normalizer, a prefix space, added tokens
        that strip spaces), whose tokens :func:`split_back` would place by bytes the text
        does not hold."""
        tree = MergeTree.of(whole)
        # subtle: with ignore_merges a pre-token that is a token is that token, whichever
        # merges would make it; splitting it back by the merge tree gives other tokens.
        if not (tree.one_way and tree.monotone) or whole.merger.looks_up_whole:
            return None
        try:
            data = top.text.encode("utf-8")
        except UnicodeEncodeError:
            return None
        # Only a tokenizer.json pipeline changes the text before it is cut. subtle: equal
        # lengths are not enough: NFKC turns "ﬁ" into "fi" (a byte fewer) and lowercasing
        # "İ" gives "i̇" (a byte more), which cancel out.
        if whole.hf_pipeline is not None:
            vocab = whole.vocab
            if b"".join(map(vocab.__getitem__, top.ids.tolist())) != data:
                return None
        return cls(top, tree, token_sizes(whole), steps)

    def at(self, k: int, tokenizer: Tokenizer) -> SpanArrays:
        """The spans at step ``k``, with ``tokenizer`` (the one with ``k`` merges) as theirs."""
        if not 0 <= k <= self.steps:
            raise ValueError(f"SpanSplitter.at: need 0 <= k = {k} <= {self.steps}")
        return split_back(self.top, self.tree, k, tokenizer, self.sizes, self.text_bytes)
