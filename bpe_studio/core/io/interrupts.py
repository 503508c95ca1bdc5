"""Ctrl-C held while a pool of worker processes runs, and raised where the caller checks.

What it does: :func:`held_interrupts` replaces Python's SIGINT handler for a block with one
that only notes the signal; the function it yields raises ``KeyboardInterrupt`` if one came,
and leaving the block raises it if none was raised yet. :func:`checked` checks before each item
of an iterable it passes on, and after the last. So the interrupt comes out of the caller's
own code, between two results, and the pool is shut down from there.
subtle: raised wherever the main thread happened to be inside ``concurrent.futures``
(submitting a job, waking the pool's manager thread), a ``KeyboardInterrupt`` could leave that
thread dead on a closed pipe ("OSError: handle is closed"), the workers never told to stop,
and the command hung at exit joining them: 3 of 18 interrupts of ``encode --workers 2``, and
training too, on CPython 3.11.
What it leaves out: off the main thread (the app's workers), or where SIGINT is not Python's
default handler (a host that handles it), nothing is changed and checking does nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


def no_check() -> None:
    """The check where nothing is held (no pool, or not the main thread)."""
    return None


@contextmanager
def held_interrupts() -> Iterator[Callable[[], None]]:
    """Ctrl-C noted during the block; the yielded function raises it (see the module)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield no_check
        return
    came = threading.Event()

    def check() -> None:
        if came.is_set():
            came.clear()
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, lambda signum, frame: came.set())
    try:
        yield check
    finally:
        signal.signal(signal.SIGINT, previous)
    check()


def checked(items: Iterable[T], check: Callable[[], None]) -> Iterator[T]:
    """``items``, with ``check()`` before each is passed on and after the last."""
    for item in items:
        check()
        yield item
    check()
