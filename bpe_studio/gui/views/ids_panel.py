"""The token ids of the editor's text, as tiktokenizer shows them, and a box that decodes ids.

What it does: :class:`IdsPanel` shows the ids of the editor's current encoding with their
count, as a list that pastes back ("15496, 11, 995": plain digits, since the thousands
separator the rest of the app shows would be read as a list separator). A list longer than
``DISPLAY_IDS`` is shown in part and copied whole; both strings are built off the GUI thread.
The decode box turns pasted ids (separated by commas or spaces, brackets allowed) or the ids
of a ``.npy`` file into text, each token coloured as the editor colours them, with the
tokenizer the editor shows (at the timeline's step); a bad item or an unknown id is named in a
one-line error. The file is read, every id checked and the first ``DISPLAY_IDS`` decoded off
the GUI thread, which is handed only their text (a line says how many are shown).
What it leaves out: encoding (the editor's spans) and which tokenizer that is (``AppModel``).
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import regex
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)

from ...core.encode.foreign import AnyTokenizer
from ...core.explain.span_arrays import SpanArrays, check_ids, decoded_spans
from ..jobs.latest import LatestJob
from ..responsiveness.debounce import single_shot
from .common import counted, monospace_font, steady_label, title_label
from .file_dialogs import IDS, open_file
from .layouts import column
from .theme import colours, muted, themed
from .token_editor import TokenEditor, TokenTextEdit

DISPLAY_IDS = 20_000  # ids shown in the list (Copy copies them all), and ids decoded
DECODE_DEBOUNCE_MS = 200
_SEPARATORS = regex.compile(r"[\s,;]+")
# How the line under the decode box reads: why it cannot decode, what it waits for, or how
# much of what it decoded is shown.
ERROR, WAITING, NOTE = "error", "waiting", "note"
NPY_MAGIC = b"\x93NUMPY"
_IDS_ARE = "token ids are a 1-D integer array"


@dataclass(frozen=True, slots=True)
class DecodedIds:
    """The decode job's answer: the first ids' spans and how many ids there are in all."""

    spans: SpanArrays
    total: int


def format_id_list(ids: np.ndarray) -> str:
    """``"15496, 11, 995"``: the form :func:`parse_ids` reads back."""
    return ", ".join(map(str, ids.tolist()))


def format_id_lines(ids: np.ndarray, per_line: int) -> str:
    """The list as the pane shows it: :func:`format_id_list`'s, a line every ``per_line``
    ids. subtle: a text view lays out a paragraph whole, and one of 20,000 ids, laid out
    again at each step of a replay, stalled the GUI thread; lines are laid out only as they
    are scrolled to."""
    items = list(map(str, ids.tolist()))
    return ",\n".join(", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line))


def parse_ids(text: str) -> list[int]:
    """Token ids from pasted text: integers separated by commas, semicolons or white space,
    optionally inside one pair of brackets. ValueError names the first item that is not an
    id (and its position)."""
    body = text.strip()
    if body[:1] in "[(" and body[-1:] in "])":
        body = body[1:-1]
    items = [item for item in _SEPARATORS.split(body) if item]
    ids: list[int] = []
    for i, item in enumerate(items):
        if not item.isdigit() or not item.isascii():
            raise ValueError(
                f"{item[:40]!r} (item {i + 1:,} of {len(items):,}) is not a token id "
                "(ids are whole numbers from 0 up)"
            )
        ids.append(int(item))
    return ids


def npy_header(path: str | os.PathLike) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype the header of the ``.npy`` file at ``path`` gives, read without its
    data and checked to be token ids. ValueError names the file and what is wrong: not a
    ``.npy`` file (checked first, by its first bytes), Python objects (refused: never
    unpickled), or another shape or type."""
    where = os.fspath(path)
    try:
        with open(path, "rb") as file:
            start = file.read(len(NPY_MAGIC))
            if start != NPY_MAGIC:
                start += file.read(16 - len(start))
                zipped = ", a zip archive, as .npz files are" if start[:2] == b"PK" else ""
                raise ValueError(
                    f"{where} is not a .npy file (it starts with {start!r}{zipped}); "
                    f"{_IDS_ARE} saved with numpy.save"
                )
            file.seek(0)
            version = np.lib.format.read_magic(file)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(file)
            elif version == (2, 0):
                shape, _, dtype = np.lib.format.read_array_header_2_0(file)
            else:
                raise ValueError(
                    f"{where}: .npy format version {version[0]}.{version[1]}, which this app "
                    "does not read (1.0 and 2.0, what numpy.save writes for integers)"
                )
    except OSError as error:
        raise ValueError(f"{where}: cannot be read ({error.strerror or error})") from None
    except ValueError as error:
        if str(error).startswith(where):
            raise
        raise ValueError(f"{where}: a damaged .npy header ({error})") from None
    if dtype.hasobject:
        raise ValueError(
            f"{where} holds Python objects (dtype {dtype}), which are refused, never "
            f"unpickled; {_IDS_ARE}"
        )
    if len(shape) != 1 or dtype.kind not in "iu":
        raise ValueError(f"{where}: holds an array of shape {shape} and type {dtype}; {_IDS_ARE}")
    return shape, dtype


