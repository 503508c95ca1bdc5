"""Long work in the explain reports: progress and cancelling.

What it does: :class:`Cancelled` is what a report raises when the caller's cancel event is
set; :func:`checkpoint` is where the work looks at the event; :func:`gc_paused` keeps the
cyclic collector out of a report's way. A report takes
``progress(done, total)`` and ``cancel`` (a ``threading.Event``, or anything with
``is_set()``), so a viewer runs it in a background thread with a bar and a Cancel button.
What it leaves out: the reports themselves (``vocabulary``, ``usage``, ``overlap``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

Progress = Callable[[int, int], None]


class CancelEvent(Protocol):
    def is_set(self) -> bool: ...


class Cancelled(Exception):
    """The report was cancelled (its ``cancel`` event was set)."""


def checkpoint(cancel: CancelEvent | None) -> None:
    """Raise :class:`Cancelled` if ``cancel`` is set."""
    if cancel is not None and cancel.is_set():
        raise Cancelled("cancelled")


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (back on after, if it was on). A report
    makes hundreds of thousands of objects and no reference cycles, beside a tokenizer of
    millions of objects: the collector, set off again and again by the allocations, would
    walk all of them (a third of the time of a 100 MB usage with o200k)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
