"""The training controls: corpus, settings, Train / Pause / Stop, save and load, progress.

What it does: :class:`TrainingPanel` holds the inputs (vocabulary size, special tokens,
workers), the buttons, a progress bar and a status line, and enables the buttons that make
sense in each state. :func:`status_text` writes the status line from a session's numbers.
What it leaves out: what the buttons do (the main window connects them).
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
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


def status_text(
    phase: str,
    *,
    bytes_done: int = 0,
    bytes_total: int = 0,
    merges_done: int = 0,
    target: int = 0,
    rate: float = 0.0,
    elapsed: float = 0.0,
    paused: bool = False,
) -> str:
    """The status line while a run is going: phase, progress, merges/s, elapsed, remaining."""
    head = "Paused · " if paused else ""
    if phase == "pre-tokenizing":
        return (
            f"{head}Pre-tokenizing: {format_bytes(bytes_done)} / {format_bytes(bytes_total)}"
            f" · {format_duration(elapsed)} elapsed"
        )
    text = f"{head}Merging: {merges_done:,} / {target:,} · {rate:,.0f} merges/s"
    text += f" · {format_duration(elapsed)} elapsed"
    if rate > 0 and target > merges_done:
        text += f" · ~{format_duration((target - merges_done) / rate)} left"
    return text


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
        self.set_state("idle")

    def special_tokens(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.specials_edit.text().split()))

    def set_corpus(self, path: Path | None) -> None:
        if path is None:
            self.corpus_label.setText("No corpus: open one or drop a file on the window")
            return
        try:
            size = format_bytes(path.stat().st_size)
        except OSError:
            size = "unreadable"
        self.corpus_label.setText(
            f"<b>{path.name}</b> <span style='color:{MUTED}'>· {size} · {path.parent}</span>"
        )
        self.corpus_label.setToolTip(str(path))

    def set_state(self, state: str, *, has_corpus: bool = False, can_save: bool = False) -> None:
        """``state``: "idle", "running", "paused", "loading" (a tokenizer) or "done"."""
        busy = state in ("running", "paused", "loading")
        for widget in (
            self.open_button,
            self.vocab_spin,
            self.specials_edit,
            self.workers_spin,
            self.load_button,
        ):
            widget.setEnabled(not busy)
        self.train_button.setEnabled(not busy and has_corpus)
        training = state in ("running", "paused")
        self.pause_button.setEnabled(training)
        self.pause_button.setText("Resume" if state == "paused" else "Pause")
        self.stop_button.setEnabled(training)
        self.save_button.setEnabled(not busy and can_save)
