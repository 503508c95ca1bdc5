"""Pre-tokens that are whole vocabulary tokens, looked up instead of merged (``Merger._whole``,
``TokenizerData.whole_tokens``): only where every token's bytes merge into that token (the
presets, checked here token by token against a slow merger), and with tiktoken's ids."""

from __future__ import annotations

import gzip

import pytest
from core_helpers import REPO_ROOT, SLICES, read_fixture
from hypothesis import given
from reference_encoder import shipped_tiktoken
from text_strategies import HYPO, TEXTS

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.merging.batch_bpe import BatchBpe
from bpe_studio.core.encode.merging.merger import Merger
from bpe_studio.core.formats import TokenizerData, read_tiktoken
from bpe_studio.core.formats.base.preset_table import PRESETS
from bpe_studio.core.formats.presets import preset_data
from bpe_studio.core.reference import reference_encode_piece


def merge_ranks(merges):
    ranks = {}
    for i, pair in enumerate(merges):
        ranks.setdefault(pair, i)
    return ranks


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_token_merges_into_itself(name):
    """What makes looking whole tokens up exact for the presets."""
    data = preset_data(name)
    assert data.whole_tokens
    ranks = merge_ranks(data.merges)
    specials = set(data.special_tokens.values())
    unreachable = [
        token
        for idx, token in data.vocab.items()
        if idx not in specials and reference_encode_piece(token, ranks) != (token,)
    ]
    assert unreachable == []


def unreachable_tokenizer_data(whole_tokens: bool):
    """``abc`` is a token, but merging its bytes gives ``a``, ``bc``: ``bc`` ranks first."""
    vocab = {i: bytes([i]) for i in range(256)}
    vocab |= {256: b"bc", 257: b"ab", 258: b"abc"}
    merges = [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]
    return TokenizerData(vocab, merges, {}, "gpt2", whole_tokens=whole_tokens)


def test_unreachable_token_is_merged_not_looked_up():
    data = unreachable_tokenizer_data(False)
    assert reference_encode_piece(b"abc", merge_ranks(data.merges)) == (b"a", b"bc")
    expected = [ord("a"), 256]
    for tok in (Tokenizer.from_data(data), Tokenizer(data.vocab, data.merges)):
        assert tok.merger._whole is None
        assert tok.encode("abc") == expected
        assert tok.encode(" x abc" * 400) == [32, ord("x"), 32, ord("a"), 256] * 400


def test_the_lookup_is_what_whole_tokens_turns_on():
    """A record that (wrongly) claims whole tokens shows the lookup taking over: the
    unreachable token comes out whole, on every path that encodes a pre-token."""
    tok = Tokenizer.from_data(unreachable_tokenizer_data(True))
    assert tok.encode("abc") == [258]
    assert tok.encode("abc " * 2000)[:2] == [258, 32]  # a batch
    fresh = Tokenizer.from_data(unreachable_tokenizer_data(True))
    assert [s.id for s in fresh.spans("abc")] == [258]


def test_truncated_and_other_sources_do_not_look_up():
    o200k = Tokenizer.preset("o200k_base")
    assert o200k.merger._whole is not None
    assert o200k.truncated(1000).merger._whole is None
    assert Tokenizer(o200k.vocab, o200k.merges, pattern="o200k").merger._whole is None


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_special_tokens_are_never_looked_up(name):
    data = preset_data(name)
    # As `encode --no-special-tokens` builds it: the special tokens' entries are ordinary
    # vocabulary entries that no merge makes, so their text must be merged.
    plain = Tokenizer.from_data(data, {})
    for special in data.special_tokens:
        assert special.encode() not in plain.merger._whole
        assert len(plain.encode(special)) > 1
    tok = Tokenizer.from_data(data)
    assert tok.merger._whole is not None and len(tok.merger._whole) == len(data.vocab) - len(
        data.special_tokens
    )


@pytest.fixture(scope="module", params=["cl100k_base", "o200k_base"])
def preset_pair(request):
    return Tokenizer.preset(request.param), shipped_tiktoken(request.param)


def test_whole_token_pieces_skip_merging_and_equal_tiktoken(preset_pair, monkeypatch):
    tok, enc = preset_pair
    tok = Tokenizer.from_data(preset_data_of(tok))  # a fresh cache
    text = read_fixture(SLICES["english"])
    pieces = set(tok._findall(text))
    whole = {p.encode() for p in pieces if p.isascii() and p.encode() in tok.merger._whole}
    assert len(whole) > len(pieces) // 2
    merged: list[bytes] = []
    batch_merge, one_merge = BatchBpe.merge, Merger.bpe

    def spy_batch(self, datas, *rest):
        merged.extend(datas)
        return batch_merge(self, datas, *rest)

    def spy_one(self, data):
        merged.append(data)
        return one_merge(self, data)

    monkeypatch.setattr(BatchBpe, "merge", spy_batch)
    monkeypatch.setattr(Merger, "bpe", spy_one)
    assert tok.encode(text) == enc.encode(text, allowed_special="all")
    assert merged and not whole.intersection(merged)


def preset_data_of(tok):
    name = {"cl100k": "cl100k_base", "o200k": "o200k_base"}[tok.pattern_name]
    return preset_data(name)


@pytest.mark.parametrize("corpus", list(SLICES))
def test_presets_equal_tiktoken_on_fixtures(preset_pair, corpus):
    tok, enc = preset_pair
    text = read_fixture(SLICES[corpus])
    fresh = Tokenizer.from_data(preset_data_of(tok))
    assert fresh.encode(text) == enc.encode(text, allowed_special="all")


@HYPO
@given(TEXTS)
def test_presets_equal_tiktoken_on_generated_text(preset_pair, text):
    tok, enc = preset_pair
    assert tok.encode(text) == enc.encode(text, allowed_special="all")


def test_only_openais_own_rank_files_claim_whole_tokens(tmp_path):
    """A rank file read directly claims whole tokens only when it is byte for byte one of
    the presets' (recognised by its sha256; the presets are checked token by token above);
    any other, even one rank short of cl100k_base, does not."""
    path = REPO_ROOT / "resources" / "tokenizers" / "cl100k_base.tiktoken.gz"
    assert read_tiktoken(path, "cl100k").whole_tokens
    lines = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
    assert lines[-1].endswith(b" 100255\n")  # the last rank: dropping it leaves a valid file
    shorter = tmp_path / "shorter.tiktoken"
    shorter.write_bytes(b"".join(lines[:-1]))
    assert not read_tiktoken(shorter, "cl100k").whole_tokens
