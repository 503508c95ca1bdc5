"""The command line on inputs and outputs that are not plain files: a ``/proc`` file that
reports 0 bytes, standard input closed or named twice, a symbolic link loop or a dangling
link as ``--out``, a name near the file system's limit, a folder that refuses new files, a
device or a pipe that never ends.
Before, these wrote 0 tokens with exit 0, tracebacks, or messages naming the wrong thing.

Oracle: tiktoken's GPT-2 built offline (``test_cli_sources.tiktoken_encoding``)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cli_run import _command, _env, cli, cli_bytes, error_line, ok
from core_helpers import SLICES, read_fixture, write_text
from test_cli_sources import tiktoken_encoding

from bpe_studio.core import Tokenizer


@pytest.fixture(scope="module")
def gpt2():
    return tiktoken_encoding("gpt2")


def test_a_proc_file_is_read_to_its_end(tmp_path, gpt2):
    """``/proc/version`` reports 0 bytes: it was encoded as empty, exit 0."""
    proc = Path("/proc/version")
    if not proc.is_file() or proc.stat().st_size != 0:
        pytest.skip("needs Linux's /proc/version, which reports 0 bytes but holds a line")
    out = tmp_path / "ids.npy"
    ok(cli(tmp_path, "encode", proc, "--tokenizer", "gpt2", "--out", out))
    assert np.load(out).tolist() == gpt2.encode(proc.read_text())


def _closed_stdin(cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(args),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_env(),
        timeout=600,
        preexec_fn=lambda: os.close(0),  # noqa: PLW1509 - closes fd 0 before exec only
    )


@pytest.mark.parametrize(
    "args",
    [
        ("encode", "-", "--tokenizer", "gpt2", "--out", "ids.npy"),
        ("train", "-", "--vocab-size", "300", "--out", "tok"),
        ("decode", "-", "--tokenizer", "gpt2", "--out", "text.txt"),
        ("inspect", "gpt2", "--corpus", "-"),
    ],
)
def test_a_closed_standard_input_is_one_line(tmp_path, args):
    """``<&-``: Python makes sys.stdin None; reading it was an AttributeError traceback.
    decode reads ids, not text (the terminals audit: it said "pipe the text in")."""
    line = error_line(_closed_stdin(tmp_path, *args))
    piped = (
        "the ids in (bpe-studio encode ... --out - | bpe-studio decode - ...)"
        if args[0] == "decode"
        else "the text in"
    )
    assert line == f"bpe-studio: error: <stdin>: it is closed (<&-); name a file, or pipe {piped}"
    assert list(tmp_path.iterdir()) == []


def _on_a_terminal(cwd: Path, *args: object, stdin: bool, stdout: bool) -> tuple[int, bytes]:
    """``bpe-studio ARGS`` with standard input or output a terminal (a pseudo-terminal,
    nothing typed at it), stderr captured: its exit status and stderr, once it has ended."""
    import pty

    controller, terminal = pty.openpty()
    try:
        result = subprocess.run(
            _command(args), stdin=terminal if stdin else subprocess.DEVNULL,
            stdout=terminal if stdout else subprocess.DEVNULL, stderr=subprocess.PIPE,
            cwd=cwd, env=_env(), timeout=120,
        )  # fmt: skip
    finally:
        os.close(terminal)
        os.close(controller)
    return result.returncode, result.stderr


def test_decode_refuses_a_terminal_for_its_ids(tmp_path):
    """Found by the terminals audit: ``decode -`` at a terminal waited, silently, for .npy
    bytes nobody types (Ctrl-D then said the input was empty)."""
    code, err = _on_a_terminal(tmp_path, "decode", "-", "--tokenizer", "gpt2", "--out", "t.txt",
                               stdin=True, stdout=False)  # fmt: skip
    assert code == 1
    assert err.decode().strip() == (
        "bpe-studio: error: <stdin>: is a terminal, and the ids are binary (.npy bytes), which "
        "are not typed: pipe them in (bpe-studio encode ... --out - | bpe-studio decode - ...) "
        "or name the .npy file"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="needs /dev/stdout")
def test_encode_refuses_a_terminal_named_as_a_path(tmp_path):
    """Found by the terminals audit: ``--out -`` on a terminal was refused, but ``--out
    /dev/stdout``, the same terminal, got the raw .npy bytes."""
    write_text(tmp_path / "a.txt", "hello world")
    code, err = _on_a_terminal(tmp_path, "encode", "a.txt", "--tokenizer", "gpt2", "--out",
                               "/dev/stdout", stdin=False, stdout=True)  # fmt: skip
    assert code == 1
    assert err.decode().strip() == (
        "bpe-studio: error: --out /dev/stdout: is a terminal, and the ids are binary (.npy "
        "bytes); redirect it (> ids.npy, | bpe-studio decode - ...) or name a file"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("encode", "-", "-", "--tokenizer", "gpt2", "--out", "ids.npy"),
        ("encode", "-", "/dev/stdin", "--tokenizer", "gpt2", "--out", "ids.npy"),
        ("train", "-", "/dev/stdin", "--vocab-size", "300", "--out", "tok"),
        ("inspect", "gpt2", "--corpus", "-", "--corpus", "-"),
    ],
)
def test_standard_input_named_twice_is_refused(tmp_path, args):
    """The second read of it is empty: ``encode - -`` gave the ids once, exit 0."""
    if "/dev/stdin" in args and not os.path.exists("/dev/stdin"):
        pytest.skip("needs /dev/stdin")
    result = subprocess.run(
        _command(args), input="hello", capture_output=True, text=True, cwd=tmp_path,
        env=_env(), timeout=600,
    )  # fmt: skip
    assert "<stdin>: given twice as" in error_line(result)
    assert list(tmp_path.iterdir()) == []


def test_corpus_given_twice_counts_both(tmp_path, gpt2):
    """``--corpus a --corpus b`` kept only b."""
    write_text(tmp_path / "a.txt", "hello world")
    write_text(tmp_path / "b.txt", " and more")
    result = cli(tmp_path, "inspect", "gpt2", "--corpus", "a.txt", "--corpus", "b.txt", "--json")
    ok(result)
    import json

    corpus = json.loads(result.stdout)["corpus"]
    assert corpus["tokens"] == len(gpt2.encode("hello world")) + len(gpt2.encode(" and more"))
    assert corpus["bytes"] == len("hello world and more")


@pytest.mark.parametrize("link", ["symbolic", "hard"])
@pytest.mark.parametrize(
    ("args", "twice"),
    [
        (("train", "--vocab-size", "300", "--out", "tok"), "a corpus file (it would be counted"),
        (("encode", "--tokenizer", "gpt2", "--out", "ids.npy"), "an input (it would be encoded"),
        (("inspect", "gpt2", "--corpus"), "a corpus (it would be counted"),
    ],
)
def test_a_glob_matching_a_file_and_a_link_to_it_is_refused(tmp_path, link, args, twice):
    """An audit: ``'s/*.txt'`` with s/link.txt -> s/a.txt read a.txt twice, silently (train's
    merges were not the distinct files'), and train refused the link named as a path only
    when it was a symbolic one; a hard link was counted twice."""
    (tmp_path / "s").mkdir()
    write_text(tmp_path / "s" / "a.txt", "hello world")
    write_text(tmp_path / "s" / "b.txt", " and more")
    if link == "symbolic":
        (tmp_path / "s" / "link.txt").symlink_to("a.txt")
    else:
        (tmp_path / "s" / "link.txt").hardlink_to(tmp_path / "s" / "a.txt")
    for corpus in (["s/*.txt"], ["s/a.txt", "s/b.txt", "s/link.txt"]):
        line = error_line(cli(tmp_path, *_naming(args, corpus)))
        assert line == (
            f"bpe-studio: error: s/link.txt: the same file as s/a.txt (a link), given twice as "
            f"{twice} twice); name it once"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]


@pytest.mark.parametrize(
    ("args", "twice"),
    [
        (("train", "--vocab-size", "300", "--out", "tok"), "a corpus file (it would be counted"),
        (("encode", "--tokenizer", "gpt2", "--out", "ids.npy"), "an input (it would be encoded"),
        (("inspect", "gpt2", "--corpus"), "a corpus (it would be counted"),
    ],
)
def test_one_path_spelt_twice_is_not_called_a_link(tmp_path, args, twice):
    """An audit (h_corp67): ``s/a.txt ./s/a.txt`` was refused as "the same file as s/a.txt (a
    link)"; no link was there. A ``file://`` URL of it is another spelling too."""
    (tmp_path / "s").mkdir()
    write_text(tmp_path / "s" / "a.txt", "hello world")
    for again in ("./s/a.txt", "s//a.txt", f"file://{tmp_path}/s/a.txt"):
        line = error_line(cli(tmp_path, *_naming(args, ["s/a.txt", again])))
        assert line == (
            f"bpe-studio: error: {again}: another spelling of s/a.txt, given twice as "
            f"{twice} twice); name it once"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]


