"""Safe cuts between three-byte characters (``char_cuts``): a boundary is reported safe only
when no vocabulary token could hold bytes from both sides of it (checked against a slow
definition over every token), and cutting there leaves the ids tiktoken's (long Han runs, runs
mixing scripts, and files cut into chunks for worker processes)."""

from __future__ import annotations

import random
from unittest import mock

import numpy as np
import pytest
from core_helpers import EOT, read_fixture, slice_head
from hypothesis import given
from reference_encoder import ReferenceEncoder, shipped_tiktoken
from test_char_bpe import RUNS
from text_strategies import HYPO

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.core.encode.encode_file import encode_file
from bpe_studio.core.encode.merging.char_cuts import CharCuts


def straddles(tokens: list[bytes]) -> list[tuple[bytes, bytes]]:
    """Every way of splitting a token into two non-empty halves (slow, for the reference)."""
    return [(t[:k], t[k:]) for t in tokens for k in range(1, len(t))]


def slow_safe(splits: list[tuple[bytes, bytes]], x: str, y: str) -> bool:
    """Safe iff no token half-pair could lie across ``x|y``: the left half ends inside ``x``
    (a suffix of it) or holds all of it, and the right half likewise for ``y``."""
    bx, by = x.encode(), y.encode()
    for left, right in splits:
        left_fits = bx.endswith(left) if len(left) < len(bx) else left.endswith(bx)
        right_fits = by.startswith(right) if len(right) < len(by) else right.startswith(by)
        if left_fits and right_fits:
            return False
    return True


def three_byte(c: str) -> bool:
    return 0x800 <= ord(c) < 0x10000 and not 0xD800 <= ord(c) < 0xE000


def check_pairs(tokens: list[bytes], pairs: list[tuple[str, str]]) -> int:
    cuts = CharCuts(tokens)
    left = np.array([ord(x) for x, _ in pairs], dtype=np.int64)
    right = np.array([ord(y) for _, y in pairs], dtype=np.int64)
    got = cuts.safe(left, right).tolist()
    splits = [s for s in straddles([t for t in tokens if len(t) > 1]) if s[1][0] >= 0xE0]
    for (x, y), safe in zip(pairs, got):
        if not (three_byte(x) and three_byte(y)):
            assert not safe, (x, y)
        elif safe:
            assert slow_safe(splits, x, y), (x, y)
    return sum(got)


