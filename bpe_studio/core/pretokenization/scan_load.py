"""Loading the compiled scanners' kernels: numba imported on first use, the machine code read
from numba's cache, or compiled once per machine (announced, and in a child process).

What it does: :func:`load_kernels` imports ``scan_kernels`` (and so numba) once;
:func:`prepare` makes every kernel ready to run (loaded from the cache, or compiled first,
saying ``status(COMPILING)`` before; seconds, the first time only); :func:`ready` tells whether
that is done, so that code on a GUI thread can use the kernels only when it costs nothing
(it never loads or compiles them itself); :func:`prepare_in_background` does it in a thread.
The class table (``scan_tables``) is loaded by :func:`prepare` too. The loading itself is
``io.kernel_loader``'s (:data:`LOADER`), as for the merge engine's and the encoder's kernels.
What it leaves out: the kernels (``scan_kernels``) and their Python API (``scanner``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ..io.kernel_loader import KernelLoader

StatusFn = Callable[[str], None]
COMPILING = "compiling the pre-tokenizer (first run only)"


class ScannerUnavailable(ImportError):
    """The compiled scanners cannot run here: numba (or the kernels) failed to import."""


def _import() -> ModuleType:
    from . import count_kernels, scan_kernels

    del count_kernels  # imported with the scanning kernels; counting_kernels() gives it
    return scan_kernels


def _kernels_of(scanning: ModuleType) -> tuple[Any, ...]:
    from . import count_kernels

    return (*scanning.KERNELS, *count_kernels.KERNELS)


def load_kernels() -> ModuleType:
    """The scanning kernels' module (``scan_kernels``), imported once with the counting ones
    (and numba). Raises :class:`ScannerUnavailable` naming the import failure, every time it
    is asked after one."""
    return LOADER.load()


def counting_kernels() -> ModuleType:
    """The counting kernels' module (``count_kernels``); see :func:`load_kernels`."""
    load_kernels()
    from . import count_kernels

    return count_kernels


def ready() -> bool:
    """Whether the kernels are loaded and compiled: calling them now costs no start-up."""
    return LOADER.ready()


def preparing() -> bool:
    """Whether some thread is making the scanners ready now (``KernelLoader.preparing``)."""
    return LOADER.preparing()


def compiling() -> bool:
    """Whether a :func:`prepare` is compiling the kernels right now (in any thread)."""
    return LOADER.compiling()


def prepare(status: StatusFn | None = None) -> None:
    """Load the kernels and the class table and make each kernel ready to run: from numba's
    cache, or compiled on the first run (seconds, in a child process), in which case
    ``status(COMPILING)`` is called first. Thread-safe; a second call waits for the first."""
    LOADER.prepare(status)


def prepare_in_background(status: StatusFn | None = None) -> threading.Thread:
    """:func:`prepare` in a daemon thread; an import failure is left for the user of the
    kernels to meet and report."""
    return LOADER.prepare_in_background(status)


_CHILD = "from bpe_studio.core.pretokenization import scan_load; scan_load.warm_up()"


def warm_up(_module: ModuleType | None = None) -> None:
    """Call every kernel once with the argument types the scanners and the tally use (numba
    loads, or compiles, a kernel for each set of argument types on its first call)."""
    import numpy as np

    from .scan_tables import kernel_table

    scanning, counting = load_kernels(), counting_kernels()
    table = kernel_table()
    # As scanner.codepoints makes them (a read-only array: numba compiles a kernel per array
    # type), written out so that this module, which scanner imports, imports nothing back.
    points = np.frombuffer("Hello world's 123\n".encode("utf-32-le"), dtype=np.uint32)
    kinds = np.arange(1, dtype=np.int64)
    bounds = np.array([0], np.int64), np.array([len(points)], np.int64)
    ends = scanning.scan(kinds, points, table, *bounds)
    scanning.separated(points, 0, ends, 0x10FFFF)
    first, lens, counts = counting.count_pieces(kinds, points, table, *bounds)
    tokens, _ = counting.packed_counts(points, first, lens)
    state = empty_tally()
    # Read-only, as tally.Tally.add reads them from the workers' bytes (np.frombuffer).
    tokens = np.frombuffer(tokens.tobytes(), np.uint8)
    counts = np.frombuffer(counts.tobytes(), np.int64)
    arena, offs, slots, size, _ = counting.tally_add(*state, tokens, counts)
    counting.tally_counts(slots, size)
    counting.tally_packed(arena, offs, size)


def empty_tally() -> tuple[Any, ...]:
    """The arrays of an empty tally (``count_kernels.tally_add``: its arena, where its
    strings start, its index) and its size, 0."""
    import numpy as np

    keys = 1024
    return (
        np.empty(16 * keys, np.uint8),
        np.zeros(keys + 1, np.int64),
        np.zeros(8 * keys, np.int64),
        0,
    )


LOADER = KernelLoader(
    name="scanners",
    importer=_import,
    kernels_of=_kernels_of,
    warm_up=warm_up,
    child_code=_CHILD,
    compiling_message=COMPILING,
    unavailable=ScannerUnavailable,
    explain=lambda reason: (
        f"the compiled pre-tokenizer needs numba, which failed to import ({reason})"
    ),
)
