"""GPT-2's own files through our Tokenizer give exactly tiktoken's GPT-2 ids (tiktoken built
offline from the same vocabulary, see conftest.tiktoken_gpt2), on real text and on generated
Unicode; decode agrees too and round-trips."""

from __future__ import annotations

import pytest
from core_helpers import CS336_TEXTS, EOT, SLICES, read_fixture
from hypothesis import given, settings
from hypothesis import strategies as st
from text_strategies import HYPO, PIECES, TEXTS, WIDE_CHARS


def check_same(tokenizer, enc, text):
    ours = tokenizer.encode(text)
    theirs = enc.encode(text, allowed_special="all")
    assert ours == theirs
    assert tokenizer.decode(ours) == text
    return ours


@pytest.mark.parametrize("name", list(SLICES.values()) + CS336_TEXTS)
def test_fixture_texts_encode_like_tiktoken(gpt2_tokenizer, tiktoken_gpt2, name):
    text = read_fixture(name)
    ids = check_same(gpt2_tokenizer, tiktoken_gpt2, text)
    assert tiktoken_gpt2.decode(ids) == text
    assert len(ids) > len(text.encode()) // 8  # sanity: something was really encoded


def test_known_gpt2_ids(gpt2_tokenizer):
    # Well-known GPT-2 ids: "Hello" 15496, " world" 995, "<|endoftext|>" 50256.
    assert gpt2_tokenizer.encode("Hello world<|endoftext|>") == [15496, 995, 50256]


@HYPO
@given(TEXTS)
def test_generated_text_encodes_like_tiktoken(gpt2_tokenizer, tiktoken_gpt2, text):
    check_same(gpt2_tokenizer, tiktoken_gpt2, text)


@HYPO
@given(st.text(WIDE_CHARS))
def test_plain_unicode_text_encodes_like_tiktoken(gpt2_tokenizer, tiktoken_gpt2, text):
    check_same(gpt2_tokenizer, tiktoken_gpt2, text)


@HYPO
@given(st.text(st.characters(max_codepoint=127)))
def test_ascii_text_encodes_like_tiktoken(gpt2_tokenizer, tiktoken_gpt2, text):
    # Pure ASCII may take a separate fast path in the pre-tokenizer.
    check_same(gpt2_tokenizer, tiktoken_gpt2, text)


@settings(deadline=None, max_examples=60, database=None)
@given(TEXTS, st.lists(st.sampled_from(PIECES + ["a", "bc", "12", ".", "\n"]), min_size=1))
def test_long_text_encodes_like_tiktoken(gpt2_tokenizer, tiktoken_gpt2, a, b):
    """Texts over 8K characters, mostly ASCII with generated pieces in between: long text
    may be pre-tokenized in blocks."""
    unit = a + "".join(b)
    reps = 9_000 // max(len(unit), 1) + 1
    text = (unit * reps)[:20_000]
    ascii_block = "the cat sat. " * 400
    check_same(gpt2_tokenizer, tiktoken_gpt2, ascii_block + text + ascii_block + text)


@HYPO
@given(st.lists(st.integers(min_value=0, max_value=50256), max_size=40))
def test_decode_of_any_ids_matches_tiktoken(gpt2_tokenizer, tiktoken_gpt2, ids):
    # Arbitrary ids often cut UTF-8 characters apart: both must replace alike.
    assert gpt2_tokenizer.decode(ids) == tiktoken_gpt2.decode(ids)
    assert gpt2_tokenizer.decode_bytes(ids) == tiktoken_gpt2.decode_bytes(ids)


def test_decode_replaces_like_tiktoken_for_split_characters(gpt2_tokenizer, tiktoken_gpt2):
    ids = gpt2_tokenizer.encode("中文 😀 ok")
    for k in range(len(ids)):
        part = ids[:k] + ids[k + 1 :]  # dropping one token breaks a character
        assert gpt2_tokenizer.decode(part) == tiktoken_gpt2.decode(part)


def test_special_token_only_where_allowed(gpt2_tokenizer, tiktoken_gpt2):
    """Without special tokens our tokenizer encodes the text of one as ordinary text, as
    tiktoken does with ``disallowed_special=()``."""
    from bpe_studio.core import Tokenizer

    plain = Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges)
    text = f"a{EOT}b {EOT}"
    assert plain.encode(text) == tiktoken_gpt2.encode(text, disallowed_special=())
    assert 50256 not in plain.encode(text)
    assert gpt2_tokenizer.encode(text).count(50256) == 2
