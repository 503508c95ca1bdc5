"""The training controls: corpus, settings, Train / Pause / Stop, save and load, progress.

What it does: :class:`TrainingPanel` holds the inputs (vocabulary size, pattern, special
tokens one per line with the ids they get, workers), the buttons, a progress bar and a status
line; bound to the ``AppModel``, it shows the corpus, enables the buttons that make sense in
the state's phase and shows the progress. An input that cannot be trained (a vocabulary size
out of range, a regex that does not compile) is framed in red and named in red where the status
line is (its "Ready to train" would be untrue), and keeps Train disabled; nothing is reverted
silently. Save offers the three formats (``save_requested``); a paused run can be saved.
Opening a new corpus after a run clears that run's status, bar and Save.
:func:`status_text` writes the status line from the state.
What it leaves out: what the buttons do (the main window connects them).
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...core.corpus.counting import available_cores
from ...core.corpus.records import DEFAULT_TEXT_FIELD
from ...core.pretokenization.specials import DEFAULT_SPECIAL_TOKEN
from ...core.train.vocab import BYTE_TOKENS
from ..model.app_model import AppModel
from ..model.corpus_source import CorpusSource
from ..model.saving import saveable_merges
from ..model.state import Phase, RunSettings, RunState
from ..model.status import compiling_shown, format_bytes, status_text
from .cluster_choice import ClusterChoice
from .common import steady_label
from .corpus_label import SEPARATOR, CorpusLabel
from .theme import error_text, muted
from .training_inputs import (
    PatternChoice,
    SpecialTokensEdit,
    problem_style,
    special_ids_text,
    special_token_problem,
)
from .vocab_size_edit import VocabSizeEdit

DEFAULT_VOCAB_SIZE = 10_000
DEFAULT_SPECIALS = DEFAULT_SPECIAL_TOKEN
# The special tokens' title; the second while they differ from the tokenizer's on screen, so
# that the ids beside them are not taken for its ids (no wider than the edit and its ids).
SPECIALS_TITLE = "Special tokens, one per line"
NEXT_RUN_TITLE = "Next run's special tokens, one per line"
VOCAB_HELP = "Vocabulary size: 256 bytes + special tokens + merges"
# Save's formats: (menu text, format name for Tokenizer.save / save_data).
SAVE_FORMATS: tuple[tuple[str, str], ...] = (
    ("GPT-2 files (vocab.json + merges.txt)…", "gpt2"),
    ("Hugging Face tokenizer.json…", "hf"),
    ("tiktoken (tokenizer.tiktoken + tokenizer.tiktoken.json)…", "tiktoken"),
)


def corpus_words(source: CorpusSource | None) -> tuple[str, str, str]:
    """What the panel says of the corpus: a name, a detail after it, and a tooltip naming
    every file ("2 files", "text · 4.4 MB · a.txt, b.txt")."""
    if source is None:
        return "", "No corpus: open one or drop a file on the window", ""
    path = source.plain
    if path is not None and len(source.paths) == 1:
        try:
            size = format_bytes(path.stat().st_size)
        except OSError:
            size = "unreadable"
        return path.name, f"{size}{SEPARATOR}{path.parent}", str(path)
    what = "records" if source.records else "text"
    size = f"{format_bytes(source.size)} {source.stored_bytes or 'stored'}"
    named = [os.path.basename(p.rstrip("/")) or p for p in source.paths]
    if source.files == 1:
        return source.name, f"{what}{SEPARATOR}{size}", "\n".join(source.paths)
    listed = ", ".join(named)
    tip = "\n".join(source.paths)
    if len(source.paths) != source.files:  # a glob or a folder names more files than paths
        tip += f"\n({source.files:,} files)"
    return f"{source.files:,} files", f"{what}{SEPARATOR}{size}{SEPARATOR}{listed}", tip


class TrainingPanel(QWidget):
    """Inputs, buttons, progress bar and status line along the top of the window."""

    save_requested = Signal(str)  # a format of SAVE_FORMATS, chosen from Save's menu

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trainingPanel")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.open_button = QPushButton("Open corpus…")
        self.open_button.setToolTip(
            "Text files (several are one corpus), compressed (.gz .bz2 .xz .zst), or records: "
            "each record's text field in .jsonl and .parquet files is one document"
        )
        self.glob_button = QPushButton("Glob or URL…")
        self.glob_button.setToolTip(
            "A glob (shards/part-*.txt.gz) or URLs (s3://, gs://, hf://datasets/...) counted "
            "as one corpus"
        )
        self.text_field_edit = QLineEdit(DEFAULT_TEXT_FIELD)
        self.text_field_edit.setAccessibleName("Records' text field")
        self.text_field_edit.setToolTip("The field of each record that holds its text")
        self.text_field_edit.setMaximumWidth(90)
        self.text_field_label = QLabel("Text field")
        self.text_field_label.setBuddy(self.text_field_edit)
        self.cluster_choice = ClusterChoice()
        self.corpus_label = CorpusLabel()
        # subtle: the box takes any number typed and the range is checked in words
        # (input_problem); a spin box's range would silently drop what the user typed.
        self.vocab_spin = VocabSizeEdit(DEFAULT_VOCAB_SIZE)
        self.vocab_spin.setToolTip(VOCAB_HELP)
        self.pattern_choice = PatternChoice()
        self.specials_edit = SpecialTokensEdit(DEFAULT_SPECIALS)
        self.specials_ids = muted(QLabel())
        self.specials_ids.setTextFormat(Qt.TextFormat.PlainText)  # tokens hold "<"
        self.workers_spin = QSpinBox()
        # The default is the core's "every core" (``resolve_workers(None)``).
        self.workers_spin.setRange(1, 2 * available_cores())
        self.workers_spin.setValue(available_cores())
        self.workers_spin.setToolTip("Processes that pre-tokenize the corpus (files over 4 MB)")
        self.train_button = QPushButton("Train")
        self.train_button.setObjectName("primary")
        self.pause_button = QPushButton("Pause")
        self.stop_button = QPushButton("Stop")
        self.save_button = QPushButton("Save tokenizer")
        save_menu = QMenu(self.save_button)
        for text, fmt in SAVE_FORMATS:
            action = save_menu.addAction(text)
            action.triggered.connect(lambda _=False, fmt=fmt: self.save_requested.emit(fmt))
        self.save_button.setMenu(save_menu)
        self.load_button = QPushButton("Load tokenizer…")
        self.load_button.setToolTip(
            "A GPT-2 vocab.json (with its merges.txt beside it), a Hugging Face tokenizer.json "
            "or a tiktoken .tiktoken file; it becomes the tokenizer on screen"
        )
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.progress.setMinimumWidth(160)
        self.status = steady_label(QLabel("Ready"))
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # it names files
        self.status.setMinimumWidth(200)
        self.problem_label = error_text(steady_label(QLabel()))
        self.problem_label.setTextFormat(Qt.TextFormat.PlainText)  # it quotes regexes
        self.problem_label.setVisible(False)

        grid = QGridLayout(self)
        grid.setContentsMargins(10, 6, 10, 6)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(4)
        # Three rows, each with room to spare at 1280 px: the files (the corpus, the
        # tokenizer's); the settings (a custom regex and a scheduler's address open beside
        # their choices); the run, whose status line gets the width its amounts need.
        corpus_row = QHBoxLayout()
        corpus_row.addWidget(self.open_button)
        corpus_row.addWidget(self.glob_button)
        corpus_row.addSpacing(6)
        corpus_row.addWidget(self.corpus_label, 1)
        corpus_row.addWidget(self.text_field_label)
        corpus_row.addWidget(self.text_field_edit)
        corpus_row.addSpacing(12)
        corpus_row.addWidget(self.load_button)
        corpus_row.addWidget(self.save_button)
        settings_row = QHBoxLayout()
        for i, (text, widget) in enumerate(
            (
                ("Vocabulary size", self.vocab_spin),
                ("Pattern", self.pattern_choice),
                ("Workers", self.workers_spin),
                ("Count on", self.cluster_choice),
            )
        ):
            label = QLabel(text)
            # A choice's own combo box is what takes focus, so what the label names.
            label.setBuddy(getattr(widget, "combo", widget))
            if i:
                settings_row.addSpacing(10)
            settings_row.addWidget(label)
            # A choice with its edit open (a custom regex, a scheduler's address) grows into
            # the room the row has to spare; closed, it keeps its own width (reveal).
            grows = widget in (self.pattern_choice, self.cluster_choice)
            settings_row.addWidget(widget, 2 if grows else 0)
        settings_row.addStretch(1)
        self.vocab_spin.setMinimumWidth(100)
        run_row = QHBoxLayout()
        for button in (self.train_button, self.pause_button, self.stop_button):
            run_row.addWidget(button)
        run_row.addSpacing(12)
        run_row.addWidget(self.progress)
        run_row.addWidget(self.status, 1)
        # subtle: an input's problem takes the status line's place rather than a row of its
        # own, which pushed the whole window down a line whenever a problem came or went.
        run_row.addWidget(self.problem_label, 1)
        specials = QVBoxLayout()
        specials.setSpacing(2)
        self.specials_title = QLabel(SPECIALS_TITLE)
        self.specials_title.setBuddy(self.specials_edit)
        specials.addWidget(self.specials_title)
        edit_and_ids = QHBoxLayout()
        edit_and_ids.setSpacing(4)
        edit_and_ids.addWidget(self.specials_edit)
        edit_and_ids.addWidget(self.specials_ids, 0, Qt.AlignmentFlag.AlignTop)
        specials.addLayout(edit_and_ids)
        self.specials_edit.setFixedWidth(180)
        # The ids line up with the lines of the edit: same font, same top inset.
        self.specials_ids.setFont(self.specials_edit.font())
        inset = self.specials_edit.frameWidth() + int(
            self.specials_edit.document().documentMargin()
        )
        self.specials_ids.setContentsMargins(0, inset, 0, 0)
        self.specials_ids.setMinimumWidth(self.fontMetrics().horizontalAdvance("→ 000,000") + 6)
        grid.addLayout(corpus_row, 0, 0)
        grid.addLayout(settings_row, 1, 0)
        grid.addLayout(run_row, 2, 0)
        grid.addLayout(specials, 0, 1, 3, 1, Qt.AlignmentFlag.AlignTop)
        grid.setColumnStretch(0, 1)
        self._hub: AppModel | None = None
        self._kept_specials: tuple[str, ...] = ()  # the special tokens a run would get
        # The corpus of the run on screen; another one opened since: its outcome is old news.
        self._run_corpus: CorpusSource | None = None
        self.text_field_label.setVisible(False)
        self.text_field_edit.setVisible(False)
        self.text_field_edit.textChanged.connect(self._check_inputs)
        self.cluster_choice.changed.connect(self._check_inputs)
        self.specials_beside: list[str] = []  # each line's id ("" for none), as typed
        self.specials_edit.verticalScrollBar().valueChanged.connect(self._show_ids_beside)
        self.specials_edit.textChanged.connect(self._check_inputs)
        self.vocab_spin.valueChanged.connect(self._check_inputs)
        self.pattern_choice.changed.connect(self._check_inputs)
        self._check_inputs()

    def special_tokens(self) -> tuple[str, ...]:
        return self.specials_edit.tokens()

    def pattern(self) -> str:
        return self.pattern_choice.pattern()

    def text_field(self) -> str:
        """The records' text field; the default while the corpus holds no records (the field
        is hidden then, and the core refuses another field for plain text)."""
        if self.text_field_edit.isHidden():
            return DEFAULT_TEXT_FIELD
        return self.text_field_edit.text().strip() or DEFAULT_TEXT_FIELD

    def cluster(self) -> str | None:
        """Where to count: None (this machine's processes) or a cluster address."""
        return self.cluster_choice.address(self.workers_spin.value())

    def settings(self) -> RunSettings:
        """What Train asks of the run, as the inputs say it (the corpus is the controller's)."""
        return RunSettings(
            self.vocab_spin.value(),
            self.special_tokens(),
            self.pattern(),
            workers=self.workers_spin.value(),
            text_field=self.text_field(),
            cluster=self.cluster(),
        )

    def input_problem(self) -> str | None:
        """The first reason the inputs cannot be trained, in words; None when they can."""
        return (
            self.vocab_spin.problem()
            or self.settings().vocab_problem()
            or self.specials_edit.problem()
            or self.pattern_choice.problem()
            or self.cluster_choice.problem()
        )

    @property
    def new_corpus(self) -> bool:
        """A corpus was opened after the run on screen ended: its outcome is not shown."""
        state = self._hub.state if self._hub is not None else None
        return (
            state is not None
            and state.phase in (Phase.FINISHED, Phase.STOPPED, Phase.FAILED)
            and state.corpus_source != self._run_corpus
        )

    @Slot()
    def _check_inputs(self) -> None:
        specials = self.special_tokens()
        # A token the trainer refuses gets no id: the ids shown are those a run would give.
        kept = tuple(tok for tok in specials if special_token_problem(tok) is None)
        ids = special_ids_text(kept)
        # One id per line of the edit, beside it (blank, repeated and refused lines get none).
        id_of = {tok: BYTE_TOKENS + i for i, tok in enumerate(kept)}
        shown: set[str] = set()
        beside = []
        for line in self.specials_edit.lines():
            beside.append(f"→ {id_of[line]}" if line in id_of and line not in shown else "")
            shown.add(line)
        self.specials_beside = beside
        self._show_ids_beside()
        self._kept_specials = kept
        self._show_whose_ids()
        tokens_problem = self.specials_edit.problem()
        self.specials_edit.setStyleSheet(problem_style() if tokens_problem else "")
        help_text = f"{self.specials_edit.HELP}\n\n{ids}"
        self.specials_edit.setToolTip(
            f"{tokens_problem}\n\n{help_text}" if tokens_problem else help_text
        )
        size_problem = (
            self.vocab_spin.problem()
            or RunSettings(self.vocab_spin.value(), specials).vocab_problem()
        )
        self.vocab_spin.setStyleSheet(problem_style() if size_problem else "")
        self.vocab_spin.setToolTip(
            f"{size_problem}\n\n{VOCAB_HELP}" if size_problem else VOCAB_HELP
        )
        problem = self.input_problem()
        self.problem_label.setText(problem or "")
        if self._hub is not None:
            self._show_run()  # shows the problem too
        else:
            self._show_problem(problem)

    @Slot()
    def _show_ids_beside(self) -> None:
        """The ids of the lines the edit shows, beside them. subtle: every line's id, under a
        scrolled edit, put 256 beside its fourth token, and a column taller than the edit
        stood above its first line."""
        edit = self.specials_edit
        first = edit.first_line_shown()
        shown = self.specials_beside[first : first + edit.LINES_SHOWN]
        self.specials_ids.setText("\n".join(shown))

    def _show_whose_ids(self) -> None:
        """Say that the ids beside the special tokens are the next run's, when the tokenizer
        on screen has other special tokens (so other ids: "<s> → 256" beside a vocabulary
        whose 256 is <|endoftext|>)."""
        kept = self._kept_specials
        ids = special_ids_text(kept)
        state = self._hub.state if self._hub is not None else None
        on_screen = state is not None and (state.result is not None or state.loaded is not None)
        other = on_screen and state is not None and state.special_tokens != kept
        title = NEXT_RUN_TITLE if other else SPECIALS_TITLE
        if self.specials_title.text() != title:  # set only when it changes: no relayout
            self.specials_title.setText(title)
        if other and state is not None:
            theirs = special_ids_text(tuple(state.special_tokens))
            ids = f"The next run's ids:\n{ids}\n\nThe tokenizer on screen's:\n{theirs}"
        self.specials_ids.setToolTip(ids)

    def _show_problem(self, problem: str | None) -> None:
        """The inputs' problem in the status line's place while the inputs can be changed
        (while a run trains they are disabled, and the status line says how it goes)."""
        state = self._hub.state if self._hub is not None else None
        busy = state is not None and (state.phase.training or _io_under_way(state))
        shown = problem is not None and not busy
        self.problem_label.setVisible(shown)
        self.status.setVisible(not shown)

    def bind(self, hub: AppModel) -> None:
        """Show ``hub.state``: corpus, buttons, progress and status follow it."""
        self._hub = hub
        # The field is the model's, so every view reads the corpus opened as the next Train
        # will (the Vocabulary lab's "The opened corpus", the Report). subtle: once typed
        # (Enter, or focus gone), not at each key: a lab shown read the records by "b",
        # "bo"... on the way to "body", each a failure said in a dialog.
        hub.set_text_field(self.text_field_edit.text())
        self.text_field_edit.editingFinished.connect(self._text_field_typed)
        hub.corpus_changed.connect(self._show_corpus)
        hub.reset.connect(self._on_reset)
        hub.updated.connect(self._show_run)
        # A replay moves the step without frames: the status line says where it is.
        hub.replay_changed.connect(self._show_run)
        hub.step_changed.connect(self._show_replay_step)
        self._on_reset()
        self._show_corpus()
        self._show_run()

    @Slot()
    def _text_field_typed(self) -> None:
        self._bound_hub().set_text_field(self.text_field_edit.text())

    def _bound_hub(self) -> AppModel:
        """The hub shown; the slots that ask are connected by ``bind``, which sets it."""
        assert self._hub is not None
        return self._hub

    @Slot()
    def _on_reset(self) -> None:
        self._run_corpus = self._bound_hub().state.corpus_source

    @Slot()
    def _show_corpus(self) -> None:
        state = self._bound_hub().state
        if state.phase in (Phase.IDLE, Phase.LOADED):
            self._run_corpus = state.corpus_source  # no run on screen to make old news
        source = state.corpus_source
        records = source is not None and source.records
        self.text_field_label.setVisible(records)
        self.text_field_edit.setVisible(records)
        self.corpus_label.show_corpus(*corpus_words(source))

    @Slot(int)
    def _show_replay_step(self, _step: int) -> None:
        if self._bound_hub().state.replaying:
            self.status.setText(status_text(self._bound_hub().state, self.new_corpus))

    @Slot()
    def _show_run(self, *_: object) -> None:
        state = self._bound_hub().state
        phase = state.phase
        busy = phase.training or _io_under_way(state)
        for widget in (
            self.open_button,
            self.vocab_spin,
            self.pattern_choice,
            self.specials_edit,
            self.workers_spin,
            self.load_button,
            self.glob_button,
            self.text_field_edit,
            self.cluster_choice,
        ):
            widget.setEnabled(not busy)
        problem = self.input_problem()
        ready = state.corpus_source is not None and problem is None
        self.train_button.setEnabled(not busy and ready)
        self.train_button.setToolTip(problem or "")
        self._show_problem(problem)
        self._show_whose_ids()
        self.pause_button.setEnabled(phase.training and not state.stopping)
        self.pause_button.setText("Resume" if phase is Phase.PAUSED else "Pause")
        self.stop_button.setEnabled(phase.training and not state.stopping)
        self.save_button.setEnabled(saveable_merges(state) > 0)
        self._show_progress(state)
        self.status.setText(status_text(state, self.new_corpus))

    def _show_progress(self, state: RunState) -> None:
        phase = state.phase
        if self.new_corpus:
            self._set_bar(1, 0, "%p%")
            return
        if phase is Phase.PAUSED:
            phase = state.resume_to or Phase.MERGING
        if (
            _io_under_way(state)
            or compiling_shown(state)
            or (phase is Phase.PRE_TOKENIZING and 0 < state.bytes_total <= state.bytes_done)
        ):
            # Busy: no fraction to show (a tokenizer file being read, a compile, the pair
            # count). subtle: loading keeps the run's phase until the file is read, so the
            # phase alone showed the old run's "100%" beside "Loading …".
            self._set_bar(0, 0, "")
        elif phase is Phase.PRE_TOKENIZING:
            total = state.bytes_total
            self._set_bar(1000, int(1000 * state.bytes_done / total) if total else 0, "%p%")
        elif phase is Phase.MERGING or phase is Phase.STOPPED:
            self._set_bar(max(state.target_merges, 1), state.published, "%p%")
        elif phase is Phase.FINISHED:
            self._set_bar(1, 1, "%p%")
        elif phase is Phase.LOADED:
            self._set_bar(1, 0, "")
        else:
            self._set_bar(1, 0, "%p%")

    def _set_bar(self, maximum: int, value: int, fmt: str) -> None:
        bar = self.progress
        # subtle: QProgressBar.setValue repaints at once (QWidget.repaint), and a synchronous
        # repaint paints every region of the window marked dirty so far in this frame, so the
        # window would be painted from here, in the middle of the frame, and again after it.
        # With updates off meanwhile, the bar is repainted with the rest, once, afterwards.
        bar.setUpdatesEnabled(False)
        try:
            if bar.maximum() != maximum:
                bar.setRange(0, maximum)
            if bar.value() != value:
                bar.setValue(min(value, maximum))
            if bar.format() != fmt:
                bar.setFormat(fmt)
        finally:
            bar.setUpdatesEnabled(True)  # schedules the bar's repaint (QWidget.update)


def _io_under_way(state: RunState) -> bool:
    """A tokenizer is being loaded or saved: the controls that start something are off, and
    the bar is busy (it has no fraction to show)."""
    return state.loading is not None or state.saving is not None
