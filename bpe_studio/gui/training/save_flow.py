"""One Save, from the click to the files: its questions on the GUI thread, its work off it.

What it does: :class:`SaveFlow` takes a copy of the tokenizer on screen (``saving.data_to_save``,
made on the GUI thread: the run may move on meanwhile), has it checked in the background
(``jobs.saver``: what the format refuses, what its files lose), then on the GUI thread says a
refusal or asks its questions (GPT-2 files as the only way, what the files lose), asks for the
folder when none was given (after those, so that a refusal comes before the folder dialog),
asks before replacing files or saving beside another tokenizer, and has the files written in
the background. Meanwhile the model says a save is under way (``AppModel.set_saving``: the
status line, Save, Train, Load and Open off). Once written, the run's merges count as saved
(only if the run is still the one copied: ``run_id``) and the status bar names the files;
a failure is reported through ``error`` naming the file, and nothing changes. Every save
started ends with ``finished`` (written or not), once.
What it leaves out: the dialogs themselves (the controller's ``confirm``, the window's folder
dialog) and writing the files (``jobs.saver``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from ...core.formats.base.data import TokenizerData
from ...core.formats.files import DEFAULT_NAME, tokenizers_in
from ...core.formats.tiktoken import sidecar_name
from ..jobs.saver import SaveOutcome, TokenizerSaver
from ..model.app_model import AppModel
from ..model.saving import FILES_NAMED, SaveCheck
from ..model.state import SaveNews
from ..responsiveness.collector import hold_collections, release_collections

# The files Save writes in each format (Tokenizer.save / core.tokenizer_files.save_data).
SAVED_FILES: dict[str, tuple[str, ...]] = {
    "gpt2": ("vocab.json", "merges.txt"),
    "hf": ("tokenizer.json",),
    "tiktoken": (f"{DEFAULT_NAME}.tiktoken", sidecar_name(DEFAULT_NAME)),
}
# How the status line calls the files a save writes.
_WRITES = {
    "gpt2": "vocab.json and merges.txt",
    "hf": "tokenizer.json",
    "tiktoken": "tiktoken files",
}


@dataclass
class _Request:
    """The save under way: a copy of what it writes and of the run it is of."""

    data: TokenizerData
    merges: int  # how many of the run's merges it writes (marked saved once written)
    run_id: int
    format: str
    folder: Path | None  # None until chosen (``choose_folder``)
    choose_folder: Callable[[], str | None] | None
    on_saved: Callable[[Path, str], None] | None
    checked: bool = False  # its check has come: from then on it asks, or writes


def saved_notice(written: tuple[Path, ...] | list[Path]) -> str:
    """What the status bar says of a save: the files' names, then their folder (a line cut
    at its end by a narrow window kept a long folder and lost the names).

    >>> saved_notice([Path("/a/b/vocab.json"), Path("/a/b/merges.txt")])
    'Saved vocab.json and merges.txt in /a/b'
    """
    folders = {p.parent for p in written}
    if len(folders) != 1:
        return f"Saved {' and '.join(map(str, written))}"
    return f"Saved {' and '.join(p.name for p in written)} in {folders.pop()}"


class SaveFlow(QObject):
    error = Signal(str, str)  # title, message (plain text)
    finished = Signal(bool)  # a save started ended: written, or not (said, refused, cancelled)

    def __init__(
        self, hub: AppModel, confirm: Callable[[str, str], bool], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.hub = hub
        self._confirm = confirm
        self._request: _Request | None = None
        self._saver = TokenizerSaver(self)
        self._saver.checked.connect(self._on_checked)
        self._saver.written.connect(self._on_written)
        self._saver.failed.connect(self._on_failed)

    @property
    def busy(self) -> bool:
        """A save is under way (its check, its questions or its write)."""
        return self._request is not None

    def active_threads(self) -> int:
        return self._saver.active_threads()

    def start(
        self,
        data: TokenizerData,
        merges: int,
        format: str,
        folder: Path | None,
        *,
        choose_folder: Callable[[], str | None] | None = None,
        on_saved: Callable[[Path, str], None] | None = None,
    ) -> bool:
        """Save ``data`` (the tokenizer on screen, copied now: its first ``merges`` merges,
        counted saved once written) in ``format`` into ``folder``,
        or into the folder ``choose_folder`` gives once the format's questions are answered
        (None: cancelled). ``on_saved(folder, format)`` runs once the files are written. False
        (nothing started) while another save is under way."""
        if self.busy:
            return False
        run_id = self.hub.state.run_id
        self._request = _Request(data, merges, run_id, format, folder, choose_folder, on_saved)
        self.hub.set_saving(SaveNews(_WRITES[format]))
        hold_collections()  # what the jobs make is freed by reference counts when they end
        self._saver.check(data, format)
        return True

    @Slot(object)
    def _on_checked(self, check: SaveCheck) -> None:
        request = self._request
        if request is None:
            return
        request.checked = True
        if check.refusal is not None:
            self._end(False, check.refusal)
            return
        if not self._answered(check, request):
            self._end(False)
            return
        if request.folder is None:
            self.hub.set_saving(SaveNews(_WRITES[request.format], choosing=True))
            chosen = request.choose_folder() if request.choose_folder is not None else None
            if not chosen:
                self._end(False)
                return
            request.folder = Path(chosen)
        if not self._may_write_into(request.folder, request.format):
            self._end(False)
            return
        self.hub.set_saving(SaveNews(_WRITES[request.format], request.folder))
        self._saver.write(request.folder, request.data, request.format)

    def drop_unasked(self) -> bool:
        """End the save under way if it has asked nothing yet (its check still runs: no
        question, no folder dialog, nothing written); whether it did. A close drops it to ask
        its own question, where the save's folder dialog came after the close."""
        request = self._request
        if request is None or request.checked:
            return False
        self._saver.cancel()  # its check's news, were it to come, is not awaited
        self._end(False)
        return True

    def _answered(self, check: SaveCheck, request: _Request) -> bool:
        """Whether the user lets the files lose what they lose (asked all at once; what GPT-2
        files lose is asked with what loading them back needs)."""
        if check.gpt2 is not None and not self._confirm("Save as GPT-2 files?", check.gpt2.message):
            return False
        if not check.losses:
            return True
        files = FILES_NAMED[request.format]
        return self._confirm(
            f"Save as {files}?",
            f"Saved as {files}, this tokenizer loses what the files cannot say:\n\n"
            + "\n\n".join(f"• {loss}" for loss in check.losses)
            + f"\n\nSave as {files} anyway?",
        )

    def _may_write_into(self, target: Path, format: str) -> bool:
        """Whether the user lets files already there be replaced, and this tokenizer be saved
        beside another one (the folder would then no longer load as one tokenizer: the app,
        `bpe-studio --tokenizer DIR` and Tokenizer.load ask for a file by name)."""
        existing = [target / name for name in SAVED_FILES[format] if (target / name).exists()]
        if existing and not self._confirm(
            "Replace files?",
            f"{', '.join(p.name for p in existing)} already "
            f"{'exists' if len(existing) == 1 else 'exist'} in {target}.\n\nReplace "
            f"{'it' if len(existing) == 1 else 'them'}?",
        ):
            return False
        replaced = set(SAVED_FILES[format])
        others = [p.name for p in _tokenizers_in(target) if p.name not in replaced]
        return not others or self._confirm(
            "Save beside another tokenizer?",
            f"{target} already holds another tokenizer ({', '.join(others)}).\n\nWith two "
            "in it, the folder no longer loads as one tokenizer: each must be loaded by its "
            f"file's name. Save {SAVED_FILES[format][0]} beside it anyway?",
        )

    @Slot(object)
    def _on_written(self, outcome: SaveOutcome) -> None:
        request = self._request
        if request is None:
            return
        if outcome.error is not None:
            self._end(False, ("Could not save tokenizer", outcome.error))
            return
        if self.hub.state.run_id == request.run_id:  # not a run that replaced it meanwhile
            self.hub.mark_saved(request.merges)
        self.hub.set_notice(saved_notice(outcome.written), saved=True)
        if request.on_saved is not None and request.folder is not None:
            request.on_saved(request.folder, request.format)
        self._end(True)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if self._request is not None:
            self._end(False, ("Could not save tokenizer", message))

    def _end(self, written: bool, error: tuple[str, str] | None = None) -> None:
        """The save under way ends: Save is on again, then its error is said, then
        ``finished``."""
        self._request = None
        release_collections()
        self.hub.set_saving(None)
        if error is not None:
            self.error.emit(*error)
        self.finished.emit(written)

    def shutdown(self) -> None:
        """Wait for a write under way (closing the window, nothing asked); its news is
        dropped."""
        if self._request is not None:
            self._request = None
            release_collections()
        self._saver.shutdown()


def _tokenizers_in(folder: Path) -> list[Path]:
    """The tokenizers already in ``folder`` (none where it is no folder or cannot be read:
    the save itself then says why it fails)."""
    try:
        return tokenizers_in(folder) if folder.is_dir() else []
    except OSError:
        return []
