"""The fast incremental trainer against the slow reference (bpe_studio/core/reference.py):
same merges in the same order and the same vocabulary, on real text, with and without special
tokens, and where most late merges are decided by the tie rule."""

from __future__ import annotations

import pytest
from core_helpers import EOT, slice_head, write_text

from bpe_studio.core import count_text, train_bpe
from bpe_studio.core.reference import (
    merge_word,
    pretoken_counts,
    reference_steps,
    reference_train,
    split_on_specials,
)


def train_file(tmp_path, text, vocab_size, specials):
    return train_bpe(write_text(tmp_path / "corpus.txt", text), vocab_size, specials)


# --- the reference checks itself against hand-worked examples ---------------------------


def test_reference_on_a_hand_worked_example():
    # Pre-tokens: "low" x5, " low" x2 ... counted by hand below; ties go to the greater pair.
    text = "low low low low low lower lower newest newest newest widest widest"
    counts = pretoken_counts(text)
    assert counts == {
        b"low": 1,
        b" low": 4,
        b" lower": 2,
        b" newest": 3,
        b" widest": 2,
    }
    steps = list(reference_steps(counts, 3))
    # Pair counts at the start: ("l","o") 7, ("o","w") 7, (" ","l") 6, ("w","e") 5,
    # ("e","s") 5, ("s","t") 5, ... The top count 7 is a tie, and ("o","w") > ("l","o").
    # Then ("l","ow") has 7, and then (" ","low") 6 beats ("e","s") and ("s","t") at 5.
    assert [(s.left, s.right, s.count) for s in steps] == [
        (b"o", b"w", 7),
        (b"l", b"ow", 7),
        (b" ", b"low", 6),
    ]
    assert [s.ties for s in steps] == [1, 0, 0]


def test_reference_merge_word_is_left_to_right_without_overlap():
    a = b"a"
    assert merge_word((a, a, a), (a, a)) == (b"aa", a)
    assert merge_word((a, a, a, a), (a, a)) == (b"aa", b"aa")
    assert merge_word((a, b"b", a, b"b"), (a, b"b")) == (b"ab", b"ab")


def test_reference_special_split_is_leftmost_longest():
    specials = ["<|a|>", "<|a|><|a|>"]
    assert split_on_specials("x<|a|><|a|>y<|a|>z", specials) == ["x", "y", "z"]
    assert split_on_specials("<|a|><|a|><|a|>", specials) == ["", "", ""]


def test_library_pretoken_counts_match_reference():
    for key in ["english", "chinese", "code", "tinystories", "mixed_web"]:
        text = slice_head(key, 300_000)
        for specials in ([], [EOT]):
            assert count_text(text, specials) == pretoken_counts(text, specials), key


# --- fast == slow -----------------------------------------------------------------------

CASES = [
    # (slice, bytes of it, vocab size, special tokens)
    ("english", 40_000, 600, [EOT]),
    ("english", 40_000, 500, []),
    ("chinese", 30_000, 600, [EOT]),
    ("chinese", 20_000, 500, []),
    ("code", 40_000, 600, [EOT]),
    ("code", 30_000, 500, []),
    ("tinystories", 50_000, 500, [EOT]),
    ("tinystories", 40_000, 450, []),
    ("mixed_web", 40_000, 600, [EOT]),
    ("mixed_web", 30_000, 500, []),
]


@pytest.mark.slow
@pytest.mark.parametrize(("key", "nbytes", "vocab_size", "specials"), CASES)
def test_fast_trainer_equals_reference(tmp_path, key, nbytes, vocab_size, specials):
    text = slice_head(key, nbytes)
    ref_vocab, ref_merges = reference_train(text, vocab_size, specials)
    assert len(ref_merges) == vocab_size - 256 - len(specials)  # the run is not cut short
    vocab, merges = train_file(tmp_path, text, vocab_size, specials)
    assert merges == ref_merges
    assert vocab == ref_vocab


