"""A text's spans at an earlier step, from its spans at a later one, by splitting tokens.

What it does: when every token a tokenizer's merges make is made by exactly one merge (plain
BPE steps, no two merges with the same result), the encoding of a pre-token after the first
``k`` merges is its encoding after more merges with every token made by merge ``k`` or later
split into the two tokens that merge joined, again and again until none is left: merges only
ever join neighbours, so a token of the later encoding that existed at step ``k`` is still
there, and one made after ``k`` is the join of the two tokens its merge joined. So
:func:`split_back` turns the spans of a text at any step (the whole tokenizer's, computed
once) into its spans at any earlier step in a few vectorised passes (one per level of the
merge trees it splits), however far back: no encode, no truncated tokenizer's tables.
:class:`MergeTree` holds, per token id, the merge that made it and the two tokens it joined.
What it leaves out: moving spans forward (``span_steps``), threads (the app's
``gui/jobs/spans.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..encode.tokenizer import Tokenizer
from .span_steps import MergeIds
from .spans import SpanArrays

_NONE = -1  # the "rank" of a token no merge makes: never split


@dataclass(frozen=True)
class MergeTree:
    """For each token id: ``rank`` of the merge that made it (``_NONE`` for bytes and special
    tokens), and the ``left`` and ``right`` tokens that merge joined."""

    rank: np.ndarray
    left: np.ndarray
    right: np.ndarray

    @classmethod
    def of(cls, merges: MergeIds) -> MergeTree | None:
        """The tree of ``merges``; None when two merges make the same token (its parts in an
        encoding could then be either merge's)."""
        new = merges.new.astype(np.int64)
        if len(np.unique(new)) != len(new):
            return None
        size = int(new.max()) + 1 if len(new) else 0
        rank = np.full(size, _NONE, dtype=np.int64)
        left = np.zeros(size, dtype=np.int32)
        right = np.zeros(size, dtype=np.int32)
        rank[new] = np.arange(len(new))
        left[new], right[new] = merges.left, merges.right
        return cls(rank, left, right)

    def ranks(self, ids: np.ndarray) -> np.ndarray:
        """The rank of the merge that made each of ``ids`` (``_NONE`` where none did)."""
        out = np.full(len(ids), _NONE, dtype=np.int64)
        inside = ids < len(self.rank)
        out[inside] = self.rank[ids[inside]]
        return out


def split_ids(ids: np.ndarray, tree: MergeTree, k: int) -> np.ndarray:
    """``ids`` with every token made by merge ``k`` or later split into its two parts, until
    none is left."""
    ids = ids.astype(np.int32)
    while True:
        split = tree.ranks(ids) >= k
        count = int(np.count_nonzero(split))
        if not count:
            return ids
        width = split.astype(np.int64) + 1
        first = np.cumsum(width) - width  # where each token's first part goes
        out = np.repeat(ids, width)
        parents = ids[split]
        out[first[split]] = tree.left[parents]
        out[first[split] + 1] = tree.right[parents]
        ids = out


def split_back(
    spans: SpanArrays, tree: MergeTree, k: int, tokenizer: Tokenizer, sizes: np.ndarray
) -> SpanArrays:
    """The spans of the same text at step ``k`` (``spans`` are those of a later step; every
    token of theirs made by a merge ``>= k`` is split), with ``tokenizer`` (the one with
    ``k`` merges) as theirs. ``sizes[i]`` is the byte length of token ``i``; the text must be
    valid UTF-8 (its tokens' bytes are then the text's, in order)."""
    ids = split_ids(spans.ids, tree, k)
    data = np.frombuffer(spans.text.encode("utf-8"), dtype=np.uint8)
    lead = (data & 0xC0) != 0x80  # the bytes that begin a character
    char_of_byte = np.cumsum(lead) - 1
    ends_b = np.cumsum(sizes[ids])
    starts_b = ends_b - sizes[ids]
    if len(ids) and int(ends_b[-1]) != len(data):
        raise ValueError("split_back: the tokens' bytes are not the text's")
    boundary = np.append(lead, True)  # a token may end at the text's end
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

    @classmethod
    def of(
        cls, tree: MergeTree, whole: Tokenizer, top: SpanArrays, steps: int
    ) -> SpanSplitter | None:
        """A splitter over ``top``, the spans of a text under ``whole`` (``steps`` merges,
        whose tree is ``tree``); None for a text that is not valid UTF-8 (its spans are
        mapped back from a repaired text)."""
        try:
            top.text.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return cls(top, tree, token_sizes(whole), steps)

    def at(self, k: int, tokenizer: Tokenizer) -> SpanArrays:
        """The spans at step ``k``, with ``tokenizer`` (the one with ``k`` merges) as theirs."""
        if not 0 <= k <= self.steps:
            raise ValueError(f"SpanSplitter.at: need 0 <= k = {k} <= {self.steps}")
        return split_back(self.top, self.tree, k, tokenizer, self.sizes)
