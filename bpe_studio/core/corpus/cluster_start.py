"""Joining a Dask scheduler, or starting a ``LocalCluster`` for one run.

What it does: :func:`start_cluster` begins at once and returns a :class:`Started` whose
``client()`` waits for it, so the caller plans its tasks while the workers start. A
scheduler's address (``cluster_address``) is first reached with a plain socket and asked to
answer as a Dask scheduler (``cluster_reach``), so an unknown host, a port where nothing
listens or a server that is not Dask's is one line at once, not a wait; the join runs in a
thread the caller waits for, so a stop or Ctrl-C ends the wait, as :data:`JOIN_DEADLINE`
does. ``local`` / ``local:N`` start worker processes (one thread each: counting holds the
GIL), as many as the machine can hold (:func:`local_workers`: a core and
:data:`WORKER_MEMORY` each), saying so
when that is fewer than asked. The workers are forked from a ``forkserver`` that imports
Dask and the counting code once, in parallel with this process's own imports, instead of
each worker importing them after a clean start. A script that would start them from its top
level, where every worker process runs it again, is refused naming the line to guard
(:func:`check_main_guard`). Dask's worker logs ("Compute Failed" and the traceback of an
error the client reports anyway) are silenced unless ``BPE_STUDIO_DEBUG`` is set.
What it leaves out: the address syntax (``cluster_address``), the counting (``cluster``).
"""

from __future__ import annotations

import ast
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from . import counting
from .cluster_address import ClusterAddress, ClusterError, cluster_address, distributed_module
from .cluster_reach import greet, reach
from .counting import TrainingCancelled

if TYPE_CHECKING:
    from distributed import Client

# How long Dask's client may take to connect to a scheduler that answered the greeting.
CONNECT_TIMEOUT = "10s"
# How long joining a scheduler may take in all (reaching it, the greeting, Dask's client,
# each bounded on its own) before the wait ends, whatever part of it hangs.
JOIN_DEADLINE = 60.0
# Seconds between two looks at ``should_stop`` while a scheduler is joined.
JOIN_POLL = 0.2
# The memory a local worker is given at least: its task's text (a byte range of at most
# ``cluster.CLUSTER_CHUNK_MAX``, decoded) and the counts of its pre-tokens.
WORKER_MEMORY = 1 << 30
# Set (to anything) to keep Dask's worker logs of a local cluster on stderr.
DEBUG_VARIABLE = "BPE_STUDIO_DEBUG"
# Imported once by the forkserver the local workers are forked from.
PRELOAD = ["distributed", "bpe_studio.core.corpus.on_worker"]


