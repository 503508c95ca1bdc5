"""Records as users pipe and name them (#32): ``zstdcat x.jsonl.zst | bpe-studio train -
--records jsonl`` trains on each record's text (JSON Lines through standard input was trained
on as plain text, braces and all); without ``--records``, such input is refused with one line
rather than trained on silently; compressed bytes on standard input are recognised; every
``.jsonl.zst`` file trains (it failed with an empty message); ``--text-field`` for plain text
is one line in the options' words. The oracle is the same records in a ``.jsonl`` file,
trained by name."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from cli_run import _env, cli, error_line, ok
from core_helpers import SLICES, read_fixture

VOCAB = 400


def records(field: str = "content") -> bytes:
    docs = [p for p in read_fixture(SLICES["mixed_web"])[:40_000].split("\n") if p.strip()]
    return "".join(
        json.dumps({field: d, "url": f"u{i}"}) + "\n" for i, d in enumerate(docs)
    ).encode()


def piped(cwd: Path, data: bytes, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bpe_studio", *map(str, args)],
        input=data.decode("latin-1"),
        capture_output=True,
        text=True,
        encoding="latin-1",
        cwd=cwd,
        env=_env(),
        timeout=600,
    )


@pytest.fixture
def oracle(tmp_path) -> bytes:
    """merges.txt of the records trained from a .jsonl file named as such."""
    (tmp_path / "d.jsonl").write_bytes(records())
    ok(cli(tmp_path, "train", "d.jsonl", "--text-field", "content", "--vocab-size", VOCAB,
           "--out", "named"))  # fmt: skip
    return (tmp_path / "named" / "merges.txt").read_bytes()


@pytest.mark.parametrize("compress", [None, gzip.compress, zstandard.compress])
def test_records_through_standard_input(tmp_path, oracle, compress):
    data = records() if compress is None else compress(records())
    result = piped(tmp_path, data, "train", "-", "--records", "jsonl", "--text-field", "content",
                   "--vocab-size", VOCAB, "--out", "piped")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "piped" / "merges.txt").read_bytes() == oracle


def test_json_lines_without_records_is_refused_not_trained_as_text(tmp_path):
    result = piped(tmp_path, records(), "train", "-", "--vocab-size", VOCAB, "--out", "o")
    assert error_line(result) == (
        "bpe-studio: error: <stdin>: its first line is a JSON object: give --records jsonl to "
        "read each record's text field (--text-field, default text), or --records none to "
        "read it as plain text"
    )
    assert not (tmp_path / "o").exists()
    # Said so, it is plain text, JSON syntax included.
    result = piped(tmp_path, records(), "train", "-", "--records", "none", "--vocab-size", VOCAB,
                   "--out", "text")  # fmt: skip
    assert result.returncode == 0, result.stderr


def test_a_json_named_file_of_records(tmp_path, oracle):
    (tmp_path / "c4.json.gz").write_bytes(gzip.compress(records()))
    line = error_line(cli(tmp_path, "train", "c4.json.gz", "--vocab-size", VOCAB, "--out", "o"))
    assert line.startswith("bpe-studio: error: c4.json.gz: its first line is a JSON object")
    ok(cli(tmp_path, "train", "c4.json.gz", "--records", "jsonl", "--text-field", "content",
           "--vocab-size", VOCAB, "--out", "json"))  # fmt: skip
    assert (tmp_path / "json" / "merges.txt").read_bytes() == oracle


def test_jsonl_zst_trains(tmp_path, oracle):
    (tmp_path / "d2.jsonl.zst").write_bytes(zstandard.compress(records()))
    ok(cli(tmp_path, "train", "d2.jsonl.zst", "--text-field", "content", "--vocab-size", VOCAB,
           "--out", "zst"))  # fmt: skip
    assert (tmp_path / "zst" / "merges.txt").read_bytes() == oracle


def test_a_text_field_for_plain_text_is_one_line(tmp_path):
    (tmp_path / "x.txt").write_text("hello world " * 100, encoding="utf-8")
    result = cli(tmp_path, "train", "x.txt", "--text-field", "content", "--vocab-size", VOCAB,
                 "--out", "o")  # fmt: skip
    assert error_line(result) == (
        "bpe-studio: error: x.txt: --text-field content given, but the corpus holds plain "
        "text, not records (a .jsonl, .ndjson or .parquet name says a file holds records; for "
        "standard input or other names, say --records jsonl or parquet)"
    )


@pytest.mark.parametrize("command", ["train", "encode"])
def test_memory_urls_are_for_python(tmp_path, command):
    options = ["--vocab-size", VOCAB] if command == "train" else ["--tokenizer", "gpt2"]
    line = error_line(cli(tmp_path, command, "memory://x.txt", *options, "--out", "o"))
    assert line == (
        "bpe-studio: error: memory://x.txt: memory:// files live inside one Python process, and "
        "a command starts with none; name a file (from Python, train_bpe reads memory:// URLs)"
    )
