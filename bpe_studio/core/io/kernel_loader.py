"""Loading one group of numba kernels: imported once per process, read from numba's cache, or
compiled once per machine (announced first, and in a child process).

What it does: a :class:`KernelLoader` holds what the merge engine's, the scanners' and the
encoder's kernels each need around their own module: the import, done once and remembered
when it fails (numba missing, a broken install); :meth:`~KernelLoader.prepare`, which makes
every kernel ready to run, asking numba's cache index first (``numba_cache.is_cached``) so
that a first compile is announced (``status(message)``) before it starts, compiling it in a
child Python (``numba_cache.compile_in_child``: numba's compiler holds the GIL for seconds,
which would freeze a window another thread draws), then calling the kernels once (loading
them from the cache); :meth:`~KernelLoader.ready` and :meth:`~KernelLoader.compiling` for
callers that must not wait (a GUI thread) and for progress lines; and
:meth:`~KernelLoader.prepare_in_background`, the same in a daemon thread. Importing this
module imports no numba (``numba_cache`` does, and is imported only by ``prepare``). Once a
group is imported, NumPy's huge-page advice is set for the machine (``huge_pages``).
What it leaves out: the kernels, their warm-up calls and their messages (each group's module
gives them), when to prepare (the callers).
"""

from __future__ import annotations

import errno
import logging
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from . import huge_pages

# How a compiling message ends (``compiling the encoder (first run only)``), and how it ends
# where numba has no folder to cache the kernels in.
FIRST_RUN = " (first run only)"
NO_CACHE = " (no cache folder: each run compiles)"


def _no_child(code: str, needed: Callable[[], bool] | None = None) -> None:
    """compile_in_child's stand-in where nothing compiled in a child can be kept."""


StatusFn = Callable[[str], None]
_log = logging.getLogger(__name__)
# What writing numba's cache fails with, where a compile in memory still serves this process.
_WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


