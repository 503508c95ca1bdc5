"""Long work in the explain reports: progress and cancelling.

What it does: :class:`Cancelled` is what a report raises when the caller's cancel event is
set; :func:`checkpoint` is where the work looks at the event; :func:`gc_paused` keeps the
cyclic collector out of a report's way. A report takes
``progress(done, total)`` and ``cancel`` (a ``threading.Event``, or anything with
``is_set()``), so a viewer runs it in a background thread with a bar and a Cancel button.
What it leaves out: the reports themselves (``vocabulary``, ``usage``, ``overlap``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ..io.gc_pause import gc_paused as gc_paused  # the reports pause the collector with it

Progress = Callable[[int, int], None]


class CancelEvent(Protocol):
    def is_set(self) -> bool: ...


class Cancelled(Exception):
    """The report was cancelled (its ``cancel`` event was set)."""


def checkpoint(cancel: CancelEvent | None) -> None:
    """Raise :class:`Cancelled` if ``cancel`` is set."""
    if cancel is not None and cancel.is_set():
        raise Cancelled("cancelled")
