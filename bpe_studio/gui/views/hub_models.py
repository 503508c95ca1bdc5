"""Hugging Face Hub models in the tokenizer menus: the curated ones, the recent ones, asking
for another, and a download's progress.

What it does: :func:`hub_entries` lists the open models the menus offer (``core.io.hf_hub.
POPULAR``) and the ones opened lately (:func:`remember_model`, kept with ``QSettings``; every
menu hears of one at once, :func:`recent_signal`).
:class:`DownloadProgress` carries a download's bytes from the job thread that fetches them to
a progress dialog on the GUI thread (which never waits for the download). :func:`ask_model`
asks for ``ORG/NAME[@REVISION]``. What it leaves out: fetching and reading (``core.io.hf_hub``,
``core.encode.foreign``), the menus themselves (``picker``).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QSettings, Qt, Signal, Slot
from PySide6.QtWidgets import QInputDialog, QMessageBox, QProgressDialog, QWidget

from ...core.io.hf_hub import POPULAR, HubError, HubModel, parse_repo

RECENT_KEY = "hub/recent"
RECENT_KEPT = 8
HUB_ACTION = "Open from Hugging Face Hub…"
MB = 1_000_000


def _settings() -> QSettings:
    return QSettings("bpe-studio", "bpe-studio")


def recent_models() -> list[str]:
    """Models opened lately ("ORG/NAME[@REVISION]"), the newest first."""
    value = _settings().value(RECENT_KEY, [])
    # subtle: QSettings gives a one-item list back as a plain string (INI files).
    names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [str(n) for n in names if n][:RECENT_KEPT]


class _Recent(QObject):
    added = Signal(str)  # a model was opened: every menu lists it (GUI thread)


_RECENT: list[_Recent] = []


def recent_signal() -> _Recent:
    """The app's one notifier of models opened (made on first use, with the application)."""
    if not _RECENT:
        _RECENT.append(_Recent())
    return _RECENT[0]


def remember_model(name: str) -> None:
    """Put ``name`` first among the recent models, and tell every menu."""
    names = [name, *(n for n in recent_models() if n != name)][:RECENT_KEPT]
    _settings().setValue(RECENT_KEY, names)
    recent_signal().added.emit(name)


def recent_label(name: str) -> str:
    return f"{name} (Hub, recent)"


def hub_entries() -> list[tuple[str, str]]:
    """(menu label, model name) of the curated models, then the recent others."""
    curated = [(f"{label} (Hub: {repo})", repo) for label, repo in POPULAR]
    known = {repo for _, repo in POPULAR}
    recent = [(recent_label(name), name) for name in recent_models() if name not in known]
    return curated + recent


def ask_model(parent: QWidget) -> HubModel | None:
    """Ask for a model (blocking, modal); None when cancelled. A malformed name is said in a
    message box and asked again."""
    names = [name for _, name in hub_entries()]
    text = ""
    while True:
        text, ok = QInputDialog.getItem(
            parent,
            "Open from Hugging Face Hub",
            "Model (ORG/NAME or ORG/NAME@REVISION); its tokenizer.json is downloaded once:",
            [text, *names] if text else names,
            0,
            True,
        )
        if not ok or not text.strip():
            return None
        try:
            return parse_repo(text)
        except HubError as error:
            QMessageBox.warning(parent, "Open from Hugging Face Hub", str(error))


class DownloadProgress(QObject):
    """A download's progress, told from any thread, shown in a dialog over ``parent``."""

    reported = Signal(str, int, int)  # model name, bytes done, total (-1: unknown)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._parent = parent
        self.dialog: QProgressDialog | None = None
        self.reported.connect(self._on_reported, Qt.ConnectionType.QueuedConnection)

    def callback(self, name: str) -> Callable[[int, int | None], None]:
        """``progress(done, total)`` for ``hf_hub.fetch_tokenizer``, callable in a job."""

        def progress(done: int, total: int | None) -> None:
            self.reported.emit(name, done, -1 if total is None else total)

        return progress

    @Slot(str, int, int)
    def _on_reported(self, name: str, done: int, total: int) -> None:
        dialog = self.dialog
        if dialog is None:
            dialog = self.dialog = QProgressDialog(self._parent)
            dialog.setWindowTitle("Hugging Face Hub")
            dialog.setCancelButton(None)  # the download ends by itself; the app goes on
            dialog.setWindowModality(Qt.WindowModality.NonModal)
            dialog.setMinimumDuration(300)
            dialog.setAutoClose(True)
        size = f"{done / MB:,.1f} of {total / MB:,.1f} MB" if total > 0 else f"{done / MB:.1f} MB"
        dialog.setLabelText(f"Downloading the tokenizer of {name}: {size}")
        if total > 0:
            dialog.setMaximum(max(total, 1))
            dialog.setValue(min(done, total))
        else:
            dialog.setMaximum(0)  # a busy bar: the size is unknown

    def finish(self) -> None:
        """The download is over (or was never needed): no dialog."""
        if self.dialog is not None:
            self.dialog.reset()
            self.dialog.hide()
