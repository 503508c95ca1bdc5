"""Counting a corpus's pre-tokens on a Dask cluster (``dask.distributed``).

What it does: :func:`count_on_cluster` sends the corpus's tasks (``tasks.make_tasks``: byte
ranges cut where the pattern always cuts, one task per compressed file or Parquet row group)
to the cluster's workers, and reduces their partial counts on the cluster, :data:`FAN_IN` at
a time as they finish (a tree), so the client receives one counter: the corpus's, equal to
local counting's. Progress is told per task. A stop (``should_stop``) or an interrupt cancels
every task; a cluster it started is closed, so nothing is left running. A worker lost
mid-count is Dask's to handle: it runs the lost tasks again elsewhere (tasks are pure, so the
counts stay exact). The cluster is named by :func:`connect`'s address: ``local`` or
``local:N`` start a ``LocalCluster`` of worker processes for the run, ``tcp://HOST:PORT``
joins a running scheduler (its workers must reach the corpus: a shared path or an object
store), or a ``distributed.Client`` is used as it is.
What it leaves out: the tasks and how each is counted (``tasks``), merging (``train``).
"""

from __future__ import annotations

import logging
import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Union

from ..pretokenization.pretokenizer import pretokenizer
from ..pretokenization.specials import validate_special_tokens
from . import counting
from .counting import (
    ChunkResult,
    MeasuredFn,
    ProgressFn,
    TrainingCancelled,
    pack_counts,
    unpack_counts,
)
from .records import DEFAULT_TEXT_FIELD
from .sources import CLUSTER_EXTRA, CorpusFile
from .tasks import count_task, make_tasks

if TYPE_CHECKING:
    from distributed import Client, Future

# A cluster: an address (see ``connect``) or a connected ``distributed.Client``.
Cluster = Union[str, "Client"]
StatusFn = Callable[[str], None]
LOCAL = "local"
# How long joining a scheduler may take before its address is called unreachable.
CONNECT_TIMEOUT = "10s"
# Partial counts are added up this many at a time, on the workers.
FAN_IN = 8
# Seconds between two looks at ``should_stop`` while tasks run.
POLL = 0.2
# Byte ranges sent to a cluster are larger than local chunks (each task's result travels
# and is reduced), but at least a few per worker, so a slow or lost worker delays little.
CLUSTER_CHUNK_MAX = 64 * 1024 * 1024
TASKS_PER_WORKER = 4


class ClusterError(ValueError):
    """A cluster that cannot be used: a bad or unreachable address, or a cluster that lost
    the work; the message names the address."""


def parse_address(address: str) -> int | None:
    """The worker count ``local:N`` asks for (None for ``local``: every core); raises
    :class:`ClusterError` for an address that is neither that nor a scheduler's URL."""
    if address == LOCAL:
        return None
    if address.startswith(LOCAL + ":"):
        n = address[len(LOCAL) + 1 :]
        if n.isdigit() and int(n) >= 1:
            return int(n)
        raise ClusterError(f"cluster {address!r}: local:N takes a worker count of at least 1")
    if "://" in address and address.split("://", 1)[1]:
        return -1
    raise ClusterError(
        f"cluster {address!r}: give local, local:N (N worker processes here) or a Dask "
        "scheduler's address such as tcp://HOST:8786"
    )


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ClusterError(
            f"counting on a cluster needs dask.distributed: {CLUSTER_EXTRA}"
        ) from None
    return distributed


@contextmanager
def connect(cluster: Cluster) -> Iterator[Client]:
    """A client of ``cluster``: for ``local`` / ``local:N`` a ``LocalCluster`` of worker
    processes (one thread each) started now and closed at the end; for a scheduler's address
    a connection (closed at the end); a ``Client`` given is used and left open."""
    if not isinstance(cluster, str):
        yield cluster
        return
    workers = parse_address(cluster)
    distributed = _distributed()
    if workers == -1:
        try:
            client = distributed.Client(cluster, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError):
            raise ClusterError(
                f"{cluster}: no Dask scheduler answered within {CONNECT_TIMEOUT} (is "
                "`dask scheduler` running there, and the port open?)"
            ) from None
        with client:
            yield client
        return
    with _workers_ignore_interrupts():
        local = distributed.LocalCluster(
            n_workers=workers or counting.available_cores(),
            threads_per_worker=1,
            processes=True,
            # subtle: a free port for the scheduler's HTTP routes, which start even without
            # a dashboard; the default, 8787, is taken by any other cluster on the machine.
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        )
    with local, distributed.Client(local) as client:
        yield client


