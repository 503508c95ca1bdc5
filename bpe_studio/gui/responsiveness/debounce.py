"""The single-shot timer every debounce in the GUI uses.

What it does: :func:`single_shot` makes a ``QTimer`` that fires ``slot`` once, ``interval_ms``
(times :data:`time_scale`) after its latest ``start()`` (each ``start()`` while it waits starts
the wait over), owned by ``parent``.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

# Every debounce's wait is multiplied by this when its timer is made. The waits are paced for
# a person typing, scrubbing or clicking through choices; the app's tests drive it as fast as
# it settles and shorten them (tests/gui/conftest.py), keeping every wait's order.
time_scale = 1.0


def single_shot(parent: QObject, interval_ms: int, slot: Callable[[], object]) -> QTimer:
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(round(interval_ms * time_scale))
    timer.timeout.connect(slot)
    return timer
