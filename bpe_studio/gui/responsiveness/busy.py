"""Background threads wait while the GUI thread updates or repaints the views.

What it does: the GUI thread marks its busy spells (:func:`gui_busy` around a repaint;
``trainer_hold.GuiTurn`` for a held frame, through :func:`busy_begin` / :func:`busy_end`); a
background thread calls :func:`wait_while_gui_busy` between two pieces of its work (the
compression curve's feeder between commands, a job between pieces) and waits while one lasts,
for ``GUI_HOLD_LIMIT`` at most.

Why: the GIL goes to each thread that asks for it within the switch interval, so one busy
background thread makes every one of a repaint's entries into Python wait for it, and the
repaint takes far longer in wall time than in CPU time (docs/responsiveness.md).
What it leaves out: holding the trainer itself (``trainer_hold``), which waits at its own merge
boundaries.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

# The longest a thread waits for the GUI thread at one point (the trainer at a merge boundary,
# a background thread between two pieces of its work), s.
GUI_HOLD_LIMIT = 0.1

# Set unless the GUI thread is updating or repainting the views (a held frame, a repaint of
# the window): background threads that cooperate wait for it between pieces of their work.
_gui_quiet = threading.Event()
_gui_quiet.set()
_gui_busy_depth = 0  # busy spells begun and not ended (GUI thread only)


def busy_begin() -> None:
    """On the GUI thread: a busy spell begins (nested spells are counted)."""
    global _gui_busy_depth
    _gui_busy_depth += 1
    _gui_quiet.clear()


def busy_end() -> None:
    """On the GUI thread: a busy spell ends; the last one ended, the waiting threads go on."""
    global _gui_busy_depth
    _gui_busy_depth -= 1
    if not _gui_busy_depth:
        _gui_quiet.set()


@contextmanager
def gui_busy() -> Iterator[None]:
    """On the GUI thread: background threads that call :func:`wait_while_gui_busy` wait while
    the block runs (a repaint of the window)."""
    busy_begin()
    try:
        yield
    finally:
        busy_end()


def wait_while_gui_busy(limit: float = GUI_HOLD_LIMIT) -> None:
    """In a background thread, between two pieces of its work: wait while the GUI thread
    updates or repaints the views (a held frame, :func:`gui_busy`), at most ``limit`` s."""
    if not _gui_quiet.is_set():
        _gui_quiet.wait(limit)
