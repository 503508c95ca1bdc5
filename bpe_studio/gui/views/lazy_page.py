"""A page (a tab) that computes in the background, and only while it is shown.

What it does: :class:`LazyPage` holds the page's :class:`~bpe_studio.gui.jobs.latest.LatestJob` and
a short debounce timer. :meth:`LazyPage.request` marks the page out of date and, if it is
shown, starts the subclass's ``_submit`` after the debounce; a hidden page waits until it is
shown again, and hiding a page cancels its work (the page now shown gets the thread). A change
of tokenizer choice makes the next failure of that pane's choice (or of the job) go to the error
dialog (``_announce``, :meth:`LazyPage._on_failed`); a failure of a pane the user did not touch
(the run discarded under it) stays on the status line.
A page showing the run's tokenizer follows the timeline's step (the picker cuts the run to
it): each move of the step asks again after the debounce, without making the job under way
stale (``LatestJob``'s throttle), so a drag or a replay shows the newest step that could be
finished, one after another. While the run merges the model's ``tokenizer_changed`` says
when (the controller paces it), and is taken as such a step; paused, the run's tokenizer is
one source with every merge made, and the step moves alone, as once the run has ended. A
result computed with the run's tokenizer is forgotten once the run is gone
(``_forget_result``). A page remembers the version of each tokenizer
file its result was computed with (``file_versions``): a file loaded again in any picker
(the model's ``file_read_again``), or changed on disk by the time the page is shown, makes
it compute again, so that no page shows an old file's numbers under the name the new one has.
What it leaves out: what is computed and how it is shown (the Compare and Report pages).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QWidget

from ..jobs.latest import LatestJob
from ..model.app_model import AppModel
from ..model.state import Phase
from ..responsiveness.debounce import single_shot
from .common import SteadyLabel
from .picker import Choice, FailedPick, TokenizerPicker, key_version

DEBOUNCE_MS = 150


class LazyPage(QWidget):
    """Subclasses give it ``status``, the label its failures are shown on, ``failure``
    (what a failure's status line starts with, and the error dialog's title) and
    ``_on_done``, which receives the job's result."""

    error = Signal(str, str)  # title, message: a failure the user should hear of
    status: SteadyLabel
    failure: tuple[str, str]

    def __init__(self, job_name: str, hub: AppModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.choices: Sequence[TokenizerPicker] = ()
        self._dirty = True
        # The panes whose choice changed since the last result: a failure of one of them (or
        # of the job) goes to the error dialog. subtle: by pane, since a pane the user did not
        # touch may fail too (the run discarded under it), and the dialog named that pane
        # at each pick in the other.
        self._announce: set[str] = set()
        self._computing: tuple[Choice, ...] = ()  # the choices of the job under way
        # Each choice's key -> its version (a file's on disk, else None): of the job under
        # way, and of the result shown.
        self._computing_at: dict[str, object] = {}
        self._shown_at: dict[str, object] = {}
        self._job = LatestJob(job_name, self)
        self._job.done.connect(self._on_done)
        self._job.failed.connect(self._on_failed)
        self._timer = single_shot(self, DEBOUNCE_MS, self._submit)
        # The timeline's step moved: asked after the debounce, but not put off by each next
        # step (a replay moves it every frame), and letting the job under way finish.
        self._step_timer = single_shot(self, DEBOUNCE_MS, self._submit_step)
        self._run_id: int | None = None  # the run of the last tokenizer_changed heard

    @Slot()
    def request(self) -> None:
        """Compute anew (after a short debounce), now if shown, else when next shown."""
        self._dirty = True
        self._job.cancel()
        if self.isVisible():
            self._timer.start()

    def bind(self, hub: AppModel) -> None:
        hub.tokenizer_changed.connect(self._on_run_tokenizer_changed)
        hub.step_changed.connect(self._on_step)
        hub.file_read_again.connect(self._on_file_read_again)

    @property
    def busy(self) -> bool:
        """A result is due or being computed (the tests wait for it to settle)."""
        return (
            self._dirty or self._timer.isActive() or self._step_timer.isActive() or self._job.busy
        )

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._outdated():  # a file it shows was changed on disk meanwhile
            self._result_outdated()
            self._dirty = True
        if self._dirty:
            self._timer.start()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt override
        # A hidden page need not finish: its job gives way to the page now shown.
        super().hideEvent(event)
        if self._timer.isActive() or self._step_timer.isActive() or self._job.busy:
            self._timer.stop()
            self._step_timer.stop()
            self._job.cancel()
            self._dirty = True

    def _watch(self, picker: TokenizerPicker) -> None:
        """Compute anew when ``picker``'s choice changes, announcing a failure of its pane."""
        picker.choice_changed.connect(lambda pane=picker.pane: self._on_choice_changed(pane))

    def _on_choice_changed(self, pane: str) -> None:
        self._announce.add(pane)
        self.request()

    def _picking(self, choice: Choice) -> bool:
        """``choice`` is a pick under way (not yet its pane's choice)."""
        pick = self.hub.pick_under_way(choice.pane)
        return pick is not None and pick.key == choice.key

    def _picked(self) -> list[Choice]:
        """The tokenizers to compute with: each picker's pick under way, else its pane's
        choice; "(none)" is left out (and, needing nothing built, shown at once)."""
        chosen = []
        for picker in self.choices:
            choice = picker.current()
            if choice is None:
                self.hub.pick_ready(picker.pane, picker.key)
            else:
                chosen.append(choice)
        return chosen

    def _submitting(self, choices: Sequence[Choice]) -> None:
        """A job is about to compute with ``choices``: they, and their versions now."""
        self._computing = tuple(choices)
        self._computing_at = {choice.key: key_version(choice.key) for choice in choices}

    def _picks_shown(self) -> None:
        """The result of the job under way is shown: each pick under way among its choices
        is now its pane's choice, and the versions it was computed with are the page's."""
        for choice in self._computing:
            self.hub.pick_ready(choice.pane, choice.key)
        self._shown_at = self._computing_at

    def _outdated(self) -> bool:
        """A file the result shown was computed with is another version now."""
        return any(key_version(key) != version for key, version in self._shown_at.items())

    def _on_file_read_again(self, path: str) -> None:
        """A tokenizer file was loaded again, in any picker: computed anew if the page shows
        it, computes with it or is picking it."""
        key = f"file:{path}"
        keys = {*self._shown_at, *self._computing_at, *(p.key for p in self.choices)}
        if key in keys:
            self._result_outdated()
            self.request()

    def _result_outdated(self) -> None:
        """The result shown was computed with a file's older version (each page may say so
        until the new result comes)."""

    def _pick_failed(self, failed: FailedPick) -> None:
        """A pick's tokenizer could not be built: the pane goes back to its choice before (the
        model undoes the pick everywhere), the user hears why, and the page computes again
        with the choices it shows. A choice already shown that fails (a file deleted since)
        is a failure of the page, said on its status line (and in the dialog only if its pane
        was just picked), not computed again."""
        if not self.hub.pick_failed_for(failed.pane, failed.key, failed.message):
            self._say_failed(failed.what, failed.pane in self._announce)
            return
        shown = self.hub.pane(failed.pane)
        unbuilt = self._cannot_build(failed.pane, shown.key)
        # A download the user cancelled is no error to report, nor a pick the page made.
        if not failed.cancelled and not self._quiet_failure(failed):
            # The choice the pane goes back to may be one the result shown could not build
            # (a file deleted since): "shown instead" was false, and the result computed
            # again opened a second dialog about it. One dialog says both.
            instead = (
                f"{shown.label} is shown instead."
                if unbuilt is None
                else f"The pane's choice before cannot be built either: {unbuilt}."
            )
            self.error.emit(self.failure[1], f"Could not load {failed.what}\n\n{instead}")
            if unbuilt is not None:
                self._announce.discard(failed.pane)
        self.request()

    def _quiet_failure(self, failed: FailedPick) -> bool:
        """Whether ``failed`` is a pick the page made itself, undone without a dialog."""
        return False

    def _cannot_build(self, pane: str, key: str) -> str | None:
        """Why the result shown could not build ``pane``'s choice ``key`` (the choice and
        why), None if it could or showed none (each page knows its result)."""
        return None

    @Slot()
    def _on_run_tokenizer_changed(self) -> None:
        if any(choice.uses_run for choice in self.choices):
            state = self.hub.state
            run, self._run_id = self._run_id, state.run_id
            if state.shown is None:
                # The run is gone (discarded, or a new one not yet merged): what was computed
                # with it is shown and exported no more (an audit: a discarded run's column
                # stayed in the Report, and in its CSV).
                self._forget_result()
            elif state.phase.training and state.run_id == run:
                # subtle: the run's tokenizer rebuilt (the controller's: at the step shown
                # while the run merges, paced; whole once it pauses) is a step moved to: a
                # request put the debounce off again at each, so nothing was computed until
                # the rebuilds stopped.
                self._step_moved()
                return
            self.request()

    def _on_step(self, step: int) -> None:
        """The timeline moved: the run's tokenizer is shown at the new step. While the run
        merges, ``tokenizer_changed`` says when instead (the controller rebuilds the run's
        tokenizer at the step, paced); paused, the step is cut from the run's one source, as
        once the run has ended."""
        phase = self.hub.state.phase
        if phase in (Phase.PRE_TOKENIZING, Phase.MERGING) or not any(
            c.uses_run for c in self.choices
        ):
            return
        self._step_moved()

    def _step_moved(self) -> None:
        self._dirty = True
        if self.isVisible() and not self._step_timer.isActive():
            self._step_timer.start()

    @Slot()
    def _submit_step(self) -> None:
        self._submit(throttle=True)

    def _forget_result(self) -> None:
        raise NotImplementedError  # each page clears its own result

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        """The job failed: on the page's status line; also to the error dialog (``error``)
        when it follows a change of tokenizer choice."""
        self._say_failed(message, bool(self._announce))

    def _say_failed(self, message: str, announce: bool) -> None:
        """The failure on the page's status line, and to the error dialog if ``announce``
        (said once: the next failure is announced after the next change of choice)."""
        what, title = self.failure
        self.status.setText(f"{what}: {message}")
        if announce:
            self._announce.clear()
            self.error.emit(title, message)

    def _on_done(self, result: object) -> None:
        raise NotImplementedError  # each page shows its own result

    def _submit(self, throttle: bool = False) -> None:
        """Submit the page's job (``throttle``: after the job under way, not making it stale:
        ``LatestJob.submit``)."""
        raise NotImplementedError  # each page submits its own job
