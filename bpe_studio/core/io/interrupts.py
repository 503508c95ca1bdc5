"""Ctrl-C held while a pool of worker processes runs, and raised where the caller checks.

What it does: :func:`held_interrupts` replaces Python's SIGINT handler for a block with one
that only notes the signal; the function it yields raises ``KeyboardInterrupt`` if one came,
and leaving the block raises it if none was raised yet. :func:`checked` checks before each item
of an iterable it passes on, and after the last. So the interrupt comes out of the caller's
own code, between two results, and the pool is shut down from there; :func:`results` (in order)
and :func:`completed` (as they finish) check while they wait for one too (a stopped worker,
``kill -STOP``, never sends it; a worker's task may take minutes).
subtle: raised wherever the main thread happened to be inside ``concurrent.futures``
(submitting a job, waking the pool's manager thread), a ``KeyboardInterrupt`` could leave that
thread dead on a closed pipe ("OSError: handle is closed"), the workers never told to stop,
and the command hung at exit joining them: 3 of 18 interrupts of ``encode --workers 2``, and
training too, on CPython 3.11.
:func:`interrupt` is an interrupt that is no Ctrl-C (the command line's SIGTERM): held by the
same blocks, also where SIGINT is ignored (a script's ``cmd &``), whose Ctrl-C stays ignored.
:func:`keep_dropped` keeps the ``KeyboardInterrupt`` that lands while a finalizer runs (a
``__del__``, a weakref's callback, a generator the collector closes, a ctypes callback), which
Python reports ("Exception ignored in") and drops, or while a compiled module's start prints
and clears it (CPython's PyErr_Print): the command went on to the end and exited 0.
:func:`raise_dropped` raises it where nothing holds interrupts; a block that does raises it
where it checks, or when it ends.
What it leaves out: off the main thread (the app's workers), or where SIGINT has a handler
other than Python's default one (a host that handles it), nothing is changed and checking does
nothing; interrupts are kept from finalizers only in a process that asked (the command line):
the hook is the process's.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager
from types import TracebackType
from typing import TypeVar

T = TypeVar("T")

# How often a wait for a worker's result looks for an interrupt held meanwhile.
POLL_SECONDS = 0.1
# The event of the block holding interrupts just now, if any (blocks inside it hold nothing:
# the outer one raises when it ends).
_holding: list[threading.Event] = []


# Whether a finalizer dropped a KeyboardInterrupt not raised again yet (a list, so that the
# hook appends rather than rebinds).
_dropped: list[bool] = []


def keep_dropped() -> None:
    """Keep a ``KeyboardInterrupt`` that Python drops (see the module) for the next check,
    instead of the report it writes then. subtle: the command line catches every
    ``KeyboardInterrupt`` raised to it; one reaches ``sys.excepthook`` only from C code that
    printed and cleared it."""
    previous, printed = sys.unraisablehook, sys.excepthook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            _dropped.append(True)
            return
        previous(unraisable)

    def excepthook(
        kind: type[BaseException], error: BaseException, tb: TracebackType | None
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            _dropped.append(True)
            return
        printed(kind, error, tb)

    sys.unraisablehook, sys.excepthook = hook, excepthook


def raise_dropped() -> None:
    """``KeyboardInterrupt`` if Python dropped one since it was last raised, unless a
    block holds interrupts (its check raises it, at the latest when it ends)."""
    if _dropped and not _holding:
        _dropped.clear()
        raise KeyboardInterrupt


def no_check() -> None:
    """The check where nothing is held (no pool, or not the main thread)."""
    return None


def interrupt() -> None:
    """Interrupt the main thread as Ctrl-C does: noted if a block holds interrupts (raised
    where it checks), else ``KeyboardInterrupt`` at once. For a signal handler's use."""
    if _holding:
        _holding[0].set()
        return
    raise KeyboardInterrupt


@contextmanager
def held_interrupts() -> Iterator[Callable[[], None]]:
    """Ctrl-C noted during the block; the yielded function raises it (see the module)."""
    handler = signal.getsignal(signal.SIGINT)
    if (
        threading.current_thread() is not threading.main_thread()
        or _holding
        or (callable(handler) and handler is not signal.default_int_handler)
    ):
        yield no_check
        return
    came = threading.Event()

    def check() -> None:
        if came.is_set() or _dropped:
            came.clear()
            _dropped.clear()
            raise KeyboardInterrupt

    # subtle: where SIGINT is ignored, it stays so; only :func:`interrupt` is held then.
    ignored = handler is not signal.default_int_handler
    previous = handler if ignored else signal.signal(signal.SIGINT, lambda s, f: came.set())
    _holding.append(came)
    try:
        yield check
    finally:
        _holding.remove(came)
        if not ignored:
            signal.signal(signal.SIGINT, previous)
    check()


def checked(items: Iterable[T], check: Callable[[], None]) -> Iterator[T]:
    """``items``, with ``check()`` before each is passed on and after the last."""
    for item in items:
        check()
        yield item
    check()


def results(futures: Sequence[Future[T]], check: Callable[[], None]) -> Iterator[T]:
    """Each future's result in order, with ``check()`` before each is passed on, after the
    last, and while one is awaited: a held Ctrl-C was raised only once the next result came,
    which a stopped worker never sends."""
    # Popped as passed on, as ``Executor.map`` does: a future keeps its result (a chunk's
    # ids) for as long as it is held, and a list of them all held every chunk to the end.
    pending = list(futures)
    del futures
    pending.reverse()
    while pending:
        check()
        future = pending.pop()
        while not wait([future], POLL_SECONDS).done:
            check()
        yield future.result()
        del future
    check()


def completed(futures: Iterable[Future[T]], check: Callable[[], None]) -> Iterator[Future[T]]:
    """Each future as it finishes (as ``as_completed``), with ``check()`` before each is
    passed on, after the last, and while none has finished: a held Ctrl-C waited for the
    next task to end, 20 s and more for a task that is one long pre-token."""
    pending = set(futures)
    while pending:
        check()
        done, pending = wait(pending, POLL_SECONDS, return_when=FIRST_COMPLETED)
        for future in done:
            check()
            yield future
    check()