def test_a_symbolic_link_loop_as_out_is_one_line(tmp_path):
    """``Path.resolve`` raised RuntimeError("Symlink loop") from the output rule."""
    write_text(tmp_path / "c.txt", "hello")
    (tmp_path / "loop").symlink_to("loop")
    line = error_line(
        cli(tmp_path, "encode", "c.txt", "--tokenizer", "gpt2", "--out", "loop/x.npy")
    )
    assert line.startswith("bpe-studio: error: loop/x.npy: cannot write there")
    line = error_line(cli(tmp_path, "encode", "c.txt", "--tokenizer", "gpt2", "--out", "loop"))
    assert line.startswith("bpe-studio: error: loop: exists; pass --force")
    assert (tmp_path / "loop").is_symlink()


@pytest.mark.parametrize(
    "args",
    [
        ("train", "loop", "--vocab-size", "300", "--out", "tok"),
        ("encode", "loop", "--tokenizer", "gpt2", "--out", "ids.npy"),
        ("decode", "loop", "--tokenizer", "gpt2", "--out", "text.txt"),
        ("inspect", "gpt2", "--corpus", "loop"),
        ("encode", "c.txt", "--tokenizer", "loop", "--out", "ids.npy"),
        ("inspect", "loop"),
    ],
)
def test_a_symbolic_link_loop_as_input_is_named_a_loop(tmp_path, args):
    """A hostile-machine audit: it was "corpus file not found"; as a tokenizer (the second
    review), "tokenizer not found"."""
    write_text(tmp_path / "c.txt", "hello")
    (tmp_path / "loop").symlink_to("loop")
    assert error_line(cli(tmp_path, *args)) == (
        "bpe-studio: error: loop: is a loop of symbolic links, which leads to no file (Too many "
        "levels of symbolic links)"
    )


