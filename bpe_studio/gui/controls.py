"""The training controls: corpus, settings, Train / Pause / Stop, save and load, progress.

What it does: :class:`TrainingPanel` holds the inputs (vocabulary size, special tokens,
workers), the buttons, a progress bar and a status line; bound to the ``StateHub``, it shows
the corpus, enables the buttons that make sense in the state's phase and shows the progress.
:func:`status_text` writes the status line from the state.
What it leaves out: what the buttons do (the main window connects them).
"""

from __future__ import annotations

import html
import os

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QWidget,
)

from .hub import StateHub
from .state import Phase, RunState
from .views.common import MUTED, steady_label

DEFAULT_VOCAB_SIZE = 10_000
DEFAULT_SPECIALS = "<|endoftext|>"


def format_duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def format_bytes(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _running_text(state: RunState, phase: Phase) -> str:
    head = "Paused · " if state.phase is Phase.PAUSED else ""
    if phase is Phase.PRE_TOKENIZING:
        return (
            f"{head}Pre-tokenizing: {format_bytes(state.bytes_done)} / "
            f"{format_bytes(state.bytes_total)} · {format_duration(state.elapsed)} elapsed"
        )
    done, target, rate = state.published, state.target_merges, state.rate
    text = f"{head}Merging: {done:,} / {target:,} · {rate:,.0f} merges/s"
    text += f" · {format_duration(state.elapsed)} elapsed"
    if rate > 0 and target > done:
        text += f" · ~{format_duration((target - done) / rate)} left"
    return text


def status_text(state: RunState) -> str:
    """The status line for the state: the run's progress, its outcome, or what was loaded."""
    phase = state.phase
    if state.loading is not None:
        vocab_file, merges_file = state.loading
        return f"Loading {vocab_file.name} and {merges_file.name}…"
    if state.load_error is not None:
        return "Loading failed"
    if phase.training:
        if state.stopping:
            return "Stopping…"
        running = (state.resume_to or Phase.MERGING) if phase is Phase.PAUSED else phase
        return _running_text(state, running)
    result = state.result
    if phase is Phase.FAILED or (phase in (Phase.FINISHED, Phase.STOPPED) and result is None):
        return "Training failed"
    if result is not None and phase in (Phase.FINISHED, Phase.STOPPED):
        n = len(result.merges)
        rate = n / result.merge_seconds if result.merge_seconds > 0 else 0.0
        took = f"{format_duration(result.merge_seconds)}, {rate:,.0f} merges/s"
        if result.stopped:
            return (
                f"Stopped after {n:,} of {result.target_merges:,} merges ({took}); Save keeps them"
            )
        if result.exhausted:
            size = state.settings.vocab_size if state.settings else len(result.vocab)
            return (
                f"Pairs ran out after {n:,} merges ({took}): vocabulary "
                f"{len(result.vocab):,} of {size:,}"
            )
        return f"Done: {n:,} merges in {took}"
    if phase is Phase.LOADED and state.loaded is not None:
        loaded, tok = state.loaded, state.loaded.tokenizer
        specials = loaded.special_tokens
        special = f", special tokens {', '.join(specials)}" if specials else ""
        return (
            f"Loaded {loaded.vocab_file.name}: {len(tok.vocab):,} tokens, "
            f"{len(tok.merges):,} merges{special}"
        )
    return "Ready"


class TrainingPanel(QWidget):
    """Inputs, buttons, progress bar and status line along the top of the window."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trainingPanel")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.open_button = QPushButton("Open corpus…")
        self.corpus_label = QLabel("No corpus: open one or drop a file on the window")
        self.corpus_label.setStyleSheet(f"color: {MUTED}")
        self.corpus_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.vocab_spin = QSpinBox()
        self.vocab_spin.setRange(257, 1_000_000)
        self.vocab_spin.setGroupSeparatorShown(True)
        self.vocab_spin.setValue(DEFAULT_VOCAB_SIZE)
        self.vocab_spin.setToolTip("Vocabulary size: 256 bytes + special tokens + merges")
        self.specials_edit = QLineEdit(DEFAULT_SPECIALS)
        self.specials_edit.setToolTip("Special tokens, separated by spaces (may be empty)")
        self.workers_spin = QSpinBox()
        self.workers_spin.setRange(1, max(1, (os.cpu_count() or 1) * 2))
        self.workers_spin.setValue(os.cpu_count() or 1)
        self.workers_spin.setToolTip("Processes that pre-tokenize the corpus (files over 4 MB)")
        self.train_button = QPushButton("Train")
        self.train_button.setObjectName("primary")
        self.pause_button = QPushButton("Pause")
        self.stop_button = QPushButton("Stop")
        self.save_button = QPushButton("Save tokenizer…")
        self.load_button = QPushButton("Load tokenizer…")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.progress.setMinimumWidth(160)
        self.status = steady_label(QLabel("Ready"))
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # it names files
        self.status.setMinimumWidth(200)

        grid = QGridLayout(self)
        grid.setContentsMargins(10, 8, 10, 8)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(6)
        row1 = QHBoxLayout()
        row1.addWidget(self.open_button)
        row1.addWidget(self.corpus_label, 1)
        for text, widget, stretch in (
            ("Vocabulary size", self.vocab_spin, 0),
            ("Special tokens", self.specials_edit, 0),
            ("Workers", self.workers_spin, 0),
        ):
            label = QLabel(text)
            label.setBuddy(widget)
            row1.addSpacing(10)
            row1.addWidget(label)
            row1.addWidget(widget, stretch)
        self.specials_edit.setMinimumWidth(150)
        self.vocab_spin.setMinimumWidth(100)
        row2 = QHBoxLayout()
        for button in (self.train_button, self.pause_button, self.stop_button):
            row2.addWidget(button)
        row2.addSpacing(12)
        row2.addWidget(self.progress)
        row2.addWidget(self.status, 1)
        row2.addWidget(self.save_button)
        row2.addWidget(self.load_button)
        grid.addLayout(row1, 0, 0)
        grid.addLayout(row2, 1, 0)
        self._hub: StateHub | None = None

    def special_tokens(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.specials_edit.text().split()))

    def bind(self, hub: StateHub) -> None:
        """Show ``hub.state``: corpus, buttons, progress and status follow it."""
        self._hub = hub
        hub.corpus_changed.connect(self._show_corpus)
        hub.updated.connect(self._show_run)
        self._show_corpus()
        self._show_run()

    @Slot()
    def _show_corpus(self) -> None:
        path = self._hub.state.corpus
        if path is None:
            self.corpus_label.setText("No corpus: open one or drop a file on the window")
            self.corpus_label.setToolTip("")
            return
        try:
            size = format_bytes(path.stat().st_size)
        except OSError:
            size = "unreadable"
        # File names may hold markup ("<b>x.txt"): escaped, they show as typed.
        self.corpus_label.setText(
            f"<b>{html.escape(path.name)}</b> <span style='color:{MUTED}'>· {size} · "
            f"{html.escape(str(path.parent))}</span>"
        )
        self.corpus_label.setToolTip(f"<p>{html.escape(str(path))}</p>")

    @Slot()
    def _show_run(self) -> None:
        state = self._hub.state
        phase = state.phase
        busy = phase.training or state.loading is not None
        for widget in (
            self.open_button,
            self.vocab_spin,
            self.specials_edit,
            self.workers_spin,
            self.load_button,
        ):
            widget.setEnabled(not busy)
        self.train_button.setEnabled(not busy and state.corpus is not None)
        self.pause_button.setEnabled(phase.training and not state.stopping)
        self.pause_button.setText("Resume" if phase is Phase.PAUSED else "Pause")
        self.stop_button.setEnabled(phase.training and not state.stopping)
        self.save_button.setEnabled(not busy and state.saveable() is not None)
        self._show_progress(state)
        self.status.setText(status_text(state))

    def _show_progress(self, state: RunState) -> None:
        # subtle: QProgressBar.setValue repaints synchronously; this runs once per frame.
        phase = state.phase
        if phase is Phase.PAUSED:
            phase = state.resume_to or Phase.MERGING
        if phase is Phase.PRE_TOKENIZING:
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
        if bar.maximum() != maximum:
            bar.setRange(0, maximum)
        if bar.value() != value:
            bar.setValue(min(value, maximum))
        if bar.format() != fmt:
            bar.setFormat(fmt)
