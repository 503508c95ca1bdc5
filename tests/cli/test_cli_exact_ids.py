"""What ``encode``, ``decode`` and ``train`` give is exact or refused (issue 32): byte-fallback
tokens decode to their very bytes, as the README promises; a one-byte special token is refused
at once with one line naming it, by ``train`` before anything is read and by ``encode``.

Oracles: the bytes themselves (``<0xE4>`` is the byte E4); ``tokenizers`` for the ids.
"""

from __future__ import annotations

import numpy as np
import tokenizers
from cli_run import cli, cli_bytes, error_line, ok
from core_helpers import SLICES, fixture_path
from model_shapes import gemma3_style, llama2_style

ONE_BYTE = "special token 'a' is a single byte (0x61)"


def test_decode_writes_byte_fallback_tokens_as_their_bytes(tmp_path):
    for make in (llama2_style, gemma3_style):
        path = make(tmp_path / make.__name__)
        hf = tokenizers.Tokenizer.from_file(str(path))
        byte = {b: hf.token_to_id(f"<0x{b:02X}>") for b in (0xE4, 0xB8, 0xAD)}
        # "中" whole, then cut short: E4 B8, which makes no character.
        words = hf.encode("ab", add_special_tokens=False).ids
        ids = [byte[0xE4], byte[0xB8], byte[0xAD], *words, byte[0xE4], byte[0xB8]]
        ids_path = tmp_path / "ids.npy"
        np.save(ids_path, np.array(ids, dtype=np.uint32))
        result = cli_bytes(tmp_path, "decode", ids_path, "--tokenizer", path, "--out", "-")
        assert result.returncode == 0, result.stderr
        # tokenizers' own text, where its ByteFallback wrote one U+FFFD per lost byte.
        lost = hf.decode(ids, skip_special_tokens=False)
        assert lost.startswith("中") and lost.endswith("\ufffd\ufffd")
        assert result.stdout == lost[:-2].encode() + b"\xe4\xb8"


def test_decode_of_encode_gives_the_text_back_through_byte_fallback(tmp_path):
    path = gemma3_style(tmp_path / "gemma")
    text_path = fixture_path(SLICES["chinese"])  # English-trained: Chinese falls back to bytes
    ids = tmp_path / "ids.npy"
    ok(cli(tmp_path, "encode", text_path, "--tokenizer", path, "--out", ids))
    back = tmp_path / "back.txt"
    ok(cli(tmp_path, "decode", ids, "--tokenizer", path, "--out", back))
    assert back.read_bytes() == text_path.read_bytes()


def test_train_refuses_a_one_byte_special_token_before_reading(tmp_path):
    missing = tmp_path / "no corpus here.txt"  # the refusal comes before it is looked for
    result = cli(tmp_path, "train", missing, "--vocab-size", 300, "--out", tmp_path / "tok",
                 "--special-token", "<|endoftext|>", "--special-token", "a")  # fmt: skip
    line = error_line(result)
    assert line.startswith("bpe-studio: error: --special-token: " + ONE_BYTE), line
    assert "'<a>'" in line and not (tmp_path / "tok").exists()


def test_encode_refuses_a_one_byte_special_token(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("a cat", encoding="utf-8")
    result = cli(tmp_path, "encode", text, "--tokenizer", "gpt2", "--special-token", "a",
                 "--out", tmp_path / "ids.npy")  # fmt: skip
    assert ONE_BYTE in error_line(result)
    assert not (tmp_path / "ids.npy").exists()
