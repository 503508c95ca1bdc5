"""Freed memory: kept in a pool worker for its next chunk (glibc's ``mallopt``), given back to
the system by the app once a run or a tokenizer is let go (glibc's malloc_trim(3)).

What it does: a worker encodes or counts chunk after chunk, and each chunk allocates and frees
the same few arrays of megabytes (code points, pieces, ids). With glibc's defaults the freed
blocks went back to the system (unmapped, or trimmed from the top of the heap), and the next
chunk faulted fresh zeroed pages in again: on a virtual machine that hands freed pages back to
its host (see ``huge_pages``) each such fault waits for the host. :func:`keep_freed_memory`
sets glibc's thresholds so that blocks up to ``MMAP_THRESHOLD`` come from the heap and freed
memory stays in it (up to ``TRIM_THRESHOLD`` at its top): two workers encoding 100 MB fault
33,000-36,000 pages in instead of 88,000-104,000, and the system CPU time of their chunks
halves (docs/encoding.md, "Freed memory kept in the workers"). The peak is the same: the
memory is reused, not added to.
:func:`give_back_freed_memory` returns the freed memory glibc keeps in its heaps: the app
calls it when a run's thread has ended or a loaded tokenizer replaced the last, since without
it a long session grew with every train-and-load cycle (memory free to Python and to glibc,
never returned to the system).
What it leaves out: the command's own process (its memory goes back as it always did), and
other C libraries (macOS, Windows, musl): nothing changes there.
"""

from __future__ import annotations

import ctypes
import sys

# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# glibc's largest mmap threshold on a 64-bit system (DEFAULT_MMAP_THRESHOLD_MAX): a chunk's
# largest arrays are below it (the code points of training's 4 MB chunks: 16 MB at most).
MMAP_THRESHOLD = 32 * 1024 * 1024
TRIM_THRESHOLD = 256 * 1024 * 1024


def _glibc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    # subtle: only glibc has gnu_get_libc_version; musl's mallopt ignores its arguments.
    return libc if hasattr(libc, "gnu_get_libc_version") else None


def give_back_freed_memory() -> bool:
    """Return the memory glibc holds freed in this process to the system (malloc_trim(3));
    whether it did (False elsewhere). It walks every heap, so it is called only where a run or
    a tokenizer has just been let go."""
    libc = _glibc()
    trim = getattr(libc, "malloc_trim", None)
    if trim is None:
        return False
    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    trim(0)
    return True


def keep_freed_memory() -> bool:
    """In this process (a pool worker), keep freed memory for reuse; whether glibc took the
    settings (False elsewhere, where nothing is changed)."""
    libc = _glibc()
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success; the mmap threshold first, as setting it also stops glibc
    # from moving the trim threshold.
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
