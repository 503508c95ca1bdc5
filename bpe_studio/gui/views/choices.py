"""Choosing a tokenizer for the Compare and Report pages, and loading it off the GUI thread.

What it does: :class:`TokenizerChoice` is a combo box offering the shipped presets (GPT-2,
GPT-4's cl100k_base, GPT-4o's o200k_base), the run's tokenizer (``hub.state.shown``), the
Hugging Face Hub's popular and recent models and "Open from Hugging Face Hub…" (``hub_models``;
a model's tokenizer is fetched in the page's job, its progress shown in a dialog), any
tokenizer file loaded through it (GPT-2 directory, ``tokenizer.json`` of any kind,
``.tiktoken``) or offered by the app, and, where asked for, nothing. A Hub model's label is
its name ("meta-llama/Llama-3.1-8B"), which the Report shows.
:meth:`TokenizerChoice.current` gives a :class:`Choice`: a label and a ``get`` function that
builds the tokenizer when called, meant to be called in a background job. Presets, files and
Hub models are built once and kept in :data:`CACHE` (a lock makes two jobs asking for
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
from ...core.encode.foreign import AnyTokenizer, open_hub, open_tokenizer
from ...core.io.hf_hub import HubModel, parse_repo
from ..hub import StateHub
from ..loader import OfferedTokenizer
from .hub_models import (
    HUB_ACTION,
    DownloadProgress,
    ask_model,
    hub_entries,
    recent_label,
    recent_signal,
    remember_model,
)

PRESET_LABELS: tuple[tuple[str, str], ...] = (
    ("GPT-2", "gpt2"),
    ("GPT-4 (cl100k_base)", "cl100k_base"),
    ("GPT-4o (o200k_base)", "o200k_base"),
)
HUB_TIP = "A model on the Hugging Face Hub: its tokenizer.json is downloaded once, then read "
HUB_TIP += "from the Hub's cache (offline too). Gated models need `hf auth login` first."
RUN = "run"
NONE = "none"
LOAD = "load"
OFFERED = "offered"  # a tokenizer loaded elsewhere in the app, already built
HF = "hf"  # a Hugging Face Hub model, "ORG/NAME[@REVISION]"
ASK_HUB = "ask-hub"  # the "Open from Hugging Face Hub…" action
ACTIONS = ((LOAD, ""), (ASK_HUB, ""))


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

    def hub_model(
        self, model: HubModel, progress: Callable[[int, int | None], None] | None = None
    ) -> AnyTokenizer:
        """A Hub model's tokenizer: from the Hub's cache, or downloaded with ``progress``."""
        return self.get(f"{HF}:{model.name}", lambda: open_hub(model, progress))


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
    """Presets, the run's tokenizer, Hub models, loaded files (and optionally none) in one
    combo box."""

    choice_changed = Signal()  # the chosen tokenizer changed (not emitted for the actions)
    _hub_ended = Signal(str, bool)  # from a job: a Hub model's tokenizer came (or not)

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
        for label, name in hub_entries():
            self.addItem(label, (HF, name))
            self.setItemData(self.count() - 1, HUB_TIP, Qt.ItemDataRole.ToolTipRole)
        self.insertSeparator(self.count())
        self.addItem("Load tokenizer file…", (LOAD, ""))
        self.addItem(HUB_ACTION, (ASK_HUB, ""))
        self.select(default)
        self._previous = self.currentIndex()
        self.progress = DownloadProgress(self)
        self.ask_model: Callable[[], HubModel | None] = lambda: ask_model(self)
        self.activated.connect(self._on_activated)
        self.currentIndexChanged.connect(self._on_index_changed)
        self._hub_ended.connect(self._on_hub_ended, Qt.ConnectionType.QueuedConnection)
        hub.tokenizer_offered.connect(self._on_offered)
        recent_signal().added.connect(self._on_recent)

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
        if kind == NONE or (kind, value) in ACTIONS:
            return None
        if kind == HF:
            return Choice(value, self._hub_getter(parse_repo(value)))
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

    def _hub_getter(self, model: HubModel) -> Callable[[], AnyTokenizer]:
        progress, ended = self.progress.callback(model.name), self._hub_ended

        def get() -> AnyTokenizer:  # in the page's job thread
            try:
                tok = CACHE.hub_model(model, progress)
            except BaseException:
                ended.emit(model.name, False)
                raise
            ended.emit(model.name, True)
            return tok

        return get

    @Slot(str, bool)
    def _on_hub_ended(self, name: str, ok: bool) -> None:
        self.progress.finish()
        if ok:
            remember_model(name)

    @Slot(str)
    def _on_recent(self, name: str) -> None:
        if self.index_of((HF, name)) < 0:
            self._insert(recent_label(name), (HF, name), HUB_TIP)

    def add_hub_model(self, model: HubModel) -> None:
        """Offer a Hub model and choose it (its tokenizer is fetched when first used)."""
        data = (HF, model.name)
        index = self.index_of(data)
        if index < 0:
            index = self._insert(recent_label(model.name), data, HUB_TIP)
        self.setCurrentIndex(index)

    def index_of(self, data: tuple[str, str]) -> int:
        """The index of the entry holding ``data`` (kind, value), or -1."""
        return next((i for i in range(self.count()) if self.itemData(i) == data), -1)

    def _insert(self, label: str, data: tuple[str, str], tooltip: str) -> int:
        """Put an entry before the separator above the actions; its index."""
        index = self.index_of(ACTIONS[0]) - 1
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
        if self.itemData(index) not in ACTIONS:
            return
        # The actions are not choices: go back, then ask.
        self.setCurrentIndex(self._previous)
        if self.itemData(index) == (ASK_HUB, ""):
            model = self.ask_model()
            if model is not None:
                self.add_hub_model(model)
            return
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
        if self.itemData(index) in ACTIONS or index == self._previous:
            return  # the actions are no choices; stepping back from one changes nothing
        self._previous = index
        self.choice_changed.emit()
