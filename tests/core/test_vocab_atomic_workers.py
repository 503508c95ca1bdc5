"""One home each: the id layout of a trained vocabulary (``vocab``), the atomic file write
(``atomic``) and the rule for a ``workers`` argument (``corpus.counting.resolve_workers``), which
``count_file``, ``encode_file``, training and the command line all follow."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import time

import numpy as np
import pytest
from core_helpers import EOT, slice_head, write_text

from bpe_studio.core import count_file, count_text, train_bpe
from bpe_studio.core.corpus.counting import resolve_workers
from bpe_studio.core.encode.encode_file import encode_file
from bpe_studio.core.io.atomic import (
    STALE_SECONDS,
    AppearedMeanwhile,
    atomic_open,
    atomic_write_all,
    atomic_write_bytes,
    atomic_write_text,
    new_files_only,
    remove_stale_beside,
)
from bpe_studio.core.train.vocab import (
    check_vocab_size,
    first_merge_id,
    initial_vocab,
    merge_budget,
)

# --- vocab -----------------------------------------------------------------------------------


def test_initial_vocab_and_budget(tmp_path):
    specials = [EOT, "<pad>"]
    vocab = initial_vocab(specials)
    assert [vocab[i] for i in range(256)] == [bytes([b]) for b in range(256)]
    assert vocab[256] == EOT.encode() and vocab[257] == b"<pad>" and len(vocab) == 258
    assert first_merge_id(specials) == 258
    assert merge_budget(1000, specials) == 1000 - 258
    # The trainer makes exactly the budget's merges on a corpus with enough pairs.
    path = write_text(tmp_path / "c.txt", slice_head("english", 50_000))
    trained, merges = train_bpe(path, 300, specials)
    assert len(merges) == merge_budget(300, specials)
    assert {i: trained[i] for i in range(258)} == vocab


@pytest.mark.parametrize("size", [0, 255, 257])
def test_vocab_size_too_small(size):
    with pytest.raises(
        ValueError, match=f"vocabulary size {size} is too small: it must be at least 258"
    ):
        check_vocab_size(size, [EOT, "<pad>"])


@pytest.mark.parametrize("size", [300.0, "300", True])
def test_vocab_size_not_an_int(size):
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        check_vocab_size(size, [])


def test_vocab_size_from_numpy_is_an_int(tmp_path):
    size = check_vocab_size(np.int64(300), [])
    assert size == 300 and type(size) is int
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        check_vocab_size(np.float64(300), [])
    path = tmp_path / "c.txt"
    path.write_text("low lower lowest " * 50, encoding="utf-8")
    assert train_bpe(path, np.int32(270), []) == train_bpe(path, 270, [])


# --- atomic ----------------------------------------------------------------------------------


def test_atomic_write_replaces_and_keeps_permissions(tmp_path):
    target = tmp_path / "f.txt"
    atomic_write_text(target, "one\ntwo\n")
    assert target.read_bytes() == b"one\ntwo\n"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    atomic_write_text(target, "three")
    assert target.read_text() == "three"
    assert os.listdir(tmp_path) == ["f.txt"]


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="permission bits are POSIX's")
def test_a_replaced_file_keeps_its_own_permissions(tmp_path):
    # A private 0600 ids file replaced with --force came back 0644 (readable by all),
    # where the shell's ">" and open() keep a file's permissions; a link's file likewise.
    private = tmp_path / "ids.npy"
    private.write_bytes(b"old")
    private.chmod(0o600)
    atomic_write_bytes(private, b"new")
    assert private.read_bytes() == b"new"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    (tmp_path / "to_private.npy").symlink_to("ids.npy")
    atomic_write_all([(tmp_path / "to_private.npy", b"newer")])
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    shared = tmp_path / "shared.txt"
    shared.write_text("old")
    shared.chmod(0o664)
    atomic_write_text(shared, "new")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o664


def test_links_are_written_through_and_a_loop_of_them_is_refused(tmp_path):
    # A link's file is written and the link stays; a dangling one gets the file it names;
    # a loop was replaced by a file (realpath gives a loop back as the link itself).
    (tmp_path / "real.csv").write_text("old")
    (tmp_path / "to_real.csv").symlink_to("real.csv")
    (tmp_path / "dangling.csv").symlink_to("made.csv")
    (tmp_path / "self.csv").symlink_to("self.csv")
    (tmp_path / "a.csv").symlink_to("b.csv")
    (tmp_path / "b.csv").symlink_to("a.csv")
    atomic_write_text(tmp_path / "to_real.csv", "new")
    atomic_write_all([(tmp_path / "dangling.csv", b"made")])
    assert (tmp_path / "real.csv").read_text() == "new"
    assert (tmp_path / "made.csv").read_text() == "made"
    for name in ("to_real.csv", "dangling.csv", "self.csv", "a.csv", "b.csv"):
        assert (tmp_path / name).is_symlink(), name
    for name in ("self.csv", "a.csv"):
        for write in (
            lambda p: atomic_write_text(p, "x"),
            lambda p: atomic_write_all([(p, b"x")]),
        ):
            with pytest.raises(OSError) as info:
                write(tmp_path / name)
            assert info.value.errno == errno.ELOOP and info.value.filename == str(tmp_path / name)
            assert (tmp_path / name).is_symlink()
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["real.csv", "to_real.csv", "dangling.csv", "made.csv", "self.csv", "a.csv", "b.csv"]
    )


def test_atomic_write_leaves_the_old_file_on_error(tmp_path):
    target = tmp_path / "f.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_open(target, "wb") as f:
            f.write(b"new, half written")
            raise RuntimeError("disk full")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f.bin"]
    with pytest.raises(ValueError, match="mode"):
        with atomic_open(target, "a"):
            pass


def test_atomic_write_all_refuses_a_folder_at_any_target_before_replacing_one(tmp_path):
    """A folder where the second file goes (merges.txt made a directory) failed only at its
    rename, after the first file (vocab.json) was replaced: the pair then loaded as another
    tokenizer, or not at all. Every target is checked before anything is written."""
    first, second = tmp_path / "vocab.json", tmp_path / "merges.txt"
    first.write_bytes(b"old vocab")
    second.mkdir()
    with pytest.raises(IsADirectoryError) as caught:
        atomic_write_all([(first, b"new vocab"), (second, b"new merges")])
    assert caught.value.filename == os.fspath(second)
    assert first.read_bytes() == b"old vocab"
    assert sorted(os.listdir(tmp_path)) == ["merges.txt", "vocab.json"]
    assert os.listdir(second) == []


@pytest.mark.parametrize("old", [True, False], ids=["replacing", "new"])
def test_atomic_write_all_puts_back_what_a_failed_rename_replaced(tmp_path, monkeypatch, old):
    """A rename that fails after another succeeded (any error a check cannot foresee) leaves
    the files already renamed as they were: the old ones put back, new ones removed."""
    first, second = tmp_path / "a.tiktoken", tmp_path / "a.tiktoken.json"
    if old:
        first.write_bytes(b"old ranks")
        second.write_bytes(b"old sidecar")
    before = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    real = os.replace
    calls = []

    def second_fails(src, dst):
        calls.append(os.fspath(dst))
        if len(calls) == 2:
            raise OSError(errno.EIO, "Input/output error", os.fspath(dst))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", second_fails)
    with pytest.raises(OSError, match="Input/output error"):
        atomic_write_all([(first, b"new ranks"), (second, b"new sidecar")])
    assert calls[:2] == [os.fspath(first), os.fspath(second)]
    assert {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)} == before


@pytest.mark.parametrize("links", [True, False], ids=["hard link", "copy"])
def test_a_kept_old_file_outlives_another_writers_sweep(tmp_path, monkeypatch, links):
    """The review: the old file kept to be put back is named as a temporary file and had the
    old file's age (a hard link shares it; the copy took it), so another writer of the same
    file, sweeping its stale temporary files, removed it; a failed rename then left the new
    vocabulary beside the old merges (a second review: also once its own target was renamed
    over, the kept name the only one of the old file)."""
    first, second = tmp_path / "vocab.json", tmp_path / "merges.txt"
    first.write_bytes(b"old vocab")
    second.write_bytes(b"old merges")
    hours_ago = time.time() - 2 * STALE_SECONDS
    for path in (first, second):
        os.utime(path, (hours_ago, hours_ago))
    if not links:
        monkeypatch.setattr(os, "link", _no_links)
    real = os.replace
    calls = []

    def swept_then_second_fails(src, dst):
        calls.append(os.fspath(dst))
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", os.fspath(dst))
        done = real(src, dst)
        if len(calls) == 1:  # another writer of the same files starts meanwhile: the kept
            remove_stale_beside(first)  # old vocabulary is the only name of its file now
            remove_stale_beside(second)
        return done

    monkeypatch.setattr(os, "replace", swept_then_second_fails)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_all([(first, b"new vocab"), (second, b"new merges")])
    assert (first.read_bytes(), second.read_bytes()) == (b"old vocab", b"old merges")
    assert sorted(os.listdir(tmp_path)) == ["merges.txt", "vocab.json"]


def test_the_sweep_removes_what_dead_writers_left_and_nothing_else(tmp_path):
    target = tmp_path / "ids.npy"
    target.write_bytes(b"ids")
    hours_ago = time.time() - 2 * STALE_SECONDS
    dead_file, dead_folder = tmp_path / ".ids.npy.dead.tmp", tmp_path / ".ids.npy.gone.tmp"
    live_file, kept = tmp_path / ".ids.npy.live.tmp", tmp_path / ".ids.npy.old.kept"
    dead_file.write_bytes(b"half")
    dead_folder.mkdir()
    (dead_folder / "part.npy").write_bytes(b"part")
    live_file.write_bytes(b"being written")
    os.link(target, kept)
    for path in (dead_file, dead_folder, target):
        os.utime(path, (hours_ago, hours_ago))
    remove_stale_beside(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["ids.npy", live_file.name, kept.name]
    )


def _no_links(src, dst):
    raise OSError(errno.EPERM, "Operation not permitted")


# --- workers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("write", ["bytes", "all"])
def test_a_link_put_at_a_new_output_meanwhile_is_not_written_through(tmp_path, write):
    """The second review: within new_files_only, a symbolic link another run put at the
    checked-free path was followed, and the file it names silently replaced."""
    precious = tmp_path / "precious.txt"
    precious.write_text("someone else's data", encoding="utf-8")
    out = tmp_path / "ids.npy"
    with new_files_only([out]):
        out.symlink_to(precious)  # after the check, before the write
        with pytest.raises(AppearedMeanwhile):
            if write == "bytes":
                atomic_write_bytes(out, b"NEW IDS")
            else:
                atomic_write_all([(out, b"NEW IDS")])
    assert precious.read_text(encoding="utf-8") == "someone else's data"
    assert out.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == [
        "ids.npy",
        "precious.txt",
    ]


def test_resolve_workers(monkeypatch):
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert resolve_workers(None) == cores
    if hasattr(os, "sched_getaffinity"):
        # "Every core" is every core this process may run on, not every core the machine has.
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
        assert resolve_workers(None) == 1
    assert resolve_workers(1) == 1 and resolve_workers(3) == 3
    for bad in (0, -1):
        with pytest.raises(ValueError, match=f"workers must be at least 1.*got {bad}"):
            resolve_workers(bad)
    for bad in (1.5, "2", True):
        with pytest.raises(TypeError, match="workers must be a whole number"):
            resolve_workers(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("workers", [0, -2])
def test_count_file_and_encode_file_agree_on_workers(tmp_path, gpt2_tokenizer, workers):
    path = write_text(tmp_path / "c.txt", "hello world\n" * 10)
    with pytest.raises(ValueError, match="workers must be at least 1"):
        count_file(path, [EOT], workers=workers)
    with pytest.raises(ValueError, match="workers must be at least 1"):
        encode_file(gpt2_tokenizer, path, tmp_path / "ids.npy", workers=workers)
    with pytest.raises(ValueError, match="workers must be at least 1"):
        train_bpe(path, 300, [EOT], workers=workers)
    assert not (tmp_path / "ids.npy").exists()


def test_default_workers_is_every_core(tmp_path, gpt2_tokenizer):
    path = write_text(tmp_path / "c.txt", "hello world\n" * 10)
    assert count_file(path, [EOT]) == count_text("hello world\n" * 10, [EOT])
    stats = encode_file(gpt2_tokenizer, path, tmp_path / "ids.npy")
    assert stats.tokens == len(gpt2_tokenizer.encode("hello world\n" * 10))


@pytest.mark.parametrize("command", ["train", "encode"])
def test_cli_workers_zero_is_one_line_error(tmp_path, command):
    path = write_text(tmp_path / "c.txt", "hello world\n")
    args = {
        "train": ["train", str(path), "--vocab-size", "300", "--out", str(tmp_path / "o")],
        "encode": ["encode", str(path), "--tokenizer", str(tmp_path), "--out", "x.npy"],
    }[command]
    result = subprocess.run(
        [sys.executable, "-m", "bpe_studio", *args, "--workers", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "--workers: must be at least 1 (leave --workers out for every core), got 0" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    help_text = subprocess.run(
        [sys.executable, "-m", "bpe_studio", command, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "at least 1 (default: every core)" in " ".join(help_text.split())