def local_workers(requested: int | None) -> tuple[int, str | None]:
    """How many worker processes a local cluster gets: ``requested`` (None: every core),
    at most one per core this process may run on (``counting.available_cores``) and one per
    :data:`WORKER_MEMORY` of the machine's memory (as Dask measures it); and, when that is
    fewer than asked, a note saying why."""
    cores = counting.available_cores()
    memory = int(distributed_module("distributed.system").MEMORY_LIMIT)
    fits = max(1, min(cores, memory // WORKER_MEMORY))
    wanted = requested or cores
    if wanted <= fits:
        return wanted, None
    return fits, (
        f"capped at {fits}: this machine has {cores} core{'s' if cores != 1 else ''} and "
        f"{memory / 2**30:.1f} GiB of memory, and a worker takes a core and "
        f"{WORKER_MEMORY / 2**30:.0f} GiB"
    )


def _main_frame() -> FrameType | None:
    """The frame of ``__main__``'s top-level code that led here, if any."""
    main = sys.modules.get("__main__")
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is getattr(main, "__dict__", 0):
            return frame
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _guarded(tree: ast.Module, line: int) -> bool:
    """Whether ``line`` of a module is inside ``if __name__ == "__main__":``."""
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        if not isinstance(test, ast.Compare) or not isinstance(test.ops[0], ast.Eq):
            continue
        names = [test.left, *test.comparators]
        texts = {n.id if isinstance(n, ast.Name) else getattr(n, "value", None) for n in names}
        if texts == {"__name__", "__main__"}:
            body = node.body  # type: ignore[attr-defined]
            first, last = body[0].lineno, body[-1].end_lineno or body[-1].lineno
            if first <= line <= last:
                return True
    return False


def check_main_guard(address: str) -> None:
    """Refuse to start local workers from a script's unguarded top level: each worker
    process (forkserver or spawn) runs the script again to find its functions, so it would
    start a cluster of its own, and so on. Raises ClusterError naming the script and line."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    rerun = getattr(main, "__name__", "") == "__mp_main__"
    frame = None if rerun else _main_frame()
    if not rerun and (path is None or frame is None):
        return  # an interactive session, python -c, or not called from __main__'s top level
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8")) if path else None
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return
    if rerun or (tree is not None and frame is not None and not _guarded(tree, frame.f_lineno)):
        where = f"{path}, line {frame.f_lineno}" if frame is not None else f"{path}"
        raise ClusterError(
            f"starting local worker processes from the top level of {where}: each worker runs "
            'the script again; put the code that trains under `if __name__ == "__main__":`',
            address,
        )


@contextmanager
def workers_ignore_interrupts() -> Iterator[None]:
    """Processes started in the block ignore SIGINT (Ctrl-C in a terminal signals the whole
    process group; this process alone handles it, cancelling the tasks and closing the
    cluster, so no worker prints a traceback of its own). subtle: an ignored signal stays
    ignored across exec, and Python installs no handler of its own for it then; the
    forkserver passes it on to the workers it forks."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread receives signals (and may set their handlers)
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _start_forkserver() -> str | None:
    """Start the forkserver the workers will be forked from (it imports :data:`PRELOAD`
    while this process goes on); its start method, or None where there is none."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(PRELOAD)
    with workers_ignore_interrupts():
        forkserver.ensure_running()
    return "forkserver"


class Started:
    """A cluster being joined or started in a thread: ``client()`` waits for it (raising
    its error), ``close()`` closes what this run started. ``note`` says how the workers were
    capped, if they were."""

    def __init__(self, address: ClusterAddress) -> None:
        self.address = address
        self.note: str | None = None
        self.planned = 1  # the workers it will have, as far as known before it is up
        self._client: Client | None = None
        self._cluster: Any = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._own = True  # close() closes the client and the cluster
        self._lock = threading.Lock()
        self._abandoned = False  # the join was given up: its client is closed, not kept

    @classmethod
    def of(cls, client: object) -> Started:
        """A ``distributed.Client`` given (a TypeError for anything else), used as it is:
        ``close()`` leaves it open."""
        started = cls(ClusterAddress(repr(client), url=""))
        started._client = check_client(client)
        started.planned = max(len(started._client.scheduler_info().get("workers", {})), 1)
        started._own = False
        return started

    def start_local(self) -> None:
        check_main_guard(self.address.text)
        workers, self.note = local_workers(self.address.workers)
        self.planned = workers
        method = _start_forkserver()
        self._thread = threading.Thread(
            target=self._run_local, args=(workers, method), name="bpe-studio-cluster", daemon=True
        )
        self._thread.start()

    def _run_local(self, workers: int, method: str | None) -> None:
        try:
            distributed = distributed_module()
            import dask

            quiet = logging.WARNING if os.environ.get(DEBUG_VARIABLE) else logging.CRITICAL
            config = {"distributed.worker.multiprocessing-method": method} if method else {}
            with dask.config.set(config):
                self._cluster = distributed.LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    # subtle: a free port for the scheduler's HTTP routes, which start even
                    # without a dashboard; the default, 8787, is taken by any other cluster.
                    dashboard_address=":0",
                    silence_logs=quiet,
                )
            self._client = distributed.Client(self._cluster)
        except BaseException as e:  # handed to the thread that waits (client())
            self._error = e

    def join(self, should_stop: Callable[[], bool] | None = None) -> None:
        """Reach the scheduler, check it answers as one, and connect: in a thread this one
        waits for, until it ends, ``should_stop()`` (TrainingCancelled), an interrupt or
        :data:`JOIN_DEADLINE` (ClusterError); a client made after the wait ended is closed."""
        self._thread = threading.Thread(target=self._run_join, name="bpe-studio-join", daemon=True)
        self._thread.start()
        try:
            deadline = time.monotonic() + JOIN_DEADLINE
            while self._thread.is_alive():
                if should_stop and should_stop():
                    raise TrainingCancelled("training cancelled while joining the cluster")
                if time.monotonic() >= deadline:
                    raise ClusterError(
                        f"{self.address.host}:{self.address.port} took the connection, but "
                        f"joining the Dask scheduler there did not finish within "
                        f"{JOIN_DEADLINE:g} s",
                        self.address.text,
                    )
                self._thread.join(JOIN_POLL)
        except BaseException:
            with self._lock:
                self._abandoned = True
            raise
        self.planned = max(len(self.client().scheduler_info().get("workers", {})), 1)

    def _run_join(self) -> None:
        address = self.address
        try:
            reach(address)
            greet(address)
            try:
                client = distributed_module().Client(address.url, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError):
                raise ClusterError(
                    f"{address.host}:{address.port} answers, but no Dask scheduler let this "
                    f"client join within {CONNECT_TIMEOUT}",
                    address.text,
                ) from None
        except BaseException as e:  # handed to the thread that waits (join())
            self._error = e
            return
        with self._lock:
            if self._abandoned:
                client.close()
            else:
                self._client = client

    def client(self) -> Client:
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        assert self._client is not None
        return self._client

    def close(self) -> None:
        if self._thread is not None:
            self._thread.join()
        if not self._own:
            return
        for part in (self._client, self._cluster):
            if part is not None:
                part.close()


def start_cluster(address: str, should_stop: Callable[[], bool] | None = None) -> Started:
    """Begin joining or starting the cluster ``address`` names (:class:`Started`): a
    scheduler is joined now (failing at once if it cannot be reached or is not Dask's;
    ``should_stop`` is polled meanwhile); a local cluster starts in a thread, for
    ``client()`` to wait for."""
    checked = cluster_address(address)
    started = Started(checked)
    if checked.is_local:
        started.start_local()
    else:
        started.join(should_stop)
    return started


def check_client(cluster: object) -> Client:
    """``cluster`` if it is a ``distributed.Client``; else a TypeError naming it."""
    distributed = distributed_module()
    if not isinstance(cluster, distributed.Client):
        raise TypeError(
            "cluster must be an address ('local', 'local:N', 'tcp://HOST:PORT') or a "
            f"distributed.Client, not {cluster!r}"
        )
    return cluster
