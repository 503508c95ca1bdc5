"""What the app does when asked: open a corpus, train, pause, stop, save, load, close.

What it does: :class:`Controller` turns those requests into changes of the
:class:`~..model.app_model.AppModel`: it checks the corpus (at Train, also the start of its
files with the run's settings, ``corpus_probe``, before the run on screen is discarded), starts a
:class:`~.session.TrainingSession` (which writes the run into the model) with the
:class:`~..model.state.RunSettings` the controls give, rebuilds the editor's tokenizer from
the record every few hundred merges while training, saves the tokenizer on screen (also a
paused run's merges so far) in any of the three formats, and loads a tokenizer file of any of
them in the background (:class:`~..jobs.loader.TokenizerLoader`); a loaded file becomes the run
on screen, so its merges and vocabulary fill the tables. A Train that fails before its first
merge (or is stopped before it) puts the tokenizer that was on screen back, unless the user
discarded it to train: a discarded run never comes back. Before Train, Load, a new corpus or
closing the window drops merges no file holds (``saving.unsaved_merges``), and before Save
replaces files, it asks (:attr:`confirm`, :attr:`ask_close`: the window answers with dialogs,
tests replace them); Load drops the run only once the new tokenizer has loaded. News of an
action goes to the model's status message; problems are reported through ``error`` (title,
plain-text message naming the file and reason); the app carries on.
What it leaves out: widgets and dialogs (``main_window``), and the training itself (``worker``).
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from ...core.corpus.sources import check_corpus_path, is_glob_or_url
from ...core.formats.base.data import TokenizerData
from ...core.io.worker_memory import give_back_freed_memory
from ...core.train.vocab import initial_vocab
from ..jobs.loader import OfferedTokenizer, TokenizerLoader
from ..model.app_model import AppModel
from ..model.corpus_probe import settings_problem
from ..model.corpus_source import (
    CorpusSource,
    corpus_source,
    how_to_read,
    utf8_problem,
)
from ..model.errors import describe_error, on_one_line
from ..model.run_tokenizer import run_tokenizer_at, training_label
from ..model.saving import data_to_save, saveable_merges, unsaved_words
from ..model.state import LoadedTokenizer, Phase, RunSettings, RunState, TrainingResult
from ..model.status import nothing_learned
from ..model.tokenizer_source import TokenizerSource
from ..responsiveness import frame_budget
from ..responsiveness.collector import keep_out_of_collections
from ..responsiveness.trainer_hold import GuiTurn
from .save_flow import SaveFlow
from .session import TrainingSession

# What closing with unsaved merges may do (``Controller.ask_close``'s answers).
SAVE, DISCARD, CANCEL = "save", "discard", "cancel"
# After the core's "is a directory" for a folder opened as the corpus: what opens its files.
_FOLDER_HINT = ": open the text files in it, or give Glob or URL… a pattern such as {}"


class Controller(QObject):
    error = Signal(str, str)  # title, message (plain text)
    load_finished = Signal(bool)  # a load() ended: loaded, or failed (error was emitted)
    # A save() started ended: written, or not (refused, cancelled, or failed: error said why).
    save_finished = Signal(bool)
    # A save the window waited for to close has been written: close it now (see may_close).
    close_ready = Signal()

    def __init__(self, hub: AppModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.session: TrainingSession | None = None
        self.loader = TokenizerLoader(self)
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_load_failed)
        # When the editor's tokenizer was last rebuilt while training: merges, time.
        self._editor_at = (0, 0.0)
        # What was on screen when Train was clicked: put back if the run fails before merging
        # (None: nothing to put back, or the user discarded it to train).
        self._before_run: RunState | None = None
        # The run the user agreed to discard for the load under way (its run id): dropped when
        # the file has loaded, kept when it fails.
        self._discard_on_load: int | None = None
        # Asked before discarding or overwriting: (title, question) -> go ahead? The window
        # answers with a dialog; tests replace it.
        self.confirm: Callable[[str, str], bool] = lambda title, question: True
        # Asked when closing would lose merges: (title, question) -> SAVE, DISCARD or CANCEL;
        # and, for SAVE, where and how: () -> (folder, format) or None (cancelled).
        self.ask_close: Callable[[str, str], str] = lambda title, question: DISCARD
        # Asked when a file's name does not say whether it holds records (a .json whose first
        # line is a JSON object): (title, question) -> corpus_source.AS_RECORDS, AS_TEXT or
        # CANCEL.
        self.ask_records: Callable[[str, str], str] = lambda title, question: CANCEL
        self.choose_save: Callable[[], tuple[str, str] | None] = lambda: None
        # Told of a save that the user chose (a menu's, closing's) once it is written: its
        # folder and format, which the next save dialog and Ctrl+S start from.
        self.remember_save: Callable[[Path, str], None] = lambda folder, fmt: None
        self.saver = SaveFlow(self.hub, lambda title, question: self.confirm(title, question), self)
        self.saver.error.connect(self.error)
        self.saver.finished.connect(self._on_save_finished)
        # A close waiting for the save under way: None (none), or whether the run was paused
        # for the close's question (resumed if the save fails: the window stays).
        self._close_after_save: bool | None = None
        self._save_lets_close = False  # the save closing's question asked for was written
        # subtle: the rebuild is its own turn of the event loop, after the frame that asked for
        # it and its repaint: inside the frame, the editor, the explanation pages and their jobs
        # reacting to a new tokenizer would run with the trainer held, and the span job started
        # then would contend with the frame's repaint for the GIL (docs/responsiveness.md).
        self._editor_turn = QTimer(self)
        self._editor_turn.setSingleShot(True)
        self._editor_turn.setInterval(0)
        self._editor_turn.timeout.connect(self._maybe_refresh_editor)
        hub.updated.connect(lambda: self._editor_turn.start())
        hub.step_changed.connect(self._on_step_changed)

    @property
    def training(self) -> bool:
        return self.hub.state.phase.training

    @property
    def busy(self) -> bool:
        """Training, loading or saving: nothing else may start."""
        return self.training or self.loader.busy or self.saver.busy

    @property
    def saving(self) -> bool:
        """A save is under way (its check, its questions or its write)."""
        return self.saver.busy

    @property
    def editor_refresh_pending(self) -> bool:
        """The editor's tokenizer is due to be rebuilt at the step shown (its own turn of the
        event loop, after the frame that moved the step)."""
        state = self.hub.state
        moved = state.phase is Phase.PAUSED and state.published != self._editor_at[0]
        return self._editor_turn.isActive() or moved

    @Slot(int)
    def _on_step_changed(self, step: int) -> None:
        # Paused, no frame follows a move of the step soon: a run's tokenizer still built at
        # a step of its merging (the step moved back then) is made whole at once, so each
        # view cuts the step from it (the monkey audit: the Report showed the step before
        # for half a second, not busy, while every other view had moved).
        state = self.hub.state
        if state.phase is Phase.PAUSED and state.published != self._editor_at[0]:
            self._editor_turn.start()

    def gui_turn(self) -> GuiTurn | None:
        """The running session's hold on the trainer (``responsiveness.trainer_hold``), if one
        runs."""
        return self.session.turn if self.session is not None else None

    def _may_discard(self, action: str) -> bool:
        """True unless merges no file holds would be lost and the user says no. Once the user
        says yes, the run is gone from every view (``AppModel.discard_run``) for good."""
        answer = self._ask_discard(action)
        if answer:
            self.hub.discard_run()
        return answer is not False

    def _ask_discard(self, action: str) -> bool | None:
        """Ask before ``action`` drops merges no file holds: None when none would be lost,
        else whether the user lets them go."""
        if self.hub.unsaved == 0:
            return None
        said, them = unsaved_words(self.hub.state, action)
        return self.confirm("Discard the trained tokenizer?", f"{said}\n\nDiscard {them}?")

    def _corpus_problem(
        self, paths: list[str], read_as: str | None = None
    ) -> tuple[CorpusSource | None, str | None]:
        """The corpus ``paths`` name, read as ``read_as`` says (the core's ``records``), or why
        it cannot be trained on (naming the file): missing, empty, or a plain text file that
        is not UTF-8 at its start (``utf8_problem``)."""
        for path in paths:
            if is_glob_or_url(path):
                continue
            p = Path(path)
            try:
                check_corpus_path(p)  # missing, a folder, unreadable: the core's words
            except (OSError, ValueError) as error:
                hint = _FOLDER_HINT.format(p / "*.txt") if p.is_dir() else ""
                return None, describe_error(error) + hint
            if not p.is_file():
                return None, f"{p}: not a regular file"
        try:
            source = corpus_source(paths, read_as)
        except (OSError, ValueError) as error:
            return None, describe_error(error)
        if source.size == 0:
            empty = "the file is empty" if source.files == 1 else "the files are empty"
            named = paths[0] if len(paths) == 1 else source.name
            return None, f"{named}: {empty}: there is nothing to train on"
        problem = utf8_problem(paths, read_as)
        return (None, problem) if problem is not None else (source, None)

    def _how_to_read(self, paths: list[str]) -> str | None:
        """None when every file's name says what it holds; else the user's answer to
        ``ask_records`` (``corpus_source.how_to_read``): AS_RECORDS, AS_TEXT or CANCEL."""
        return how_to_read(paths, self.ask_records)

    # -------------------------------------------------------------- corpus
    def open_corpus(self, path: str | os.PathLike | list[str]) -> bool:
        """Open a corpus: a text file, or several files, a glob or URLs counted as one
        (compressed files, JSON Lines and Parquet records too)."""
        if self.training or self.saving:
            # Open is off while a run trains or is paused (its corpus is in use), and while a
            # save is under way (a discard meanwhile would drop the run it writes).
            return False
        given = [os.fspath(path)] if isinstance(path, (str, os.PathLike)) else path
        paths = [p if is_glob_or_url(p) else os.path.abspath(os.path.expanduser(p)) for p in given]
        source, problem = self._corpus_problem(paths)
        read_as = self._how_to_read(paths) if source is not None else None
        if read_as == CANCEL:
            return False
        if read_as is not None:
            source, problem = self._corpus_problem(paths, read_as)
        if source is None:
            # The refusal is the news now: an older message (a failed load's) would outlast the
            # action after it, the corpus opened standing as it was.
            self.hub.end_notice()
            self.hub.set_notice(f"Corpus not opened: {on_one_line(problem or '')}")
            self.error.emit("Cannot open corpus", problem or "")
            return False
        old = self.hub.state.corpus_source
        same = old is not None and (old.paths, old.read_as) == (source.paths, source.read_as)
        if not same and not self._may_discard("Opening another corpus"):
            return False
        self.hub.set_corpus(source)
        return True

    # ------------------------------------------------------------ training
    def start_training(self, settings: RunSettings) -> bool:
        """Train on the corpus opened, with ``settings`` (its ``corpus`` is filled in here)."""
        if self.busy:
            return False
        opened = self.hub.state.corpus_source
        if opened is None:
            self.error.emit("No corpus", "Open a corpus file first (or drop one on the window).")
            return False
        # It may have changed since it was opened.
        source, problem = self._corpus_problem(list(opened.paths), opened.read_as)
        if source is not None:
            # Before the run on screen is discarded: a run that fails at once is no reason.
            problem = settings_problem(source, settings)
        if source is None or problem is not None:
            self.error.emit("Cannot train", problem or "")
            return False
        discarded = self._ask_discard("Training again")
        if discarded is False:
            return False
        state = self.hub.state
        # subtle: a shallow copy is enough: begin_run starts a new RunState rather than
        # changing this one. A run the user discarded to train is not kept: it never comes
        # back, whatever becomes of this Train. Nor is a run that learned nothing: brought
        # back, it would say why it learned nothing under the new corpus's name.
        learned = state.result is None or bool(state.result.merges)
        keep = state.phase not in (Phase.IDLE, Phase.FAILED) and learned and not discarded
        self._before_run = copy.copy(state) if keep else None
        if self.session is not None:
            self.session.shutdown()  # its thread has ended; make sure it is released
            self.session.deleteLater()
        settings = RunSettings(
            settings.vocab_size,
            settings.special_tokens,
            settings.pattern,
            tuple(source.paths),
            settings.workers,
            settings.text_field,
            settings.cluster,
            source.read_as,
        )
        self.hub.begin_run(settings, initial_vocab(list(settings.special_tokens)))
        self._editor_at = (0, time.perf_counter())
        session = TrainingSession(settings, self.hub, self)
        session.finished.connect(self._on_finished)
        self.session = session
        session.start()
        return True

    def toggle_pause(self) -> None:
        session = self.session
        if session is None or not self.training:
            return
        if session.paused:
            session.resume()
        else:
            session.pause()

    def stop_training(self) -> None:
        if self.session is not None and self.training:
            self.session.stop()

    @Slot()
    def _maybe_refresh_editor(self) -> None:
        """While merging, rebuild the editor's tokenizer at the step shown, paced (each rebuild
        contends with the trainer for the GIL); while paused, once, with every merge made:
        the views cut the timeline's step from it."""
        state = self.hub.state
        if state.settings is None or state.phase not in (Phase.MERGING, Phase.PAUSED):
            return
        # subtle: paused, the run's tokenizer is one source and the step moves alone, as
        # once the run has ended. A new tokenizer at each step made every view that follows
        # it start its work over at every frame of a replay (Compare encoded its text with
        # both tokenizers per step and trailed the timeline by hundreds of merges); a step
        # is now a cut of that one (run_steps), which each view derives what it shows from.
        n = state.published if state.phase is Phase.PAUSED else state.step
        at, when = self._editor_at
        now = time.perf_counter()
        if n == at:
            return
        # Live, the step grows with the run: rebuilt every so many merges. A step the user
        # chose (moved back, or forward a little) is rebuilt whatever its distance: paced by
        # merges alone, a step behind the last rebuild never was, and Compare and the Report
        # showed that rebuild's step until the run ended.
        if state.phase is Phase.MERGING and (
            (state.live and n - at < frame_budget.EDITOR_REFRESH_MERGES)
            or now - when < frame_budget.EDITOR_REFRESH_SECONDS
        ):
            return
        self._editor_at = (n, now)
        # subtle: built in the span thread on first use: building its vocabulary and merges
        # here, on the GUI thread while the trainer runs, would make the largest gaps of a run
        # (docs/responsiveness.md). After a reset or a load meanwhile this source is no longer
        # shown and its result is dropped.
        label = training_label(n, state.published)
        build = run_tokenizer_at(state, n)
        self.hub.show_tokenizer(TokenizerSource.deferred(label, build, n, state.run_id))

    @Slot(object)
    def _on_finished(self, result: TrainingResult | None) -> None:
        state = self.hub.state
        before, self._before_run = self._before_run, None
        if result is None:
            name = state.run_corpus.name if state.run_corpus else "the corpus"
            message = f"Training on {name} failed.\n\n{state.error}"
            if before is not None and state.merges_done == 0:
                # Nothing new was learned: the tokenizer that was on screen comes back.
                self.hub.restore(before)
                message += "\n\nThe tokenizer shown before is still shown."
            self.error.emit("Training failed", message)
        elif not result.merges and result.target_merges > 0 and before is not None:
            # Nothing learned (stopped before the first merge, or no pair to merge): as if
            # Train had not been clicked. (No merge asked for made a byte-level tokenizer.)
            why = (
                "Stopped before the first merge: nothing was learned"
                if result.stopped
                else nothing_learned(state)
            )
            self.hub.restore(before)
            self.hub.set_notice(f"{why}; the tokenizer shown before is shown again")

    # ------------------------------------------------------ save and load
    def saveable_data(self) -> TokenizerData | None:
        """What Save writes: the loaded tokenizer, the run's result, or a paused run's merges
        so far; None when there is nothing (no tokenizer, or no merge learned)."""
        if self.hub.state.phase is Phase.PAUSED:
            self.hub.publish()  # the merges recorded so far, shown and saved alike
        return data_to_save(self.hub.state)

    def save(
        self,
        directory: str | os.PathLike | None,
        format: str = "gpt2",
        *,
        choose_folder: Callable[[], str | None] | None = None,
        remember: bool = False,
    ) -> bool:
        """Start saving the tokenizer on screen into ``directory`` (or the folder
        ``choose_folder`` gives, asked once the format's questions are answered) in
        ``format`` ("gpt2", "hf", "tiktoken"; see ``save_flow.SAVED_FILES``), each file
        atomically, in the background (``save_flow``); files already there are replaced
        only if :meth:`confirm` says so. ``remember``: once written, :attr:`remember_save` is told.
        Returns whether a save started; :attr:`save_finished` says how each started one
        ended."""
        if self.saving:
            self.hub.set_notice("A save is under way: the next one starts once it has ended")
            return False
        data = self.saveable_data()
        if data is None:
            self.error.emit(
                "Nothing to save", "Train or load a tokenizer first: no merge has been learned."
            )
            return False
        return self.saver.start(
            data,
            saveable_merges(self.hub.state),
            format,
            Path(directory) if directory is not None else None,
            choose_folder=choose_folder,
            on_saved=self.remember_save if remember else None,
        )

    @Slot(bool)
    def _on_save_finished(self, written: bool) -> None:
        resume, self._close_after_save = self._close_after_save, None
        if resume is not None:
            if written:
                self._save_lets_close = True
                self.close_ready.emit()
            else:
                # The news said the window would close: it stays (the error, if any, says why).
                self.hub.set_notice("The window stays open: the save did not write its files")
                if resume and self.session is not None and self.training:
                    self.session.resume()  # the run goes on as it was
        self.save_finished.emit(written)

    def load(
        self, vocab_file: Path, merges_file: Path | None = None, pattern: str | None = None
    ) -> bool:
        """Start loading a tokenizer in the background: a GPT-2 vocab + merges pair, or
        (``merges_file`` None) any tokenizer file (``loader.prepare_file``; ``pattern`` for a
        rank file that does not give its own). False if busy or the user kept an unsaved
        tokenizer."""
        if self.busy:
            return False
        # subtle: asked now, dropped only once the file has loaded (_on_loaded), as Open
        # checks its corpus before discarding: a file that fails to load leaves the run.
        answer = self._ask_discard("Loading a tokenizer")
        if answer is False:
            return False
        self._discard_on_load = self.hub.state.run_id if answer else None
        self.loader.load(vocab_file, merges_file, pattern)
        self.hub.set_loading((vocab_file, merges_file or vocab_file))
        return True

    @Slot(object)
    def _on_loaded(self, loaded: LoadedTokenizer | OfferedTokenizer) -> None:
        keep_out_of_collections()
        discard, self._discard_on_load = self._discard_on_load, None
        if isinstance(loaded, OfferedTokenizer):
            # Not a run: nothing replaces the unsaved run, which stays (and may be saved yet).
            self.hub.offer(loaded)
        else:
            if discard is not None and discard == self.hub.state.run_id:
                self.hub.discard_run()  # the user let it go when asked
            self.hub.show_loaded(loaded)
        # Said once, after show_loaded (which ends news): what the file does otherwise than it
        # says, and a tokenizer.json beside GPT-2 files that would encode otherwise.
        said = list(loaded.tokenizer.notes)
        if isinstance(loaded, LoadedTokenizer) and loaded.warning is not None:
            said.append(loaded.warning)
        if said:
            self.hub.set_notice("; ".join(said))
        give_back_freed_memory()  # what the tokenizer shown before freed
        self.load_finished.emit(True)

    @Slot(str)
    def _on_load_failed(self, message: str) -> None:
        self._discard_on_load = None  # the run stays: nothing replaced it
        self.hub.load_failed(message)
        self.error.emit("Could not load tokenizer", message)
        self.load_finished.emit(False)

    # ------------------------------------------------------------- closing
    def may_close(self) -> bool:
        """Whether the window may close now: yes when no merge would be lost, else as the user
        answers :attr:`ask_close` (a run still training is paused while asked, and saved as it
        stands then). Cancel (or a Save that did not happen) keeps the window and the run.
        Save runs in the background: the window stays until it has written, then
        :attr:`close_ready` asks it to close again, which this lets through (only a save that
        succeeded lets it close). A close while a save asks or writes waits for it the same
        way (a save that fails keeps the window, its error shown); one still checking, which
        has asked nothing, is dropped when merges no file holds give the close a question
        of its own, which it asks as if none ran."""
        if self._save_lets_close:
            self._save_lets_close = False
            if self.hub.unsaved == 0:  # nothing was learned past the save meanwhile
                return True
        if (
            self.saving
            and self._close_after_save is None
            and self.hub.unsaved > 0
            and self.saver.drop_unasked()
        ):
            # subtle: a save that has asked nothing yet (its check still runs) is dropped, and
            # the close asks its own question as if none had started: waited for, its
            # questions and folder dialog came after the close, as if the close had asked for
            # them (a task's defect). The close's own save, asked for by its question, is
            # waited for; so is a save when the close has no question (every merge is in
            # files): dropped, the files the user asked for (another format, say) would
            # silently not be written.
            self.hub.set_notice("Closing cancelled the save under way, which had written nothing")
        if self.saving:
            if self._close_after_save is None:
                self._close_after_save = False
            self.hub.set_notice("The window closes once the save under way has written")
            return False
        if self.hub.unsaved == 0 and not self.training:
            return True
        session = self.session
        paused_here = False
        if session is not None and self.training:
            # subtle: the merges asked about stay the merges saved: the run holds still, with
            # the merge under way when the pause came recorded, before they are counted. A
            # worker may have paused itself (pause_after) with its report not yet here:
            # pausing then only brings the state up to it, and Cancel leaves it paused, as
            # it was. Before the first merge it holds still too: a run that went on under
            # "Stop training and close?" finished behind it (a real-display audit), and the
            # question was no longer true.
            paused_here = not session.paused
            session.hold_still()
        if self.hub.unsaved == 0 and self.hub.state.saved_merges > 0:
            # Every merge learned is in files (paused, then saved): closing stops the run as
            # Stop does, which asks nothing, and Train and Load then drop it unasked too. It
            # asked "Training has learned no merge yet", untrue (a task's defect).
            return True
        if self.hub.unsaved == 0:
            # No merge to lose yet, but a long pre-tokenization (minutes on a large corpus)
            # would be lost to a stray Ctrl+Q (a keyboard audit: the app closed at once).
            if not self.confirm(
                "Stop training and close?",
                "Training has learned no merge yet: what it has counted so far is lost when "
                "the window closes.\n\nStop training and close?",
            ):
                if paused_here and session is not None:
                    session.resume()
                return False
            # subtle: a pause asked for while the corpus is counted is taken at the worker's
            # first pause point, and a merge may come before it: merges that came while the
            # question was open are asked about as any are (the review: a run that finished
            # meanwhile closed with its 1,743 merges unsaved and unasked).
            if self.hub.unsaved == 0:
                return True
        if self.loader.busy:
            # subtle: a tokenizer loading (the user let the run go for it) would end within
            # the question's event loop and replace the run on screen: Save then wrote the
            # loaded tokenizer in place of the merges asked about (a keyboard audit). The
            # load stops; the run stays, as after a load that failed.
            self.loader.cancel()
            self._discard_on_load = None
            self.hub.load_stopped("the window was closing")
        said, _ = unsaved_words(self.hub.state, "Closing the window")
        answer = self.ask_close("Save the trained tokenizer?", said)
        if answer == SAVE:
            target = self.choose_save()
            if target is not None and self.save(*target, remember=True):
                # The window closes once the files are written (_on_save_finished); the
                # run holds still meanwhile, and goes on if the save fails.
                self._close_after_save = paused_here
                return False
        elif answer == DISCARD:
            return True
        if paused_here and session is not None:
            session.resume()
        return False

    def shutdown(self, *, wait_for_compile: bool = True) -> None:
        """Stop training, loading and saving, and wait for their threads (a write under way
        ends first); a training thread held by the merge engine's first compile only with
        ``wait_for_compile`` (see :meth:`TrainingSession.shutdown`)."""
        if self.session is not None:
            self.session.shutdown(wait_for_compile=wait_for_compile)
        self.loader.shutdown()
        self.saver.shutdown()
