"""GPT-2's own files through our Tokenizer give exactly tiktoken's GPT-2 ids (tiktoken built
offline from the same vocabulary, see conftest.tiktoken_gpt2), on real text and on generated
Unicode; decode agrees too and round-trips."""

from __future__ import annotations

import unicodedata

import pytest
from core_helpers import CS336_TEXTS, EOT, SLICES, read_fixture, slice_head
from hypothesis import given, settings
from hypothesis import strategies as st
from text_strategies import DISAGREE, HYPO, PIECES, TEXTS, WIDE_CHARS

from bpe_studio.core.reference import GPT2_SPLIT_PATTERN


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


# --- long pre-tokens and other vocabularies -------------------------------------------------

LONG_RUNS = st.tuples(
    st.sampled_from(["a", "ab", "z", "é", "中", "文中", "0", "12", " ", "\n", "\t", "!", "😀"]),
    st.integers(min_value=20, max_value=400),
).map(lambda t: t[0] * t[1])


@HYPO
@given(st.lists(st.one_of(LONG_RUNS, st.sampled_from(PIECES)), min_size=1, max_size=6))
def test_long_pretokens_encode_like_tiktoken(gpt2_tokenizer, tiktoken_gpt2, parts):
    """Pre-tokens of hundreds of bytes (runs of one letter, digit, space or emoji)."""
    check_same(gpt2_tokenizer, tiktoken_gpt2, "".join(parts))


@pytest.fixture(scope="module")
def trained_pair(tmp_path_factory):
    """A tokenizer trained on Chinese and code, and tiktoken built from its vocabulary: ids
    are in merge order, so a token's id is its rank."""
    import tiktoken

    from bpe_studio.core import Tokenizer, train_bpe

    text = slice_head("chinese", 60_000) + slice_head("code", 60_000)
    path = tmp_path_factory.mktemp("trained") / "c.txt"
    path.write_bytes(text.encode())
    vocab, merges = train_bpe(path, 2_000, [EOT])
    enc = tiktoken.Encoding(
        name="trained_local",
        pat_str=GPT2_SPLIT_PATTERN,
        mergeable_ranks={tok: i for i, tok in vocab.items() if i != 256},
        special_tokens={EOT: 256},
    )
    return Tokenizer(vocab, merges, [EOT]), enc


@pytest.mark.parametrize("name", list(SLICES.values()))
def test_trained_tokenizer_encodes_like_tiktoken(trained_pair, name):
    tok, enc = trained_pair
    check_same(tok, enc, read_fixture(name))


@HYPO
@given(st.lists(st.one_of(LONG_RUNS, TEXTS), max_size=5))
def test_trained_tokenizer_generated_text(trained_pair, parts):
    tok, enc = trained_pair
    check_same(tok, enc, "".join(parts))


# --- the generated alphabet: assigned characters only (docs/unicode.md) ---------------------


@HYPO
@given(st.text(WIDE_CHARS, min_size=1))
def test_generated_characters_are_assigned(text):
    assert all(unicodedata.category(ch) != "Cn" for ch in text)


def test_generated_alphabet_is_classified_alike_by_tiktoken():
    """Every character the strategies may generate is a letter, number or space to tiktoken
    exactly when it is one to ``regex``. Probe: with the two-byte tokens "!" + byte in its
    ranks, tiktoken merges "!" with the character's first byte only when both are in one
    pre-token, that is when the character is neither letter, number nor space."""
    import regex
    import tiktoken

    ranks = {bytes([b]): b for b in range(256)}
    for b in range(0x80, 0x100):
        ranks[b"!" + bytes([b])] = len(ranks)
    probe = tiktoken.Encoding(
        name="probe", pat_str=GPT2_SPLIT_PATTERN, mergeable_ranks=ranks, special_tokens={}
    )
    excluded = set(DISAGREE)
    alphabet = [
        chr(c)
        for c in range(0x80, 0x110000)
        if not 0xD800 <= c <= 0xDFFF
        and unicodedata.category(chr(c)) != "Cn"
        and chr(c) not in excluded
    ]
    word = regex.compile(r"[\p{L}\p{N}\s]")
    differ = [
        f"U+{ord(ch):04X}"
        for ch in alphabet
        if (max(probe.encode("!" + ch)) < 256) != bool(word.match(ch))
    ]
    assert not differ, f"{len(differ)} characters, e.g. {differ[:5]}"
    # The probe can tell: a character new in Unicode 17 is a letter to regex only.
    assert bool(word.match("\U00010940")) != (max(probe.encode("!\U00010940")) < 256)
