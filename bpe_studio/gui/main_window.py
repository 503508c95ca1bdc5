"""The main window: lays out the training controls, the timeline and the views, and wires them.

What it does: creates the :class:`~bpe_studio.gui.hub.StateHub` (the one state every view
reads) and the :class:`~bpe_studio.gui.controller.Controller` (which changes it), binds each
view to the hub, and connects the buttons, file dialogs and drag-and-drop to the controller.
Errors go to a window-modal dialog in plain text; the app carries on. Closing the window stops
training and loading and waits for their threads.
What it leaves out: the run's state (``state``), the train/load/save flow (``controller``),
how each view draws (``views/``).
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Slot
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from .controller import Controller
from .controls import TrainingPanel
from .hub import StateHub
from .responsiveness import GuiTurn, HoldTrainerWhilePainting
from .state import RunState
from .views.compression_plot import CompressionPlot
from .views.merge_list import MergeListView
from .views.pair_chart import PairChart
from .views.timeline import TimelineBar
from .views.token_editor import TokenEditor
from .views.vocab_table import VocabTableView

SAMPLE_TEXT = (
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
    "sunshine with her dog, Max.\n"
    'One day, Lily found a shiny red ball under a big tree. "Look, Max!" she said.\n'
    "\tNumbers like 2024 and 3.14, and   extra   spaces, tokenize too.\n"
    "中文分词：你好，世界！ Emoji: 😀😊 · café, naïve\n"
    "<|endoftext|>\n"
)


class MainWindow(HoldTrainerWhilePainting, QMainWindow):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("BPE Studio")
        self.setAcceptDrops(True)
        self.hub = StateHub(self)
        self.controller = Controller(self.hub, self)
        self.panel = TrainingPanel(self)
        self.merge_list = MergeListView(self.hub)
        self.chart = PairChart(self.hub)
        self.vocab_table = VocabTableView(self.hub)
        self.editor = TokenEditor()
        self.timeline = TimelineBar(self.hub)
        self.curve = CompressionPlot(self.hub)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.merge_list)
        top.addWidget(self.chart)
        top.addWidget(self.curve)
        top.setSizes([400, 620, 380])
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
        layout.addWidget(self.timeline)
        layout.addWidget(body, 1)
        self.setCentralWidget(central)
        self.statusBar()

        self.last_error: str | None = None
        self.error_box: QMessageBox | None = None
        c, p = self.controller, self.panel
        c.error.connect(self.show_error)
        c.saved.connect(lambda message: self.statusBar().showMessage(message, 10_000))
        p.open_button.clicked.connect(self._choose_corpus)
        p.train_button.clicked.connect(self.start_training)
        p.pause_button.clicked.connect(c.toggle_pause)
        p.stop_button.clicked.connect(c.stop_training)
        p.save_button.clicked.connect(self._choose_save_directory)
        p.load_button.clicked.connect(self._choose_tokenizer)
        p.bind(self.hub)
        self.curve.error.connect(self.show_error)
        self.curve.open_button.clicked.connect(self._choose_heldout)
        encoded = getattr(self.editor, "encoded", None)  # (tokens, bytes) of the editor's text
        if encoded is not None:
            encoded.connect(self.curve.set_editor_count)
        self.editor.bind(self.hub)
        self.editor.set_text(SAMPLE_TEXT)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(1440, 900)

    @property
    def state(self) -> RunState:
        return self.hub.state

    def gui_turn(self) -> GuiTurn | None:
        return self.controller.gui_turn()

    @Slot(str, str)
    def show_error(self, title: str, message: str) -> None:
        """A window-modal error box (not blocking the event loop); the app carries on."""
        self.last_error = message
        box = QMessageBox(
            QMessageBox.Icon.Critical, title, message, QMessageBox.StandardButton.Ok, self
        )
        box.setTextFormat(Qt.TextFormat.PlainText)  # messages name files, which may hold "<"
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.error_box = box

    # ----------------------------------------------- actions (also for tests)
    def open_corpus(self, path: str | os.PathLike) -> bool:
        return self.controller.open_corpus(path)

    @Slot()
    def start_training(self) -> bool:
        p = self.panel
        return self.controller.start_training(
            p.vocab_spin.value(), p.special_tokens(), p.workers_spin.value()
        )

    def toggle_pause(self) -> None:
        self.controller.toggle_pause()

    def stop_training(self) -> None:
        self.controller.stop_training()

    def save_tokenizer(self, directory: str | os.PathLike) -> bool:
        return self.controller.save(directory)

    def load_tokenizer(
        self, vocab_path: str | os.PathLike, merges_path: str | os.PathLike | None = None
    ) -> bool:
        """Start loading a GPT-2-format vocab.json + merges.txt pair (GPT-2's own included) in
        the background; the merges file is looked for beside the vocabulary when not given.
        ``controller.load_finished`` tells how it went. False when nothing was started."""
        vocab_file = Path(vocab_path)
        merges_file = Path(merges_path) if merges_path else merges_beside(vocab_file)
        return self.controller.load(vocab_file, merges_file)

    # ------------------------------------------------------------ dialogs
    @Slot()
    def _choose_corpus(self) -> None:
        corpus = self.state.corpus
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Open corpus",
            str(corpus.parent) if corpus else "",
            "Text files (*.txt *.text *.md);;All files (*)",
        )
        if path:
            self.open_corpus(path)

    @Slot()
    def _choose_heldout(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Open held-out text",
            str(self.curve.heldout.parent),
            "Text files (*.txt *.text *.md);;All files (*)",
        )
        if path:
            self.curve.open_heldout(path)

    @Slot()
    def _choose_save_directory(self) -> None:
        directory = QFileDialog.getExistingDirectory(self, "Save tokenizer into folder")
        if directory:
            self.save_tokenizer(directory)

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

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt override
        urls = event.mimeData().urls()
        if not self.controller.busy and urls and urls[0].isLocalFile():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt override
        urls = event.mimeData().urls()
        if self.controller.busy or not urls or not urls[0].isLocalFile():
            return
        path = Path(urls[0].toLocalFile())
        event.acceptProposedAction()
        if path.suffix.lower() == ".json":
            self.load_tokenizer(path)
        else:
            self.open_corpus(path)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.timeline.shutdown()
        self.controller.shutdown()
        self.curve.shutdown()
        self.editor.shutdown()
        super().closeEvent(event)


def merges_beside(vocab_file: Path) -> Path:
    """``merges.txt`` for ``vocab.json``; ``x_merges.txt`` for ``x_vocab.json`` (GPT-2's
    ``gpt2_vocab.json``)."""
    name = vocab_file.name
    if "vocab" in name:
        return vocab_file.with_name(name.replace("vocab", "merges").rsplit(".", 1)[0] + ".txt")
    return vocab_file.with_name("merges.txt")
