"""Converting between the formats keeps every id: GPT-2's files -> tokenizer.json ->
tiktoken -> GPT-2's files again, each step read back by the code under test and the result
checked against the original files, read here independently."""

from __future__ import annotations

import errno
import os

import pytest
from core_helpers import EOT, FIXTURES
from gpt2_bytes import read_gpt2_merges, read_gpt2_vocab

from bpe_studio.core import Tokenizer
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


def _full_disk(monkeypatch) -> None:
    """Every temporary file a writer opens fails as on a full disk."""
    import errno

    from bpe_studio.core.io import atomic

    def full(target):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic, "_temp_file", full)


@pytest.mark.parametrize("fmt", ["gpt2", "hf", "tiktoken"])
def test_a_write_that_fails_removes_the_folders_it_made(tmp_path, monkeypatch, fmt):
    """train/convert --out t1/sub on a full disk left the empty folders t1/sub behind (a
    hostile-machine audit); the README says a failed command removes the folders it made."""
    tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")], {}, "gpt2")
    (tmp_path / "kept").mkdir()
    _full_disk(monkeypatch)
    for out in (tmp_path / "t1" / "sub", tmp_path / "kept" / "new"):
        with pytest.raises(OSError, match="No space left"):
            tok.save(out, fmt)
    assert [p.name for p in tmp_path.iterdir()] == ["kept"]
    assert not any((tmp_path / "kept").iterdir())


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="writes to Linux's /dev/full")
@pytest.mark.parametrize("fmt", ["gpt2", "hf", "tiktoken"])
def test_a_write_a_full_disk_refuses_names_the_file(tmp_path, monkeypatch, fmt):
    """Tokenizer.save on a full disk raised "[Errno 28] No space left on device" with no
    file named (filename None: the refused write is to an open file); which of the files it
    could not write is said now. Every file's writes go to /dev/full, which refuses them."""
    from bpe_studio.core.io import atomic

    def full(target):
        return os.open("/dev/full", os.O_WRONLY), os.fspath(target.with_name("never.tmp"))

    monkeypatch.setattr(atomic, "_temp_file", full)
    tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")], {}, "gpt2")
    out = tmp_path / "out"
    with pytest.raises(OSError) as refused:
        tok.save(out, fmt)
    assert refused.value.errno == errno.ENOSPC
    first = {"gpt2": "vocab.json", "hf": "tokenizer.json", "tiktoken": "tokenizer.tiktoken"}
    assert refused.value.filename == os.fspath(out / first[fmt])


def test_a_foreign_tokenizer_that_fails_to_save_removes_the_folders_it_made(tmp_path, monkeypatch):
    from foreign_files import wordpiece

    from bpe_studio.core.encode.foreign import open_tokenizer

    tok = open_tokenizer(wordpiece(tmp_path / "src"))
    _full_disk(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        tok.save(tmp_path / "t1" / "sub")
    assert not (tmp_path / "t1").exists()
