"""The shipped presets: names, special tokens, and GPT-2's files as tiktoken's GPT-2 reads them.

(cl100k_base and o200k_base are checked against tiktoken in ``test_formats_tiktoken``.)
"""

from __future__ import annotations

import pytest
import tiktoken
from core_helpers import EOT, FIXTURES, SLICES, read_fixture
from gpt2_bytes import read_gpt2_merges, read_gpt2_vocab
from reference_encoder import ReferenceEncoder, published

from bpe_studio.core.formats import PATTERNS
from bpe_studio.core.presets import PRESETS, preset_data


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(ValueError) as info:
        preset_data("gpt5")
    message = str(info.value)
    assert "'gpt5'" in message
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        assert name in message


@pytest.mark.parametrize(
    ("name", "pattern", "size"),
    [("gpt2", "gpt2", 50257), ("cl100k_base", "cl100k", 100261), ("o200k_base", "o200k", 200000)],
)
def test_preset_pattern_specials_and_size(name, pattern, size):
    data = preset_data(name)
    assert data.pattern == pattern
    assert len(data.vocab) == size
    expected = published("r50k_base" if name == "gpt2" else name)["special_tokens"]
    assert data.special_tokens == expected
    for s, idx in expected.items():
        assert data.vocab[idx] == s.encode()
    assert all(bytes([b]) in data.vocab.values() for b in range(256))


def test_presets_are_the_three():
    assert PRESETS == ("gpt2", "cl100k_base", "o200k_base")


def test_gpt2_preset_is_gpt2s_files():
    data = preset_data("gpt2")
    assert data.vocab == read_gpt2_vocab(FIXTURES / "gpt2_vocab.json")
    assert data.merges == read_gpt2_merges(FIXTURES / "gpt2_merges.txt")


@pytest.mark.parametrize("corpus", list(SLICES))
def test_gpt2_preset_encodes_as_tiktoken_gpt2(corpus):
    data = preset_data("gpt2")
    enc = tiktoken.Encoding(
        "gpt2_ref",
        pat_str=published("r50k_base")["pat_str"],
        mergeable_ranks={tok: i for i, tok in data.vocab.items() if tok != EOT.encode()},
        special_tokens={EOT: 50256},
    )
    reference = ReferenceEncoder(data.vocab, data.merges, data.special_tokens, PATTERNS["gpt2"])
    text = read_fixture(SLICES[corpus])[:10_000] + EOT + " end"
    assert reference.encode(text) == enc.encode(text, allowed_special="all")
