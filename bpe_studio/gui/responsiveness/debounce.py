"""The single-shot timer every debounce in the GUI uses.

What it does: :func:`single_shot` makes a ``QTimer`` that fires ``slot`` once, ``interval_ms``
after its latest ``start()`` (each ``start()`` while it waits starts the wait over), owned by
``parent``.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


def single_shot(parent: QObject, interval_ms: int, slot: Callable[[], object]) -> QTimer:
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(interval_ms)
    timer.timeout.connect(slot)
    return timer
