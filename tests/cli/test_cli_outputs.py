"""One rule for every command's ``--out`` (train, encode, decode, convert), and pipes.

Contract (bpe_studio/cli/output.py, README "Outputs"): ``-`` is standard output (encode writes
the .npy bytes there, which decode reads from ``-``; a tokenizer goes there only as one
tokenizer.json); an output never replaces an input, even with --force; an existing file is
replaced, and a folder holding a tokenizer gets another, only with --force. Inputs may be
standard input or a pipe; standard output closed early (``| head``) or full is reported
truthfully.
"""

from __future__ import annotations

import os
import random
import shlex
import string
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from cli_run import _env, cli, error_line, ok
from core_helpers import EOT, REPO_ROOT, slice_head, write_text

from bpe_studio.cli.output import tokenizer_files_in
from bpe_studio.core import Tokenizer

VOCAB_SIZE = 300


def run(cwd: Path, *args: object, stdin: bytes = b"", **kw) -> subprocess.CompletedProcess[bytes]:
    """``bpe-studio ARGS`` with bytes on standard input, its output as bytes."""
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    streams = kw or {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return subprocess.run(
        [sys.executable, "-m", "bpe_studio", *map(str, args)],
        input=stdin,
        cwd=cwd,
        env=env,
        timeout=300,
        **streams,
    )


def last_line(result: subprocess.CompletedProcess[bytes]) -> str:
    return result.stderr.decode().strip().splitlines()[-1]


@pytest.fixture(scope="module")
def text() -> str:
    return slice_head("english", 60_000) + EOT + slice_head("chinese", 20_000)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, text) -> Path:
    folder = tmp_path_factory.mktemp("outputs")
    write_text(folder / "corpus.txt", text)
    ok(cli(folder, "train", "corpus.txt", "--vocab-size", VOCAB_SIZE, "--out", "tok"))
    return folder


def test_encode_to_standard_output_round_trips_through_decode(workdir, text):
    tok = Tokenizer.load(workdir / "tok")
    encoded = run(workdir, "encode", "corpus.txt", "--tokenizer", "tok", "--out", "-")
    assert encoded.returncode == 0, encoded.stderr
    ids = np.load(__import__("io").BytesIO(encoded.stdout))
    assert ids.tolist() == tok.encode(text)
    assert last_line(encoded) == "wrote standard output"
    decoded = run(workdir, "decode", "-", "--tokenizer", "tok", "--out", "-", stdin=encoded.stdout)
    assert decoded.returncode == 0, decoded.stderr
    assert decoded.stdout == text.encode()
    # Standard input is encoded as the file is.
    piped = run(workdir, "encode", "-", "--tokenizer", "tok", "--out", "-", stdin=text.encode())
    assert piped.stdout == encoded.stdout


def input_of(workdir: Path, command: str) -> str:
    """What ``command`` reads in ``workdir``: the corpus, or its ids (written afresh)."""
    if command == "encode":
        return "corpus.txt"
    ok(cli(workdir, "encode", "corpus.txt", "--tokenizer", "tok", "--out", "ids.npy", "--force"))
    return "ids.npy"


@pytest.mark.parametrize("command", ["encode", "decode"])
def test_an_output_never_replaces_its_input(workdir, command):
    src = input_of(workdir, command)
    os.link(workdir / src, workdir / "link")
    before = (workdir / src).read_bytes()
    try:
        for out in (src, f"./{src}", workdir / src, "link", "tok/vocab.json", "tok/merges.txt"):
            result = cli(workdir, command, src, "--tokenizer", "tok", "--out", out, "--force")
            line = error_line(result)
            assert str(out) in line and "never replaces an input" in line, line
    finally:
        (workdir / "link").unlink()
    assert (workdir / src).read_bytes() == before


@pytest.mark.parametrize("command", ["encode", "decode"])
def test_an_output_never_replaces_the_file_standard_input_reads(workdir, command):
    # Found by fuzzing the command line: `encode - --out c.txt --force < c.txt` replaced the
    # text with its ids.
    src = input_of(workdir, command)
    before = (workdir / src).read_bytes()
    with open(workdir / src, "rb") as stdin:
        result = subprocess.run(
            [sys.executable, "-m", "bpe_studio", command, "-", "--tokenizer", "tok",
             "--out", src, "--force"],
            stdin=stdin, capture_output=True, text=True, cwd=workdir, env=_env(), timeout=600,
        )  # fmt: skip
    assert error_line(result) == (
        f"bpe-studio: error: {src}: is the file standard input reads (the input -); an output "
        "never replaces an input, even with --force"
    )
    assert (workdir / src).read_bytes() == before


