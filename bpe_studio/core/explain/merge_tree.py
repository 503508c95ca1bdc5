"""How each token of a tokenizer is made, and what it goes on to make: its merge tree.

What it does: :class:`MergeTree` holds, for every token id, the first merge that makes it and
the two tokens that merge joins, in arrays built once per tokenizer (:meth:`MergeTree.of`).
It is the one merge tree of the package: :func:`merge_tree` unfolds one token from it into
:class:`MergeNode` objects (why a token exists, drawn by the app's inspector), and the editor
splits a text's tokens back to an earlier step with :meth:`MergeTree.split`
(``spans_at_step``). :func:`merges_using` goes the other way: the merges that take a token as
a part. Everything is read from the tokenizer's merger, so it cannot disagree with its
encoder. The merge internals keep their own tables for encoding (``merging``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple
from weakref import WeakKeyDictionary

import numpy as np

from ..encode.interface import known_id
from ..encode.tokenizer import Tokenizer
from .byte_level_only import require_byte_level

NO_MERGE = -1  # the rank of a token no merge makes (a byte or special token): never split


@dataclass(frozen=True, eq=False)
class MergeTree:
    """How every token of one tokenizer is made, indexed by id: ``rank[t]`` is the rank of
    the first merge that makes token ``t`` (``NO_MERGE`` for a byte or special token, or a
    vocabulary entry no merge makes), ``left[t]`` and ``right[t]`` the two tokens that merge
    joins. ``one_way``: no token is made by two merges, so a token's parts in any encoding
    are its tree's. ``monotone``: every merge ranks after every merge that makes one of its
    parts, as in any trained list (a file's may not be: Llama 3's ``tokenizer.json`` lists
    merges whose parts later merges make). Moving a text's tokens between steps merge by
    merge, or splitting them back, gives what encoding with the first ``k`` merges gives
    only when both hold (``spans_at_step``)."""

    rank: np.ndarray
    left: np.ndarray
    right: np.ndarray
    one_way: bool
    monotone: bool

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> MergeTree:
        """The merge tree of ``tokenizer`` (built on first use, kept as long as it is). A
        merge that repeats an earlier pair is left out, as the encoder never applies it."""
        tree = _TREES.get(tokenizer)
        if tree is None:
            tree = _TREES[tokenizer] = cls._build(tokenizer)
        return tree

    @classmethod
    def _build(cls, tokenizer: Tokenizer) -> MergeTree:
        merges = np.array(list(tokenizer.merger.merges()), dtype=np.int64).reshape(-1, 4)
        rank, left, right, made = merges.T
        size = int(made.max()) + 1 if len(made) else 0
        ranks = np.full(size, NO_MERGE, dtype=np.int64)
        lefts = np.zeros(size, dtype=np.int32)
        rights = np.zeros(size, dtype=np.int32)
        # The merges come in rank order, so each id's first occurrence is the lowest rank
        # that makes it (as ``Tokenizer.merge_rank``).
        ids, first = np.unique(made, return_index=True)
        ranks[ids], lefts[ids], rights[ids] = rank[first], left[first], right[first]
        special = np.fromiter(tokenizer.merger.special_ids, dtype=np.int64)
        ranks[special[special < size]] = NO_MERGE
        # The last merge that makes each id: a part made again after the merge using it
        # breaks the order as much as one made only after it.
        last = np.full(size, NO_MERGE, dtype=np.int64)
        np.maximum.at(last, made, rank)
        made_last = np.concatenate([last, np.full(1, NO_MERGE, dtype=np.int64)])
        parts = np.minimum(np.concatenate([left, right]), size)  # size: an id no merge makes
        monotone = bool(np.all(made_last[parts] < np.concatenate([rank, rank])))
        return cls(ranks, lefts, rights, len(ids) == len(made), monotone)

    def ranks(self, ids: np.ndarray) -> np.ndarray:
        """The rank of the merge that made each of ``ids`` (``NO_MERGE`` where none did)."""
        out = np.full(len(ids), NO_MERGE, dtype=np.int64)
        inside = ids < len(self.rank)
        out[inside] = self.rank[ids[inside]]
        return out

    def parts(self, token_id: int) -> tuple[int, int] | None:
        """The two tokens the first merge making ``token_id`` joins; None if none makes it."""
        if not 0 <= token_id < len(self.rank) or self.rank[token_id] == NO_MERGE:
            return None
        return int(self.left[token_id]), int(self.right[token_id])

    def split(self, ids: np.ndarray, k: int) -> np.ndarray:
        """``ids`` with every token made by merge ``k`` or later split into its two parts,
        until none is left: an encoding after more merges taken back to the first ``k``
        (when ``one_way``; see ``spans_at_step``)."""
        ids = ids.astype(np.int32)
        where = np.flatnonzero(self.ranks(ids) >= k)
        if not len(where):
            return ids
        # subtle: only the tokens to split are taken apart, level by level, then put back in
        # place once: a step near the end splits a few of a long text's tokens, and each
        # level over the whole text cost as much as all of them.
        parts, owner = ids[where], np.arange(len(where))
        while True:
            split = self.ranks(parts) >= k
            if not np.any(split):
                break
            width = split.astype(np.int64) + 1
            first = np.cumsum(width) - width  # where each token's first part goes
            out = np.repeat(parts, width)
            parents = parts[split]
            out[first[split]] = self.left[parents]
            out[first[split] + 1] = self.right[parents]
            parts, owner = out, np.repeat(owner, width)
        # Each token split becomes its parts (in order: ``owner`` never decreases).
        counts = np.bincount(owner, minlength=len(where))
        width = np.ones(len(ids), dtype=np.int64)
        width[where] = counts
        first = np.cumsum(width) - width
        result = np.repeat(ids, width)
        own_first = np.cumsum(counts) - counts
        result[first[where][owner] + np.arange(len(parts)) - own_first[owner]] = parts
        return result


# Weak keys: a tree lives as long as its tokenizer.
_TREES: WeakKeyDictionary[Tokenizer, MergeTree] = WeakKeyDictionary()


@dataclass(frozen=True, slots=True)
class MergeNode:
    """One token of a merge tree unfolded (:func:`merge_tree`): its id, bytes, and the rank of
    the merge that made it with the two tokens it was made of; a leaf (a byte or special
    token, or a vocabulary entry no merge makes) has ``rank``, ``left`` and ``right`` None."""

    id: int
    token: bytes
    rank: int | None
    left: MergeNode | None
    right: MergeNode | None


class MergeUse(NamedTuple):
    """A merge that takes some token as a part: its rank, its left and right ids and the id it
    makes."""

    rank: int
    left: int
    right: int
    new_id: int


def merge_tree(tokenizer: Tokenizer, token_id: int) -> MergeNode:
    """The merges that built ``token_id``, as a tree whose leaves are byte (or special)
    tokens. Subtrees that occur twice are the same object. Unknown id: ``ValueError``.

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> vocab.update({256: b"ab", 257: b"abc"})
    >>> tok = Tokenizer(vocab, [(b"a", b"b"), (b"ab", b"c")])
    >>> tree = merge_tree(tok, 257)
    >>> tree.rank, tree.left.token, tree.left.rank, tree.right.token, tree.right.rank
    (1, b'ab', 0, b'c', None)
    """
    require_byte_level(tokenizer, "The merge tree")
    vocab = tokenizer.vocab
    token_id = known_id(vocab, token_id, "merge_tree")
    tree = MergeTree.of(tokenizer)
    done: dict[int, MergeNode] = {}
    # Iterative post-order walk: a token built as a chain of thousands of merges (a long run
    # of one byte) is deeper than Python's recursion limit.
    stack = [token_id]
    while stack:
        tid = stack[-1]
        if tid in done:
            stack.pop()
            continue
        pair = tree.parts(tid)
        if pair is None:
            done[tid] = MergeNode(tid, vocab[tid], None, None, None)
            stack.pop()
            continue
        todo = [p for p in pair if p not in done]
        if todo:
            stack.extend(todo)
            continue
        rank = int(tree.rank[tid])
        done[tid] = MergeNode(tid, vocab[tid], rank, done[pair[0]], done[pair[1]])
        stack.pop()
    return done[token_id]


# Per tokenizer: token id -> the merges that take it as a part, in rank order. Weak keys, as
# for _TREES.
_USES: WeakKeyDictionary[Tokenizer, dict[int, list[MergeUse]]] = WeakKeyDictionary()


def _uses(tokenizer: Tokenizer) -> dict[int, list[MergeUse]]:
    uses = _USES.get(tokenizer)
    if uses is None:
        uses = {}
        for rank, a, b, made in tokenizer.merger.merges():  # in rank order
            use = MergeUse(rank, a, b, made)
            uses.setdefault(a, []).append(use)
            if b != a:
                uses.setdefault(b, []).append(use)
        _USES[tokenizer] = uses
    return uses


def merges_using(tokenizer: Tokenizer, token_id: int) -> list[MergeUse]:
    """The merges that take ``token_id`` as their left or right part (or both), by rank: what
    the token grew into. A merge that repeats an earlier pair is left out, as the encoder
    never applies it. Unknown id: ``ValueError``.

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> vocab.update({256: b"ab", 257: b"abc", 258: b"cab"})
    >>> tok = Tokenizer(vocab, [(b"a", b"b"), (b"ab", b"c"), (b"c", b"ab")])
    >>> [tuple(use) for use in merges_using(tok, 256)]
    [(1, 256, 99, 257), (2, 99, 256, 258)]
    """
    require_byte_level(tokenizer, "What a token grew into")
    token_id = known_id(tokenizer.vocab, token_id, "merges_using")
    return list(_uses(tokenizer).get(token_id, []))
