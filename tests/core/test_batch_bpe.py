"""The NumPy batch merger (``batch_bpe``) against a slow one-pair-at-a-time reference, and the
tokenizer paths that use it."""

from __future__ import annotations

import numpy as np
import pytest
import regex
from core_helpers import EOT, FIXTURES, SLICES, slice_head
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import HYPO

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.merging.batch_bpe import SCALAR_TAIL, BatchBpe
from bpe_studio.core.encode.merging.merger import (
    BATCH_BUILD_MIN,
    BATCH_LONG_MAX,
    BATCH_LONG_MIN,
    LONG_PIECE,
)
from bpe_studio.core.reference import GPT2_SPLIT_PATTERN, reference_encode_piece

SPLIT = regex.compile(GPT2_SPLIT_PATTERN)


def batch_of(tok: Tokenizer) -> BatchBpe | None:
    return BatchBpe.build(tok.merger._ranks, tok.merger.byte_ids, tok.vocab)


def run_batch(tok: Tokenizer, pieces: list[bytes]) -> list[list[bytes]]:
    batch = batch_of(tok)
    assert batch is not None
    flat, ends = batch.merge(pieces, tok.merger._merge_ids)
    ids = flat.tolist()
    assert len(ends) == len(pieces) and ends[-1] == len(ids)
    return [[tok.vocab[i] for i in ids[a:b]] for a, b in zip([0, *ends], ends)]


def reference(tok: Tokenizer, pieces: list[bytes]) -> list[list[bytes]]:
    ranks = {pair: rank for rank, pair in enumerate(tok.merges)}
    return [list(reference_encode_piece(p, ranks)) for p in pieces]


def unique_pieces(text: str) -> list[bytes]:
    found = {p.encode() for p in SPLIT.findall(text)}
    return sorted(p for p in found if len(p) <= LONG_PIECE)


# Merges of "a" and "b" whose pairs overlap in runs ("aaaa", "abab"); monotone by design.
RUN_MERGES = [
    (b"a", b"a"), (b"a", b"b"), (b"aa", b"aa"), (b"aa", b"a"), (b"b", b"b"),
    (b"ab", b"ab"), (b"b", b"a"), (b"aaaa", b"aaaa"), (b"bb", b"b"), (b"abab", b"a"),
]  # fmt: skip


def run_tokenizer() -> Tokenizer:
    vocab = {i: bytes([i]) for i in range(256)}
    for a, b in RUN_MERGES:
        vocab[len(vocab)] = a + b
    return Tokenizer(vocab, RUN_MERGES)


@pytest.mark.parametrize("name", list(SLICES))
def test_gpt2_batch_equals_reference_on_corpus_pieces(gpt2_tokenizer, name):
    pieces = unique_pieces(slice_head(name, 60_000))
    assert len(pieces) > 1000
    assert run_batch(gpt2_tokenizer, pieces) == reference(gpt2_tokenizer, pieces)


@pytest.mark.parametrize("name", ["chinese", "code", "english"])
def test_trained_batch_equals_reference_on_corpus_pieces(chinese_code_tokenizer, name):
    pieces = unique_pieces(slice_head(name, 60_000))
    assert run_batch(chinese_code_tokenizer, pieces) == reference(chinese_code_tokenizer, pieces)


@HYPO
@given(st.lists(st.text("ab ", min_size=1, max_size=LONG_PIECE), min_size=1, max_size=60))
def test_overlapping_runs_merge_left_to_right(words):
    tok = run_tokenizer()
    pieces = [w.encode() for w in words]
    assert run_batch(tok, pieces) == reference(tok, pieces)


def test_stragglers_finish_one_by_one():
    """Many pre-tokens done in a round or two and a few long ones: the long ones end up in
    the one-at-a-time tail, and each still lands in its own place."""
    tok = run_tokenizer()
    long = [b"ab" * 32, b"a" * 63, b"ba" * 31 + b"b"]
    pieces = [b"b", b"ab", b"x"] * (SCALAR_TAIL * 4) + long + [b"a"]
    got = run_batch(tok, pieces)
    assert got == reference(tok, pieces)
    assert got[-4:-1] == reference(tok, long)


def test_pair_table_finds_every_merge_and_nothing_else(gpt2_tokenizer):
    batch = batch_of(gpt2_tokenizer)
    pairs = np.array(list(gpt2_tokenizer.merger._ranks), dtype=np.int64)
    got = batch._table.lookup(pairs[:, 0], pairs[:, 1])
    assert got.tolist() == list(gpt2_tokenizer.merger._ranks.values())
    rng = np.random.default_rng(0)
    left, right = rng.integers(0, 50257, size=(2, 20_000))
    absent = [
        (a, b) not in gpt2_tokenizer.merger._ranks for a, b in zip(left.tolist(), right.tolist())
    ]
    missing = batch._table.lookup(left, right)[np.array(absent)]
    assert (missing == np.iinfo(np.int64).max).all()


