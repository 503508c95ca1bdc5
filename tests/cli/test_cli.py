"""The headless command line, run as ``python -m bpe_studio`` in a subprocess.

Contract: ``train CORPUS --vocab-size N [--special-token TOK ...] [--workers K] --out DIR``
writes DIR/vocab.json and DIR/merges.txt equal to train_bpe's result;
``encode --tokenizer DIR [--special-token TOK ...] INPUT --out IDS.npy [--workers K]`` writes
the ids of Tokenizer.encode(INPUT) (uint16 when the vocabulary is under 65,536) and reports the
compression ratio in bytes/token. Errors: exit code != 0 and one readable line on stderr that
names the file or the reason, never a traceback.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import pytest
from core_helpers import (
    EOT,
    FIXTURES,
    SLICES,
    read_fixture,
    run_in_own_session,
    slice_head,
    write_text,
)

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.core.corpus.counting import IN_PROCESS_LIMIT
from bpe_studio.core.encode.encode_file import PARALLEL_MIN_BYTES


def cli(*args, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "bpe_studio", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_one_line_error(result, *needles):
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def load_dir(directory, specials=()):
    return Tokenizer.from_files(directory / "vocab.json", directory / "merges.txt", specials)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    text = slice_head("tinystories", 60_000) + slice_head("chinese", 20_000)
    return write_text(tmp_path_factory.mktemp("cli") / "corpus.txt", text)


@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory, corpus):
    out = tmp_path_factory.mktemp("tok")
    result = cli("train", corpus, "--vocab-size", 600, "--special-token", EOT, "--out", out)
    assert result.returncode == 0, result.stderr
    return out


# --- train --------------------------------------------------------------------------------


def test_train_writes_train_bpe_result(corpus, trained_dir):
    vocab, merges = train_bpe(corpus, 600, [EOT])
    loaded = load_dir(trained_dir, [EOT])
    assert loaded.vocab == vocab
    assert loaded.merges == merges


def test_train_with_several_special_tokens_and_workers(tmp_path, corpus):
    out = tmp_path / "out"
    result = cli(
        "train", corpus, "--vocab-size", 400,
        "--special-token", EOT, "--special-token", "<pad>", "--workers", 2, "--out", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    vocab, merges = train_bpe(corpus, 400, [EOT, "<pad>"])
    loaded = load_dir(out, [EOT, "<pad>"])
    assert (loaded.vocab, loaded.merges) == (vocab, merges)


def test_train_large_file_with_two_workers(tmp_path):
    text = read_fixture(SLICES["mixed_web"]) * 16
    path = write_text(tmp_path / "big.txt", text)
    assert path.stat().st_size > IN_PROCESS_LIMIT
    out = tmp_path / "out"
    result = cli("train", path, "--vocab-size", 500, "--special-token", EOT,
                 "--workers", 2, "--out", out)  # fmt: skip
    assert result.returncode == 0, result.stderr
    loaded = load_dir(out, [EOT])
    assert (loaded.vocab, loaded.merges) == train_bpe(path, 500, [EOT], workers=1)


def test_train_missing_corpus(tmp_path):
    missing = tmp_path / "missing_corpus.txt"
    result = cli("train", missing, "--vocab-size", 300, "--out", tmp_path / "out")
    assert_one_line_error(result, "missing_corpus.txt")


def test_train_non_utf8_corpus(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("café au lait\n".encode("latin-1"))
    result = cli("train", path, "--vocab-size", 300, "--out", tmp_path / "out")
    # "café" in Latin-1: the bad byte 0xE9 is at offset 3.
    assert_one_line_error(result, "latin1.txt", "3")
    assert "UTF-8" in result.stderr or "utf-8" in result.stderr.lower()


def test_train_vocab_too_small(tmp_path, corpus):
    result = cli("train", corpus, "--vocab-size", 100, "--out", tmp_path / "out")
    assert_one_line_error(result, "100", "256")


def test_train_vocab_too_small_for_special_tokens(tmp_path, corpus):
    result = cli(
        "train", corpus, "--vocab-size", 257,
        "--special-token", EOT, "--special-token", "<pad>", "--out", tmp_path / "out",
    )  # fmt: skip
    assert_one_line_error(result, "257", "258")


@pytest.mark.parametrize(
    ("command", "instead"),
    [
        (["train", "{corpus}", "--vocab-size", 300, "--out", "{out}"], "--no-special-tokens"),
        (["encode", "{corpus}", "--tokenizer", "gpt2", "--out", "{out}"], "--no-special-tokens"),
        (["decode", "{ids}", "--tokenizer", "gpt2", "--out", "{out}"], "leave the option out"),
        (["convert", "gpt2", "--to", "hf", "--out", "{out}"], "leave the option out"),
        (["inspect", "gpt2"], "leave the option out"),
    ],
)
def test_an_empty_special_token_is_named_in_every_command(tmp_path, corpus, command, instead):
    # An unset shell variable (--special-token "$TOK"): encode, decode, convert and inspect
    # said only "a special token must not be empty", exit 1, as train does not.
    ids = tmp_path / "ids.npy"
    np.save(ids, np.array([31373], dtype=np.uint16))
    paths = {"{corpus}": corpus, "{out}": tmp_path / "out", "{ids}": ids}
    result = cli(*[paths.get(a, a) for a in command], "--special-token", "")
    assert result.returncode == 2, result.stderr
    assert_one_line_error(result, "--special-token '' is empty", instead)
    assert not (tmp_path / "out").exists()


def _disk_full_under(folder, monkeypatch):
    """Writing any file under ``folder`` fails as on a full disk (the check of --out before
    training, which writes a probe file, still passes)."""
    import errno

    from bpe_studio.core.io import atomic

    real = atomic._temp_file

    def full(target):
        if folder == target.parent or folder in target.parents:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(target)

    monkeypatch.setattr(atomic, "_temp_file", full)


def test_train_that_cannot_write_its_files_saves_the_merges_elsewhere(
    tmp_path, corpus, monkeypatch, capsys
):
    """A training whose files a full disk refused said only "cannot write there", as the
    check before any work does, and its merges were lost. They go to a private temporary
    folder instead, named; where that fails too, the line says they were not saved."""
    import tempfile

    from bpe_studio.cli import main

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    out = tmp_path / "t1" / "sub"
    _disk_full_under(out, monkeypatch)
    args = ["train", str(corpus), "--vocab-size", "300", "--workers", "1", "--out", str(out)]
    assert main(args) == 1
    line = capsys.readouterr().err.strip().splitlines()[-1]
    (saved,) = temp.iterdir()
    assert line == (
        f"bpe-studio: error: {out}: cannot write there: No space left on device; the 43 merges "
        f"learned were not saved there but in {saved} (move vocab.json and merges.txt from there)"
    )
    assert load_dir(saved, [EOT]).merges == train_bpe(corpus, 300, [EOT])[1]
    assert not (tmp_path / "t1").exists()  # the folders the failed write made

    _disk_full_under(tmp_path, monkeypatch)
    assert main([*args, "--format", "hf"]) == 1
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.endswith(
        f"the 43 merges learned were not saved (nor could they be in {temp}: No space left on "
        "device)"
    )
    assert list(temp.iterdir()) == [saved]


# --- encode -------------------------------------------------------------------------------


def load_ids(path):
    return np.load(path)


def assert_reports_ratio(result, n_bytes, n_ids):
    out = result.stdout + result.stderr
    assert re.search(r"bytes\s*(/|per)\s*token", out, re.IGNORECASE), out
    ratio = n_bytes / n_ids
    numbers = [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*\.?\d*", out)]
    assert any(abs(x - ratio) <= 0.051 for x in numbers), (ratio, out)
    # Throughput is timed from the start of encoding; loading the tokenizer is reported apart.
    assert re.search(r"throughput: \d+\.\d+ MB/s", out), out
    assert re.search(r"loaded the tokenizer in \d+\.\d+ s", out), out


def test_encode_with_special_token(tmp_path, corpus, trained_dir):
    out = tmp_path / "ids.npy"
    result = cli("encode", "--tokenizer", trained_dir, "--special-token", EOT, corpus,
                 "--out", out)  # fmt: skip
    assert result.returncode == 0, result.stderr
    ids = load_ids(out)
    tok = load_dir(trained_dir, [EOT])
    expected = tok.encode(corpus.read_text(encoding="utf-8"))
    assert ids.dtype == np.uint16
    assert ids.ndim == 1
    assert ids.tolist() == expected
    assert_reports_ratio(result, corpus.stat().st_size, len(expected))


def test_encode_with_gpt2_files(tmp_path):
    tok_dir = tmp_path / "gpt2"
    tok_dir.mkdir()
    (tok_dir / "vocab.json").write_bytes((FIXTURES / "gpt2_vocab.json").read_bytes())
    (tok_dir / "merges.txt").write_bytes((FIXTURES / "gpt2_merges.txt").read_bytes())
    text_path = FIXTURES / SLICES["code"]
    out = tmp_path / "ids.npy"
    result = cli("encode", "--tokenizer", tok_dir, "--special-token", EOT, text_path,
                 "--out", out)  # fmt: skip
    assert result.returncode == 0, result.stderr
    tok = Tokenizer.from_files(tok_dir / "vocab.json", tok_dir / "merges.txt", [EOT])
    ids = load_ids(out)
    assert ids.dtype == np.uint16  # 50,257 ids fit
    assert ids.tolist() == tok.encode(read_fixture(SLICES["code"]))


@pytest.mark.parametrize("specials", [[EOT], []])
def test_encode_large_file_with_two_workers(tmp_path, trained_dir, specials):
    parts = [read_fixture(SLICES[k]) for k in ("tinystories", "english", "code", "mixed_web")]
    text = "".join(parts) * 4
    path = write_text(tmp_path / "big.txt", text)
    assert path.stat().st_size > IN_PROCESS_LIMIT
    out = tmp_path / "ids.npy"
    flags = [x for s in specials for x in ("--special-token", s)]
    tok = load_dir(trained_dir, specials)
    if not specials:
        # The tokenizer must not treat <|endoftext|> as special here: a vocabulary without it.
        tok = Tokenizer({i: t for i, t in tok.vocab.items() if t != EOT.encode()}, tok.merges)
        tok.save(tmp_path / "plain")
        tok_dir = tmp_path / "plain"
    else:
        tok_dir = trained_dir
    result = cli("encode", "--tokenizer", tok_dir, *flags, path, "--out", out, "--workers", 2)
    assert result.returncode == 0, result.stderr
    expected = tok.encode(text)
    ids = load_ids(out)
    assert len(ids) == len(expected)
    assert ids.tolist() == expected
    assert_reports_ratio(result, path.stat().st_size, len(expected))


def test_encode_large_file_names_a_special_token_the_files_cannot_mark(tmp_path, corpus):
    # GPT-2 files hold no list of special tokens, and "<|a|><|b|>" has not the form the
    # loader takes for one: train's note says to name it with --special-token. With
    # workers building the tokenizer, encode then read the files again for its summary
    # without it, and failed once every id was made ("... do not look like special tokens").
    special = "<|a|><|b|>"
    vocab, merges = train_bpe(corpus, 400, [special])
    with pytest.warns(UserWarning):
        Tokenizer(vocab, merges, [special]).save(tmp_path / "tok")
    tok = load_dir(tmp_path / "tok", [special])
    text = (read_fixture(SLICES["tinystories"]) + special) * 8
    path = write_text(tmp_path / "big.txt", text)
    assert path.stat().st_size >= PARALLEL_MIN_BYTES
    out = tmp_path / "ids.npy"
    result = cli("encode", "--tokenizer", tmp_path / "tok", "--special-token", special, path,
                 "--out", out, "--workers", 2)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert load_ids(out).tolist() == tok.encode(text)


def test_decode_takes_the_special_token_the_files_cannot_mark(tmp_path, corpus):
    # The files' loading error and train's note say to name such a token with
    # --special-token; decode had no such option, so its ids could not be decoded at all.
    special = "<|a|><|b|>"
    vocab, merges = train_bpe(corpus, 300, [special])
    with pytest.warns(UserWarning):
        Tokenizer(vocab, merges, [special]).save(tmp_path / "tok")
    text = f"{special}Once upon a time{special}"
    ids = tmp_path / "ids.npy"
    np.save(ids, np.array(load_dir(tmp_path / "tok", [special]).encode(text)))
    out = tmp_path / "back.txt"
    result = cli("decode", ids, "--tokenizer", tmp_path / "tok", "--special-token", special,
                 "--out", out)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8") == text


def test_encode_default_special_tokens_are_the_vocabularys(tmp_path, corpus, trained_dir):
    """Without --special-token the tokenizer's own special tokens apply (the help says so)."""
    out = tmp_path / "ids.npy"
    result = cli("encode", "--tokenizer", trained_dir, corpus, "--out", out)
    assert result.returncode == 0, result.stderr
    expected = load_dir(trained_dir, [EOT]).encode(corpus.read_text(encoding="utf-8"))
    assert load_ids(out).tolist() == expected


