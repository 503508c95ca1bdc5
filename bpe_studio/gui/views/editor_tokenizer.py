"""The row above the editor that says which tokenizer colours its text, and lets the user pick one.

What it does: :class:`EditorTokenizer` lays out a title, a :class:`~.picker.TokenizerPicker`
and a note. "The run's tokenizer" (the default) leaves the editor on what the run shows (the
training run at the timeline's step, or the file Load tokenizer… opened); a preset or a file
is built on first use in a :class:`~..jobs.latest.LatestJob` thread, then kept in the picker's own
cache; a newer choice supersedes a build under way, and only the latest choice reaches the
editor (``AppModel.pick_tokenizer``, None for the run's). Every tokenizer file loaded as the run
this session is offered too, so it stays at hand after the next Train.
What it leaves out: the choices themselves (``picker``), reading files (``loader``: the
controller loads them and this row lists what the state shows) and tokenizing the text
(``span_service``).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from ...core.encode.foreign import AnyTokenizer, ForeignTokenizer
from ..jobs.latest import LatestJob
from ..jobs.loader import OfferedTokenizer
from ..model.app_model import AppModel
from ..model.panes import EDITOR
from ..model.state import Phase
from ..model.tokenizer_cache import TokenizerCache
from ..model.tokenizer_source import TokenizerSource
from ..responsiveness.collector import keep_out_of_collections
from .common import steady_label
from .picker import RUN, FailedPick, TokenizerPicker
from .theme import muted


class EditorTokenizer(QWidget):
    """Which tokenizer the editor colours its text with."""

    error = Signal(str, str)  # title, message: a pick that could not be built, said once

    def __init__(self, hub: AppModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        # subtle: a cache of its own, not the pages' (picker.SHARED): the editor's span job
        # encodes without their ENCODE_LOCK, so it must not share their tokenizers.
        self.picker = TokenizerPicker(hub, pane=EDITOR, cache=TokenizerCache())
        self.picker.setToolTip(
            "The tokenizer the editor shows: the run's (trained or loaded), a real model's, or "
            'any tokenizer file loaded this session; "Load tokenizer file…" shows one here '
            "without making it the run"
        )
        self.picker.setMinimumContentsLength(22)
        self.note = muted(steady_label(QLabel("")))
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # it names files
        title = QLabel("Editor tokenizer")
        title.setBuddy(self.picker)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self.picker)
        layout.addWidget(self.note, 1)
        self._job = LatestJob("bpe-preset", self)
        self._job.done.connect(self._on_built)
        self._job.failed.connect(self._on_failed)
        self.picker.choice_changed.connect(self._on_choice)
        hub.reset.connect(self._on_reset)
        hub.tokenizer_offered.connect(self._on_offered)
        hub.file_read_again.connect(self._on_file_read_again)

    @property
    def busy(self) -> bool:
        """A tokenizer is being built for the current choice."""
        return self._job.busy

    @Slot()
    def _on_reset(self) -> None:
        if self.picker.key == RUN:
            # A note on the run's tokenizer (a failed pick's "showing the run's tokenizer")
            # was about the run before: another run or a loaded file is shown now.
            self._set_run_note()
        if self.hub.state.phase is not Phase.LOADED or self.hub.state.loaded is None:
            return
        # The loaded file is the run now (the picker lists it as a file too): the editor
        # shows it.
        self.picker.pick(RUN)

    @Slot(str)
    def _on_file_read_again(self, path: str) -> None:
        """A tokenizer file was loaded again, in any picker: the editor reads it anew if it
        shows it (its version moved on, so the picker builds it again)."""
        if self.picker.key == f"file:{path}":
            self._on_choice()

    @Slot(object)
    def _on_offered(self, offered: OfferedTokenizer) -> None:
        """A tokenizer loaded to look at (the picker listed it first): the editor shows it."""
        key = self.picker.add_file(offered.source, offered.tokenizer, choose=False)
        if self.picker.key == key:
            self._show(key, offered.tokenizer)
        else:
            self.picker.pick(key)

    @Slot()
    def _on_choice(self) -> None:
        choice = self.picker.current()
        if choice is None or choice.key == RUN:
            self._job.cancel()
            self._set_run_note()
            self.hub.pick_tokenizer(None)
            self.hub.pick_ready(EDITOR, RUN)
            return
        tokenizer = self.picker.built(choice.key)
        if tokenizer is not None:
            self._show(choice.key, tokenizer)
            return
        self._set_note(f"Loading {choice.label}…")

        def job(is_stale: Callable[[], bool]) -> tuple[str, AnyTokenizer | FailedPick]:
            return choice.key, choice.build()

        self._job.submit(job)

    def _set_note(self, text: str, tip: str = "") -> None:
        self.note.setText(text)
        self.note.setToolTip(tip or text)  # the whole of it, when the row cuts it

    def _set_run_note(self) -> None:
        """The note on the run's tokenizer: what a file loaded as the run does otherwise than
        it says (its ``notes``: truncation read past, ...), said here as for a picked file;
        a training run has none."""
        loaded = self.hub.state.loaded
        notes = list(loaded.tokenizer.notes) if loaded is not None else []
        self._set_note("; ".join(notes), "\n".join(notes))

    def _show(self, key: str, tokenizer: AnyTokenizer) -> None:
        label = self.picker.itemText(self.picker.findData(key))
        size = f"{len(tokenizer.vocab):,} tokens, {tokenizer.pattern_name or 'custom'} pattern"
        if isinstance(tokenizer, ForeignTokenizer):
            size = f"{len(tokenizer.vocab):,} tokens, {tokenizer.kind}, run by tokenizers"
        # What it does otherwise than its file says follows; the tooltip holds it whole.
        self._set_note("; ".join([size, *tokenizer.notes]), "\n".join([size, *tokenizer.notes]))
        self.hub.pick_tokenizer(TokenizerSource(f"Tokenizer: {label}", tokenizer=tokenizer))
        self.hub.pick_ready(EDITOR, key)

    @Slot(object)
    def _on_built(self, built: tuple[str, AnyTokenizer | FailedPick]) -> None:
        key, tokenizer = built
        if isinstance(tokenizer, FailedPick):
            self._pick_failed(tokenizer)
            return
        keep_out_of_collections()  # a preset's tables: no full collector pass walks them again
        if key == self.picker.key:  # the latest choice (a stale build never arrives)
            self._show(key, tokenizer)

    def _pick_failed(self, failed: FailedPick) -> None:
        """The pick could not be built: the editor keeps the tokenizer it showed (the model
        puts the picker back), and the note says why."""
        if not self.hub.pick_failed_for(EDITOR, failed.key, failed.message):
            return  # another pick came meanwhile
        shown = self.hub.pane(EDITOR).label
        # Mid-sentence: "showing the run's tokenizer", not "showing The run's tokenizer".
        if shown.startswith("The "):
            shown = "the " + shown[4:]
        if failed.cancelled:
            self._set_note(f"{failed.label}: download cancelled · showing {shown}")
            return
        first = failed.what.splitlines()[0]
        self._set_note(
            f"Could not load {first} · showing {shown}",
            f"Could not load {failed.what}\n\nThe editor shows {shown}.",
        )
        # The note is cut beside the picker: the reason is said whole, as the other pages do.
        self.error.emit(
            "Editor tokenizer", f"Could not load {failed.what}\n\nThe editor shows {shown}."
        )

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        # The job catches a failed build itself (Choice.build); this is anything else.
        self._set_note(f"Could not load: {message}")

    def shutdown(self) -> None:
        """Abandon a build under way and wait for its thread (closing the window)."""
        self._job.shutdown()
