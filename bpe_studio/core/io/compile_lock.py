"""One compile of a group of kernels at a time on a machine: a lock file in numba's cache.

What it does: :func:`compile_lock` holds an operating-system file lock (``filelock``'s: fcntl
or msvcrt, which the system releases when its holder ends, killed or not) named after what is
compiled, for as long as one process compiles it into the cache. A process that finds it
taken says so in the log (once a process), waits, and may then find the kernels cached.
Several first runs at once (a shell loop, a job array) had each compiled the same kernels.
What it leaves out: compiling (``numba_cache.compile_in_child``). Where only a lock file
could stand for the lock (no fcntl), none is taken: a file left by a process killed holding
it would stop every later compile.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
_said_waiting: list[bool] = []  # the wait is said once a process, whichever group it is for
# What this process did for its groups of kernels: loaded what another compiled meanwhile,
# compiled one itself (``note``); lists, so that the notes append rather than rebind.
_loaded_from_another: list[bool] = []
_compiled_here: list[bool] = []


def lock_path(folder: Path, code: str) -> Path:
    """The lock file in ``folder`` for compiling ``code``: one per group of kernels, so
    that different groups still compile side by side."""
    digest = hashlib.sha256(code.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return folder / f"compile-{digest}.lock"


def _os_lock(path: Path) -> Any:
    """A ``filelock`` lock on ``path`` that the system releases with its holder, or None."""
    if sys.platform != "win32":
        try:
            import fcntl  # noqa: F401  (filelock's own choice; asked first, as it warns)
        except ImportError:
            return None
    try:
        from filelock import FileLock
    except ImportError:
        return None
    return FileLock(str(path))


def note(loaded_from_another: bool) -> None:
    """Note that a group of kernels was loaded from another process's compile (True) or
    compiled by this one (False)."""
    (_loaded_from_another if loaded_from_another else _compiled_here).append(True)


def waited_for_another() -> bool:
    """Whether this process only loaded kernels another process compiled while it waited
    (its summary then says it waited, not that it compiled): not when it compiled any group
    itself, after a wait that timed out or found them still not cached."""
    return bool(_loaded_from_another) and not _compiled_here


@contextmanager
def compile_lock(folder: Path | None, code: str, wait: float) -> Iterator[bool]:
    """Hold the lock for compiling ``code`` into ``folder`` (numba's cache) while the block
    runs; yields whether another process held it first (the kernels may be cached now). A
    holder alive but still compiling after ``wait`` seconds is compiled beside. Without a
    folder or a lock that can be taken, the block runs unlocked."""
    lock = None if folder is None else _os_lock(lock_path(folder, code))
    if lock is None:
        yield False
        return
    from filelock import Timeout

    waited = held = False
    try:
        try:
            lock.acquire(timeout=0)
        except Timeout:
            waited = True
            if not _said_waiting:
                _said_waiting.append(True)
                log.warning(
                    "another process is compiling the kernels; waiting for it, then loading "
                    "them from the cache (%s)",
                    folder,
                )
            lock.acquire(timeout=wait)
        held = True
    except Timeout:
        log.warning("waited %.0f s for another process's compile; compiling here too", wait)
    except OSError as exc:  # a cache folder that refuses the lock file: compile unlocked
        log.debug("no compile lock in %s: %s", folder, exc)
    try:
        yield waited
    finally:
        if held:
            # subtle: the lock file stays, empty, one per group of kernels (its name is the
            # code's). Removed, even by its holder, a process that had opened it to wait would
            # lock the removed file while a third locked a new one of that name: two compiles
            # at once. filelock leaves Unix lock files for that reason, and the older releases
            # this project accepts do not notice a removed one.
            lock.release()
