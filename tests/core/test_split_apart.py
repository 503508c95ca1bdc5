"""The Reach rule's split test (``explain/split_apart``) on split-heavy pipelines: texts that
nothing in the pipeline tells apart are answered once, a chain of regex steps is cut around
the token only, and the answers stay those of ``tokenizers``.

Oracle: ``tokenizers`` itself, on a GPT-2 vocabulary behind each pre-tokenizer, encoding the
tokens' texts in many contexts and real text.
"""

from __future__ import annotations

import random

import pytest
import tokenizers
from core_helpers import SLICES, read_fixture
from foreign_files import _gpt2_model
from tokenizers import Regex, decoders, normalizers, pre_tokenizers

from bpe_studio.core import Tokenizer, unreachable_tokens
from bpe_studio.core.explain import split_apart as split_module
from bpe_studio.core.explain.alike import _named_by
from bpe_studio.core.explain.contexts import AFTER, CONTEXTS
from bpe_studio.core.explain.split_apart import split_apart

_BYTES = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
_BYTES_REGEX = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
# name -> (normalizer, pre-tokenizer): the pipelines inspect took seconds on.
SHAPES = {
    "words": (None, pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), _BYTES])),
    "split_then_regex": (
        None,
        pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r"'s|\w+"), "isolated"), _BYTES_REGEX]),
    ),
    "strip_lower": (
        normalizers.Sequence([normalizers.Strip(), normalizers.Lowercase()]),
        _BYTES_REGEX,
    ),
}
_AROUND = ["", " ", "a", "Z", "0", "\n", "\t", ".", "'", "中", "é", "_", "-", " a", "'s", "  "]


def _shape(name: str, folder) -> tuple[tokenizers.Tokenizer, Tokenizer]:
    normalizer, pre_tokenizer = SHAPES[name]
    hf = tokenizers.Tokenizer(_gpt2_model(False))
    if normalizer is not None:
        hf.normalizer = normalizer
    hf.pre_tokenizer = pre_tokenizer
    hf.decoder = decoders.ByteLevel()
    path = folder / "tokenizer.json"
    hf.save(str(path))
    return tokenizers.Tokenizer.from_file(str(path)), Tokenizer.from_hf(path)


def _texts(tok: Tokenizer) -> dict[int, str]:
    texts = {}
    for i, token in tok.vocab.items():
        try:
            texts[i] = token.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return texts


def _counting(monkeypatch) -> list[int]:
    """Counts the pipeline runs of the split test (each context tried the slow way)."""
    calls: list[int] = []
    slow = split_module.step_texts

    def counted(steps, text):
        calls.append(1)
        return slow(steps, text)

    monkeypatch.setattr(split_module, "step_texts", counted)
    return calls


def test_words_nothing_tells_apart_are_tried_once(tmp_path, monkeypatch):
    # inspect took 10 s of CPU on a GPT-2 vocabulary behind WhitespaceSplit: every token with
    # a space tried every context, though " cat" and " dog" are cut alike (no pattern names
    # a letter). Reference: tokenizers never gives any of them.
    hf, ours = _shape("words", tmp_path)
    words = [" cat", " dog", " bat", " pen", " map", " Tom", " Bob", " Jim"]
    ids = [ours.encode_single_token(w) for w in words]
    calls = _counting(monkeypatch)
    assert split_apart(ours, ids) == set(ids)
    # " cat" ... " map" share one answer, " Tom" ... " Jim" another.
    assert len(calls) <= 2 * len(CONTEXTS) * len(AFTER)
    batch = [a + w + z for w in words for a in _AROUND for z in _AROUND]
    assert not set(ids) & {
        i for e in hf.encode_batch(batch, add_special_tokens=False) for i in e.ids
    }


