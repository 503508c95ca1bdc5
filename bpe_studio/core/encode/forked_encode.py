"""Encode a file's chunks in this process and in forked children, which share the chunks out.

What it does: a :class:`Crew` forks children that each encode the next chunk no one has
taken (a shared counter), write its ids to a temporary file of their own and report where
they are on a pipe; the caller encodes chunks too (:meth:`Crew.encode`), so none waits idle
for the others, and once every chunk is done reads the ids from those files in file order.
A child is forked either before the tokenizer is built, and builds its own while the caller
builds the caller's (nothing shared, so neither writes memory the other holds: see
``Crew.fork``), or after, inheriting the caller's with every table built.
What it leaves out: where the file is cut (``boundaries``), the clean-start pool that
processes which may not fork use instead (``encode_file``), writing the ``.npy``.
Forking and record locks are POSIX's: where either is missing (Windows), :data:`AVAILABLE` is
False and ``encode_file`` takes the clean-start pool instead.
"""

from __future__ import annotations

import math
import os
import pickle
import signal
import struct
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import BinaryIO, cast

import numpy as np

from ..corpus.counting import decode_chunk, uncovered_in_file
from ..pretokenization.pretokenizer import UncoveredText
from .tokenizer import Tokenizer

try:
    import fcntl
except ImportError:  # not POSIX (Windows): no record locks, no fork either
    fcntl = None  # type: ignore[assignment]

# Whether this platform can run a crew: fork, record locks and positioned reads and writes.
AVAILABLE = fcntl is not None and all(
    hasattr(os, name) for name in ("fork", "pread", "pwrite", "set_blocking")
)

# What a child needs to encode chunks: its tokenizer, the file's chunks (byte ranges) and
# the ids' dtype name. A child forked before the tokenizer is built makes them itself.
Setup = Callable[[], tuple[Tokenizer, list[tuple[int, int]], str]]
# Where a chunk's ids are: the file holding them, their byte offset there and their count.
Located = tuple[BinaryIO, int, int]

# A child's report on the pipe: which child (its temporary file), the chunk's index and byte
# range, the byte offset of its ids in the child's file and their count, and when it began
# encoding the chunk (``time.perf_counter``, the system's monotonic clock: the same in every
# process). An index of -1 announces a failure instead: the count is then the length of the
# pickled exception that follows in the same write.
_REPORT = struct.Struct("=qqqqqqd")
_FAILED = -1
# subtle: a pipe write of at most PIPE_BUF bytes (512 or more on every POSIX system) is never
# interleaved with another process's writes, so each report stays whole however many
# children write at once, and is in the pipe whole once any of it is.
_PIPE_BUF = 512
_COUNTER = struct.Struct("=q")


class WorkerDied(RuntimeError):
    """A child ended without reporting every chunk it took (killed from outside)."""


