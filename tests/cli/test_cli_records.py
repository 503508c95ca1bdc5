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

import numpy as np
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


# Found by fuzzing the corpus inputs (each failed before): a first record longer than the bytes
# looked at was trained on as text; text that happens to begin "PAR1" was refused as Parquet;
# zstd that begins with a skippable frame (pzstd's) was read as text; inspect read records on
# standard input as text and had no --records; --records none did not override a .jsonl name;
# encode named its temporary copy of a .gz; an empty --text-field read the field "text".


def test_a_first_record_longer_than_the_look_ahead_is_still_a_record(tmp_path):
    data = json.dumps({"content": "long " * 30_000}).encode() + b"\n" + records()
    result = piped(tmp_path, data, "train", "-", "--vocab-size", VOCAB, "--out", "o")
    assert "its first line is a JSON object" in error_line(result)
    (tmp_path / "long.json").write_bytes(data)
    result = cli(tmp_path, "encode", "long.json", "--tokenizer", "gpt2", "--out", "ids.npy")
    assert "long.json: its first line is a JSON object" in error_line(result)


def test_text_beginning_like_parquet_is_text(tmp_path):
    text = b"PAR1 is the name of a gene. " + read_fixture(SLICES["english"])[:20_000].encode()
    (tmp_path / "par.txt").write_bytes(text)
    ok(cli(tmp_path, "encode", "par.txt", "--tokenizer", "gpt2", "--out", "file.npy"))
    result = piped(tmp_path, text, "encode", "-", "--tokenizer", "gpt2", "--out", "piped.npy")
    assert result.returncode == 0, result.stderr
    assert np.load(tmp_path / "piped.npy").tolist() == np.load(tmp_path / "file.npy").tolist()


def _parquet_bytes(tmp_path: Path) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    docs = [p for p in read_fixture(SLICES["mixed_web"])[:20_000].split("\n") if p.strip()]
    pq.write_table(pa.table({"text": docs}), tmp_path / "made.parquet", row_group_size=50)
    return (tmp_path / "made.parquet").read_bytes()


PARQUET_AS_TEXT = (
    "a Parquet file (or the start of one), not text: read its records as Parquet (a name "
    "ending in .parquet, or --records parquet)"
)


