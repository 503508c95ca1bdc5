"""A guard against PySide6 builds that hand out borrowed references to ``None``/``True``/``False``.

What it does: some PySide6 wheels (seen with 6.12.0 on CPython 3.11) are compiled as if those
singletons were immortal, as they are from CPython 3.12 on (PEP 683): every void method call
(``setWindowTitle``, ``QPainter.drawLine`` ...) and every ``Signal.emit`` returns ``None`` or
``True`` without taking a reference, so the singleton's count drops by one per call. A few
thousand calls later CPython aborts with "Fatal Python error: none_dealloc" — pyqtgraph gets
there within seconds of plotting.

:func:`guard` probes for that leak with a handful of harmless calls and, only if it is there,
makes the singletons immortal the way CPython 3.12 does: it raises their reference count by
2**60, which no program lives long enough to use up. Nothing else changes; the singletons are
never freed in any case. What it leaves out: builds without the leak (left untouched) and debug
builds of CPython whose object header is laid out differently (detected and left untouched).
"""

from __future__ import annotations

import ctypes
import sys

_HEADROOM = 1 << 60
_SINGLETONS = (None, True, False, NotImplemented, Ellipsis)
_applied = False


def _leaks_singletons() -> bool:
    from PySide6.QtCore import QObject, QPoint, Signal

    class _Probe(QObject):
        ping = Signal()

    point, probe = QPoint(), _Probe()
    before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(16):
        point.setX(1)  # void: returns None
        probe.ping.emit()  # returns True
    after = sys.getrefcount(None), sys.getrefcount(True)
    # A correct build leaves both counts where they were; the faulty one loses one per call.
    return after[0] <= before[0] - 16 or after[1] <= before[1] - 16


def _refcount_cell(obj: object) -> ctypes.c_ssize_t | None:
    """The object's ``ob_refcnt`` field, if the header has the usual layout (checked)."""
    cell = ctypes.c_ssize_t.from_address(id(obj))
    # getrefcount counts its own argument: one more than the field holds.
    return cell if cell.value == sys.getrefcount(obj) - 1 else None


def guard() -> bool:
    """Apply the fix if this PySide6 build needs it; return whether it was applied. Idempotent."""
    global _applied
    if _applied or sys.version_info >= (3, 12):
        return _applied
    if not _leaks_singletons():
        return False
    cells = [_refcount_cell(obj) for obj in _SINGLETONS]
    if any(cell is None for cell in cells):
        return False
    for cell in cells:
        cell.value += _HEADROOM
    _applied = True
    return True
