"""The one owner of the :class:`~.model.state.RunState`, and the signals that say what changed.

What it does: :class:`StateHub` holds the state; the training session and the controller
change it only through the hub's methods, and the views read ``hub.state`` when a signal tells
them to. Merges arrive in the record many times a second but are *published* to the views
together, in one frame (:meth:`StateHub.publish`): ``merges_added`` for the new rows, then the
step, then ``updated``. Every view repaints from that frame, so one repaint never shows two
different steps.
What it leaves out: threads (``session``), file dialogs and the train/load/save flow
(``controller``), drawing (``views/``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from ..core import MergeStep
from ..core.train.pair_history import PairHistory
from .model.corpus_source import CorpusSource
from .model.state import LoadedTokenizer, Phase, RunSettings, RunState, TrainingResult
from .model.tokenizer_source import TokenizerSource


class StateHub(QObject):
    """Owns the state; every signal is emitted on the GUI thread after the state changed."""

    reset = Signal()  # a new run began or a tokenizer was loaded: rebuild from the state
    phase_changed = Signal(object)  # Phase
    corpus_changed = Signal()
    merges_added = Signal(int, int)  # first, last index into state.merge_rows now published
    step_changed = Signal(int)  # the step every view shows
    live_changed = Signal(bool)  # state.live: the step follows the newest merge (or not)
    replay_changed = Signal(bool)  # state.replaying: a replay animates the step
    tokenizer_changed = Signal()  # state.shown (the editor's tokenizer) was replaced
    token_selected = Signal(int)  # a token id, selected in any view
    # A tokenizer of another kind than byte-level BPE, loaded to look at (never the run): the
    # editor's picker, Compare and Report list it (a loader.OfferedTokenizer).
    tokenizer_offered = Signal(object)
    updated = Signal()  # end of a frame: redraw whatever depends on progress, pairs, step

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = RunState()

    @property
    def published(self) -> int:
        """How many merge rows the views show (the record may be ahead until the next frame)."""
        return self.state.published

    # ------------------------------------------------------------ corpus
    def set_corpus(self, source: CorpusSource | None) -> None:
        self.state.corpus_source = source
        self.state.corpus = source.plain if source is not None else None
        self.state.load_error = None  # a failed load's news ends with the next action
        self.corpus_changed.emit()
        self.updated.emit()

    def dismiss_load_error(self) -> None:
        """The user moved on: the last load's failure is no longer news."""
        if self.state.load_error is not None:
            self.state.load_error = None
            self.updated.emit()

    # ------------------------------------------------------------- a run
    def begin_run(self, settings: RunSettings, base_vocab: dict[int, bytes]) -> None:
        """A new run: empty record, bytes-only tokenizer, pre-tokenizing."""
        s = self.state
        s.settings, s.base_vocab = settings, dict(base_vocab)
        s.record, s.loaded, s.result, s.error = [], None, None, None
        s.step, s.live, s.selected_token = 0, True, None
        s.bytes_done = s.bytes_total = 0
        s.compiling = False
        s.counting_on = None
        s.rate = s.elapsed = 0.0
        s.merge_start = s.remaining = None
        s.selected_in = None
        s.pair_history = None
        s.stopping, s.resume_to = False, None
        s.phase = Phase.PRE_TOKENIZING
        s.published, s.load_error = 0, None
        s.shown = TokenizerSource(
            "Tokenizer: bytes only (no merges yet)",
            vocab=s.base_vocab,
            special_tokens=settings.special_tokens,
            pattern=settings.pattern,
        )
        self.reset.emit()
        self.tokenizer_changed.emit()
        self.phase_changed.emit(s.phase)
        self.updated.emit()

    def set_progress(self, done: int, total: int) -> None:
        self.state.bytes_done, self.state.bytes_total = done, total

    def set_counting_on(self, where: str) -> None:
        """Where the pre-tokens are counted (a cluster; shown next frame)."""
        self.state.counting_on = where

    def set_compiling(self, compiling: bool) -> None:
        """Whether the merge engine is compiling now (shown next frame)."""
        self.state.compiling = compiling

    def start_merging(self, target_merges: int, started_at: float | None = None) -> None:
        """The merge phase begins (``started_at`` seconds into the run; default: the
        elapsed time last set); the merges recorded so far are shown."""
        s = self.state
        if s.settings is not None:
            s.settings = dataclasses.replace(s.settings, target_merges=target_merges)
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
        else:
            phase = Phase.STOPPED if result.stopped else Phase.FINISHED
            name = s.corpus_source.name if s.corpus_source else "corpus"
            self.show_tokenizer(
                TokenizerSource(
                    f"Tokenizer: trained on {name}, {len(result.merges):,} merges",
                    vocab=result.vocab,
                    merges=result.merges,
                    special_tokens=result.special_tokens,
                    pattern=result.pattern,
                )
            )
        self.set_phase(phase)

    def restore(self, state: RunState) -> None:
        """Show an earlier state again (the run on screen before a Train that failed before
        its first merge); the picked tokenizer and the corpus stay as they are now."""
        state.picked, state.corpus = self.state.picked, self.state.corpus
        state.corpus_source = self.state.corpus_source
        state.selected_token = state.selected_in = None  # the views forget it on reset
        self.state = state
        self.reset.emit()
        self.tokenizer_changed.emit()
        self.phase_changed.emit(state.phase)
        self.step_changed.emit(state.step)
        self.updated.emit()

    def discard_run(self) -> None:
        """Drop the run (or loaded tokenizer) on screen: every view shows none, as at start.
        The corpus and the editor's picked tokenizer stay."""
        old = self.state
        self.state = RunState(corpus=old.corpus, corpus_source=old.corpus_source, picked=old.picked)
        self.reset.emit()
        self.tokenizer_changed.emit()
        self.phase_changed.emit(Phase.IDLE)
        self.step_changed.emit(0)
        self.updated.emit()

    # ------------------------------------------------------ loaded files
    def set_loading(self, files: tuple[Path, Path]) -> None:
        self.state.loading, self.state.load_error = files, None
        self.updated.emit()

    def show_loaded(self, loaded: LoadedTokenizer) -> None:
        s = self.state
        s.loaded, s.result, s.record, s.error, s.settings = loaded, None, [], None, None
        s.base_vocab = {}
        s.loading, s.load_error, s.stopping, s.resume_to = None, None, False, None
        s.selected_token, s.selected_in = None, None
        s.pair_history = None
        s.merge_start = s.remaining = None
        s.phase = Phase.LOADED
        s.published = len(loaded.merge_rows)
        s.step, s.live = s.published, True
        tok = loaded.tokenizer
        s.shown = TokenizerSource(
            f"Tokenizer: {loaded.vocab_file.name}, {len(tok.merges):,} merges", tokenizer=tok
        )
        self.reset.emit()
        self.tokenizer_changed.emit()
        self.phase_changed.emit(s.phase)
        self.updated.emit()

    def offer(self, offered: object) -> None:
        """A load that gave a tokenizer to look at, not a run (``loader.OfferedTokenizer``):
        the run stays as it was; the views that list tokenizers offer it."""
        self.state.loading, self.state.load_error = None, None
        self.updated.emit()
        self.tokenizer_offered.emit(offered)

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

    def set_replaying(self, replaying: bool) -> None:
        """A replay started or ended (``replay.Replay`` calls this)."""
        if replaying != self.state.replaying:
            self.state.replaying = replaying
            self.replay_changed.emit(replaying)

    def select_token(self, token_id: int, source: TokenizerSource | None = None) -> None:
        """Select ``token_id`` of the run's vocabulary, or (``source``) of another tokenizer
        (the editor's picked one): the run's views then mark no row of their own."""
        self.state.selected_token, self.state.selected_in = token_id, source
        self.token_selected.emit(token_id)
