"""Replaying a run: the step animated from 0 to the newest merge at a chosen pace.

What it does: :class:`Replay` owns one ``QTimer`` on the GUI thread that ticks at most
:data:`FRAMES_PER_SECOND` times a second and, on each tick, moves the hub's step forward by as
many merges as the pace allows for the time since the last tick (several merges per frame on a
long run). :class:`Pace` is either merges per second or "the whole run in so many seconds".
It pauses, resumes where the step is, skips to the end (back to live), and stops on a new run.
A step chosen elsewhere while it plays (Enter on a merge, the lab's slider: anything that
moves the hub's step but the replay) pauses it there, as the timeline's own controls do:
else its next frame put the step back where the replay had got to. So does a merge picked in
the list (``AppModel.pause_replay``), which the replay would scroll away; live chosen
elsewhere (the lab's Live button) ends it.
What it leaves out: buttons (``views/timeline``), and what the views do with each step.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from ..model.app_model import AppModel

FRAMES_PER_SECOND = 30


@dataclass(frozen=True, slots=True)
class Pace:
    """How fast a replay goes: ``per_second`` merges a second, or the whole run in
    ``whole_run_seconds`` (the merges published so far: while the run trains, the rate
    grows with it)."""

    per_second: float | None = None
    whole_run_seconds: float | None = None

    def __post_init__(self) -> None:
        if (self.per_second is None) == (self.whole_run_seconds is None):
            raise ValueError("a pace is merges per second or a whole-run time, one of the two")
        value = self.per_second if self.per_second is not None else self.whole_run_seconds
        if value is None or not value > 0:
            raise ValueError(f"a replay pace must be positive, got {value!r}")

    def rate(self, merges: int) -> float:
        """Merges per second for a run of ``merges`` merges."""
        if self.per_second is not None:
            return self.per_second
        assert self.whole_run_seconds is not None
        return max(merges, 1) / self.whole_run_seconds

    @property
    def label(self) -> str:
        if self.per_second is not None:
            return f"{self.per_second:,.0f} merges/s"
        return f"whole run in {self.whole_run_seconds:g} s"


PACES = (
    Pace(whole_run_seconds=10),
    Pace(whole_run_seconds=20),
    Pace(whole_run_seconds=60),
    Pace(per_second=10),
    Pace(per_second=100),
    Pace(per_second=1000),
)
DEMO_PACE = Pace(whole_run_seconds=20)


class Replay(QObject):
    """Animates ``hub.state.step`` from 0 to ``hub.published``; ``running`` while the timer
    ticks. Every change of ``running`` is also written to the hub (``set_replaying``)."""

    running_changed = Signal(bool)
    finished = Signal()  # reached the end, or skipped to it

    def __init__(self, hub: AppModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.pace = DEMO_PACE
        self._rate = 0.0  # merges per second of the replay under way
        self._position = 0.0  # fractional step: a slow pace moves less than one merge a frame
        self._last = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(round(1000 / FRAMES_PER_SECOND))
        self._timer.timeout.connect(self._tick)
        self._moving = False  # the step change under way is the replay's own
        hub.reset.connect(self.stop)
        hub.step_changed.connect(self._step_changed)
        hub.live_changed.connect(self._live_changed)
        hub.replay_pause_asked.connect(self.pause)

    @property
    def running(self) -> bool:
        return self._timer.isActive()

    @property
    def paused(self) -> bool:
        """Started, not at the end, and not ticking: Play resumes from the step shown."""
        return self.hub.state.replaying and not self.running

    def start(self, pace: Pace | None = None) -> None:
        """Replay from step 0 (or, when paused, go on from the step shown)."""
        if pace is not None:
            self.pace = pace
        hub = self.hub
        if hub.published == 0:
            return
        if self.paused:
            self._position = float(hub.state.step)
        else:
            self._position = 0.0
            self._select(0)
        self._rate = self.pace.rate(hub.published)
        self._last = time.perf_counter()
        self._timer.start()
        hub.set_replaying(True)
        self.running_changed.emit(True)

    def set_pace(self, pace: Pace) -> None:
        """Change the pace, also of a replay under way."""
        self.pace = pace
        if self.hub.state.replaying:
            self._rate = pace.rate(self.hub.published)

    def pause(self) -> None:
        if self.running:
            self._timer.stop()
            self.hub.set_replaying(True, paused=True)
            self.running_changed.emit(False)

    def skip(self) -> None:
        """Jump to the end: the newest merge, live again."""
        was_running = self.running
        self._timer.stop()
        self._own(self.hub.follow_live)
        self._end(was_running)

    def stop(self) -> None:
        """End the replay where it is (a new run, the window closing)."""
        was_running = self.running
        self._timer.stop()
        if self.hub.state.replaying or was_running:
            self.hub.set_replaying(False)
            if was_running:
                self.running_changed.emit(False)

    @Slot()
    def _tick(self) -> None:
        now = time.perf_counter()
        hub = self.hub
        end = hub.published
        if self.pace.whole_run_seconds is not None:
            # A replay started while the run trains keeps its promise as merges arrive.
            self._rate = self.pace.rate(end)
        # subtle: a frame that comes late (the GUI was busy) moves further, so the replay's
        # length follows the pace, not the frame rate.
        self._position += self._rate * (now - self._last)
        self._last = now
        k = min(int(self._position), end)
        self._select(k)
        if k >= end:
            self._timer.stop()
            self._own(hub.follow_live)
            self._end(True)

    def _select(self, k: int) -> None:
        self._own(lambda: self.hub.select_step(k))

    def _own(self, move: Callable[[], None]) -> None:
        """``move`` the hub's step as the replay's own doing (not a step chosen elsewhere)."""
        self._moving = True
        try:
            move()
        finally:
            self._moving = False

    @Slot(int)
    def _step_changed(self, step: int) -> None:
        if self.running and not self._moving:
            self.pause()

    @Slot(bool)
    def _live_changed(self, live: bool) -> None:
        # Live chosen elsewhere (the lab's Live button) ends the replay, as the timeline's
        # does: paused instead, it said "Replay paused" over a step following live.
        if live and not self._moving and self.hub.state.replaying:
            self.stop()

    def _end(self, was_running: bool) -> None:
        self.hub.set_replaying(False)
        if was_running:
            self.running_changed.emit(False)
        self.finished.emit()
