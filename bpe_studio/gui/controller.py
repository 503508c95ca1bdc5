"""What the app does when asked: open a corpus, train, pause, stop, save, load.

What it does: :class:`Controller` turns those requests into changes of the
:class:`~bpe_studio.gui.hub.StateHub`'s state: it checks the corpus, starts a
:class:`~bpe_studio.gui.session.TrainingSession` (which writes the run into the hub), rebuilds
the editor's tokenizer from the state's record every few hundred merges while training, saves
the tokenizer on screen (also a paused run's merges so far) in any of the three formats, and
loads a tokenizer file of any of them in the background
(:class:`~bpe_studio.gui.loader.TokenizerLoader`); a loaded file becomes the run on screen, so
its merges and vocabulary fill the tables. A Train that fails before its first merge (or is
stopped before it) puts the tokenizer that was on screen back. Before Train, Load or a new
corpus discards a trained tokenizer that was never saved, and before Save replaces files, it
asks (:meth:`confirm`, which the window answers with a dialog and tests replace); ``notice``
carries one-line news for the status bar. Problems are reported through
``error`` (title, plain-text message naming the file and reason); the app carries on.
What it leaves out: widgets and dialogs (``main_window``), and the training itself (``worker``).
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from ..core import Tokenizer
from ..core.corpus.records import DEFAULT_TEXT_FIELD
from ..core.corpus.sources import is_glob_or_url
from ..core.formats.data import TokenizerData
from ..core.formats.files import DEFAULT_NAME, save_data
from ..core.formats.tiktoken_file import sidecar_name
from ..core.train.vocab import BYTE_TOKENS, initial_vocab
from .controls import nothing_learned
from .hub import StateHub
from .loader import OfferedTokenizer, TokenizerLoader
from .model.corpus_source import CorpusSource, corpus_source
from .model.state import LoadedTokenizer, Phase, RunSettings, RunState, TrainingResult
from .model.tokenizer_source import TokenizerSource
from .responsiveness import frame_budget
from .responsiveness.collector import keep_out_of_collections
from .responsiveness.trainer_hold import GuiTurn
from .session import TrainingSession
from .worker import TrainingConfig, describe_error

# The files Save writes in each format (Tokenizer.save / core.tokenizer_files.save_data).
SAVED_FILES: dict[str, tuple[str, ...]] = {
    "gpt2": ("vocab.json", "merges.txt"),
    "hf": ("tokenizer.json",),
    "tiktoken": (f"{DEFAULT_NAME}.tiktoken", sidecar_name(DEFAULT_NAME)),
}


class Controller(QObject):
    error = Signal(str, str)  # title, message (plain text)
    load_finished = Signal(bool)  # a load() ended: loaded, or failed (error was emitted)
    saved = Signal(str)  # a one-line message naming the files written
    notice = Signal(str)  # a one-line message for the status bar

    def __init__(self, hub: StateHub, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.session: TrainingSession | None = None
        self.loader = TokenizerLoader(self)
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_load_failed)
        # When the editor's tokenizer was last rebuilt while training: merges, time.
        self._editor_at = (0, 0.0)
        self._pattern = "gpt2"  # of the current (or last) run
        # What was on screen when Train was clicked: put back if the run fails before merging.
        self._before_run: RunState | None = None
        # A trained result nobody saved yet: Train, Load or a new corpus ask before dropping it.
        self._unsaved: TrainingResult | None = None
        # Asked before discarding or overwriting: (title, question) -> go ahead? The window
        # answers with a dialog; tests replace it.
        self.confirm: Callable[[str, str], bool] = lambda title, question: True
        # subtle: the rebuild is its own turn of the event loop, after the frame that asked for
        # it and its repaint: inside the frame, the editor, the explanation pages and their jobs
        # reacting to a new tokenizer would run with the trainer held, and the span job started
        # then would contend with the frame's repaint for the GIL (docs/responsiveness.md).
        self._editor_turn = QTimer(self)
        self._editor_turn.setSingleShot(True)
        self._editor_turn.setInterval(0)
        self._editor_turn.timeout.connect(self._maybe_refresh_editor)
        hub.updated.connect(self._editor_turn.start)

    @property
    def training(self) -> bool:
        return self.hub.state.phase.training

    @property
    def busy(self) -> bool:
        """Training or loading: nothing else may start."""
        return self.training or self.loader.busy

    def gui_turn(self) -> GuiTurn | None:
        """The running session's hold on the trainer (``responsiveness.trainer_hold``), if one
        runs."""
        return self.session.turn if self.session is not None else None

    def _may_discard(self, action: str, *, now: bool = True) -> bool:
        """True unless an unsaved trained tokenizer would be lost and the user says no. Once
        the user says yes, the run is gone from every view (``StateHub.discard_run``), unless
        not ``now``: a Train puts it back if it fails before its first merge."""
        result = self._unsaved
        if result is None or result is not self.hub.state.result:
            return True
        if not self.confirm(
            "Discard the trained tokenizer?",
            f"The tokenizer trained on this run ({len(result.merges):,} merges) has not been "
            f"saved. {action} discards it.\n\nDiscard it?",
        ):
            return False
        self._unsaved = None
        if now:
            self.hub.discard_run()
        return True

    def _corpus_problem(self, paths: list[str]) -> tuple[CorpusSource | None, str | None]:
        """The corpus ``paths`` name, or why it cannot be trained on (naming the file)."""
        for path in paths:
            if is_glob_or_url(path):
                continue
            p = Path(path)
            if not p.exists():
                return None, f"{p}: no such file"
            if not p.is_file():
                return None, f"{p}: not a regular file"
        try:
            source = corpus_source(paths)
        except (OSError, ValueError) as error:
            return None, describe_error(error)
        if source.size == 0:
            empty = "the file is empty" if source.files == 1 else "the files are empty"
            named = paths[0] if len(paths) == 1 else source.name
            return None, f"{named}: {empty}: there is nothing to train on"
        return source, None

    # -------------------------------------------------------------- corpus
    def open_corpus(self, path: str | os.PathLike | list[str]) -> bool:
        """Open a corpus: a text file, or several files, a glob or URLs counted as one
        (compressed files, JSON Lines and Parquet records too)."""
        given = [os.fspath(path)] if isinstance(path, (str, os.PathLike)) else path
        paths = [p if is_glob_or_url(p) else os.path.abspath(os.path.expanduser(p)) for p in given]
        source, problem = self._corpus_problem(paths)
        if source is None:
            self.error.emit("Cannot open corpus", problem or "")
            return False
        old = self.hub.state.corpus_source
        if (old is None or old.paths != source.paths) and not self._may_discard(
            "Opening another corpus"
        ):
            return False
        self.hub.set_corpus(source)
        return True

    # ------------------------------------------------------------ training
    def start_training(
        self,
        vocab_size: int,
        special_tokens: tuple[str, ...],
        workers: int | None,
        pattern: str = "gpt2",
        text_field: str = DEFAULT_TEXT_FIELD,
        cluster: str | None = None,
    ) -> bool:
        if self.busy:
            return False
        opened = self.hub.state.corpus_source
        if opened is None:
            self.error.emit("No corpus", "Open a corpus file first (or drop one on the window).")
            return False
        # It may have changed since it was opened.
        source, problem = self._corpus_problem(list(opened.paths))
        if source is None:
            self.error.emit("Cannot train", problem or "")
            return False
        if not self._may_discard("Training again", now=False):
            return False
        config = TrainingConfig(
            source.paths, vocab_size, special_tokens, workers, pattern, text_field, cluster
        )
        self._pattern = pattern
        state = self.hub.state
        # subtle: a shallow copy is enough: begin_run replaces the record, vocabularies and
        # results with new objects rather than changing the old ones.
        self._before_run = copy.copy(state) if state.phase is not Phase.IDLE else None
        if self.session is not None:
            self.session.shutdown()  # its thread has ended; make sure it is released
            self.session.deleteLater()
        target = vocab_size - 256 - len(special_tokens)
        self.hub.begin_run(
            RunSettings(vocab_size, special_tokens, target, pattern),
            initial_vocab(list(special_tokens)),
        )
        self._editor_at = (0, time.perf_counter())
        session = TrainingSession(config, self.hub, self)
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
        contends with the trainer for the GIL); while paused, whenever the step moved."""
        state = self.hub.state
        if state.settings is None or state.phase not in (Phase.MERGING, Phase.PAUSED):
            return
        n = state.step
        at, when = self._editor_at
        now = time.perf_counter()
        if n == at:
            return
        if state.phase is Phase.MERGING and (
            n - at < frame_budget.EDITOR_REFRESH_MERGES
            or now - when < frame_budget.EDITOR_REFRESH_SECONDS
        ):
            return
        self._editor_at = (n, now)
        # subtle: built in the span thread on first use, from the record up to the step shown:
        # building its vocabulary and merges here, on the GUI thread while the trainer runs,
        # would make the largest gaps of a run (docs/responsiveness.md). The state is read
        # there as it is then, as the vocabulary table's jobs read it: the record only grows,
        # so its first n merges are this run's; after a reset or a load meanwhile this source
        # is no longer shown and its result is dropped.
        specials, pattern = list(state.settings.special_tokens), self._pattern

        def make() -> Tokenizer:
            return Tokenizer(state.vocab_at(n), state.merges_at(n), specials, pattern)

        label = f"Tokenizer: training, {n:,} merges so far"
        self.hub.show_tokenizer(TokenizerSource.deferred(label, make, n))

    @Slot(object)
    def _on_finished(self, result: TrainingResult | None) -> None:
        state = self.hub.state
        before, self._before_run = self._before_run, None
        if result is None:
            name = state.corpus_source.name if state.corpus_source else "the corpus"
            message = f"Training on {name} failed.\n\n{state.error}"
            if before is not None and state.merges_done == 0:
                # Nothing new was learned: the tokenizer that was on screen comes back.
                self.hub.restore(before)
                message += "\n\nThe tokenizer shown before is still shown."
            self.error.emit("Training failed", message)
        elif result.merges:
            self._unsaved = result
        elif before is not None:
            # Nothing learned (stopped before the first merge, or no pair to merge): as if
            # Train had not been clicked.
            why = (
                "Stopped before the first merge: nothing was learned"
                if result.stopped
                else nothing_learned(state)
            )
            self.hub.restore(before)
            self.notice.emit(f"{why}; the tokenizer shown before is shown again")

    # ------------------------------------------------------ save and load
    def saveable_data(self) -> TokenizerData | None:
        """What Save writes: the loaded tokenizer, the run's result, or a paused run's merges
        so far; None when there is nothing (no tokenizer, or no merge learned)."""
        state = self.hub.state
        if state.loaded is not None:
            return state.loaded.tokenizer.to_data()
        if state.phase is Phase.PAUSED and state.settings is not None:
            self.hub.publish()  # the merges recorded so far, shown and saved alike
            n = state.merges_done
            if n == 0:
                return None
            vocab, merges = state.vocab_at(n), state.merges_at(n)
            specials, pattern = state.settings.special_tokens, self._pattern
        elif state.result is not None and state.phase in (Phase.FINISHED, Phase.STOPPED):
            if not state.result.merges:
                return None
            vocab, merges = dict(state.result.vocab), list(state.result.merges)
            # subtle: the result's own pattern, not the last Train's: a Train that failed
            # put an earlier run back on screen (``hub.restore``).
            specials, pattern = state.result.special_tokens, state.result.pattern
        else:
            return None
        ids = {tok: BYTE_TOKENS + i for i, tok in enumerate(specials)}
        return TokenizerData(vocab, merges, ids, pattern)

    def save(self, directory: str | os.PathLike, format: str = "gpt2") -> bool:
        """Write the tokenizer on screen into ``directory`` in ``format`` ("gpt2", "hf",
        "tiktoken"; see ``SAVED_FILES``), each file atomically; files already there are
        replaced only if :meth:`confirm` says so."""
        data = self.saveable_data()
        if data is None:
            self.error.emit(
                "Nothing to save", "Train or load a tokenizer first: no merge has been learned."
            )
            return False
        target = Path(directory)
        existing = [target / name for name in SAVED_FILES[format] if (target / name).exists()]
        if existing and not self.confirm(
            "Replace files?",
            f"{', '.join(p.name for p in existing)} already "
            f"{'exists' if len(existing) == 1 else 'exist'} in {target}.\n\nReplace "
            f"{'it' if len(existing) == 1 else 'them'}?",
        ):
            return False
        try:
            target.mkdir(parents=True, exist_ok=True)
            written = save_data(target, data, format)
        except (OSError, ValueError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            self.error.emit(
                "Could not save tokenizer", f"Could not save the tokenizer to {target}:\n\n{reason}"
            )
            return False
        state = self.hub.state
        if self._unsaved is not None and state.result is self._unsaved:
            self._unsaved = None
        self.saved.emit(f"Saved {' and '.join(str(p) for p in written)}")
        return True

    def load(
        self, vocab_file: Path, merges_file: Path | None = None, pattern: str | None = None
    ) -> bool:
        """Start loading a tokenizer in the background: a GPT-2 vocab + merges pair, or
        (``merges_file`` None) any tokenizer file (``loader.prepare_file``; ``pattern`` for a
        rank file that does not give its own). False if busy or the user kept an unsaved
        tokenizer."""
        if self.busy or not self._may_discard("Loading a tokenizer"):
            return False
        self.loader.load(vocab_file, merges_file, pattern)
        self.hub.set_loading((vocab_file, merges_file or vocab_file))
        return True

    @Slot(object)
    def _on_loaded(self, loaded: LoadedTokenizer | OfferedTokenizer) -> None:
        keep_out_of_collections()
        if isinstance(loaded, OfferedTokenizer):
            self.hub.offer(loaded)
        else:
            self.hub.show_loaded(loaded)
        self.load_finished.emit(True)

    @Slot(str)
    def _on_load_failed(self, message: str) -> None:
        self.hub.load_failed(message)
        self.error.emit("Could not load tokenizer", message)
        self.load_finished.emit(False)

    # ------------------------------------------------------------- closing
    def shutdown(self) -> None:
        """Stop training and loading, and wait for their threads."""
        if self.session is not None:
            self.session.shutdown()
        self.loader.shutdown()