def text_pairs(text: str, count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    at = [rng.randrange(len(text) - 1) for _ in range(count)]
    return [(text[i], text[i + 1]) for i in at]


def test_safe_cuts_of_a_trained_tokenizer_match_the_slow_definition():
    text = slice_head("chinese", 60_000) + slice_head("mixed_web", 20_000)
    vocab, merges = _trained(text)
    tokens = list(vocab.values())
    han = read_fixture("chinese_slice.txt")[50_000:60_000]
    pairs = text_pairs(han, 1500, 1) + [("中", "国"), ("a", "中"), ("中", "😀"), ("é", "中")]
    rng = random.Random(2)
    pairs += [
        (chr(rng.randrange(0x4E00, 0x9FFF)), chr(rng.randrange(0x3000, 0xD7FF))) for _ in range(300)
    ]
    safe = check_pairs(tokens, pairs)
    assert 0 < safe < len(pairs)  # some cuts found, some refused


def _trained(text: str) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.txt"
        path.write_bytes(text.encode())
        return train_bpe(path, 1_500, [EOT], pattern="o200k")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_safe_cuts_of_the_presets_match_the_slow_definition(name):
    tok = Tokenizer.preset(name)
    han = read_fixture("chinese_slice.txt")
    pairs = text_pairs(han, 120, 3) + [("的", "是"), ("中", "国"), ("人", "民")]
    safe = check_pairs(list(tok.vocab.values()), pairs)
    assert safe > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_runs_cut_into_parts_equal_tiktoken(name, tmp_path, monkeypatch):
    """Long Han runs, runs with other scripts in them, a run repeated with one character
    changed (its parts come from the cache), and the same text as a file encoded by two
    workers in small chunks (cuts at chunk edges)."""
    monkeypatch.setattr("bpe_studio.core.encode.merging.merger.CUTS_BUILD_MIN", 1)
    enc = shipped_tiktoken(name)
    han = read_fixture("chinese_slice.txt")
    run = "".join(c for c in han[:4000] if three_byte(c))
    texts = [
        han[:60_000],
        run,
        run[:500] + "abc" + run[500:900] + "é" + run[900:1300] + "😀" + run[1300:2000],
        "\n".join(run[i : i + 37] + run[i + 38 : i + 80] for i in range(0, 3000, 41)),
    ]
    tok = Tokenizer.preset(name)
    for text in texts:
        fresh = Tokenizer(tok.vocab, tok.merges, pattern=tok.pattern)
        assert fresh.encode(text) == enc.encode(text, disallowed_special=())
    text = "\n".join(texts)
    path = tmp_path / "han.txt"
    path.write_bytes(text.encode())
    out = tmp_path / "ids.npy"
    monkeypatch.setattr("bpe_studio.core.encode.encode_file.MIN_CHUNK_BYTES", 16 * 1024)
    monkeypatch.setattr("bpe_studio.core.encode.encode_file.PARALLEL_MIN_BYTES", 0)
    encode_file(tok, path, out, workers=2)
    assert np.load(out).tolist() == enc.encode(text, allowed_special="all")


def test_a_slow_reference_agrees_on_a_trained_tokenizer(monkeypatch):
    """Every batch path forced on (no minimum counts), so that the text takes the cuts."""
    for name in ("BATCH_MIN", "BATCH_BUILD_MIN", "BATCH_LONG_MIN", "CUTS_BUILD_MIN"):
        monkeypatch.setattr(f"bpe_studio.core.encode.merging.merger.{name}", 1)
    text = slice_head("chinese", 60_000)
    vocab, merges = _trained(text)
    tok = Tokenizer(vocab, merges, [EOT], pattern="o200k")
    ref = ReferenceEncoder(tok.vocab, tok.merges, {EOT: tok.special_id(EOT)}, tok.pattern)
    sample = read_fixture("chinese_slice.txt")[60_000:90_000]
    assert tok.encode(sample) == ref.encode(sample)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_generated_runs_cut_into_parts_equal_tiktoken(name):
    """Every batch path forced on (no minimum counts), so short generated texts take the
    cuts: Han runs with other scripts, emoji and punctuation in them."""
    tok = Tokenizer.preset(name)
    enc = shipped_tiktoken(name)
    fresh = Tokenizer(tok.vocab, tok.merges, pattern=tok.pattern)

    @HYPO
    @given(RUNS)
    def check(text):
        fresh.merger._cache.clear()
        with (
            mock.patch("bpe_studio.core.encode.merging.merger.BATCH_MIN", 1),
            mock.patch("bpe_studio.core.encode.merging.merger.BATCH_BUILD_MIN", 1),
            mock.patch("bpe_studio.core.encode.merging.merger.BATCH_LONG_MIN", 1),
            mock.patch("bpe_studio.core.encode.merging.merger.CUTS_BUILD_MIN", 1),
        ):
            ids = fresh.encode(text)
            fresh.merger._cache.clear()
            array = fresh.encode_array(text, "uint32")
        expected = enc.encode(text, disallowed_special=())
        assert ids == expected
        assert array.tolist() == expected

    check()


def test_a_truncated_preset_keeps_its_cuts_and_stays_exact(monkeypatch):
    """``truncated(k)`` shares the full vocabulary's cut tables (fewer merges cross fewer
    boundaries); its ids equal a slow reference with only the first k merges."""
    for name in ("BATCH_MIN", "BATCH_BUILD_MIN", "BATCH_LONG_MIN", "CUTS_BUILD_MIN"):
        monkeypatch.setattr(f"bpe_studio.core.encode.merging.merger.{name}", 1)
    tok = Tokenizer.preset("o200k_base")
    short = tok.truncated(60_000)
    assert short.merger._cuts is tok.merger._cuts
    ref = ReferenceEncoder(short.vocab, short.merges, {}, short.pattern)
    sample = read_fixture("chinese_slice.txt")[20_000:24_000].replace(EOT, "")
    assert short.encode(sample) == ref.encode(sample)
