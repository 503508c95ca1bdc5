"""A corpus file that is not what its size said: a ``/proc`` file that reports 0 bytes but
holds text, and a file cut short or rewritten while it is read. Before, each gave a result of
part of the file (or of none of it) with no error."""

from __future__ import annotations

import json
import os
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from core_helpers import SLICES, read_fixture, write_text

from bpe_studio.core import CorpusError, train_bpe
from bpe_studio.core.encode.encode_file import encode_file
from bpe_studio.core.explain.usage import corpus_usage

PROC = Path("/proc/version")


def zero_sized_with_text() -> Path:
    if not PROC.is_file() or PROC.stat().st_size != 0 or not PROC.read_bytes():
        pytest.skip("needs Linux's /proc/version, which reports 0 bytes but holds a line")
    return PROC


def test_a_file_reporting_zero_bytes_but_holding_text_is_refused_by_name(tmp_path, gpt2_tokenizer):
    path = zero_sized_with_text()
    with pytest.raises(CorpusError, match=r"/proc/version: the system reports its size as 0"):
        train_bpe(path, 300)
    with pytest.raises(CorpusError, match=r"/proc/version: the system reports its size as 0"):
        encode_file(gpt2_tokenizer, path, tmp_path / "ids.npy", workers=1)
    assert not (tmp_path / "ids.npy").exists()
    with pytest.raises(CorpusError, match=r"/proc/version: the system reports its size as 0"):
        corpus_usage(gpt2_tokenizer, str(path), workers=1)


def test_a_truly_empty_file_is_still_an_empty_corpus(tmp_path, gpt2_tokenizer):
    path = write_text(tmp_path / "empty.txt", "")
    encode_file(gpt2_tokenizer, path, tmp_path / "ids.npy", workers=1)
    assert np.load(tmp_path / "ids.npy").tolist() == []


def cut_on_first_call(path: Path):
    """A progress function that cuts ``path`` to nothing the first time it is called (when
    the reading is planned, before any byte range is read)."""
    calls = []

    def progress(*_args) -> None:
        if not calls:
            os.truncate(path, 0)
        calls.append(_args)

    return progress


def rewrite_on_last_call(path: Path, size: int):
    """A progress function that rewrites ``path`` with as many other bytes once every byte
    is done (after the last read, before the result is handed back)."""

    def progress(done: int, total: int, *_rest) -> None:
        if done == total == size:
            st = path.stat()
            path.write_bytes(b"x" * size)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))

    return progress


