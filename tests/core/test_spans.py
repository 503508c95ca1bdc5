"""Packed spans for viewers (``core.spans``): computed piece by piece, they equal
``Tokenizer.spans`` of the whole text; they stop when stale; UTF-16 offsets agree with Python's
own UTF-16 encoding. (Moved here from the GUI tests: the computation has no Qt.)"""

from __future__ import annotations

import pytest
from core_helpers import EOT, SLICES, read_fixture
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import HYPO, TEXTS

from bpe_studio.core import Tokenizer
from bpe_studio.core.explain.span_arrays import compute_spans
from bpe_studio.core.pretokenization.boundaries import SPECIALS_ONLY

MIXED = (
    "Once upon a time, a cat sat.<|endoftext|>\n中文分词：你好，世界！\n"
    "Emoji 😀😊 and café\t tabs  spaces\n\n" * 3
)


@pytest.fixture(scope="module")
def specials_only(chinese_tokenizer):
    """The same tokenizer as if its pattern had no known cut rules (a custom pattern)."""
    tok = Tokenizer(chinese_tokenizer.vocab, chinese_tokenizer.merges, [EOT])
    tok.cut_rules = SPECIALS_ONLY
    return tok


def test_compute_spans_equals_tokenizer_in_small_pieces(chinese_tokenizer):
    text = read_fixture(SLICES["mixed_web"])[:40_000] + MIXED
    packed = compute_spans(chinese_tokenizer, text, piece=500)
    assert packed is not None
    assert packed.to_spans() == chinese_tokenizer.spans(text)
    assert (
        packed.utf8_length
        == len(text.encode())
        == sum(len(chinese_tokenizer.vocab[i]) for i in packed.ids)
    )


@pytest.mark.parametrize("name", list(SLICES.values()))
def test_compute_spans_of_fixtures(chinese_tokenizer, specials_only, name):
    text = read_fixture(name)[:50_000]
    expected = chinese_tokenizer.spans(text)
    for tok in (chinese_tokenizer, specials_only):
        packed = compute_spans(tok, text, piece=700)
        assert packed is not None and packed.to_spans() == expected


@HYPO
@given(TEXTS, st.integers(1, 20))
def test_compute_spans_of_generated_text(gpt2_tokenizer, text, piece):
    packed = compute_spans(gpt2_tokenizer, text, piece=piece)
    assert packed is not None and packed.to_spans() == gpt2_tokenizer.spans(text)


def test_stale_computation_stops(chinese_tokenizer):
    calls = []

    def stale():
        calls.append(1)
        return len(calls) > 2

    assert compute_spans(chinese_tokenizer, MIXED * 50, stale, piece=100) is None
    assert len(calls) == 3


def test_queries(chinese_tokenizer):
    packed = compute_spans(chinese_tokenizer, MIXED, piece=50)
    assert packed is not None and len(packed) == len(chinese_tokenizer.spans(MIXED))
    for char in range(len(MIXED)):
        holding = [k for k, s in enumerate(packed.to_spans()) if s.start <= char < s.end]
        assert list(packed.covering(char)) == holding
    # UTF-16 offsets: Python's own UTF-16 encoding is the reference.
    for char in range(len(MIXED) + 1):
        unit = len(MIXED[:char].encode("utf-16-le")) // 2
        assert packed.to_utf16(char) == unit
        assert packed.from_utf16(unit) == char
