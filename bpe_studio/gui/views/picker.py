"""Choosing a tokenizer: the one combo box the editor, Compare and Report pick tokenizers with.

What it does: :class:`TokenizerPicker` offers, in this order (:meth:`TokenizerPicker._fill`,
the one place that lists them): nothing, where asked for; the run's tokenizer
(``hub.state.shown``); the presets the core ships (``core.presets``: GPT-2, GPT-4's
cl100k_base, GPT-4o's o200k_base); every tokenizer file offered to it this session; then, below
a separator, its actions (:data:`ACTIONS`: "Load tokenizer file…" asks for a file and offers
it). Each choice has a key (:data:`RUN`, :data:`NONE`, :func:`preset_key`, :func:`file_key`).
:meth:`TokenizerPicker.current` gives a :class:`Choice`: the key, a label and a ``get``
function that builds the tokenizer when called, meant to be called in a background job.
Presets and files are built once into the picker's
:class:`~..model.tokenizer_cache.TokenizerCache`; the Compare and Report pickers share
:data:`SHARED` (their jobs encode under :data:`ENCODE_LOCK`).
What it leaves out: running jobs (the pages and the editor's bar hold their ``LatestJob``),
what the tokenizers are used for, and reading files in the editor's run (``loader``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QWidget

from ...core import Tokenizer
from ...core.formats.preset_table import PRESETS, preset_label
from ..hub import StateHub
from ..loader import ask_for_tokenizer_file
from ..model.tokenizer_cache import TokenizerCache

RUN = "run"  # the run's tokenizer (trained or loaded)
NONE = "none"  # no tokenizer (an optional slot)
LOAD_FILE = "load-file"
# The actions a picker may offer below its choices, by key: the menu label. Choosing one runs
# it (TokenizerPicker._actions) and goes back to the choice before.
ACTIONS: dict[str, str] = {LOAD_FILE: "Load tokenizer file…"}

SHARED = TokenizerCache()  # the Compare and Report pickers' presets and files
# subtle: the pages' jobs run in their own threads but share SHARED's tokenizers, whose
# encoding caches are not made for two threads at once (one may clear the cache while another
# reads it), so a job encodes only while it holds this lock.
ENCODE_LOCK = threading.Lock()


def preset_key(name: str) -> str:
    return f"preset:{name}"


def file_key(path: Path) -> str:
    return f"file:{path}"


@dataclass(frozen=True)
class Choice:
    """A chosen tokenizer: its key, its label, and ``get`` to build it (call it off the GUI
    thread)."""

    key: str
    label: str
    get: Callable[[], Tokenizer]


def _no_run() -> Tokenizer:
    raise ValueError("there is no run's tokenizer yet: train one or load one first")


def tokenizer_source(path: Path) -> Path:
    """What ``Tokenizer.load`` reads for a chosen file: a GPT-2 ``vocab.json`` (or GPT-2's
    ``gpt2_vocab.json``) stands for its directory, any other file for itself."""
    if path.suffix.lower() == ".json" and path.name != "tokenizer.json" and "vocab" in path.name:
        return path.parent
    return path


class TokenizerPicker(QComboBox):
    """The run's tokenizer, presets, files (and optionally none), then actions, in one combo
    box; ``choice_changed`` says the choice changed (not emitted for an action)."""

    choice_changed = Signal()

    def __init__(
        self,
        hub: StateHub,
        *,
        default: str = RUN,
        allow_none: bool = False,
        actions: Sequence[str] = (LOAD_FILE,),
        cache: TokenizerCache = SHARED,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.hub = hub
        self.cache = cache
        self.setMinimumContentsLength(18)
        self._actions: dict[str, Callable[[], None]] = {LOAD_FILE: self._ask_for_file}
        self._fill(allow_none, actions)
        self.pick(default)
        self._previous = self.currentIndex()
        self.activated.connect(self._on_activated)
        self.currentIndexChanged.connect(self._on_index_changed)

    def _fill(self, allow_none: bool, actions: Sequence[str]) -> None:
        """Every choice, in order; files come after the presets (:meth:`add_file`)."""
        if allow_none:
            self.addItem("(none)", NONE)
        self.addItem("The run's tokenizer", RUN)
        for name in PRESETS:
            self.addItem(preset_label(name), preset_key(name))
        self._files_end = self.count()  # where the next file is inserted
        if actions:
            self.insertSeparator(self.count())
        for key in actions:
            self.addItem(ACTIONS[key], key)

    # ------------------------------------------------------------ queries
    @property
    def key(self) -> str:
        """The key of the current choice."""
        return str(self.currentData())

    def keys(self) -> list[str]:
        """Every choice's and action's key, in order (a separator's is "None")."""
        return [str(self.itemData(i)) for i in range(self.count())]

    @property
    def uses_run(self) -> bool:
        return self.key == RUN

    def current(self) -> Choice | None:
        """The chosen tokenizer, or None when "(none)" is chosen."""
        key, label = self.key, self.currentText()
        if key == NONE or key in ACTIONS:
            return None
        if key == RUN:
            source = self.hub.state.shown  # read now, on the GUI thread; built in the job
            return Choice(key, label, _no_run if source is None else source.get)
        kind, _, value = key.partition(":")
        cache = self.cache
        if kind == "preset":
            return Choice(key, label, lambda: cache.get(key, lambda: Tokenizer.preset(value)))
        path = Path(value)
        return Choice(key, label, lambda: cache.get(key, lambda: Tokenizer.load(path)))

    # ------------------------------------------------------------ choices
    def pick(self, key: str) -> None:
        """Choose by key (as the user would in the combo box)."""
        index = self.findData(key)
        if index < 0:
            raise ValueError(f"no tokenizer {key!r} in the picker; it has {self.keys()}")
        self.setCurrentIndex(index)

    def add_file(
        self, path: str | Path, tokenizer: Tokenizer | None = None, *, choose: bool = True
    ) -> str:
        """Offer a tokenizer file (or GPT-2 directory), and choose it unless ``choose`` is
        false; returns its key. With ``tokenizer`` (the file read already), that is the file's
        tokenizer from now on."""
        source = tokenizer_source(Path(path))
        key = file_key(source)
        if tokenizer is not None:
            self.cache.put(key, tokenizer)
        index = self.findData(key)
        if index < 0:
            index = self._files_end
            self._files_end += 1
            self.insertItem(index, f"{source.name}/" if source.is_dir() else source.name, key)
            self.setItemData(index, str(source), Qt.ItemDataRole.ToolTipRole)
        if choose:
            self.setCurrentIndex(index)
        return key

    @Slot()
    def _ask_for_file(self) -> None:
        path = ask_for_tokenizer_file(self)
        if path:
            self.add_file(path)

    @Slot(int)
    def _on_activated(self, index: int) -> None:
        action = self._actions.get(str(self.itemData(index)))
        if action is None:
            return
        # An action is not a choice: go back, then run it.
        self.setCurrentIndex(self._previous)
        action()

    @Slot(int)
    def _on_index_changed(self, index: int) -> None:
        if str(self.itemData(index)) in ACTIONS or index == self._previous:
            return  # an action is not a choice; stepping back from it changes nothing
        self._previous = index
        self.choice_changed.emit()
