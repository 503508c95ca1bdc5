"""The command line as a new user meets it (#11 items 1, 6, 7, 14-18), run as
``python -m bpe_studio`` in a subprocess from this worktree, in a scratch directory.

Each test names its item; each failed before the change it covers. Errors must be one line
on stderr naming what the user gave, with a non-zero exit and no traceback.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_run import PROGRESS, cli_bytes
from core_helpers import EOT, FIXTURES, slice_head, write_text

import bpe_studio


def error_line(result) -> str:
    """The one line of a failed run's stderr, besides progress bars drawn before it."""
    stderr = result.stderr.decode()
    assert result.returncode != 0, stderr
    assert "Traceback" not in stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(PROGRESS)]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.fixture(scope="module")
def text() -> str:
    story = slice_head("tinystories", 30_000)
    return story[:15_000] + EOT + story[15_000:] + EOT


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, text) -> Path:
    return write_text(tmp_path_factory.mktemp("corpus") / "corpus.txt", text)


@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory, corpus) -> Path:
    """Trained with the default special token and one more, <pad>."""
    out = tmp_path_factory.mktemp("tok")
    result = cli_bytes(out, "train", corpus, "--vocab-size", 400,
                 "--special-token", EOT, "--special-token", "<pad>", "--out", out)  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    return out


def vocab_of(directory: Path) -> dict[str, int]:
    return json.loads((directory / "vocab.json").read_text(encoding="utf-8"))


# --- item 1: encode --special-token ------------------------------------------------------


def test_1_special_token_absent_from_vocab_is_refused(tmp_path, corpus, trained_dir):
    out = tmp_path / "ids.npy"
    result = cli_bytes(tmp_path, "encode", corpus, "--tokenizer", trained_dir,
                 "--special-token", "<|fim|>", "--out", out)  # fmt: skip
    line = error_line(result)
    assert "<|fim|>" in line and "vocab.json" in line
    assert not out.exists()


def test_1_naming_a_special_token_keeps_the_vocabularys_own(tmp_path, trained_dir, text):
    """--special-token <pad> adds <pad>; <|endoftext|> stays one special token."""
    sample = f"a cat{EOT}<pad> sat{EOT}"
    src = write_text(tmp_path / "in.txt", sample)
    out = tmp_path / "ids.npy"
    result = cli_bytes(tmp_path, "encode", src, "--tokenizer", trained_dir,
                 "--special-token", "<pad>", "--out", out)  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    ids = np.load(out).tolist()
    vocab = vocab_of(trained_dir)
    assert ids.count(vocab[EOT]) == 2 and ids.count(vocab["<pad>"]) == 1


# --- item 6: train --out over existing files ---------------------------------------------


def test_6_train_refuses_to_replace_files_without_force(tmp_path, corpus):
    out = tmp_path / "tok"
    out.mkdir()
    (out / "vocab.json").write_text("{}", encoding="utf-8")
    result = cli_bytes(tmp_path, "train", corpus, "--vocab-size", 300, "--out", out)
    line = error_line(result)
    assert str(out) in line and "vocab.json" in line and "--force" in line
    assert (out / "vocab.json").read_text(encoding="utf-8") == "{}"
    assert not (out / "merges.txt").exists()

    forced = cli_bytes(tmp_path, "train", corpus, "--vocab-size", 300, "--out", out, "--force")
    assert forced.returncode == 0, forced.stderr.decode()
    assert len(vocab_of(out)) == 300


# --- item 7: the output location is checked before training ------------------------------


def bad_tail_corpus(tmp_path: Path) -> Path:
    """A corpus whose last byte is not UTF-8: only pre-tokenization would find it, so an
    error about --out proves that --out was checked first."""
    path = tmp_path / "late_error.txt"
    path.write_bytes(b"hello world\n" * 1000 + b"\xff")
    return path


def test_7_out_is_an_existing_file(tmp_path):
    target = tmp_path / "passwd"
    target.write_text("root:x:0:0\n", encoding="utf-8")
    result = cli_bytes(tmp_path, "train", bad_tail_corpus(tmp_path), "--vocab-size", 300,
                 "--out", target)  # fmt: skip
    line = error_line(result)
    assert str(target) in line and "not a directory" in line
    assert target.read_text(encoding="utf-8") == "root:x:0:0\n"


