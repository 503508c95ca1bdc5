"""The token editor: type or paste text and see where the tokens are.

What it does: token boundaries are painted with alternating background colours; a token that
holds part of a multi-byte character (Chinese, emoji) is never drawn as half a character:
the tokens sharing such characters are painted as one block in a distinct pink with a wavy
underline, and the tooltip lists each of them. Special tokens are green (two shades, so that
adjacent ones show their boundary); a line break inside a token gets a coloured ↵ at the end
of its line. Hovering a token shows its id, bytes and merge rank; clicking one selects it
(``token_clicked``, and the hub's ``select_token``); the selected token's occurrences are
outlined. A status line gives tokens, characters and bytes per token.

Bound to the ``AppModel``, it follows the timeline: it tokenizes with the tokenizer the user
picked (``state.picked``, in full) or else with the run's tokenizer (``state.shown``) cut to the
first ``state.step`` merges. Tokenizing runs in
:class:`~bpe_studio.gui.jobs.span_service.SpanService`'s thread, never here, latest request
winning, and only the visible characters are painted (as the formats of their paragraphs'
layouts, :mod:`.block_formats`, set again on scroll; drawn over a paragraph of many thousand
characters, whose layout Qt would otherwise redo whole), so a 1 MB paste costs the GUI thread
one copy of the text, a screenful of colours and Qt's own layout of the text (all of it, for
a text on one line: :mod:`.long_paragraphs`).

It tokenizes exactly the text it was given: a ``QTextDocument`` turns ``\r\n``, ``\r`` and
U+2029 into one paragraph break each and drops a leading byte-order mark, so the editor keeps
what each break was (following edits, undo and redo: :mod:`.kept_breaks`) and puts it back in
:meth:`TokenTextEdit.text`.
What it leaves out: which tokenizer and step to show (the ``AppModel``'s state), the ids list
(``ids_panel``).
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QRect, Qt, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QResizeEvent,
    QTextCharFormat,
    QTextOption,
)
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QWidget,
)

from ...core import TokenSpan
from ...core.encode.foreign import AnyTokenizer, ForeignTokenizer
from ...core.explain.span_arrays import SpanArrays
from ..jobs.span_service import STEP_DEBOUNCE_MS, SpanResult, SpanService
from ..model.app_model import AppModel
from ..model.run_tokenizer import paused_label, run_tokenizer_at, source_label, training_label
from ..model.state import Phase, RunState
from ..model.tokenizer_source import TokenizerSource
from ..responsiveness.debounce import single_shot
from .block_formats import BlockFormats, PaintedRange, draw_long_paragraphs
from .char_under_point import char_at, glyph_boxes, visible_units
from .common import (
    answer_token_tooltip,
    counted,
    monospace_font,
    steady_label,
    title_label,
    token_text,
)
from .editor_legend import EditorLegend
from .kept_text_edit import KeptTextEdit
from .layouts import column
from .line_breaks import LINE_BREAK, draw_line_break
from .theme import colours, muted, themed

MAX_PAINTED = 6000  # a safety cap for a screenful of very short tokens (blocks painted)
PIECE_DEBOUNCE_MS = 150


def token_format(background: str) -> QTextCharFormat:
    """A token's background, and the scheme's text colour that reads on it."""
    fmt = QTextCharFormat()
    fmt.setBackground(QColor(background))
    fmt.setForeground(QColor(colours().token_text))
    return fmt


def split_format(background: str) -> QTextCharFormat:
    """Tokens sharing a multi-byte character: one block with a wavy underline."""
    fmt = token_format(background)
    fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
    fmt.setUnderlineColor(QColor(colours().split_underline))
    return fmt


def _same_run(a: TokenizerSource | None, b: TokenizerSource | None) -> bool:
    """Whether ``a`` and ``b`` are the same run's tokenizer (at maybe different steps)."""
    return a is not None and b is not None and a.run_id is not None and a.run_id == b.run_id


def _describe(state: RunState | None, source: TokenizerSource, step: int | None) -> str:
    """A source as the editor's header names it: short enough for the room beside the title
    (the picker above names it a tokenizer), the step first, so a label cut still shows it;
    as the run in ``state`` has it (a paused run's says so)."""
    if state is not None and step is not None and _whole_run(state, source):
        # A step cut from the run's tokenizer with every merge shown (the editor's while the
        # run is paused, kept on a resume until the step moves) is worded as that step built
        # alone is ("100 of 500 merges, paused at merge 500"): the words name the step.
        made = state.published
        said = paused_label(step, made) if state.phase is Phase.PAUSED else None
        return (said or training_label(step, made)).removeprefix("Tokenizer: ")
    label = source.label if state is None else source_label(state, source, step is not None)
    label = label.removeprefix("Tokenizer: ")
    return label if step is None else f"at step {step:,} · {label}"