def test_a_chain_of_regex_steps_is_cut_around_the_token_only(tmp_path, monkeypatch):
    # inspect took 14 s of CPU on Sequence[Split(r"'s|\w+"), ByteLevel(use_regex)]: every
    # context ran both steps over the whole text, where the pieces that reach into the token
    # decide. Reference: tokenizers never gives the tokens said to be split apart.
    hf, ours = _shape("split_then_regex", tmp_path)
    words = [" cat", " dog", " house", " 2016", " 1999", "cats", "cat", "'s"]
    ids = [ours.encode_single_token(w) for w in words]
    calls = _counting(monkeypatch)
    split = split_apart(ours, ids)
    assert len(calls) < len(CONTEXTS) * len(AFTER)
    assert {ours.vocab[i].decode() for i in split} == {" cat", " dog", " house", " 2016", " 1999"}
    batch = [a + w + z for w in words for a in _AROUND for z in _AROUND]
    assert not split & {i for e in hf.encode_batch(batch, add_special_tokens=False) for i in e.ids}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_answers_shared_by_alike_texts_are_each_texts_own(tmp_path, name):
    # One answer per key must be the answer each text gets alone (fast == slow), and the
    # tokens called split apart are never given by tokenizers, on contexts and real text.
    hf, ours = _shape(name, tmp_path)
    texts = _texts(ours)
    ids = random.Random(7).sample(sorted(texts), 300)
    split = split_apart(ours, ids)
    assert split == {i for i in ids if split_apart(ours, [i])}
    assert split
    batch = [a + texts[i] + z for i in sorted(split) for a in _AROUND for z in _AROUND]
    emitted = {i for e in hf.encode_batch(batch, add_special_tokens=False) for i in e.ids}
    for key in SLICES:
        for line in read_fixture(SLICES[key])[:20_000].splitlines(keepends=True):
            emitted.update(hf.encode(line, add_special_tokens=False).ids)
    assert not split & emitted


@pytest.mark.parametrize(
    "pattern",
    [r"\h+", r"[[:xdigit:]]+", r"\p{Hex_Digit}", r"(\w)\1", r"(?P<x>\w)(?P=x)", r"\x61", "é|\\w+",
     r"[\t-z]", r"(?x) a b"],
)  # fmt: skip
def test_patterns_that_may_tell_letters_apart_keep_them_apart(pattern):
    assert _named_by(pattern) is None


def test_the_letters_a_pattern_names():
    gpt2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    letters = {c for c in _named_by(gpt2) or () if c.isalpha()}
    assert letters == set("strevmld")
    assert {c for c in _named_by(r"[b-d]x") or () if c.isalpha()} == set("bcdx")


def _two_token_file(folder, tokens, normalizer, pattern: str):
    """A byte-level BPE file whose vocabulary is the bytes and ``tokens`` (two ASCII
    characters each, merged in that order), behind ``normalizer`` and one Split of
    ``pattern``: ``tokenizers``' own object and ours."""
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    for token in tokens:
        vocab[token] = len(vocab)
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(vocab, [(t[0], t[1:]) for t in tokens]))
    hf.normalizer = normalizer
    split = pre_tokenizers.Split(Regex(pattern), "isolated")
    hf.pre_tokenizer = pre_tokenizers.Sequence([split, _BYTES])
    hf.decoder = decoders.ByteLevel()
    path = folder / "tokenizer.json"
    hf.save(str(path))
    return tokenizers.Tokenizer.from_file(str(path)), Tokenizer.from_hf(path)


@pytest.mark.parametrize(
    ("normalizer", "pattern", "tokens", "given_by"),
    [
        # Oniguruma reads an unbraced "\PL" as the letters "PL", not a property: "PL" is
        # one piece of "PLs", "QL" never.
        (normalizers.NFC(), r"\PLs|\w|\s|.", ("QL", "PL"), {"PL": "PLs"}),
        (normalizers.NFC(), r"\PLs|\w|\s|.", ("PL", "QL"), {"PL": "PLs"}),
        # A full-width "ｂ" prepended becomes "b" under NFKC, the Kelvin sign "k" under
        # Lowercase: every text starts with that letter, so "." alone gives it with ".".
        (
            normalizers.Sequence([normalizers.Prepend("\uff42"), normalizers.NFKC()]),
            r"\A\w\.|\w+|[^\w\s]+|\s+",
            ("c.", "b."),
            {"b.": "."},
        ),
        (
            normalizers.Sequence([normalizers.Prepend("\uff42"), normalizers.NFKC()]),
            r"\A\w\.|\w+|[^\w\s]+|\s+",
            ("b.", "c."),
            {"b.": "."},
        ),
        (
            normalizers.Sequence([normalizers.Prepend("\u212a"), normalizers.Lowercase()]),
            r"\A\w\.|\w+|[^\w\s]+|\s+",
            ("c.", "k."),
            {"k.": "."},
        ),
    ],
)
def test_letters_a_pipeline_names_or_writes_are_not_answered_alike(
    tmp_path, normalizer, pattern, tokens, given_by
):
    """A review of the alike answers: two letters the pipeline tells apart shared one answer
    where it named one in a way the alike test did not read (an unbraced "\\PL", which
    Oniguruma takes as letters; a non-ASCII Prepend that a compatibility form or Lowercase
    turns into an ASCII letter). The token listed first decided for both: one given by
    ``tokenizers`` was called unreachable, or one it never gives reachable."""
    hf, tok = _two_token_file(tmp_path, tokens, normalizer, pattern)
    mine = {tok.vocab[i]: i for i in unreachable_tokens(tok)}
    unreachable = {t for t in tokens if t.encode() in mine}
    for token, text in given_by.items():
        assert token in hf.encode(text, add_special_tokens=False).tokens  # the oracle
    never = set(tokens) - set(given_by)
    for token in never:  # no context gives it in tokenizers either
        for before in _AROUND:
            for after in _AROUND:
                pieces = hf.encode(before + token + after, add_special_tokens=False).tokens
                assert token not in pieces, (before, after)
    assert unreachable == never


