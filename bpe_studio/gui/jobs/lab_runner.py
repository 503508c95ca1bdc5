"""The Vocabulary lab's jobs, from the model to its process and back to the GUI thread.

What it does: :class:`LabRunner` owns the lab's :class:`~..model.lab_process.LabProcess`
(its thread waits while the GUI thread repaints and runs with the short GIL switch interval,
``responsiveness``) and hands every message the process delivers to the GUI thread, where
:meth:`~..model.vocab_lab.VocabLab.receive` takes it. :meth:`LabRunner.run` submits the
model's next job, cancelling the one under way unless it still computes what is wanted
(then the next job waits for its end: a change of the second tokenizer does not start a
corpus's usage over).
What it leaves out: which job is due (the model), when to ask (the view's timers).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal, Slot

from ..model.lab_process import LabProcess
from ..model.lab_records import Message
from ..model.vocab_lab import VocabLab
from ..responsiveness.busy import wait_while_gui_busy
from ..responsiveness.gil_switches import short_switches


class LabRunner(QObject):
    """Runs the lab model's jobs in its process; messages reach the model on the GUI thread."""

    _delivered = Signal(object)  # from the process's thread: one message

    def __init__(self, lab: VocabLab, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.lab = lab
        self.process = LabProcess(self._deliver, wait_while_gui_busy, short_switches)
        self._delivered.connect(self._on_delivered, Qt.ConnectionType.QueuedConnection)
        self._closed = False

    @property
    def busy(self) -> bool:
        """A job's results are awaited."""
        return self.lab.running is not None

    def run(self) -> bool:
        """Submit the model's next job (True), unless nothing is due or the job under way
        still computes what is wanted (it is let finish; the model asks again at its end)."""
        if self._closed:
            return False
        if self.lab.running is not None and self.lab.running_still_wanted():
            return False
        job = self.lab.next_job()
        if job is None:
            if self.lab.running is not None:
                self.process.cancel()  # what it computes is wanted no more
            return False
        self.lab.job_started(self.process.submit(job))
        return True

    def cancel(self) -> None:
        """The user's Cancel: the job under way stops, and what it computed is given up."""
        self.lab.cancel()
        self.process.cancel()

    def _deliver(self, message: Message) -> None:  # in the process's thread
        try:
            self._delivered.emit(message)
        except RuntimeError:
            pass  # subtle: this object was deleted while the thread ran (see jobs.latest)

    @Slot(object)
    def _on_delivered(self, message: Message) -> None:
        if not self._closed:
            self.lab.receive(message)

    def shutdown(self) -> None:
        """End the process and its thread (closing the window). Final."""
        self._closed = True
        self.process.shutdown()