def test_a_dangling_link_as_out_needs_force_and_is_written_through(tmp_path, gpt2):
    """A dangling link was replaced by a file without --force; with --force a link is
    written through, as the shell's ``>`` writes: the file it names is the one written."""
    write_text(tmp_path / "c.txt", "hello")
    (tmp_path / "ids.npy").symlink_to("target.npy")
    args = ("encode", "c.txt", "--tokenizer", "gpt2", "--out", "ids.npy")
    assert "ids.npy: exists; pass --force" in error_line(cli(tmp_path, *args))
    ok(cli(tmp_path, *args, "--force"))
    assert (tmp_path / "ids.npy").is_symlink()
    assert np.load(tmp_path / "target.npy").tolist() == gpt2.encode("hello")


@pytest.mark.parametrize(
    "args",
    [
        ("convert", "gpt2", "--to", "hf", "--out", "dl"),
        ("train", "c.txt", "--vocab-size", "300", "--format", "hf", "--out", "dl"),
    ],
    ids=["convert", "train"],
)
def test_a_dangling_link_in_an_out_folder_is_a_file_there(tmp_path, args):
    """An audit: a dangling ``tokenizer.json`` link in a folder ``--out`` passed the check
    before the run, so ``convert`` blamed "another run" and ``train`` trained the whole run
    before it failed; it is refused first, as a dangling link ``--out`` is."""
    write_text(tmp_path / "c.txt", read_fixture(SLICES["english"])[:2000])
    (tmp_path / "dl").mkdir()
    (tmp_path / "dl" / "tokenizer.json").symlink_to(tmp_path / "nowhere.json")
    line = error_line(cli(tmp_path, *args))
    assert line == (
        "bpe-studio: error: dl: already holds tokenizer.json; pass --force to replace it, "
        "or choose another --out"
    )
    assert not (tmp_path / "nowhere.json").exists()


@pytest.mark.parametrize("template", [False, True], ids=["ids", "with the template"])
@pytest.mark.parametrize("dangling", [False, True], ids=["link", "dangling link"])
def test_a_link_as_out_is_written_through_with_a_tokenizer_of_files(
    tmp_path, gpt2, template, dangling
):
    """A regression hunt: ids staged beside --out to be checked (a tokenizer of files) or
    given their template were renamed onto the link itself, which became a plain file while
    the file it names kept its old ids."""
    write_text(tmp_path / "c.txt", "hello")
    Tokenizer.preset("gpt2").save(tmp_path / "tok")
    (tmp_path / "elsewhere").mkdir()
    real = tmp_path / "elsewhere" / "real.npy"
    if not dangling:
        real.write_bytes(b"old!")
    (tmp_path / "ids.npy").symlink_to(real)
    args = ["encode", "c.txt", "--tokenizer", "tok", "--out", "ids.npy", "--force"]
    ok(cli(tmp_path, *args, *(["--add-special-tokens"] if template else [])))
    assert (tmp_path / "ids.npy").is_symlink()
    assert np.load(real).tolist() == gpt2.encode("hello")
    assert sorted(p.name for p in (tmp_path / "elsewhere").iterdir()) == ["real.npy"]


