"""What the app does when asked: open a corpus, train, pause, stop, save, load.

What it does: :class:`Controller` turns those requests into changes of the
:class:`~bpe_studio.gui.hub.StateHub`'s state: it checks the corpus, starts a
:class:`~bpe_studio.gui.session.TrainingSession` (which writes the run into the hub), rebuilds
the editor's tokenizer from the state's record every few hundred merges while training, saves
the tokenizer on screen, and loads a tokenizer in the background
(:class:`~bpe_studio.gui.loader.TokenizerLoader`). Problems are reported through ``error``
(title, plain-text message naming the file and reason); the app carries on.
What it leaves out: widgets and dialogs (``main_window``), and the training itself (``worker``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from ..core.gpt2_format import save_files
from ..core.vocab import initial_vocab
from . import responsiveness
from .hub import StateHub
from .loader import TokenizerLoader
from .responsiveness import GuiTurn
from .session import TrainingSession
from .spans import TokenizerSource
from .state import LoadedTokenizer, Phase, RunSettings
from .worker import TrainingConfig, TrainingResult


class Controller(QObject):
    error = Signal(str, str)  # title, message (plain text)
    load_finished = Signal(bool)  # a load() ended: loaded, or failed (error was emitted)
    saved = Signal(str)  # a one-line message naming the files written

    def __init__(self, hub: StateHub, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.session: TrainingSession | None = None
        self.loader = TokenizerLoader(self)
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_load_failed)
        # When the editor's tokenizer was last rebuilt while training: merges, time.
        self._editor_at = (0, 0.0)
        hub.updated.connect(self._maybe_refresh_editor)

    @property
    def training(self) -> bool:
        return self.hub.state.phase.training

    @property
    def busy(self) -> bool:
        """Training or loading: nothing else may start."""
        return self.training or self.loader.busy

    def gui_turn(self) -> GuiTurn | None:
        """The running session's hold on the trainer (``responsiveness``), if one runs."""
        return self.session.turn if self.session is not None else None

    # -------------------------------------------------------------- corpus
    def open_corpus(self, path: str | os.PathLike) -> bool:
        p = Path(path).expanduser()
        if not p.exists():
            self.error.emit("Cannot open corpus", f"{p}: no such file")
            return False
        if not p.is_file():
            self.error.emit("Cannot open corpus", f"{p}: not a regular file")
            return False
        self.hub.set_corpus(p.resolve())
        return True

    # ------------------------------------------------------------ training
    def start_training(
        self, vocab_size: int, special_tokens: tuple[str, ...], workers: int | None
    ) -> bool:
        if self.busy:
            return False
        corpus = self.hub.state.corpus
        if corpus is None:
            self.error.emit("No corpus", "Open a corpus file first (or drop one on the window).")
            return False
        config = TrainingConfig(corpus, vocab_size, special_tokens, workers)
        if self.session is not None:
            self.session.shutdown()  # its thread has ended; make sure it is released
            self.session.deleteLater()
        target = vocab_size - 256 - len(special_tokens)
        self.hub.begin_run(
            RunSettings(vocab_size, special_tokens, target), initial_vocab(list(special_tokens))
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
            n - at < responsiveness.EDITOR_REFRESH_MERGES
            or now - when < responsiveness.EDITOR_REFRESH_SECONDS
        ):
            return
        self._editor_at = (n, now)
        # Built in the span thread on first use, from the record up to the step shown.
        self.hub.show_tokenizer(
            TokenizerSource(
                f"Tokenizer: training, {n:,} merges so far",
                vocab=state.vocab_at(n),
                merges=state.merges_at(n),
                special_tokens=state.settings.special_tokens,
            )
        )

    @Slot(object)
    def _on_finished(self, result: TrainingResult | None) -> None:
        state = self.hub.state
        if result is None:
            name = state.corpus.name if state.corpus else "the corpus"
            self.error.emit("Training failed", f"Training on {name} failed.\n\n{state.error}")

    # ------------------------------------------------------ save and load
    def save(self, directory: str | os.PathLike) -> bool:
        """Write vocab.json + merges.txt (atomically) for the tokenizer on screen."""
        saveable = self.hub.state.saveable()
        if saveable is None:
            self.error.emit("Nothing to save", "Train or load a tokenizer first.")
            return False
        vocab, merges = saveable
        target = Path(directory)
        try:
            target.mkdir(parents=True, exist_ok=True)
            vocab_path, merges_path = save_files(target, vocab, merges)
        except (OSError, ValueError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            self.error.emit(
                "Could not save tokenizer", f"Could not save the tokenizer to {target}:\n\n{reason}"
            )
            return False
        self.saved.emit(f"Saved {vocab_path} and {merges_path}")
        return True

    def load(self, vocab_file: Path, merges_file: Path) -> bool:
        """Start loading a GPT-2-format tokenizer in the background; False if busy."""
        if self.busy:
            return False
        self.loader.load(vocab_file, merges_file)
        self.hub.set_loading((vocab_file, merges_file))
        return True

    @Slot(object)
    def _on_loaded(self, loaded: LoadedTokenizer) -> None:
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
