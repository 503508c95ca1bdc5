"""The Unicode class table the compiled scanners read: one entry per code point, derived from
the installed ``regex`` module, so the scanners agree with it by construction.

What it does: :func:`class_table` gives a ``numpy.uint16`` array of 0x110000 entries
(:func:`kernel_table`, the same padded for the kernels). Bits 0-7 say which of the classes
the patterns use hold the code point (:data:`CLASSES`, tested with ``regex`` itself over
every code point, lone surrogates included); bits 8-11 say which letter of the
case-insensitive contractions (``(?i:'s|'t|'re|'ve|'m|'ll|'d)``) it matches under
``regex``'s case folding (1 for s ... 8 for r: :data:`FOLDED`; "ſ", U+017F, is an s).
The table is built once per user and ``regex`` version (a fraction of a second) and kept in
the user's cache folder (``user_cache``), sealed with a digest (``io.sealed``), then read back
(a few milliseconds); a file that fails its digest is built again.
What it leaves out: the patterns (``scan_kernels``), which spellings they are
(``scan_patterns``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

import regex

from ..io.atomic import atomic_write_bytes
from ..io.sealed import seal, unseal
from ..io.user_cache import user_cache_dir
from .names import CAPITALS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Table = npt.NDArray[np.uint16]

CODE_POINTS = 0x110000
# The kernels' table (kernel_table) has this many entries, a power of two past the last code
# point, so that they index it with a mask and no bounds check (scan_kernels._cls).
TABLE_SIZE = 1 << 21
# The classes, as ``regex`` spells them, in bit order (the kernels' L, N, S, ... constants).
CLASSES = (
    r"\p{L}",
    r"\p{N}",
    r"\s",
    CAPITALS,  # o200k: a word's leading capitals
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",  # o200k: a word's lower-case rest
    r"\p{M}",
    r"\p{P}",
    r"\p{S}",
)
FOLDED = "sdmtlver"  # the contractions' letters; bits 8-11 hold 1 + the index here
_FOLD_SHIFT = 8
# Bump when the layout above changes: the cached file name carries it. 2: a sealed file
# (``io.sealed``: a table zeroed after a crash was read as a table, and gave other ids). 3:
# U+0295 out of the capitals (``names.NOT_CAPITALS``).
_FORMAT = 3

_lock = threading.Lock()
_table: Table | None = None
_padded: Table | None = None


def build_table() -> Table:
    """The table computed from ``regex`` (what :func:`class_table` caches)."""
    import numpy as np

    # subtle: one string of every code point, surrogates included ("regex" takes them, as a
    # Python string may hold one); each class is found as runs, one slice assignment per run.
    every = "".join(map(chr, range(CODE_POINTS)))
    table = np.zeros(CODE_POINTS, np.uint16)
    for bit, cls in enumerate(CLASSES):
        for m in regex.finditer(f"{cls}+", every):
            table[m.start() : m.end()] |= 1 << bit
    for index, letter in enumerate(FOLDED):
        for m in regex.finditer(f"(?i:{letter})", every):
            table[m.start()] |= (index + 1) << _FOLD_SHIFT
    return table


def _cache_path() -> Path | None:
    folder = user_cache_dir("scan")
    version = regex.__version__.replace("/", "_")
    return None if folder is None else folder / f"classes-v{_FORMAT}-regex-{version}.bin"


def class_table() -> Table:
    """The table for the installed ``regex``: read from the user's cache, else built and
    cached (a cache that cannot be written or read is only a slower start)."""
    global _table
    import numpy as np

    with _lock:
        if _table is not None:
            return _table
        path = _cache_path()
        table = None
        try:
            if path is not None:
                payload = unseal(path.read_bytes(), path.name)
                if payload is not None and len(payload) == 2 * CODE_POINTS:
                    table = np.frombuffer(payload, dtype="<u2").astype(np.uint16)
        except OSError:
            pass
        if table is None:
            table = build_table()
            try:
                if path is not None:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write_bytes(path, seal(table.astype("<u2").tobytes(), path.name))
            except OSError:
                pass
        _table = table
        return table


def kernel_table() -> Table:
    """:func:`class_table` padded with zeros (no class) to :data:`TABLE_SIZE` entries, as the
    kernels read it: what they look up for a value past the last code point (from no str)
    stays in bounds and in no class."""
    global _padded
    if _padded is not None:
        # subtle: set once and never changed, so read without the lock: each scan of a
        # short text asks for it, and the lock and the call below cost a microsecond.
        return _padded
    import numpy as np

    table = class_table()
    with _lock:
        if _padded is None:
            padded = np.zeros(TABLE_SIZE, np.uint16)
            padded[: len(table)] = table
            _padded = padded
        return _padded
