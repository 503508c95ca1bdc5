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
from bpe_studio.core.formats.base.preset_table import PRESETS
from bpe_studio.core.formats.presets import preset_data


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(ValueError) as info:
        preset_data("gpt5")
    message = str(info.value)
    assert "'gpt5'" in message
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        assert name in message


def test_an_unbundled_tiktoken_encoding_says_to_load_its_rank_file():
    """A docs audit: Python said "unknown preset" where the command line explained."""
    with pytest.raises(ValueError, match="'p50k_base' is a tiktoken encoding that is not bundled"):
        preset_data("p50k_base")


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


# The names users bring from tiktoken and from OpenAI's model names: GPT-2's own vocabulary is
# tiktoken's r50k_base, GPT-4 and GPT-3.5 use cl100k_base, GPT-4o o200k_base.
@pytest.mark.parametrize(
    ("word", "preset"),
    [
        ("r50k_base", "gpt2"),
        ("GPT-2", "gpt2"),
        ("cl100k", "cl100k_base"),
        ("gpt-4", "cl100k_base"),
        ("GPT-3.5-turbo", "cl100k_base"),
        ("o200k", "o200k_base"),
        ("gpt-4o", "o200k_base"),
    ],
)
def test_other_names_of_a_preset_load_it(word, preset):
    from bpe_studio.core import Tokenizer
    from bpe_studio.core.formats.files import load_data

    assert load_data(word) == preset_data(preset)
    assert Tokenizer.preset(word).encode("naïve café 中文") == Tokenizer.preset(preset).encode(
        "naïve café 中文"
    )


def test_p50k_names_no_preset():
    # p50k_base splits text with GPT-2's pattern but adds whitespace tokens: not GPT-2's vocabulary.
    with pytest.raises(ValueError, match="'p50k_base'"):
        preset_data("p50k_base")