def test_an_output_name_near_the_limit_is_written(tmp_path, gpt2):
    """A name of 249 bytes fits (255 is the limit), but its temporary file's name, 14 bytes
    longer, did not: "File name too long"."""
    write_text(tmp_path / "c.txt", "hello")
    name = "c" * 245 + ".npy"
    ok(cli(tmp_path, "encode", "c.txt", "--tokenizer", "gpt2", "--out", name))
    assert np.load(tmp_path / name).tolist() == gpt2.encode("hello")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["c.txt", name])


def test_a_folder_refusing_new_files_is_the_one_named(tmp_path):
    """``train --out /proc`` said "/ does not accept new files"."""
    if not Path("/proc/version").is_file():
        pytest.skip("needs Linux's /proc")
    write_text(tmp_path / "c.txt", read_fixture(SLICES["english"])[:2000])
    line = error_line(cli(tmp_path, "train", "c.txt", "--vocab-size", "300", "--out", "/proc"))
    assert "/proc does not accept new files" in line


def test_a_tiktoken_name_that_is_not_utf8_writes_nothing(tmp_path):
    """``--name`` of bytes no character spells (from a C locale): the rank file was written,
    then the sidecar failed with a codec error naming nothing."""
    name = os.fsdecode(b"n\xff")
    result = cli(tmp_path, "convert", "gpt2", "--to", "tiktoken", "--out", "cv", "--name", name)
    line = error_line(result)
    assert "is not valid UTF-8" in line and "tiktoken name" in line
    assert not (tmp_path / "cv").exists() or list((tmp_path / "cv").iterdir()) == []


def test_inspect_names_a_corpus_whose_name_is_not_utf8(tmp_path):
    """Such a name is a str with lone surrogates: the report failed to encode, after all the
    work, with a codec error naming nothing. The summary writes the name's bytes as they
    are; JSON escapes them, and json.loads with os.fsencode gives the bytes back."""
    import json

    name = os.fsdecode(b"\xff\xfe.txt")
    (tmp_path / name).write_bytes(b"hello world")
    summary = subprocess.run(
        _command(("inspect", "gpt2", "--corpus", name)), capture_output=True, cwd=tmp_path,
        env=_env(), timeout=600,
    )  # fmt: skip
    assert summary.returncode == 0, summary.stderr
    assert b"Corpus \xff\xfe.txt: " in summary.stdout
    result = cli(tmp_path, "inspect", "gpt2", "--corpus", name, "--json")
    ok(result)
    (named,) = json.loads(result.stdout)["corpus"]["files"]
    assert os.fsencode(named) == b"\xff\xfe.txt"


def test_a_special_token_that_is_not_utf8_is_named(tmp_path):
    write_text(tmp_path / "c.txt", read_fixture(SLICES["english"])[:2000])
    token = os.fsdecode(b"<|\xff|>")
    line = error_line(
        cli(
            tmp_path,
            "train",
            "c.txt",
            "--vocab-size",
            "300",
            "--out",
            "t",
            "--special-token",
            token,
        )
    )
    assert "special token '<|\\udcff|>': holds a lone surrogate" in line
    assert not (tmp_path / "t").exists()


def _as_a_c_locale_reads_it(text: str) -> str:
    """``text`` typed on a command line that Python read as ASCII (a C locale, neither UTF-8
    mode nor locale coercion): each byte past ASCII a lone surrogate."""
    return "".join(chr(0xDC00 + b) if b >= 0x80 else chr(b) for b in text.encode("utf-8"))


def test_text_options_typed_in_a_c_locale_are_read_as_typed():
    """Found by the terminals audit: under LC_ALL=C PYTHONUTF8=0 PYTHONCOERCECLOCALE=0,
    --pattern '😀+|...' was read as lone surrogates, silently another regex, and
    --special-token '<|😀|>' was refused as "not UTF-8, from a C locale?" though its bytes
    were UTF-8. Bytes that are not UTF-8 stay as they came (the test above: refused)."""
    from bpe_studio.cli.parser import build_parser

    pattern, token, field = r"😀+|\p{L}+|\s+|\S", "<|😀|>", "tëxt"
    typed = [_as_a_c_locale_reads_it(t) for t in (pattern, token, field)]
    assert all("\udcf0" in t or "\udcc3" in t for t in typed)
    parser = build_parser()
    args = parser.parse_args(["train", "c.txt", "--vocab-size", "300", "--out", "t",
                              "--pattern", typed[0], "--special-token", typed[1],
                              "--text-field", typed[2]])  # fmt: skip
    assert (args.pattern, args.special_token, args.text_field) == (pattern, [token], field)
    for command in (
        ["encode", "c.txt", "--tokenizer", "gpt2", "--out", "x.npy"],
        ["convert", "gpt2", "--to", "hf", "--out", "t"],
        ["inspect", "gpt2"],
    ):
        args = parser.parse_args([*command, "--special-token", typed[1]])
        assert args.special_token == [token], command
    not_utf8 = os.fsdecode(b"<|\xff|>")
    assert parser.parse_args(
        ["train", "c.txt", "--vocab-size", "300", "--out", "t", "--special-token", not_utf8]
    ).special_token == [not_utf8]


