"""Hugging Face Hub models in the tokenizer menus: the curated ones, the recent ones, asking
for another, and a download's progress.

What it does: :func:`hub_entries` lists the open models the menus offer (``core.io.hf_hub.
POPULAR``) and the ones opened lately (:func:`remember_model`, kept with ``QSettings``; every
menu of this process hears of one at once, :func:`recent_signal`, and reads the list again
as it opens, for those another process of the app opened).
:class:`DownloadProgress` carries a fetch from the job thread that runs it to a progress
dialog on the GUI thread (which never waits for the download), with Cancel
(:class:`DownloadCancelled`). :func:`ask_model`
asks for ``ORG/NAME[@REVISION]``. What it leaves out: fetching and reading (``core.io.hf_hub``,
``core.encode.foreign``), the menus themselves (``picker``).
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Qt, QTimer, Signal, SignalInstance, Slot
from PySide6.QtWidgets import QInputDialog, QMessageBox, QProgressDialog, QWidget

from ...core.io.hf_hub import POPULAR, HubError, HubModel, parse_repo, typed_model
from ..model.status import format_bytes
from .common import app_settings

RECENT_KEY = "hub/recent"
RECENT_KEPT = 8
HUB_ACTION = "Open from Hugging Face Hub…"


def recent_models() -> list[str]:
    """Models opened lately ("ORG/NAME[@REVISION]"), the newest first."""
    value = app_settings().value(RECENT_KEY, [])
    # subtle: QSettings gives a one-item list back as a plain string (INI files).
    names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    # A name the settings file holds but parse_repo refuses (edited by hand, or left by an
    # older version) is not offered: choosing it failed on the GUI thread.
    return [str(n) for n in names if n and _well_formed(str(n))][:RECENT_KEPT]


def _well_formed(name: str) -> bool:
    try:
        parse_repo(name)
    except HubError:
        return False
    return True


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
    app_settings().setValue(RECENT_KEY, names)
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
            "Model (ORG/NAME or ORG/NAME@REVISION, or its page's address); its tokenizer.json "
            "is downloaded once:",
            [text, *names] if text else names,
            0,
            True,
        )
        if not ok or not text.strip():
            return None
        try:
            return typed_model(text)
        except HubError as error:
            QMessageBox.warning(parent, "Open from Hugging Face Hub", str(error))


class DownloadCancelled(Exception):
    """The user cancelled a Hub model's download (raised in the job fetching it, as its
    bytes come)."""


class Fetch:
    """One fetch's progress callback, and whether the user cancelled it."""

    def __init__(self, name: str, reported: SignalInstance) -> None:
        self.name = name
        self.cancelled = threading.Event()
        self._reported = reported

    def __call__(self, done: int, total: int | None) -> None:
        if self.cancelled.is_set():
            raise DownloadCancelled(f"{self.name}: the download was cancelled")
        self._reported.emit(self, done, -1 if total is None else total)


