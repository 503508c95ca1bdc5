"""Encode a file's chunks in this process and in forked children, which share the chunks out.

What it does: ``encode_chunks`` forks ``workers - 1`` children of the calling process (which
inherit the tokenizer with every table already built) and encodes chunks in the caller too,
so ``workers`` processes encode and none waits idle for the others: each takes the next
chunk no one has taken (a shared counter), writes the chunk's ids to a temporary file of its
own and reports where they are on a pipe; once every chunk is done, the caller reads the ids
from those files in file order. What it leaves out: where the file is cut (``boundaries``),
the clean-start pool that processes which may not fork use instead (``encode_file``),
writing the ``.npy``.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import signal
import struct
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import BinaryIO, cast

import numpy as np

from .corpus import decode_chunk
from .tokenizer import Tokenizer

# A child's report on the pipe: which child (its temporary file), the chunk's index, the byte
# offset of its ids in the child's file and their count. An index of -1 announces a failure
# instead: the count is then the length of the pickled exception that follows in the same write.
_REPORT = struct.Struct("=qqqq")
_FAILED = -1
# subtle: a pipe write of at most PIPE_BUF bytes (512 or more on every POSIX system) is never
# interleaved with another process's writes, so each report stays whole however many
# children write at once, and is in the pipe whole once any of it is.
_PIPE_BUF = 512
_COUNTER = struct.Struct("=q")


class WorkerDied(RuntimeError):
    """A child ended without reporting every chunk it took (killed from outside)."""


def _read_range(path: str, start: int, end: int) -> str:
    with open(path, "rb") as f:
        f.seek(start)
        return decode_chunk(f.read(end - start), path, start)


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _failure_report(child: int, error: BaseException) -> bytes:
    try:
        blob = pickle.dumps(error)
    except Exception:  # an exception that cannot be pickled: its message
        blob = b""
    if not blob or _REPORT.size + len(blob) > _PIPE_BUF:
        blob = pickle.dumps(RuntimeError(f"{type(error).__name__}: {error}"[:300]))
    return _REPORT.pack(child, _FAILED, 0, len(blob)) + blob


class _Claims:
    """The index of the next chunk no process has taken, shared by the forked processes: a
    counter in a temporary file, read and advanced under a POSIX record lock (held per
    process, unlike ``flock``'s, which forked processes would share)."""

    def __init__(self, temp_dir: str) -> None:
        self._file = tempfile.TemporaryFile(dir=temp_dir)
        self._fd = self._file.fileno()
        os.pwrite(self._fd, _COUNTER.pack(0), 0)

    def take(self) -> int:
        fcntl.lockf(self._fd, fcntl.LOCK_EX)
        try:
            (i,) = _COUNTER.unpack(os.pread(self._fd, _COUNTER.size, 0))
            os.pwrite(self._fd, _COUNTER.pack(i + 1), 0)
        finally:
            fcntl.lockf(self._fd, fcntl.LOCK_UN)
        return int(i)

    def close(self) -> None:
        self._file.close()


def _child(
    tokenizer: Tokenizer,
    path: str,
    ranges: list[tuple[int, int]],
    dtype: str,
    claims: _Claims,
    child: int,
    out_fd: int,
    report_fd: int,
) -> None:
    """A forked child's whole life: encode chunks until none is left, then leave at once
    (``os._exit``: the parent's exit handlers and buffered output are not the child's)."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent alone handles Ctrl-C
        offset = 0
        while (i := claims.take()) < len(ranges):
            ids = tokenizer.encode_array(_read_range(path, *ranges[i]), dtype)
            _write_all(out_fd, ids.data.cast("B"))
            os.write(report_fd, _REPORT.pack(child, i, offset, len(ids)))
            offset += ids.nbytes
    except BaseException as e:
        code = 1
        try:
            os.write(report_fd, _failure_report(child, e))
        except BaseException:
            pass
    finally:
        os._exit(code)


@contextmanager
def encode_chunks(
    tokenizer: Tokenizer,
    path: str,
    ranges: list[tuple[int, int]],
    dtype: np.dtype,
    workers: int,
    temp_dir: str,
    done: Callable[[int], None] | None = None,
) -> Iterator[list[tuple[BinaryIO, int, int]]]:
    """Encode ``ranges`` of ``path`` in ``workers`` processes (this one and forked children).
    ``done(nbytes)`` is called in this process as chunks are finished (by any process). Once
    all are, gives, in file order, for each chunk the file holding its ids (read them with
    ``os.pread``), their byte offset there and their count; the files are closed and the
    children reaped when the block ends. Only where forking is safe (``corpus.mp_context``)."""
    children = min(workers, len(ranges)) - 1
    claims = _Claims(temp_dir)
    files: list[BinaryIO] = [tempfile.TemporaryFile(dir=temp_dir) for _ in range(children + 1)]
    where: list[tuple[BinaryIO, int, int] | None] = [None] * len(ranges)
    pids: list[int] = []
    read_fd, write_fd = os.pipe()
    try:
        for k in range(children):
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child's coverage is not collected
                os.close(read_fd)
                _child(tokenizer, path, ranges, dtype.name, claims, k, files[k].fileno(), write_fd)
            pids.append(pid)
        os.close(write_fd)
        write_fd = -1
        os.set_blocking(read_fd, False)
        reports = _Reports(read_fd, files, ranges, where, done)
        own = files[-1]
        while (i := claims.take()) < len(ranges):
            ids = tokenizer.encode_array(_read_range(path, *ranges[i]), dtype.name)
            where[i] = (own, own.tell(), len(ids))
            own.write(ids.data.cast("B"))
            if done:
                done(ranges[i][1] - ranges[i][0])
            while reports.take():
                pass
        os.set_blocking(read_fd, True)
        while reports.take():
            pass
        if any(w is None for w in where):
            raise WorkerDied("an encoding worker process ended without finishing its chunks")
        own.flush()
        yield cast("list[tuple[BinaryIO, int, int]]", where)
    except BaseException:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        raise
    finally:
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)
        for pid in pids:
            os.waitpid(pid, 0)
        for f in files:
            f.close()
        claims.close()


class _Reports:
    """The parent's end of the report pipe: each report read marks its chunk done."""

    def __init__(
        self,
        fd: int,
        files: list[BinaryIO],
        ranges: list[tuple[int, int]],
        where: list[tuple[BinaryIO, int, int] | None],
        done: Callable[[int], None] | None,
    ) -> None:
        self._fd, self._files, self._ranges, self._where, self._done = (
            fd, files, ranges, where, done,
        )  # fmt: skip

    def _read(self, n: int) -> bytes:
        try:
            return os.read(self._fd, n)
        except BlockingIOError:
            return b""

    def take(self) -> bool:
        """Read one report (waiting for it if the pipe blocks); False at the pipe's end or,
        when it does not block, when none is waiting. A failure report raises the child's
        exception."""
        head = self._read(_REPORT.size)
        if not head:
            return False
        # subtle: a report is written whole (see _PIPE_BUF), so no read here comes up short.
        child, i, offset, count = _REPORT.unpack(head)
        if i == _FAILED:
            raise pickle.loads(os.read(self._fd, count))
        self._where[i] = (self._files[child], offset, count)
        if self._done:
            a, b = self._ranges[i]
            self._done(b - a)
        return True