def test_a_file_named_twice_with_standard_input_redirected_from_it_is_no_stdin(tmp_path, gpt2):
    """``encode a.txt a.txt < a.txt``: /dev/stdin resolves to a.txt there, which the check for
    standard input named twice took for it."""
    write_text(tmp_path / "a.txt", "hello")
    with open(tmp_path / "a.txt", "rb") as stdin:
        result = subprocess.run(
            _command(("encode", "a.txt", "a.txt", "--tokenizer", "gpt2", "--out", "ids.npy")),
            stdin=stdin, capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=600,
        )  # fmt: skip
    ok(result)
    assert np.load(tmp_path / "ids.npy").tolist() == gpt2.encode("hello") * 2


@pytest.mark.parametrize("odd", ["new\nline", "esc\x1b[31mred", "tab\there"])
def test_a_name_with_control_characters_stays_on_one_line(tmp_path, odd):
    """Found in an earlier round's notes: a corpus named with a newline split the error over
    two lines (a caller reading one line per error read half of it), and an escape sequence
    in a name reached the terminal."""
    bad = tmp_path / f"{odd}.txt"
    bad.write_bytes(b"abc\xff")
    result = cli(tmp_path, "train", bad, "--vocab-size", "300", "--out", tmp_path / "tok")
    line = error_line(result)
    escaped = odd.encode("unicode_escape").decode("ascii")
    assert f"{escaped}.txt: not valid UTF-8 at byte offset 3" in line
    assert "\x1b" not in result.stderr
    good = tmp_path / f"{odd}.corpus"
    good.write_text("low lower lowest " * 50, encoding="utf-8")
    done = cli(tmp_path, "train", good, "--vocab-size", "260", "--out", tmp_path / odd)
    said = ok(done)
    assert escaped in said and odd not in said


