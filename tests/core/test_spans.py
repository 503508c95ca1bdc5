"""Packed spans for viewers (``core.explain.span_arrays``): computed piece by piece, they equal
``Tokenizer.spans`` of the whole text; they stop when stale; UTF-16 offsets agree with Python's
own UTF-16 encoding. (Moved here from the GUI tests: the computation has no Qt.)"""

from __future__ import annotations

import random
import re

import pytest
import regex
from core_helpers import EOT, SLICES, read_fixture
from hf_shapes import flagged_file
from hypothesis import given
from hypothesis import strategies as st
from reference_encoder import ReferenceEncoder
from text_strategies import HYPO, TEXTS

from bpe_studio.core import Tokenizer
from bpe_studio.core.explain.span_arrays import compute_spans
from bpe_studio.core.explain.spans_at_step import pretoken_starts
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


# Patterns whose matches depend on what is around them. Found by fuzzing: the spans matched
# each stretch between special tokens inside the whole text, where a lookbehind or \b saw the
# special token before it and ^ did not match after it; encoding matches the stretch alone.
LOOKING_AROUND = [r"(?<=>)\d|\d+|\D", r"^\d|\d+|\D", r"\b\d|\d+|\D", r"(?<![a>])\d+|\d|\D"]


@pytest.mark.parametrize("pattern", LOOKING_AROUND)
def test_spans_of_a_pattern_that_looks_around_equal_encoding(pattern):
    vocab = {i: bytes([i]) for i in range(256)} | {256: EOT.encode(), 257: b"12", 258: b"123"}
    merges = [(b"1", b"2"), (b"12", b"3")]
    tok = Tokenizer(vocab, merges, [EOT], pattern)
    reference = ReferenceEncoder(vocab, merges, {EOT: 256}, pattern)
    splitter = regex.compile(pattern)
    rng = random.Random(pattern)
    for _ in range(200):
        text = "".join(rng.choice(["123", "1", "a", "b>", " ", EOT]) for _ in range(12))
        expected = reference.encode(text)
        assert [s.id for s in tok.spans(text)] == expected, text
        packed = compute_spans(tok, text, piece=7)
        assert packed is not None and packed.ids.tolist() == expected, text
        # Where each pre-token starts, found independently: each stretch matched alone.
        starts, pieces, at = [], {}, 0
        for stretch in text.split(EOT):
            for m in splitter.finditer(stretch):
                starts.append(at + m.start())
                pieces.update((at + c, m.group()) for c in range(m.start(), m.end()))
            at += len(stretch) + len(EOT)
            if at <= len(text):
                starts += [at - len(EOT), at]
                pieces.update((c, EOT) for c in range(at - len(EOT), at))
        assert pretoken_starts(tok, text).tolist() == starts, text
        assert [packed.piece_at(c) for c in range(len(text))] == [
            pieces[c] for c in range(len(text))
        ], text


def test_piece_at_follows_flagged_added_tokens(tmp_path):
    # Found by an audit: with the cursor inside " swords" (the single_word "word" inside a
    # word is no added token) the piece sent to Step-through was "", and in "  <tool>" (lstrip)
    # the spaces were a piece of their own though the added token takes them. An added token
    # is the piece the encoder takes there, so Step-through shows it (a later audit).
    tok = Tokenizer.from_hf(flagged_file(tmp_path))
    text = " swords  <tool>a word"
    spans = compute_spans(tok, text)
    assert spans is not None
    pieces = [spans.piece_at(c) for c in range(len(text))]
    assert pieces == [" swords"] * 7 + ["<tool>"] * 8 + ["a"] + [" "] + ["word"] * 4


def test_spans_refuse_text_the_pattern_leaves_out_as_encode_does(gpt2_tokenizer):
    """Found on a real display: with the pattern x*, spans (and the editor's arrays) left the
    text out and the editor showed an internal error later; encode says what is wrong."""
    from bpe_studio.core.pretokenization.pretokenizer import UncoveredText

    tok = Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges, pattern="x*")
    for text in ("Once upon", "xx y", "xx\n"):
        with pytest.raises(UncoveredText) as by_encode:
            tok.encode(text)
        with pytest.raises(UncoveredText) as by_spans:
            tok.spans(text)
        assert str(by_spans.value) == str(by_encode.value)
        with pytest.raises(UncoveredText):
            compute_spans(tok, text)
    covering = Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges, pattern=r"x+|[^x]")
    assert [s.id for s in covering.spans("xx y")] == covering.encode("xx y")


def test_text_the_pattern_leaves_out_is_named_by_its_place_in_the_whole_text(gpt2_tokenizer):
    """Found by the re-check: after a special token, the character was counted from the
    special token (character 3 of a text whose tab was at 320,016), in encode, spans and
    encode_iterable alike."""
    from bpe_studio.core.pretokenization.pretokenizer import UncoveredText

    vocab, merges = gpt2_tokenizer.vocab, gpt2_tokenizer.merges
    tok = Tokenizer(vocab, merges, [EOT], pattern=r"\p{L}+|\p{N}+| |\n")
    text = "hello world 123\n" * 2000 + EOT + "abc\tdef"
    at = text.index("\t")
    where = f"at character {at} (line 2001, column {at - text.rindex(chr(10), 0, at)})"
    blocks = (text[i : i + 1000] for i in range(0, len(text), 1000))
    for call in (tok.encode, tok.spans, lambda t: list(tok.encode_iterable(blocks))):
        with pytest.raises(UncoveredText, match=re.escape(where)):
            call(text)
