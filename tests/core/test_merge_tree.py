"""core.explain.merge_tree.MergeTree, the one merge tree, against the merge list read as bytes
here: for each token, the first merge (a repeated pair left out) whose two parts join into its
bytes; byte and special tokens made by none. The inspector's trees (``merge_tree``) and the
editor's split-back (``spans_at_step``) read these arrays, so they must hold for a trained
run, GPT-2 and merge lists that make one token twice."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import EOT

from bpe_studio.core import Tokenizer, merge_tree
from bpe_studio.core.explain.merge_tree import NO_MERGE, MergeTree


def ref_made_by(tok: Tokenizer) -> dict[int, tuple[int, int, int]]:
    """token id -> (rank, left id, right id) of the first merge making it, from the merge list
    as bytes; a merge that repeats an earlier pair is never applied, so it makes nothing."""
    ids = {token: i for i, token in tok.vocab.items() if i not in tok.merger.special_ids}
    seen: set[tuple[bytes, bytes]] = set()
    made: dict[int, tuple[int, int, int]] = {}
    for rank, (a, b) in enumerate(tok.merges):
        if (a, b) in seen:
            continue
        seen.add((a, b))
        made.setdefault(ids[a + b], (rank, ids[a], ids[b]))
    return made


def check(tok: Tokenizer) -> MergeTree:
    tree = MergeTree.of(tok)
    want = ref_made_by(tok)
    for token_id in tok.vocab:
        got = tree.parts(token_id)
        if token_id in want:
            rank, left, right = want[token_id]
            assert (int(tree.rank[token_id]), got) == (rank, (left, right)), token_id
        else:
            assert got is None, token_id
            assert tree.ranks(np.array([token_id]))[0] == NO_MERGE
    return tree


def test_a_trained_tokenizer_each_token_made_once(span_tokenizer):
    tree = check(span_tokenizer)
    assert tree.one_way
    assert MergeTree.of(span_tokenizer) is tree  # built once per tokenizer


def test_gpt2(gpt2_tokenizer):
    tree = check(gpt2_tokenizer)
    assert tree.parts(gpt2_tokenizer.special_id(EOT)) is None
    # The node the inspector draws is the same tree, unfolded.
    token_id = gpt2_tokenizer.encode(" unbelievable")[0]
    node = merge_tree(gpt2_tokenizer, token_id)
    assert node.rank == int(tree.rank[token_id])
    assert node.left is not None and node.right is not None
    assert (node.left.id, node.right.id) == tree.parts(token_id)


def test_a_token_made_twice():
    # (A repeated pair, which this test also had, is refused by the constructor.)
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b"ab", 257: b"bc", 258: b"abc", 259: EOT.encode()})
    merges = [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")]
    tok = Tokenizer(vocab, merges, {EOT: 259})
    tree = check(tok)
    assert not tree.one_way  # "abc" by (ab, c) and by (a, bc)
    assert (int(tree.rank[258]), tree.parts(258)) == (2, (256, 99))
    assert tree.parts(259) is None


def test_split_takes_tokens_back_to_their_parts(span_tokenizer):
    tree = MergeTree.of(span_tokenizer)
    text = "the cat sat on the mat, 中文 😀"
    n = len(span_tokenizer.merges)
    for k in (0, 1, n // 3, n):
        got = tree.split(np.array(span_tokenizer.encode(text)), k)
        assert got.tolist() == span_tokenizer.truncated(k).encode(text)


@pytest.mark.parametrize("bad", [-1, 10**9])
def test_no_parts_for_an_id_outside_the_tree(gpt2_tokenizer, bad):
    assert MergeTree.of(gpt2_tokenizer).parts(bad) is None
