"""How often the views get a frame while a run trains, and how often the editor's tokenizer is
rebuilt.

What it does: the session drains the worker's merges every ``FLUSH_INTERVAL_MS``; a drain is
also a frame (all views update and the window repaints once) when :class:`FrameBudget` allows
one. A frame holds the trainer (``trainer_hold``), so frames are spaced by what the last one
cost. The editor re-tokenizes with the merges so far at most every ``EDITOR_REFRESH_MERGES``
merges and ``EDITOR_REFRESH_SECONDS`` (each rebuild is a third thread contending for the GIL);
at a step chosen away from live, every ``EDITOR_REFRESH_SECONDS``.
What it leaves out: draining and publishing (``session``, ``app_model``), the rebuild itself
(``controller``).
"""

from __future__ import annotations

import time

from .trainer_hold import GuiTurn

FLUSH_INTERVAL_MS = 25
# A frame holds the trainer while the views update and the window repaints: frames are spaced
# so that they hold it for at most FRAME_BUDGET of the wall time, and come every
# MIN_FRAME_SECONDS at most and every MAX_FRAME_SECONDS at least.
FRAME_BUDGET = 0.2
MIN_FRAME_SECONDS = 0.1
MAX_FRAME_SECONDS = 0.5
EDITOR_REFRESH_MERGES = 400
EDITOR_REFRESH_SECONDS = 1.0


class FrameBudget:
    """When the next frame may come: spaced so that the trainer is held for at most
    ``FRAME_BUDGET`` of the wall time, between ``MIN_FRAME_SECONDS`` and ``MAX_FRAME_SECONDS``
    apart.

    subtle: what a frame costs is measured, not assumed: the time the trainer was held since
    the previous frame began (that frame's update of the views and every repaint after it,
    ``GuiTurn.held_seconds``). It varies with the window's size, the views shown, the step
    and the machine's load; a fixed rate either holds a fast trainer for a large share of
    its time or updates a slow one rarely (docs/responsiveness.md)."""

    def __init__(self, turn: GuiTurn) -> None:
        self._turn = turn
        self._last = -1e9  # when the last frame began (perf_counter)
        self._held_at_last = 0.0
        self.interval = MIN_FRAME_SECONDS
        self.frames = 0

    def due(self) -> bool:
        return time.perf_counter() - self._last >= self.interval

    def postpone(self) -> None:
        """The next frame comes one interval from now (not at once, when one is due)."""
        self._last = time.perf_counter()

    def begin(self) -> None:
        """A frame begins now: the previous one's cost sets the spacing of the next."""
        now = time.perf_counter()
        held = self._turn.held_seconds
        if self.frames:
            cost = held - self._held_at_last
            self.interval = min(max(cost / FRAME_BUDGET, MIN_FRAME_SECONDS), MAX_FRAME_SECONDS)
        self._last, self._held_at_last = now, held
        self.frames += 1
