"""What the explorer asks of a tokenizer: why a token exists, what it grew into, how one
pre-token is encoded, and which tokens encoding can never produce.

What it does: :func:`merge_tree` unfolds a token into the merges that built it;
:func:`merges_using` lists the merges that take a token as a part; :func:`pretokens` cuts a text
into the pieces the encoder works on one at a time; :func:`encode_steps` replays the rank-based
encoder on one pre-token, step by step, with every candidate pair it looked at;
:func:`unreachable_tokens` lists the tokens that encoding their own bytes does not give back.
All of them read the tokenizer's own tables (its merger's merges and pair ranks, its
pre-tokenizer and special tokens), so they cannot disagree with its encoder.
What it leaves out: the compression curve (``compression``), truncating a tokenizer to its first
merges (``Tokenizer.truncated``), and anything drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from numbers import Integral
from typing import NamedTuple
from weakref import WeakKeyDictionary

from ..encode.tokenizer import Tokenizer
from ..train.vocab import missing_id


@dataclass(frozen=True, slots=True)
class MergeNode:
    """One token of a merge tree: its id, bytes, and the rank of the merge that made it with
    the two tokens it was made of; a leaf (a byte or special token, or a vocabulary entry no
    merge makes) has ``rank``, ``left`` and ``right`` None."""

    id: int
    token: bytes
    rank: int | None
    left: MergeNode | None
    right: MergeNode | None


@dataclass(frozen=True, slots=True)
class EncodeStep:
    """One step of encoding a pre-token: the token ids before it, every adjacent pair that has
    a merge as ``(position, rank)`` (position ``i`` is the pair ``tokens[i], tokens[i + 1]``),
    and the position merged in this step (None on the last step, where nothing is left)."""

    tokens: tuple[int, ...]
    candidates: tuple[tuple[int, int], ...]
    chosen: int | None


class MergeUse(NamedTuple):
    """A merge that takes some token as a part: its rank, its left and right ids and the id it
    makes."""

    rank: int
    left: int
    right: int
    new_id: int


# Per tokenizer: merged id -> (left id, right id) of the merge that made it (the first one, as
# in Tokenizer.merge_rank). Weak keys: the map lives as long as its tokenizer.
_PARTS: WeakKeyDictionary[Tokenizer, dict[int, tuple[int, int]]] = WeakKeyDictionary()


def _parts(tokenizer: Tokenizer) -> dict[int, tuple[int, int]]:
    parts = _PARTS.get(tokenizer)
    if parts is None:
        # Going through the merges from the highest rank down lets the lowest rank making an
        # id write last, so it wins.
        by_rank = list(tokenizer.merger.merges())
        parts = {made: (a, b) for _, a, b, made in reversed(by_rank)}
        _PARTS[tokenizer] = parts
    return parts


# Per tokenizer: token id -> the merges that take it as a part, in rank order. Weak keys, as
# for _PARTS.
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


def _check_id(tokenizer: Tokenizer, token_id: int, caller: str) -> int:
    vocab = tokenizer.vocab
    if isinstance(token_id, bool) or not isinstance(token_id, Integral):
        raise TypeError(f"{caller}: token_id must be an int, got {token_id!r}")
    token_id = int(token_id)
    if token_id not in vocab:
        raise ValueError(f"{caller}: unknown token id {token_id}: {missing_id(token_id, vocab)}")
    return token_id


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
    token_id = _check_id(tokenizer, token_id, "merges_using")
    return list(_uses(tokenizer).get(token_id, []))


def pretokens(tokenizer: Tokenizer, text: str) -> list[str]:
    """The pieces the tokenizer encodes ``text`` in, in order: its pre-tokens, and each special
    token as one piece. Encoding each piece and joining the ids gives ``encode(text)``.

    >>> tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<|endoftext|>"])
    >>> pretokens(tok, "Hi there<|endoftext|>!")
    ['Hi', ' there', '<|endoftext|>', '!']
    """
    pieces: list[str] = []
    findall = tokenizer.pre_tokenizer.findall
    for a, b, special in tokenizer.specials.segments(text):
        pieces += findall(text[a:b])
        if special is not None:
            pieces.append(special)
    return pieces


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
    vocab = tokenizer.vocab
    token_id = _check_id(tokenizer, token_id, "merge_tree")
    parts = _parts(tokenizer)
    special = tokenizer.merger.special_ids
    done: dict[int, MergeNode] = {}
    # Iterative post-order walk: a token built as a chain of thousands of merges (a long run
    # of one byte) is deeper than Python's recursion limit.
    stack = [token_id]
    while stack:
        tid = stack[-1]
        if tid in done:
            stack.pop()
            continue
        pair = None if tid in special else parts.get(tid)
        if pair is None:
            done[tid] = MergeNode(tid, vocab[tid], None, None, None)
            stack.pop()
            continue
        todo = [p for p in pair if p not in done]
        if todo:
            stack.extend(todo)
            continue
        rank = tokenizer.merge_rank(tid)
        done[tid] = MergeNode(tid, vocab[tid], rank, done[pair[0]], done[pair[1]])
        stack.pop()
    return done[token_id]


def encode_steps(tokenizer: Tokenizer, piece: str | bytes) -> list[EncodeStep]:
    """Each step of the rank-based encoder on one pre-token: start from its bytes, merge the
    adjacent pair with the lowest rank (the leftmost of equals) until no pair has a merge.

    The last step's ``tokens`` are what the tokenizer encodes ``piece`` to (a ``str`` piece
    that is one pre-token, or one special token). The piece is not pre-tokenized: it is taken
    as one unit. Time and memory grow with the square of its length.

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> vocab.update({256: b"ab", 257: b"abc"})
    >>> tok = Tokenizer(vocab, [(b"a", b"b"), (b"ab", b"c")])
    >>> [(s.tokens, s.candidates, s.chosen) for s in encode_steps(tok, "abc")]
    [((97, 98, 99), ((0, 0),), 0), ((256, 99), ((0, 1),), 0), ((257,), (), None)]
    """
    if isinstance(piece, str):
        if piece in tokenizer.special_tokens:
            return [EncodeStep((tokenizer.special_id(piece),), (), None)]
        data = piece.encode("utf-8")
    elif isinstance(piece, (bytes, bytearray, memoryview)):
        data = bytes(piece)
    else:
        raise TypeError(f"encode_steps: piece must be str or bytes, got {type(piece).__name__}")
    pair_rank = tokenizer.merger.pair_rank
    byte_ids = tokenizer.merger.byte_ids
    ids = [byte_ids[b] for b in data]
    steps: list[EncodeStep] = []
    while True:
        found = [(i, pair_rank(a, b)) for i, (a, b) in enumerate(zip(ids, ids[1:]))]
        merges = [(i, rank, made) for i, m in found if m is not None for rank, made in (m,)]
        candidates = tuple((i, rank) for i, rank, _ in merges)
        if not merges:
            steps.append(EncodeStep(tuple(ids), (), None))
            return steps
        # Lowest rank first, then leftmost: the encoder's choice.
        i, _, made = min(merges, key=lambda c: (c[1], c[0]))
        steps.append(EncodeStep(tuple(ids), candidates, i))
        ids[i : i + 2] = [made]


_REACH_SLICE = 16_384  # tokens merged per NumPy pass in unreachable_tokens


def unreachable_tokens(
    tokenizer: Tokenizer, between_slices: Callable[[], object] | None = None
) -> list[int]:
    """Ids (ascending) of the tokens that encoding their own bytes does not give back as that
    one id: the encoder never produces them. Special tokens are reachable by definition.
    ``between_slices`` is called between two slices of the work (a caller in a background
    thread may wait there while another thread needs the interpreter).

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> vocab.update({256: b"ab", 257: b"bc", 258: b"abc"})
    >>> tok = Tokenizer(vocab, [(b"a", b"b"), (b"b", b"c"), (b"a", b"bc")])
    >>> unreachable_tokens(tok)  # "abc" always becomes "ab" "c" first
    [258]
    """
    return unreachable_among(tokenizer, tokenizer.vocab, between_slices)


def unreachable_among(
    tokenizer: Tokenizer,
    ids: Iterable[int],
    between_slices: Callable[[], object] | None = None,
) -> list[int]:
    """:func:`unreachable_tokens` of the vocabulary entries ``ids`` only (ascending; ids not
    in the vocabulary and special tokens are left out): what a view growing with a run
    computes for its newest tokens."""
    special = tokenizer.merger.special_ids
    vocab = tokenizer.vocab
    ids = [i for i in ids if i in vocab and i not in special]
    # An empty vocabulary entry (possible in a loaded file) encodes to no token at all.
    empty = [i for i in ids if not vocab[i]]
    ids = [i for i in ids if vocab[i]]
    pieces = [vocab[i] for i in ids]
    merger = tokenizer.merger
    if not merger.merges_together(len(pieces)):
        bpe = merger.bpe
        return sorted(empty + [i for i, p in zip(ids, pieces) if bpe(p) != [i]])
    import numpy as np  # subtle: lazily, so importing the core starts no BLAS threads

    # The tokens' bytes merged together, a slice at a time; a token is reachable when its piece
    # ends up as one id and that id is its own. subtle: slices keep each NumPy call short, and
    # a NumPy call holds the interpreter lock throughout: a viewer's GUI thread runs this in
    # the background and must get the lock back within milliseconds.
    unreachable = list(empty)
    for start in range(0, len(pieces), _REACH_SLICE):
        if between_slices is not None:
            between_slices()
        flat, ends = merger.merge_many(pieces[start : start + _REACH_SLICE])
        end = np.asarray(ends, dtype=np.int64)
        own = np.asarray(ids[start : start + _REACH_SLICE], dtype=np.int64)
        reachable = (np.diff(end, prepend=0) == 1) & (flat[end - 1] == own)
        unreachable += own[~reachable].tolist()
    return sorted(unreachable)