@pytest.mark.parametrize(
    "args",
    [
        ["encode", "corpus.txt", "--tokenizer", "tok", "--out", "-"],
        ["inspect", "tok", "--json"],
        ["convert", "tok", "--to", "hf", "--out", "-"],
    ],
)
def test_a_closed_standard_output_is_one_line_before_any_work(workdir, args):
    # Found by fuzzing the command line: `>&-` gave a 20-line AttributeError traceback.
    result = subprocess.run(
        [sys.executable, "-m", "bpe_studio", *args],
        stderr=subprocess.PIPE, text=True, cwd=workdir, env=_env(), timeout=600,
        preexec_fn=lambda: os.close(1),  # noqa: PLW1509 - the child's stdout closed, as >&- does
    )  # fmt: skip
    assert error_line(result) == (
        "bpe-studio: error: standard output: it is closed (>&-); nothing was written"
    )


def test_a_device_or_named_pipe_is_written_as_a_stream(workdir, tmp_path, text):
    """/dev/null and a FIFO are written to, not replaced (no --force, no temporary file)."""
    ok(cli(workdir, "decode", input_of(workdir, "decode"), "--tokenizer", "tok",
           "--out", os.devnull))  # fmt: skip
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        stderr = ok(cli(workdir, "decode", "ids.npy", "--tokenizer", "tok", "--out", fifo))
    finally:
        if reader.is_alive():  # the command failed before writing: let the reader go
            with open(fifo, "wb"):
                pass
        reader.join()
    assert got == [text.encode()] and stderr.strip().endswith(f"wrote {fifo}")


def test_train_never_writes_over_its_corpus(tmp_path, text):
    write_text(tmp_path / "merges.txt", text)
    result = cli(tmp_path, "train", "merges.txt", "--vocab-size", VOCAB_SIZE, "--out", ".",
                 "--force")  # fmt: skip
    line = error_line(result)
    assert "merges.txt" in line and "never replaces an input" in line
    assert (tmp_path / "merges.txt").read_text(encoding="utf-8") == text


def test_a_glob_that_matches_the_output_says_so_before_reading_it(tmp_path, text):
    """An audit: ``encode 'g/*' --out g/ids.npy --force`` run again (the glob now matching the
    first run's ids) said "g/ids.npy: UTF-16 text ..., not UTF-8": the files were looked
    into before the output rule. The rule's message names the glob (train's too)."""
    (tmp_path / "g").mkdir()
    write_text(tmp_path / "g" / "a.txt", text)
    encode = ("encode", "g/*", "--tokenizer", "gpt2", "--out", "g/ids.npy", "--force")
    ok(cli(tmp_path, *encode))
    ids = (tmp_path / "g" / "ids.npy").read_bytes()
    assert error_line(cli(tmp_path, *encode)) == (
        "bpe-studio: error: g/ids.npy: the input glob 'g/*' matches it; an output never "
        "replaces an input, even with --force"
    )
    assert (tmp_path / "g" / "ids.npy").read_bytes() == ids
    (tmp_path / "g" / "ids.npy").unlink()
    train = ("train", "g/*", "--vocab-size", VOCAB_SIZE, "--out", "g", "--force")
    ok(cli(tmp_path, *train))
    assert error_line(cli(tmp_path, *train)) == (
        "bpe-studio: error: g: writing vocab.json there would replace g/vocab.json, which the "
        "input glob 'g/*' matches; an output never replaces an input, even with --force"
    )


@pytest.mark.parametrize("command", ["encode", "decode"])
def test_an_existing_file_is_replaced_only_with_force(workdir, command):
    src = input_of(workdir, command)
    out = workdir / f"existing_{command}"
    out.write_bytes(b"keep me")
    line = error_line(cli(workdir, command, src, "--tokenizer", "tok", "--out", out))
    assert f"{out}: exists; pass --force" in line
    assert out.read_bytes() == b"keep me"
    ok(cli(workdir, command, src, "--tokenizer", "tok", "--out", out, "--force"))
    assert out.read_bytes() != b"keep me"


