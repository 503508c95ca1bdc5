"""Pools of worker processes that end with this process and start within its open-file limit.

What it does: :class:`WorkerPool` is a ``ProcessPoolExecutor`` whose every worker first
arranges to end when this process ends (``parent_exit``), then runs the pool's own
initializer. Killed (SIGKILL, as the out-of-memory killer ends a process), this process had
left its workers waiting for work for ever, each holding its memory.
It refuses, before starting any process, more workers than the open-file limit
(``RLIMIT_NOFILE``, ``ulimit -n``) has room for (:func:`workers_within_limit`), and a start
that fails anyway ends the workers it had started before the error goes on. A fork start
fails half-way (``[Errno 24] Too many open files``) inside the first ``submit``, before the
pool's manager thread runs: nothing then told the workers already started to stop, and this
process's exit waited for them for ever.
:meth:`WorkerPool.end` ends a pool whose use an error ended; after Ctrl-C, workers still
running once :data:`STOP_GRACE_SECONDS` have passed are killed.
What it leaves out: how workers start (``corpus.counting.mp_context``), Ctrl-C
(``interrupts``).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing.context import BaseContext
from types import ModuleType
from typing import Any, TypeVar

from .parent_exit import with_parent

# subtle: imported here, not when needed: at a pool's failed start no file is left to open,
# not even the module's. Some systems have none (Windows; the portability tests block it).
resource: ModuleType | None
try:
    import resource
except ImportError:
    resource = None

T = TypeVar("T")


def ended_abruptly(what: str) -> str:
    """How a process that ended without a word is told, in the CLI and the app alike: the
    kernel's out-of-memory killer ends one so (SIGKILL), as a user's kill does.

    >>> ended_abruptly("a worker process")
    'a worker process ended abruptly (killed, or out of memory)'
    """
    return f"{what} ended abruptly (killed, or out of memory)"


# Open files of a pool in this process: a pipe for each of its two queues and its wake-up,
# and the second pipe of the worker being started.
FDS_PER_POOL = 8
# Started by the fork server or spawned, a worker's start also holds a socket or a pipe to
# report errors through, and the first starts the fork server or the resource tracker.
FDS_UNFORKED = 4
# Each running worker's two pipe ends held here. A forked worker starts with this process's
# files, so the last one has about as few to spare as this process.
FDS_PER_WORKER = 2
# Files opened while the pool runs, here and in a worker (the corpus, a cached kernel).
SPARE_FDS = 2
RAISE_TO = 4096  # the limit a message suggests
# After Ctrl-C, how long the workers have to end the jobs in hand (whose results are dropped
# anyway) before they are killed.
STOP_GRACE_SECONDS = 3.0


def _fd_limit() -> int | None:
    """This process's soft limit on open files; None where unknown or unlimited."""
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def open_file_room() -> int | None:
    """How many more files this process may open now; None where unknown.

    subtle: the limit bounds the numbers of new descriptors, not how many are open: one
    inherited above it (a shell's, a terminal's) takes no room."""
    limit = _fd_limit()
    if limit is None:
        return None
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            continue
        except OSError as e:
            return 0 if e.errno == errno.EMFILE else None
        # The listing's own descriptor is among the names, and closed again.
        return limit - sum(1 for n in names if n.isdigit() and int(n) < limit) + 1
    return None


def workers_within_limit(forked: bool = False) -> int | None:
    """The most workers a pool started now can have within the open-file limit (0 or less:
    none), ``forked`` (started by fork) or not; None where the limit or the open files are
    unknown."""
    room = open_file_room()
    if room is None:
        return None
    pool = FDS_PER_POOL + (0 if forked else FDS_UNFORKED)
    return (room - pool - SPARE_FDS) // FDS_PER_WORKER


