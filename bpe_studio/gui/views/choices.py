"""Choosing a tokenizer for the Compare and Report pages, and loading it off the GUI thread.

What it does: :class:`TokenizerChoice` is a combo box offering the shipped presets (GPT-2,
GPT-4's cl100k_base, GPT-4o's o200k_base), the run's tokenizer (``hub.state.shown``), any
tokenizer file loaded through it (GPT-2 directory, ``tokenizer.json``, ``.tiktoken``) and, where
asked for, nothing. :meth:`TokenizerChoice.current` gives a :class:`Choice`: a label and a
``get`` function that builds the tokenizer when called, meant to be called in a background job.
Presets and files are built once and kept in :data:`CACHE` (a lock makes two jobs asking for
the same one wait for one build, not make two); the jobs encode under :data:`ENCODE_LOCK`.
What it leaves out: the editor's own picker, running jobs (the pages hold their
``LatestJob``), what the pages do with the tokenizers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QFileDialog, QWidget

from ...core import Tokenizer
from ...core.foreign import AnyTokenizer, open_tokenizer
from ..hub import StateHub
from ..loader import OfferedTokenizer

PRESET_LABELS: tuple[tuple[str, str], ...] = (
    ("GPT-2", "gpt2"),
    ("GPT-4 (cl100k_base)", "cl100k_base"),
    ("GPT-4o (o200k_base)", "o200k_base"),
)
RUN = "run"
NONE = "none"
LOAD = "load"
OFFERED = "offered"  # a tokenizer loaded elsewhere in the app, already built


class TokenizerCache:
    """Presets and loaded files, each built once (in whichever thread asks first)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built: dict[str, AnyTokenizer] = {}
        self._locks: dict[str, threading.Lock] = {}

    def get(self, key: str, build: Callable[[], AnyTokenizer]) -> AnyTokenizer:
        with self._lock:
            if key in self._built:
                return self._built[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # one build per key; a second caller waits for it instead of building too
            with self._lock:
                if key in self._built:
                    return self._built[key]
            tok = build()
            with self._lock:
                self._built[key] = tok
            return tok

    def preset(self, name: str) -> AnyTokenizer:
        return self.get(f"preset:{name}", lambda: Tokenizer.preset(name))

    def file(self, path: Path) -> AnyTokenizer:
        return self.get(f"file:{path}", lambda: open_tokenizer(path))


CACHE = TokenizerCache()
# subtle: the pages' jobs run in their own threads but share these tokenizers, whose encoding
# caches are not made for two threads at once (one may clear the cache while another reads
# it), so a job encodes only while it holds this lock.
ENCODE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Choice:
    """A chosen tokenizer: its label, and ``get`` to build it (call it off the GUI thread)."""

    label: str
    get: Callable[[], AnyTokenizer]


def _no_run() -> AnyTokenizer:
    raise ValueError("there is no run's tokenizer yet: train one or load one first")


def _not_offered() -> AnyTokenizer:
    raise ValueError("that tokenizer is no longer loaded: open it again")


def tokenizer_source(path: Path) -> Path:
    """What ``Tokenizer.load`` reads for a chosen file: a GPT-2 ``vocab.json`` (or GPT-2's
    ``gpt2_vocab.json``) stands for its directory, any other file for itself."""
    if path.suffix.lower() == ".json" and path.name != "tokenizer.json" and "vocab" in path.name:
        return path.parent
    return path


class TokenizerChoice(QComboBox):
    """Presets, the run's tokenizer, loaded files (and optionally none) in one combo box."""

    choice_changed = Signal()  # the chosen tokenizer changed (not emitted for "Load file…")

    def __init__(
        self,
        hub: StateHub,
        default: str | None = "gpt2",
        allow_none: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.hub = hub
        self.setMinimumContentsLength(18)
        if allow_none:
            self.addItem("(none)", (NONE, ""))
        for label, name in PRESET_LABELS:
            self.addItem(label, ("preset", name))
        self.addItem("The run's tokenizer", (RUN, ""))
        self.insertSeparator(self.count())
        self.addItem("Load tokenizer file…", (LOAD, ""))
        self.select(default)
        self._previous = self.currentIndex()
        self.activated.connect(self._on_activated)
        self.currentIndexChanged.connect(self._on_index_changed)
        hub.tokenizer_offered.connect(self._on_offered)

    def select(self, key: str | None) -> None:
        """Choose a preset by name, ``"run"``, or None for "(none)" (when offered)."""
        for i in range(self.count()):
            data = self.itemData(i)
            if data is None:
                continue
            kind, value = data
            if (key is None and kind == NONE) or (kind == RUN and key == RUN) or value == key:
                self.setCurrentIndex(i)
                return

    @property
    def uses_run(self) -> bool:
        return self.currentData() is not None and self.currentData()[0] == RUN

    def current(self) -> Choice | None:
        """The chosen tokenizer, or None when "(none)" is chosen."""
        kind, value = self.currentData()
        label = self.currentText()
        if kind == NONE or kind == LOAD:
            return None
        if kind == "preset":
            return Choice(label, lambda: CACHE.preset(value))
        if kind == "file":
            path = Path(value)
            return Choice(label, lambda: CACHE.file(path))
        if kind == OFFERED:
            return Choice(label, lambda: CACHE.get(f"{OFFERED}:{value}", _not_offered))
        source = self.hub.state.shown  # read now, on the GUI thread; built in the job
        if source is None:
            return Choice(label, _no_run)
        return Choice(label, source.get)

    def add_file(self, path: str | Path) -> None:
        """Offer a tokenizer file (or GPT-2 directory) and choose it."""
        source = tokenizer_source(Path(path))
        if (index := self.index_of(("file", str(source)))) >= 0:
            self.setCurrentIndex(index)
            return
        name = f"{source.name}/" if source.is_dir() else source.name
        self.setCurrentIndex(self._insert(name, ("file", str(source)), str(source)))

    def index_of(self, data: tuple[str, str]) -> int:
        """The index of the entry holding ``data`` (kind, value), or -1."""
        return next((i for i in range(self.count()) if self.itemData(i) == data), -1)

    def _insert(self, label: str, data: tuple[str, str], tooltip: str) -> int:
        """Put an entry before the separator and "Load tokenizer file…"; its index."""
        index = self.count() - 2
        self.insertItem(index, label, data)
        self.setItemData(index, tooltip, Qt.ItemDataRole.ToolTipRole)
        return index

    @Slot(object)
    def _on_offered(self, offered: OfferedTokenizer) -> None:
        """List a tokenizer loaded elsewhere in the app (not chosen: the pages keep theirs)."""
        key = f"{OFFERED}:{offered.source}"
        CACHE.get(key, lambda: offered.tokenizer)
        if self.index_of((OFFERED, offered.source)) < 0:
            self._insert(offered.label, (OFFERED, offered.source), offered.source)

    @Slot(int)
    def _on_activated(self, index: int) -> None:
        if self.itemData(index) != (LOAD, ""):
            return
        # The "Load…" entry is an action, not a choice: go back, then ask for the file.
        self.setCurrentIndex(self._previous)
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Load tokenizer: a vocab.json (GPT-2), tokenizer.json or .tiktoken file",
            "",
            "Tokenizer files (*.json *.tiktoken *.gz);;All files (*)",
        )
        if path:
            self.add_file(path)

    @Slot(int)
    def _on_index_changed(self, index: int) -> None:
        if self.itemData(index) == (LOAD, "") or index == self._previous:
            return  # "Load…" is not a choice; stepping back from it changes nothing
        self._previous = index
        self.choice_changed.emit()