def load_ids(path: str | os.PathLike) -> np.ndarray:
    """The ids in a ``.npy`` file (as ``bpe-studio encode`` writes): a 1-D array of
    non-negative integers. ValueError names the file and what is wrong with it
    (:func:`npy_header`, then its data)."""
    npy_header(path)
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise ValueError(f"{os.fspath(path)}: not a readable .npy file ({error})") from None
    if array.dtype.kind == "i" and len(array) and int(array.min()) < 0:
        raise ValueError(f"{os.fspath(path)}: holds negative numbers, which are not token ids")
    return array


def _message(error: BaseException) -> str:
    return str(error) if isinstance(error, ValueError) else f"{type(error).__name__}: {error}"


class IdsPanel(QWidget):
    """Under the editor: its ids (count, list, Copy) and a decode box."""

    decoded = Signal(object)  # SpanArrays of the ids decoded, now shown

    def __init__(self, editor: TokenEditor | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title_label("Ids")
        self.count_label = muted(steady_label(QLabel("No tokens yet")))
        self.copy_button = QPushButton("Copy ids")
        self.copy_button.setToolTip("Copy every id of the editor's text, comma separated")
        self.copy_button.clicked.connect(self.copy_ids)
        self.ids_view = QPlainTextEdit()
        self.ids_view.setAccessibleName("Token ids of the editor text")
        self.ids_view.setReadOnly(True)
        self.ids_view.setFont(monospace_font(10))
        self.ids_view.setFixedHeight(self.ids_view.fontMetrics().height() * 2 + 12)
        self.decode_input = QLineEdit()
        self.decode_input.setAccessibleName("Ids to decode")
        self.decode_input.setPlaceholderText("Paste ids to decode, e.g. 15496, 11, 995")
        self.decode_input.setClearButtonEnabled(True)
        self.decode_input.textChanged.connect(self._on_input_changed)
        self.open_button = QPushButton("Open .npy…")
        self.open_button.clicked.connect(self._choose_npy)
        self.error_label = steady_label(QLabel(""))
        self._error_kind = ERROR
        themed(self.error_label, self._restyle_error)
        # Rich text, escaped (it quotes what was pasted), so that a long reason wraps onto a
        # second line rather than being cut (common.SteadyLabel).
        self.error_label.setTextFormat(Qt.TextFormat.RichText)
        self.decoded_view = TokenTextEdit()
        self.decoded_view.setAccessibleName("Decoded text")
        self.decoded_view.setReadOnly(True)
        self.decoded_view.setMinimumHeight(self.decoded_view.fontMetrics().height() * 2 + 12)

        self._ids = np.zeros(0, dtype=np.int32)
        self._shown_ids = 0  # how many ids the list shows
        # subtle: the list is built off the GUI thread, and the editor's text may change
        # before its new ids come; until the list shown is of the text shown, Copy waits
        # (a copy asked meanwhile is given then), as the old list read as the new text's.
        self._listed: np.ndarray | None = None  # the ids the list shows (None: none yet)
        self._stale = False  # the editor's text changed; its ids are on their way
        self._copy_asked = False
        self._file_ids: Path | None = None  # a .npy opened, until typing (read by the job)
        self._decoded_with: AnyTokenizer | None = None
        self._editor: TokenEditor | None = None
        self._list_job = LatestJob("bpe-ids-list", self)
        self._list_job.done.connect(self._on_list)
        self._copy_job = LatestJob("bpe-ids-copy", self)
        self._copy_job.done.connect(self._on_copy)
        self._decode_job = LatestJob("bpe-ids-decode", self, describe=_message)
        self._decode_job.done.connect(self._on_decoded)
        self._decode_job.failed.connect(self._on_decode_failed)
        self._decode_timer = single_shot(self, DECODE_DEBOUNCE_MS, self.decode_now)

        top = QHBoxLayout()
        top.addWidget(self.title)
        top.addWidget(self.count_label, 1)
        top.addWidget(self.copy_button)
        row = QHBoxLayout()
        row.addWidget(self.decode_input, 1)
        row.addWidget(self.open_button)
        column(self, top, self.ids_view, row, self.error_label, self.decoded_view)
        self.decoded_view.hide()  # shown once there is something decoded: the editor keeps the room
        if editor is not None:
            self.bind(editor)

    def bind(self, editor: TokenEditor) -> None:
        """Show ``editor``'s ids after each encode, and decode with its tokenizer."""
        self._editor = editor
        editor.spans_ready.connect(self.show_spans)
        editor.spans_cleared.connect(self._clear_ids)
        editor.spans_stale.connect(self._on_stale)
        editor.source_changed.connect(self._on_source_changed)
        if editor.spans is not None:
            self.show_spans(editor.spans)

    @Slot()
    def _clear_ids(self) -> None:
        """The editor paints no tokens (no tokenizer, or it could not tokenize the text): no
        ids are listed either."""
        self._ids = np.zeros(0, dtype=np.int32)
        self._list_job.cancel()
        self._listed = None
        self._set_stale(False)
        self._copy_asked = False
        self.count_label.setText("No tokens yet")
        self.ids_view.setPlainText("")

    @Slot()
    def _on_stale(self) -> None:
        """The editor tokenizes its text anew: the ids listed are of the text before."""
        if len(self._ids) or self._listed is not None:
            self.count_label.setText(f"Updating… ({counted(len(self._ids), 'token')} before)")
        self._set_stale(True)

    def _set_stale(self, stale: bool) -> None:
        self._stale = stale
        self.copy_button.setEnabled(not stale)
        self.ids_view.setEnabled(not stale)  # greyed: not the text's ids

    @Slot()
    def _on_source_changed(self) -> None:
        """The editor shows another tokenizer: what was decoded with the last one goes (it
        is decoded again once the new one is ready)."""
        if self._has_input():
            self.decode_now()

    # ---------------------------------------------------------- the ids
    @property
    def ids(self) -> np.ndarray:
        """The ids listed: the editor's current encoding."""
        return self._ids

    def ids_text(self) -> str:
        """The list as shown (all of it when there are at most ``DISPLAY_IDS`` ids), in
        :func:`format_id_list`'s form."""
        return self.ids_view.toPlainText().replace(",\n", ", ")

    @Slot(object)
    def show_spans(self, spans: SpanArrays) -> None:
        self._ids = ids = spans.ids
        n = len(spans.ids)
        self._shown_ids = min(n, DISPLAY_IDS)
        head = spans.ids[: self._shown_ids]
        self.count_label.setText(
            counted(n, "token") + (f", first {DISPLAY_IDS:,} shown" if n > DISPLAY_IDS else "")
        )
        per_line = self.ids_per_line(head)
        self._list_job.submit(lambda is_stale: (ids, format_id_lines(head, per_line)))
        # Copy waits for this list (the list shown is of these ids' text, at an earlier step
        # during a replay: not greyed, which would flicker at every frame).
        self._stale = self._listed is not ids
        if spans.tokenizer is not self._decoded_with and self._has_input():
            self.decode_now()

    def ids_per_line(self, ids: np.ndarray) -> int:
        """How many of ``ids`` a line of the list holds at the view's width, as if each had
        the digits of the largest (a wider view keeps its lines as they were until the next
        list)."""
        digits = len(str(int(ids.max()))) if len(ids) else 1
        width = self.ids_view.viewport().width() - 2 * self.ids_view.document().documentMargin()
        advance = self.ids_view.fontMetrics().horizontalAdvance("0" * digits + ", ")
        return max(1, int(width // max(1, advance)))

    @Slot(object)
    def _on_list(self, listed: tuple[np.ndarray, str]) -> None:
        ids, text = listed
        if ids is not self._ids:
            return  # of ids the editor has replaced since
        self._listed = ids
        self.ids_view.setPlainText(text)
        self._set_stale(False)
        if self._copy_asked:
            self._copy_asked = False
            self.copy_ids()

    @Slot()
    def copy_ids(self) -> None:
        """Put every id on the clipboard (built off the GUI thread when the list is long)."""
        if self._stale:
            self._copy_asked = True  # given once the text's ids are listed
            return
        ids = self._ids
        if len(ids) <= self._shown_ids and self.ids_text():
            QGuiApplication.clipboard().setText(self.ids_text())
            return
        self._copy_job.submit(lambda is_stale: format_id_list(ids))

    @Slot(object)
    def _on_copy(self, text: str) -> None:
        QGuiApplication.clipboard().setText(text)

    # ---------------------------------------------------------- decoding
    def _has_input(self) -> bool:
        return self._file_ids is not None or bool(self.decode_input.text().strip())

    @Slot(str)
    def _on_input_changed(self, text: str) -> None:
        if self._file_ids is not None and text != self._file_label():
            self._file_ids = None  # typing replaces the opened file
        self._decode_timer.start()

    def _file_label(self) -> str:
        return f"(ids of {self._file_ids.name})" if self._file_ids else ""

    def open_npy(self, path: str | os.PathLike) -> bool:
        """Decode the ids in ``path`` (read and decoded off the GUI thread); False (and the
        error shown) when its header says it holds no ids or it cannot be opened. A problem
        in its data is shown when the job finds it."""
        try:
            npy_header(path)
        except ValueError as error:
            self._show_error(str(error))
            return False
        self._file_ids = Path(path)
        self.decode_input.blockSignals(True)
        self.decode_input.setText(self._file_label())
        self.decode_input.blockSignals(False)
        self.decode_now()
        return True

    @Slot()
    def _choose_npy(self) -> None:
        path = open_file(self, IDS, "Open token ids", "NumPy ids (*.npy)")
        if path:
            self.open_npy(path)

    def _tokenizer(self) -> AnyTokenizer | None:
        return self._editor.current_tokenizer if self._editor is not None else None

    @Slot()
    def decode_now(self) -> None:
        """Decode the box's ids (or the opened file's) with the editor's tokenizer."""
        self._decode_timer.stop()
        tok = self._tokenizer()
        file_path = self._file_ids
        text = self.decode_input.text()
        if file_path is None and not text.strip():
            self._decode_job.cancel()
            self._show_error("")
            self.decoded_view.set_spans(None)
            self.decoded_view.set_text("")
            self.decoded_view.hide()
            return
        if tok is None:
            self._decode_job.cancel()
            self._decoded_with = None
            self.decoded_view.set_spans(None)
            self.decoded_view.set_text("")
            self.decoded_view.hide()
            source = self._editor.source if self._editor is not None else None
            if source is None:
                self._show_error("No tokenizer yet to decode with: train one or load one")
            else:  # decoded when it is ready (show_spans)
                name = source.label.removeprefix("Tokenizer: ")
                self._show_error(f"Loading the editor's tokenizer ({name}) to decode…", WAITING)
            return
        self._decoded_with = tok
        shown = DISPLAY_IDS

        def job(is_stale: Callable[[], bool]) -> DecodedIds | None:
            ids = load_ids(file_path) if file_path is not None else parse_ids(text)
            # Every id is checked; only those shown are decoded, so that the GUI thread is
            # handed no more text than it can lay out at once.
            if not check_ids(tok, ids, is_stale):
                return None
            spans = decoded_spans(tok, ids[:shown], is_stale)
            return None if spans is None else DecodedIds(spans, len(ids))

        self._decode_job.submit(job)

    @property
    def busy(self) -> bool:
        return self._decode_timer.isActive() or self._decode_job.busy or self._list_job.busy

    def decoded_text(self) -> str:
        return self.decoded_view.text()

    @Slot(object)
    def _on_decoded(self, decoded: DecodedIds) -> None:
        spans = decoded.spans
        if decoded.total > len(spans):
            self._show_error(f"The first {len(spans):,} of {decoded.total:,} ids are decoded", NOTE)
        else:
            self._show_error("")
        self.decoded_view.set_text(spans.text)
        self.decoded_view.set_spans(spans)
        self.decoded_view.show()
        self.decoded.emit(spans)

    @Slot(str)
    def _on_decode_failed(self, message: str) -> None:
        self._show_error(message)
        self.decoded_view.set_spans(None)
        self.decoded_view.set_text("")
        self.decoded_view.hide()

    def _show_error(self, message: str, kind: str = ERROR) -> None:
        """The first line of ``message`` under the box: why it cannot decode (``ERROR``, in
        the error colour), what it waits for (``WAITING``, muted) or how much of what it
        decoded it shows (``NOTE``, muted)."""
        line = message.splitlines()[0] if message else ""
        if kind == ERROR and line:
            line = f"Cannot decode: {line}"
        if kind != self._error_kind:
            self._error_kind = kind
            self._restyle_error(self.error_label)
        self.error_label.setText(html.escape(line, quote=False))

    def _restyle_error(self, label: QWidget) -> None:
        c = colours()
        colour = c.error if self._error_kind == ERROR else c.muted
        label.setStyleSheet(f"color: {colour}")

    @property
    def error(self) -> str:
        return html.unescape(self.error_label.text())

    def shutdown(self) -> None:
        self._decode_timer.stop()
        for job in (self._list_job, self._copy_job, self._decode_job):
            job.shutdown()
