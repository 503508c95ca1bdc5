"""Training on text that is one long run of a character: the summary stays one short line
and the files are written at C speed (an audit: 10 MB of spaces printed a 30 MB line and
spent 22 s writing GPT-2's notation a byte at a time)."""

from __future__ import annotations

import json

from bpe_studio.cli import main
from bpe_studio.core import Tokenizer
from bpe_studio.core.formats.base.byte_chars import bytes_to_unicode, encode_token


def test_gpt2_notation_of_every_byte_and_of_long_tokens():
    table = bytes_to_unicode()
    every = bytes(range(256))
    assert encode_token(every) == "".join(table[b] for b in every)
    assert encode_token(b"\xff \n" * 1000) == (table[255] + table[32] + table[10]) * 1000
    assert encode_token(b"") == ""


def test_the_longest_token_of_a_long_run_is_shown_cut(tmp_path, capsys):
    corpus = tmp_path / "spaces.txt"
    corpus.write_bytes(b"x" + b" " * 200_000 + b"x\n")
    out = tmp_path / "tok"
    assert main(["train", str(corpus), "--vocab-size", "300", "--out", str(out)]) == 0
    line = next(x for x in capsys.readouterr().err.splitlines() if x.startswith("longest"))
    tok = Tokenizer.load(out)
    longest = max(tok.vocab.values(), key=len)
    assert set(longest) == {ord(" ")} and len(longest) > 1000  # merges double a run's token
    assert line == f"longest token: {'␣' * 53}…{'␣' * 26} ({len(longest):,} bytes)"
    vocab = json.loads((out / "vocab.json").read_text(encoding="utf-8"))
    assert vocab["Ġ" * len(longest)] == tok.encode_single_token(longest)
