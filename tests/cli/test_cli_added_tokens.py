"""``bpe-studio encode`` and ``inspect`` of a ``tokenizer.json`` with added tokens that are not
special (Qwen3's ``<think>``): encoded as themselves with the special tokens on or off
(``--no-special-tokens``), one worker or two; ``inspect --json`` lists the special ones only.

Oracle: ``tokenizers`` itself (encode_special_tokens for ``--no-special-tokens``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tokenizers
from cli_run import cli
from core_helpers import SLICES, read_fixture
from hf_shapes import splits_then_bytes, trained_bpe
from tokenizers import AddedToken

SPECIAL = ["<|endoftext|>", "<|im_start|>"]
PLAIN = ["<think>", "</think>"]


def _qwen3_like(tmp_path) -> str:
    split = splits_then_bytes(r"\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+")
    tok = trained_bpe(None, split, [read_fixture(SLICES["english"])[:20_000]], 400)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in PLAIN])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    return str(path)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_encode_matches_them_with_and_without_special_tokens(tmp_path, workers):
    path = _qwen3_like(tmp_path)
    chat = "<|im_start|>user\nwhy?<think>because</think> so<|endoftext|>"
    text = (read_fixture(SLICES["english"])[:3000] + chat) * 100
    source = tmp_path / "text.txt"
    source.write_text(text, encoding="utf-8", newline="")
    hf = tokenizers.Tokenizer.from_file(path)
    for flags, plain in (((), False), (("--no-special-tokens",), True)):
        out = tmp_path / f"ids{len(flags)}.npy"
        run = cli(tmp_path, "encode", source, "--tokenizer", path, "--workers", workers,
                  "--out", out, *flags)  # fmt: skip
        assert run.returncode == 0, run.stderr
        hf.encode_special_tokens = plain
        assert np.load(out).tolist() == hf.encode(text, add_special_tokens=False).ids, flags


def test_inspect_lists_the_special_ones_only(tmp_path):
    path = _qwen3_like(tmp_path)
    run = cli(tmp_path, "inspect", path, "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert [t["token"] for t in report["special_tokens"]] == SPECIAL
    assert report["counts"]["special_tokens"] == len(SPECIAL)


def test_convert_to_gpt2_files_says_they_come_back_special(tmp_path):
    # Found by an audit: the library warned, the command line said nothing, and the files
    # loaded again encoded <think> as a special token (as text under --no-special-tokens).
    path = _qwen3_like(tmp_path)
    run = cli(tmp_path, "convert", path, "--to", "gpt2", "--out", tmp_path / "g")
    assert run.returncode == 0, run.stderr
    notes = [line for line in run.stderr.splitlines() if "added token" in line]
    assert len(notes) == 1 and "'<think>', '</think>'" in notes[0] and "--to hf" in notes[0]