@pytest.mark.parametrize(
    ("key", "nbytes", "vocab_size"),
    [("english", 8_000, 1200), ("chinese", 6_000, 1000), ("code", 8_000, 1200)],
)
def test_fast_trainer_equals_reference_when_ties_decide(tmp_path, key, nbytes, vocab_size):
    """A small text and a big vocabulary: the late merges all have count 1 or 2, so most are
    picked by the tie rule (the greater pair of bytes)."""
    text = slice_head(key, nbytes)
    steps = list(reference_steps(pretoken_counts(text, [EOT]), vocab_size - 257))
    assert len(steps) == vocab_size - 257
    assert sum(s.ties > 0 for s in steps) > len(steps) // 2, "ties should dominate"
    assert all(s.count <= 2 for s in steps[-100:])
    vocab, merges = train_file(tmp_path, text, vocab_size, [EOT])
    assert merges == [(s.left, s.right) for s in steps]
    assert vocab == {
        **{i: bytes([i]) for i in range(256)},
        256: EOT.encode(),
        **{257 + s.rank: s.left + s.right for s in steps},
    }


def test_fast_trainer_equals_reference_until_pairs_run_out(tmp_path):
    """Asking for more merges than there are pairs: both stop at the same place."""
    text = slice_head("tinystories", 3_000)
    ref_vocab, ref_merges = reference_train(text, 5_000, [EOT])
    assert len(ref_merges) < 5_000 - 257
    vocab, merges = train_file(tmp_path, text, 5_000, [EOT])
    assert merges == ref_merges
    assert vocab == ref_vocab


def test_special_tokens_overlapping_in_a_chain(tmp_path):
    # Found by fuzzing: a file over the in-process chunk size made of special tokens that
    # overlap in a chain was cut inside one, and "|>" + "<|" were learned from its halves.
    specials = ["<|a|><|b|>", "|><|"]
    text = "<|a|><|b|>" * 26_300 + " ab ab abc"
    ref_vocab, ref_merges = reference_train(text, 300, specials)
    # " ab" twice and " abc" once; (" ", "a") and ("a", "b") tie at 3, b"a" > b" ".
    assert ref_merges == [(b"a", b"b"), (b" ", b"ab"), (b" ab", b"c")]
    assert train_file(tmp_path, text, 300, specials) == (ref_vocab, ref_merges)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # After ("y","y"), ("z","yy") and ("z","y") both count 3; b"yy" > b"y" (a proper
        # prefix is smaller), so ("z","yy") goes first.
        ("yy\n" * 10 + "zyy\n" * 3 + "zy\n" * 3, [(b"y", b"y"), (b"z", b"yy"), (b"z", b"y")]),
        # The same on the left: ("ab","x") and ("a","x") tie at 3; b"ab" > b"a".
        ("ab\n" * 10 + "abx\n" * 3 + "ax\n" * 3, [(b"a", b"b"), (b"ab", b"x"), (b"a", b"x")]),
    ],
)
def test_ties_between_tokens_where_one_is_a_prefix(tmp_path, text, expected):
    assert reference_train(text, 259, [])[1] == expected
    vocab, merges = train_file(tmp_path, text, 300, [])
    assert merges == expected
    assert [vocab[256], vocab[257], vocab[258]] == [a + b for a, b in expected]


def test_the_reference_imports_nothing_else_of_the_package():
    """An oracle that shared code with what it checks would share its mistakes."""
    import ast

    import bpe_studio.core.reference as reference

    tree = ast.parse(open(reference.__file__, encoding="utf-8").read())
    imported = {
        node.module if isinstance(node, ast.ImportFrom) and node.level == 0 else "."
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert not {m for m in imported if m == "." or m.split(".")[0] == "bpe_studio"}, imported
    assert imported <= {"__future__", "collections", "collections.abc", "dataclasses", "regex"}


def test_the_reference_refuses_an_empty_special_token_as_train_bpe_does(tmp_path):
    # The fuzz: the reference looped forever on one (found at every position, cut nothing).
    with pytest.raises(ValueError, match="must not be empty") as ours:
        train_bpe(write_text(tmp_path / "c.txt", "ab ab"), 260, ["<|a|>", ""])
    with pytest.raises(ValueError, match="must not be empty") as its:
        reference_train("ab ab", 260, ["<|a|>", ""])
    assert str(its.value) == str(ours.value)