class DownloadProgress(QObject):
    """A Hub model's fetch, told from the job thread that runs it, shown in a dialog over
    ``parent`` with a busy bar while the Hub is asked, the bytes as they come, and Cancel.

    The dialog shows only for a fetch that takes a moment (a model in the cache is read at
    once, no dialog flashes). Cancel (or Esc) stops the download at its next bytes
    (:class:`DownloadCancelled`, which the pick turns into "cancelled": the pane keeps the
    tokenizer it showed)."""

    # subtle: the news carries its Fetch, as it is queued: a pick that cancelled the fetch
    # may come before the GUI thread hears it, and a late "began" showed the dialog of a
    # fetch already cancelled, for good.
    began = Signal(object)  # the Fetch that started (job thread -> GUI thread)
    reported = Signal(object, int, int)  # the Fetch, bytes done, total (-1: unknown)
    stopped = Signal(str)  # the picker's key of a fetch cancelled (GUI thread)
    SHOW_AFTER_MS = 300

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._parent = parent
        self.dialog: QProgressDialog | None = None
        # The fetch under way's "cancelled" flag; a new fetch gets a new one.
        self._cancelled = threading.Event()
        # The fetch under way and its picker's key (set by the job that fetches), or None.
        self._fetch: Fetch | None = None
        self.key: str | None = None
        self._active = False
        self._show_timer = QTimer(self)
        self._show_timer.setSingleShot(True)
        self._show_timer.timeout.connect(self._show)
        self.began.connect(self._on_began, Qt.ConnectionType.QueuedConnection)
        self.reported.connect(self._on_reported, Qt.ConnectionType.QueuedConnection)

    def callback(self, name: str, key: str | None = None) -> Fetch:
        """``progress(done, total)`` for ``hf_hub.fetch_tokenizer``, made in the job that
        fetches ``key``'s model (it opens the dialog): it raises DownloadCancelled once the
        user cancelled this fetch (``cancelled``)."""
        fetch = Fetch(name, self.reported)
        self._cancelled = fetch.cancelled
        self._fetch = fetch
        self.key = key
        self.began.emit(fetch)
        return fetch

    def _ensure_dialog(self) -> QProgressDialog:
        dialog = self.dialog
        if dialog is None:
            dialog = self.dialog = QProgressDialog(self._parent)
            dialog.setWindowTitle("Hugging Face Hub")
            dialog.setCancelButtonText("Cancel")
            dialog.setWindowModality(Qt.WindowModality.NonModal)  # the app goes on meanwhile
            dialog.setAutoReset(False)
            dialog.setAutoClose(False)
            # subtle: QProgressDialog shows itself after minimumDuration once it has a value;
            # this class decides when (SHOW_AFTER_MS), so a cached model flashes nothing. The
            # dialog's own timer already runs from its construction (4 s, which a new
            # minimumDuration does not restart while it has no value): reset() stops it, or
            # it would show the dialog of a fetch that failed at once, and leave it shown.
            dialog.setMinimumDuration(24 * 3600 * 1000)
            dialog.reset()
            dialog.canceled.connect(self.cancel)  # the button, closing the dialog
            dialog.rejected.connect(self.cancel)  # Esc
            dialog.hide()
        return dialog

    def _under_way(self, fetch: Fetch) -> bool:
        return fetch is self._fetch and not fetch.cancelled.is_set()

    @Slot(object)
    def _on_began(self, fetch: Fetch) -> None:
        if not self._under_way(fetch):
            return  # cancelled or over before this news came
        dialog = self._ensure_dialog()
        self._active = True
        dialog.setLabelText(f"Asking the Hugging Face Hub for the tokenizer of {fetch.name}…")
        dialog.setRange(0, 0)  # a busy bar until the size is known
        self._show_timer.start(self.SHOW_AFTER_MS)

    @Slot()
    def _show(self) -> None:
        if self._active and self.dialog is not None:
            self.dialog.show()

    @Slot(object, int, int)
    def _on_reported(self, fetch: Fetch, done: int, total: int) -> None:
        if not self._active or not self._under_way(fetch):
            return  # cancelled or finished: a late report from the job
        name = fetch.name
        dialog = self._ensure_dialog()
        size = f"{format_bytes(done)} of {format_bytes(total)}" if total > 0 else format_bytes(done)
        dialog.setLabelText(f"Downloading the tokenizer of {name}: {size}")
        if total > 0:
            dialog.setRange(0, max(total, 1))
            dialog.setValue(min(done, total))
        else:
            dialog.setRange(0, 0)  # a busy bar: the size is unknown

    @Slot()
    def cancel(self) -> None:
        """Stop the fetch under way (at once) and close the dialog."""
        self._cancelled.set()
        if self.key is not None:
            self.stopped.emit(self.key)
        self.finish()

    def finish(self, fetch: Fetch | None = None) -> None:
        """The fetch ``fetch`` is over (None: the one under way): no dialog. Another fetch
        under way now is left as it is."""
        if fetch is not None and fetch is not self._fetch:
            return
        self._fetch = None
        self.key = None
        self._active = False
        self._show_timer.stop()
        if self.dialog is not None:
            self.dialog.hide()
            self.dialog.reset()  # a value set during the fetch restarted the dialog's timer
