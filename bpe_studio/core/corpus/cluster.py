"""Counting a corpus's pre-tokens on a Dask cluster (``dask.distributed``).

What it does: :func:`count_on_cluster` sends the corpus's tasks (``tasks.make_tasks``: byte
ranges cut where the pattern always cuts, one task per compressed file or Parquet row group)
to the cluster's workers, and reduces their partial counts on the cluster, :data:`FAN_IN` at
a time as they finish (a tree), so the client receives one counter: the corpus's, equal to
local counting's. Progress is told per task. A stop (``should_stop``) or an interrupt cancels
every task; a cluster it started is closed, so nothing is left running. A worker lost
mid-count is Dask's to handle: it runs the lost tasks again elsewhere (tasks are pure, so the
counts stay exact); work lost for good (a task's workers all died, the scheduler went away)
is one line naming the address and what to do (``cluster_lost``). The cluster is named by
an address (``cluster_address``: ``local``, ``local:N`` or a scheduler's URL, checked at
once) and started or joined while the tasks are planned (``cluster_start``), or a
``distributed.Client`` is used as it is.
What it leaves out: the tasks and how each is counted (``tasks``), merging (``train``).
"""

from __future__ import annotations

import logging
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Union

from ..pretokenization.pretokenizer import pretokenizer
from ..pretokenization.specials import validate_special_tokens
from . import counting
from .cluster_address import LOCAL as LOCAL
from .cluster_address import ClusterError, cluster_address, distributed_module
from .cluster_address import parse_address as parse_address
from .cluster_lost import killed_reason, lost_connection, lost_reason, quiet_client_logs
from .cluster_start import Started, start_cluster
from .counting import (
    ChunkResult,
    MeasuredFn,
    ProgressFn,
    TrainingCancelled,
    pack_counts,
    unpack_counts,
)
from .on_worker import count_on_worker, fingerprinted
from .sources import (
    DEFAULT_TEXT_FIELD,
    CorpusFile,
    changes_first,
    check_text_field,
    check_text_files,
    check_unchanged_files,
)
from .tasks import CountTask, make_tasks

if TYPE_CHECKING:
    from distributed import Client, Future

# A cluster: an address (see ``connect``) or a connected ``distributed.Client``.
Cluster = Union[str, "Client"]
StatusFn = Callable[[str], None]
# Partial counts are added up this many at a time, on the workers.
FAN_IN = 8
# Seconds between two looks at ``should_stop`` while tasks run.
POLL = 0.2
# Byte ranges sent to a cluster are larger than local chunks (each task's result travels
# and is reduced), but at least a few per worker, so a slow or lost worker delays little.
CLUSTER_CHUNK_MAX = 64 * 1024 * 1024
TASKS_PER_WORKER = 4
# How long a scheduler without a worker is waited for: workers started beside it (a script,
# a batch system) join within seconds; tasks sent to none would wait for ever.
WORKER_WAIT = 30.0


log = logging.getLogger("bpe_studio.cluster")


@contextmanager
def connect(cluster: Cluster) -> Iterator[Client]:
    """A client of ``cluster``: for ``local`` / ``local:N`` a ``LocalCluster`` of worker
    processes (one thread each) started now and closed at the end; for a scheduler's address
    a connection (closed at the end); a ``Client`` given is used and left open."""
    started = start_cluster(cluster) if isinstance(cluster, str) else Started.of(cluster)
    try:
        yield started.client()
    finally:
        started.close()


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


def packed_positions(part: ChunkResult) -> int:
    """The positions (see ``trainer.count_positions``) of a partial count (runs on the worker
    that holds it: only the number travels)."""
    keys, _ = unpack_counts(part[0], part[1])
    return sum(n for n in map(len, keys) if n > 1)


class _Measured:
    """Tells ``measured`` the positions of the largest partial count finished so far: a
    lower bound of the corpus's, which only grows, so the compiled merge engine starts to
    load during counting (as it does counting here) rather than after it."""

    def __init__(self, client: Client, sent: list[Future], measured: MeasuredFn | None) -> None:
        self._client, self._sent, self._measured = client, sent, measured
        self._asked: list[Future] = []
        self._best = 0

    def ask(self, part: Future) -> None:
        if self._measured is not None:
            future = self._client.submit(packed_positions, part, pure=False)
            self._sent.append(future)
            self._asked.append(future)

    def cancel(self) -> None:
        """Cancel the sizes still being taken, so that no task is left behind."""
        if self._asked:
            self._client.cancel(self._asked, force=True)  # type: ignore[no-untyped-call]
            self._asked.clear()

    def tell(self) -> None:
        if self._measured is None:
            return
        for future in [f for f in self._asked if f.status != "pending"]:
            self._asked.remove(future)
            if future.status == "finished" and future.result() > self._best:
                self._best = future.result()
                self._measured(self._best)


