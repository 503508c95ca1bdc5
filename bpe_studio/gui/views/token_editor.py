"""The token editor: type or paste text and see where the tokens are.

What it does: token boundaries are painted with alternating background colours; a token that
holds part of a multi-byte character (Chinese, emoji) is never drawn as half a character:
the tokens sharing such characters are painted as one block in a distinct pink with a wavy
underline, and the tooltip lists each of them. Special tokens are green. Hovering a token shows
its id, bytes and merge rank; a status line gives tokens, characters and bytes per token.

Tokenizing runs in :class:`~bpe_studio.gui.spans.SpanService`'s thread, never here, and only the
visible part of the document is painted (as ``ExtraSelections``, rebuilt on scroll), so a
1 MB paste costs the GUI thread one copy of the text and a screenful of selections.
Bound to the ``StateHub``, it tokenizes with the state's shown tokenizer (``state.shown``).
What it leaves out: which tokenizer that is (the controller and the session decide).
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QHelpEvent, QTextCharFormat, QTextCursor, QTextOption
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QTextEdit,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from ...core import TokenSpan
from ...core.display import readable_token
from ...core.spans import SpanArrays
from ..hub import StateHub
from ..spans import SpanService, TokenizerSource
from .common import (
    MUTED,
    SPECIAL_COLOUR,
    SPLIT_COLOUR,
    SPLIT_UNDERLINE,
    TOKEN_COLOURS,
    monospace_font,
    steady_label,
    title_label,
)

MAX_SELECTIONS = 6000  # a safety cap for a screenful of very short tokens
_SPLIT_SHADE = "#f5a8c8"  # every other block of split characters


def _background(colour: str) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setBackground(QColor(colour))
    return fmt


def _split_format(colour: str) -> QTextCharFormat:
    fmt = _background(colour)
    fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
    fmt.setUnderlineColor(QColor(SPLIT_UNDERLINE))
    return fmt


class TokenTextEdit(QPlainTextEdit):
    """A plain-text editor that paints the token spans of its visible blocks."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(monospace_font(11))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self._spans: SpanArrays | None = None
        self._special_ids: frozenset[int] = frozenset()
        self._stale = True
        self._token_formats = [_background(c) for c in TOKEN_COLOURS]
        self._split_formats = [_split_format(SPLIT_COLOUR), _split_format(_SPLIT_SHADE)]
        self._special_format = _background(SPECIAL_COLOUR)
        self._repaint = QTimer(self)
        self._repaint.setSingleShot(True)
        self._repaint.setInterval(0)
        self._repaint.timeout.connect(self.paint_visible_tokens)
        self.verticalScrollBar().valueChanged.connect(self._schedule)
        self.updateRequest.connect(self._on_update_request)

    # ------------------------------------------------------------ spans
    def set_spans(self, spans: SpanArrays | None) -> None:
        self._spans = spans
        self._stale = spans is None
        if spans is not None:
            tok = spans.tokenizer
            self._special_ids = frozenset(tok.special_id(s) for s in tok.special_tokens)
        self._schedule()

    def mark_stale(self) -> None:
        """The text changed: keep the current colours (their cursors follow the edit) but do
        not paint newly visible text with spans that no longer match it."""
        self._stale = True

    @property
    def spans(self) -> SpanArrays | None:
        return None if self._stale else self._spans

    def text(self) -> str:
        # toPlainText() would turn no-break spaces into spaces; the raw text keeps them and
        # marks paragraph ends with U+2029 instead of "\n".
        return self.document().toRawText().replace("\u2029", "\n")

    # ---------------------------------------------------------- painting
    @Slot()
    def _schedule(self, *args: object) -> None:
        self._repaint.start()

    @Slot(object, int)
    def _on_update_request(self, rect: object, dy: int) -> None:
        if dy:
            self._schedule()

    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._schedule()

    def visible_range(self) -> tuple[int, int]:
        """Document positions (UTF-16 units) of the first and past the last visible block."""
        block = self.firstVisibleBlock()
        start = block.position()
        offset = self.contentOffset()
        height = self.viewport().height()
        end = start
        while block.isValid():
            top = self.blockBoundingGeometry(block).translated(offset).top()
            if top > height:
                break
            end = block.position() + block.length()
            block = block.next()
        return start, end

    @Slot()
    def paint_visible_tokens(self) -> None:
        spans = self.spans
        if spans is None:
            if self._spans is None:
                self.setExtraSelections([])
            return
        start16, end16 = self.visible_range()
        lo, hi = spans.index_range(spans.from_utf16(start16), spans.from_utf16(end16))
        hi = min(hi, lo + MAX_SELECTIONS)
        starts, ends, partial, ids = spans.starts, spans.ends, spans.partial, spans.ids
        doc = self.document()
        selections = []
        group = 0
        i = lo
        while i < hi:
            a, b = int(starts[i]), int(ends[i])
            if partial[i]:
                # Tokens sharing characters: one block over all of them, never half a glyph.
                j = i + 1
                while j < hi and partial[j] and starts[j] < b:
                    b = max(b, int(ends[j]))
                    j += 1
                fmt = self._split_formats[group % 2]
                group += 1
            else:
                j = i + 1
                fmt = (
                    self._special_format
                    if int(ids[i]) in self._special_ids
                    else self._token_formats[i % 2]
                )
            cursor = QTextCursor(doc)
            cursor.setPosition(spans.to_utf16(a))
            cursor.setPosition(spans.to_utf16(b), QTextCursor.MoveMode.KeepAnchor)
            sel = QTextEdit.ExtraSelection()
            sel.cursor = cursor
            sel.format = fmt
            selections.append(sel)
            i = j
        self.setExtraSelections(selections)

    # ----------------------------------------------------------- tooltip
    def char_at(self, pos: QPoint) -> int | None:
        """The character (code point offset) under viewport point ``pos``."""
        spans = self.spans
        if spans is None:
            return None
        cursor = self.cursorForPosition(pos)
        unit = cursor.position()
        if pos.x() < self.cursorRect(cursor).x() and unit > 0:
            unit -= 1
        char = spans.from_utf16(unit)
        return char if 0 <= char < spans.text_length else None

    def tooltip_html(self, char: int) -> str | None:
        spans = self.spans
        if spans is None:
            return None
        indices = spans.covering(char)
        if not indices:
            return None
        tok = spans.tokenizer
        parts = []
        if len(indices) > 1:
            parts.append(f"<i>This character is split across {len(indices)} tokens</i>")
        for k in indices:
            tid = int(spans.ids[k])
            token = tok.vocab.get(tid, b"")
            rank = tok.merge_rank(tid)
            origin = (
                f"merge rank {rank:,}"
                if rank is not None
                else "special token"
                if tid in self._special_ids
                else "single byte"
            )
            hexes = " ".join(f"{b:02x}" for b in token[:24]) + (" …" if len(token) > 24 else "")
            parts.append(
                f"<b>id {tid:,}</b> &nbsp;<code>{html.escape(readable_token(token))}</code><br>"
                f"bytes: <code>{hexes}</code> ({len(token)})<br>{origin}"
            )
        return "<hr>".join(parts)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            char = self.char_at(event.pos())
            text = self.tooltip_html(char) if char is not None else None
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().viewportEvent(event)