@pytest.mark.parametrize("workers", [1, 2])
def test_encoding_a_file_cut_short_while_read_fails_and_writes_nothing(
    tmp_path, gpt2_tokenizer, workers
):
    text = read_fixture(SLICES["english"]) * 8  # over a megabyte: two workers cut it
    path = write_text(tmp_path / "books.txt", text)
    out = tmp_path / "ids.npy"
    with pytest.raises(CorpusError, match=r"books\.txt: changed while it was being read"):
        encode_file(gpt2_tokenizer, path, out, workers=workers, progress=cut_on_first_call(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["books.txt"]


def test_encoding_a_file_rewritten_while_read_fails_and_writes_nothing(tmp_path, gpt2_tokenizer):
    path = write_text(tmp_path / "books.txt", read_fixture(SLICES["english"]))
    out = tmp_path / "ids.npy"
    progress = rewrite_on_last_call(path, path.stat().st_size)
    with pytest.raises(
        CorpusError, match=r"books\.txt: changed while it was being read \(it was written to\)"
    ):
        encode_file(gpt2_tokenizer, path, out, workers=1, progress=progress)
    assert not out.exists()


@pytest.mark.parametrize("workers", [1, 2])
def test_training_on_a_file_cut_short_while_read_fails(tmp_path, workers):
    text = read_fixture(SLICES["english"]) * 12  # over 4 MB: counted by worker processes
    path = write_text(tmp_path / "books.txt", text)
    with pytest.raises(CorpusError, match=r"books\.txt: changed while it was being read"):
        train_bpe(path, 300, workers=workers, progress=cut_on_first_call(path))


def test_training_on_a_file_rewritten_while_read_fails(tmp_path):
    path = write_text(tmp_path / "books.txt", read_fixture(SLICES["english"]))
    progress = rewrite_on_last_call(path, path.stat().st_size)
    with pytest.raises(
        CorpusError, match=r"books\.txt: changed while it was being read \(it was written to\)"
    ):
        train_bpe(path, 300, workers=1, progress=progress)


def test_usage_of_a_file_cut_short_while_read_fails(tmp_path, gpt2_tokenizer):
    path = write_text(tmp_path / "books.txt", read_fixture(SLICES["english"]))

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "encoding" and done == 0:
            os.truncate(path, 0)

    with pytest.raises(CorpusError, match=r"books\.txt: changed while it was being read"):
        corpus_usage(gpt2_tokenizer, str(path), workers=1, progress=progress)


def swap_on_last_call(path: Path, size: int):
    """A progress function that puts another file of the same size and modification time in
    ``path``'s place (``mv``) once every byte is done."""

    def progress(done: int, total: int, *_rest) -> None:
        if done == total == size:
            st = path.stat()
            other = path.with_name("other.txt")
            other.write_bytes(b"x" * size)
            os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
            os.replace(other, path)

    return progress


def test_a_file_swapped_for_another_while_read_fails(tmp_path, gpt2_tokenizer):
    """Size and modification time alike, the swap went unseen: each byte range is reopened
    by name, and the ids were of neither version (exit 0)."""
    path = write_text(tmp_path / "books.txt", read_fixture(SLICES["english"]))
    progress = swap_on_last_call(path, path.stat().st_size)
    with pytest.raises(CorpusError, match=r"books\.txt: changed .*another file took its name"):
        encode_file(gpt2_tokenizer, path, tmp_path / "ids.npy", workers=1, progress=progress)
    assert not (tmp_path / "ids.npy").exists()
    path = write_text(tmp_path / "books.txt", read_fixture(SLICES["english"]))
    progress = swap_on_last_call(path, path.stat().st_size)
    with pytest.raises(CorpusError, match=r"another file took its name"):
        train_bpe(path, 300, workers=1, progress=progress)


def _records(path, n: int = 3000):
    lines = "".join(json.dumps({"text": f"record {i}: some words here"}) + "\n" for i in range(n))
    path.write_text(lines, encoding="utf-8")
    return path


def test_encoding_records_appended_to_while_read_fails_and_writes_nothing(tmp_path):
    """A bad-corpus audit: `encode` of a .jsonl appended to (or cut at a line's end) while it
    was read gave the ids of part of it, exit 0; `train` and `inspect` refused."""
    from bpe_studio.cli import encode_inputs, main

    path = _records(tmp_path / "d.jsonl")
    real = encode_inputs.file_documents

    def appended_after_the_first(f, field, counted=None, place=None):
        for i, doc in enumerate(real(f, field, counted, place)):
            if i == 1:
                with open(path, "a", encoding="utf-8") as out:
                    out.write(json.dumps({"text": "one more"}) + "\n")
            yield doc

    with mock.patch.object(encode_inputs, "file_documents", appended_after_the_first):
        code = main(["encode", str(path), "--tokenizer", "gpt2", "--out", str(tmp_path / "o.npy")])
    assert code == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl"]


@pytest.mark.parametrize("command", ["encode", "train", "inspect"])
def test_records_cut_mid_line_while_read_blame_the_change_not_the_line(tmp_path, capsys, command):
    """The same audit: a .jsonl cut in the middle of a line while it was read was reported as
    "line 64051: not a JSON record", which sends the user to fix a line that is fine. Here
    the reader meets the cut line as it would, once the file is cut."""
    from bpe_studio.cli import main
    from bpe_studio.core.corpus import records, tasks
    from bpe_studio.core.explain import corpus_pass

    path = _records(tmp_path / "d.jsonl")

    def cut_mid_line(stream, name, *rest, **named):
        os.truncate(path, path.stat().st_size - 10)  # inside the last record's JSON
        raise CorpusError(f"{name}: line 3000: not a JSON record (Unterminated string)")
        yield  # a generator, as the reader is

    args = {
        "encode": ["encode", str(path), "--tokenizer", "gpt2", "--out", str(tmp_path / "o.npy")],
        "train": ["train", str(path), "--vocab-size", "300", "--out", str(tmp_path / "t")],
        "inspect": ["inspect", "gpt2", "--corpus", str(path), "--workers", "1"],
    }[command]
    with (
        mock.patch.object(records, "jsonl_documents", cut_mid_line),
        mock.patch.object(tasks, "jsonl_documents", cut_mid_line),
        mock.patch.object(corpus_pass, "jsonl_documents", cut_mid_line),
    ):
        assert main(args) == 1
    err = capsys.readouterr().err
    assert "d.jsonl: changed while it was being read" in err and "not a JSON record" not in err


@pytest.mark.parametrize("command", ["train", "encode", "inspect"])
def test_a_file_removed_while_read_is_said_to_be_removed(tmp_path, capsys, command):
    """A hostile-machine audit: a corpus removed while it was read said "No such file or
    directory", as if it had never been there; it is the change it is."""
    from bpe_studio.cli import main
    from bpe_studio.cli.progress import ProgressBar

    path = write_text(tmp_path / "books.txt", read_fixture(SLICES["english"]))

    class RemovingAtFirstUpdate(ProgressBar):
        def update(self, *args, **kwargs) -> None:
            path.unlink(missing_ok=True)
            super().update(*args, **kwargs)

    args = {
        "encode": ["encode", str(path), "--tokenizer", "gpt2", "--out", str(tmp_path / "o.npy")],
        "train": ["train", str(path), "--vocab-size", "300", "--out", str(tmp_path / "t")],
        "inspect": ["inspect", "gpt2", "--corpus", str(path)],
    }[command]
    with mock.patch(f"bpe_studio.cli.{command}.ProgressBar", RemovingAtFirstUpdate):
        assert main([*args, "--workers", "1"]) == 1
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.endswith(
        f"{path}: changed while it was being read (it was removed); nothing was made from it: "
        "run again once it is written whole"
    ), line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_character_device_is_refused_by_name(device):
    """A hostile-input audit: train_bpe('/dev/urandom') gave 257 tokens and no merges with no
    error: a device reports 0 bytes, and its corpus was planned as empty."""
    if not os.path.exists(device):
        pytest.skip(f"needs {device}")
    with pytest.raises(CorpusError, match=rf"{device}: is a character device, not a file"):
        train_bpe(device, 300, ["<|endoftext|>"])


def test_dev_null_is_still_an_empty_corpus():
    if not os.path.exists(os.devnull):
        pytest.skip(f"needs {os.devnull}")
    vocab, merges = train_bpe(os.devnull, 300, [])
    assert (len(vocab), merges) == (256, [])


def test_a_named_pipe_is_refused_by_name(tmp_path):
    """The same audit: train_bpe on a named pipe raised a bare "File or stream is not
    seekable." naming nothing (a corpus file is read by its size, in byte ranges)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # subtle: held open for reading and writing, so that no open of it waits for the other
    # end, and with text in it, so that no read waits for some.
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        os.write(fd, b"hello world " * 100)
        with pytest.raises(CorpusError, match=r"fifo: is a named pipe.*write what it carries"):
            train_bpe(fifo, 300, ["<|endoftext|>"])
    finally:
        os.close(fd)


def test_a_zero_sized_file_whose_read_fails_names_the_error(tmp_path):
    """The same audit: an unreadable file reporting 0 bytes (``/proc/self/mem``: EIO) was
    trained on as an empty corpus, the error swallowed."""
    import errno

    path = write_text(tmp_path / "corpus.txt", "")

    def failing_open(*_args, **_kwargs):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    with (
        mock.patch("bpe_studio.core.corpus.stamps.open", failing_open, create=True),
        pytest.raises(CorpusError, match=rf"corpus.txt: cannot read it: {os.strerror(errno.EIO)}"),
    ):
        train_bpe(path, 300, [])