def too_many_files(workers: int, fit: int | None) -> OSError:
    """The error for a pool of ``workers`` that the open-file limit has no room for
    (``fit``: the most that fit, None where unknown)."""
    limit = _fd_limit()
    may = f"may open {limit} files at once (ulimit -n {limit})" if limit else "may open no more"
    fewer = ""
    if fit is not None and fit >= 1:
        fewer = f"pass workers={fit} or fewer (--workers on the command line), or "
    plural = "es" if workers != 1 else ""
    error = OSError(
        f"too many open files for {workers} worker process{plural}: this process {may}; "
        f"{fewer}raise the limit (ulimit -n {RAISE_TO})"
    )
    error.errno = errno.EMFILE
    return error


class WorkerPool(ProcessPoolExecutor):
    """A ``ProcessPoolExecutor`` of ``workers`` processes started by ``mp_context``; see the
    module. Raises :func:`too_many_files` (an ``OSError``, errno ``EMFILE``) when created
    with more workers than the open-file limit has room for, or when starting them met it."""

    def __init__(
        self,
        workers: int,
        *,
        mp_context: BaseContext,
        initializer: Callable[..., object] | None = None,
        initargs: tuple[Any, ...] = (),
    ) -> None:
        # (names of its own: the executor's attributes are its own affair)
        self._workers_fit = workers_within_limit(mp_context.get_start_method() == "fork")
        if self._workers_fit is not None and workers > self._workers_fit:
            raise too_many_files(workers, self._workers_fit)
        self._workers_asked = workers
        server = mp_context.get_start_method() == "forkserver"
        start, args = with_parent(initializer, initargs, forked_by_server=server)
        super().__init__(workers, mp_context=mp_context, initializer=start, initargs=args)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        try:
            return super().submit(fn, *args, **kwargs)
        except OSError as e:  # starting a worker failed
            started = self._end_started_workers()
            if e.errno == errno.EMFILE:
                # Fewer than started: a worker needs files of its own too.
                fit = min(started - 1, started if self._workers_fit is None else self._workers_fit)
                raise too_many_files(self._workers_asked, fit) from e
            raise

    def end(self, error: BaseException | None) -> None:
        """End the pool, whose use ``error`` ended: the jobs not started are dropped and the
        workers waited for; after Ctrl-C (``KeyboardInterrupt``, which SIGTERM raises on the
        command line), for :data:`STOP_GRACE_SECONDS` at most, then those still running are
        killed. A worker stopped (SIGSTOP, ``kill -STOP``, a debugger) never ends its job:
        told to stop, the command waited for it for ever."""
        if not isinstance(error, KeyboardInterrupt):
            self.shutdown(wait=True, cancel_futures=True)
            return
        # subtle: concurrent.futures has no public way to these either (as below). The
        # manager thread ends once every worker has: joining it is waiting for them.
        manager = getattr(self, "_executor_manager_thread", None)
        processes = list((getattr(self, "_processes", None) or {}).values())
        results = getattr(self, "_result_queue", None)  # shutdown() lets go of these
        self.shutdown(wait=False, cancel_futures=True)
        if manager is None:
            return
        manager.join(STOP_GRACE_SECONDS)
        if manager.is_alive():
            for process in processes:
                process.kill()  # SIGKILL ends a stopped process too
            for process in processes:
                process.join()
            # subtle: a worker that Ctrl-C (the terminal's, sent to the whole group) ended while
            # it wrote a result left half a message in the result pipe, and the manager thread
            # waits in recv() for the rest for ever: this process holds the pipe's other end.
            # Closed, the pipe ends (every worker's end is closed, they have ended), recv()
            # fails and the manager thread ends as for a broken pool. A CI run hung so.
            writer = getattr(results, "_writer", None)
            if writer is not None:
                writer.close()
            manager.join()

    def _end_started_workers(self) -> int:
        """End the workers started so far; how many there were."""
        # subtle: concurrent.futures has no public way to these. A start that failed before
        # the pool's manager thread ran leaves nothing to tell the workers to stop, and
        # shutdown() neither does nor waits for them. Killed, not asked: the error ends the
        # pool's use, whatever they were doing.
        processes = list((getattr(self, "_processes", None) or {}).values())
        for process in processes:
            process.kill()
        for process in processes:
            process.join()
        return len(processes)
