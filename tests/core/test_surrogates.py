"""Text holding surrogates (U+D800..U+DFFF) encodes as tiktoken encodes it: a surrogate pair as
the character it stands for, a lone surrogate as U+FFFD; in encode, encode_array,
encode_iterable, spans and counting alike. tiktoken's GPT-2 (built offline) is the oracle."""

from __future__ import annotations

import pytest
from core_helpers import EOT, write_text
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import HYPO, PIECES, TEXTS

from bpe_studio.core import CorpusError, count_file, count_text
from bpe_studio.core.encode.encode_file import encode_file

LONE = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00"])
PAIRS = st.sampled_from(["\ud83d\ude00", "\ud800\udc00", "\udbff\udfff"])
WITH_SURROGATES = st.lists(st.one_of(TEXTS, LONE, PAIRS, st.sampled_from(PIECES)), max_size=12).map(
    "".join
)


def as_tiktoken_sees_it(text: str) -> str:
    # What tiktoken's Encoding.encode does after a UnicodeEncodeError.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def test_a_lone_surrogate_is_u_fffd(gpt2_tokenizer, tiktoken_gpt2):
    assert gpt2_tokenizer.encode("\ud800") == tiktoken_gpt2.encode("\ud800")
    assert gpt2_tokenizer.encode("\ud800") == gpt2_tokenizer.encode("\ufffd")
    assert gpt2_tokenizer.encode("\ud83d\ude00") == gpt2_tokenizer.encode("😀")


@HYPO
@given(WITH_SURROGATES)
def test_encode_like_tiktoken(gpt2_tokenizer, tiktoken_gpt2, text):
    expected = tiktoken_gpt2.encode(text, allowed_special="all")
    assert gpt2_tokenizer.encode(text) == expected
    assert gpt2_tokenizer.encode_array(text).tolist() == expected
    assert [s.id for s in gpt2_tokenizer.spans(text)] == expected
    assert gpt2_tokenizer.decode(expected) == as_tiktoken_sees_it(text)


@HYPO
@given(WITH_SURROGATES, st.data())
def test_streaming_like_tiktoken(gpt2_tokenizer, tiktoken_gpt2, text, data):
    """Chunks may split a surrogate pair: it still becomes one character."""
    points = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    expected = tiktoken_gpt2.encode(text, allowed_special="all")
    assert list(gpt2_tokenizer.encode_iterable(chunks)) == expected
    assert list(gpt2_tokenizer.encode_iterable(iter(text))) == expected


def test_streaming_a_pair_split_across_long_chunks(gpt2_tokenizer, tiktoken_gpt2):
    text = ("word " * 20_000 + "\ud83d") + ("\ude00 more" + " text" * 20_000)
    expected = tiktoken_gpt2.encode(text)
    cut = text.index("\ude00")
    assert list(gpt2_tokenizer.encode_iterable([text[:cut], text[cut:]])) == expected


def test_spans_map_back_to_the_original_text(gpt2_tokenizer):
    text = "a\ud83d\ude00b\ud800c"
    fixed = as_tiktoken_sees_it(text)
    assert fixed == "a😀b\ufffdc"
    where = [0, 1, 3, 4, 5, 6]  # each character of fixed (and its end) in text
    expected = [(i, where[a], where[b], p) for i, a, b, p in gpt2_tokenizer.spans(fixed)]
    assert [tuple(s) for s in gpt2_tokenizer.spans(text)] == expected
    assert any(a == 1 and b == 3 for _, a, b, _ in expected)  # the pair: both surrogates


@HYPO
@given(WITH_SURROGATES)
def test_counting_like_encoding(text):
    assert count_text(text, [EOT]) == count_text(as_tiktoken_sees_it(text), [EOT])


def test_files_cannot_hold_surrogates(tmp_path, gpt2_tokenizer):
    """UTF-8 has no form for a surrogate: its three-byte encoding is invalid, and a file with
    one is refused naming the offset, by counting and by encode_file alike."""
    path = tmp_path / "s.txt"
    path.write_bytes(b"hello " + "\ud800".encode("utf-8", "surrogatepass") + b" world")
    with pytest.raises(CorpusError, match="offset 6"):
        count_file(path, [EOT])
    with pytest.raises(CorpusError, match="offset 6"):
        encode_file(gpt2_tokenizer, path, tmp_path / "ids.npy", workers=1)
    ok = write_text(tmp_path / "ok.txt", "hello 😀 world")
    encode_file(gpt2_tokenizer, ok, tmp_path / "ids.npy", workers=1)