def _files_capped() -> None:
    """In the child before exec: no file it writes may grow past 16 MB (EFBIG rather than
    SIGXFSZ), so a run that copies an endless device anyway stops instead of filling the disk."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 20, 16 << 20))


@pytest.mark.parametrize(
    ("args", "device", "named"),
    [
        (("train", "/dev/zero", "--vocab-size", "300", "--out", "tok"), None, "/dev/zero"),
        (("encode", "/dev/urandom", "--tokenizer", "gpt2", "--out", "i.npy"), None, "/dev/urandom"),
        (("train", "-", "--vocab-size", "300", "--out", "tok"), "/dev/zero", "<stdin>"),
        (("inspect", "gpt2", "--corpus", "/dev/stdin"), "/dev/urandom", "/dev/stdin"),
    ],
)
def test_a_device_read_without_end_is_refused_before_any_copy(tmp_path, args, device, named):
    """``train /dev/urandom`` copied the device to $TMPDIR before any check, gigabytes in
    seconds (a hostile-machine audit); a terminal, a pipe and /dev/null are read still."""
    if not all(os.path.exists(p) for p in ("/dev/zero", "/dev/urandom", "/dev/stdin")):
        pytest.skip("needs /dev/zero, /dev/urandom and /dev/stdin")
    with open(device or os.devnull, "rb") as stdin:
        result = subprocess.run(
            _command(args), stdin=stdin, capture_output=True, text=True, cwd=tmp_path,
            env=_env({"TMPDIR": str(tmp_path)}), timeout=600,
            preexec_fn=_files_capped,  # noqa: PLW1509 - limits the child only
        )  # fmt: skip
    line = error_line(result)
    # (where /dev/stdin is a device of its own, as on macOS, it names that)
    named_device = any(
        line.startswith(f"bpe-studio: error: {named}: is a character device ({d}), not a")
        for d in {device or named, "/dev/stdin"}
    )
    assert named_device, line
    assert line.endswith("holds no text; name a text file, or pipe one in"), line
    assert list(tmp_path.iterdir()) == []


def test_dev_null_is_an_empty_corpus_still(tmp_path):
    line = error_line(cli(tmp_path, "train", os.devnull, "--vocab-size", "300", "--out", "tok"))
    assert line.endswith("nothing was learned: the file is empty; no files written"), line


def unreadable_zero_sized() -> str:
    """``/proc/self/mem``: it reports 0 bytes, and reading its first byte fails (EIO)."""
    path = "/proc/self/mem"
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError:
        if os.stat(path).st_size == 0:
            return path
    pytest.skip("needs Linux's /proc/self/mem, which reports 0 bytes and fails a read")


def test_a_file_whose_read_fails_says_so_not_empty(tmp_path):
    """A hostile-input audit: ``train /proc/self/mem`` said "the file is empty": the error
    reading it was swallowed, and its reported size of 0 read as nothing."""
    path = unreadable_zero_sized()
    line = error_line(cli(tmp_path, "train", path, "--vocab-size", "300", "--out", "tok"))
    assert line.startswith(f"bpe-studio: error: {path}: cannot read it: "), line
    assert "empty" not in line, line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("fill", "said"),
    [
        (bytes(1 << 18), "mostly NUL bytes: binary data, or a sparse or zeroed file, not text"),
        # Random-looking bytes (a fixed pattern, not UTF-8 from its second byte on).
        (bytes((i * 167 + 0x80) % 256 for i in range(1 << 18)), "not valid UTF-8 at byte offset"),
    ],
    ids=["zeros", "bytes of no text"],
)
def test_a_pipe_of_nul_bytes_is_refused_at_its_first_block(tmp_path, fill, said):
    """``cat /dev/zero | bpe-studio train -`` was copied whole before its first bytes were
    looked at: it never ended. The copy's first block is looked at as the copy would be;
    ``cat /dev/urandom |`` (the second review) is refused there too, as no UTF-8."""
    with open(tmp_path / "err.txt", "w+") as err:
        proc = subprocess.Popen(
            _command(("train", "-", "--vocab-size", "300", "--out", "tok")),
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err, cwd=tmp_path,
            env=_env({"TMPDIR": str(tmp_path)}), preexec_fn=_files_capped,  # noqa: PLW1509
        )  # fmt: skip
        assert proc.stdin is not None
        written, block = 0, fill
        try:
            while written < 64 << 20:  # what the old copy took whole
                proc.stdin.write(block)
                written += len(block)
            proc.stdin.close()
        except BrokenPipeError:
            pass  # the command stopped reading: what this test wants
        finally:
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
        assert proc.wait(timeout=600) == 1
        err.seek(0)
        stderr = err.read()
    assert stderr.strip().splitlines()[-1].startswith(f"bpe-studio: error: <stdin>: {said}")
    assert written < 64 << 20
    assert [p.name for p in tmp_path.iterdir()] == ["err.txt"]


@pytest.mark.parametrize(
    "args",
    [
        ("encode", "-dash.txt", "--tokenizer", "gpt2", "--out", "ids.npy"),
        ("encode", "a.txt", "-dash.txt", "--tokenizer", "gpt2", "--out", "ids.npy"),
        ("train", "-dash.txt", "--vocab-size", "300", "--out", "tok"),
        ("inspect", "gpt2", "--corpus", "-dash.txt"),
    ],
)
def test_a_file_whose_name_starts_with_a_dash_is_named_in_the_error(tmp_path, args):
    """The terminals audit: a file named -dash.txt gave argparse's "required: INPUT" or
    "unrecognized arguments: -dash.txt", which say nothing of the file."""
    write_text(tmp_path / "-dash.txt", "hello world")
    write_text(tmp_path / "a.txt", "hello world")
    result = cli(tmp_path, *args)
    assert result.returncode == 2
    assert result.stderr.rstrip().endswith(
        "(-dash.txt: a word that starts with - is read as an option; name the file as ./-dash.txt)"
    )
    fixed = ["./-dash.txt" if a == "-dash.txt" else a for a in args]
    if args[0] == "encode":  # named so, it is read
        ok(cli(tmp_path, *fixed))


def test_a_name_that_is_not_utf8_is_shown_with_its_byte(tmp_path):
    """The outputs audit: a 0xff byte in a name showed as \\udcff (wrote o\\udcff.npy),
    which is neither the byte nor anything a shell reads back; now \\xff, as $'...' reads
    it, and shell_word quotes it so."""
    from bpe_studio.cli.output import shell_word

    name = os.fsdecode(b"o\xff.npy")
    write_text(tmp_path / "a.txt", "Ünïcödé text")
    said = ok(cli(tmp_path, "encode", "a.txt", "--tokenizer", "gpt2", "--out", name))
    assert said.splitlines()[-1] == "wrote o\\xff.npy"
    assert shell_word(name) == "$'o\\xff.npy'"


def test_ids_cut_short_on_standard_input_are_said_as_in_a_file(tmp_path):
    """The outputs audit: a cut-off .npy on standard input gave NumPy's "EOF: reading
    array data, expected 3220 bytes got 873"; the same file by path, the line below."""
    np.save(tmp_path / "ids.npy", np.arange(1_000, dtype=np.uint16))
    cut = (tmp_path / "ids.npy").read_bytes()[:1001]
    (tmp_path / "cut.npy").write_bytes(cut)
    said = "is a damaged .npy file: it holds 436 of the 1,000 ids its header announces (cut short?)"
    by_path = cli(tmp_path, "decode", "cut.npy", "--tokenizer", "gpt2")
    assert error_line(by_path) == f"bpe-studio: error: cut.npy: {said}"
    piped = cli_bytes(tmp_path, "decode", "-", "--tokenizer", "gpt2", stdin=cut)
    assert piped.returncode == 1
    assert piped.stderr.decode().strip() == f"bpe-studio: error: <stdin>: {said}"


