"""A short text's encode (``Encoder.ids``): the lookups-only way a line of a book takes must
give tiktoken's ids whatever the line holds (special tokens, surrogates, a full cache), refuse
what the general path refuses in the same words, and keep counting a line of Chinese towards
loading the kernels."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from reference_encoder import ASSIGNED_TEXTS, shipped_tiktoken

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode import encoder as encoder_module
from bpe_studio.core.encode.merging import kernel_start
from bpe_studio.core.encode.merging import merger as merger_module
from bpe_studio.core.pretokenization.pretokenizer import UncoveredText

EOT = "<|endoftext|>"
LINES = [
    "",
    "The quick brown fox.",
    EOT,
    EOT + "The end." + EOT,
    "a" + EOT + EOT + "b",
    "def f(x):\n    return x  # note",
    "lone \ud800 surrogate",
    "a pair \ud83d\ude00 of them",
    "\ud83d\ude00" + EOT,
    "\u201cCaf\u00e9,\u201d she said.",
    "\u4e2d\u6587\u7684\u4e00\u884c",
    "x" * (encoder_module.SHORT_TEXT - 1),
]


@pytest.fixture(scope="module")
def cl100k():
    return Tokenizer.preset("cl100k_base"), shipped_tiktoken("cl100k_base")


def _expected(enc, text):
    return enc.encode(text, allowed_special="all")


def test_short_lines_give_tiktokens_ids(cl100k):
    tok, enc = cl100k
    for text in LINES:
        assert tok.encode(text) == _expected(enc, text), text
        assert tok.encode(text, disallowed_special=()) == enc.encode(text, disallowed_special=())


@given(text=ASSIGNED_TEXTS)
def test_generated_short_texts_give_tiktokens_ids(cl100k, text):
    tok, enc = cl100k
    assert tok.encode(text) == _expected(enc, text)
    # Twice: the second finds every piece cached.
    assert tok.encode(text) == _expected(enc, text)


def test_a_disallowed_special_token_is_refused_in_a_short_text(cl100k):
    tok, _ = cl100k
    with pytest.raises(ValueError, match="at character 4"):
        tok.encode("abc " + EOT, allowed_special=set())


def test_a_full_cache_is_replaced_and_the_ids_stay_right(monkeypatch, cl100k):
    _, enc = cl100k
    tok = Tokenizer.preset("cl100k_base")
    monkeypatch.setattr(merger_module, "CACHE_LIMIT", 3)
    lines = [f"line {i} of {w}" for i, w in enumerate(["many", "short", "texts"] * 20)]
    for text in lines:
        assert tok.encode(text) == _expected(enc, text)
    assert len(tok._encoder.merger._cache) <= 3 + len(enc.encode(lines[-1]))


def test_text_a_pattern_leaves_out_is_named_in_the_whole_text():
    base = Tokenizer.preset("gpt2")
    tok = Tokenizer(base.vocab, base.merges, [EOT], pattern=r"\p{L}+| ")
    with pytest.raises(UncoveredText, match="at character 4 "):
        tok.encode("abc 1")
    with pytest.raises(UncoveredText, match="at character 17 "):
        tok.encode("abc" + EOT + " 1")


def test_short_lines_of_chinese_count_towards_the_load_and_english_ones_do_not(monkeypatch):
    monkeypatch.delenv(kernel_start.ENV, raising=False)
    kernel_start.forget()
    tok = Tokenizer.preset("o200k_base")
    for i in range(50):
        tok.encode(f"The line number {i} of a book, in English.")
    assert kernel_start.tally_python_path(0.0) == 0.0
    for i in range(50):
        tok.encode(f"\u8fd9\u662f\u7b2c{i}\u884c\u4e2d\u6587")
    assert kernel_start.tally_python_path(0.0) > 0.0


FIXTURES = Path(__file__).parents[1] / "fixtures"


def _medium_texts() -> list[str]:
    """Texts from 128 characters to under ``SPLIT_WHOLE_MIN``, which take the lean way on the
    Python path too: lines of web text and Chinese (the fixtures), joined with special
    tokens, surrogates and a long run of spaces."""
    texts = []
    for name in ("mixed_web_slice.txt", "chinese_slice.txt", "code_slice.txt"):
        lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
        texts += [line for line in lines if 128 <= len(line) < 4000][:40]
        texts.append("\n".join(lines[:60])[: encoder_module.SPLIT_WHOLE_MIN - 1])
    texts += [
        texts[0] + EOT + texts[1] + EOT,
        EOT + texts[2] + "\ud800 and \ud83d\ude00" + texts[3],
        texts[4] + " " * 300 + "\n\n" + texts[5],
    ]
    assert all(128 <= len(t) < encoder_module.SPLIT_WHOLE_MIN for t in texts)
    return texts


@pytest.mark.parametrize("mode", ["python", ""])
def test_texts_below_the_whole_split_give_tiktokens_ids_on_either_path(monkeypatch, cl100k, mode):
    monkeypatch.setenv(kernel_start.ENV, mode)
    _, enc = cl100k
    tok = Tokenizer.preset("cl100k_base")
    for text in _medium_texts() * 2:  # twice: the second time every piece is cached
        assert tok.encode(text) == _expected(enc, text), text[:60]
        assert tok.encode(text, disallowed_special=()) == enc.encode(text, disallowed_special=())


def test_a_medium_text_a_pattern_leaves_out_is_named_in_the_whole_text(monkeypatch):
    monkeypatch.setenv(kernel_start.ENV, "python")
    base = Tokenizer.preset("gpt2")
    tok = Tokenizer(base.vocab, base.merges, [EOT], pattern=r"\p{L}+| ")
    with pytest.raises(UncoveredText, match="at character 233 "):
        tok.encode("ab " * 60 + EOT + "abc " * 10 + "1")


def test_medium_english_texts_count_towards_the_load(monkeypatch):
    monkeypatch.delenv(kernel_start.ENV, raising=False)
    kernel_start.forget()
    tok = Tokenizer.preset("o200k_base")
    for i in range(20):
        tok.encode(f"The line number {i} of a book, in English, long enough to pass. " * 3)
    assert kernel_start.tally_python_path(0.0) > 0.0


def test_medium_texts_on_the_python_path_skip_the_general_one(monkeypatch, cl100k):
    # The general path's segments and arrays cost a line of web text a tenth of its encode.
    monkeypatch.setenv(kernel_start.ENV, "python")
    _, enc = cl100k
    tok = Tokenizer.preset("cl100k_base")

    def general(*args, **kwargs):
        raise AssertionError("the general path")

    monkeypatch.setattr(encoder_module.Encoder, "any_array", general)
    for text in _medium_texts():
        assert tok.encode(text) == _expected(enc, text), text[:60]
