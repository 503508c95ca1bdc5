"""The compiled encoder's cutting of new pieces into parts (``encode_kernel._from_parts``,
``_cut_between``, ``char_cuts.CharCuts.kernel_tables``): the compiled test of a boundary is
``CharCuts.safe``'s on every pair of a set of three-byte characters of several scripts and on
the pairs the vocabulary's own straddles name; and ids stay tiktoken's and the Python path's on
generated runs of such characters, encoded three times (a new piece is cached as parts the
first time, whole the second, looked up the third), with the caches grown from tiny and
started afresh.

Oracles: ``CharCuts.safe`` (itself checked against every split of every token in
``test_char_cuts.py``), tiktoken built offline from the shipped rank files, and the Python path.
"""

from __future__ import annotations

import random
import unicodedata

import numpy as np
import pytest
from core_helpers import SLICES, read_fixture
from encode_paths import compiled_ids, python_ids, tiktoken_peer

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.merging import compiled, encode_kernel, kernel_start, piece_table

PRESETS = ("gpt2", "cl100k_base", "o200k_base")
# Blocks of three-byte characters: CJK punctuation, kana, Han, Hangul, fullwidth forms.
BLOCKS = [(0x3000, 0x3040), (0x3041, 0x3100), (0x4E00, 0x4F00), (0x6B00, 0x6B40),
          (0x7684, 0x76A0), (0xAC00, 0xAC80), (0xFF01, 0xFF5F)]  # fmt: skip
CHARS = [chr(c) for a, b in BLOCKS for c in range(a, b) if unicodedata.category(chr(c)) != "Cn"]


@pytest.fixture(autouse=True)
def kernels():
    if not kernel_start.prepare():
        pytest.skip(f"the compiled encoder is unavailable here: {kernel_start.failure()}")


@pytest.fixture(scope="module", params=PRESETS)
def preset(request):
    return Tokenizer.preset(request.param)


def _straddle_pairs(tables) -> list[tuple[int, int]]:
    """Pairs the tables name as possibly unsafe: the whole pairs, and each character with a
    mask against a few others."""
    whole = tables.whole
    pairs = list(zip((whole >> 16).tolist()[:3000], (whole & 0xFFFF).tolist()[:3000]))
    masked = np.flatnonzero(tables.per_char[0::2] | (tables.per_char[1::2] & 0xFFFF))
    others = [ord(c) for c in CHARS[::37]]
    for c in masked.tolist()[:200]:
        pairs += [(c, o) for o in others] + [(o, c) for o in others]
    return pairs


def test_the_compiled_cut_test_is_char_cuts_test(preset):
    merger = preset.merger
    cuts = merger._char_cuts()
    tables = merger.compiled().cuts
    sample = [ord(c) for c in CHARS[::5]]
    pairs = [(x, y) for x in sample for y in sample] + _straddle_pairs(tables)
    pairs += [(0x41, 0x4E00), (0x4E00, 0x41), (0xE9, 0x4E00), (0x1F600, 0x4E00)]
    left = np.array([p[0] for p in pairs], np.int64)
    right = np.array([p[1] for p in pairs], np.int64)
    expected = cuts.safe(left, right).tolist()
    got = [bool(encode_kernel._cut_between(x, y, tables)) for x, y in pairs]
    assert got == expected
    # Both answers occur, or the comparison would prove little.
    assert 0 < sum(expected) < len(expected)


def _runs(seed: int, n: int) -> str:
    """Text of runs of three-byte characters (some repeated, as words are), with ASCII,
    spaces, digits and an emoji between them."""
    rng = random.Random(seed)
    words = ["".join(rng.choices(CHARS, k=rng.randint(1, 4))) for _ in range(300)]
    out = []
    for _ in range(n):
        run = "".join(rng.choices(words, k=rng.randint(1, 8)))
        out.append(run + rng.choice([" ", "", "，", "a ", "12", "😀", "\n", "。"]))
    return "".join(out)


@pytest.mark.parametrize("thrifty", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_cut_pieces_equal_tiktoken_cold_second_and_third_time(preset, seed, thrifty, monkeypatch):
    # Thrifty (a long text's rule): a cut piece is entered whole from its second sighting.
    monkeypatch.setattr(compiled, "THRIFTY_CHARS", 0 if thrifty else 1 << 40)
    tok = Tokenizer.preset(preset.name)  # a fresh cache
    text = _runs(seed, 3000)
    expected = tiktoken_peer(tok).encode(text, allowed_special="all")
    assert python_ids(tok, text) == expected
    entries = []
    for _ in range(3):
        assert compiled_ids(tok, text) == expected
        entries.append(tok.merger.compiled().cache.entries)
    assert tok.merger.compiled().part_cache.entries > 0, "no piece was cut"
    # Thrifty, the second encode enters the pieces the first saw once; else none is new.
    assert (entries[1] > entries[0]) == thrifty and entries[2] == entries[1]


@pytest.mark.parametrize("k", [500, 5000])
def test_cut_pieces_of_truncations_equal_python(k):
    tok = Tokenizer.preset("o200k_base").truncated(k)
    text = _runs(3, 1000) + read_fixture(SLICES["chinese"])[:5000]
    assert compiled_ids(tok, text) == python_ids(tok, text)


@pytest.mark.parametrize("thrifty", [False, True])
def test_both_caches_grow_and_stay_bounded(monkeypatch, thrifty):
    monkeypatch.setattr(compiled, "THRIFTY_CHARS", 0 if thrifty else 1 << 40)
    for name, value in [("START_ENTRIES", 16), ("START_KEYS", 64), ("START_VALS", 64),
                        ("MAX_ENTRIES", 128), ("MAX_KEYS", 1024), ("MAX_VALS", 2048)]:  # fmt: skip
        monkeypatch.setattr(piece_table, name, value)
    tok = Tokenizer.preset("cl100k_base")
    text = read_fixture(SLICES["chinese"])[:30_000] + _runs(4, 2000)
    expected = tiktoken_peer(tok).encode(text, allowed_special="all")
    assert compiled_ids(tok, text) == expected
    assert compiled_ids(tok, text) == expected
    merger = tok.merger.compiled()
    for cache in (merger.cache, merger.part_cache):
        assert 0 < cache.entries <= 128
        assert len(cache.keys) <= 1024 and len(cache.vals) <= 2048
