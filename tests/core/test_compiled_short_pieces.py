"""The compiled encoder's table of short pieces (``encode_kernel._short_key``, ``_short_slot``,
``piece_table.ShortTable``): pieces of up to eight characters below U+00FF packed in one
integer, cached and looked up as whole tokens in one probe. The packing tells every such
piece from every other and refuses every other piece; ids stay tiktoken's and the Python
path's on generated text of such characters and of the first characters past them, encoded
three times (new pieces, then hits), with the table grown from tiny and started afresh; a
short piece of more ids than a value holds, and a vocabulary of ids past the values' reach,
still get their ids.

Oracles: tiktoken built offline from the shipped rank files, and the Python path.
"""

from __future__ import annotations

import itertools
import random
import string
import unicodedata

import numpy as np
import pytest
from encode_paths import compiled_ids, python_ids, tiktoken_peer

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.encoder import codepoints
from bpe_studio.core.encode.merging import encode_kernel, kernel_start, piece_table

PRESETS = ("gpt2", "cl100k_base", "o200k_base")
# What short pieces are made of: ASCII (controls too) and Latin-1's letters and signs.
LATIN1 = [chr(c) for c in range(0xA0, 0xFF) if unicodedata.category(chr(c)) != "Cn"]
SHORT_CHARS = list(string.ascii_letters + string.digits + string.punctuation) + LATIN1
SHORT_CHARS += ["\x00", "\x01", "\x7f"]
# The first characters past them (U+00FF itself, Latin Extended-A, Greek, Cyrillic, Han).
PAST = ["\u00ff", "\u0100", "\u0101", "\u03a9", "\u0416", "\u4e2d"]
SEPARATORS = [" ", "", "\n", ", ", "  ", "\t", ". "]


@pytest.fixture(autouse=True)
def kernels():
    if not kernel_start.prepare():
        pytest.skip(f"the compiled encoder is unavailable here: {kernel_start.failure()}")


def _words(seed: int, n: int) -> str:
    """Words of 1 to 11 characters (around the eight a short piece holds), mostly of short
    pieces' characters, some with a character past them, many repeated."""
    rng = random.Random(seed)
    vocab = []
    for _ in range(600):
        word = rng.choices(SHORT_CHARS, k=rng.randint(1, 11))
        if rng.random() < 0.15:
            word[rng.randrange(len(word))] = rng.choice(PAST)
        vocab.append("".join(word))
    return "".join(rng.choice(vocab) + rng.choice(SEPARATORS) for _ in range(n))


def _key(text: str) -> int:
    cp = codepoints(text)
    key, top = encode_kernel._short_key(cp, np.int64(0), np.int64(len(cp)))
    if key:
        assert top == np.bitwise_or.reduce(cp.astype(np.int64), initial=0)
    return int(key)