def test_encode_missing_input(tmp_path, trained_dir):
    result = cli("encode", "--tokenizer", trained_dir, tmp_path / "nothing_here.txt",
                 "--out", tmp_path / "ids.npy")  # fmt: skip
    assert_one_line_error(result, "nothing_here.txt")
    assert not (tmp_path / "ids.npy").exists()


def test_encode_non_utf8_input(tmp_path, trained_dir):
    path = tmp_path / "bad_input.txt"
    path.write_bytes(b"hello \xff world\n")
    result = cli("encode", "--tokenizer", trained_dir, path, "--out", tmp_path / "ids.npy")
    assert_one_line_error(result, "bad_input.txt", "6")
    assert not (tmp_path / "ids.npy").exists()


def test_encode_missing_tokenizer(tmp_path, corpus):
    result = cli("encode", "--tokenizer", tmp_path / "no_tokenizer_dir", corpus,
                 "--out", tmp_path / "ids.npy")  # fmt: skip
    assert_one_line_error(result, "no_tokenizer_dir")


@pytest.mark.parametrize("workers", [1, 2])
def test_encode_large_file_with_a_bad_tokenizer(tmp_path, trained_dir, workers):
    """With a file large enough for workers, which are started before the tokenizer is
    built: one line naming the tokenizer's bad file, nothing written, nothing left behind."""
    bad = tmp_path / "bad_tok"
    bad.mkdir()
    (bad / "vocab.json").write_bytes((trained_dir / "vocab.json").read_bytes())
    (bad / "merges.txt").write_text("#version: 0.2\nĠ t h\n", encoding="utf-8")
    text = read_fixture(SLICES["english"]) * 8
    path = write_text(tmp_path / "big.txt", text)
    assert path.stat().st_size > PARALLEL_MIN_BYTES
    out = tmp_path / "out" / "ids.npy"
    result = cli("encode", "--tokenizer", bad, path, "--out", out, "--workers", workers)
    assert_one_line_error(result, "merges.txt", "line 2")
    # Not even the folder --out named, which the command created.
    assert not (tmp_path / "out").exists()


