"""Loading the compiled encoder's kernels: once per process, compiled once per machine.

What it does: :func:`prepare` imports numba and the kernels (``encode_kernel``) and makes them
ready to run, with the compiled scanners' (``pretokenization.scan_load``): loaded from
numba's on-disk cache (``io.numba_cache``: the user's cache folder), or on the first run
compiled in a child process, after ``status(COMPILING)``, so that numba's compiler (largely
Python, holding the GIL for seconds) never stalls a thread of this process that draws a
window. :func:`prepare_in_background` does it in a daemon thread;
:func:`kernels` gives the module once it is ready (never loading it), so a caller that must not
wait (the app's GUI thread, a short text) takes the Python path meanwhile. Where numba is
missing or fails to import, :func:`prepare` returns False and every text takes the Python
path (``BPE_STUDIO_ENCODER=python`` asks for that too; ``=compiled`` loads the kernels at the
first text of any length: :func:`eager`). The loading itself is ``io.kernel_loader``'s
(:data:`LOADER`), as for the scanners' and the merge engine's kernels. What it leaves out:
when to prepare (``encoder``, ``encode_file``) and the kernels themselves.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from types import ModuleType

from ...io.kernel_loader import KernelLoader

StatusFn = Callable[[str], None]
COMPILING = "compiling the encoder (first run only)"
# The environment variable that turns the compiled encoder off ("python") or loads it for
# the first text whatever its length ("compiled").
ENV = "BPE_STUDIO_ENCODER"

_log = logging.getLogger(__name__)
# prepare() calls under way in any thread, the import of numba included (an int updated
# under the GIL: a stale read makes one caller wait, or take the Python path once more).
_preparing = 0
# _lock guards the one background thread; the loading itself is LOADER's (below).
_lock = threading.Lock()
_background: threading.Thread | None = None
# Why the kernels cannot be used although they imported: the scanners' import failed, or a
# kernel does not compile here.
_failure: str | None = None


# Seconds this process spent encoding on the Python path for want of the kernels, and what
# it takes to load them from numba's cache (about 0.3 s, up to 0.5 on a busy machine). Once
# the first reaches the second, ``encoder`` loads them: as in renting skis until the rent
# paid equals the price, a process never spends more than about twice what the best choice
# made knowing its future texts would. A loop over documents of a few kilobytes each, which
# took the Python path for ever (2.4-17x slower than the compiled one), gets the kernels
# after its first 0.4 s, sooner for Chinese, whose Python path is the slowest.
LOAD_SECONDS = 0.4
_python_seconds = 0.0


def tally_python_path(seconds: float) -> float:
    """Count ``seconds`` more spent on the Python path; the process's total."""
    global _python_seconds
    # subtle: not locked; threads adding at once may lose a little of the count, which only
    # delays the load.
    _python_seconds += seconds
    return _python_seconds


def rent_paid() -> bool:
    """Whether the Python path has cost this process as much as loading the kernels."""
    return _python_seconds >= LOAD_SECONDS


def _mode() -> str:
    return os.environ.get(ENV, "").strip().lower()


def enabled() -> bool:
    """Whether the compiled encoder may be used at all (not turned off, numba importable as
    far as is known)."""
    return _mode() != "python" and failure() is None


def eager() -> bool:
    """Whether the kernels are loaded for the first text whatever its length."""
    return _mode() == "compiled"


def kernels() -> ModuleType | None:
    """The kernel module if it is ready to run now (the scanners' too), else None (nothing
    is loaded here)."""
    return LOADER.imported() if LOADER.ready() and enabled() else None


def compiling() -> bool:
    """Whether a :func:`prepare` is compiling the kernels (or the scanners') right now, in
    any thread."""
    from ...pretokenization import scan_load

    return LOADER.compiling() or scan_load.compiling()


def preparing() -> bool:
    """Whether a :func:`prepare` is under way in some thread (importing numba, compiling or
    loading from the cache, the scanners' or the encoder's): a caller that must not wait
    takes the Python path meanwhile."""
    from ...pretokenization import scan_load

    return _preparing > 0 or LOADER.preparing() or scan_load.preparing()


def failure() -> str | None:
    """Why the kernels could not be imported or made ready, if they could not."""
    return _failure or LOADER.failure


def _import() -> ModuleType:
    from . import encode_kernel

    return encode_kernel