@pytest.mark.parametrize("command", ["encode", "train"])
@pytest.mark.parametrize("empty", ["input", "out"])
def test_an_empty_path_is_said_to_be_empty(tmp_path, command, empty):
    """The outputs audit: encode '' said ": is a directory, not a file" (Path("") is the
    current folder), and train --out '' wrote its files into the current folder."""
    write_text(tmp_path / "a.txt", "Ünïcödé text")
    corpus = "" if empty == "input" else "a.txt"
    out = "" if empty == "out" else ("ids.npy" if command == "encode" else "tok")
    extra = ("--tokenizer", "gpt2") if command == "encode" else ("--vocab-size", 300)
    line = error_line(cli(tmp_path, command, corpus, *extra, "--out", out))
    what = "file" if command == "encode" else "corpus file"
    assert line == (
        f"bpe-studio: error: '': the {what} name is empty (an unset shell variable?); name "
        f"the {what}"
        if empty == "input"
        else "bpe-studio: error: --out '': the path is empty (an unset shell variable?); name "
        "the output"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


@pytest.mark.parametrize(
    ("args", "what"),
    [(("decode", "d", "--tokenizer", "gpt2"), "an ids file"), (("encode", "d"), "a file")],
)
def test_a_directory_as_input_is_said_with_its_article(tmp_path, args, what):
    """The hostile-inputs audit: decode of a directory said "is a directory, not a ids file"."""
    (tmp_path / "d").mkdir()
    extra = ("--tokenizer", "gpt2", "--out", "x.npy") if args[0] == "encode" else ()
    line = error_line(cli(tmp_path, *args, *extra))
    assert line == f"bpe-studio: error: d: is a directory, not {what}"


def test_options_after_a_double_dash_are_said_to_be_files(tmp_path):
    """The outputs audit: encode -- -d.txt --tokenizer T --out x.npy advised naming the
    file ./-d.txt, which -- had already done: what went wrong is the options after it."""
    write_text(tmp_path / "-d.txt", "hello world")
    result = cli(tmp_path, "encode", "--", "-d.txt", "--tokenizer", "gpt2", "--out", "x.npy")
    assert result.returncode == 2
    assert result.stderr.rstrip().endswith(
        "required: --tokenizer, --out (after --, every word is read as a file, --tokenizer, "
        "--out too: put the options before --)"
    )
    ok(cli(tmp_path, "encode", "--tokenizer", "gpt2", "--out", "x.npy", "--", "-d.txt"))
    # The README audit: the hint was given only where argparse failed on the command's
    # parse itself. A command option after -- read as a missing input, or left over as
    # unrecognized by the program, got none.
    hint = "(after --, every word is read as a file, --force too: put the options before --)"
    write_text(tmp_path / "x.txt", "hello world")
    encode = cli(
        tmp_path, "encode", "--tokenizer", "gpt2", "--out", "y.npy", "--", "x.txt", "--force"
    )
    assert error_line(encode) == f"bpe-studio: error: --force: file not found {hint}"
    decode = cli(
        tmp_path, "decode", "x.npy", "--tokenizer", "gpt2", "--out", "y.txt", "--", "--force"
    )
    assert error_line(decode).endswith(f"unrecognized arguments: -- --force {hint}")
    # A file so named is what -- was for: no hint with an error of its own.
    write_text(tmp_path / "--force", "hello world")
    encode = cli(tmp_path, "encode", "--tokenizer", "nope", "--out", "y.npy", "--", "--force")
    assert "after --" not in error_line(encode) and "nope" in error_line(encode)


def test_a_dashed_name_that_is_not_utf8_is_named_as_the_shell_reads_it(tmp_path):
    """The second review: the hint showed '-\\udcff.txt' and './-\\udcff.txt', which name no
    file when typed."""
    name = os.fsdecode(b"-\xff.txt")
    (tmp_path / name).write_text("hello world", encoding="utf-8")
    result = cli(tmp_path, "encode", name, "--tokenizer", "gpt2", "--out", "ids.npy")
    assert result.returncode == 2
    assert result.stderr.rstrip().endswith(
        "($'-\\xff.txt': a word that starts with - is read as an option; name the file as "
        "$'./-\\xff.txt')"
    ), result.stderr


def test_far_more_workers_than_cores_is_said(tmp_path):
    """A hostile-input audit: --workers 1000 started 1,001 processes on 2 cores, eight times
    slower, with no word. The workers go no further than the chunks, and so many per core is
    said; the tokenizer is the same."""
    from bpe_studio.core.corpus.counting import available_cores

    corpus = write_text(tmp_path / "t.txt", "some text to count, and more text\n" * 200)
    many = 16 * available_cores() + 1
    said = ok(cli(tmp_path, "train", corpus, "--vocab-size", 300, "--workers", many,
                  "--out", tmp_path / "many"))  # fmt: skip
    notes = [ln for ln in said.splitlines() if ln.startswith(f"note: --workers {many:,}")]
    assert len(notes) == 1 and "leave --workers out for one per core" in notes[0]
    plain = ok(cli(tmp_path, "train", corpus, "--vocab-size", 300, "--out", tmp_path / "one"))
    assert "note: --workers" not in plain
    assert (tmp_path / "many" / "merges.txt").read_bytes() == (
        tmp_path / "one" / "merges.txt"
    ).read_bytes()
    # encode starts no more workers than cores (the review: the note said otherwise there).
    encoded = ok(cli(tmp_path, "encode", corpus, "--tokenizer", "gpt2", "--workers", many,
                     "--out", tmp_path / "ids.npy"))  # fmt: skip
    assert "note: --workers" not in encoded


def _naming(args: tuple[str, ...], corpus: list[str]) -> list[str]:
    """The command line ``args`` with each of ``corpus`` given where its command takes one."""
    if args[0] == "inspect":
        return [*args[:2], *(w for path in corpus for w in ("--corpus", path))]
    return [args[0], *corpus, *args[1:]]


@pytest.mark.skipif(not os.path.exists("/dev/tty"), reason="needs /dev/tty")
@pytest.mark.parametrize("command", ["encode", "decode"])
def test_a_terminal_that_cannot_be_opened_is_refused_before_the_tokenizer_is_read(
    tmp_path, command
):
    """Found by the README audit: with no controlling terminal (cron, ``ssh`` without ``-t``,
    ``setsid``), ``encode --out /dev/tty`` encoded the whole input and only the last write
    said it cannot write there. The README says ``--out`` is checked before the tokenizer is
    read: a tokenizer that is not there shows which came first."""
    given = write_text(tmp_path / "a.txt", "hello world")
    if command == "decode":
        given = tmp_path / "a.npy"
        np.save(given, np.array([31373, 995], dtype=np.uint32))
    result = subprocess.run(
        _command((command, given.name, "--tokenizer", "./missing", "--out", "/dev/tty")),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=tmp_path, env=_env(),
        timeout=120, start_new_session=True,  # a session of its own: no controlling terminal
    )  # fmt: skip
    assert result.returncode == 1
    assert error_line(result).startswith("bpe-studio: error: /dev/tty: cannot write there: ")


def test_a_value_that_starts_with_a_dash_is_said_to_go_after_an_equals_sign(tmp_path):
    """The stop-78 notes: "--special-token -x-" got only argparse's "expected one argument",
    which does not say that the value was read as an option, nor how to give it."""
    write_text(tmp_path / "a.txt", "a -x- b")
    train = cli(tmp_path, "train", "a.txt", "--vocab-size", "258", "--special-token", "-x-")
    assert train.returncode == 2
    assert error_line(train) == (
        "bpe-studio train: error: argument --special-token: expected one argument (a value "
        "that starts with - goes after =: --special-token=-x-)"
    )
    encode = cli(tmp_path, "encode", "a.txt", "--tokenizer", "gpt2", "--pattern", "-|x")
    assert error_line(encode).endswith("(a value that starts with - goes after =: --pattern='-|x')")
    ok(cli(tmp_path, "train", "a.txt", "--vocab-size", "258", "--special-token=-x-", "--out", "t"))
    # A value left out before the next option is not one to join.
    missing = cli(
        tmp_path, "train", "a.txt", "--vocab-size", "258", "--special-token", "--out", "u"
    )
    assert error_line(missing).endswith("argument --special-token: expected one argument")