def non_monotone_tokenizer() -> Tokenizer:
    """Rank 0 joins "a" with "bc", a token that only rank 1 makes."""
    merges = [(b"a", b"bc"), (b"b", b"c")]
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"abc", 257: b"bc"}
    return Tokenizer(vocab, merges)


def test_non_monotone_merges_fall_back_to_one_at_a_time():
    tok = non_monotone_tokenizer()
    assert batch_of(tok) is None
    words = [f" {i}abc{'bc' * (i % 7)}a" for i in range(BATCH_BUILD_MIN + 10)]
    ids = tok.encode("".join(words))
    assert tok.merger._batch_state == "unusable"
    ranks = {pair: rank for rank, pair in enumerate(tok.merges)}
    inverse = {token: idx for idx, token in tok.vocab.items()}
    expected = [
        inverse[t]
        for w in words
        for p in SPLIT.findall(w)
        for t in reference_encode_piece(p.encode(), ranks)
    ]
    assert ids == expected


def test_fresh_tokenizer_uses_the_batch_and_matches_tiktoken(tiktoken_gpt2):
    """A fresh tokenizer (cold cache) encoding a long text goes through the batch merger,
    for encode and encode_array alike."""
    text = slice_head("english", 400_000) + EOT + slice_head("chinese", 200_000)
    expected = tiktoken_gpt2.encode(text, allowed_special="all")
    for method in ("encode", "encode_array"):
        tok = Tokenizer.from_files(
            FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", [EOT]
        )
        got = getattr(tok, method)(text)
        assert tok.merger._batch_state == "built"
        assert list(got) == expected, method


def test_batch_of_only_long_pretokens():
    """Pre-tokens over LONG_PIECE bytes go to a batch of their own, even when they alone
    make a batch; each is merged once and right."""
    tok = run_tokenizer()
    letters = "cdefghij"
    words = [
        " " + "ab" * 33 + "".join(letters[int(d)] for d in f"{i:04o}")
        for i in range(BATCH_BUILD_MIN + 5)
    ]
    ids = tok.encode("".join(words))
    assert tok.merger._batch_state == "built"
    ranks = {pair: rank for rank, pair in enumerate(tok.merges)}
    inverse = {token: idx for idx, token in tok.vocab.items()}
    assert ids == [inverse[t] for w in words for t in reference_encode_piece(w.encode(), ranks)]
    assert batch_of(tok).merge([], tok.merger._merge_ids)[1] == []


@pytest.mark.parametrize("count", [BATCH_LONG_MIN - 1, BATCH_LONG_MIN, 3 * BATCH_LONG_MIN])
def test_short_long_and_very_long_pretokens_together(count):
    """Short pre-tokens (one batch), long ones (a second batch, or one by one when fewer than
    BATCH_LONG_MIN) and ones over BATCH_LONG_MAX bytes (one by one) in one text: each
    merged as the slow reference merges it, whichever way it went."""
    tok = run_tokenizer()
    letters = "cdefghij"

    def word(i: int, repeat: int) -> str:
        return " " + "ab" * repeat + "a" * (i % 5) + "".join(letters[int(d)] for d in f"{i:05o}")

    short = [word(i, 3) for i in range(BATCH_BUILD_MIN)]
    long = [word(i, 30 + i % 300) for i in range(count)]
    very_long = [word(i, BATCH_LONG_MAX // 2 + i) for i in range(3)]
    assert all(LONG_PIECE < len(w) <= BATCH_LONG_MAX for w in long)
    assert all(len(w) > BATCH_LONG_MAX for w in very_long)
    words = [w for trio in zip(short, long + short, very_long + short) for w in trio]
    words += short[len(words) // 3 :] + long[len(short) :]
    ids = tok.encode("".join(words))
    assert tok.merger._batch_state == "built"
    ranks = {pair: rank for rank, pair in enumerate(tok.merges)}
    inverse = {token: idx for idx, token in tok.vocab.items()}
    expected = [inverse[t] for w in words for t in reference_encode_piece(w.encode(), ranks)]
    assert ids == expected


def test_many_short_documents_get_the_batch_and_the_fast_split(tiktoken_gpt2):
    """Short documents between special tokens: encode and encode_array both merge the
    pre-tokens of all of them in one batch and split with the fast pattern (a text this long
    builds it however short its stretches are), with tiktoken's ids."""
    from bpe_studio.core.encode.encoder import BULK_TEXT
    from bpe_studio.core.pretokenization import re_split

    story = slice_head("chinese", 300_000) + slice_head("english", 300_000)
    docs = [story[i : i + 150] for i in range(0, len(story), 150)]
    text = EOT.join(docs)
    assert len(text) >= BULK_TEXT
    expected = tiktoken_gpt2.encode(text, allowed_special="all")
    for method in ("encode", "encode_array"):
        re_split._bmp_regex.cache_clear()
        tok = Tokenizer.from_files(
            FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", [EOT]
        )
        got = getattr(tok, method)(text)
        assert tok.merger._batch_state == "built", method
        assert re_split._bmp_regex.cache_info().currsize == 1, method
        assert list(got) == expected, method