@pytest.mark.parametrize(
    ("existing", "beside"),
    [
        ("tokenizer.json", ()),
        ("vocab.json", ("merges.txt",)),
        ("gpt2_vocab.json", ("gpt2_merges.txt",)),
        ("x.tiktoken", ()),
    ],
)
def test_a_folder_holding_a_tokenizer_gets_another_only_with_force(
    workdir, tmp_path, existing, beside
):
    folder = tmp_path / "folder"
    folder.mkdir()
    for name in (existing, *beside):
        (folder / name).write_text("{}", encoding="utf-8")
    fmt = "gpt2" if existing == "tokenizer.json" else "hf"
    args = ("train", workdir / "corpus.txt", "--vocab-size", VOCAB_SIZE, "--format", fmt)
    line = error_line(cli(tmp_path, *args, "--out", folder))
    assert f"already holds a tokenizer ({existing})" in line and "--force" in line
    assert sorted(p.name for p in folder.iterdir()) == sorted([existing, *beside])
    said = ok(cli(tmp_path, *args, "--out", folder, "--force"))
    assert (folder / existing).read_text(encoding="utf-8") == "{}"
    # The outputs audit: the summary said only "wrote folder/tokenizer.json", and the next
    # encode --tokenizer folder failed ("holds 2 tokenizers").
    ours = folder / ("vocab.json" if fmt == "gpt2" else "tokenizer.json")
    assert (
        f"note: {folder} now holds 2 tokenizers ({', '.join(tokenizer_files_in(folder))}): "
        f"load this one by its name (--tokenizer {ours}), or remove the others' files"
    ) in said.splitlines()
    line = error_line(cli(tmp_path, "convert", "gpt2", "--to", fmt, "--out", folder))
    assert "already holds" in line


def test_a_tokenizer_to_standard_output_is_one_tokenizer_json(workdir, tmp_path):
    from tokenizers import Tokenizer as HfTokenizer

    result = run(workdir, "train", "corpus.txt", "--vocab-size", VOCAB_SIZE, "--format", "hf",
                 "--out", "-")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert last_line(result) == "wrote tokenizer.json to standard output"
    hf = HfTokenizer.from_str(result.stdout.decode())
    sample = "Once upon a time, 我们"
    assert hf.encode(sample).ids == Tokenizer.load(workdir / "tok").encode(sample)
    converted = run(workdir, "convert", "tok", "--to", "hf", "--out", "-")
    assert converted.returncode == 0 and converted.stdout == result.stdout
    # Without --format, train writes the one format of one file there (a README audit: the
    # synopsis offers --out - and the default gpt2 format of two files refused it).
    plain = run(workdir, "train", "corpus.txt", "--vocab-size", VOCAB_SIZE, "--out", "-")
    assert plain.returncode == 0 and plain.stdout == result.stdout, plain.stderr
    for args in (
        ("train", "corpus.txt", "--vocab-size", VOCAB_SIZE, "--format", "gpt2"),
        ("convert", "tok", "--to", "tiktoken"),
    ):
        line = error_line(cli(workdir, *args, "--out", "-"))
        assert "--out -:" in line and "two files" in line


def test_a_pipe_or_standard_input_is_a_corpus(workdir, tmp_path, text):
    expected = (workdir / "tok" / "merges.txt").read_bytes()
    result = run(tmp_path, "train", "-", "--vocab-size", VOCAB_SIZE, "--out", "stdin",
                 stdin=text.encode())  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "stdin" / "merges.txt").read_bytes() == expected
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(text.encode()), daemon=True)
    writer.start()
    try:
        ok(cli(tmp_path, "train", fifo, "--vocab-size", VOCAB_SIZE, "--out", "from_fifo"))
    finally:
        if writer.is_alive():  # the command failed before reading: let the writer go
            with open(fifo, "rb") as f:
                f.read()
        writer.join()
    assert (tmp_path / "from_fifo" / "merges.txt").read_bytes() == expected
    # Errors in a piped corpus name it as the user gave it, never a temporary copy.
    line = last_line(run(tmp_path, "train", "-", "--vocab-size", VOCAB_SIZE, "--out", "bad",
                         stdin=b"ok\n\xff"))  # fmt: skip
    assert line.startswith("bpe-studio: error: <stdin>: not valid UTF-8 at byte offset 3")


def test_empty_pipe_is_empty(tmp_path):
    result = run(tmp_path, "train", "-", "--vocab-size", VOCAB_SIZE, "--out", "o")
    assert "<stdin>: nothing was learned: the file is empty" in last_line(result)