def _whole_run(state: RunState, source: TokenizerSource) -> bool:
    """Whether ``source`` is the tokenizer of the run in ``state``, still training or paused,
    with every merge its views show."""
    return (
        state.phase in (Phase.MERGING, Phase.PAUSED)
        and source.run_id == state.run_id
        and source.merge_count == state.published
    )


def format_id(token_id: int) -> str:
    """How the app shows a token id to people: "50,256"."""
    return f"{token_id:,}"


class TokenTextEdit(KeptTextEdit):
    """A plain-text editor that paints the token spans of its visible characters (and gives
    back the very text it was given: ``KeptTextEdit``)."""

    clicked = Signal(int)  # the id of a token clicked (no text selected)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(monospace_font(11))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self._spans: SpanArrays | None = None
        self._special_ids: frozenset[int] = frozenset()
        self._stale = True
        self._highlight: int | None = None
        # Painted over the text: (document offset of a line break, its token's colour), and
        # the (start, end) document offsets of the highlighted token's visible occurrences.
        self._markers: list[tuple[int, QColor]] = []
        self._outlines: list[tuple[int, int]] = []
        self._formats = BlockFormats(self)
        self._shades: tuple[SpanArrays, np.ndarray] | None = None  # _split_shades' last
        self._repaint = single_shot(self, 0, self.paint_visible_tokens)
        self.verticalScrollBar().valueChanged.connect(self._schedule)
        self.horizontalScrollBar().valueChanged.connect(self._schedule)
        self.updateRequest.connect(self._on_update_request)
        themed(self, TokenTextEdit._restyle)

    def _restyle(self) -> None:
        """The token formats in the scheme's colours: alternate tokens, split characters and
        special tokens (every other one a shade darker, so adjacent ones show a boundary)."""
        c = colours()
        self._token_formats = [token_format(colour) for colour in c.tokens]
        self._split_formats = [split_format(colour) for colour in c.split]
        self._special_formats = [token_format(colour) for colour in c.special]
        self._schedule()

    # -------------------------------------------------------------- text
    @Slot(int, int, int)
    def _on_contents_change(self, position: int, removed: int, added: int) -> None:
        # Positions inside the replaced range are gone; those after it move with the text.
        # subtle: the markers and outlines are painted from document positions of the text
        # their spans were computed for; left as they were, a shorter text made every paint
        # until the next spans ask for positions past its end (Qt warns once for each).
        end, delta = position + removed, added - removed

        def moved(p: int) -> int | None:
            return p if p < position else p + delta if p >= end else None

        self._markers = [(q, c) for p, c in self._markers if (q := moved(p)) is not None]
        self._outlines = [
            (qa, qb)
            for a, b in self._outlines
            if (qa := moved(a)) is not None and (qb := moved(b)) is not None
        ]
        super()._on_contents_change(position, removed, added)

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

    def set_highlight(self, token_id: int | None) -> None:
        if token_id != self._highlight:  # asked again at every step the timeline shows
            self._highlight = token_id
            self._schedule()

    # ---------------------------------------------------------- painting
    @Slot()
    def _schedule(self, *args: object) -> None:
        self._repaint.start()

    @Slot(object, int)
    def _on_update_request(self, rect: object, dy: int) -> None:
        if dy:
            self._schedule()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._schedule()

    def visible_range(self) -> tuple[int, int]:
        """Document positions (UTF-16 units) on screen (``visible_units``)."""
        return visible_units(self)

    def painted(self) -> list[PaintedRange]:
        """The token colours painted now: document ranges and their formats."""
        return self._formats.painted()

    def _format(self, i: int, ids: np.ndarray) -> QTextCharFormat:
        if int(ids[i]) in self._special_ids:
            return self._special_formats[i % 2]
        return self._token_formats[i % 2]

    @Slot()
    def paint_visible_tokens(self) -> None:
        spans = self.spans
        if spans is None:
            if self._spans is None:
                self._formats.clear()
                self._markers, self._outlines = [], []
                self.viewport().update()
            return
        start16, end16 = self.visible_range()
        first, last = spans.from_utf16(start16), spans.from_utf16(end16)
        lo, end = spans.index_range(first, last)
        starts, ends, partial, ids = spans.starts, spans.ends, spans.partial, spans.ids
        ranges: list[tuple[int, int, QTextCharFormat]] = []
        shades = self._split_shades(spans)
        i = lo
        # subtle: the cap counts blocks painted, not tokens: Chinese under GPT-2 is two or
        # three tokens a character, and a tall editor's screenful of it (8,000 tokens) was
        # left uncoloured from a third of the way up.
        while i < end and len(ranges) < MAX_PAINTED:
            a, b = int(starts[i]), int(ends[i])
            if partial[i]:
                # Tokens sharing characters: one block over all of them, never half a glyph.
                j = i + 1
                while j < end and partial[j] and starts[j] < b:
                    b = max(b, int(ends[j]))
                    j += 1
                fmt = self._split_formats[int(shades[i])]
            else:
                j = i + 1
                fmt = self._format(i, ids)
            ranges.append((spans.to_utf16(a), spans.to_utf16(b), fmt))
            i = j
        hi = i  # the tokens painted: [lo, hi)
        self._formats.show(ranges)
        self._markers = self._line_break_markers(
            spans, first, min(last, int(ends[hi - 1]) if hi > lo else first)
        )
        self._outlines = []
        if self._highlight is not None and hi > lo:
            for k in np.flatnonzero(ids[lo:hi] == self._highlight).tolist():
                a, b = spans.to_utf16(int(starts[lo + k])), spans.to_utf16(int(ends[lo + k]))
                if a == b and a > 0:
                    # The "\n" of a "\r\n", which the document hides (GPT-2's token 198
                    # there): outlined on the line break it is half of.
                    a -= 1
                self._outlines.append((a, b))
        self.viewport().update()

    def _split_shades(self, spans: SpanArrays) -> np.ndarray:
        """Which of the two split formats each token's block of split characters takes: its
        block's number from the text's start, mod 2. subtle: counted from the first token
        on screen, every block changed shade as the view scrolled by a line."""
        kept = self._shades
        if kept is None or kept[0] is not spans:
            partial, starts, ends = spans.partial, spans.starts, spans.ends
            joined = np.zeros(len(partial), dtype=bool)  # a token that continues a block
            joined[1:] = partial[1:] & partial[:-1] & (starts[1:] < ends[:-1])
            shades = (np.cumsum(partial & ~joined) + 1) % 2
            kept = self._shades = (spans, shades.astype(np.int8))
        return kept[1]

    def _line_break_markers(
        self, spans: SpanArrays, first: int, last: int
    ) -> list[tuple[int, QColor]]:
        """A marker for each line break in characters ``[first, last)``, in its token's colour
        (a document paints nothing for a paragraph end, so a newline token would be invisible)."""
        text, ids = spans.text, spans.ids
        markers: list[tuple[int, QColor]] = []
        for m in LINE_BREAK.finditer(text, first, last):
            c = m.start()
            if text[c] == "\n" and c > 0 and text[c - 1] == "\r":
                continue  # "\r\n" is one paragraph end: one marker
            held = spans.covering(c)
            if held:
                fmt = self._format(held[0], ids)
                markers.append((spans.to_utf16(c), fmt.background().color()))
            if len(markers) >= MAX_PAINTED:
                break
        return markers

    def outline_boxes(self) -> list[QRect]:
        """Where the selected token's visible occurrences are outlined: around their glyphs,
        line by line (``glyph_boxes``)."""
        return [box for a, b in self._outlines for box in glyph_boxes(self, a, b)]

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        draw_long_paragraphs(self, self._formats)
        super().paintEvent(event)
        if not (self._markers or self._outlines):
            return
        painter = QPainter(self.viewport())
        text_colour = QColor(colours().token_text)
        for unit, colour in self._markers:
            draw_line_break(self, painter, unit, colour, text_colour)
        pen = QPen(QColor(colours().accent))
        pen.setWidth(2)
        painter.setPen(pen)
        for box in self.outline_boxes():
            painter.drawRect(box)
        painter.end()

    # ----------------------------------------------------------- tooltip
    def char_at(self, pos: QPoint) -> int | None:
        """The character (code point offset) under viewport point ``pos``."""
        spans = self.spans
        return None if spans is None else char_at(self, spans, pos)

    def token_at(self, pos: QPoint) -> int | None:
        """The id of the (first) token under viewport point ``pos``."""
        char = self.char_at(pos)
        spans = self.spans
        if char is None or spans is None:
            return None
        held = spans.covering(char)
        return int(spans.ids[held[0]]) if held else None

    def tooltip_html(self, char: int) -> str | None:
        spans = self.spans
        if spans is None:
            return None
        indices = spans.covering_shown(char)  # a "\r\n"'s two tokens, where it has two
        if not indices:
            return None
        tok = spans.tokenizer
        parts = []
        split = len(spans.covering(char))
        if split > 1:
            parts.append(f"<i>This character is split across {split} tokens</i>")
        for k in indices:
            tid = int(spans.ids[k])
            token = tok.vocab.get(tid, b"")
            # A foreign tokenizer's merges (if any) are not the run's steps: named by kind.
            rank = None if isinstance(tok, ForeignTokenizer) else tok.merge_rank(tid)
            origin = (
                f"merge rank {rank:,}"
                if rank is not None
                else "special token"
                if tid in self._special_ids
                else f"{tok.kind} token {html.escape(repr(tok.token_text(tid)))}"
                if isinstance(tok, ForeignTokenizer)
                else "added token (not special: always matched whole)"
                if tid in tok.added_tokens.values()
                else "single byte"
            )
            hexes = " ".join(f"{b:02x}" for b in token[:24]) + (" …" if len(token) > 24 else "")
            parts.append(
                f"<b>id {format_id(tid)}</b> &nbsp;"
                f"<code>{html.escape(token_text(token))}</code>"
                f"<br>bytes: <code>{hexes}</code> ({len(token)})<br>{origin}"
            )
        return "<hr>".join(parts)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt override
        return answer_token_tooltip(self, event) or super().viewportEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        super().mouseReleaseEvent(event)
        if event.button() == Qt.MouseButton.LeftButton and not self.textCursor().hasSelection():
            token_id = self.token_at(event.position().toPoint())
            if token_id is not None:
                self.clicked.emit(token_id)

    def token_at_cursor(self) -> int | None:
        """The id of the (first) token holding the character after the text cursor (before
        it, at the end of the text)."""
        spans = self.spans
        if spans is None or spans.text_length == 0:
            return None
        char = min(spans.from_utf16(self.textCursor().position()), spans.text_length - 1)
        held = spans.covering(char)
        return int(spans.ids[held[0]]) if held else None

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        # Tab types a tab (text with tabs is tokenized as it is); Ctrl+Tab leaves the editor,
        # as in Qt's other text fields, rather than reaching the tabs above. Ctrl+Enter asks
        # "why this token" of the token at the cursor, as a click on it does.
        key, mods = event.key(), event.modifiers()
        if mods & Qt.KeyboardModifier.ControlModifier:
            if key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
                forward = key == Qt.Key.Key_Tab and not mods & Qt.KeyboardModifier.ShiftModifier
                # subtle: QPlainTextEdit's own override refuses while Tab types tabs.
                QAbstractScrollArea.focusNextPrevChild(self, forward)
                return
            if (
                key in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and not self.textCursor().hasSelection()
            ):
                token_id = self.token_at_cursor()
                if token_id is not None:
                    self.clicked.emit(token_id)
                return
        super().keyPressEvent(event)