def _cannot_write(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in _WRITE_ERRORS


class KernelLoader:
    """One group of kernels (see the module docstring).

    ``importer()`` imports and returns the kernels' module (importing numba);
    ``kernels_of(module)`` lists its jitted functions (whose cache entries decide whether a
    compile is announced); ``warm_up(module)`` calls each once with the argument types its
    users pass; ``child_code`` is the Python a child process runs to compile them into the
    cache; ``compiling_message`` is what ``status`` hears before a compile; a failed import
    raises ``unavailable(explain(reason))`` from :meth:`load`.
    """

    def __init__(
        self,
        *,
        name: str,
        importer: Callable[[], ModuleType],
        kernels_of: Callable[[ModuleType], tuple[Any, ...]],
        warm_up: Callable[[ModuleType], None],
        child_code: str,
        compiling_message: str,
        unavailable: type[ImportError],
        explain: Callable[[str], str],
    ) -> None:
        self.name = name
        self.compiling_message = compiling_message
        self._importer, self._kernels_of, self._warm_up = importer, kernels_of, warm_up
        self._child_code = child_code
        self._unavailable, self._explain = unavailable, explain
        # _lock guards the import; _prepare_lock the warm-up, which may take seconds (a compile).
        self._lock = threading.Lock()
        self._prepare_lock = threading.Lock()
        self._module: ModuleType | None = None
        self._failure: str | None = None
        self._ready = False
        self._compiling = False
        # prepare() calls under way, in any thread (the import included, which comes before
        # _prepare_lock is taken). subtle: an int updated under the GIL; a stale read only
        # makes a caller take the Python path once more, or wait once.
        self._preparing = 0

    @property
    def failure(self) -> str | None:
        """Why the import failed (``"ImportError: ..."``), if it did."""
        return self._failure

    def imported(self) -> ModuleType | None:
        """The kernels' module, imported once; None when the import failed (then and every
        later time)."""
        module = self._module
        if module is not None:
            # subtle: set once and never changed, so read without the lock (every short
            # text's encode asks).
            return module
        with self._lock:
            if self._module is None and self._failure is None:
                try:
                    module = self._importer()
                except Exception as exc:  # numba missing, a broken install, an unsupported CPU
                    self._failure = f"{type(exc).__name__}: {exc}"
                else:
                    # Before the kernels' users allocate their large arrays (and so before
                    # another thread can see the module without the lock).
                    huge_pages.follow_machine()
                    self._module = module
            return self._module

    def load(self) -> ModuleType:
        """The kernels' module (see :meth:`imported`); raises ``unavailable`` naming the
        import failure, every time it is asked after one."""
        module = self.imported()
        if module is None:
            raise self._unavailable(self._explain(self._failure or "unknown"))
        return module

    def ready(self) -> bool:
        """Whether the kernels are loaded and warmed up: calling them now costs no start-up."""
        return self._ready

    def compiling(self) -> bool:
        """Whether a :meth:`prepare` is compiling the kernels right now (in any thread)."""
        return self._compiling

    def preparing(self) -> bool:
        """Whether a :meth:`prepare` is under way in some thread (importing numba, compiling,
        or loading from numba's cache): a caller that must not wait for it can tell."""
        return self._preparing > 0

    def said_compiling(self) -> str:
        """``compiling_message``, or where numba has no folder to cache the kernels in (the
        warning names why), the same saying that each run compiles."""
        from .numba_cache import usable_cache_dir

        if usable_cache_dir() is None:
            return self.compiling_message.removesuffix(FIRST_RUN) + NO_CACHE
        return self.compiling_message

    def prepare(self, status: StatusFn | None = None) -> ModuleType:
        """Make every kernel ready to run (see the module docstring) and return the module:
        from numba's cache, or compiled first on the first run on a machine, in which case
        ``status(compiling_message)`` is called before. Thread-safe: a second call waits for
        the first. Raises ``unavailable`` when the import fails; a warm-up's own error (a
        kernel that does not compile here) propagates, and the loader stays unready."""
        if self._ready:
            return self.load()
        self._preparing += 1
        try:
            return self._prepare(status)
        finally:
            self._preparing -= 1

    def _prepare(self, status: StatusFn | None) -> ModuleType:
        module = self.load()
        if self._ready:
            return module
        from .numba_cache import compile_in_child, forget_cached, is_cached, prune, usable_cache_dir

        kernels = self._kernels_of(module)
        said = self.said_compiling()
        if usable_cache_dir() is None:
            # Nothing is kept for the next run, and a child's compile would be lost to this
            # process too: it would only double the wait.
            compile_in_child = _no_child
        # subtle: asked before taking the lock, so that a call which then waits for another
        # thread's compile says so too (numba writes the index of the last kernel only at the
        # end of a compile).
        announced = not is_cached(*kernels)
        if announced:
            if status is not None:
                status(said)
            self._compiling = True
        with self._prepare_lock:
            if self._ready:
                return module
            self._compiling = not is_cached(*kernels)

            def needed() -> bool:  # another process may have compiled them meanwhile
                return not is_cached(*kernels)

            try:
                if self._compiling:
                    compile_in_child(self._child_code, needed)
                try:
                    self._warm_up(module)
                except Exception as exc:
                    if _cannot_write(exc):
                        self._in_memory(module, kernels, exc)
                    else:
                        # A cache file numba cannot read (cut short, zeroed, another pickle
                        # protocol) fails every load until it is gone (numba/numba#10434):
                        # the entries are removed and compiled again, once.
                        _log.warning(
                            "the %s kernels could not be loaded from numba's cache (%s: %s); "
                            "compiling them again",
                            self.name,
                            type(exc).__name__,
                            exc,
                        )
                        forget_cached(*kernels)
                        if status is not None and not announced:  # said once (a cache audit)
                            status(said)
                        self._compiling = True
                        compile_in_child(self._child_code, needed)
                        try:
                            self._warm_up(module)
                        except OSError as again:
                            self._in_memory(module, kernels, again)
                if self._compiling:
                    prune(*kernels)
            finally:
                self._compiling = False
            self._ready = True
        return module

    def _in_memory(self, module: ModuleType, kernels: tuple[Any, ...], exc: Exception) -> None:
        """numba's cache cannot be written (a full disk): the kernels compiled in memory,
        for this process only, and said once (a cache audit: a traceback, then the Python
        path, while the summary said "then cached")."""
        from .numba_cache import uncache

        _log.warning(
            "cannot write numba's cache (%s: %s); compiling the %s kernels for this run only",
            type(exc).__name__,
            exc,
            self.name,
        )
        uncache(*kernels)
        self._warm_up(module)

    def prepare_in_background(
        self, status: StatusFn | None = None, done: Callable[[bool], None] | None = None
    ) -> threading.Thread:
        """:meth:`prepare` in a daemon thread, then ``done(ready)``; a failure is left for
        the kernels' user to meet and report (``done(False)``), not printed from the thread."""

        def run() -> None:
            try:
                self.prepare(status)
            except Exception as exc:  # the user calling prepare() again meets it, and says it
                _log.debug("preparing the %s kernels in the background: %s", self.name, exc)
            if done is not None:
                done(self._ready)

        thread = threading.Thread(target=run, name=f"bpe-studio-{self.name}", daemon=True)
        thread.start()
        return thread

    def forget(self) -> None:
        """Take the kernels out of use as if they were not warmed up yet; the next
        :meth:`prepare` makes them ready again at once (numba keeps what it loaded). For tests,
        which each start as a fresh process would."""
        with self._prepare_lock:
            self._ready = False
