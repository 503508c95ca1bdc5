"""A child process that ends when the process that started it ends.

What it does: :func:`end_with_parent`, run first in a child (a pool's worker, the child that
compiles kernels), makes the child end when ``parent`` ends, however it ends: killed with
SIGKILL (what the kernel's out-of-memory killer sends), no parent tells its children anything,
and a pool's workers had waited for work for ever, each holding its memory. On Linux the
kernel sends the child SIGKILL (``prctl(PR_SET_PDEATHSIG)``); elsewhere, or when the caller
says the signal could come early, a daemon thread looks every ``POLL_SECONDS`` whether the
child's parent is still the same process.
:func:`with_parent` wraps a pool's initializer so that each worker does this first.
What it leaves out: ending the children of a parent that is still running (the pools' own
shutdown does that).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

POLL_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _death_signal() -> bool:
    """Ask the kernel to SIGKILL this process when its parent ends; whether it took that."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
    prctl.restype = ctypes.c_int
    return prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0


def _parent_of(pid: int) -> int | None:
    """The parent of process ``pid`` (Linux's /proc), None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # The name, in parentheses, may hold spaces or parentheses: the state and the
            # parent follow the last ')'.
            return int(f.read().rpartition(b")")[2].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _watch(parent: int) -> None:
    """End this process once its parent is no longer ``parent``."""
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    os._exit(1)


def end_with_parent(parent: int, by_signal: bool = True) -> None:
    """End this process when process ``parent`` ends. ``parent`` started it, itself or
    through multiprocessing's fork server (a child of ``parent`` that ends when it does).
    ``by_signal`` False: watch from a thread even on Linux (see :func:`with_parent`)."""
    if by_signal and _death_signal():
        # subtle: the signal is tied to the process this one was forked from at the time of
        # the call. Had that ended since the fork, this process would already belong to
        # another (init, or a subreaper) and never be signalled: end now instead.
        here = os.getppid()
        if parent != here and parent != _parent_of(here):
            os._exit(1)
        return
    here = os.getppid()
    if parent != here and here == 1:  # (a parent that is itself process 1 never ends first)
        os._exit(1)
    threading.Thread(target=_watch, args=(here,), daemon=True, name="end-with-parent").start()


def _start_worker(
    parent: int,
    by_signal: bool,
    initializer: Callable[..., object] | None,
    initargs: tuple[Any, ...],
) -> None:
    end_with_parent(parent, by_signal)
    if initializer is not None:
        initializer(*initargs)


def with_parent(
    initializer: Callable[..., object] | None,
    initargs: tuple[Any, ...],
    *,
    forked_by_server: bool,
) -> tuple[Callable[..., None], tuple[Any, ...]]:
    """The ``initializer`` and ``initargs`` to give a pool started from this process so that
    each worker ends when this process ends, then runs ``initializer(*initargs)``.

    subtle: Linux signals a child when the *thread* that forked it ends. Where this thread
    forks the workers (fork and spawn) and is not the main thread (the app trains from one),
    a worker could be killed while this process runs on: its workers watch from a thread
    instead. ``forked_by_server``: the workers are forked by multiprocessing's fork server
    (whose one thread lives as long as the server)."""
    by_signal = forked_by_server or threading.current_thread() is threading.main_thread()
    return _start_worker, (os.getpid(), by_signal, initializer, initargs)
