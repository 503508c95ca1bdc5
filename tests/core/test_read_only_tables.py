"""A tokenizer's vocabulary, merges and special tokens cannot be changed in place.

Found by the API audit: ``tok.vocab[i] = b"XYZ"`` made ``decode`` give "XYZ" while ``encode``
kept the old ids; ``tok.merges.clear()`` made ``save`` write an empty merges file that the
encoder never read; an appended special token was listed but encoded as text. Each changing
method now raises TypeError, and the containers still behave as a dict and a list for reading.
"""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from bpe_studio.core import Tokenizer

VOCAB = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"abc"}
MERGES = [(b"a", b"b"), (b"ab", b"c")]


@pytest.fixture
def tok() -> Tokenizer:
    return Tokenizer(VOCAB, MERGES, ["<|endoftext|>"])


CHANGES = [
    ("vocab", lambda v: v.__setitem__(1, b"x")),
    ("vocab", lambda v: v.__delitem__(1)),
    ("vocab", lambda v: v.update({1: b"x"})),
    ("vocab", lambda v: v.pop(1)),
    ("vocab", lambda v: v.popitem()),
    ("vocab", lambda v: v.setdefault(999, b"x")),
    ("vocab", lambda v: v.clear()),
    ("vocab", lambda v: v.__ior__({1: b"x"})),
    ("merges", lambda m: m.append((b"b", b"c"))),
    ("merges", lambda m: m.extend([(b"b", b"c")])),
    ("merges", lambda m: m.insert(0, (b"b", b"c"))),
    ("merges", lambda m: m.__setitem__(0, (b"b", b"c"))),
    ("merges", lambda m: m.__delitem__(0)),
    ("merges", lambda m: m.pop()),
    ("merges", lambda m: m.remove((b"a", b"b"))),
    ("merges", lambda m: m.clear()),
    ("merges", lambda m: m.sort()),
    ("merges", lambda m: m.reverse()),
    ("merges", lambda m: m.__iadd__([(b"b", b"c")])),
    ("special_tokens", lambda s: s.append("<|pad|>")),
    ("added_tokens", lambda a: a.__setitem__("<x>", 300)),
]


@pytest.mark.parametrize(("name", "change"), CHANGES)
def test_a_change_in_place_is_refused_and_nothing_changes(tok, name, change):
    before = (dict(tok.vocab), list(tok.merges), list(tok.special_tokens))
    with pytest.raises(TypeError, match="read-only.*build a new Tokenizer from a copy"):
        change(getattr(tok, name))
    assert (dict(tok.vocab), list(tok.merges), list(tok.special_tokens)) == before
    assert tok.decode(tok.encode("abc")) == "abc"


def test_a_truncation_refuses_too(tok):
    early = tok.truncated(1)
    with pytest.raises(TypeError):
        early.vocab[1] = b"x"
    with pytest.raises(TypeError):
        early.merges.append((b"ab", b"c"))
    assert 257 not in early.vocab and list(early.merges) == MERGES[:1]


def test_they_read_as_a_dict_and_lists(tok):
    assert tok.vocab == VOCAB | {258: b"<|endoftext|>"}
    assert isinstance(tok.vocab, dict) and isinstance(tok.merges, list)
    assert tok.merges == MERGES and tok.merges[:1] == MERGES[:1]
    assert tok.special_tokens == ["<|endoftext|>"]
    assert json.loads(json.dumps(tok.special_tokens)) == ["<|endoftext|>"]
    own = dict(tok.vocab)
    own[258] = b"<|pad|>"  # a copy changes freely, and builds a new tokenizer
    assert Tokenizer(own, list(tok.merges), ["<|pad|>"]).encode(
        "<|pad|>", allowed_special="all"
    ) == [258]
    for container in (tok.vocab, tok.merges, tok.special_tokens):
        back = pickle.loads(pickle.dumps(container))
        assert back == container and type(back) is type(container)
        assert copy.deepcopy(container) == container


def test_a_pickled_tokenizer_is_still_read_only(tok):
    back = pickle.loads(pickle.dumps(tok))
    assert back.encode("abcab") == tok.encode("abcab")
    with pytest.raises(TypeError):
        back.vocab[1] = b"x"