def test_7_out_below_a_file(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("x", encoding="utf-8")
    result = cli_bytes(tmp_path, "train", bad_tail_corpus(tmp_path), "--vocab-size", 300,
                 "--out", blocker / "sub")  # fmt: skip
    line = error_line(result)
    assert str(blocker / "sub") in line and "is a file" in line


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs Linux's /proc")
def test_7_out_where_no_file_can_be_made(tmp_path):
    result = cli_bytes(tmp_path, "train", bad_tail_corpus(tmp_path), "--vocab-size", 300,
                 "--out", "/proc/bpe_studio_out")  # fmt: skip
    line = error_line(result)
    assert "/proc/bpe_studio_out" in line and "does not accept new files" in line


# --- item 14: nothing learned ------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "why"),
    [("", "empty"), ("a\nb\nc\n1\n2\n", "no pair"), (EOT * 3, "no pair")],
)
def test_14_nothing_learned_is_an_error_and_writes_nothing(tmp_path, content, why):
    src = write_text(tmp_path / "src.txt", content)
    out = tmp_path / "out"
    result = cli_bytes(tmp_path, "train", src, "--vocab-size", 300, "--out", out)
    line = error_line(result)
    assert "src.txt" in line and "nothing was learned" in line and why in line
    assert not out.exists()