def _scheduler(client: Client) -> str:
    """The address of the scheduler ``client`` joined (known without asking it)."""
    return str(getattr(client.scheduler, "address", None) or client)


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
    text_field: str | None = None,
) -> Counter[bytes]:
    """Count the pre-tokens of ``files`` on ``cluster``: the same counts as
    ``tasks.count_file`` (``text_field`` as there). ``progress(bytes_done, bytes_total)`` is
    told as each task ends; ``should_stop()`` is polled while a scheduler is joined and
    while tasks run (then every task is cancelled and
    :class:`~bpe_studio.core.corpus.counting.TrainingCancelled` raised);
    ``started()`` once the tasks are sent; ``measured(positions)`` once, with the whole
    corpus's; ``status(line)`` says where the counting runs (and how a local cluster's
    workers were capped; without ``status``, that is logged)."""
    specials = validate_special_tokens(special_tokens)
    pattern = pretokenizer(pattern).pattern
    check_text_field(files, text_field)
    check_text_files(files)
    field = text_field or DEFAULT_TEXT_FIELD
    # A local cluster starts while the tasks are planned; a scheduler is reached first.
    if isinstance(cluster, str):
        starting = start_cluster(cluster, should_stop)
    else:
        starting = Started.of(cluster)
    try:
        # A file that exists only in this process goes to the workers with its bytes; a
        # local file with its fingerprint, which each worker checks its copy against.
        files = [fingerprinted(f.carried()) for f in files]
        size = sum(f.size for f in files)
        per_task = size // (starting.planned * TASKS_PER_WORKER)
        target = min(CLUSTER_CHUNK_MAX, max(counting.CHUNK_BYTES, per_task))
        tasks = make_tasks(files, target, specials, pattern, field)
        client = starting.client()
        where = cluster if isinstance(cluster, str) else None
        _some_worker(client, where, should_stop, status)
        _say_where(client, cluster, len(tasks), starting.note, status)
        # A worker's copy that no longer matches: first, whether this machine's file changed.
        with changes_first(files), quiet_client_logs():
            counted = _count(
                client, tasks, specials, pattern, progress, should_stop, started, measured, where
            )
        # The workers checked their copies against this machine's file before reading them
        # (``on_worker``); whether that file changed since is checked here.
        check_unchanged_files(files)
        return counted
    finally:
        with quiet_client_logs():  # closing a client whose scheduler is gone logs tracebacks
            starting.close()


def _some_worker(
    client: Client,
    where: str | None,
    should_stop: Callable[[], bool] | None,
    status: StatusFn | None,
) -> None:
    """Wait up to :data:`WORKER_WAIT` for the scheduler to have a worker (saying so once),
    else a ClusterError naming it and what to start; a stop ends the wait."""
    if _has_workers(client):
        return
    if status is not None:
        status(f"waiting for a worker to join the scheduler at {_scheduler(client)}…")
    deadline = time.monotonic() + WORKER_WAIT
    while not _has_workers(client):
        if should_stop is not None and should_stop():
            raise TrainingCancelled("training cancelled while waiting for a worker")
        if time.monotonic() >= deadline:
            raise ClusterError(
                f"the scheduler at {_scheduler(client)} has no worker (none joined within "
                f"{WORKER_WAIT:g} s): start some with `dask worker {_scheduler(client)}`",
                where,
            )
        time.sleep(POLL)


def _has_workers(client: Client) -> bool:
    return bool(client.scheduler_info().get("workers"))


def _say_where(
    client: Client, cluster: Cluster, tasks: int, note: str | None, status: StatusFn | None
) -> None:
    """Tell ``status`` where the counting runs, and how the workers were capped (logged
    when there is no ``status``)."""
    if status is None:
        if note:
            log.warning("cluster %r: %s", cluster, note)
        return
    workers = _workers(client)
    where = cluster if isinstance(cluster, str) else client.scheduler_info().get("address")
    status(
        f"pre-tokenizing on the Dask cluster {where}: {tasks:,} task{'s' if tasks != 1 else ''} "
        f"on {workers} worker{'s' if workers != 1 else ''}{f' ({note})' if note else ''}"
    )


def _count(
    client: Client,
    tasks: list[CountTask],
    specials: list[str],
    pattern: str,
    progress: ProgressFn | None,
    should_stop: Callable[[], bool] | None,
    started: Callable[[], None] | None,
    measured: MeasuredFn | None,
    where: str | None,
) -> Counter[bytes]:
    """Run ``tasks`` on the cluster and reduce their counts there (see ``_reduce``); a
    cluster that loses the work is a ClusterError naming ``where`` (the address given)."""
    distributed = distributed_module()
    total = sum(t.nbytes for t in tasks)
    if progress:
        progress(0, total)
    with warnings.catch_warnings():
        # A file only this process can read (memory://) travels in its tasks, as its bytes:
        # meant, and said nowhere else; Dask's advice (scatter it) would send it all the same.
        warnings.filterwarnings("ignore", "Sending large graph", UserWarning)
        counted = client.map(count_on_worker, tasks, special_tokens=specials, pattern=pattern)
    sent: list[Future] = list(counted)
    try:
        if started:
            started()
        sizes = {future.key: task.nbytes for future, task in zip(counted, tasks)}
        told = _Measured(client, sent, measured)
        result = _reduce(client, counted, sizes, sent, total, progress, should_stop, told)
        told.cancel()  # sizes still being taken are no longer wanted
    except distributed.KilledWorker as e:
        client.cancel(sent, force=True)  # type: ignore[no-untyped-call]
        by_key = {future.key: task for future, task in zip(counted, tasks)}
        local = where is not None and cluster_address(where).is_local
        reason = killed_reason(e, by_key, _scheduler(client), local)
        raise ClusterError(reason, where) from None
    except Exception as e:
        if not lost_connection(e):
            client.cancel(sent, force=True)  # type: ignore[no-untyped-call]
            raise
        # Nothing to cancel: the scheduler that held the tasks is gone.
        raise ClusterError(lost_reason(_scheduler(client)), where) from None
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
    told: _Measured,
) -> ChunkResult:
    """Wait for the counting tasks, adding up their results on the cluster as they finish
    (:data:`FAN_IN` at a time, sums of sums as a tree) until one result is left; ``told``
    hears of each result, for the positions counted so far."""
    distributed = distributed_module()
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
                    # Raises the task's error (``on_worker``: it names the file and the worker).
                    future.result()
                done += sizes.get(future.key, 0)
                ready.append(future)
                told.ask(future)
            if done > before and progress:
                progress(done, total)
            told.tell()
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