@contextmanager
def _workers_ignore_interrupts() -> Iterator[None]:
    """Processes started in the block ignore SIGINT (Ctrl-C in a terminal signals the whole
    process group; this process alone handles it, cancelling the tasks and closing the
    cluster, so no worker prints a traceback of its own). subtle: an ignored signal stays
    ignored across exec, and Python installs no handler of its own for it then; a handler
    would not be inherited."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread receives signals (and may set their handlers)
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def merge_packed(*parts: ChunkResult) -> ChunkResult:
    """Add up packed partial counts (runs on a worker: one step of the tree reduction)."""
    total: Counter[bytes] = Counter()
    nbytes = 0
    for tokens, freqs, size in parts:
        keys, numbers = unpack_counts(tokens, freqs)
        for key, n in zip(keys, numbers):
            total[key] += n
        nbytes += size
    return (*pack_counts(total), nbytes)


def _workers(client: Client) -> int:
    return max(len(client.scheduler_info().get("workers", {})), 1)


def count_on_cluster(
    files: Sequence[CorpusFile],
    special_tokens: Sequence[str] = (),
    *,
    cluster: Cluster,
    pattern: str = "gpt2",
    progress: ProgressFn | None = None,
    should_stop: Callable[[], bool] | None = None,
    started: Callable[[], None] | None = None,
    measured: MeasuredFn | None = None,
    status: StatusFn | None = None,
    text_field: str = DEFAULT_TEXT_FIELD,
) -> Counter[bytes]:
    """Count the pre-tokens of ``files`` on ``cluster``: the same counts as
    ``tasks.count_file``. ``progress(bytes_done, bytes_total)`` is told as each task ends;
    ``should_stop()`` is polled while tasks run (then every task is cancelled and
    :class:`~bpe_studio.core.corpus.counting.TrainingCancelled` raised); ``started()`` once
    the tasks are sent; ``measured(positions)`` once, with the whole corpus's;
    ``status(line)`` says where the counting runs."""
    specials = validate_special_tokens(special_tokens)
    pattern = pretokenizer(pattern).pattern
    with connect(cluster) as client:
        distributed = _distributed()
        workers = _workers(client)
        # A file that exists only in this process goes to the workers with its bytes.
        files = [f.carried() for f in files]
        size = sum(f.size for f in files)
        target = min(
            CLUSTER_CHUNK_MAX, max(counting.CHUNK_BYTES, size // (workers * TASKS_PER_WORKER))
        )
        tasks = make_tasks(files, target, specials, pattern, text_field)
        total = sum(t.nbytes for t in tasks)
        if status is not None:
            where = cluster if isinstance(cluster, str) else client.scheduler_info().get("address")
            status(
                f"pre-tokenizing on the Dask cluster {where}: {len(tasks):,} tasks on "
                f"{workers} worker{'s' if workers != 1 else ''}"
            )
        if progress:
            progress(0, total)
        counted = client.map(count_task, tasks, special_tokens=specials, pattern=pattern)
        sent: list[Future] = list(counted)
        try:
            if started:
                started()
            sizes = {future.key: task.nbytes for future, task in zip(counted, tasks)}
            result = _reduce(client, counted, sizes, sent, total, progress, should_stop)
        except distributed.KilledWorker as e:
            client.cancel(sent, force=True)  # type: ignore[no-untyped-call]
            raise ClusterError(f"the cluster lost the work: {e}") from None
        except BaseException:
            client.cancel(sent, force=True)  # type: ignore[no-untyped-call]
            raise
    keys, numbers = unpack_counts(*result[:2])
    counts: Counter[bytes] = Counter()
    dict.update(counts, zip(keys, numbers))
    if measured:
        measured(sum(n for n in map(len, keys) if n > 1))
    return counts


def _reduce(
    client: Client,
    counted: list[Future],
    sizes: dict[Any, int],
    sent: list[Future],
    total: int,
    progress: ProgressFn | None,
    should_stop: Callable[[], bool] | None,
) -> ChunkResult:
    """Wait for the counting tasks, adding up their results on the cluster as they finish
    (:data:`FAN_IN` at a time, sums of sums as a tree) until one result is left."""
    distributed = _distributed()
    running = set(counted)
    ready: list[Future] = []
    done = 0
    while running or len(ready) > 1:
        if running:
            try:
                finished = distributed.wait(
                    list(running), timeout=POLL, return_when="FIRST_COMPLETED"
                ).done
            except TimeoutError:
                finished = set()
            before = done
            for future in finished:
                running.discard(future)
                if future.status != "finished":
                    future.result()  # raises the task's error (a corpus error names the file)
                done += sizes.get(future.key, 0)
                ready.append(future)
            if done > before and progress:
                progress(done, total)
        if should_stop and should_stop():
            raise TrainingCancelled("training cancelled during pre-tokenization")
        # Reduce full groups as soon as they are ready; the rest once nothing else runs.
        while len(ready) >= FAN_IN or (not running and len(ready) > 1):
            group, ready = ready[:FAN_IN], ready[FAN_IN:]
            merged = client.submit(merge_packed, *group, pure=False)
            sent.append(merged)
            running.add(merged)
    if not ready:
        return (*pack_counts({}), 0)
    return ready[0].result()