def _no_rows(path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": pa.array([], pa.string())}), path)


@pytest.mark.parametrize(
    ("name", "write"),
    [
        ("src.txt.gz", lambda p: p.write_bytes(gzip.compress(b""))),
        ("src.jsonl", lambda p: p.write_text("\n  \n\n", encoding="utf-8")),
        ("src.jsonl.gz", lambda p: p.write_bytes(gzip.compress(b'{"text": ""}\n'))),
        ("src.parquet", _no_rows),
    ],
)
def test_14_a_file_of_no_text_says_so_as_an_empty_one_does(tmp_path, name, write):
    """Stored bytes, but no text once decompressed or read as records: not "no two bytes
    side by side", which speaks of text there is."""
    write(tmp_path / name)
    out = tmp_path / "out"
    result = cli_bytes(tmp_path, "train", name, "--vocab-size", 300, "--out", out)
    assert error_line(result) == (
        f"bpe-studio: error: {name}: nothing was learned: the file holds no text; no files written"
    )
    assert not out.exists()


# --- item 15: errors name the user's path and the real reason ----------------------------


def test_15_encode_out_is_a_directory(tmp_path, corpus, trained_dir):
    target = tmp_path / "ids_dir"
    target.mkdir()
    line = error_line(
        cli_bytes(tmp_path, "encode", corpus, "--tokenizer", trained_dir, "--out", target)
    )
    assert str(target) in line and "is a directory" in line and ".tmp" not in line


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs Linux's /proc")
def test_15_encode_out_under_proc(tmp_path, corpus, trained_dir):
    result = cli_bytes(
        tmp_path, "encode", corpus, "--tokenizer", trained_dir, "--out", "/proc/x.npy"
    )
    line = error_line(result)
    assert "/proc/x.npy" in line and "does not accept new files" in line and "tmp" not in line


# --- item 16: a merges line whose tokens vocab.json lacks --------------------------------


def test_16_merge_with_a_token_missing_from_vocab(tmp_path, corpus, trained_dir):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "vocab.json").write_bytes((trained_dir / "vocab.json").read_bytes())
    lines = (trained_dir / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert "zq" not in vocab_of(trained_dir) and "xj" not in vocab_of(trained_dir)
    lines.insert(4, "zq xj")  # line 5 of the file
    (bad / "merges.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli_bytes(
        tmp_path, "encode", corpus, "--tokenizer", bad, "--out", tmp_path / "ids.npy"
    )
    line = error_line(result)
    assert str(bad / "merges.txt") in line and "line 5" in line and "'zq'" in line
    assert "vocab.json" in line


# --- item 18: what a user expects of a command line --------------------------------------


def test_18_version(tmp_path):
    result = cli_bytes(tmp_path, "--version")
    assert result.returncode == 0
    assert bpe_studio.__version__ in result.stdout.decode()


def test_18_help_tells_the_default_special_token_and_vocab_size(tmp_path):
    help_text = " ".join(cli_bytes(tmp_path, "train", "--help").stdout.decode().split())
    assert "--no-special-tokens" in help_text and EOT in help_text
    vocab_help = help_text.split("--vocab-size N", 2)[2]
    assert vocab_help.lstrip().startswith("size of the vocabulary")


def test_18_default_special_token_is_the_apps(tmp_path, corpus):
    result = cli_bytes(tmp_path, "train", corpus, "--vocab-size", 300, "--out", "a")
    assert result.returncode == 0, result.stderr.decode()
    assert vocab_of(tmp_path / "a")[EOT] == 256
    result = cli_bytes(tmp_path, "train", corpus, "--vocab-size", 300, "--no-special-tokens",
                 "--out", "b")  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    assert EOT not in vocab_of(tmp_path / "b") and len(vocab_of(tmp_path / "b")) == 300


def test_18_encode_stdin_and_decode_stdout_round_trip(tmp_path, trained_dir, text):
    data = text.encode("utf-8")
    from_file = cli_bytes(tmp_path, "encode", write_text(tmp_path / "t.txt", text),
                    "--tokenizer", trained_dir, "--out", "file.npy")  # fmt: skip
    from_stdin = cli_bytes(tmp_path, "encode", "-", "--tokenizer", trained_dir,
                           "--out", "stdin.npy", stdin=data)  # fmt: skip
    assert from_file.returncode == 0 and from_stdin.returncode == 0, from_stdin.stderr.decode()
    assert np.load(tmp_path / "stdin.npy").tolist() == np.load(tmp_path / "file.npy").tolist()
    decoded = cli_bytes(tmp_path, "decode", "stdin.npy", "--tokenizer", trained_dir)
    assert decoded.returncode == 0, decoded.stderr.decode()
    assert decoded.stdout == data
    to_file = cli_bytes(tmp_path, "decode", "-", "--tokenizer", trained_dir, "--out", "back.txt",
                  stdin=(tmp_path / "file.npy").read_bytes())  # fmt: skip
    assert to_file.returncode == 0 and (tmp_path / "back.txt").read_bytes() == data


def test_18_decode_unknown_id(tmp_path, trained_dir):
    np.save(tmp_path / "ids.npy", np.array([1, 2, 70_000], dtype=np.uint32))
    line = error_line(cli_bytes(tmp_path, "decode", "ids.npy", "--tokenizer", trained_dir))
    assert "ids.npy" in line and "70000" in line


def test_18_encode_with_gpt2s_own_file_names(tmp_path):
    tok_dir = tmp_path / "gpt2"
    tok_dir.mkdir()
    for name in ("gpt2_vocab.json", "gpt2_merges.txt"):
        (tok_dir / name).write_bytes((FIXTURES / name).read_bytes())
    src = write_text(tmp_path / "in.txt", f"Hello world{EOT} again")
    result = cli_bytes(tmp_path, "encode", src, "--tokenizer", tok_dir, "--out", "ids.npy")
    assert result.returncode == 0, result.stderr.decode()
    # GPT-2's published ids for this text.
    assert np.load(tmp_path / "ids.npy").tolist() == [15496, 995, 50256, 757]


def test_18_gui_demo_is_accepted(tmp_path):
    env = {k: "" for k in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    if not sys.platform.startswith("linux"):
        pytest.skip("the no-display refusal applies to Linux")
    result = cli_bytes(tmp_path, "gui", "--demo", env_update=env)
    assert result.returncode == 2
    stderr = result.stderr.decode()
    assert "no display" in stderr and "unrecognized" not in stderr


def test_18_summaries_go_to_stderr_and_stdout_stays_empty(tmp_path, corpus, trained_dir):
    train = cli_bytes(tmp_path, "train", corpus, "--vocab-size", 300, "--out", "t")
    enc = cli_bytes(tmp_path, "encode", corpus, "--tokenizer", trained_dir, "--out", "ids.npy")
    for result, word in ((train, "wrote"), (enc, "wrote")):
        assert result.returncode == 0
        assert result.stdout == b""
        assert word in result.stderr.decode()


def test_a_small_text_is_measured_in_kilobytes(tmp_path):
    """The terminals audit: encoding a 3.8 kB text said "encoded 0.00 MB", and inspect's
    corpus line "0.00 MB of text"."""
    text = "A small text, read whole " * 152
    assert len(text.encode()) == 3_800
    path = write_text(tmp_path / "small.txt", text)
    enc = cli_bytes(tmp_path, "encode", path, "--tokenizer", "gpt2", "--out", "ids.npy")
    assert enc.returncode == 0 and "encoded 3.80 kB into " in enc.stderr.decode()
    inspect = cli_bytes(tmp_path, "inspect", "gpt2", "--corpus", path)
    assert inspect.returncode == 0
    assert f"Corpus {path}: 3.80 kB of text, " in inspect.stdout.decode()
    tiny = write_text(tmp_path / "tiny.txt", "hi there")
    enc = cli_bytes(tmp_path, "encode", tiny, "--tokenizer", "gpt2", "--out", "tiny.npy")
    assert "encoded 8 bytes into 2 tokens" in enc.stderr.decode()
