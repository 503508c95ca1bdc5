"""Long non-ASCII pre-tokens merged from their characters' tokens (``char_bpe``): every result
the check passes equals a slow one-pair-at-a-time reference, the check does reject wrong
guesses, and the tokenizer's ids stay tiktoken's on long Han runs and mixed scripts."""

from __future__ import annotations

from unittest import mock

import pytest
import regex
import tiktoken
from core_helpers import EOT, FIXTURES, read_fixture, slice_head
from hypothesis import given
from hypothesis import strategies as st
from reference_encoder import ReferenceEncoder, shipped_tiktoken
from text_strategies import HYPO

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.core.encode.merging.char_bpe import CharBpe
from bpe_studio.core.encode.merging.merger import CHAR_MIN_BYTES

ENCODINGS = {"cl100k": "cl100k_base", "o200k": "o200k_base"}
_LOADED: dict[str, tuple[Tokenizer, tiktoken.Encoding, ReferenceEncoder]] = {}


def loaded(name: str) -> tuple[Tokenizer, tiktoken.Encoding, ReferenceEncoder]:
    """The preset, tiktoken's encoding from the same rank file, and the slow reference."""
    if name not in _LOADED:
        encoding = ENCODINGS[name]
        enc = shipped_tiktoken(encoding)
        tok = Tokenizer.preset(encoding)
        specials = {s: tok.special_id(s) for s in tok.special_tokens}
        _LOADED[name] = (tok, enc, ReferenceEncoder(tok.vocab, tok.merges, specials, tok.pattern))
    return _LOADED[name]


def char_pieces(text: str, pattern: str) -> list[str]:
    """The distinct pre-tokens the tokenizer sends to the character path."""
    found = set(regex.findall(pattern, text))
    return sorted(p for p in found if len(p.encode()) >= CHAR_MIN_BYTES and not p.isascii())


def run_char(tok: Tokenizer, pieces: list[str]) -> tuple[list[list[int]], list[bool]]:
    batch = tok.merger._batch_for(10**9)
    assert batch is not None
    flat, ends, ok = CharBpe(batch, tok.vocab.__getitem__).merge(pieces, tok.merger._merge_ids)
    ids = flat.tolist()
    return [ids[a:b] for a, b in zip([0, *ends], ends)], ok.tolist()


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_checked_results_equal_the_reference_and_the_check_rejects_wrong_ones(name):
    tok, _, ref = loaded(name)
    text = read_fixture("chinese_slice.txt")[:120_000] + read_fixture("mixed_web_slice.txt")
    pieces = char_pieces(text, tok.pattern)
    results, ok = run_char(tok, pieces)
    expected = [ref._bpe(p) for p in pieces]
    passed = [i for i, good in enumerate(ok) if good]
    assert len(passed) > 0.9 * len(pieces)  # the path is worth taking
    assert [results[i] for i in passed] == [expected[i] for i in passed]
    # Some guesses are wrong (bytes merged across two characters first), and the check
    # catches them: without it, these ids would be kept.
    wrong = [i for i, good in enumerate(ok) if not good and results[i] != expected[i]]
    assert wrong


def test_trained_tokenizer_with_tokens_that_are_not_their_own_merge_result(tmp_path):
    """A tokenizer trained here: its tokens need not merge back to themselves alone, and
    every checked result must still equal the reference."""
    text = slice_head("chinese", 80_000) + slice_head("mixed_web", 40_000)
    path = tmp_path / "c.txt"
    path.write_bytes(text.encode())
    vocab, merges = train_bpe(path, 2_000, [EOT], pattern="o200k")
    tok = Tokenizer(vocab, merges, [EOT], pattern="o200k")
    ref = ReferenceEncoder(tok.vocab, tok.merges, {EOT: tok.special_id(EOT)}, tok.pattern)
    pieces = char_pieces(read_fixture("chinese_slice.txt")[100_000:200_000], tok.pattern)
    results, ok = run_char(tok, pieces)
    for piece, ids, good in zip(pieces, results, ok):
        if good:
            assert ids == ref._bpe(piece), piece
    assert tok.encode(text) == ref.encode(text)


HAN = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
OTHER = st.sampled_from(
    list("аяЖкαβΩäöüßéñçłあいカナ한국어ไทยא्क़\u0301\u0651，。、！？「」：；")
    + ["\U0001f600", "\U00020000", "\U0001d400", " ", "\n", "'s", "1234", "X", "é"]
)
RUNS = st.lists(
    st.one_of(st.text(HAN, min_size=1, max_size=40), st.lists(OTHER, max_size=6).map("".join)),
    max_size=30,
).map("".join)


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_long_han_runs_and_mixed_scripts_equal_tiktoken(name):
    """Every batch path forced on (no minimum counts), so short generated texts take them."""
    tok, enc, _ = loaded(name)
    fresh = Tokenizer(tok.vocab, tok.merges, {s: tok.special_id(s) for s in tok.special_tokens},
                      tok.pattern)  # fmt: skip

    @HYPO
    @given(RUNS)
    def check(text):
        fresh.merger._cache.clear()
        with (
            mock.patch("bpe_studio.core.encode.merging.merger.BATCH_MIN", 1),
            mock.patch("bpe_studio.core.encode.merging.merger.BATCH_BUILD_MIN", 1),
            mock.patch("bpe_studio.core.encode.merging.merger.BATCH_LONG_MIN", 1),
        ):
            ids = fresh.encode(text)
            fresh.merger._cache.clear()
            array = fresh.encode_array(text, "uint32")
        expected = enc.encode(text, allowed_special="all")
        assert ids == expected
        assert array.tolist() == expected

    check()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ENCODINGS))
def test_whole_fixture_corpora_equal_tiktoken(name):
    """The Chinese fixture whole (long Han runs in numbers) and every other fixture, through
    encode and encode_array, each on a tokenizer whose cache has seen only the fixtures
    before it (Chinese first: an empty cache). A fresh tokenizer for each file and path was
    most of this test's time (building one takes a quarter of a second)."""
    tok, enc, _ = loaded(name)
    paths = sorted(FIXTURES.glob("*.txt"), key=lambda p: (p.name != "chinese_slice.txt", p.name))
    assert paths[0].name == "chinese_slice.txt"
    by_list = Tokenizer(tok.vocab, tok.merges, pattern=tok.pattern)
    by_array = Tokenizer(tok.vocab, tok.merges, pattern=tok.pattern)
    for path in paths:
        text = path.read_text(encoding="utf-8")
        expected = enc.encode(text, disallowed_special=())
        assert by_list.encode(text) == expected, path.name
        assert by_array.encode_array(text, "uint32").tolist() == expected, path.name