class TokenEditor(QWidget):
    """The editor with its title bar, whitespace toggle and status line."""

    spans_ready = Signal(object)  # SpanArrays now painted

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title_label("Editor")
        self.source_label = steady_label(QLabel(""))
        self.source_label.setTextFormat(Qt.TextFormat.PlainText)  # it names files
        self.source_label.setStyleSheet(f"color: {MUTED}")
        self.whitespace = QCheckBox("Show whitespace")
        self.whitespace.toggled.connect(self.set_whitespace_visible)
        self.edit = TokenTextEdit(self)
        self.edit.setPlaceholderText("Type or paste text to see how it is tokenized")
        self.status = steady_label(QLabel("No tokenizer yet: train one or load one"))
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # it quotes error messages
        self.status.setStyleSheet(f"color: {MUTED}")
        self.service = SpanService(self)
        self.service.ready.connect(self._on_ready)
        self.service.failed.connect(self._on_failed)
        self._source: TokenizerSource | None = None
        self._hub: StateHub | None = None
        self.edit.textChanged.connect(self._on_text_changed)

        top = QHBoxLayout()
        top.addWidget(self.title)
        top.addWidget(self.source_label, 1)
        top.addWidget(self.whitespace)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.status)

    def bind(self, hub: StateHub) -> None:
        """Follow ``hub.state.shown`` from now on."""
        self._hub = hub
        hub.tokenizer_changed.connect(self._on_tokenizer_changed)
        self._on_tokenizer_changed()

    @Slot()
    def _on_tokenizer_changed(self) -> None:
        state = self._hub.state
        self.set_tokenizer(state.picked or state.shown)  # the picker's choice wins

    @property
    def source(self) -> TokenizerSource | None:
        return self._source

    def set_tokenizer(self, source: TokenizerSource | None) -> None:
        self._source = source
        self.source_label.setText(source.label if source else "")
        self._request()

    def set_text(self, text: str) -> None:
        self.edit.setPlainText(text)

    def text(self) -> str:
        return self.edit.text()

    @property
    def spans(self) -> SpanArrays | None:
        """The spans painted now; None while they are being recomputed."""
        return self.edit.spans

    def token_spans(self) -> list[TokenSpan]:
        spans = self.edit.spans
        return spans.to_spans() if spans is not None else []

    @property
    def busy(self) -> bool:
        return self.service.busy

    @Slot(bool)
    def set_whitespace_visible(self, visible: bool) -> None:
        doc = self.edit.document()
        option = doc.defaultTextOption()
        flags = QTextOption.Flag.ShowTabsAndSpaces | QTextOption.Flag.ShowLineAndParagraphSeparators
        option.setFlags(option.flags() | flags if visible else option.flags() & ~flags)
        doc.setDefaultTextOption(option)
        if self.whitespace.isChecked() != visible:
            self.whitespace.setChecked(visible)

    @Slot()
    def _on_text_changed(self) -> None:
        self._request()

    def _request(self) -> None:
        self.edit.mark_stale()
        if self._source is not None:
            self.status.setText("Tokenizing…")
        self.service.request(self._source, self.edit.text)

    @Slot(object)
    def _on_ready(self, spans: SpanArrays) -> None:
        self.edit.set_spans(spans)
        n = len(spans)
        per_token = spans.utf8_length / n if n else 0.0
        self.status.setText(
            f"{n:,} tokens · {spans.text_length:,} characters · "
            f"{spans.utf8_length:,} bytes · {per_token:.2f} bytes/token"
        )
        self.spans_ready.emit(spans)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.status.setText(f"Could not tokenize: {message}")

    def shutdown(self) -> None:
        self.service.shutdown()