def test_encode_in_process_leaves_the_collector_as_it_was(tmp_path, corpus, trained_dir):
    """``encode`` turns the cyclic collector off while it works; called in a process that
    goes on (not as the program), it turns it back on and freezes nothing."""
    import gc

    from bpe_studio.cli import main

    out = tmp_path / "ids.npy"
    # subtle: the collector's state is the process's; a GUI test run earlier in this xdist
    # worker leaves it off (the app collects on its own timer), so the test sets it first.
    was_on = gc.isenabled()
    gc.enable()
    # tests/conftest.py freezes what outlives each module; some of it may be freed meanwhile.
    frozen = gc.get_freeze_count()
    try:
        code = main(["encode", str(corpus), "--tokenizer", str(trained_dir), "--out", str(out)])
        assert code == 0
        assert gc.isenabled() and gc.get_freeze_count() <= frozen  # none more
    finally:
        if not was_on:
            gc.disable()
    expected = load_dir(trained_dir, [EOT]).encode(corpus.read_text(encoding="utf-8"))
    assert load_ids(out).tolist() == expected


def test_encode_tokenizer_read_error_names_the_tokenizer(tmp_path, corpus, monkeypatch, capsys):
    """An OSError reading --tokenizer names that file, not --out (encoding and building the
    tokenizer share one error handler now that workers start before it is built)."""
    from bpe_studio.cli import encode as encode_cli
    from bpe_studio.cli import main

    unreadable = tmp_path / "tok" / "vocab.json"

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(unreadable))

    monkeypatch.setattr(encode_cli, "load_tokenizer", refuse)
    out = tmp_path / "ids.npy"
    code = main(["encode", str(corpus), "--tokenizer", str(unreadable.parent), "--out", str(out)])
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 1 and len(lines) == 1, lines
    assert f"{unreadable}: Permission denied" in lines[0] and str(out) not in lines[0]
    assert not out.exists()


