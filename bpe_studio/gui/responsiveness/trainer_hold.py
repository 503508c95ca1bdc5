"""The GUI thread holds the trainer at its next merge boundary while it updates and repaints.

What it does: :class:`GuiTurn` is shared by the GUI thread and the worker: the worker waits at
a merge boundary while ``gui_free`` is clear (at most ``GUI_HOLD_LIMIT`` each time), and, after
its last merge, until ``end_shown`` says the window has shown it (at most ``END_SHOWN_LIMIT``);
:class:`HoldTrainerWhilePainting` is the window's mixin that takes such a hold for every repaint.
A hold is also a busy spell (``busy``): cooperating background threads wait meanwhile.

Why: a frame's and a repaint's many short calls into Python each wait for the GIL while the
trainer runs; held, the trainer lets them run at their own speed (docs/responsiveness.md).
What it leaves out: when frames come (``frame_budget``), the worker's loop (``worker``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from PySide6.QtCore import QEvent

from .busy import busy_begin, busy_end, gui_busy

# After its last merge, the longest the worker waits for the window to show that merge before
# it frees its working state (GuiTurn.end_shown), s.
END_SHOWN_LIMIT = 0.5


class GuiTurn:
    """Lets the GUI thread keep the trainer waiting at its next merge boundary.

    The worker's loop does ``if not turn.gui_free.is_set(): turn.gui_free.wait(GUI_HOLD_LIMIT)``
    after each merge; :meth:`hold` clears the event for the length of a block (nested holds
    are counted) so the block's many calls into Python never wait for the GIL.
    """

    def __init__(self) -> None:
        self.gui_free = threading.Event()
        self.gui_free.set()
        # Set by the GUI once the window has shown the run's last merge; the worker waits for
        # it (at most END_SHOWN_LIMIT) before it frees its working state.
        self.end_shown = threading.Event()
        self._holds = 0
        self._held_since = 0.0
        self.held_seconds = 0.0  # wall time the trainer was held (while active), in all
        self.active = False  # only while a worker runs: otherwise holding is pointless
        # Called on the GUI thread after each repaint of the window (StartWhenSettled).
        self.on_painted: Callable[[], None] | None = None

    @contextmanager
    def hold(self) -> Iterator[None]:
        held = self.begin_hold()
        try:
            yield
        finally:
            if held:
                self.end_hold()

    def begin_hold(self) -> bool:
        """Hold the trainer until :meth:`end_hold` (nested holds are counted); False, and
        nothing to end, when no worker runs."""
        if not self.active:
            return False
        if not self._holds:
            self._held_since = time.perf_counter()
            busy_begin()
        self._holds += 1
        self.gui_free.clear()
        return True

    def end_hold(self) -> None:
        self._holds -= 1
        if not self._holds:
            self.gui_free.set()
            self.held_seconds += time.perf_counter() - self._held_since
            busy_end()

    def painted(self) -> None:
        """The window has just repainted (called by :class:`HoldTrainerWhilePainting`)."""
        if self.on_painted is not None:
            self.on_painted()

    def release(self) -> None:
        """Stop holding for good (the run is stopping or over): the worker must not wait."""
        self.active = False
        self.gui_free.set()
        self.end_shown.set()


class HoldTrainerWhilePainting:
    """Mixin for the top-level window (list it before ``QMainWindow``): the whole window is
    painted while it handles ``UpdateRequest``, and that paint runs with the trainer held and
    the background work that cooperates waiting (:func:`gui_busy`).
    The class using it provides :meth:`gui_turn`."""

    def gui_turn(self) -> GuiTurn | None:  # overridden: the running session's turn
        return None

    def event(self, event: QEvent) -> bool:
        if event.type() != QEvent.Type.UpdateRequest:
            return super().event(event)  # type: ignore[misc]
        turn = self.gui_turn()
        if turn is not None:
            with turn.hold(), gui_busy():
                handled = super().event(event)  # type: ignore[misc]
            turn.painted()
            return handled
        with gui_busy():
            return super().event(event)  # type: ignore[misc]