def encode_range(tokenizer: Tokenizer, path: str, start: int, end: int, dtype: str) -> np.ndarray:
    """The ids of bytes ``start:end`` of ``path`` (in every process that encodes a chunk).
    Errors name the file: invalid UTF-8, or text the tokenizer's pattern does not cover."""
    with open(path, "rb") as f:
        f.seek(start)
        text = decode_chunk(f.read(end - start), path, start)
    try:
        return tokenizer.encode_array(text, dtype)
    except UncoveredText:
        raise uncovered_in_file(path, start, text, tokenizer.specials, tokenizer.pattern) from None


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
    return _REPORT.pack(child, _FAILED, 0, 0, 0, len(blob), 0.0) + blob


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
    setup: Setup, path: str, claims: _Claims, child: int, out_fd: int, report_fd: int
) -> None:
    """A forked child's whole life: set up, encode chunks until none is left, then leave at
    once (``os._exit``: the parent's exit handlers and buffered output are not the child's)."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent alone handles Ctrl-C
        try:
            tokenizer, ranges, dtype = setup()
        except BaseException:
            # Left out, having taken no chunk: the others encode its share. A tokenizer that
            # cannot be built fails in the caller too, which says so; this one may merely
            # have lacked the memory for its own.
            os._exit(1)
        offset = 0
        while (i := claims.take()) < len(ranges):
            start, end = ranges[i]
            began = time.perf_counter()
            ids = encode_range(tokenizer, path, start, end, dtype)
            _write_all(out_fd, ids.data.cast("B"))
            os.write(report_fd, _REPORT.pack(child, i, start, end, offset, len(ids), began))
            offset += ids.nbytes
    except BaseException as e:
        code = 1
        try:
            os.write(report_fd, _failure_report(child, e))
        except BaseException:
            pass
    finally:
        os._exit(code)


class Crew:
    """Children forked to encode the chunks of ``path`` with the caller (see the module's
    docstring); at most ``slots`` of them. Made by :func:`crew`, which reaps them."""

    def __init__(self, path: str, slots: int, temp_dir: str) -> None:
        self._path = path
        self._claims = _Claims(temp_dir)
        # One file of ids per child, and the caller's last.
        self._files: list[BinaryIO] = [
            tempfile.TemporaryFile(dir=temp_dir) for _ in range(slots + 1)
        ]
        self._read_fd, self._write_fd = os.pipe()
        self.pids: list[int] = []
        # When a child first began encoding a chunk (inf: none has reported one yet). A child
        # that built its own tokenizer may begin before the caller has built its.
        self.began = math.inf

    def fork(self, count: int, setup: Setup) -> None:
        """Fork ``count`` more children, each of which calls ``setup`` first.

        subtle: a child forked before the caller builds its tokenizer builds its own, on
        another core at the same time, so it costs no time where there are cores to spare.
        After the fork, any page the caller and a child both hold is copied on the first
        write to it by either: reusing the memory freed by building, and counting references
        to the tables, a child forked after building writes so many that it runs markedly
        slower than a process of its own (docs/patterns.md, round 21)."""
        for _ in range(count):
            k = len(self.pids)
            if k + 1 >= len(self._files) or self._write_fd < 0:
                raise RuntimeError("Crew.fork: no slot left for another child")
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child's coverage is not collected
                os.close(self._read_fd)
                _child(setup, self._path, self._claims, k, self._files[k].fileno(), self._write_fd)
            self.pids.append(pid)

    def encode(
        self,
        tokenizer: Tokenizer,
        ranges: list[tuple[int, int]],
        dtype: np.dtype,
        done: Callable[[int], None] | None = None,
    ) -> list[Located]:
        """Encode chunks here too until every chunk is taken; once all are done, where each
        one's ids are, in file order (read them with ``os.pread``). ``done(nbytes)`` is
        called here as chunks are finished (by any process). No child is forked after."""
        os.close(self._write_fd)
        self._write_fd = -1
        where: list[Located | None] = [None] * len(ranges)
        os.set_blocking(self._read_fd, False)
        reports = _Reports(self, ranges, where, done)
        own = self._files[-1]
        while (i := self._claims.take()) < len(ranges):
            ids = encode_range(tokenizer, self._path, *ranges[i], dtype.name)
            where[i] = (own, own.tell(), len(ids))
            own.write(ids.data.cast("B"))
            if done:
                done(ranges[i][1] - ranges[i][0])
            while reports.take():
                pass
        os.set_blocking(self._read_fd, True)
        # subtle: stop at the last chunk's report rather than at the pipe's end, which comes
        # only once every child has exited (a few ms each, to unmap its memory): they finish
        # exiting while the ids are written, and are reaped after.
        while None in where:
            if not reports.take():
                raise WorkerDied("an encoding worker process ended without finishing its chunks")
        own.flush()
        return cast("list[Located]", where)

    def _close(self, failed: bool) -> None:
        if failed:
            for pid in self.pids:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for fd in (self._read_fd, self._write_fd):
            if fd >= 0:
                os.close(fd)
        for pid in self.pids:
            os.waitpid(pid, 0)
        for f in self._files:
            f.close()
        self._claims.close()


@contextmanager
def crew(path: str, slots: int, temp_dir: str) -> Iterator[Crew]:
    """A :class:`Crew` for ``path`` with room for ``slots`` children, its temporary files in
    ``temp_dir``. When the block ends the children are reaped (killed first if it raised)
    and the files closed. Only where forking is safe (``corpus.mp_context``)."""
    made = Crew(path, slots, temp_dir)
    try:
        yield made
    except BaseException:
        made._close(failed=True)
        raise
    made._close(failed=False)


class _Reports:
    """The parent's end of the report pipe: each report read marks its chunk done."""

    def __init__(
        self,
        team: Crew,
        ranges: list[tuple[int, int]],
        where: list[Located | None],
        done: Callable[[int], None] | None,
    ) -> None:
        self._team, self._fd, self._files = team, team._read_fd, team._files
        self._ranges, self._where, self._done = ranges, where, done

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
        child, i, start, end, offset, count, began = _REPORT.unpack(head)
        if i == _FAILED:
            raise pickle.loads(os.read(self._fd, count))
        if i >= len(self._ranges) or (start, end) != self._ranges[i]:
            # A child that built its own tokenizer cut the file elsewhere: never mix them.
            raise WorkerDied(
                f"an encoding worker cut chunk {i} at bytes {start}-{end}, not {self._ranges[i]}"
            )
        self._where[i] = (self._files[child], offset, count)
        self._team.began = min(self._team.began, began)
        if self._done:
            self._done(end - start)
        return True
