"""Pools of worker processes that end with this process.

What it does: :class:`WorkerPool` is a ``ProcessPoolExecutor`` whose every worker first
arranges to end when this process ends (``parent_exit``), then runs the pool's own
initializer. Killed (SIGKILL, as the out-of-memory killer ends a process), this process had
left its workers waiting for work for ever, each holding its memory.
What it leaves out: how workers start (``corpus.counting.mp_context``), Ctrl-C
(``interrupts``).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.context import BaseContext
from typing import Any

from .parent_exit import with_parent


class WorkerPool(ProcessPoolExecutor):
    """A ``ProcessPoolExecutor`` of ``workers`` processes started by ``mp_context``, each of
    which ends when this process ends; see the module."""

    def __init__(
        self,
        workers: int,
        *,
        mp_context: BaseContext,
        initializer: Callable[..., object] | None = None,
        initargs: tuple[Any, ...] = (),
    ) -> None:
        server = mp_context.get_start_method() == "forkserver"
        start, args = with_parent(initializer, initargs, forked_by_server=server)
        super().__init__(workers, mp_context=mp_context, initializer=start, initargs=args)