class TokenEditor(QWidget):
    """The editor with its title bar, whitespace toggle and status line.

    Other views code against: ``piece_at_cursor`` (the pre-token, or the special or added
    token, under the cursor, after the cursor moved and rested), ``token_clicked`` (and the hub's
    ``select_token``), ``encoded`` (tokens, UTF-8 bytes after each encode),
    :meth:`highlight_token` and :meth:`occurrences`."""

    spans_ready = Signal(object)  # SpanArrays now painted
    spans_cleared = Signal()  # none painted now: no tokenizer, or it could not tokenize the text
    spans_stale = Signal()  # the spans painted are not the text's any more; new ones follow
    source_changed = Signal()  # another tokenizer (or step) is shown; its spans follow
    piece_at_cursor = Signal(str)
    token_clicked = Signal(int)
    encoded = Signal(int, int)  # tokens, UTF-8 bytes of the text shown

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title_label("Editor")
        self.source_label = muted(steady_label(QLabel("")))
        self.source_label.setTextFormat(Qt.TextFormat.PlainText)  # it names files
        self.whitespace = QCheckBox("Show whitespace")
        self.whitespace.toggled.connect(self.set_whitespace_visible)
        self.edit = TokenTextEdit(self)
        self.edit.setAccessibleName("Editor: text to tokenize")
        self.edit.setPlaceholderText("Type or paste text to see how it is tokenized")
        self.status = muted(steady_label(QLabel("No tokenizer yet: train one or load one")))
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # it quotes error messages
        self.legend = EditorLegend()
        self.service = SpanService(self)
        self.service.ready.connect(self._on_ready)
        self.service.failed.connect(self._on_failed)
        self._source: TokenizerSource | None = None
        self._step: int | None = None  # merges of the source to use; None: all
        self._record_source: tuple[int, TokenizerSource] | None = None  # built while training
        # The (source, step) the spans painted now were computed with.
        self._painted: tuple[TokenizerSource | None, int | None] = (None, None)
        self._asked_text = ""  # the text the latest span job was given
        self._failed = False  # the latest span job failed: nothing is painted
        self._hub: AppModel | None = None
        self._piece: str | None = None  # the last piece_at_cursor sent
        self._piece_timer = single_shot(self, PIECE_DEBOUNCE_MS, self._send_piece)
        self.edit.textChanged.connect(self._on_text_changed)
        self.edit.cursorPositionChanged.connect(self._piece_timer.start)
        self.edit.clicked.connect(self._on_clicked)

        top = QHBoxLayout()
        top.addWidget(self.title)
        top.addWidget(self.source_label, 1)
        top.addWidget(self.whitespace)
        column(self, top, (self.edit, 1), self.status, self.legend)

    # ------------------------------------------------------------ the hub
    def bind(self, hub: AppModel) -> None:
        """Follow the hub from now on: its picked tokenizer, or its run's at its step; and
        outline the token it selects."""
        self._hub = hub
        hub.tokenizer_changed.connect(self._follow_hub)
        hub.step_changed.connect(self._follow_hub)
        hub.reset.connect(self._on_reset)
        hub.token_selected.connect(self._show_selection)
        # A pause or a resume makes no new tokenizer (the step stays), yet the header's
        # words change; so do the merges made (a frame's new merges, or the merge under way
        # at a pause arriving after it) while the tokenizer shown stays.
        hub.phase_changed.connect(self._show_label)
        hub.merges_added.connect(self._on_merges_added)
        self._follow_hub()

    @Slot(int, int)
    def _on_merges_added(self, first: int, last: int) -> None:
        # A run's tokenizer is named with the merges made so far (source_label): once per
        # frame, as the status line's count. (The label is a steady one: no layout request.)
        state = self._hub.state if self._hub is not None else None
        if state is not None and state.phase in (Phase.MERGING, Phase.PAUSED):
            self._show_label()

    @Slot()
    def _on_reset(self) -> None:
        self._record_source = None  # built from the record of a run that is gone
        self._follow_hub()

    @Slot()
    def _follow_hub(self, *args: object) -> None:
        source, step = self._choose(self._hub.state) if self._hub is not None else (None, None)
        if source is not self._source or step != self._step:
            # subtle: a step of the same tokenizer (or of the same run: its tokenizer rebuilt
            # while it trains) may show each newest step that could be finished meanwhile; a
            # result of another tokenizer never shows under this one's name.
            step_only = source is self._source or _same_run(source, self._source)
            self._set_source(source, step, STEP_DEBOUNCE_MS if step_only else None)
        self._show_selection()

    def shows_run(self) -> bool:
        """Whether the editor's tokenizer is the run's (at some step), so that its ids are
        the run's vocabulary's: not a tokenizer picked instead, unless that is the very
        tokenizer the run shows (a loaded file picked again)."""
        state = self._hub.state if self._hub is not None else None
        source = self._source
        if state is None or source is None:
            return False
        if source is not state.picked:
            return True
        loaded = state.loaded
        return loaded is not None and source.built is loaded.tokenizer

    @Slot()
    def _show_selection(self, *args: object) -> None:
        """Outline the selected token if it belongs to the tokenizer shown here."""
        state = self._hub.state if self._hub is not None else None
        token_id = state.selected_token if state is not None else None
        if state is not None and token_id is not None:
            mine = (
                self.shows_run()
                if state.selected_in is None
                else state.selected_in.same_as(self._source)
            )
            if not mine:
                token_id = None
        self.highlight_token(token_id)

    def _choose(self, state: RunState) -> tuple[TokenizerSource | None, int | None]:
        """The tokenizer and step to show: the picked one in full, else the run's at the
        timeline's step. While training, the run's tokenizer is rebuilt from the record only
        every so often (the controller paces it): following live, the editor shows that one;
        at an earlier step, its truncation; at a later step, one built from the record (and
        back from there, that one's truncation). Paused, the controller shows the run with
        every merge made, once: each step is its truncation, so a replay's or a drag's steps
        are moves of one tokenizer (split back on the GUI thread, span_service.advance), not
        a fresh encode of the text per step."""
        if state.picked is not None:
            return state.picked, None
        shown = state.shown
        if shown is None:
            return None, None
        k, n = state.step, shown.merge_count
        if state.phase.training and state.loaded is None:
            if state.live or k == n:
                return shown, None
            if k > n and state.settings is not None:
                built = self._record_source
                if built is not None and k < built[0] and built[1].merge_count == built[0]:
                    return built[1], k  # back from a step built before: its truncation
                return self._record_at(state, k), None
        return shown, (None if k >= n else k)

    def _record_at(self, state: RunState, k: int) -> TokenizerSource:
        if self._record_source is None or self._record_source[0] != k:
            label = training_label(k, state.published)
            build = run_tokenizer_at(state, k)  # built in the span thread, on first use
            source = TokenizerSource.deferred(label, build, k, state.run_id)
            self._record_source = (k, source)
        return self._record_source[1]

    # ------------------------------------------------------------ tokenizer
    @property
    def source(self) -> TokenizerSource | None:
        """The tokenizer source shown (in full, or cut to :attr:`step`)."""
        return self._source

    @property
    def step(self) -> int | None:
        """Merges of :attr:`source` used; None: all of them."""
        return self._step

    @property
    def tokenizer(self) -> AnyTokenizer | None:
        """The tokenizer of the spans painted now (None until the first arrive)."""
        spans = self.edit._spans
        return spans.tokenizer if spans is not None else None

    @property
    def current_tokenizer(self) -> AnyTokenizer | None:
        """The tokenizer the editor shows now (:attr:`source` at :attr:`step`); None while
        it is being built (the spans painted may still be the previous one's)."""
        if self._painted != (self._source, self._step):
            return None
        return self.tokenizer

    def set_tokenizer(self, source: TokenizerSource | None, step: int | None = None) -> None:
        """Tokenize with ``source`` cut to its first ``step`` merges (None: all)."""
        self._set_source(source, step, None)

    def _set_source(
        self, source: TokenizerSource | None, step: int | None, wait: int | None
    ) -> None:
        self._source, self._step = source, step
        step_only = wait == STEP_DEBOUNCE_MS
        painted = self.edit.spans
        # subtle: a step a little ahead of the spans painted is shown in this very call (the
        # frame that moved the timeline), not after the frame's repaints.
        if not (
            step_only
            and source is not None
            and painted is not None
            and self.service.advance(source, step, painted)
        ):
            self._request(wait, step_only=step_only)
        if source is None:  # nothing to tokenize with: no colours of one that is gone
            self._clear_spans("No tokenizer yet: train one or load one")
        self._show_label()
        self.source_changed.emit()

    def _show_label(self) -> None:
        """The header names the tokenizer and step of the colours shown, and says so while
        another one is being worked out (the colours, the ids and the counts below always
        belong together: they come from one result). What is under way comes first, then
        " · " and the tokenizer as the header names it alone: a run's is described, not
        named ("trained on …", "training, …"), and "could not tokenize with trained on …"
        did not read as English."""
        painted, step = self._painted
        source = self._source
        state = self._hub.state if self._hub is not None else None
        if source is None:
            text = ""
        elif painted is None:
            named = _describe(state, source, self._step)
            text = f"{'could not tokenize' if self._failed else 'tokenizing…'} · {named}"
        elif (painted, step) == (source, self._step):
            text = _describe(state, painted, step)
        elif painted is source or _same_run(painted, source):
            target = self._step if self._step is not None else source.merge_count
            text = f"updating to step {target:,}… · {_describe(state, painted, step)}"
        else:
            shown = _describe(state, painted, step)
            text = f"loading… · {_describe(state, source, self._step)} · still showing {shown}"
        self.source_label.setText(text)

    def set_text(self, text: str) -> None:
        self.edit.set_text(text)

    def text(self) -> str:
        """The text tokenized: exactly as given (line breaks included), with any edits."""
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

    # ---------------------------------------------------------- selection
    def highlight_token(self, token_id: int | None) -> None:
        """Outline every occurrence of ``token_id`` in the text (None: none)."""
        self.edit.set_highlight(token_id)

    @property
    def outlined(self) -> int | None:
        """The token whose occurrences are outlined: the selected one, when it belongs to
        the tokenizer shown here."""
        return self.edit._highlight

    def occurrences(self, token_id: int) -> int:
        """How many tokens of the current encoding have id ``token_id`` (0 while none)."""
        spans = self.edit._spans
        return spans.occurrences(token_id) if spans is not None else 0

    @Slot(int)
    def _on_clicked(self, token_id: int) -> None:
        self.token_clicked.emit(token_id)
        if self._hub is not None:
            # An id of a tokenizer picked instead of the run's is not a token of the run.
            self._hub.select_token(token_id, None if self.shows_run() else self._source)

    @Slot()
    def _send_piece(self) -> None:
        spans = self.edit.spans
        if spans is None:
            return  # sent when the spans arrive
        char = spans.from_utf16(self.edit.textCursor().position())
        if char >= spans.text_length > 0:
            char = spans.text_length - 1  # at the very end: the last piece
        self._piece = spans.piece_at(char)
        self.piece_at_cursor.emit(self._piece)

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
        self._request(None)

    def _text_for_job(self) -> str:
        """The text a span job tokenizes, read when it starts (after a pause in typing), and
        handed to the model: it is the text the editor shows from now on."""
        text = self.edit.text()
        self._asked_text = text
        if self._hub is not None:
            self._hub.set_editor_text(text)
        return text

    def _request(self, wait: int | None, step_only: bool = False) -> None:
        """Tokenize anew. ``step_only``: the text is unchanged, so the colours shown stay
        valid for it and stay up (with their status line) until the new ones arrive: while
        the step keeps moving, the editor shows each newest step it could finish."""
        self._failed = False
        if not step_only or self.edit.spans is None:
            self.edit.mark_stale()
            if self._source is not None:
                self.status.setText("Tokenizing…")
                self.spans_stale.emit()
        self.service.request(
            self._source, self._text_for_job, step=self._step, debounce_ms=wait, throttle=step_only
        )
        self._show_label()

    @Slot(object)
    def _on_ready(self, result: SpanResult) -> None:
        # The result carries the key it was computed for: one of another tokenizer (not a
        # step of this one) or of another text is dropped; a step of this tokenizer is shown,
        # named as what it is, while the step asked for is worked out (the header says so).
        source, spans = result.source, result.spans
        if source is not self._source and not _same_run(source, self._source):
            return
        if spans.text is not self._asked_text and spans.text != self._asked_text:
            return
        self._painted = (source, result.asked)
        self._show_label()
        self.edit.set_spans(spans)
        n = len(spans)
        per_token = spans.utf8_length / n if n else 0.0
        self.status.setText(
            f"{counted(n, 'token')} · {counted(spans.text_length, 'character')} · "
            f"{spans.utf8_length:,} bytes · {per_token:.2f} bytes/token"
        )
        self.spans_ready.emit(spans)
        self.encoded.emit(n, spans.utf8_length)
        hub = self._hub
        if hub is not None and n and source.run_id == hub.state.run_id and self.shows_run():
            # The editor's point on the compression plot, kept with this text and this run.
            hub.add_editor_point(source.run_id, spans.text, result.step, spans.utf8_length / n)
        if self._piece is not None or self.edit.hasFocus():
            char = spans.from_utf16(self.edit.textCursor().position())
            piece = spans.piece_at(min(char, spans.text_length - 1))
            if piece != self._piece:
                self._piece = piece
                self.piece_at_cursor.emit(piece)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        # subtle: the colours, ids and counts on screen were of the tokenizer before (or of a
        # run since discarded): kept, they would pass for this one's. They go, with the ids.
        self._failed = True
        self._clear_spans(f"Could not tokenize the text: {message}")
        self._show_label()

    def _clear_spans(self, status: str) -> None:
        """No spans painted, nor ids listed; ``status`` says why."""
        self.edit.set_spans(None)
        self._painted = (None, None)
        self.status.setText(status)
        self.spans_cleared.emit()

    def shutdown(self) -> None:
        self.service.shutdown()
