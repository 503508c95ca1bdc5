"""The editor's tokenizer picker: the run's tokenizer, a real model's, or a loaded file's.

What it does: :class:`TokenizerPicker` is a labelled combo box above the editor. "The run's
tokenizer" (the default) leaves the editor on what the run shows (the training run at the
timeline's step, or the file Load tokenizer… opened); GPT-2, GPT-4 (cl100k_base) and GPT-4o
(o200k_base) are the presets shipped with the package (``Tokenizer.preset``); the Hugging Face
Hub's popular and recent models and "Open from Hugging Face Hub…" (``hub_models``: fetched
in the job thread, a download's progress in a dialog) follow; every tokenizer file loaded
this session is listed too, so it stays at hand after the next Train. Choosing one
calls ``hub.pick_tokenizer`` (None for the run's). A preset is built on first use in a
:class:`~..jobs.LatestJob` thread (o200k takes about a second), then kept; a newer choice
supersedes a build under way, and only the latest choice reaches the editor.
What it leaves out: reading files (``loader``: the controller loads them and the picker lists
what the state shows) and tokenizing the text (``spans``).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from ...core import Tokenizer
from ...core.encode.foreign import AnyTokenizer, ForeignTokenizer
from ...core.io.hf_hub import HubModel, parse_repo
from ..hub import StateHub
from ..jobs import LatestJob
from ..loader import OfferedTokenizer
from ..responsiveness import keep_out_of_collections
from ..spans import TokenizerSource
from ..state import Phase
from ..worker import describe_job_error
from . import hub_models
from .choices import CACHE, HUB_TIP
from .common import MUTED, steady_label

RUN = ""  # the key of "The run's tokenizer"
# The presets: menu label, Tokenizer.preset name.
PRESETS: tuple[tuple[str, str], ...] = (
    ("GPT-2", "gpt2"),
    ("GPT-4 (cl100k_base)", "cl100k_base"),
    ("GPT-4o (o200k_base)", "o200k_base"),
)


HF_PREFIX = "hf:"  # the key of a Hub model: "hf:ORG/NAME[@REVISION]"
ASK_HUB = "ask-hub"  # the key of "Open from Hugging Face Hub…"


def preset_key(name: str) -> str:
    return f"preset:{name}"


def hub_key(name: str) -> str:
    return HF_PREFIX + name


class TokenizerPicker(QWidget):
    """Which tokenizer the editor colours its text with."""

    def __init__(self, hub: StateHub, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.combo = QComboBox()
        self.combo.setToolTip(
            "The tokenizer the editor shows: the run's (trained or loaded), a real model's, or "
            "any tokenizer file loaded this session"
        )
        self.combo.addItem("The run's tokenizer", RUN)
        for label, name in PRESETS:
            self.combo.addItem(label, preset_key(name))
        self.combo.insertSeparator(self.combo.count())
        for label, name in hub_models.hub_entries():
            self.combo.addItem(label, hub_key(name))
            self.combo.setItemData(self.combo.count() - 1, HUB_TIP, Qt.ItemDataRole.ToolTipRole)
        self.combo.addItem(hub_models.HUB_ACTION, ASK_HUB)
        self.combo.setMinimumContentsLength(22)
        self.note = steady_label(QLabel(""))
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # it names files
        self.note.setStyleSheet(f"color: {MUTED}")
        title = QLabel("Editor tokenizer")
        title.setBuddy(self.combo)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self.combo)
        layout.addWidget(self.note, 1)
        self._built: dict[str, AnyTokenizer] = {}  # key -> tokenizer, built or loaded
        self._loaded_ids: set[int] = set()  # id() of the LoadedTokenizer records listed
        self._job = LatestJob("bpe-preset", self, describe=describe_job_error)
        self._job.done.connect(self._on_built)
        self._job.failed.connect(self._on_failed)
        self.progress = hub_models.DownloadProgress(self)
        self.ask_model: Callable[[], HubModel | None] = lambda: hub_models.ask_model(self)
        self._last_key = RUN  # the choice before an action (to go back to)
        self.combo.currentIndexChanged.connect(self._on_choice)
        hub.reset.connect(self._on_reset)
        hub.tokenizer_offered.connect(self._on_offered)
        hub_models.recent_signal().added.connect(self._on_recent)

    # ------------------------------------------------------------ queries
    @property
    def key(self) -> str:
        """The key of the current choice: RUN, ``preset:NAME`` or ``file:PATH``."""
        return str(self.combo.currentData())

    @property
    def busy(self) -> bool:
        """A preset is being built for the current choice."""
        return self._job.busy

    def keys(self) -> list[str]:
        return [str(self.combo.itemData(i)) for i in range(self.combo.count())]

    # ------------------------------------------------------------ choices
    def pick(self, key: str) -> None:
        """Choose by key (as the user would in the combo box)."""
        index = self.combo.findData(key)
        if index < 0:
            raise ValueError(f"no tokenizer {key!r} in the picker; it has {self.keys()}")
        self.combo.setCurrentIndex(index)

    def add_tokenizer(self, key: str, label: str, tokenizer: AnyTokenizer) -> None:
        """List a tokenizer (a loaded file); an existing key is replaced by the new one."""
        self._built[key] = tokenizer
        if self.combo.findData(key) < 0:
            self.combo.addItem(label, key)

    def add_hub_model(self, model: HubModel) -> None:
        """List a Hub model (before the Hub action) and choose it: its tokenizer is fetched
        (from the Hub's cache, or downloaded) in the job thread."""
        self._on_recent(model.name)
        self.pick(hub_key(model.name))

    @Slot(str)
    def _on_recent(self, name: str) -> None:
        """List a Hub model opened anywhere in the app (not chosen)."""
        key = hub_key(name)
        if self.combo.findData(key) < 0:
            index = self.combo.findData(ASK_HUB)
            self.combo.insertItem(index, hub_models.recent_label(name), key)
            self.combo.setItemData(index, HUB_TIP, Qt.ItemDataRole.ToolTipRole)

    @Slot()
    def _on_reset(self) -> None:
        loaded = self.hub.state.loaded
        if self.hub.state.phase is not Phase.LOADED or loaded is None:
            return
        if id(loaded) not in self._loaded_ids:
            self._loaded_ids.add(id(loaded))
            path = loaded.vocab_file
            self.add_tokenizer(f"file:{path}", f"File: {path.name}", loaded.tokenizer)
        # The loaded file is the run now: the editor shows it.
        self.pick(RUN)

    @Slot(object)
    def _on_offered(self, offered: OfferedTokenizer) -> None:
        """A tokenizer loaded to look at (another kind than byte-level BPE): the editor
        shows it."""
        key = f"file:{offered.source}"
        self.add_tokenizer(key, offered.label, offered.tokenizer)
        if self.key == key:
            self._show(key, offered.tokenizer)
        else:
            self.pick(key)

    @Slot(int)
    def _on_choice(self, index: int) -> None:
        key, label = self.key, self.combo.itemText(index)
        if key == ASK_HUB:
            # An action, not a choice: back to the choice before it, then ask.
            self.combo.blockSignals(True)
            self.combo.setCurrentIndex(self.combo.findData(self._last_key))
            self.combo.blockSignals(False)
            model = self.ask_model()
            if model is not None:
                self.add_hub_model(model)
            return
        self._last_key = key
        if key == RUN:
            self._job.cancel()
            self.note.setText("")
            self.hub.pick_tokenizer(None)
            return
        tokenizer = self._built.get(key)
        if tokenizer is not None:
            self._show(key, tokenizer)
            return
        name = key.removeprefix("preset:")
        self.note.setText(f"Loading {label}…")
        model = parse_repo(key.removeprefix(HF_PREFIX)) if key.startswith(HF_PREFIX) else None
        progress = self.progress.callback(model.name) if model is not None else None

        def job(is_stale: Callable[[], bool]) -> tuple[str, AnyTokenizer]:
            if model is not None:
                return key, CACHE.hub_model(model, progress)
            return key, Tokenizer.preset(name)

        self._job.submit(job)

    def _show(self, key: str, tokenizer: AnyTokenizer) -> None:
        label = self.combo.itemText(self.combo.findData(key))
        size = f"{len(tokenizer.vocab):,} tokens, {tokenizer.pattern_name or 'custom'} pattern"
        if isinstance(tokenizer, ForeignTokenizer):
            size = f"{len(tokenizer.vocab):,} tokens, {tokenizer.kind}, run by tokenizers"
        self.note.setText(size)
        self.hub.pick_tokenizer(TokenizerSource(f"Tokenizer: {label}", tokenizer=tokenizer))

    @Slot(object)
    def _on_built(self, built: tuple[str, AnyTokenizer]) -> None:
        key, tokenizer = built
        self._built[key] = tokenizer
        if key.startswith(HF_PREFIX):
            self.progress.finish()
            hub_models.remember_model(key.removeprefix(HF_PREFIX))
        keep_out_of_collections()  # a preset's tables: no full collector pass walks them again
        if key == self.key:  # the latest choice (a stale build never arrives)
            self._show(key, tokenizer)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.progress.finish()
        self.note.setText(f"Could not load: {message}")

    def shutdown(self) -> None:
        """Abandon a build under way and wait for its thread (closing the window)."""
        self._job.shutdown()