def test_encode_bad_merges_file(tmp_path, corpus, trained_dir):
    bad = tmp_path / "bad_tok"
    bad.mkdir()
    (bad / "vocab.json").write_bytes((trained_dir / "vocab.json").read_bytes())
    (bad / "merges.txt").write_text("#version: 0.2\nĠ t h\n", encoding="utf-8")
    result = cli("encode", "--tokenizer", bad, corpus, "--out", tmp_path / "ids.npy")
    assert_one_line_error(result, "merges.txt", "line 2")


@pytest.mark.parametrize(("chosen", "expected"), [(None, "1"), ("3", "3")])
def test_the_program_keeps_openblas_to_one_thread(monkeypatch, chosen, expected):
    """As the program, no command starts OpenBLAS's spinning threads beside its own workers
    (unless the user set their number); ``main`` itself is told that the process then ends."""
    import os

    from bpe_studio import cli

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "restored after the test")
    if chosen is None:
        monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    else:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", chosen)
    calls = []
    monkeypatch.setattr(cli, "main", lambda argv=None, *, exiting=False: calls.append(exiting) or 7)
    assert cli.program() == 7 and calls == [True]
    assert os.environ["OPENBLAS_NUM_THREADS"] == expected


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (MemoryError("Allocation failed (probably too large)."),
         "out of memory while encoding (Allocation failed (probably too large).): "
         "try fewer --workers"),
        (BrokenProcessPool("A process in the process pool was terminated abruptly"),
         "a worker process ended abruptly (killed, or out of memory)"),
    ],
)  # fmt: skip
def test_a_worker_lost_or_memory_out_is_one_line(
    tmp_path, corpus, monkeypatch, capsys, error, line
):
    # Found by killing a worker and by a run of one letter under ulimit -v: each printed a
    # traceback (neither is an OSError or a ValueError).
    from bpe_studio.cli import encode as encode_cli
    from bpe_studio.cli import main

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(encode_cli, "encode_inputs", fail)  # where the pool runs
    code = main(["encode", str(corpus), "--tokenizer", "gpt2", "--out", str(tmp_path / "o.npy")])
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 1 and len(lines) == 1, lines
    assert lines[0].endswith(line)


