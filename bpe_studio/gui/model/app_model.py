"""The one owner of everything a view shows, and the events that say what changed.

What it does: :class:`AppModel` holds the run (:class:`~.state.RunState`: the merges, the
phase, the step every view shows), each pane's tokenizer choice with its load status
(:mod:`.panes`), the editor's text, the held-out text, the editor's points on the compression
plot keyed by text and run (:mod:`.editor_series`), how much of the run is saved, and the
status message. It changes only through its own methods; each emits the events of what it
changed (psygnal signals, napari's choice: plain Python, no Qt, so the model and its rules
are tested without a window; an emit costs a few microseconds, ``benchmarks/gui_bench.py``).
The views read ``model.state`` (and the rest) when an event tells them to. Merges arrive in
the record many times a second but are *published* to the views together, in one frame
(:meth:`AppModel.publish`): ``merges_added`` for the new rows, then the step, then
``updated``. Every view repaints from that frame, so one repaint never shows two steps.

Every event is emitted on the GUI thread: background jobs hand their results to the GUI
thread (``jobs``), which calls the model, and a result carries the key of the state it was
computed for (the run's ``run_id``, a pane's key, the text), so one for a state that is gone
is dropped.
What it leaves out: threads (``training``, ``jobs``), dialogs and the train/load/save flow
(``training.controller``), drawing (``views``).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from pathlib import Path

from psygnal import Signal

from ...core import MergeStep
from ...core.corpus.records import DEFAULT_TEXT_FIELD
from ...core.train.pair_history import PairHistory
from .corpus_source import CorpusSource
from .curves import DEFAULT_HELDOUT
from .editor_series import EditorSeries
from .file_names import FileNames
from .file_versions import read_again
from .panes import PaneChoice, PaneChoices
from .run_tokenizer import run_tokenizer_at
from .saving import unsaved_merges
from .state import LoadedTokenizer, Phase, RunSettings, RunState, SaveNews, TrainingResult
from .tokenizer_source import TokenizerSource
from .vocab_lab import VocabLab


class AppModel:
    """Owns what the views show; every event is emitted after the change it names."""

    reset = Signal()  # a new run began, a tokenizer was loaded or the run was dropped: rebuild
    phase_changed = Signal(object)  # Phase
    corpus_changed = Signal()
    merges_added = Signal(int, int)  # first, last index into state.merge_rows now published
    step_changed = Signal(int)  # the step every view shows
    replay_pause_asked = Signal()  # a view the user acts in asks a playing replay to pause
    live_changed = Signal(bool)  # state.live: the step follows the newest merge (or not)
    replay_changed = Signal(bool)  # state.replaying (or replay_paused): a replay animates the step
    tokenizer_changed = Signal()  # state.shown or state.picked (the editor's tokenizer) changed
    token_selected = Signal(int)  # a token id, selected in any view
    # A tokenizer of another kind than byte-level BPE, loaded to look at (never the run): the
    # editor's picker, Compare and Report list it (a jobs.loader.OfferedTokenizer).
    tokenizer_offered = Signal(object)
    # A tokenizer file one picker opened and showed (a str path): every picker lists it.
    tokenizer_file_opened = Signal(str)
    # A tokenizer file (a str path, as the pickers key it) the user loaded again: another
    # version from now on (file_versions), which every view showing it works out anew.
    file_read_again = Signal(str)
    updated = Signal()  # end of a frame: redraw whatever depends on progress, pairs, step
    pane_changed = Signal(str)  # a pane's choice or its pick under way changed (panes.py)
    pick_failed = Signal(str, str, str)  # pane, label, message: a pick failed, undone
    text_changed = Signal()  # the editor's text (as last handed to the model)
    heldout_changed = Signal()  # the held-out text the compression plot measures
    editor_series_changed = Signal()  # the editor's points for the text and run shown
    saved_changed = Signal()  # how much of the run on screen is saved
    notice_changed = Signal()  # the status message (news of the last action)

    def __init__(self) -> None:
        self.state = RunState()
        self._run_ids = itertools.count(1)
        self._panes = PaneChoices()  # each pane's choice and the pick under way in it
        self.editor_text = ""
        self.heldout: Path = DEFAULT_HELDOUT
        self._editor_series = EditorSeries()
        # What every view calls each tokenizer file: its model's name, distinct (file_names).
        self.file_names = FileNames()
        # The pattern the user gave for a tokenizer file (by the pickers' key) that holds
        # none (a rank file without its sidecar): every picker reads the file with it, also
        # once it changed on disk.
        self.file_patterns: dict[str, str] = {}
        # The status message, and whether it is "Saved ..." (it ends when the run that was
        # saved learns more merges: it would claim what is no longer true).
        self.notice: str | None = None
        self._notice_is_saved = False
        self.lab = VocabLab(self)  # the Vocabulary lab's choices and results (vocab_lab)

    @property
    def published(self) -> int:
        """How many merge rows the views show (the record may be ahead until the next frame)."""
        return self.state.published

    # ------------------------------------------------------------ corpus
    def set_corpus(self, source: CorpusSource | None) -> None:
        self.state.corpus_source = source
        self.state.corpus = source.plain if source is not None else None
        self.state.load_error = None  # a failed load's news ends with the next action
        self.end_notice()
        self.corpus_changed.emit()
        self.updated.emit()

    def set_text_field(self, field: str) -> None:
        """The records' text field the Train page names (blank: the default). The corpus
        opened reads as another one when it holds records: every view reading it hears so."""
        field = field.strip() or DEFAULT_TEXT_FIELD
        if field == self.state.text_field:
            return
        self.state.text_field = field
        source = self.state.corpus_source
        if source is not None and source.records:
            self.corpus_changed.emit()

    # ------------------------------------------------------------- a run
    def _start_over(self) -> RunState:
        """Empty the state of its run, in place (a view or a test holding ``state`` sees the
        new run; the controller keeps a copy to put back): the corpus, the editor's picked
        tokenizer and a replay's flag stay, and it gets a run id of its own. Returns a copy
        of the state before."""
        s = self.state
        before = dataclasses.replace(s)
        fresh = RunState(
            corpus=s.corpus,
            corpus_source=s.corpus_source,
            text_field=s.text_field,
            picked=s.picked,
            replaying=s.replaying,  # a replay under way hears of the reset and ends it
            # A save under way writes a copy made before it started: it ends as it would
            # have, whatever becomes of the run (what it marks saved is keyed by run id).
            saving=s.saving,
            run_id=next(self._run_ids),
        )
        for f in dataclasses.fields(RunState):
            setattr(s, f.name, getattr(fresh, f.name))
        return before

    def _replaced(self, old: RunState) -> None:
        """The state was replaced: every view rebuilds, and the last action's news ends."""
        self.end_notice()
        self.reset.emit()
        self.tokenizer_changed.emit()
        self.phase_changed.emit(self.state.phase)
        if self.state.step != old.step:
            self.step_changed.emit(self.state.step)
        self.saved_changed.emit()
        self.editor_series_changed.emit()
        self.updated.emit()

    def begin_run(self, settings: RunSettings, base_vocab: dict[int, bytes]) -> None:
        """A new run: empty record, bytes-only tokenizer, pre-tokenizing."""
        old, s = self._start_over(), self.state
        s.settings, s.base_vocab = settings, dict(base_vocab)
        s.run_corpus = s.corpus_source  # the controller trains on the corpus opened
        s.phase = Phase.PRE_TOKENIZING
        s.shown = TokenizerSource(
            "Tokenizer: bytes only (no merges yet)",
            vocab=s.base_vocab,
            special_tokens=settings.special_tokens,
            pattern=settings.pattern,
            run_id=s.run_id,
        )
        self._replaced(old)

    def set_progress(self, done: int, total: int) -> None:
        self.state.bytes_done, self.state.bytes_total = done, total

    def set_counting_on(self, where: str) -> None:
        """Where the pre-tokens are counted (a cluster; shown next frame)."""
        self.state.counting_on = where

    def set_compiling(self, compiling: bool) -> None:
        """Whether the merge engine is compiling now (shown next frame)."""
        self.state.compiling = compiling

    def start_merging(self, started_at: float | None = None) -> None:
        """The merge phase begins (``started_at`` seconds into the run; default: the
        elapsed time last set); the merges recorded so far are shown."""
        s = self.state
        s.merge_start = s.elapsed if started_at is None else started_at
        s.compiling = False
        if s.phase is Phase.PAUSED:
            s.resume_to = Phase.MERGING
        else:
            self.set_phase(Phase.MERGING)

    def append_merges(self, batch: Sequence[MergeStep]) -> None:
        """Add merges to the record; the views see them at the next :meth:`publish`."""
        self.state.record.extend(batch)

    def set_pair_history(self, history: PairHistory) -> None:
        """The run's record of the best pairs before each merge, once merging starts (the pair
        chart reads it; the trainer fills it in)."""
        self.state.pair_history = history

    def set_clock(self, rate: float, elapsed: float, remaining: float | None = None) -> None:
        """Merges per second lately, the run's seconds so far, and the merging left (an
        estimate; None until there is a credible one)."""
        self.state.rate, self.state.elapsed, self.state.remaining = rate, elapsed, remaining

    def set_paused(self, paused: bool) -> None:
        s = self.state
        if paused and s.phase in (Phase.PRE_TOKENIZING, Phase.MERGING):
            s.resume_to = s.phase
            self.set_phase(Phase.PAUSED)
        elif not paused and s.phase is Phase.PAUSED:
            phase, s.resume_to = s.resume_to or Phase.MERGING, None
            self.set_phase(phase)

    def set_stopping(self) -> None:
        self.state.stopping = True
        self.updated.emit()

    def finish(self, result: TrainingResult | None, error: str | None = None) -> None:
        """The run's outcome: FINISHED, STOPPED, or FAILED (``result`` None)."""
        s = self.state
        s.result, s.resume_to, s.stopping = result, None, False
        if error is not None:
            s.error = error
        self.publish(emit_updated=False)
        if result is None:
            phase = Phase.FAILED
            if s.merges_done == 0:
                # A run that failed before its first merge has no tokenizer: the bytes-only
                # one shown while it started (with its settings, perhaps the pattern that
                # failed) goes, as a discarded run's does, and the views drop what they
                # showed of it (its 257 byte rows, its curves' step 0) on the reset below.
                # The controller puts back the run before, unless the user discarded it.
                self.show_tokenizer(None)
                s.base_vocab = {}
                self._editor_series.forget_run(s.run_id)
            else:
                # The merges made before the failure stay on screen, the timeline at the
                # last: the run's tokenizer is all of them, not the one last rebuilt while
                # merging (paced: up to hundreds of merges short, which the editor, Compare
                # and the Report then showed at the steps past it).
                n = s.published
                build = run_tokenizer_at(s, n)
                self.show_tokenizer(
                    TokenizerSource.deferred(f"Tokenizer: {n:,} merges", build, n, s.run_id)
                )
        else:
            phase = Phase.STOPPED if result.stopped else Phase.FINISHED
            name = s.run_corpus.name if s.run_corpus else "corpus"
            self.show_tokenizer(
                TokenizerSource(
                    f"Tokenizer: trained on {name}, {len(result.merges):,} merges",
                    vocab=result.vocab,
                    merges=result.merges,
                    special_tokens=result.special_tokens,
                    pattern=result.pattern,
                    run_id=s.run_id,
                )
            )
        self.set_phase(phase)
        if result is None and s.merges_done == 0:
            self.editor_series_changed.emit()
            self.reset.emit()

    def restore(self, state: RunState) -> None:
        """Show an earlier state again (the run on screen before a Train that failed before
        its first merge; it keeps its run id, so its editor points come back too); the
        picked tokenizer and the corpus opened (with the Train page's text field) stay as they
        are now, and the run keeps the corpus it trained on (``run_corpus``: its in-sample
        curve measures that one)."""
        state.picked, state.corpus = self.state.picked, self.state.corpus
        state.corpus_source, state.text_field = self.state.corpus_source, self.state.text_field
        state.replaying, state.replay_paused = self.state.replaying, self.state.replay_paused
        state.selected_token = state.selected_in = None  # the views forget it on reset
        old, self.state = self.state, state
        self._replaced(old)

    def discard_run(self) -> None:
        """Drop the run (or loaded tokenizer) on screen for good: every view shows none, as at
        start. The corpus and the editor's picked tokenizer stay."""
        self._editor_series.forget_run(self.state.run_id)
        self._replaced(self._start_over())

    # ------------------------------------------------------ loaded files
    def set_loading(self, files: tuple[Path, Path]) -> None:
        self.state.loading, self.state.load_error = files, None
        self.updated.emit()

    def show_loaded(self, loaded: LoadedTokenizer) -> None:
        """A tokenizer read from files becomes the run on screen (saved: it is in files)."""
        old, s = self._start_over(), self.state
        s.loaded = loaded
        s.loaded_name = self.file_names.name(loaded.vocab_file)
        s.phase = Phase.LOADED
        s.published = s.saved_merges = len(loaded.merge_rows)
        s.step = s.published
        tok = loaded.tokenizer
        s.shown = TokenizerSource(
            f"Tokenizer: {s.loaded_name}, {len(tok.merges):,} merges",
            tokenizer=tok,
            run_id=s.run_id,
        )
        self._replaced(old)

    def offer(self, offered: object) -> None:
        """A load that gave a tokenizer to look at, not a run (``loader.OfferedTokenizer``):
        the run stays as it was; the views that list tokenizers offer it. The last action's
        news ends, as a load that replaces the run ends it (the file's own notes follow)."""
        self.end_notice()
        self.state.loading, self.state.load_error = None, None
        self.updated.emit()
        self.tokenizer_offered.emit(offered)

    def load_stopped(self, why: str) -> None:
        """A load under way was abandoned (``why``): what was shown stays, and the notice
        says which file did not load."""
        files = self.state.loading
        self.state.loading = None
        if files is not None:
            self.set_notice(f"Loading {files[0].name} was stopped: {why}")
        self.updated.emit()

    def load_failed(self, message: str) -> None:
        self.state.loading, self.state.load_error = None, message
        self.updated.emit()

    # ------------------------------------------------------------ views
    def publish(self, *, emit_updated: bool = True) -> None:
        """One frame: tell the views about the merges recorded since the last frame, move a
        live step to the newest merge shown, then ``updated``."""
        s = self.state
        n = len(s.merge_rows)
        if n > s.published:
            first, s.published = s.published, n
            self.merges_added.emit(first, n - 1)
        if s.live and s.step != s.published:
            s.step = s.published
            self.step_changed.emit(s.step)
        if self._notice_is_saved and unsaved_merges(s) > 0:
            # subtle: "Saved ..." of a paused run would outlive its truth once it merges on.
            self.end_notice()
        if emit_updated:
            self.updated.emit()

    def set_phase(self, phase: Phase) -> None:
        self.publish(emit_updated=False)
        if phase is not self.state.phase:
            self.state.phase = phase
            self.phase_changed.emit(phase)
        self.updated.emit()

    def show_tokenizer(self, source: TokenizerSource | None) -> None:
        self.state.shown = source
        self.tokenizer_changed.emit()

    def pick_tokenizer(self, source: TokenizerSource | None) -> None:
        """Show ``source`` in the editor instead of the run's tokenizer; None goes back to the
        run's tokenizer at the timeline's step."""
        self.state.picked = source
        self.tokenizer_changed.emit()

    def select_step(self, k: int) -> None:
        """Show step ``k`` (clamped to 0..published) everywhere; leaves live mode
        (:meth:`follow_live` returns to it). Cheap: called for every frame of a drag or a
        replay, so the views connected to ``step_changed`` do their heavy work off-thread."""
        s = self.state
        k = max(0, min(k, s.published))
        if s.live:
            s.live = False
            self.live_changed.emit(False)
        if k != s.step:
            s.step = k
            self.step_changed.emit(k)

    def step_by(self, delta: int) -> None:
        """Move the step by ``delta`` merges (leaves live mode)."""
        self.select_step(self.state.step + delta)

    def follow_live(self) -> None:
        """Follow the newest merge again (the step jumps to it now)."""
        if not self.state.live:
            self.state.live = True
            self.live_changed.emit(True)
        self.publish()

    def pause_replay(self) -> None:
        """The user acts in a view a playing replay moves (picks a merge in the list, which
        it scrolls): ask the replay to pause (``replay.Replay`` does), so what they picked
        stays in place."""
        if self.state.replaying and not self.state.replay_paused:
            self.replay_pause_asked.emit()

    def set_replaying(self, replaying: bool, paused: bool = False) -> None:
        """A replay started, paused, went on or ended (``replay.Replay`` calls this)."""
        paused = replaying and paused
        state = self.state
        if replaying != state.replaying or paused != state.replay_paused:
            state.replaying, state.replay_paused = replaying, paused
            self.replay_changed.emit(replaying)

    def select_token(self, token_id: int, source: TokenizerSource | None = None) -> None:
        """Select ``token_id`` of the run's vocabulary, or (``source``) of another tokenizer
        (the editor's picked one): the run's views then mark no row of their own."""
        self.state.selected_token, self.state.selected_in = token_id, source
        self.token_selected.emit(token_id)

    # ------------------------------------------------------------ panes
    def define_pane(self, pane: str, key: str, label: str) -> None:
        """A pane and the choice it starts with (its picker's default)."""
        self._panes.define(pane, key, label)

    def pane(self, pane: str) -> PaneChoice:
        """The choice ``pane`` shows now (its tokenizer built)."""
        return self._panes.shown(pane)

    def pick_under_way(self, pane: str) -> PaneChoice | None:
        """The pick whose tokenizer is being built for ``pane``, if any."""
        return self._panes.under_way(pane)

    def pick(self, pane: str, key: str, label: str) -> None:
        """The user picked ``key`` for ``pane``: the pane keeps showing its choice until the
        tokenizer is built (:meth:`pick_ready`) or the pick fails (:meth:`pick_failed_for`).
        Picking the choice shown again drops a pick under way."""
        if self._panes.pick(pane, key, label):
            self.pane_changed.emit(pane)

    def pick_ready(self, pane: str, key: str) -> bool:
        """The tokenizer of the pick ``key`` is built: the pane shows it now. False (nothing
        changes) when that pick is no longer the one under way."""
        if not self._panes.ready(pane, key):
            return False
        self.pane_changed.emit(pane)
        return True

    def pick_failed_for(self, pane: str, key: str, message: str) -> bool:
        """The pick ``key`` could not be built: the pane keeps the choice it showed, and the
        failure is kept with it (until the next pick) and announced (``pick_failed``)."""
        pick = self._panes.under_way(pane)
        if pick is None or not self._panes.failed(pane, key, message):
            return False
        self.pane_changed.emit(pane)
        self.pick_failed.emit(pane, pick.label, message)
        return True

    def read_file_again(self, path: str) -> None:
        """The user loaded the tokenizer file ``path`` again ("Load tokenizer file…" in any
        picker): it is read anew wherever it is used (``file_versions.read_again``), and
        every view hears it (``file_read_again``)."""
        read_again(path)
        self.file_read_again.emit(path)

    # --------------------------------------------------- editor and plot
    def set_editor_text(self, text: str) -> None:
        """The editor's text, as the editor hands it over (after a pause in typing)."""
        if text != self.editor_text:
            self.editor_text = text
            self.text_changed.emit()
            self.editor_series_changed.emit()

    def set_heldout(self, path: Path) -> None:
        if path != self.heldout:
            self.heldout = path
            self.heldout_changed.emit()

    def add_editor_point(self, run_id: int, text: str, step: int, bytes_per_token: float) -> bool:
        """The editor measured ``text`` at ``step`` of run ``run_id``; kept with that text and
        run. False (and nothing shown) when either is no longer the one on screen."""
        if run_id != self.state.run_id or text != self.editor_text:
            return False
        self._editor_series.add(run_id, text, step, bytes_per_token)
        self.editor_series_changed.emit()
        return True

    def editor_points(self) -> dict[int, float]:
        """The editor's points ``step -> bytes per token`` for the text in the editor and the
        run on screen."""
        return self._editor_series.points(self.state.run_id, self.editor_text)

    # ------------------------------------------------------ saving, news
    def set_saving(self, news: SaveNews | None) -> None:
        """A Save is under way (``news``: its files, its folder once chosen), or none."""
        self.state.saving = news
        self.updated.emit()

    def mark_saved(self, merges: int) -> None:
        """A Save wrote the run's first ``merges`` merges to files."""
        self.state.saved_merges = max(self.state.saved_merges, merges)
        self.saved_changed.emit()
        self.updated.emit()

    @property
    def unsaved(self) -> int:
        """Merges of the run on screen that no file holds (``saving.unsaved_merges``)."""
        return unsaved_merges(self.state)

    def set_notice(self, text: str, *, saved: bool = False) -> None:
        """News of the last action, until the next one (``saved``: it says a Save wrote the
        run, and ends when the run learns more)."""
        self.notice, self._notice_is_saved = text, saved
        self.notice_changed.emit()

    def end_notice(self) -> None:
        """The user moved on: the last action's news ends (a failed load's too)."""
        changed = self.notice is not None or self.state.load_error is not None
        self.notice, self._notice_is_saved = None, False
        if self.state.load_error is not None:
            self.state.load_error = None
            self.updated.emit()
        if changed:
            self.notice_changed.emit()