def test_vocabulary_sizes_follow_the_cores_one_rule(workdir, tmp_path):
    """Below 256 + the special tokens is a usage error in the core's words; exactly that is
    a byte-level tokenizer with no merge (the core and the app allowed it; the command line
    refused it); past 2**31 names the real limit (#32)."""
    result = cli(workdir, "train", "corpus.txt", "--vocab-size", 256, "--out", "small")
    assert (result.returncode, error_line(result)) == (
        2,
        "bpe-studio: error: --vocab-size 256 is too small: it must be at least 257 (256 byte "
        "tokens + 1 special token)",
    )
    assert "pre-tokenizing" not in result.stderr
    for size in (0, -1):  # the same rule, not argparse's own "at least 1"
        result = cli(workdir, "train", "corpus.txt", "--vocab-size", size, "--out", "small")
        assert (result.returncode, error_line(result)) == (
            2,
            f"bpe-studio: error: --vocab-size {size} is too small: it must be at least 257 (256 "
            "byte tokens + 1 special token)",
        )
    for size, limit in ((1_000_000_000_000, "2,147,483,648"), (10**20, "2,147,483,648")):
        result = cli(workdir, "train", "corpus.txt", "--vocab-size", size, "--engine", "compiled",
                     "--out", "big")  # fmt: skip
        assert result.returncode == 2
        assert error_line(result) == (
            f"bpe-studio: error: --vocab-size {size:,} is too large: it must be at most {limit} "
            "(the compiled merge engine holds ids as 32-bit signed integers)"
        )
    stderr = ok(cli(workdir, "train", "corpus.txt", "--vocab-size", 257, "--out", tmp_path / "b"))
    assert "trained 0 merges (vocabulary 257)" in stderr and "a byte-level tokenizer" in stderr
    # A special token named twice is one token, as train_bpe and the app count it (an audit:
    # the command line alone asked for 258 here).
    twice = ["--special-token", "<x>", "--special-token", "<x>"]
    stderr = ok(cli(workdir, "train", "corpus.txt", "--vocab-size", 257, *twice, "--out", "t"))
    assert "trained 0 merges (vocabulary 257)" in stderr
    result = cli(workdir, "train", "corpus.txt", "--vocab-size", 256, *twice, "--out", "t2")
    assert error_line(result) == (
        "bpe-studio: error: --vocab-size 256 is too small: it must be at least 257 (256 byte "
        "tokens + 1 special token)"
    )
    text = write_text(tmp_path / "t.txt", f"héllo{EOT}")
    ids = tmp_path / "ids.npy"
    ok(cli(workdir, "encode", text, "--tokenizer", tmp_path / "b", "--out", ids))
    assert np.load(ids).tolist() == [*"héllo".encode(), 256]


def test_one_of_each_is_singular(workdir, tmp_path):
    stderr = ok(cli(workdir, "train", "corpus.txt", "--vocab-size", 258, "--out", tmp_path / "one"))
    assert "trained 1 merge (vocabulary 258)" in stderr
    np.save(tmp_path / "one.npy", np.array([104], dtype=np.uint16))
    stderr = ok(cli(workdir, "decode", tmp_path / "one.npy", "--tokenizer", "tok",
                    "--out", tmp_path / "h.txt"))  # fmt: skip
    assert "decoded 1 id into 1 byte; wrote" in stderr
    write_text(tmp_path / "empty.txt", "")
    stderr = ok(cli(workdir, "encode", tmp_path / "empty.txt", "--tokenizer", "tok",
                    "--out", tmp_path / "e.npy"))  # fmt: skip
    assert "into 0 tokens" in stderr and "compression ratio" not in stderr


def test_decode_makes_missing_folders_and_removes_them_when_it_fails(workdir, tmp_path, text):
    """decode --out new/sub/text.txt said "No such file or directory" where encode makes the
    folders (README "Outputs"); a decode that fails once they are made removes them."""
    ids = input_of(workdir, "decode")
    out = tmp_path / "new" / "sub" / "text.txt"
    ok(cli(workdir, "decode", ids, "--tokenizer", "tok", "--out", out))
    assert out.read_bytes() == text.encode()
    # A name no file system takes fails only when the whole text is put in place.
    refused = tmp_path / "gone" / "sub" / ("x" * 300)
    line = error_line(cli(workdir, "decode", ids, "--tokenizer", "tok", "--out", refused))
    assert line.endswith("cannot write there: File name too long"), line
    assert not (tmp_path / "gone").exists()


def test_encode_makes_missing_folders_when_its_ids_are_moved_into_place(workdir, tmp_path):
    """encode --add-special-tokens --out new/sub/ids.npy said "No such file or directory"
    (its ids go to a folder beside --out first, made in a folder that was not there); so
    does every encode whose tokenizer has files (checked unchanged before the move)."""
    for name, flag in [("a", ("--add-special-tokens",)), ("b", ())]:
        out = tmp_path / name / "sub" / "ids.npy"
        ok(cli(workdir, "encode", "corpus.txt", "--tokenizer", "tok", "--out", out, *flag))
        assert np.load(out).size and os.listdir(out.parent) == ["ids.npy"]


