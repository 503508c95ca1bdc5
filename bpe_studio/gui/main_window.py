"""The main window: wires the training controls, one training session and the four views.

What it does: opens a corpus (dialog or drag-and-drop), starts a
:class:`~bpe_studio.gui.session.TrainingSession` and feeds its batches to the merge list, the
vocabulary table, the pair chart and (every few hundred merges) the editor's tokenizer; saves
the result, or loads any GPT-2-format tokenizer to inspect. Errors go to a dialog that names
the file and reason, and the app carries on. Closing the window stops training and waits for
its thread.
What it leaves out: how each view draws (``views/``) and the training itself (``worker``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path

from PySide6.QtCore import QEvent, QSize, Qt, Signal, Slot
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ..core import MergeStep, Tokenizer
from ..core.gpt2_format import save_files
from ..core.vocab import initial_vocab
from .controls import TrainingPanel, format_duration, status_text
from .loader import LoadedTokenizer, TokenizerLoader
from .models import MergeTableModel, VocabTableModel
from .session import TrainingSession
from .spans import TokenizerSource
from .views.merge_list import MergeListView
from .views.pair_chart import PairChart
from .views.token_editor import TokenEditor
from .views.vocab_table import VocabTableView
from .worker import TrainingConfig, TrainingResult

# The editor re-tokenizes with the merges so far every this many merges, but not more often
# than every EDITOR_REFRESH_SECONDS: each refresh builds a tokenizer in the span thread, a third
# thread contending for the GIL (refreshing 4 times a second cost the trainer a fifth of its
# speed and doubled the GUI's stalls).
EDITOR_REFRESH_MERGES = 400
EDITOR_REFRESH_SECONDS = 1.0
# While training, the status line and the plots are redrawn every this many ticks of the
# session (20 a second), in the same pass as the tables: one repaint per tick.
REDRAW_EVERY_TICKS = 4

SAMPLE_TEXT = (
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
    "sunshine with her dog, Max.\n"
    'One day, Lily found a shiny red ball under a big tree. "Look, Max!" she said.\n'
    "\tNumbers like 2024 and 3.14, and   extra   spaces, tokenize too.\n"
    "中文分词：你好，世界！ Emoji: 😀😊 · café, naïve\n"
    "<|endoftext|>\n"
)


class MainWindow(QMainWindow):
    load_finished = Signal(bool)  # a load_tokenizer() call ended: loaded, or failed (dialog)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("BPE Studio")
        self.setAcceptDrops(True)
        self.merge_model = MergeTableModel(self)
        self.vocab_model = VocabTableModel(self)
        self.panel = TrainingPanel(self)
        self.merge_list = MergeListView(self.merge_model)
        self.chart = PairChart()
        self.vocab_table = VocabTableView(self.vocab_model)
        self.editor = TokenEditor()

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.merge_list)
        top.addWidget(self.chart)
        top.setSizes([430, 970])
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.vocab_table)
        bottom.addWidget(self.editor)
        bottom.setSizes([560, 840])
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(top)
        body.addWidget(bottom)
        body.setSizes([430, 400])
        for splitter in (top, bottom, body):
            splitter.setChildrenCollapsible(False)
            splitter.setHandleWidth(8)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.setSpacing(6)
        layout.addWidget(self.panel)
        layout.addWidget(body, 1)
        self.setCentralWidget(central)
        self.statusBar()

        self.corpus: Path | None = None
        self.session: TrainingSession | None = None
        self.result: TrainingResult | None = None
        self.loaded: Tokenizer | None = None
        self.last_error: str | None = None
        self.error_box: QMessageBox | None = None
        self._vocab: dict[int, bytes] = {}  # the vocabulary before the first merge
        self._editor_at = 0
        self._editor_time = 0.0
        self._ticks = 0
        self._vocab_pending: list[MergeStep] = []  # merges not yet in the vocabulary table
        self.loader = TokenizerLoader(self)
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_load_failed)

        p = self.panel
        p.open_button.clicked.connect(self._choose_corpus)
        p.train_button.clicked.connect(self.start_training)
        p.pause_button.clicked.connect(self.toggle_pause)
        p.stop_button.clicked.connect(self.stop_training)
        p.save_button.clicked.connect(self._choose_save_directory)
        p.load_button.clicked.connect(self._choose_tokenizer)
        self.merge_list.merge_selected.connect(self._select_token)
        self.editor.set_text(SAMPLE_TEXT)
        self._refresh_state()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(1440, 900)

    # --------------------------------------------------------------- state
    @property
    def training(self) -> bool:
        """True from Train until the run's result arrives."""
        return self.session is not None and self.session.phase in ("pre-tokenizing", "merging")

    def _refresh_state(self) -> None:
        if self.training:
            state = "paused" if self.session and self.session.paused else "running"
        elif self.loader.busy:
            state = "loading"
        else:
            state = "done" if (self.result or self.loaded) else "idle"
        self.panel.set_state(
            state,
            has_corpus=self.corpus is not None,
            can_save=self.result is not None or self.loaded is not None,
        )

    def show_error(self, title: str, message: str) -> None:
        """A window-modal error box (not blocking the event loop); the app carries on."""
        self.last_error = message
        box = QMessageBox(
            QMessageBox.Icon.Critical, title, message, QMessageBox.StandardButton.Ok, self
        )
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.error_box = box

    # -------------------------------------------------------------- corpus
    def open_corpus(self, path: str | os.PathLike) -> bool:
        p = Path(path).expanduser()
        if not p.exists():
            self.show_error("Cannot open corpus", f"{p}: no such file")
            return False
        if not p.is_file():
            self.show_error("Cannot open corpus", f"{p}: not a regular file")
            return False
        self.corpus = p.resolve()
        self.panel.set_corpus(self.corpus)
        self._refresh_state()
        return True

    @Slot()
    def _choose_corpus(self) -> None:
        start = str(self.corpus.parent) if self.corpus else ""
        path, _ = QFileDialog.getOpenFileName(
            self, "Open corpus", start, "Text files (*.txt *.text *.md);;All files (*)"
        )
        if path:
            self.open_corpus(path)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt override
        urls = event.mimeData().urls()
        if not self.training and urls and urls[0].isLocalFile():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt override
        urls = event.mimeData().urls()
        if self.training or not urls or not urls[0].isLocalFile():
            return
        path = Path(urls[0].toLocalFile())
        event.acceptProposedAction()
        if path.suffix.lower() == ".json":
            self.load_tokenizer(path)
        else:
            self.open_corpus(path)

    def event(self, event: QEvent) -> bool:
        # subtle: the whole window is painted while this top-level widget handles
        # UpdateRequest. The views call into Python for every cell and plot item they paint;
        # holding the trainer meanwhile keeps each call from waiting for the GIL, which turned
        # a 10 ms repaint into 100 ms (benchmarks/gui_bench.py).
        if event.type() == QEvent.Type.UpdateRequest and self.session is not None:
            with self.session.gui_turn():
                return super().event(event)
        return super().event(event)

    # ------------------------------------------------------------ training
    @Slot()
    def start_training(self) -> bool:
        if self.training or self.loader.busy:
            return False
        if self.corpus is None:
            self.show_error("No corpus", "Open a corpus file first (or drop one on the window).")
            return False
        p = self.panel
        config = TrainingConfig(
            self.corpus, p.vocab_spin.value(), p.special_tokens(), p.workers_spin.value()
        )
        if self.session is not None:
            self.session.shutdown()  # its thread has ended; make sure it is released
            self.session.deleteLater()
        self.result = self.loaded = None
        self._vocab = initial_vocab(list(config.special_tokens))
        self._editor_at = 0
        self._editor_time = time.perf_counter()
        self.merge_model.reset()
        self.vocab_model.reset(self._vocab)
        self._vocab_pending = []
        self.chart.clear()
        self.editor.set_tokenizer(
            TokenizerSource(
                "Tokenizer: bytes only (no merges yet)",
                vocab=self._vocab,
                special_tokens=config.special_tokens,
            )
        )
        session = TrainingSession(config, self)
        session.progress.connect(self._on_progress)
        session.merging.connect(self._on_merging)
        session.merges_added.connect(self._on_merges)
        session.top_pairs.connect(self.chart.set_top_pairs)
        session.paused_changed.connect(self._on_paused)
        session.failed.connect(self._on_failed)
        session.finished.connect(self._on_finished)
        session.tick.connect(self._on_tick)
        self.session = session
        self.chart.guard = session.gui_turn
        self.chart.external_clock = True
        p.progress.setRange(0, 1000)
        p.progress.setValue(0)
        p.progress.setFormat("%p%")
        session.start()
        self._refresh_state()
        self._update_status()
        return True

    @Slot()
    def toggle_pause(self) -> None:
        if self.session is None or not self.training:
            return
        if self.session.paused:
            self.session.resume()
        else:
            self.session.pause()

    @Slot()
    def stop_training(self) -> None:
        if self.session is not None and self.training:
            self.session.stop()
            self.panel.status.setText("Stopping…")

    @Slot(bool)
    def _on_paused(self, paused: bool) -> None:
        self._refresh_state()
        self._update_status()

    @Slot(object, object)
    def _on_progress(self, done: int, total: int) -> None:
        self._update_status()

    @Slot(int)
    def _on_merging(self, target: int) -> None:
        self.panel.progress.setRange(0, max(target, 1))
        self.panel.progress.setValue(0)

    @Slot(object)
    def _on_merges(self, batch: Sequence[MergeStep]) -> None:
        self.merge_model.append(batch)
        # The vocabulary table gets its rows on every REDRAW_EVERY_TICKS-th tick: appending
        # repaints its whole view, though the new rows are usually out of sight.
        self._vocab_pending.extend(batch)
        self.chart.add_merges(batch)
        n = batch[-1].rank + 1
        now = time.perf_counter()
        if (
            n - self._editor_at >= EDITOR_REFRESH_MERGES
            and now - self._editor_time >= EDITOR_REFRESH_SECONDS
        ):
            self._editor_at, self._editor_time = n, now
            specials = self.session.config.special_tokens if self.session else ()
            # Built here, at most once a second, rather than kept up to date per merge.
            steps = self.merge_model.steps()
            vocab = dict(self._vocab)
            vocab.update((s.new_id, s.merged) for s in steps)
            self.editor.set_tokenizer(
                TokenizerSource(
                    f"Tokenizer: training, {n:,} merges so far",
                    vocab=vocab,
                    merges=[(s.left, s.right) for s in steps],
                    special_tokens=specials,
                )
            )

    @Slot()
    def _on_tick(self) -> None:
        self._ticks += 1
        if self._ticks % REDRAW_EVERY_TICKS == 0:
            self._update_status()
            self.chart.redraw()
            self._flush_vocab()

    def _flush_vocab(self) -> None:
        if self._vocab_pending:
            self.vocab_model.append_merges(self._vocab_pending)
            self._vocab_pending = []

    @Slot(int)
    def _select_token(self, token_id: int) -> None:
        self._flush_vocab()
        self.vocab_table.select_token(token_id)

    @Slot()
    def _update_status(self) -> None:
        s = self.session
        if s is None or not s.is_running or s.phase == "finished":
            return
        if s.control.stopped:
            self.panel.status.setText("Stopping…")
            return
        # subtle: QProgressBar.setValue repaints synchronously, so it is set here, a few times
        # a second, rather than on every batch of merges.
        if s.phase == "pre-tokenizing":
            total = s.bytes_total
            self.panel.progress.setValue(int(1000 * s.bytes_done / total) if total else 0)
        else:
            self.panel.progress.setValue(min(s.merges_done, self.panel.progress.maximum()))
        self.panel.status.setText(
            status_text(
                s.phase,
                bytes_done=s.bytes_done,
                bytes_total=s.bytes_total,
                merges_done=s.merges_done,
                target=s.target_merges,
                rate=s.clock.rate(),
                elapsed=s.clock.elapsed(),
                paused=s.paused,
            )
        )

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        name = self.corpus.name if self.corpus else "the corpus"
        self.show_error("Training failed", f"Training on {name} failed.\n\n{message}")

    @Slot(object)
    def _on_finished(self, result: TrainingResult | None) -> None:
        self._flush_vocab()
        self.chart.guard = nullcontext
        self.chart.external_clock = False
        self.chart.redraw()
        self.result = result
        p = self.panel
        if result is None:
            p.status.setText("Training failed")
            p.progress.setValue(0)
        else:
            n = len(result.merges)
            rate = n / result.merge_seconds if result.merge_seconds > 0 else 0.0
            took = f"{format_duration(result.merge_seconds)}, {rate:,.0f} merges/s"
            if result.stopped:
                p.status.setText(
                    f"Stopped after {n:,} of {result.target_merges:,} merges"
                    f" ({took}); Save keeps them"
                )
            elif result.exhausted:
                p.status.setText(
                    f"Pairs ran out after {n:,} merges ({took}): vocabulary "
                    f"{len(result.vocab):,} of {self.session.config.vocab_size:,}"
                    if self.session
                    else f"Pairs ran out after {n:,} merges"
                )
            else:
                p.status.setText(f"Done: {n:,} merges in {took}")
            if not result.stopped:
                p.progress.setValue(p.progress.maximum())
            name = self.corpus.name if self.corpus else "corpus"
            self.editor.set_tokenizer(
                TokenizerSource(
                    f"Tokenizer: trained on {name}, {n:,} merges",
                    vocab=result.vocab,
                    merges=result.merges,
                    special_tokens=result.special_tokens,
                )
            )
        self._refresh_state()

    # ------------------------------------------------------ save and load
    def save_tokenizer(self, directory: str | os.PathLike) -> bool:
        """Write vocab.json + merges.txt (atomically) for the trained or loaded tokenizer."""
        if self.result is not None:
            vocab, merges = self.result.vocab, self.result.merges
        elif self.loaded is not None:
            vocab, merges = self.loaded.vocab, self.loaded.merges
        else:
            self.show_error("Nothing to save", "Train or load a tokenizer first.")
            return False
        target = Path(directory)
        try:
            target.mkdir(parents=True, exist_ok=True)
            vocab_path, merges_path = save_files(target, vocab, merges)
        except (OSError, ValueError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            self.show_error(
                "Could not save tokenizer", f"Could not save the tokenizer to {target}:\n\n{reason}"
            )
            return False
        self.statusBar().showMessage(f"Saved {vocab_path} and {merges_path}", 10_000)
        return True

    @Slot()
    def _choose_save_directory(self) -> None:
        directory = QFileDialog.getExistingDirectory(self, "Save tokenizer into folder")
        if directory:
            self.save_tokenizer(directory)

    def load_tokenizer(
        self, vocab_path: str | os.PathLike, merges_path: str | os.PathLike | None = None
    ) -> bool:
        """Start loading a GPT-2-format vocab.json + merges.txt pair (GPT-2's own included) in
        the background; the merges file is looked for beside the vocabulary when not given.
        ``load_finished`` tells how it went. False when nothing was started."""
        if self.training or self.loader.busy:
            return False
        vocab_file = Path(vocab_path)
        merges_file = Path(merges_path) if merges_path else merges_beside(vocab_file)
        self.loader.load(vocab_file, merges_file)
        self.panel.status.setText(f"Loading {vocab_file.name} and {merges_file.name}…")
        self._refresh_state()
        return True

    @Slot(object)
    def _on_loaded(self, loaded: LoadedTokenizer) -> None:
        tokenizer = loaded.tokenizer
        self.merge_model.reset(loaded.steps, counts_known=False)
        self.vocab_model.reset_rows(loaded.rows)
        self.chart.clear(
            "vocab.json and merges.txt hold no pair counts: train a tokenizer to see them"
        )
        self.editor.set_tokenizer(
            TokenizerSource(
                f"Tokenizer: {loaded.vocab_file.name}, {len(tokenizer.merges):,} merges",
                tokenizer=tokenizer,
            )
        )
        self.loaded, self.result = tokenizer, None
        self.panel.progress.setRange(0, 1)
        self.panel.progress.setValue(0)
        self.panel.progress.setFormat("")
        specials = loaded.special_tokens
        special = f", special tokens {', '.join(specials)}" if specials else ""
        self.panel.status.setText(
            f"Loaded {loaded.vocab_file.name}: {len(tokenizer.vocab):,} tokens, "
            f"{len(tokenizer.merges):,} merges{special}"
        )
        self._refresh_state()
        self.load_finished.emit(True)

    @Slot(str)
    def _on_load_failed(self, message: str) -> None:
        self.panel.status.setText("Loading failed")
        self._refresh_state()
        self.show_error("Could not load tokenizer", message)
        self.load_finished.emit(False)

    @Slot()
    def _choose_tokenizer(self) -> None:
        vocab, _ = QFileDialog.getOpenFileName(
            self, "Load tokenizer: choose its vocab.json", "", "Vocabulary (*.json);;All (*)"
        )
        if not vocab:
            return
        merges: str | None = None
        if not merges_beside(Path(vocab)).exists():
            merges, _ = QFileDialog.getOpenFileName(
                self, "…and its merges.txt", str(Path(vocab).parent), "Merges (*.txt);;All (*)"
            )
            if not merges:
                return
        self.load_tokenizer(vocab, merges)

    # ------------------------------------------------------------- closing
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if self.session is not None:
            self.session.shutdown()
        self.loader.shutdown()
        self.editor.shutdown()
        super().closeEvent(event)


def merges_beside(vocab_file: Path) -> Path:
    """``merges.txt`` for ``vocab.json``; ``x_merges.txt`` for ``x_vocab.json`` (GPT-2's
    ``gpt2_vocab.json``)."""
    name = vocab_file.name
    if "vocab" in name:
        return vocab_file.with_name(name.replace("vocab", "merges").rsplit(".", 1)[0] + ".txt")
    return vocab_file.with_name("merges.txt")
