"""What a counting worker sends back: one packed result per chunk (pre-tokens joined in one
byte string, counts in one array), counted a piece at a time; the parent adds them up, telling
the positions counted so far. Checked against a reference written here: the bare ``regex``
pattern run over the text split around special tokens, counted whole."""

from __future__ import annotations

import os
from collections import Counter

import pytest
import regex
from core_helpers import EOT, SLICES, read_fixture, write_text

from bpe_studio.core import count_file
from bpe_studio.core.corpus import counting as corpus
from bpe_studio.core.corpus.counting import _count_chunk, pack_counts, unpack_counts
from bpe_studio.core.pretokenization.names import pattern_regex
from bpe_studio.core.train import trainer

CUSTOM = r"\p{L}+|\p{N}|[^\p{L}\p{N}]+"
PATTERNS = ["gpt2", "cl100k", "o200k", CUSTOM]
# Assigned characters only: Latin, Cyrillic, Han, Hiragana, an emoji above U+FFFF, digits.
MIXED = (
    "Hello world's 12345 numbers,\n  spaced   out\n\n"
    "Привет мир! 你好世界，这是一个测试。ひらがなです 😀😀 done\n"
)


def reference_counts(text: str, specials: list[str], pattern: str) -> Counter[bytes]:
    """The whole text's pre-token counts, the slow and obvious way."""
    pat = regex.compile(pattern_regex(pattern))
    pieces = [text]
    if specials:
        alternation = "|".join(regex.escape(s) for s in sorted(specials, key=len, reverse=True))
        pieces = regex.split(alternation, text)
    out: Counter[bytes] = Counter()
    for piece in pieces:
        out.update(m.encode("utf-8") for m in pat.findall(piece))
    return out


def chunk_of(path, specials, pattern, start=0, end=None):
    end = os.path.getsize(path) if end is None else end
    tokens, freqs, nbytes = _count_chunk((os.fspath(path), start, end, list(specials), pattern))
    keys, numbers = unpack_counts(tokens, freqs)
    assert len(keys) == len(numbers) == len(set(keys))
    return Counter(dict(zip(keys, numbers))), nbytes


@pytest.mark.parametrize(
    "counts",
    [
        {},
        {b"a": 1},
        {b" the": 10**12, "你好".encode(): 3, "😀".encode(): 1, b"\x00\xfe": 2, b"\n\n": 7},
    ],
)
def test_pack_unpack_round_trip(counts):
    tokens, freqs = pack_counts(counts)
    assert isinstance(tokens, bytes) and isinstance(freqs, bytes)
    keys, numbers = unpack_counts(tokens, freqs)
    assert dict(zip(keys, numbers)) == counts
    assert keys == list(counts)  # same order as packed


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("specials", [[], [EOT], [EOT, "\n\n"]])
def test_a_chunk_counted_in_pieces_equals_the_whole(tmp_path, monkeypatch, pattern, specials):
    text = (MIXED + EOT) * 40 + read_fixture(SLICES["code"])[:3000]
    path = write_text(tmp_path / "c.txt", text)
    monkeypatch.setattr(corpus, "WORKER_PIECE", 97)  # many pieces, cut anywhere allowed
    counts, nbytes = chunk_of(path, specials, pattern)
    expected = reference_counts(text, specials, pattern)
    assert counts == expected
    assert nbytes == path.stat().st_size


def test_pieces_can_fail():
    # The reference is not vacuous: splitting a word across pieces changes the counts.
    whole = reference_counts("Hello world", [], "gpt2")
    split = reference_counts("Hel", [], "gpt2") + reference_counts("lo world", [], "gpt2")
    assert whole != split


def test_empty_chunk(tmp_path):
    path = write_text(tmp_path / "e.txt", "abc")
    assert chunk_of(path, [EOT], "gpt2", 2, 2) == (Counter(), 0)
    empty = write_text(tmp_path / "empty.txt", "")
    assert chunk_of(empty, [], "gpt2") == (Counter(), 0)


def test_a_chunk_of_only_a_special_token(tmp_path):
    path = write_text(tmp_path / "s.txt", EOT + EOT)
    assert chunk_of(path, [EOT], "gpt2") == (Counter(), len(EOT) * 2)


@pytest.mark.parametrize("pattern", ["gpt2", "o200k"])
def test_chunked_counts_equal_the_whole_file(tmp_path, monkeypatch, pattern):
    """Several chunks in worker processes, each in several pieces, added up in the parent."""
    text = "".join((read_fixture(SLICES[k])[:20_000] + EOT) * 3 for k in SLICES) + MIXED
    path = write_text(tmp_path / "m.txt", text)
    monkeypatch.setattr(corpus, "IN_PROCESS_LIMIT", 1000)
    monkeypatch.setattr(corpus, "CHUNK_BYTES", 30_000)
    monkeypatch.setattr(corpus, "WORKER_PIECE", 5_000)
    seen: list[int] = []
    calls = []
    counts = count_file(
        path,
        [EOT],
        workers=2,
        pattern=pattern,
        progress=lambda d, t: calls.append(d),
        measured=seen.append,
    )
    expected = reference_counts(text, [EOT], pattern)
    assert counts == expected
    assert len(seen) == len(calls) - 1 > 5, "one measure per chunk, several chunks"
    # The positions of the pre-tokens counted so far grow, after every chunk, to the whole's.
    assert seen == sorted(seen) and seen[0] > 0
    assert seen[-1] == trainer.count_positions(expected)


def test_surrogates_in_text_are_still_replaced():
    # count_text takes a str, which (unlike a decoded file) may hold surrogates.
    counts = corpus.count_text("a\ud83d\ude00 b\ud800")
    assert counts == reference_counts("a😀 b\ufffd", [], "gpt2")
