"""A pool worker's freed memory kept for its next chunk (glibc's ``mallopt``).

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
What it leaves out: the app's and the command's own process (their memory goes back as it
always did), and other C libraries (macOS, Windows, musl): nothing changes there.
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


def keep_freed_memory() -> bool:
    """In this process (a pool worker), keep freed memory for reuse; whether glibc took the
    settings (False elsewhere, where nothing is changed)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    # subtle: only glibc has gnu_get_libc_version; musl's mallopt ignores its arguments.
    if not hasattr(libc, "gnu_get_libc_version"):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success; the mmap threshold first, as setting it also stops glibc
    # from moving the trim threshold.
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
