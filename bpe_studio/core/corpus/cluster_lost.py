"""What a cluster that lost the work is told as: one line naming it and what to do.

What it does: :func:`lost_connection` tells the errors of a client whose scheduler went away
(its futures cancelled, its connection closed) from the task's own errors;
:func:`lost_reason` and :func:`killed_reason` word the line for the two ways the work is
lost: the scheduler went away, or every worker that ran a task died (Dask's
``KilledWorker``). :func:`quiet_client_logs` silences the client's own log lines (a
reconnection that failed, the tracebacks of closing without a scheduler), which only
repeat that line, unless ``BPE_STUDIO_DEBUG`` is set.
What it leaves out: the counting (``cluster``), joining (``cluster_start``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .cluster_address import distributed_module
from .cluster_start import DEBUG_VARIABLE, WORKER_MEMORY
from .tasks import CountTask


def lost_connection(error: BaseException) -> bool:
    """Whether ``error`` says the client lost its scheduler: Dask cancels every future of
    a client whose connection to it closed (this run cancels its own only after a stop,
    which raises first)."""
    comm = distributed_module("distributed.comm")
    client = distributed_module("distributed.client")
    lost = (
        concurrent.futures.CancelledError,  # Dask's FutureCancelledError, FuturesCancelledError
        asyncio.CancelledError,
        comm.CommClosedError,
        client.ClosedClientError,
    )
    return isinstance(error, lost)


def lost_reason(scheduler: str) -> str:
    return (
        f"the scheduler at {scheduler} went away mid-count (the connection to it was lost); "
        "restart it and run again"
    )


def killed_reason(error: Any, tasks: dict[Any, CountTask], scheduler: str, local: bool) -> str:
    """The line for Dask's ``KilledWorker``: which task (its size and file), how many
    workers died running it, and what gives a worker the memory it lacked."""
    size = distributed_module("dask.utils").format_bytes
    task = tasks.get(error.task)
    what = (
        f"one task ({size(task.nbytes)} of {task.file.name})"
        if task is not None
        else "one task (adding up partial counts)"
    )
    remedy = (
        "run fewer workers (local:N with a smaller N), so that each has more memory"
        if local
        else f"give each worker more memory (about {WORKER_MEMORY / 2**30:.0f} GiB: `dask "
        f"worker --memory-limit {WORKER_MEMORY / 2**30:.0f}GiB`) or start fewer workers per "
        "machine (`--nworkers`)"
    )
    return (
        f"the workers of the scheduler at {scheduler} died {error.allowed_failures + 1} times "
        f"running {what}, most often for lack of memory: {remedy}"
    )


@contextmanager
def quiet_client_logs() -> Iterator[None]:
    """Dask's client logs nothing below CRITICAL in the block (unless
    :data:`DEBUG_VARIABLE` is set)."""
    logger = logging.getLogger("distributed.client")
    if os.environ.get(DEBUG_VARIABLE):
        yield
        return
    previous = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(previous)
