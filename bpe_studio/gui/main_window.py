"""The main window: lays out the training controls, the timeline and the views, and wires them.

What it does: creates the :class:`~.model.app_model.AppModel` (the one owner of what every
view shows; views call it ``hub``) and the :class:`~.training.controller.Controller` (which
trains, saves and loads through it), binds each view to the model, and connects the buttons,
file dialogs, the menu bar (``views.menu_bar``: File, View, Help and their shortcuts) and
drag-and-drop to the controller. File dialogs open in the user's last folder or home
(``views.file_dialogs``). Errors go to a window-modal dialog in plain text; the app carries
on. The status bar shows the model's status message. Closing the window (or Quit) asks Save /
Discard / Cancel while merges no file holds would be lost (a run still training is paused
meanwhile), then keeps the window's layout for the next start (``views.window_layout``),
stops training and loading and waits for their threads. Settings the file cannot keep are
said once in the status bar (``views.kept_settings``).
What it leaves out: what the views show (``model``), the train/load/save flow
(``training.controller``), how each view draws (``views``).
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Slot
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QInputDialog,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .jobs.loader import (
    is_gpt2_vocab,
    is_tokenizer_file,
    merges_beside,
    names_a_vocab,
    needs_pattern,
)
from .model.app_model import AppModel
from .model.corpus_source import (
    AS_RECORDS,
    AS_TEXT,
    CORPUS_FILTERS,
    joined_sources,
    split_sources,
)
from .model.state import RunState
from .responsiveness.collector import (
    collect_on_gui_thread,
    free_when_deleted,
    keep_out_of_collections,
)
from .responsiveness.trainer_hold import GuiTurn, HoldTrainerWhilePainting
from .training.controller import CANCEL, DISCARD, SAVE, Controller
from .views import file_dialogs, kept_settings, theme, window_layout
from .views.common import table_width
from .views.compare import CompareView
from .views.compression_plot import CompressionPlot
from .views.controls import SAVE_FORMATS, TrainingPanel
from .views.editor_tokenizer import EditorTokenizer
from .views.encoder_status import EncoderStatus
from .views.help_dialogs import ShortcutsDialog, show_about
from .views.ids_panel import IdsPanel
from .views.inspector import InspectorPanel
from .views.menu_bar import AppMenus, MenuHandlers, RunButtons, last_save_format
from .views.merge_list import MergeListView
from .views.pair_chart import PairChart
from .views.picker import TokenizerPicker, ask_for_tokenizer_file, ask_pattern
from .views.report import ReportView
from .views.timeline import TimelineBar
from .views.token_editor import TokenEditor
from .views.vocab_lab import VocabLabPage
from .views.vocab_table import VocabTableView

SAMPLE_TEXT = (
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
    "sunshine with her dog, Max.\n"
    'One day, Lily found a shiny red ball under a big tree. "Look, Max!" she said.\n'
    "\tNumbers like 2024 and 3.14, and   extra   spaces, tokenize too.\n"
    "中文分词：你好，世界！ Emoji: 😀😊 · café, naïve\n"
    "<|endoftext|>\n"
)


# The size the window is laid out for: everything shows whole from here up (README).
DESIGN_SIZE = QSize(1280, 800)


class MainWindow(HoldTrainerWhilePainting, QMainWindow):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        collect_on_gui_thread()  # never on a worker thread (see responsiveness.collector)
        free_when_deleted(self)  # its objects are frozen with the rest (keep_out_of_collections)
        # "[*]": the title carries an asterisk while merges of the run are in no file.
        self.setWindowTitle("BPE Studio[*]")
        self.setAcceptDrops(True)
        self.hub = AppModel()
        self.controller = Controller(self.hub, self)
        self.panel = TrainingPanel(self)
        self.merge_list = MergeListView(self.hub)
        self.chart = PairChart(self.hub)
        self.vocab_table = VocabTableView(self.hub)
        self.editor = TokenEditor()
        self.editor_tokenizer = EditorTokenizer(self.hub)
        self.picker = self.editor_tokenizer.picker
        self.ids_panel = IdsPanel(self.editor)
        self.inspector = InspectorPanel(self.hub)
        self.timeline = TimelineBar(self.hub)
        self.timeline.add_keys(self)
        self.curve = CompressionPlot(self.hub)

        # The tables start wide enough for every column (they keep that width as the window
        # grows or shrinks: stretch 0); the charts, the editor and the inspector share the rest.
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.merge_list)
        top.addWidget(self.chart)
        top.addWidget(self.curve)
        top.setSizes([table_width(self.merge_list.table), 620, 420])
        for i, stretch in enumerate((0, 3, 2)):
            top.setStretchFactor(i, stretch)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.vocab_table)
        editor_split = QSplitter(Qt.Orientation.Vertical)  # the ids panel under the editor
        editor_split.addWidget(self.editor)
        editor_split.addWidget(self.ids_panel)
        editor_split.setSizes([420, 90])
        editor_split.setChildrenCollapsible(False)
        editor_column = QWidget()
        editor_layout = QVBoxLayout(editor_column)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        editor_layout.addWidget(self.editor_tokenizer)
        editor_layout.addWidget(editor_split, 1)
        bottom.addWidget(editor_column)
        bottom.addWidget(self.inspector)
        # The editor's share keeps its legend's words in a 1280-pixel window (narrower, the
        # legend keeps only its marks).
        bottom.setSizes([table_width(self.vocab_table.table), 560, 400])
        for i, stretch in enumerate((0, 3, 2)):
            bottom.setStretchFactor(i, stretch)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(top)
        body.addWidget(bottom)
        body.setSizes([430, 400])
        for splitter in (top, bottom, body):
            splitter.setChildrenCollapsible(False)
            splitter.setHandleWidth(8)
        # Named: their positions are kept for the next start under these names.
        for splitter, name in (
            (top, "trainTopSplitter"),
            (bottom, "trainBottomSplitter"),
            (body, "trainSplitter"),
            (editor_split, "editorSplitter"),
        ):
            splitter.setObjectName(name)
        self.splitters = (top, bottom, body, editor_split)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.setSpacing(6)
        layout.addWidget(self.panel)
        # The timeline belongs to the training page: the step it sets is the run's.
        train_page = QWidget()
        train_layout = QVBoxLayout(train_page)
        train_layout.setContentsMargins(0, 4, 0, 0)
        train_layout.setSpacing(4)
        train_layout.addWidget(self.timeline)
        train_layout.addWidget(body, 1)
        self.compare = CompareView(self.hub)
        self.report = ReportView(self.hub)
        self.lab = VocabLabPage(self.hub)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(train_page, "Train && explore")
        self.tabs.addTab(self.compare, "Compare")
        self.tabs.addTab(self.report, "Report")
        self.tabs.addTab(self.lab, "Vocabulary lab")
        layout.addWidget(self.tabs, 1)
        # The page keeps its minimum inside a scroll area: on a screen smaller than that (a
        # laptop at 125%, a larger font) the window still fits it, and the page scrolls.
        self.page_scroll = QScrollArea()
        self.page_scroll.setWidgetResizable(True)
        self.page_scroll.setFrameShape(QFrame.Shape.NoFrame)
        # No Tab stop (it showed no focus, and held it at start): Tab still scrolls the page
        # to the control it reaches (QScrollArea.focusNextPrevChild), and keys scroll views.
        self.page_scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.page_scroll.setWidget(central)
        self.setCentralWidget(self.page_scroll)
        self.encoder_status = EncoderStatus()
        self.statusBar().addPermanentWidget(self.encoder_status)

        self.last_error: str | None = None
        self.error_box: QMessageBox | None = None
        c, p = self.controller, self.panel
        c.error.connect(self.show_error)
        self.hub.notice_changed.connect(self._show_notice)
        for changed in (self.hub.reset, self.hub.saved_changed, self.hub.updated):
            changed.connect(self._show_unsaved)
        kept_settings.notifier().unkept.connect(self.show_notice)  # said once per process
        kept_settings.check_at_start()
        # A message belongs to the action that made it: the next one ends it (the model ends
        # it itself for a new run, a load, a discard and a new corpus).
        self.tabs.currentChanged.connect(lambda _index: self.hub.end_notice())
        p.open_button.clicked.connect(self._choose_corpus)
        p.glob_button.clicked.connect(self._ask_glob)
        p.train_button.clicked.connect(self.start_training)
        p.pause_button.clicked.connect(c.toggle_pause)
        p.stop_button.clicked.connect(c.stop_training)
        p.save_requested.connect(self._save_as)
        c.confirm = lambda title, question: self.ask(title, question)
        c.ask_close = lambda title, question: self.ask_close(title, question)
        c.ask_records = lambda title, question: self.ask_records(title, question)
        c.choose_save = lambda: self.choose_save_target()
        c.remember_save = self._remember_save
        c.close_ready.connect(self.close, Qt.ConnectionType.QueuedConnection)
        p.load_button.clicked.connect(self._choose_tokenizer)
        p.bind(self.hub)
        self.curve.error.connect(self.show_error)
        self.curve.open_button.clicked.connect(self._choose_heldout)
        self.editor.bind(self.hub)
        self._connect_inspector()
        self.editor.set_text(SAMPLE_TEXT)
        for page in (self.compare, self.report):
            page.bind(self.hub)
            page.error.connect(self.show_error)
        self.report.saved.connect(self.show_notice)
        self.lab.error.connect(self.show_error)
        self.lab.ask_records = lambda title, question: self.ask_records(title, question)
        self.editor_tokenizer.error.connect(self.show_error)
        self.lab.saved.connect(self.show_notice)
        self._closed = False
        self.menus: AppMenus = AppMenus(
            self,
            MenuHandlers(
                open_corpus=self._choose_corpus,
                open_glob=self._ask_glob,
                open_heldout=self._choose_heldout,
                load_tokenizer=self._choose_tokenizer,
                save_tokenizer=self._choose_save_directory,
                save_formats=SAVE_FORMATS,
                quit=self.close,
                set_scheme=self.set_scheme,
                scheme=lambda: theme.notifier().choice,
                shortcuts=self.show_shortcuts,
                about=lambda: show_about(self),
                tabs=self.tabs,
                open_button=p.open_button,
                load_button=p.load_button,
                save_button=p.save_button,
                run_buttons=RunButtons(
                    train=p.train_button,
                    pause=p.pause_button,
                    stop=p.stop_button,
                    replay=self.timeline.replay_button,
                ),
                step_keys=self.timeline.step_keys(),
            ),
        )
        # After the timeline's own slots (connected first), which name the button.
        self.timeline.replay.running_changed.connect(self.menus.name_replay_entry)
        self.hub.replay_changed.connect(self.menus.name_replay_entry)
        self._load_encoder()

    def _load_encoder(self) -> None:
        """Load the compiled encoder in a background thread; the status bar's right end says
        so while it compiles. The editor's spans take the Python path until it is ready."""
        encoder = self.encoder_status
        encoder.news.connect(self.show_notice)
        # numba's modules and the kernels are hundreds of thousands of objects alive for
        # good: no full collector pass on the GUI thread should walk them again.
        encoder.ready.connect(keep_out_of_collections)
        encoder.start()

    def _connect_inspector(self) -> None:
        # The piece under the editor's cursor feeds the step-through; the editor's counts
        # the "occurs in the editor" line.
        editor, inspector = self.editor, self.inspector
        editor.piece_at_cursor.connect(inspector.step_through.show_piece)
        inspector.why.set_occurrence_counter(
            lambda token_id: editor.occurrences(token_id) if editor.outlined == token_id else None
        )
        editor.spans_ready.connect(lambda _spans: inspector.why.refresh_occurrences())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        # Roomy where the screen allows (the views are many), never larger than the screen.
        screen = self.screen()
        if screen is None:
            return QSize(1600, 1000)
        room = screen.availableGeometry()
        return QSize(min(1600, int(room.width() * 0.95)), min(1000, int(room.height() * 0.92)))

    def fills_screen(self) -> bool:
        """Whether the window should open maximized: on a screen where its roomy size would
        be smaller than the 1280 x 800 it is laid out for (a 1280 x 800 laptop, or a larger
        one at 200%), where a window of 1236 x 736 cut its tables' last columns."""
        hint = self.sizeHint()
        return hint.width() < DESIGN_SIZE.width() or hint.height() < DESIGN_SIZE.height()

    def restore_layout(self) -> bool:
        """The geometry, tab and splitters of the window closed last (within the screen);
        False at the first start (no geometry kept)."""
        return window_layout.restore_layout(self, self.tabs, self.splitters)

    def opens_maximized(self, first_start: bool = True) -> bool:
        """Whether to show the window maximized: it was when it closed, or at the first start
        the screen is too small for the size it is laid out for and the window is smaller
        than that (:meth:`fills_screen`). A size the user chose and kept stays, however small."""
        size = self.size()
        small = size.width() < DESIGN_SIZE.width() or size.height() < DESIGN_SIZE.height()
        return self.isMaximized() or (first_start and small and self.fills_screen())

    @property
    def state(self) -> RunState:
        return self.hub.state

    def gui_turn(self) -> GuiTurn | None:
        return self.controller.gui_turn()

    def ask(self, title: str, question: str) -> bool:
        """A yes/no question (blocking, modal); tests replace this method with an answer."""
        answer = QMessageBox.question(
            self,
            title,
            question,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def ask_close(self, title: str, question: str) -> str:
        """Save, Discard or Cancel (blocking, modal): ``controller.SAVE``, ``DISCARD`` or
        ``CANCEL``. Tests replace this method with an answer."""
        buttons = QMessageBox.StandardButton
        answer = self.close_box(title, question).exec()
        return {buttons.Save: SAVE, buttons.Discard: DISCARD}.get(buttons(answer), CANCEL)

    def close_box(self, title: str, question: str) -> QMessageBox:
        """The question :meth:`ask_close` asks, not yet shown."""
        buttons = QMessageBox.StandardButton
        box = QMessageBox(QMessageBox.Icon.Question, title, question, parent=self)
        box.setInformativeText("Save it before closing?")
        box.setStandardButtons(buttons.Save | buttons.Discard | buttons.Cancel)
        box.setDefaultButton(buttons.Save)
        # Alt+S and Alt+D answer from the keyboard (the standard texts have no mnemonics).
        for button, text in ((buttons.Save, "&Save"), (buttons.Discard, "&Discard")):
            box.button(button).setText(text)
        return box

    def ask_records(self, title: str, question: str) -> str:
        """JSON Lines records, plain text or Cancel (blocking, modal): ``corpus_source.AS_RECORDS``,
        ``AS_TEXT`` or ``CANCEL``. Tests replace this method with an answer."""
        box = QMessageBox(QMessageBox.Icon.Question, title, question, parent=self)
        box.setTextFormat(Qt.TextFormat.PlainText)  # it names a file
        records = box.addButton("JSON Lines records", QMessageBox.ButtonRole.AcceptRole)
        text = box.addButton("Plain text", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(records)
        box.exec()
        clicked = box.clickedButton()
        return AS_RECORDS if clicked is records else AS_TEXT if clicked is text else CANCEL

    def choose_save_target(self) -> tuple[str, str] | None:
        """Where and how to save before closing: a format, then a folder (blocking, modal);
        None when cancelled. Tests replace this method with an answer."""
        labels = [text.rstrip("…") for text, _ in SAVE_FORMATS]
        last = [fmt for _, fmt in SAVE_FORMATS].index(last_save_format(SAVE_FORMATS))
        label, ok = QInputDialog.getItem(self, "Save tokenizer", "Format:", labels, last, False)
        if not ok:
            return None
        directory = file_dialogs.existing_folder(
            self, file_dialogs.SAVE, "Save tokenizer into folder"
        )
        if not directory:
            return None
        return directory, SAVE_FORMATS[labels.index(label)][1]

    def _remember_save(self, folder: Path, fmt: str) -> None:
        """A save the user chose (a menu's, closing's) was written: the next save dialog opens
        in its folder, and Ctrl+S saves in its format (not a folder or format whose save was
        cancelled, refused or failed)."""
        file_dialogs.remember(file_dialogs.SAVE, os.fspath(folder))
        self.menus.note_save_format(fmt)

    @Slot(str)
    def show_notice(self, message: str) -> None:
        """One line of news in the status bar, until the next action."""
        self.hub.set_notice(message)

    @Slot()
    def _show_unsaved(self) -> None:
        """The title's mark of merges no file holds (a run trained or training, unsaved or
        learning past its last Save): what closing, Train and Load would ask about."""
        self.setWindowModified(self.hub.unsaved > 0)

    def _show_notice(self) -> None:
        notice = self.hub.notice
        if notice is None:
            self.statusBar().clearMessage()
        else:
            self.statusBar().showMessage(notice)

    @Slot(str)
    def _save_as(self, fmt: str) -> None:
        """The Save button's menu: save in ``fmt`` (File > Save tokenizer saves in it next)."""
        self.menus.save(fmt)

    def show_shortcuts(self) -> ShortcutsDialog:
        """Help > Keyboard shortcuts (F1): every shortcut of the window (not modal)."""
        dialog = ShortcutsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def set_scheme(self, scheme: str) -> None:
        """View > Appearance: the system's colour scheme, light or dark (remembered)."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme.apply_scheme(app, scheme)
            theme.remember_choice(scheme)

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
    def open_corpus(self, path: str | os.PathLike | list[str]) -> bool:
        """Open a corpus: a file, or several paths, globs or URLs counted as one."""
        return self.controller.open_corpus(path)

    @Slot()
    def start_training(self) -> bool:
        p = self.panel
        problem = p.input_problem()
        if problem is not None:  # the panel names it too, and Train is disabled
            self.show_error("Cannot train", problem)
            return False
        return self.controller.start_training(p.settings())

    def toggle_pause(self) -> None:
        self.controller.toggle_pause()

    def stop_training(self) -> None:
        self.controller.stop_training()

    def save_tokenizer(self, directory: str | os.PathLike, format: str = "gpt2") -> bool:
        """Start saving the tokenizer on screen into ``directory`` in ``format``, in the
        background (``Controller.save``): whether it started; ``controller.save_finished``
        says whether it wrote."""
        return self.controller.save(directory, format)

    def open_file(self, path: str | os.PathLike) -> bool:
        """Open ``path`` as dropping it on the window does: a tokenizer by its name (``.json``,
        a rank file) is loaded, any other file opened as the corpus. (`bpe-studio gui FILE`
        opened a saved vocab.json as the corpus, ready to train on its JSON.)"""
        if is_tokenizer_file(Path(path)):
            return self.load_tokenizer(path)
        return self.open_corpus(path)

    def load_tokenizer(
        self, vocab_path: str | os.PathLike, merges_path: str | os.PathLike | None = None
    ) -> bool:
        """Start loading a tokenizer in the background: a GPT-2-format vocab.json + merges.txt
        pair (GPT-2's own included; the merges file is looked for beside the vocabulary when
        not given), a Hugging Face tokenizer.json or a tiktoken rank file; it becomes the
        tokenizer on screen. ``controller.load_finished`` tells how it went. False when
        nothing was started."""
        path = Path(vocab_path)
        if merges_path is None and not is_gpt2_vocab(path) and names_a_vocab(path):
            merges_path = merges_beside(path)  # so that the error names the missing file
        pattern = None
        if merges_path is None and needs_pattern(path):
            pattern = self.choose_pattern(path)
            if pattern is None:
                return False
        return self.controller.load(path, Path(merges_path) if merges_path else None, pattern)

    def choose_pattern(self, path: Path) -> str | None:
        """Ask which pattern a bare rank file was made with (``picker.ask_pattern``); None:
        cancel. Tests replace this method with an answer."""
        return ask_pattern(self, path)

    # ------------------------------------------------------------ dialogs
    @Slot()
    def _choose_corpus(self) -> None:
        paths = file_dialogs.open_files(
            self,
            file_dialogs.CORPUS,
            "Open corpus (several files are one corpus)",
            CORPUS_FILTERS,
        )
        if paths:
            self.open_corpus(paths[0] if len(paths) == 1 else paths)

    @Slot()
    def _ask_glob(self) -> None:
        source = self.state.corpus_source
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Open corpus by glob or URL")
        dialog.setLabelText(
            "A glob or URLs, separated by spaces, a path with spaces in quotes (one corpus):\n"
            "shards/part-*.txt.gz   s3://bucket/web/*.parquet   hf://datasets/..."
        )
        dialog.setTextValue(joined_sources(source.paths) if source is not None else "")
        dialog.resize(560, dialog.sizeHint().height())
        sources = split_sources(dialog.textValue()) if dialog.exec() else []
        if sources:
            self.open_corpus(sources)

    @Slot()
    def _choose_heldout(self) -> None:
        path = file_dialogs.open_file(
            self,
            file_dialogs.HELDOUT,
            "Open held-out text",
            "Text files (*.txt *.text *.md);;All files (*)",
        )
        if path:
            self.curve.open_heldout(path)

    @Slot(str)
    def _choose_save_directory(self, format: str) -> bool:
        """Save in ``format`` into a folder the user chooses: asked once the format's
        refusal or questions have been said (``save_flow``); whether a save started."""
        if not self.panel.save_button.isEnabled():
            return False  # nothing to save (the menu's entry is disabled with the button)
        return self.controller.save(
            None,
            format,
            choose_folder=lambda: file_dialogs.existing_folder(
                self, file_dialogs.SAVE, "Save tokenizer into folder"
            ),
            remember=True,
        )

    @Slot()
    def _choose_tokenizer(self) -> None:
        vocab = ask_for_tokenizer_file(self)
        if not vocab:
            return
        merges: str | None = None
        if not merges_beside(Path(vocab)).exists() and names_a_vocab(Path(vocab)):
            merges = file_dialogs.open_file(
                self, file_dialogs.TOKENIZER, "…and its merges.txt", "Merges (*.txt);;All (*)"
            )
            if not merges:
                return
        self.load_tokenizer(vocab, merges)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt override
        urls = event.mimeData().urls()
        if not urls or not urls[0].isLocalFile():
            return
        if not self.controller.busy:
            event.acceptProposedAction()
            return
        # The refused drop's cursor alone does not say why (Open is off meanwhile, as well).
        if self.controller.training:
            self.show_notice("No file opens while a run trains or is paused: Stop it first")
        elif self.controller.saving:
            self.show_notice("Files open once the save under way has written")
        else:
            self.show_notice("Files open once the tokenizer being loaded is ready")

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt override
        urls = event.mimeData().urls()
        if self.controller.busy or not urls or not urls[0].isLocalFile():
            return
        path = Path(urls[0].toLocalFile())
        event.acceptProposedAction()
        if len(urls) == 1 or is_tokenizer_file(path):
            self.open_file(path)
        else:  # several files dropped together are one corpus
            self.open_corpus([u.toLocalFile() for u in urls if u.isLocalFile()])

    def close_without_asking(self) -> None:
        """Close and stop everything, asking nothing (the app's event loop has ended: the
        user answered when the window was closed, or the app was told to quit), and wait for
        what its close left running: a training thread held by the merge engine's first
        compile (a window closed before gets no second ``closeEvent``)."""
        self._closed = True
        self.close()
        self.controller.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        # subtle: closing asks before merges no file holds are lost (a run still training is
        # paused meanwhile); a window closed once stays closed (a second close only repeats
        # the shutdown, which waits for nothing).
        replaying = self.timeline.replay.running
        self.timeline.replay.pause()  # what the question is about holds still, as Train's does
        if not self._closed and not self.controller.may_close():
            event.ignore()
            if replaying:
                self.timeline.replay.start()  # on from the step shown
            return
        on_screen = self.isVisible()  # closed once (a second close finds it hidden)
        if on_screen:
            window_layout.save_layout(self, self.tabs, self.splitters)
            # subtle: the shutdowns below wait for the jobs under way (a tokenizer being
            # built, the Report's or the lab's counting): the window goes first, else it
            # stood frozen for as long (an audit: 1.3 s with three jobs running).
            self.hide()
        self._closed = True
        for picker in self.findChildren(TokenizerPicker):
            if picker.progress.key is not None:
                picker.progress.cancel()  # the panes' jobs below are waited for
        self.timeline.shutdown()
        # subtle: a window on screen is not held by the merge engine's first compile (it
        # cannot be stopped): it closes now, and the app's last close (``app.main``, the
        # window gone) waits for the compile to end.
        self.controller.shutdown(wait_for_compile=not on_screen)
        self.editor_tokenizer.shutdown()
        self.curve.shutdown()
        self.editor.shutdown()
        self.ids_panel.shutdown()
        self.compare.shutdown()
        self.report.shutdown()
        self.lab.shutdown()
        self.inspector.shutdown()
        self.vocab_table.shutdown()
        super().closeEvent(event)
