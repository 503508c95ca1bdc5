"""Choosing a tokenizer: the one combo box the editor, Compare and Report pick tokenizers with.

What it does: :class:`TokenizerPicker` offers, in this order (:meth:`TokenizerPicker._fill`,
the one place that lists them): nothing, where asked for; the run's tokenizer at the timeline's
step (:meth:`TokenizerPicker.choice`); the presets the core ships (``core.formats.presets``:
GPT-2, GPT-4's cl100k_base, GPT-4o's o200k_base); every tokenizer file loaded this session (as
the run's tokenizer, by any picker's "Load tokenizer file…": ``hub.tokenizer_file_opened``, and
files of another kind than byte-level BPE: ``hub.tokenizer_offered``); the Hugging Face Hub's
popular open models and the ones opened lately, the newest first (``hub_models``, read again
each time the list opens: another window may have opened one); then, below a separator, its
actions (:data:`ACTIONS`: "Load tokenizer file…" asks for a file and offers it, "Open from
Hugging Face Hub…" for ``ORG/NAME[@REVISION]``). A Hub model's tokenizer is fetched by ``get``
(in the caller's job, a download's progress shown in a dialog) and labelled with the model's
name, which the Report's columns show. Each choice has a key (:data:`RUN`, :data:`NONE`,
:func:`preset_key`, :func:`file_key`, :func:`hub_key`). :meth:`TokenizerPicker.current` gives a
:class:`Choice`: the key, a label and a ``get`` function that builds the tokenizer when called,
meant to be called in a background job. Presets, files and Hub models are built once into the
picker's :class:`~..model.tokenizer_cache.TokenizerCache`; the Compare and Report pickers share
:data:`SHARED`, and the run's tokenizer cut to a step :data:`RUN_STEPS` (their jobs encode
under :data:`ENCODE_LOCK`). A file is kept with the version it was read at
(``model.file_versions``): one changed on disk since is read again when next built, and "Load
tokenizer file…" of a file listed reads it again, which the app model tells every view
(``AppModel.read_file_again``).
What it leaves out: running jobs (the pages and the editor's bar hold their ``LatestJob``),
what the tokenizers are used for, and reading files in the editor's run (``loader``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent, QWheelEvent
from PySide6.QtWidgets import QComboBox, QInputDialog, QStyle, QWidget

from ...core import PATTERNS, Tokenizer
from ...core.encode.foreign import AnyTokenizer, open_hub, open_tokenizer
from ...core.formats.base.preset_table import PRESETS, preset_label
from ...core.io.hf_hub import HubModel, parse_repo
from ..jobs.loader import TOKENIZER_FILTER, OfferedTokenizer, needs_pattern
from ..model.app_model import AppModel
from ..model.errors import describe_job_error, named_once
from ..model.file_names import tokenizer_source
from ..model.file_versions import file_version
from ..model.run_tokenizer import RUN_LABEL, run_name, run_tokenizer_at
from ..model.state import Phase, RunState
from ..model.tokenizer_cache import TokenizerCache
from ..model.tokenizer_source import TokenizerSource
from . import hub_models
from .file_dialogs import TOKENIZER, open_file

RUN = "run"  # the run's tokenizer (trained or loaded)
NONE = "none"  # no tokenizer (an optional slot)
LOAD_FILE = "load-file"
ASK_HUB = "ask-hub"
CANCELLED = "its download was cancelled"  # a pick the user stopped (Cancel)
# The actions a picker may offer below its choices, by key: the menu label. Choosing one runs
# it (TokenizerPicker._actions) and goes back to the choice before.
ACTIONS: dict[str, str] = {LOAD_FILE: "Load tokenizer file…", ASK_HUB: hub_models.HUB_ACTION}
HUB_TIP = (
    "A model on the Hugging Face Hub: its tokenizer.json is downloaded once, then read from "
    "the Hub's cache (offline too). Gated models need `hf auth login` first."
)

# The keys that step a closed picker, as Qt's combo box steps it: where they start (None:
# from the current choice; -1: the last) and which way they go.
_STEPS = {
    Qt.Key.Key_Down: (None, 1),
    Qt.Key.Key_PageDown: (None, 1),
    Qt.Key.Key_Up: (None, -1),
    Qt.Key.Key_PageUp: (None, -1),
    Qt.Key.Key_Home: (0, 1),
    Qt.Key.Key_End: (-1, -1),
}

SHARED = TokenizerCache()  # the Compare and Report pickers' presets and files
# The run's tokenizer cut to the steps the pages asked for last, by run and step: scrubbing
# back and forth builds each step once (a scrub of a long run would fill SHARED for good).
RUN_STEPS = TokenizerCache(4)
# subtle: the pages' jobs run in their own threads but share SHARED's tokenizers, whose
# encoding caches are not made for two threads at once (one may clear the cache while another
# reads it), so a job encodes only while it holds this lock.
ENCODE_LOCK = threading.Lock()


def ask_for_tokenizer_file(parent: QWidget) -> str:
    """Ask for a tokenizer file (modal); its path, or "" when cancelled."""
    return open_file(
        parent,
        TOKENIZER,
        "Load tokenizer: a vocab.json (GPT-2), tokenizer.json or .tiktoken file",
        TOKENIZER_FILTER,
    )


def ask_pattern(parent: QWidget, path: Path) -> str | None:
    """Ask which pattern a bare rank file was made with (blocking, modal): a name, or the
    regex itself (a custom pattern: the load names what is wrong with one that is not a
    regex); None: cancel."""
    names = list(PATTERNS)
    chosen, ok = QInputDialog.getItem(
        parent,
        "Pre-tokenization pattern",
        f"{path.name} holds no pattern (no {path.name.split('.tiktoken')[0]}.tiktoken.json "
        "beside it). Which one was it made with? Pick a name, or type the regex itself:",
        names,
        0,
        True,
    )
    if not ok:
        return None
    # A name may come with spaces around it; a regex's own spaces are part of it.
    name = chosen.strip()
    return name if name in names else chosen or None


def preset_key(name: str) -> str:
    return f"preset:{name}"


def file_key(path: Path) -> str:
    return f"file:{path}"


def hub_key(name: str) -> str:
    return f"hf:{name}"


def key_version(key: str) -> object:
    """The version a choice's tokenizer is kept at: a file's on disk now (a file changed
    since it was read is another tokenizer), None for the rest."""
    kind, _, value = key.partition(":")
    return file_version(value) if kind == "file" else None


@dataclass(frozen=True)
class Choice:
    """A chosen tokenizer: its key, its label, ``get`` to build it (call it off the GUI
    thread), and the pane it was picked for. The run's tokenizer also says what ``get`` is
    cut from: ``run``, the run's source with every merge shown, and ``step``, the merges
    used (None: all), so that a page may derive a step from its work with the whole."""

    key: str
    label: str
    get: Callable[[], AnyTokenizer]
    pane: str = ""
    run: TokenizerSource | None = None
    step: int | None = None

    def build(self) -> AnyTokenizer | FailedPick:
        """The tokenizer, or (in a job) why it could not be built, as a result to hand back
        to the GUI thread, which undoes the pick (``AppModel.pick_failed_for``)."""
        try:
            return self.get()
        except hub_models.DownloadCancelled:
            return FailedPick(self.pane, self.key, self.label, CANCELLED, cancelled=True)
        except Exception as error:  # any failure of a pick is the user's to hear, not a crash
            return FailedPick(self.pane, self.key, self.label, describe_job_error(error))


@dataclass(frozen=True)
class FailedPick:
    """A pick whose tokenizer could not be built (a Hub model offline, a broken file)."""

    pane: str
    key: str
    label: str
    message: str
    cancelled: bool = False  # the user cancelled its download: nothing to report

    @property
    def what(self) -> str:
        """The pick and why it failed, naming the pick once ("acme/x: not in the cache")."""
        return named_once(self.label, self.message)


def _no_run() -> AnyTokenizer:
    raise ValueError("there is no run's tokenizer yet: train one or load one first")


def _run_at_step(state: RunState, k: int) -> Callable[[], AnyTokenizer]:
    """How to get the run's tokenizer cut to step ``k``: captured now, built in the job into
    :data:`RUN_STEPS`, by run and step."""
    build, key = run_tokenizer_at(state, k), (state.run_id, k)
    return lambda: RUN_STEPS.get(key, build)


class TokenizerPicker(QComboBox):
    """The run's tokenizer, presets, files (and optionally none), then actions, in one combo
    box; ``choice_changed`` says the user picked another (not emitted for an action).

    It picks for one pane of the model (``pane``, :mod:`..model.panes`): a pick is handed to
    the model (``AppModel.pick``) and the box shows what the model says the pane shows, or
    the pick under way; a pick whose tokenizer could not be built (``pick_failed_for``) goes
    back to the choice before, here and in every view."""

    choice_changed = Signal()  # also when the file shown was loaded again
    # From a job: a Hub model's tokenizer came (or not), and the fetch it made, if any.
    _hub_ended = Signal(str, bool, object)

    def __init__(
        self,
        hub: AppModel,
        *,
        pane: str,
        default: str = RUN,
        allow_none: bool = False,
        actions: Sequence[str] = (LOAD_FILE, ASK_HUB),
        cache: TokenizerCache = SHARED,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.hub = hub
        self.cache = cache
        self.setMinimumContentsLength(18)
        self._actions: dict[str, Callable[[], None]] = {
            LOAD_FILE: self._ask_for_file,
            ASK_HUB: self._ask_for_hub_model,
        }
        # Files chosen but not shown yet: one whose pick fails leaves the list (as a Hub model
        # is remembered only once it came), else choosing it again fails again.
        self._unproven: set[str] = set()
        self._loaded_ids: set[int] = set()  # id() of the LoadedTokenizer records listed
        # Picks that failed (until one is had): the arrow keys step past them (an
        # accessibility audit: a failed model stepped onto again and again kept a closed
        # picker from getting past it). The open list still offers them.
        self._failed: set[str] = set()
        self._fill(allow_none, actions)
        self.pane = pane
        self.pick(default)
        hub.define_pane(pane, self.key, self.label_of(self.key))
        self._previous = self.currentIndex()
        self.progress = hub_models.DownloadProgress(self)
        # Hub models whose download was cancelled, until picked again: a job that wants one
        # (a page's newer job, the one before it made stale with the cancel in it) gives up
        # at once instead of downloading it again.
        self._stopped: set[str] = set()
        self.progress.stopped.connect(self._stopped.add)
        # Asks for a Hub model (blocking, modal); tests replace it with an answer.
        self.ask_model: Callable[[], HubModel | None] = lambda: hub_models.ask_model(self)
        self.activated.connect(self._on_activated)
        self.currentIndexChanged.connect(self._on_index_changed)
        self._hub_ended.connect(self._on_hub_ended, Qt.ConnectionType.QueuedConnection)
        hub.tokenizer_offered.connect(self._on_offered)
        hub.tokenizer_file_opened.connect(self._on_file_opened)
        hub.reset.connect(self._on_reset)
        hub.pane_changed.connect(self._on_pane_changed)
        hub_models.recent_signal().added.connect(self._on_recent)

    def _fill(self, allow_none: bool, actions: Sequence[str]) -> None:
        """Every choice, in order; files come after the presets (:meth:`add_file`)."""
        if allow_none:
            self.addItem("(none)", NONE)
        self.addItem(RUN_LABEL, RUN)
        for name in PRESETS:
            self.addItem(preset_label(name), preset_key(name))
        self._files_end = self.count()  # where the next file is inserted
        for label, name in hub_models.hub_entries():
            self.addItem(label, hub_key(name))
            self.setItemData(self.count() - 1, HUB_TIP, Qt.ItemDataRole.ToolTipRole)
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

    def label_of(self, key: str) -> str:
        """What views call the choice ``key``: a Hub model by its name, the rest by their
        entries' text."""
        kind, _, value = key.partition(":")
        if kind == "hf":
            return value
        index = self.findData(key)
        return self.itemText(index) if index >= 0 else key

    def current(self) -> Choice | None:
        """The tokenizer the box shows: the pick under way, else the pane's choice; None for
        "(none)"."""
        return self.choice(self.key)

    def choice(self, key: str) -> Choice | None:
        """The tokenizer of the entry ``key``, to build in a job; None for "(none)"."""
        label = self.label_of(key)
        if key == NONE or key in ACTIONS:
            return None
        if key == RUN:
            return self._run_choice(label)
        kind, _, value = key.partition(":")
        cache = self.cache
        if kind == "preset":
            return Choice(
                key, label, lambda: cache.get(key, lambda: Tokenizer.preset(value)), self.pane
            )
        if kind == "hf":
            return Choice(key, label, self._hub_getter(key, parse_repo(value)), self.pane)
        path = Path(value)
        patterns = self.hub.file_patterns

        def get() -> AnyTokenizer:  # the file's version read when built: a change is seen
            pattern = patterns.get(key)
            return cache.get(key, lambda: open_tokenizer(path, pattern), key_version(key))

        return Choice(key, label, get, self.pane)

    def _run_choice(self, label: str) -> Choice:
        """The run's tokenizer at the timeline's step, in every phase (the timeline picks the
        step every view shows), named by what it is (``run_name``: the file loaded, the
        corpus trained on) and its step; step 0 too, whose one token per byte would read as
        a fault, unnamed. Read now, on the GUI thread; built in the job."""
        state = self.hub.state
        source = state.shown
        if source is None:
            return Choice(RUN, label, _no_run, self.pane)
        k, get, step = source.merge_count, source.get, None
        # While the run merges, the controller keeps ``shown`` at the timeline's step
        # (paced); paused, ended (or a tokenizer loaded), ``shown`` is the whole tokenizer,
        # and the step shown is cut from it here, as the editor cuts it.
        if state.phase is not Phase.MERGING and state.step < k:
            k = step = state.step
            get = _run_at_step(state, k)
        return Choice(RUN, f"{run_name(state)} (step {k:,})", get, self.pane, source, step)

    def built(self, key: str) -> AnyTokenizer | None:
        """The tokenizer of the entry ``key`` if it is built (a file's, of the version on
        disk now), else None."""
        return self.cache.built(key, key_version(key))

    def _hub_getter(self, key: str, model: HubModel) -> Callable[[], AnyTokenizer]:
        cache, ended, progress, stopped = self.cache, self._hub_ended, self.progress, self._stopped

        def get() -> AnyTokenizer:  # in the caller's job thread
            made: list[hub_models.Fetch] = []  # this call's fetch, if it was not built yet

            def fetch() -> AnyTokenizer:  # only when not built yet: then the dialog opens
                if key in stopped:
                    raise hub_models.DownloadCancelled(f"{model.name}: cancelled")
                told = progress.callback(model.name, key)
                made.append(told)
                try:
                    return open_hub(model, told, cancelled=told.cancelled.is_set)
                except Exception:
                    if told.cancelled.is_set():  # however it ended, the user had cancelled it
                        raise hub_models.DownloadCancelled(f"{model.name}: cancelled") from None
                    raise

            try:
                tok = cache.get(key, fetch)
            except BaseException:
                ended.emit(model.name, False, made[0] if made else None)
                raise
            ended.emit(model.name, True, made[0] if made else None)
            return tok

        return get

    # ------------------------------------------------------------ choices
    def pick(self, key: str) -> None:
        """Choose by key (as the user would in the combo box)."""
        index = self.findData(key)
        if index < 0:
            raise ValueError(f"no tokenizer {key!r} in the picker; it has {self.keys()}")
        self.setCurrentIndex(index)

    def add_file(
        self,
        path: str | Path,
        tokenizer: AnyTokenizer | None = None,
        *,
        choose: bool = True,
        pattern: str | None = None,
    ) -> str:
        """Offer a tokenizer file (or GPT-2 directory), and choose it unless ``choose`` is
        false; returns its key. With ``tokenizer`` (the file read already), that is the file's
        tokenizer from now on. Chosen without ``tokenizer`` (the user loaded it), the file is
        read anew wherever it is used next, and now where it is shown already; ``pattern``:
        the one a bare rank file is read with (the user's answer to :func:`ask_pattern`)."""
        source = tokenizer_source(Path(path))
        key = self._listed_as(source) or file_key(source)
        if pattern is not None:
            self.hub.file_patterns[key] = pattern
        if tokenizer is not None:
            self.cache.put(key, tokenizer, key_version(key))
            if isinstance(tokenizer, Tokenizer) and needs_pattern(source):
                self.hub.file_patterns[key] = tokenizer.pattern
        elif choose:
            # Every view showing the file hears it (Compare, the Report and the lab, whichever
            # picker loaded it), not only the one this picker belongs to.
            self.hub.read_file_again(key.removeprefix("file:"))
        index = self.findData(key)
        if index < 0:
            if tokenizer is None:
                self._unproven.add(key)
            index = self._files_end
            self._files_end += 1
            # Named by its model ("meta-llama/Llama-3.1-8B", the folder), never two entries
            # alike: a file named like another gets the folders that tell them apart.
            self.insertItem(index, self.hub.file_names.name(source), key)
            self.setItemData(index, str(source), Qt.ItemDataRole.ToolTipRole)
        if choose and index == self.currentIndex() and tokenizer is None:
            # The file shown, loaded again (retrained into the same folder, say): no new
            # choice, but its tokenizer is another, so what shows it works it out anew.
            self.choice_changed.emit()
        elif choose:
            self.setCurrentIndex(index)
        return key

    def _listed_as(self, source: Path) -> str | None:
        """The key of the entry listing ``source`` under another path (a link to it, or the
        file a linked folder holds): one file, one entry."""
        try:
            real = source.resolve()
        except OSError:
            return None
        for key in self.keys():
            if key.startswith("file:") and key != file_key(source):
                try:
                    if Path(key.removeprefix("file:")).resolve() == real:
                        return key
                except OSError:
                    continue
        return None

    def add_hub_model(self, model: HubModel, *, choose: bool = True) -> str:
        """Offer a Hub model (its tokenizer is fetched when first used), and choose it unless
        ``choose`` is false; returns its key."""
        key = hub_key(model.name)
        index = self.findData(key)
        if index < 0:
            first_action = next((i for i, k in enumerate(self.keys()) if k in ACTIONS), -1)
            index = self.count() if first_action < 0 else first_action - 1  # its separator
            self.insertItem(index, hub_models.recent_label(model.name), key)
            self.setItemData(index, HUB_TIP, Qt.ItemDataRole.ToolTipRole)
        if choose:
            self.setCurrentIndex(index)
        return key

    @Slot(str)
    def _on_recent(self, name: str) -> None:
        """A Hub model opened anywhere in the app: listed here too (not chosen), first among
        the recent ones (last, where the settings file keeps nothing)."""
        self._list_hub_models()
        self.add_hub_model(parse_repo(name), choose=False)

    def showPopup(self) -> None:  # noqa: N802 - Qt override
        # The list is read again each time it opens: another window of the app (another
        # process, which no signal reaches) may have opened a model since.
        self._list_hub_models()
        super().showPopup()

    def _list_hub_models(self) -> None:
        """The Hub's entries in the order ``hub_models.hub_entries`` gives now (the curated
        ones, then the recent ones, the newest first), then those this picker was asked for
        that the settings do not hold (a download under way, a failed one). The choice shown
        stays, and nothing is picked."""
        keys = self.keys()
        listed = [k for k in keys if k.startswith("hf:")]
        wanted = [(label, hub_key(name)) for label, name in hub_models.hub_entries()]
        known = {key for _, key in wanted}
        wanted += [(self.itemText(keys.index(k)), k) for k in listed if k not in known]
        if [key for _, key in wanted] == listed:
            return
        # subtle: the Hub's entries are together, after the files (add_file inserts before
        # _files_end, add_hub_model before the actions' separator).
        first = self._files_end
        shown, previous = self.key, str(self.itemData(self._previous))
        self.blockSignals(True)  # moving the entry shown is no pick
        try:
            for key in listed:
                self.removeItem(self.findData(key))
            for offset, (label, key) in enumerate(wanted):
                self.insertItem(first + offset, label, key)
                self.setItemData(first + offset, HUB_TIP, Qt.ItemDataRole.ToolTipRole)
            self.setCurrentIndex(self.findData(shown))
        finally:
            self.blockSignals(False)
        self._previous = self.findData(previous)

    @Slot(str, bool, object)
    def _on_hub_ended(self, name: str, ok: bool, fetch: hub_models.Fetch | None) -> None:
        if fetch is not None:
            # (That fetch's own: a fetch cancelled by a newer pick ends after the newer one
            # has begun, and must leave its dialog and its cancel alone.)
            self.progress.finish(fetch)
        if ok:
            hub_models.remember_model(name)

    @Slot()
    def _on_reset(self) -> None:
        """A file loaded as the run's tokenizer: listed as a file too, in every picker, so
        that it stays to pick once the next load or run replaces it."""
        state = self.hub.state
        loaded = state.loaded
        if state.phase is not Phase.LOADED or loaded is None or id(loaded) in self._loaded_ids:
            return
        self._loaded_ids.add(id(loaded))
        self.add_file(loaded.vocab_file, loaded.tokenizer, choose=False)

    @Slot(str)
    def _on_file_opened(self, path: str) -> None:
        """A file another picker opened (and this one, harmlessly): listed, not chosen."""
        self.add_file(path, choose=False)

    @Slot(object)
    def _on_offered(self, offered: OfferedTokenizer) -> None:
        """A tokenizer the app loaded to look at (another kind than byte-level BPE)."""
        self.add_file(offered.source, offered.tokenizer, choose=False)

    @Slot()
    def _ask_for_hub_model(self) -> None:
        model = self.ask_model()
        if model is not None:
            self.add_hub_model(model)

    def choose_pattern(self, path: Path) -> str | None:
        """Ask which pattern a bare rank file was made with, as Load tokenizer does
        (:func:`ask_pattern`); None: cancel. Tests replace this method with an answer."""
        return ask_pattern(self, path)

    @Slot()
    def _ask_for_file(self) -> None:
        path = ask_for_tokenizer_file(self)
        if not path:
            return
        # A rank file whose pattern nothing tells: asked here, as Load tokenizer asks (the
        # load said "--pattern on the command line", which the app has not).
        pattern = None
        if needs_pattern(Path(path)):
            pattern = self.choose_pattern(Path(path))
            if pattern is None:
                return
        self.add_file(path, pattern=pattern)

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
        key = str(self.itemData(index))
        if key in ACTIONS or index == self._previous:
            return  # an action is not a choice; stepping back from it changes nothing
        self._previous = index
        self._stopped.discard(key)  # picked again: wanted again
        if self.progress.key not in (None, key):
            # A model still coming that the pane no longer wants: its job would hold the
            # pane's thread (and this pick) until the download ended.
            self.progress.cancel()
        self.hub.pick(self.pane, key, self.label_of(key))
        self.choice_changed.emit()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        key = Qt.Key(event.key())
        plain = event.modifiers() == Qt.KeyboardModifier.NoModifier
        if not self._failed or not plain or self.view().isVisible() or key not in _STEPS:
            super().keyPressEvent(event)
            return
        start, step = _STEPS[key]
        self._step_to(self.currentIndex() + step if start is None else start % self.count(), step)
        event.accept()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt override
        delta = event.angleDelta().y()
        wheel = self.style().styleHint(QStyle.StyleHint.SH_ComboBox_AllowWheelScrolling, None, self)
        if not self._failed or not delta or not wheel or self.view().isVisible():
            super().wheelEvent(event)
            return
        step = 1 if delta < 0 else -1
        self._step_to(self.currentIndex() + step, step)
        event.accept()

    def _step_to(self, index: int, step: int) -> None:
        """Choose the first choice from ``index`` on in the direction of ``step`` that the
        keys and the wheel stop at (as Qt's own stepping would, past failed picks too)."""
        while 0 <= index < self.count() and not self._steppable(index):
            index += step
        if 0 <= index < self.count() and index != self.currentIndex():
            self.setCurrentIndex(index)
            self.activated.emit(index)

    def _steppable(self, index: int) -> bool:
        """Whether the arrow keys stop at ``index``: not a separator, not a failed pick."""
        enabled = self.model().flags(self.model().index(index, 0)) & Qt.ItemFlag.ItemIsEnabled
        return bool(enabled) and self.itemData(index) not in self._failed

    def _on_pane_changed(self, pane: str) -> None:
        """The model changed this pane: show its pick under way, else its choice (a failed
        pick goes back to the one before without telling anyone it was picked)."""
        if pane != self.pane:
            return
        pick = self.hub.pick_under_way(pane)
        choice = self.hub.pane(pane)
        shown = choice.key
        if choice.failed is not None:
            self._failed.add(choice.failed[0])
        self._failed.discard(shown)
        if shown in self._unproven:
            self._unproven.discard(shown)
            # A file this picker opened, shown now: every picker lists it from now on.
            self.hub.tokenizer_file_opened.emit(shown.removeprefix("file:"))
        before = self.key
        key = pick.key if pick is not None else shown
        index = self.findData(key)
        if index < 0 or index == self.currentIndex():
            return
        self.blockSignals(True)
        try:
            self.setCurrentIndex(index)
            if pick is None and before in self._unproven:
                self._drop_file(before)  # its pick failed: the model went back
        finally:
            self.blockSignals(False)
        self._previous = self.currentIndex()

    def _drop_file(self, key: str) -> None:
        index = self.findData(key)
        self._unproven.discard(key)
        if index >= 0:
            self.removeItem(index)
            self._files_end -= 1