def prepare(status: StatusFn | None = None) -> bool:
    """Make the kernels ready, the scanners' first (see the module docstring); whether they
    are. Thread-safe: a second call waits for the first."""
    global _preparing
    if LOADER.ready() or not enabled():
        return LOADER.ready() and enabled()
    _preparing += 1
    try:
        return _prepare(status)
    finally:
        _preparing -= 1


def _prepare(status: StatusFn | None) -> bool:
    global _failure
    if LOADER.imported() is None:
        _log.info("the compiled encoder is unavailable (%s)", LOADER.failure)
        return False
    if not _scanners_ready(status):
        return False

    def announce(message: str) -> None:
        _log.info(message)
        if status is not None:
            status(message)

    try:
        LOADER.prepare(announce)
    except Exception as exc:  # a kernel that does not compile here: the Python path
        _failure = f"{type(exc).__name__}: {exc}"
        _log.warning("the compiled encoder failed to compile (%s)", _failure)
        return False
    return True


def _scanners_ready(status: StatusFn | None) -> bool:
    """Prepare the compiled scanners (``scan_load``); whether they could be."""
    global _failure
    from ...pretokenization import scan_load

    try:
        scan_load.prepare(status)
    except ImportError as exc:  # scan_load.ScannerUnavailable: numba missing or broken
        _failure = str(exc)
        return False
    return True


def forget() -> None:
    """Take the compiled path out of use as if the kernels were not loaded yet; the next
    :func:`prepare` makes them ready again at once (numba keeps what it loaded). For tests,
    which each start as a fresh process would."""
    global _python_seconds
    _python_seconds = 0.0
    LOADER.forget()


def prepare_in_background(
    status: StatusFn | None = None, done: Callable[[bool], None] | None = None
) -> threading.Thread:
    """:func:`prepare` in a daemon thread, then ``done(ready)``; one thread per process (a
    second call gets the first's, and its callbacks are not called)."""
    global _background

    def run() -> None:
        ready = prepare(status)
        if done is not None:
            done(ready)

    with _lock:
        if _background is None:
            _background = threading.Thread(target=run, name="bpe-studio-encoder", daemon=True)
            _background.start()
        return _background


# What a child process runs to compile the kernels into numba's cache (``compile_in_child``).
_CHILD = (
    "from bpe_studio.core.encode.merging import kernel_start as k, encode_kernel as m; k.warm_up(m)"
)


def warm_up(module: ModuleType) -> None:
    """Call every kernel once with the argument types encoding uses: numba loads (or
    compiles) a kernel on its first call."""
    import numpy as np

    from .compiled import CompiledMerger, RankArrays

    lefts = np.array([97], np.int64)
    rights = np.array([98], np.int64)
    made = np.array([256], np.int64)
    byte_ids = np.arange(256, dtype=np.int64)
    rank = RankArrays.of_lists(module, lefts, rights, made, byte_ids)
    # As encoder.codepoints makes them (a read-only array: numba compiles a kernel per array
    # type), written out so that this module, which the encoder imports, imports nothing back.
    cp = np.frombuffer("ab".encode("utf-32-le"), dtype=np.uint32)
    merger = CompiledMerger(module, rank, byte_ids, whole={b"ab": 256, b"\xc3\xa9": 257})
    merger.encode(cp, (np.array([0]), np.array([2]), np.array([-1])), record=True)
    sizes = np.ones(257, np.int64)
    sizes[256] = 2
    merger.spans(cp, (np.array([0]), np.array([2]), np.array([-1])), sizes)
    ids = np.array([97, 98, 97], np.int64)
    assert module.merge_ids(ids, rank.table, merger.limit) == 2
    bigger = merger.cache.grown(module, entries=True)
    assert bigger.entries == merger.cache.entries
    assert merger.short.made_room(module).entries == merger.short.entries


class EncoderUnavailable(ImportError):
    """The compiled encoder's kernels failed to import (``prepare`` then returns False)."""


LOADER = KernelLoader(
    name="encoder",
    importer=_import,
    kernels_of=lambda module: module.KERNELS,
    warm_up=warm_up,
    child_code=_CHILD,
    compiling_message=COMPILING,
    unavailable=EncoderUnavailable,
    explain=lambda reason: f"the compiled encoder needs numba, which failed to import ({reason})",
)
