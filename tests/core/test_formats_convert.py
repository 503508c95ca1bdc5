"""Converting between the formats keeps every id: GPT-2's files -> tokenizer.json ->
tiktoken -> GPT-2's files again, each step read back by the code under test and the result
checked against the original files, read here independently."""

from __future__ import annotations

from core_helpers import EOT, FIXTURES
from gpt2_bytes import read_gpt2_merges, read_gpt2_vocab

from bpe_studio.core.formats import TokenizerData, read_hf, read_tiktoken, write_hf, write_tiktoken
from bpe_studio.core.formats.gpt2 import load_merges, load_vocab, save_files


def test_gpt2_to_hf_to_tiktoken_to_gpt2_keeps_every_id(tmp_path):
    vocab = load_vocab(FIXTURES / "gpt2_vocab.json")
    merges = load_merges(FIXTURES / "gpt2_merges.txt")
    start = TokenizerData(vocab, merges, {EOT: 50256}, "gpt2")

    from_hf = read_hf(write_hf(tmp_path / "hf", start))
    rank_path, _ = write_tiktoken(tmp_path / "tt", "gpt2", from_hf)
    from_tiktoken = read_tiktoken(rank_path)
    assert from_tiktoken.special_tokens == {EOT: 50256}
    assert from_tiktoken.pattern == "gpt2"
    save_files(tmp_path / "gpt2", from_tiktoken.vocab, from_tiktoken.merges)

    assert read_gpt2_vocab(tmp_path / "gpt2" / "vocab.json") == read_gpt2_vocab(
        FIXTURES / "gpt2_vocab.json"
    )
    assert read_gpt2_merges(tmp_path / "gpt2" / "merges.txt") == read_gpt2_merges(
        FIXTURES / "gpt2_merges.txt"
    )
