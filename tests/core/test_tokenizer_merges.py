"""The merge list a ``Tokenizer`` is given: tuples of bytes, lists or bytearrays all make the
same tokenizer, and a merge that is not a pair, or repeats one, is refused with its index."""

from __future__ import annotations

import pytest

from bpe_studio.core.encode.tokenizer import Tokenizer


def _vocab() -> dict[int, bytes]:
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b"ab", 257: b"abc", 258: b"cd"})
    return vocab


def test_merges_in_any_pair_form_make_the_same_tokenizer():
    as_tuples = [(b"a", b"b"), (b"ab", b"c"), (b"c", b"d")]
    forms = [
        as_tuples,
        [list(m) for m in as_tuples],
        [(bytearray(a), bytearray(b)) for a, b in as_tuples],
        tuple(as_tuples),
    ]
    for merges in forms:
        tok = Tokenizer(_vocab(), merges)
        assert tok.merges == as_tuples
        assert all(type(a) is bytes and type(b) is bytes for a, b in tok.merges)
        # By hand: "abc" is one token, "cd" another, "abcd" merges ab then abc first.
        assert tok.encode("abc cd abcd") == [257, 32, 258, 32, 257, 100]


@pytest.mark.parametrize("bad", [(b"a",), (b"a", b"b", b"c"), ()])
def test_a_merge_that_is_not_a_pair_names_its_index(bad):
    merges = [(b"a", b"b"), (b"ab", b"c"), bad]
    with pytest.raises(ValueError, match=r"^merge 2 \(.*\) is not a pair of tokens$"):
        Tokenizer(_vocab(), merges)


@pytest.mark.parametrize("form", [tuple, list])
def test_a_repeated_merge_is_refused_naming_the_pair_and_both_places(form):
    """An API audit: Tokenizer(vocab, merges + [merges[1]]) was built, saved as GPT-2 files
    without a word, and those files were then refused ("merge 'ab' + 'c' repeats line 3"):
    which copy ranks is not agreed on, so the constructor refuses it as the reader does."""
    merges = [(b"a", b"b"), (b"ab", b"c"), (b"c", b"d"), (b"ab", b"c")]
    with pytest.raises(ValueError, match=r"^merge 3 \(b'ab' \+ b'c'\) repeats merge 1: "):
        Tokenizer(_vocab(), [form(m) for m in merges])