# name -> (pattern, a token its own characters keep whole, a text tokenizers gives it in,
# a token no text keeps whole): the fixed contexts hold no vowel, nor "'s" as one text.
NEEDS_ITS_OWN = {
    "vowel_before": (r"[aeiou][^aeiou]{1,3}|\S|\s", "bc", "abc", "ba"),
    "apostrophe_s_after": (r"\w+[ \t]*'s|\w|\s|.", "ab", "ab's", "'x"),
}
_AROUND_OWN = [*_AROUND, "a", "e", "u", "'s", "\t's", "ab", "x"]


@pytest.mark.parametrize("name", sorted(NEEDS_ITS_OWN))
def test_a_pattern_needing_its_own_characters_around_a_token(tmp_path, name):
    """An audit: a token that a Split keeps whole only beside characters its pattern names
    (a vowel before, "'s" after) was called unreachable: no fixed context holds them.
    ``tokenizers`` gives it; a token it never gives in any context stays unreachable."""
    pattern, token, text, never = NEEDS_ITS_OWN[name]
    hf, tok = _two_token_file(tmp_path, (token, never), normalizers.NFC(), pattern)
    assert token in hf.encode(text, add_special_tokens=False).tokens  # the oracle
    for before in _AROUND_OWN:
        for after in _AROUND_OWN:
            pieces = hf.encode(before + never + after, add_special_tokens=False).tokens
            assert never not in pieces, (before, after)
    unreachable = {tok.vocab[i] for i in unreachable_tokens(tok)}
    assert token.encode() not in unreachable
    assert never.encode() in unreachable


def test_a_tokenizers_own_pattern_names_what_keeps_a_token_whole():
    # The same on a Tokenizer built with a custom pattern (no tokenizer.json); the oracle is
    # tiktoken with that pattern and those ranks.
    tiktoken = pytest.importorskip("tiktoken")
    pattern = NEEDS_ITS_OWN["vowel_before"][0]
    ranks = {bytes([i]): i for i in range(256)} | {b"bc": 256, b"ba": 257}
    peer = tiktoken.Encoding("vowels", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    assert 256 in peer.encode("abc")
    assert not any(257 in peer.encode(a + "ba" + z) for a in _AROUND_OWN for z in _AROUND_OWN)
    vocab = {rank: token for token, rank in ranks.items()}
    tok = Tokenizer(vocab, [(b"b", b"c"), (b"b", b"a")], pattern=pattern)
    unreachable = set(unreachable_tokens(tok))
    assert 256 not in unreachable
    assert 257 in unreachable


def test_a_token_a_patterns_text_keeps_whole_but_merges_away_stays_unreachable(tmp_path):
    """A review: "bc" lies within a piece only after a vowel ([aeiou]bc), where the vowel's
    merge with "b" comes first, so the encoder never gives it; the pass with the pattern's
    own characters called it reachable from the piece alone. The oracle: tokenizers, on
    every text of up to four characters around it."""
    import itertools

    tokens = ("ab", "eb", "ib", "ob", "ub", "bc")
    hf, tok = _two_token_file(tmp_path, tokens, normalizers.NFC(), r"[aeiou]bc|\S|\s")
    texts = ["".join(t) for n in range(1, 5) for t in itertools.product("abceiox ", repeat=n)]
    given = {t for e in hf.encode_batch(texts, add_special_tokens=False) for t in e.tokens}
    assert "bc" not in given and "ab" in given  # the oracle
    unreachable = {tok.vocab[i] for i in unreachable_tokens(tok)}
    assert b"bc" in unreachable
    assert b"ab" not in unreachable