@pytest.mark.parametrize(
    "form", ["named .txt", "--records none", "cut short, piped", "gzip, piped"]
)
def test_parquet_read_as_text_is_named_parquet(tmp_path, form):
    """An audit: Parquet's first bytes, read as text, were taken for UTF-16 ("convert it:
    iconv -f UTF-16BE"), advice that would have ruined the data."""
    data = _parquet_bytes(tmp_path)
    args = ["train", "--vocab-size", VOCAB, "--out", "o"]
    if form == "named .txt":
        (tmp_path / "p.txt").write_bytes(data)
        result, name = cli(tmp_path, *args, "p.txt"), "p.txt"
    elif form == "--records none":
        (tmp_path / "p.parquet").write_bytes(data)
        result, name = cli(tmp_path, *args, "p.parquet", "--records", "none"), "p.parquet"
    else:
        given = data[: len(data) // 2] if form == "cut short, piped" else gzip.compress(data)
        result, name = piped(tmp_path, given, *args, "-"), "<stdin>"
    assert error_line(result) == f"bpe-studio: error: {name}: {PARQUET_AS_TEXT}"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("ext", ["gz", "zst"])
def test_compressed_parquet_says_to_decompress_it(tmp_path, ext):
    """An audit: a compressed Parquet file failed as "not a readable Parquet file (seek)"."""
    data = _parquet_bytes(tmp_path)
    packed = gzip.compress(data) if ext == "gz" else zstandard.compress(data)
    (tmp_path / f"p.parquet.{ext}").write_bytes(packed)
    result = cli(tmp_path, "encode", f"p.parquet.{ext}", "--tokenizer", "gpt2", "--out", "i.npy")
    compression = "gzip" if ext == "gz" else "zstd"
    assert error_line(result) == (
        f"bpe-studio: error: p.parquet.{ext}: Parquet compressed with {compression}, which "
        "pyarrow cannot read (it seeks in the file): decompress it first (Parquet compresses "
        "its own pages)"
    )


def test_zstd_beginning_with_a_skippable_frame_on_standard_input(tmp_path):
    text = read_fixture(SLICES["english"])[:20_000].encode()
    skippable = (0x184D2A50).to_bytes(4, "little") + (4).to_bytes(4, "little") + b"meta"
    (tmp_path / "t.txt").write_bytes(text)
    ok(cli(tmp_path, "encode", "t.txt", "--tokenizer", "gpt2", "--out", "file.npy"))
    data = skippable + zstandard.compress(text)
    result = piped(tmp_path, data, "encode", "-", "--tokenizer", "gpt2", "--out", "piped.npy")
    assert result.returncode == 0, result.stderr
    assert np.load(tmp_path / "piped.npy").tolist() == np.load(tmp_path / "file.npy").tolist()


def _corpus_counts(result: subprocess.CompletedProcess[str]) -> tuple[int, int]:
    assert result.returncode == 0, result.stderr
    corpus = json.loads(result.stdout)["corpus"]
    return corpus["bytes"], corpus["tokens"]


def test_inspect_reads_records_as_train_does(tmp_path):
    (tmp_path / "d.jsonl").write_bytes(records())
    named = _corpus_counts(cli(tmp_path, "inspect", "gpt2", "--corpus", "d.jsonl",
                               "--text-field", "content", "--json"))  # fmt: skip
    texts = [json.loads(line)["content"] for line in records().decode().splitlines()]
    assert named[0] == sum(len(t.encode()) for t in texts)
    piped_in = piped(tmp_path, records(), "inspect", "gpt2", "--corpus", "-", "--json")
    assert "its first line is a JSON object" in error_line(piped_in)
    piped_in = piped(tmp_path, records(), "inspect", "gpt2", "--corpus", "-", "--records",
                     "jsonl", "--text-field", "content", "--json")  # fmt: skip
    assert _corpus_counts(piped_in) == named
    # --records none: the same bytes counted as text, JSON syntax included.
    (tmp_path / "d.txt").write_bytes(records())
    as_text = _corpus_counts(cli(tmp_path, "inspect", "gpt2", "--corpus", "d.txt", "--json"))
    none = cli(tmp_path, "inspect", "gpt2", "--corpus", "d.jsonl", "--records", "none", "--json")
    assert _corpus_counts(none) == as_text
    assert as_text[0] == len(records())


def test_records_none_reads_a_jsonl_name_as_text(tmp_path):
    (tmp_path / "d.jsonl").write_bytes(records())
    (tmp_path / "d.txt").write_bytes(records())
    ok(cli(tmp_path, "encode", "d.txt", "--tokenizer", "gpt2", "--out", "text.npy"))
    ok(cli(tmp_path, "encode", "d.jsonl", "--records", "none", "--tokenizer", "gpt2",
           "--out", "none.npy"))  # fmt: skip
    assert np.load(tmp_path / "none.npy").tolist() == np.load(tmp_path / "text.npy").tolist()


@pytest.mark.parametrize("command", ["train", "encode", "inspect"])
def test_the_compressed_file_is_named_and_its_offset_said_to_be_of_its_text(tmp_path, command):
    """An audit: train and inspect said "bad.txt.gz: not valid UTF-8 at byte offset 17",
    readable as an offset into the compressed bytes; encode said "(decompressed)"."""
    (tmp_path / "bad.txt.gz").write_bytes(gzip.compress(b"valid text, then \xff and more"))
    args = {
        "train": ("train", "bad.txt.gz", "--vocab-size", VOCAB, "--out", "o"),
        "encode": ("encode", "bad.txt.gz", "--tokenizer", "gpt2", "--out", "ids.npy"),
        "inspect": ("inspect", "gpt2", "--corpus", "bad.txt.gz"),
    }[command]
    line = error_line(cli(tmp_path, *args))
    assert line.startswith(
        "bpe-studio: error: bad.txt.gz (decompressed): not valid UTF-8 at byte offset 17 "
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt.gz"]


@pytest.mark.parametrize("command", ["train", "encode", "inspect"])
def test_an_empty_text_field_is_one_line(tmp_path, command):
    (tmp_path / "d.jsonl").write_bytes(records())
    args = {
        "train": ["train", "d.jsonl", "--vocab-size", VOCAB, "--out", "o"],
        "encode": ["encode", "d.jsonl", "--tokenizer", "gpt2", "--out", "o.npy"],
        "inspect": ["inspect", "gpt2", "--corpus", "d.jsonl"],
    }[command]
    line = error_line(cli(tmp_path, *args, "--text-field", ""))
    assert (
        line == "bpe-studio: error: the text field given is empty: name the records' field "
        "that holds text"
    )


def test_records_option_holds_whatever_the_names_say(tmp_path):
    """``--records jsonl|parquet`` says the inputs hold those records whatever their names
    say: a name saying the other kind was refused ("its name says jsonl records, not parquet
    as asked"). The oracle is each file trained under a name that says what it holds."""
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    texts = [json.loads(line)["content"] for line in records().decode().splitlines()]
    pq.write_table(pa.table({"content": texts}), tmp_path / "real.parquet")
    (tmp_path / "real.jsonl").write_bytes(records())
    (tmp_path / "parquet_named.jsonl").write_bytes((tmp_path / "real.parquet").read_bytes())
    (tmp_path / "jsonl_named.parquet").write_bytes(records())

    def merges(name: str, *args: str) -> bytes:
        out = name.replace(".", "_") + "_out"
        ok(cli(tmp_path, "train", name, "--text-field", "content", "--vocab-size", VOCAB,
               "--out", out, *args))  # fmt: skip
        return (tmp_path / out / "merges.txt").read_bytes()

    assert merges("parquet_named.jsonl", "--records", "parquet") == merges("real.parquet")
    assert merges("jsonl_named.parquet", "--records", "jsonl") == merges("real.jsonl")
    # What is not what was asked fails when read, naming the file.
    line = error_line(cli(tmp_path, "train", "real.jsonl", "--records", "parquet",
                          "--vocab-size", VOCAB, "--out", "bad"))  # fmt: skip
    assert line.startswith("bpe-studio: error: real.jsonl: not a readable Parquet file")
    assert not (tmp_path / "bad").exists()