@pytest.mark.parametrize(
    ("options", "advice"),
    [
        ([], "try --engine python, fewer --workers, --cluster, or a smaller corpus or "
             "--vocab-size"),
        (["--engine", "python", "--workers", "1"], "try --cluster, or a smaller corpus or "
                                                   "--vocab-size"),
    ],
)  # fmt: skip
def test_training_out_of_memory_says_where_and_what_to_try(
    tmp_path, corpus, monkeypatch, capsys, options, advice
):
    # Found under prlimit --as: "out of memory (Unable to allocate 151. MiB ...)" said
    # neither where nor what to try, while --engine python trained under the same limit.
    from bpe_studio.cli import main
    from bpe_studio.cli import train as train_cli

    def fail(*args, **kwargs):
        raise MemoryError("Unable to allocate 151. MiB for an array")

    monkeypatch.setattr(train_cli, "trainer_from_file", fail)
    args = ["train", str(corpus), "--vocab-size", "300", "--out", str(tmp_path / "t"), *options]
    assert main(args) == 1
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "error" in ln]
    assert len(lines) == 1, lines
    assert lines[0].endswith(
        f"out of memory while pre-tokenizing {corpus} (Unable to allocate 151. MiB for an "
        f"array): {advice}"
    )


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads Linux's /proc")
def test_too_few_open_files_for_the_workers_is_one_line_and_leaves_no_process(tmp_path):
    # Found under ``ulimit -n 24`` with --workers 8: "[Errno 24] Too many open files", then
    # the command never ended (its exit waited for the workers already started, which
    # waited for work).
    import resource

    # In at least eight chunks of 1 MB (a pool is no larger than its chunks).
    text = read_fixture(SLICES["mixed_web"]) * 32
    path = write_text(tmp_path / "big.txt", text)
    assert path.stat().st_size > max(IN_PROCESS_LIMIT, 8 << 20)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = 24

    def few_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))

    args = ["train", path, "--vocab-size", 300, "--workers", 8, "--out", tmp_path / "out"]
    command = [sys.executable, "-m", "bpe_studio", *map(str, args)]
    code, left, said = run_in_own_session(command, tmp_path / "err.txt", preexec_fn=few_files)
    lines = [ln for ln in said.splitlines() if ln.strip()]
    assert code == 1 and len(lines) == 1, lines
    assert lines[0].startswith("bpe-studio: error: too many open files for 8 worker processes")
    assert f"(ulimit -n {limit})" in lines[0] and "--workers" in lines[0], lines[0]
    assert left == [], "processes of the command outlived it"


def test_encode_starts_no_more_workers_than_cores(tmp_path, trained_dir, monkeypatch):
    # --workers 16 on two cores built the tokenizer 16 times (11 s, 4 GB for o200k); 2**40
    # overflowed the pool's semaphore.
    from bpe_studio.core.encode import encode_file as encode_file_module

    started = []
    real_pool = encode_file_module._pool

    def counted(workers, *args):
        started.append(workers)
        return real_pool(workers, *args)

    monkeypatch.setattr(encode_file_module, "_pool", counted)
    text = "".join(read_fixture(SLICES[k]) for k in ("english", "code", "mixed_web")) * 3
    path = write_text(tmp_path / "big.txt", text)
    tok = load_dir(trained_dir, [EOT])
    for workers in (2**40, 64):
        out = tmp_path / f"ids{workers}.npy"
        encode_file_module.encode_file(tok, path, out, workers=workers)
        assert load_ids(out).tolist() == tok.encode(text)
    cores = encode_file_module.available_cores()
    assert started and all(n <= cores for n in started), started
