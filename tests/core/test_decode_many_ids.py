"""Decoding many ids at once (``decoding.ByteTable``, from ``TABLE_FROM`` ids on): the same
bytes and the same errors as decoding a few, for lists, tuples and every integer array type.

Oracle: tiktoken's GPT-2 (built offline from the fixture vocabulary) decodes the same ids;
the errors are those the short path gives for the same bad id.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.decoding import TABLE_FROM


@pytest.fixture(scope="module")
def many_ids(gpt2_tokenizer):
    rng = random.Random(34)
    ordinary = [i for i in gpt2_tokenizer.vocab if i != 50256]
    return [rng.choice(ordinary) for _ in range(TABLE_FROM + 1_234)]


@pytest.mark.parametrize(
    "form",
    [list, tuple, np.int64, np.int32, np.uint32, np.uint16, np.uint64, "strided"],
    ids=str,
)
def test_many_ids_decode_as_tiktoken_decodes_them(gpt2_tokenizer, tiktoken_gpt2, many_ids, form):
    expected = tiktoken_gpt2.decode_bytes(many_ids)
    if form in (list, tuple):
        given = form(many_ids)
    elif form == "strided":
        # Every other id of an array twice as long: not contiguous.
        given = np.repeat(np.array(many_ids, dtype=np.int64), 2)[::2]
    else:
        given = np.array(many_ids, dtype=form)
    assert gpt2_tokenizer.decode_bytes(given) == expected
    assert gpt2_tokenizer.decode(given) == tiktoken_gpt2.decode(many_ids)


@pytest.mark.parametrize("text", ["1 2 3", b"12"])
def test_text_given_for_ids_is_named_as_text(gpt2_tokenizer, text):
    """Found by the API audit: ``decode("1 2")`` said "token ids must be ints, got '1'"."""
    with pytest.raises(TypeError, match=r"takes token ids \(a list of ints\), not a (str|bytes)"):
        gpt2_tokenizer.decode(text)


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        (-1, ValueError, "unknown token id -1: it is out of range"),
        (50257, ValueError, "unknown token id 50257: it is out of range"),
        (10**30, ValueError, f"unknown token id {10**30}: it is out of range"),
        (2.0, TypeError, "token ids must be ints, got 2.0 (float)"),
        (True, TypeError, "token ids must be ints, got True (bool)"),
    ],
)
def test_a_bad_id_among_many_gets_the_message_one_alone_gets(gpt2_tokenizer, bad, error, message):
    with pytest.raises(error) as alone:
        gpt2_tokenizer.decode_bytes([5, bad])
    assert str(alone.value).startswith(message)
    with pytest.raises(error) as among_many:
        gpt2_tokenizer.decode_bytes([5] * TABLE_FROM + [bad])
    assert str(among_many.value) == str(alone.value)


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.array([5] * TABLE_FROM + [2**64 - 1], dtype=np.uint64), "unknown token id 18446"),
        (np.array([5] * TABLE_FROM + [-3], dtype=np.int8), "unknown token id -3"),
        (np.full(TABLE_FROM, 5.0), "token ids must be ints, got 5.0"),
        (np.ones(TABLE_FROM, dtype=bool), "token ids must be ints, got True"),
    ],
    ids=["uint64 past int64", "negative int8", "floats", "bools"],
)
def test_arrays_that_are_not_ids_are_refused(gpt2_tokenizer, array, message):
    with pytest.raises((ValueError, TypeError), match=message):
        gpt2_tokenizer.decode_bytes(array)


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (np.array(15496), r"one-dimensional array, not one of shape \(\): for one id, \[15496\]"),
        (np.array([[1, 2], [3, 4]]), r"one-dimensional array, not one of shape \(2, 2\)$"),
        (np.zeros((0, 2), dtype=np.int64), r"one-dimensional array, not one of shape \(0, 2\)"),
        (15496, r"a sequence of token ids: for one id, \[15496\]"),
        (np.int32(7), r"a sequence of token ids: for one id, \[7\]"),
    ],
    ids=["0-d array", "2-d array", "empty 2-d array", "int", "numpy int"],
)
def test_ids_that_are_no_sequence_of_ids_are_named_so(gpt2_tokenizer, ids, message):
    # A 0-d array's message was len()'s "unsized object"; a 2-D one's named its first row
    # as a bad id; one int was "not iterable".
    for decode in (gpt2_tokenizer.decode, gpt2_tokenizer.decode_bytes):
        with pytest.raises(TypeError, match=message):
            decode(ids)


def test_an_id_in_a_gap_of_the_vocabulary_is_named():
    # Ids 0..255, then special tokens far above: the ids between are nobody's.
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=[])
    vocab = dict(tok.vocab)
    vocab[1000] = b"<|end|>"
    gapped = Tokenizer(vocab, [], special_tokens=["<|end|>"])
    ids = [104, 105, 1000] * (TABLE_FROM // 3 + 1)
    assert gapped.decode_bytes(ids) == b"hi<|end|>" * (TABLE_FROM // 3 + 1)
    with pytest.raises(ValueError, match="unknown token id 500: it is unassigned"):
        gapped.decode_bytes([*ids, 500])


def test_a_truncated_tokenizer_decodes_with_its_own_vocabulary(gpt2_tokenizer):
    # The full tokenizer's table is built first; the truncation starts from a copy of its
    # attributes and must not decode ids it does not have.
    full_ids = [400] * TABLE_FROM
    assert gpt2_tokenizer.decode_bytes(full_ids) == gpt2_tokenizer.vocab[400] * TABLE_FROM
    early = gpt2_tokenizer.truncated(100)
    with pytest.raises(ValueError, match="unknown token id 400: it is unassigned"):
        early.decode_bytes(full_ids)
    assert early.decode_bytes([300] * TABLE_FROM) == early.vocab[300] * TABLE_FROM


def test_the_decode_table_is_not_pickled_with_the_tokenizer(gpt2_tokenizer):
    # Found by the re-check: after one long decode, o200k pickled 4.8 MB larger.
    import pickle

    before = len(pickle.dumps(gpt2_tokenizer))
    gpt2_tokenizer.decode_bytes([5] * TABLE_FROM)
    assert len(pickle.dumps(gpt2_tokenizer)) - before < 1_000
    copy = pickle.loads(pickle.dumps(gpt2_tokenizer))
    ids = [5, 6] * TABLE_FROM
    assert copy.decode_bytes(ids) == gpt2_tokenizer.decode_bytes(ids)