def test_the_packing_tells_every_short_piece_apart_and_refuses_the_rest():
    alphabet = ["\x00", "a", "\x7f", "\u00e9", "\u00fe"]
    pieces = ["".join(p) for n in range(1, 5) for p in itertools.product(alphabet, repeat=n)]
    keys = [_key(p) for p in pieces]
    assert 0 not in keys
    assert len(set(keys)) == len(pieces)
    assert _key("\u00fe" * 8) != 0 and _key("\u00fe" * 7) != _key("\u00fe" * 8)
    assert _key("abcdefgh") != 0
    assert _key("abcdefghi") == 0  # nine characters
    for past in PAST:
        assert _key("ab" + past) == 0


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("seed", [1, 2])
def test_short_pieces_equal_tiktoken_new_then_cached_with_the_table_grown_and_restarted(
    name, seed, monkeypatch
):
    monkeypatch.setattr(piece_table, "START_SHORT_SLOTS", 16)
    monkeypatch.setattr(piece_table, "MAX_SHORT_SLOTS", 1024)
    tok = Tokenizer.preset(name)  # a fresh cache
    text = _words(seed, 4000)
    expected = tiktoken_peer(tok).encode(text, allowed_special="all")
    assert python_ids(tok, text) == expected
    sizes = set()
    for _ in range(3):
        assert compiled_ids(tok, text) == expected
        short = tok.merger.compiled().short
        sizes.add(len(short.slots) // 2)
        assert 0 < short.entries <= 1024 // 2
    # It grew (from 16 slots) and stayed within its bound, so it started afresh on the way.
    assert max(sizes) > 16 and max(sizes) <= 1024


@pytest.mark.parametrize("name", PRESETS)
def test_short_pieces_of_more_ids_than_a_value_holds(name):
    tok = Tokenizer.preset(name)
    peer = tiktoken_peer(tok)
    many = [w for w in ("\u00a4\u00a6\u00a8\u00aa\u00ac", "\u00b5\u00b6\u00b8\u00bb\u00be\u00f7",
                        "\x00\x01\x7f\x00\x01\x7f\x00", "\u00d0\u00de\u00f0\u00fe\u00a7\u00a9")
            if len(peer.encode_ordinary(w)) > encode_kernel.SHORT_IDS]  # fmt: skip
    assert many, "no short piece of more ids than a value holds: the test proves nothing"
    text = " ".join(many * 3) + " " + _words(3, 300)
    expected = peer.encode(text, allowed_special="all")
    for _ in range(2):
        assert compiled_ids(tok, text) == expected


def test_a_vocabulary_of_ids_past_the_short_values_keeps_every_piece_in_the_piece_table(
    monkeypatch,
):
    from bpe_studio.core.encode.merging.compiled import CompiledMerger, RankArrays

    # The piece table starts tiny, so it must grow (the short table, of no slots, never).
    monkeypatch.setattr(piece_table, "START_ENTRIES", 4)
    assert not piece_table.ShortTable.empty().full()

    kernels = kernel_start.kernels()
    byte_ids = np.arange(256, dtype=np.int64)
    text = "ab xab ab"
    cp = codepoints(text)
    items = (np.array([0, 2, 3, 4, 6, 7]), np.array([2, 3, 4, 6, 7, 9]), np.full(6, -1))
    got = {}
    for made in (300, (1 << encode_kernel.SHORT_ID_BITS) + 3):
        merges = [np.array([v], np.int64) for v in (97, 98, made)]
        rank = RankArrays.of_lists(kernels, *merges, byte_ids)
        merger = CompiledMerger(kernels, rank, byte_ids, whole={b"ab": made})
        ids = merger.encode(cp, items)[0].tolist()
        assert ids == [made, 32, 120, made, 32, made]
        got[made] = (len(merger.short.slots), merger.cache.entries)
    assert got[300][0] > 0 and got[300][1] == 0  # every piece short
    assert got[max(got)] == (0, 3)  # no short table: "ab", " " and "x" in the piece table
    # Many distinct pieces: the piece table grows from 4 entries, the short one stays empty.
    words = [f"w{i}" for i in range(40)]
    text = " ".join(words)
    cp = codepoints(text)
    ends = np.cumsum([len(w) + (i > 0) for i, w in enumerate(words)])
    items = (ends - np.array([len(w) + (i > 0) for i, w in enumerate(words)]), ends,
             np.full(len(words), -1))  # fmt: skip
    expected = [list(((" " if i else "") + w).encode()) for i, w in enumerate(words)]
    ids = merger.encode(cp, items)[0].tolist()
    assert ids == [b for piece in expected for b in piece]
    assert merger.cache.entries == 3 + 40 and len(merger.short.slots) == 0


def test_a_whole_token_of_an_id_past_the_short_values_turns_the_short_cache_off():
    """Under ``ignore_merges`` a token no merge makes is still looked up whole: its id counts
    when deciding whether the short table's values can hold every id."""
    from bpe_studio.core.encode.merging.compiled import CompiledMerger, RankArrays

    kernels = kernel_start.kernels()
    byte_ids = np.arange(256, dtype=np.int64)
    big = (1 << encode_kernel.SHORT_ID_BITS) + 7
    merges = [np.array([v], np.int64) for v in (97, 98, 300)]
    rank = RankArrays.of_lists(kernels, *merges, byte_ids)
    merger = CompiledMerger(kernels, rank, byte_ids, whole={b"ab": 300, b"zz": big},
                            whole_all=True)  # fmt: skip
    assert len(merger.short.slots) == 0
    text = "zz ab zz"
    items = (np.array([0, 2, 3, 5, 6]), np.array([2, 3, 5, 6, 8]), np.full(5, -1))
    for _ in range(2):  # new pieces, then cached ones
        assert merger.encode(codepoints(text), items)[0].tolist() == [big, 32, 300, 32, big]
