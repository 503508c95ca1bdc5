"""Background jobs for the GUI: one worker thread, numbered requests, the latest one wins.

What it does: :class:`LatestJob` runs a callable in its own one-thread pool. Every
:meth:`~LatestJob.submit` numbers the request and makes every earlier one stale: a stale job
is not started, may stop between pieces of its work (the callable is handed an ``is_stale``
function to ask, which also waits while the GUI thread repaints:
``responsiveness.busy.wait_while_gui_busy``), and its result is dropped. The result of the
latest request arrives on the GUI thread as ``done`` (or ``failed`` with one readable
line). A request submitted with ``throttle=True`` instead lets the job under way finish and
deliver, then starts (the newest such request by then): requests that come faster than jobs
end (the step of a replay, a drag) show the newest result that could be finished, one after
another, where superseding each would show none until they stop. :meth:`~LatestJob.shutdown`
abandons everything and waits for the thread. The tokenizer loader and the editor's span
service both run on it.
What it leaves out: debouncing (the caller's timer) and what the results mean.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, QThreadPool, Signal, Slot

from ..model.errors import describe_job_error
from ..responsiveness.busy import wait_while_gui_busy
from ..responsiveness.gil_switches import short_switches

# A job: called in the worker thread with ``is_stale``; returns its result, or None when it
# gave up because it became stale.
Job = Callable[[Callable[[], bool]], Any]

_RUNNERS: weakref.WeakSet[LatestJob] = weakref.WeakSet()


def busy_job_threads() -> int:
    """Worker threads of live runners still running a job (tests assert 0 afterwards)."""
    return sum(runner.active_threads() for runner in list(_RUNNERS))


class _Run:
    """One request, handed to the pool as a plain callable (its ``run``).

    subtle: not a ``QRunnable`` subclass. PySide's ``start(QRunnable)`` keeps a reference to
    the runnable in the pool's Python wrapper, and a run that ended quickly while the GUI
    thread turned its event loop was never let go: one more each time, for good. The
    callable overload wraps it in a runnable of its own that drops it once run."""

    def __init__(self, runner: LatestJob, number: int, job: Job) -> None:
        self._runner, self._number = runner, number
        self._job: Job | None = job

    def run(self) -> None:
        # subtle: the run lets go of its job before running it, so that nothing that keeps
        # the run (as the pool's wrapper once did) keeps the job's closure: a step's
        # tokenizers, an ids array.
        runner, number, job = self._runner, self._number, self._job
        self._job = None

        def is_stale() -> bool:
            # Between two pieces of the job: the window's repaint goes first (busy).
            wait_while_gui_busy()
            return runner.latest != number

        if is_stale() or job is None:
            return
        try:
            with short_switches():  # the GUI thread gets the GIL back soon (gil_switches)
                result = job(is_stale)
            del job
        except BaseException as error:  # every failure must reach the user, not kill the thread
            # (a Rust panic in tokenizers is a BaseException; an interrupt or exit is not a
            # failure of the job's)
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            self._report(number, False, runner.describe(error))
            return
        if not is_stale():
            # Also a None result: a throttled request waits for this job's end to start.
            self._report(number, True, result)

    def _report(self, number: int, ok: bool, result: object) -> None:
        try:
            self._runner._finished.emit(number, ok, result)
        except RuntimeError:
            # subtle: the runner's owner was deleted while this job ran (a view dropped
            # without shutdown, its pool waiting for this thread): no one is left to tell.
            # Emitting raised "Signal source has been deleted" in this thread.
            pass


class LatestJob(QObject):
    """Runs submitted jobs one at a time off the GUI thread; only the latest one counts."""

    _finished = Signal(int, bool, object)  # from the worker: number, ok, result or message
    done = Signal(object)  # the latest job's result (GUI thread)
    failed = Signal(str)  # the latest job raised: one readable line

    def __init__(
        self,
        name: str,
        parent: QObject | None = None,
        describe: Callable[[BaseException], str] = describe_job_error,
    ) -> None:
        super().__init__(parent)
        self.describe = describe
        # Read by the worker thread: an int rebinding is atomic under the GIL.
        self.latest = 0
        self._waiting = False  # the latest request's result has not arrived
        self._held: Job | None = None  # a throttled request, started when the latest ends
        self._closed = False  # shut down for good: later requests are dropped
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._pool.setObjectName(name)
        self._finished.connect(self._on_finished, Qt.ConnectionType.QueuedConnection)
        _RUNNERS.add(self)

    def submit(self, job: Job, *, throttle: bool = False) -> int:
        """Run ``job`` after the one under way (which becomes stale); returns its number.
        With ``throttle``, a job under way is not made stale: it finishes and delivers, and
        ``job`` starts then, unless another request came meanwhile (the number returned is
        the one it will have). After :meth:`shutdown` nothing runs (the request is dropped)."""
        if throttle and self._waiting and not self._closed:
            self._held = job
            return self.latest + 1
        self._held = None
        self.latest += 1
        if self._closed:
            return self.latest
        self._waiting = True
        self._pool.start(_Run(self, self.latest, job).run)
        return self.latest

    def cancel(self) -> None:
        """Make every request stale: nothing more arrives until the next ``submit``."""
        self.latest += 1
        self._waiting = False
        self._held = None

    @property
    def busy(self) -> bool:
        """A result is awaited, or a (maybe stale) job still occupies the thread."""
        return self._waiting or self.active_threads() > 0

    @property
    def awaiting(self) -> bool:
        """The latest request's result has not arrived yet (what a view says is under way;
        the thread may still be winding down after delivering it)."""
        return self._waiting or self._held is not None

    def active_threads(self) -> int:
        # None: this runner was deleted with its window, which cleared its attributes
        # (responsiveness.collector.free_when_deleted); something still holds the wrapper.
        pool = getattr(self, "_pool", None)
        if pool is None:
            return 0
        try:
            return pool.activeThreadCount()
        except RuntimeError:  # the C++ pool is already gone with its owner
            return 0

    @Slot(int, bool, object)
    def _on_finished(self, number: int, ok: bool, result: object) -> None:
        if number != self.latest:
            return  # stale: a newer request (or cancel/shutdown) superseded it
        self._waiting = False
        if not ok:
            self.failed.emit(str(result))
        elif result is not None:
            self.done.emit(result)
        if self._held is not None and not self._waiting:  # a slot above may have submitted
            held, self._held = self._held, None
            self.submit(held)

    def shutdown(self) -> None:
        """Abandon all work and wait for the thread to finish the piece it is on. Final.

        subtle: a signal still on its way when the window closed (a run's end, a tokenizer
        change) may request work afterwards. Were it started, the pool would be destroyed with
        its owner while that job's thread waits for the interpreter lock the destroying thread
        holds: a deadlock. So later requests are dropped."""
        self._closed = True
        self.cancel()
        self._pool.clear()
        self._pool.waitForDone()