def test_full_standard_output_is_named(workdir):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    for command in ("decode", "encode"):
        args = (command, input_of(workdir, command), "--tokenizer", "tok", "--out", "-")
        with open("/dev/full", "wb") as full:
            result = run(workdir, *args, stdout=full, stderr=subprocess.PIPE)
        assert result.returncode == 1
        assert last_line(result) == (
            "bpe-studio: error: standard output: cannot write there: No space left on device"
        )


def test_standard_output_closed_early_is_not_claimed_written(workdir, text):
    big = workdir / "big.txt"
    write_text(big, text * 8)
    ok(cli(workdir, "encode", big, "--tokenizer", "tok", "--out", "big.npy", "--force"))
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "bpe_studio", "decode", "big.npy", "--tokenizer", "tok"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workdir,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert len(proc.stdout.read(10)) == 10
    proc.stdout.close()  # as `| head -c 10` does
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141
    assert "Traceback" not in stderr and "Exception" not in stderr
    size = len((text * 8).encode())
    assert "standard output was closed after" in stderr and f"of {size:,} bytes" in stderr
    assert "wrote standard output" not in stderr


def test_ids_files_that_are_not_arrays_of_ids_say_why(tmp_path, workdir):
    good = tmp_path / "good.npy"
    np.save(good, np.arange(300, dtype=np.uint16))
    cases = {
        "empty.npy": (b"", "is empty"),
        "text.npy": (b"hello", "is not a .npy file"),
        "cut.npy": (good.read_bytes()[:200], "is a damaged .npy file"),
    }
    for name, (data, needle) in cases.items():
        (tmp_path / name).write_bytes(data)
        line = error_line(cli(workdir, "decode", tmp_path / name, "--tokenizer", "tok"))
        assert f"{tmp_path / name}: {needle}" in line, line
    np.save(tmp_path / "objects.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
    line = error_line(cli(workdir, "decode", tmp_path / "objects.npy", "--tokenizer", "tok"))
    assert "holds Python objects" in line


def test_a_bad_regex_in_a_sidecar_names_the_file(tmp_path, workdir):
    import json

    ok(cli(tmp_path, "convert", "gpt2", "--to", "tiktoken", "--out", "tk"))
    sidecar = tmp_path / "tk" / "gpt2.tiktoken.json"
    data = json.loads(sidecar.read_text(encoding="utf-8"))
    data["pat_str"] = "(ab"
    sidecar.write_text(json.dumps(data), encoding="utf-8")
    line = error_line(cli(tmp_path, "encode", workdir / "corpus.txt", "--tokenizer",
                          "tk/gpt2.tiktoken", "--out", "x.npy"))  # fmt: skip
    assert line.startswith(
        f"bpe-studio: error: {Path('tk/gpt2.tiktoken.json')}: pat_str: pattern '(ab'"
    )


def test_the_hint_after_a_custom_regex_pastes_into_a_shell(workdir, tmp_path):
    regex_text = r"'s|\p{L}+ ?|[^\p{L}]"
    stderr = ok(cli(workdir, "train", "corpus.txt", "--vocab-size", VOCAB_SIZE, "--pattern",
                    regex_text, "--format", "gpt2", "--out", tmp_path / "custom"))  # fmt: skip
    note = next(line for line in stderr.splitlines() if "load them with --pattern" in line)
    words = shlex.split(note.split("load them with ", 1)[1].split(" to split text")[0])
    assert words == ["--pattern", regex_text]
    assert f"pattern: {shlex.quote(regex_text)}" in stderr


def test_engine_advice_names_an_option_the_command_has(workdir, tmp_path):
    # Distinct random words: more merge sites than the Python engine's ids can number (a
    # vocabulary size the corpus cannot reach no longer sizes the engine).
    rng = random.Random(5)
    words = ("".join(rng.choices(string.ascii_lowercase, k=8)) for _ in range(170_000))
    write_text(tmp_path / "words.txt", " ".join(words))
    result = cli(workdir, "train", tmp_path / "words.txt", "--vocab-size", 2_000_000,
                 "--engine", "python", "--out", tmp_path / "e")  # fmt: skip
    line = error_line(result)
    assert "--engine compiled" in line and "engine='" not in line
    python = tmp_path / "python"
    ok(cli(workdir, "train", "corpus.txt", "--vocab-size", VOCAB_SIZE, "--engine", "python",
           "--out", python))  # fmt: skip
    assert (python / "merges.txt").read_bytes() == (workdir / "tok" / "merges.txt").read_bytes()


@pytest.mark.parametrize(
    ("fmt", "files", "pronoun"),
    [("hf", "tokenizer.json", "it"), ("gpt2", "vocab.json and merges.txt", "them")],
)
def test_a_folder_holding_the_same_files_names_them_in_number(tmp_path, fmt, files, pronoun):
    first = cli(tmp_path, "convert", "gpt2", "--to", fmt, "--out", "out")
    ok(first)
    line = error_line(cli(tmp_path, "convert", "gpt2", "--to", fmt, "--out", "out"))
    assert f"already holds {files}; pass --force to replace {pronoun}," in line


@pytest.mark.parametrize(
    ("fmt", "first", "second"),
    [("gpt2", "vocab.json", "merges.txt"), ("tiktoken", "x.tiktoken", "x.tiktoken.json")],
)
def test_a_folder_where_a_tokenizer_file_goes_is_named_before_any_work(
    tmp_path, fmt, first, second
):
    """A folder in place of the second file (merges.txt) failed, even with --force, only once
    the first file (vocab.json) was already replaced, and the line named --out alone
    ("out: cannot write there: Is a directory"). It is named before anything is written."""
    out = tmp_path / "out"
    out.mkdir()
    (out / first).write_text("{}", encoding="utf-8")
    (out / second).mkdir()
    for force in ((), ("--force",)):
        name = ("--name", "x") if fmt == "tiktoken" else ()
        args = ("convert", "gpt2", "--to", fmt, *name, "--out", "out", *force)
        assert error_line(cli(tmp_path, *args)) == (
            f"bpe-studio: error: {os.path.join('out', second)}: is a directory, where a file "
            "is to be written (--force replaces files, not directories); move it away, or "
            "choose another --out"
        )
        assert (out / first).read_text(encoding="utf-8") == "{}"
        assert sorted(p.name for p in out.iterdir()) == sorted([first, second])


def _in_a_notebook(stdout, *args: object) -> tuple[int, str]:
    """``main(ARGS)`` with ``sys.stdout`` replaced by ``stdout``, as a notebook replaces it:
    the exit status and stderr."""
    import contextlib
    import io

    from bpe_studio.cli import main

    err = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, err.getvalue()


def test_standard_output_replaced_as_in_a_notebook(tmp_path):
    """Found by the terminals audit: with sys.stdout an io.StringIO (a notebook's stream),
    inspect --json, decode and encode --out - did all the work, then ended in "bpe-studio:
    error: fileno". Text goes through the stream; binary ids, which a text stream cannot
    hold, are refused before any work, saying to name a file; a stream with a binary buffer
    takes them as they are."""
    import io

    text = "Ünïcödé text, written out. " * 20
    write_text(tmp_path / "t.txt", text)
    ids = Tokenizer.preset("gpt2").encode(text)
    np.save(tmp_path / "ids.npy", np.array(ids, dtype=np.uint16))
    stdout = io.StringIO()
    assert _in_a_notebook(stdout, "decode", tmp_path / "ids.npy", "--tokenizer", "gpt2")[0] == 0
    assert stdout.getvalue() == text
    stdout = io.StringIO()
    code, err = _in_a_notebook(stdout, "inspect", "gpt2", "--top", 3)
    assert code == 0 and err == ""
    assert stdout.getvalue().startswith("gpt2: byte-level BPE, 50,257 tokens\n")
    stdout = io.StringIO()
    code, err = _in_a_notebook(stdout, "encode", tmp_path / "t.txt", "--tokenizer", "gpt2",
                               "--out", "-")  # fmt: skip
    assert code == 1 and stdout.getvalue() == ""
    assert err == (
        "bpe-studio: error: --out -: standard output is a text stream here (StringIO: "
        "sys.stdout replaced, as in a notebook), and the ids are binary (.npy bytes); pass "
        "--out FILE\n"
    )
    binary = io.BytesIO()
    wrapper = io.TextIOWrapper(binary, encoding="utf-8")  # a buffer, no file behind it
    code, err = _in_a_notebook(wrapper, "encode", tmp_path / "t.txt", "--tokenizer", "gpt2",
                               "--out", "-")  # fmt: skip
    assert code == 0, err
    assert np.load(io.BytesIO(binary.getvalue())).tolist() == ids


def test_a_jupyter_stream_is_written_through_though_it_has_a_descriptor(tmp_path):
    """The review: Jupyter's stream answers fileno() with a copy of the kernel's own standard
    output, so inspect's report and decode's text went there, never to the notebook, and
    encode --out - wrote its .npy bytes there too."""
    import io

    class KernelStream(io.TextIOBase):  # what ipykernel's OutStream is to this code
        def __init__(self, fd: int) -> None:
            self.fd, self.text = fd, []

        def fileno(self) -> int:
            return self.fd

        def write(self, s: str) -> int:
            self.text.append(s)
            return len(s)

    text = "Ünïcödé text. " * 20
    write_text(tmp_path / "t.txt", text)
    np.save(tmp_path / "ids.npy", np.array(Tokenizer.preset("gpt2").encode(text), np.uint16))
    with open(tmp_path / "kernel_stdout", "wb") as kernel:
        stdout = KernelStream(kernel.fileno())
        assert _in_a_notebook(stdout, "decode", tmp_path / "ids.npy", "--tokenizer", "gpt2")[0] == 0
        code, err = _in_a_notebook(stdout, "encode", tmp_path / "t.txt", "--tokenizer", "gpt2",
                                   "--out", "-")  # fmt: skip
    assert "".join(stdout.text) == text
    assert code == 1 and "standard output is a text stream here (KernelStream" in err
    assert (tmp_path / "kernel_stdout").read_bytes() == b""


def _in_process(*args: object) -> tuple[int, str]:
    """``main(ARGS)`` in this process (so that a test can patch what it calls): the exit
    status and stderr."""
    import contextlib
    import io

    from bpe_studio.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, err.getvalue()


def _another_run_writes(monkeypatch, files: dict[Path, bytes], when: str) -> None:
    """``files`` appear (another run with the same new --out finished first) once this run
    makes its first temporary file for a file named ``when``: after every check of --out,
    before the write is put in place. Deterministic, unlike two runs timed against
    each other."""
    from bpe_studio.core.io import atomic

    real = atomic._temp_file

    def temp_file(target: Path):
        if target.name == when and not any(p.exists() for p in files):
            for path, data in files.items():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        return real(target)

    monkeypatch.setattr(atomic, "_temp_file", temp_file)


def _no_hard_links(monkeypatch) -> None:
    """A file system without hard links (FAT, some network shares)."""
    from bpe_studio.core.io import atomic

    def refuse(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(atomic.os, "link", refuse)


MEANWHILE = "(written since this run checked --out: by another run?)"


@pytest.mark.parametrize("links", [True, False], ids=["links", "no-hard-links"])
def test_a_train_whose_new_out_another_run_filled_meanwhile_fails(
    workdir, tmp_path, monkeypatch, links
):
    """The outputs audit: two trains started together into the same new --out both passed
    the check, both said "wrote tok/vocab.json and tok/merges.txt", and the later replaced
    the earlier without --force. The one that comes second fails on the first file, so
    the other's pair stays whole; its merges are saved elsewhere, as for a full disk."""
    if not links:
        _no_hard_links(monkeypatch)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # where the merges are saved
    out = tmp_path / "tok"
    theirs = {out / "vocab.json": b'{"theirs": 0}\n', out / "merges.txt": b"#version: 0.2\n"}
    _another_run_writes(monkeypatch, theirs, "vocab.json")
    corpus = workdir / "corpus.txt"
    code, err = _in_process("train", corpus, "--vocab-size", VOCAB_SIZE, "--out", out)
    assert code == 1, err
    line = err.strip().splitlines()[-1]
    assert line.startswith(
        f"bpe-studio: error: {out}: already holds vocab.json {MEANWHILE}; pass --force to "
        "replace it, or choose another --out; the "
    ), line
    (saved,) = tmp_path.glob("bpe-studio-unsaved-*")
    assert f"merges learned were not saved there but in {saved} (move" in line
    assert sorted(p.name for p in saved.iterdir()) == ["merges.txt", "vocab.json"]
    assert {p: p.read_bytes() for p in out.iterdir()} == theirs  # nothing of this run's
    ok(cli(tmp_path, "train", corpus, "--vocab-size", VOCAB_SIZE, "--out", out, "--force"))


@pytest.mark.parametrize("links", [True, False], ids=["links", "no-hard-links"])
@pytest.mark.parametrize("tokenizer", ["tok", "gpt2"], ids=["staged", "in-place"])
def test_an_encode_whose_new_out_another_run_wrote_meanwhile_fails(
    workdir, tmp_path, monkeypatch, links, tokenizer
):
    """The outputs audit: two encodes into the same new .npy both exited 0 (4 times in
    5), the later replacing the earlier. Ids moved into place from a folder beside
    (a tokenizer of files: "staged") or written in place (a preset) alike."""
    if not links:
        _no_hard_links(monkeypatch)
    out = tmp_path / "ids.npy"
    _another_run_writes(monkeypatch, {out: b"theirs"}, "ids.npy")
    source = workdir / tokenizer if tokenizer == "tok" else tokenizer
    code, err = _in_process("encode", workdir / "corpus.txt", "--tokenizer", source,
                            "--out", out, "--workers", 1)  # fmt: skip
    assert code == 1, err
    assert err.strip().splitlines()[-1] == (
        f"bpe-studio: error: {out}: exists {MEANWHILE}; pass --force to replace it, or "
        "choose another --out"
    )
    assert out.read_bytes() == b"theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.npy"]


def test_a_decode_whose_new_out_another_run_wrote_meanwhile_fails(workdir, tmp_path, monkeypatch):
    ids = tmp_path / "ids.npy"
    ok(cli(tmp_path, "encode", workdir / "corpus.txt", "--tokenizer", workdir / "tok",
           "--out", ids))  # fmt: skip
    out = tmp_path / "text.txt"
    _another_run_writes(monkeypatch, {out: b"theirs"}, "text.txt")
    code, err = _in_process("decode", ids, "--tokenizer", workdir / "tok", "--out", out)
    assert code == 1, err
    assert err.strip().splitlines()[-1] == (
        f"bpe-studio: error: {out}: exists {MEANWHILE}; pass --force to replace it, or "
        "choose another --out"
    )
    assert out.read_bytes() == b"theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.npy", "text.txt"]
    # With --force, what is there is replaced, as the check allows.
    code, err = _in_process("decode", ids, "--tokenizer", workdir / "tok", "--out", out, "--force")
    assert code == 0, err
    assert out.read_text(encoding="utf-8") == (workdir / "corpus.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["encode", "decode"])
@pytest.mark.parametrize("out", ["new/", "new/.", "new//"])
def test_an_out_file_named_as_a_folder_is_refused_before_any_work(workdir, tmp_path, command, out):
    """The outputs audit: encode --out ids/ wrote a whole .npy named "ids", then failed
    ("ids/: Not a directory"); decode --out text/ wrote a file "text" and said "wrote
    text/", exit 0: Path drops the final "/"."""
    ids = tmp_path / "ids.npy"
    ok(cli(tmp_path, "encode", workdir / "corpus.txt", "--tokenizer", "gpt2", "--out", ids))
    given = workdir / "corpus.txt" if command == "encode" else ids
    result = cli(tmp_path, command, given, "--tokenizer", "gpt2", "--out", out)
    assert error_line(result) == (
        f"bpe-studio: error: {out}: names a folder; --out names the file to write"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.npy"]


@pytest.mark.parametrize("command", ["encode", "decode", "train"])
def test_standard_output_appended_to_an_input_is_refused(workdir, tmp_path, command):
    """The outputs audit: encode a.txt --out - >> a.txt exited 0, its ids appended to the
    corpus, and decode ids.npy >> ids.npy spoilt the ids, though --out /proc/self/fd/1
    was refused ("is the input a.txt"), as cat refuses cat a.txt >> a.txt."""
    corpus = tmp_path / "a.txt"
    corpus.write_bytes((workdir / "corpus.txt").read_bytes())
    ids = tmp_path / "ids.npy"
    ok(cli(tmp_path, "encode", corpus, "--tokenizer", workdir / "tok", "--out", ids))
    args = {
        "encode": ("encode", corpus, "--tokenizer", workdir / "tok", "--out", "-"),
        "decode": ("decode", ids, "--tokenizer", workdir / "tok"),
        "train": ("train", corpus, "--vocab-size", VOCAB_SIZE, "--format", "hf", "--out", "-"),
    }[command]
    target = ids if command == "decode" else corpus
    before = target.read_bytes()
    with open(target, "ab") as stdout:
        result = run(tmp_path, *args, stdout=stdout, stderr=subprocess.PIPE)
    assert result.returncode == 1
    assert result.stderr.decode().strip() == (
        f"bpe-studio: error: standard output: is the input {target} (the same file); an "
        "output never replaces an input, even with --force"
    )
    assert target.read_bytes() == before
