"""The Compare page: two tokenizers side by side on the same text.

What it does: one editable text box (``KeptTextEdit``: the text given, line breaks and all)
feeds two read-only panes, each tokenized by its own choice (a preset, the run's tokenizer or a
loaded file: :class:`~.picker.TokenizerPicker`). Above each pane: token count, bytes per token
and characters per token. In the panes, tokens that both tokenizers cut the same way are grey,
the others blue and orange, and the first character after every boundary only one of them has
(``report.boundary_diff``) is underlined in red on both sides (a line break, which has no
glyph, by a red "↵" at the end of its line, as the editor draws one), on text a tokenizer's
pre-tokenizer drops and no token of its holds too (WordPiece's spaces). The panes scroll together.
A tokenizer whose pattern leaves a character of the text unmatched cannot encode it: its pane
says why (:class:`Uncovered`) and the other shows its tokens alone, as the Report leaves out
that one cell; so does a pane whose choice cannot be built any more (:class:`Unbuilt`: the run
discarded, a file deleted since), as the Report leaves out the run's column.
Loading and tokenizing run on a :class:`~..jobs.latest.LatestJob` (latest request wins), and
only while the page is shown; panes paint only their visible part. Hovering a pane shows the
token(s) under the pointer (id and bytes).
What it leaves out: editing in the panes (they mirror the text box).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from PySide6.QtCore import QEvent, QPoint, Qt, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QPainter,
    QPaintEvent,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ...core.encode.token_spans import span_cuts
from ...core.explain.report import diff_cuts
from ...core.explain.span_arrays import SpanArrays, compute_spans
from ...core.pretokenization.pretokenizer import UncoveredText
from ...core.text.display import plural
from ..model.app_model import AppModel
from ..model.panes import COMPARE_LEFT, COMPARE_RIGHT
from ..model.run_spans import RunSpans
from ..model.tokenizer_source import TokenizerSource
from ..responsiveness.debounce import single_shot
from .block_formats import BlockFormats, PaintedRange, draw_long_paragraphs
from .char_under_point import char_at, visible_units
from .common import (
    answer_token_tooltip,
    monospace_font,
    steady_label,
    title_label,
    token_text,
)
from .kept_text_edit import KeptTextEdit
from .lazy_page import LazyPage
from .line_breaks import LINE_BREAK, draw_line_break
from .long_paragraphs import ready_for_long_paragraphs
from .picker import ENCODE_LOCK, Choice, FailedPick, TokenizerPicker, preset_key
from .theme import colours, muted, themed

MARK_PROPERTY = QTextFormat.Property.UserProperty + 1  # tags the boundary marks (tests read it)
MAX_PAINTED = 6000  # a safety cap for a screenful of very short tokens (ranges painted)
# Characters a pane takes in a turn of the event loop (cut after a line break): a long text is
# laid out a piece a turn, not both panes' whole text in the turn that shows the result
# (docs/responsiveness.md has the figures).
FILL_CHARS = 100_000

DEFAULT_TEXT = (
    "Tokenizers disagree most on text unlike what they were trained on.\n"
    "GPT-2 learned its merges from English web pages; GPT-4o's vocabulary is four times\n"
    "larger, with room for code and many more languages.\n"
    "\n"
    "def greet(name: str, times: int = 3) -> str:\n"
    '    """Say hello, a few times."""\n'
    "    for _ in range(times):\n"
    '        print(f"Hello, {name}!")  # four spaces of indent, then code\n'
    "    return name.upper()\n"
    "\n"
    "Numbers: 2024, 3.14159, 1,000,000 and 0x1F600; dates like 2026-11-23T18:10Z.\n"
    "URLs: https://example.com/search?q=byte+pair+encoding&lang=en\n"
    "中文分词：今天天气很好，我们去公园散步吧。机器学习需要大量的数据。\n"
    "日本語のテキストも少し：こんにちは、世界。\n"
    "Русский текст: токенизация по байтам.\n"
    "Emoji: 👩‍💻 🇯🇵 👍🏽 ❤️ 🎉 and accents: café, naïve, Zürich, São Paulo.\n"
    "<|endoftext|>\n"
)


@dataclass(frozen=True, eq=False)
class Side:
    """One tokenizer's view of the text."""

    label: str
    spans: SpanArrays
    cuts: np.ndarray  # character offsets where it cuts the text (``span_cuts``; 0, end left out)
    notes: tuple[str, ...] = ()  # what the tokenizer does otherwise than its file says
    # The run's source the spans were split back from (``RunSpans``), or None: encoded.
    run: TokenizerSource | None = None

    @classmethod
    def of(
        cls,
        label: str,
        spans: SpanArrays,
        notes: tuple[str, ...] = (),
        run: TokenizerSource | None = None,
    ) -> Side:
        # From the spans, for every kind: a normalizer's or a foreign model's token bytes
        # need not spell the text, while the spans' offsets follow it back to its characters.
        cuts = span_cuts(spans.starts, spans.ends, spans.text_length)
        return cls(label, spans, cuts, notes, run)

    @property
    def tokens(self) -> int:
        return len(self.spans)

    @property
    def bytes_per_token(self) -> float:
        return self.spans.utf8_length / self.tokens if self.tokens else 0.0

    @property
    def chars_per_token(self) -> float:
        return self.spans.text_length / self.tokens if self.tokens else 0.0

    def summary(self) -> str:
        """The counts, then the tokenizer they are of (the pane's label names it even while
        another pick for the pane is under way). Counts first: a narrow pane cuts the end,
        and a name as long as "The run's tokenizer (step 20,000)" left no room for them."""
        return (
            f"{plural(self.tokens, 'token')} · {self.bytes_per_token:.2f} bytes/token · "
            f"{self.chars_per_token:.2f} characters/token · {self.label}"
        )


@dataclass(frozen=True)
class Uncovered:
    """A tokenizer that cannot encode the text: its pattern leaves a character unmatched
    (``UncoveredText``, whose message names the pattern, the character and where)."""

    label: str
    reason: str

    def summary(self) -> str:
        """One line, why first (a narrow pane cuts the end; the tooltip has it whole)."""
        return f"Cannot encode this text: {self.reason} · {self.label}"

    def explained(self) -> str:
        """What its pane shows in place of the text."""
        return f"{self.label} cannot encode this text: {self.reason}."


@dataclass(frozen=True)
class Unbuilt:
    """A pane's choice whose tokenizer cannot be built any more (the run discarded, a file
    deleted since): a pick the user did not make now, so the other side is shown alone."""

    pane: str
    label: str
    what: str  # the choice and why (``FailedPick.what``)
    key: str = ""  # the choice's picker key

    def summary(self) -> str:
        return self.what

    def explained(self) -> str:
        return f"{self.what}."


@dataclass(frozen=True, eq=False)
class Comparison:
    text: str
    a: Side | Uncovered | Unbuilt
    b: Side | Uncovered | Unbuilt
    diff: np.ndarray  # sorted offsets where exactly one of them starts a token
    keys: tuple[str, str] = ("", "")  # the picker keys it was computed with

    @property
    def both(self) -> bool:
        """Both tokenized the text (else there are no boundaries to compare)."""
        return isinstance(self.a, Side) and isinstance(self.b, Side)


def _side(
    choice: Choice,
    text: str,
    is_stale: Callable[[], bool],
    picking: bool,
    runs: RunSpans | None = None,
    before: object = None,
) -> Side | Uncovered | Unbuilt | FailedPick | None:
    tok = choice.build()
    if isinstance(tok, FailedPick):
        # A pick under way that fails is undone by the page; the pane's own choice failing
        # leaves that side empty, and the other is shown alone.
        return tok if picking else Unbuilt(tok.pane, tok.label, tok.what, tok.key)
    if isinstance(before, Side) and before.spans.tokenizer is tok and before.spans.text == text:
        # The very tokenizer on the same text (the other pane's pick changed, or the
        # timeline's step, which this side does not follow): its tokens stay.
        return before if before.label == choice.label else replace(before, label=choice.label)
    try:
        spans = None
        if runs is not None and choice.run is not None:
            # A step of the run's tokenizer: split back from the whole one's spans (the
            # text encoded once per run and text, not at each step moved to).
            spans = runs.at(choice.run, text, choice.step, is_stale)
            if spans is not None:
                return Side.of(choice.label, spans, tuple(tok.notes), choice.run)
        spans = compute_spans(tok, text, is_stale)
    except UncoveredText as e:  # this side alone: the other may encode the text
        return Uncovered(choice.label, str(e))
    if spans is None:
        return None
    return Side.of(choice.label, spans, tuple(tok.notes))


def compare(
    text: str,
    a: Choice,
    b: Choice,
    is_stale: Callable[[], bool] = lambda: False,
    picking: tuple[bool, bool] = (True, True),
    runs: RunSpans | None = None,
    before: Comparison | None = None,
) -> Comparison | FailedPick | None:
    """Tokenize ``text`` with both choices (in a background job); None once stale; the pick
    under way (``picking``) whose tokenizer could not be built, if one could not. A side
    whose pattern does not cover the text is :class:`Uncovered`, a pane's choice that cannot
    be built any more :class:`Unbuilt`, and nothing is compared with either. ``runs`` keeps
    the text's spans under the run's tokenizer, which a step of it is split back from; a
    side of ``before`` (the comparison shown) with the very tokenizer and text is kept."""
    was = (before.a, before.b) if before is not None else (None, None)
    with ENCODE_LOCK:
        side_a = _side(a, text, is_stale, picking[0], runs, was[0])
        if isinstance(side_a, FailedPick):
            return side_a
        side_b = _side(b, text, is_stale, picking[1], runs, was[1]) if side_a is not None else None
    if isinstance(side_b, FailedPick):
        return side_b
    if side_a is None or side_b is None:
        return None
    if isinstance(side_a, Side) and isinstance(side_b, Side):
        diff = diff_cuts(side_a.cuts, side_b.cuts)
    else:
        diff = np.zeros(0, dtype=np.int64)
    return Comparison(text, side_a, side_b, diff, (a.key, b.key))


def _piece_end(text: str, size: int) -> int:
    """Where the first piece of ``text`` of about ``size`` characters ends: after its last
    line break within ``size``, else after the first one past it, else at the end (a
    paragraph is taken in whole)."""
    if len(text) <= size:
        return len(text)
    last = text.rfind("\n", 0, size)
    if last < 0:
        last = text.find("\n", size)
    return len(text) if last < 0 else last + 1


def _format(background: str) -> QTextCharFormat:
    """A token's background, and the text colour that reads on it in this scheme."""
    fmt = QTextCharFormat()
    fmt.setBackground(QColor(background))
    fmt.setForeground(QColor(colours().token_text))
    return fmt


def _with_mark(fmt: QTextCharFormat, mark: QTextCharFormat) -> QTextCharFormat:
    """``fmt`` (a token's background) with the boundary mark's colour, weight and underline."""
    marked = QTextCharFormat(fmt)
    marked.merge(mark)
    return marked


class ComparePane(QPlainTextEdit):
    """A read-only copy of the text, painted with one side's tokens (visible part only)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFont(monospace_font(11))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        # A Tab stop, so text to select and copy from the keyboard too; it shows the focus
        # by a caret and a frame (``theme``'s style sheet: a read-only view draws neither).
        self.setObjectName("comparePane")
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.comparison: Comparison | None = None
        self.side: Side | None = None
        self._formats = BlockFormats(self)
        ready_for_long_paragraphs(self)  # it shows the text to compare, one line or not
        # The marks on line breaks shown: (character offset, document position, background).
        self._breaks: list[tuple[int, int, QColor]] = []
        self._repaint = single_shot(self, 0, self.paint_visible)
        # The text still to take in (a piece each turn: _fill), and where to scroll then.
        self._rest = ""
        self._scroll_after = 0
        self._filler = single_shot(self, 0, self._fill)
        self.document().setUndoRedoEnabled(False)  # read-only: its pieces are no edits
        themed(self, ComparePane._restyle)
        self.verticalScrollBar().valueChanged.connect(self._schedule)

    def _restyle(self) -> None:
        """The token and mark formats in the scheme's colours (and a repaint with them)."""
        c = colours()
        self._shared = [_format(colour) for colour in c.shared]
        self._differ = [_format(colour) for colour in c.tokens]
        self._special = _format(c.special[0])
        mark = QTextCharFormat()
        mark.setForeground(QColor(c.diff_mark))
        mark.setFontWeight(700)
        mark.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        mark.setUnderlineColor(QColor(c.diff_mark))
        mark.setProperty(MARK_PROPERTY, True)
        self._mark = mark  # alone: a mark in a gap no token holds
        self._mark_colour = QColor(c.diff_mark)
        self._mark_font = QFont(self.font())
        self._mark_font.setBold(True)
        self._mark_font.setUnderline(True)
        # subtle: a marked character is painted with its token's own format plus the mark, as
        # a range of its own (``BlockFormats.show`` takes ranges that do not overlap).
        self._marked = {
            id(fmt): _with_mark(fmt, mark) for fmt in (*self._shared, *self._differ, self._special)
        }
        self._schedule()

    def show_side(self, comparison: Comparison, side: Side) -> None:
        if self.comparison is None or self.comparison.text != comparison.text:
            scroll = self.verticalScrollBar().value()
            self._set_text(comparison.text)
            self.verticalScrollBar().setValue(scroll)
            self._scroll_after = scroll
        self.comparison, self.side = comparison, side
        self._schedule()

    @property
    def filling(self) -> bool:
        """Part of the text is still to come (a piece a turn)."""
        return bool(self._rest)

    def clear_side(self) -> None:
        """Show the text uncoloured: its tokens are no one's any more."""
        self.comparison = self.side = None
        self._unpaint()
        self._schedule()

    def show_why_not(self, side: Uncovered | Unbuilt) -> None:
        """Say, in place of the text, why this side has no tokens (the next
        :meth:`show_side` puts the text back)."""
        self.comparison = self.side = None
        self._set_text(side.explained())
        self._schedule()

    def _set_text(self, text: str) -> None:
        # subtle: the marks are of the text before, and paintEvent draws them until the
        # debounced paint_visible runs: past a shorter text's end (Qt warned "setPosition:
        # Position out of range") or over the words saying why there are no tokens.
        self._unpaint()
        cut = _piece_end(text, FILL_CHARS)
        self.setPlainText(text[:cut])
        self._rest = text[cut:]
        if self._rest:
            self._filler.start()
        else:
            self._filler.stop()

    @Slot()
    def _fill(self) -> None:
        """Take in the next piece of the text (the document holds the text up to a line
        break, so a piece adds whole lines: a paragraph is never laid out twice)."""
        rest = self._rest
        cut = _piece_end(rest, FILL_CHARS)
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(rest[:cut])
        self._rest = rest[cut:]
        if self._rest:
            self._filler.start()
        else:
            self.verticalScrollBar().setValue(self._scroll_after)
        self._schedule()

    def _unpaint(self) -> None:
        """No token colours or line-break marks (of no one's tokens now)."""
        self._formats.clear()
        self._breaks = []
        self.viewport().update()

    @Slot()
    def _schedule(self, *args: object) -> None:
        self._repaint.start()

    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)  # type: ignore[arg-type]
        self._schedule()

    def visible_range(self) -> tuple[int, int]:
        """Document positions (UTF-16 units) on screen (``visible_units``). subtle: by lines,
        not blocks: a text of one 100,000-character line was one visible block, so its
        first 6,000 tokens (``MAX_PAINTED``) were painted at every scroll step and frame,
        and the screen past them never."""
        return visible_units(self)

    def _range(self, a: int, b: int, fmt: QTextCharFormat) -> tuple[int, int, QTextCharFormat]:
        assert self.side is not None
        spans = self.side.spans
        return spans.to_utf16(a), spans.to_utf16(b), fmt

    @Slot()
    def paint_visible(self) -> None:
        side, comparison = self.side, self.comparison
        if side is None or comparison is None:
            self._unpaint()
            return
        if self._rest:
            return  # painted once the text is all in (a token may reach past the piece)
        spans, diff = side.spans, comparison.diff
        tok = spans.tokenizer
        specials = {tok.special_id(s) for s in tok.special_tokens}
        start16, end16 = self.visible_range()
        first, last = spans.from_utf16(start16), spans.from_utf16(end16)
        lo, hi_all = spans.index_range(first, last)
        starts, ends, partial, ids = spans.starts, spans.ends, spans.partial, spans.ids
        ranges: list[tuple[int, int, QTextCharFormat]] = []
        breaks: list[tuple[int, int, QColor]] = []
        # subtle: text the pre-tokenizer drops (WordPiece's spaces, its line breaks) is in no
        # token, yet the other side may cut there: such a mark is drawn on its own, in the
        # gap between blocks, else a pane showed fewer marks than the header's count.
        done = first  # the text before is painted (tokens and gaps)
        i = lo
        # subtle: the cap counts what is painted, not tokens: Chinese under GPT-2 is three
        # tokens a character, and a maximized window's pane stopped colouring before its
        # last lines (an editor audit).
        while i < hi_all and len(ranges) < MAX_PAINTED:
            a, b, j = int(starts[i]), int(ends[i]), i + 1
            # Tokens sharing a character (a split multi-byte character) paint as one block.
            while partial[i] and j < hi_all and partial[j] and starts[j] < b:
                b = max(b, int(ends[j]))
                j += 1
            self._mark_span(done, a, None, ranges, breaks)
            k = int(np.searchsorted(diff, a, side="left"))
            differs = k < len(diff) and int(diff[k]) <= b
            if j == i + 1 and int(ids[i]) in specials:
                fmt = self._special
            else:
                # With nothing to compare (the other side cannot encode the text), no token
                # is painted as the same in both.
                fmt = (self._differ if differs or not comparison.both else self._shared)[i % 2]
            self._mark_span(a, b, fmt, ranges, breaks)
            done = max(done, b)
            i = j
        if i == hi_all:  # else capped (MAX_PAINTED): nothing past the last block painted
            self._mark_span(done, last, None, ranges, breaks)
        self._formats.show(ranges)
        self._breaks = breaks
        self.viewport().update()

    def _mark_span(
        self,
        a: int,
        b: int,
        fmt: QTextCharFormat | None,
        ranges: list[tuple[int, int, QTextCharFormat]],
        breaks: list[tuple[int, int, QColor]],
    ) -> None:
        """Characters ``[a, b)`` painted with ``fmt`` (a token block's) and cut around the
        marked ones inside (a mark at ``b`` is the next block's first character); ``fmt``
        None: a gap no token holds, where only the marks are painted, on the pane's own
        background."""
        if a >= b:  # most gaps: a BPE's tokens hold every character
            return
        assert self.side is not None and self.comparison is not None
        spans, diff, text = self.side.spans, self.comparison.diff, self.comparison.text
        k, k_end = np.searchsorted(diff, [a, b], side="left").tolist()
        marked = self._marked[id(fmt)] if fmt is not None else self._mark
        # A gap's "↵" has no box: no token's colour is there.
        background = QColor(Qt.GlobalColor.transparent) if fmt is None else fmt.background().color()
        for d in diff[k:k_end].tolist():
            if LINE_BREAK.match(text, d):
                # A paragraph's end paints no glyph, so no underline either: it gets a "↵" of
                # its own (paintEvent), else the header's count of boundaries would be more
                # than the marks seen. "\r\n" is one paragraph end, the "\n" a hidden
                # character at the next line's start: its mark goes where the "\r"'s does.
                crlf = text[d] == "\n" and d > 0 and text[d - 1] == "\r"
                unit = spans.to_utf16(d - 1 if crlf else d)
                breaks.append((d, unit, background))
                continue
            if a < d and fmt is not None:
                ranges.append(self._range(a, d, fmt))
            ranges.append(self._range(d, d + 1, marked))
            a = d + 1
        if a < b and fmt is not None:
            ranges.append(self._range(a, b, fmt))

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        draw_long_paragraphs(self, self._formats)
        super().paintEvent(event)
        if not self._breaks:
            return
        painter = QPainter(self.viewport())
        for _char, unit, background in self._breaks:
            draw_line_break(self, painter, unit, background, self._mark_colour, self._mark_font)
        painter.end()

    def painted(self) -> list[PaintedRange]:
        """The token colours and marks painted now: document ranges and their formats."""
        return self._formats.painted()

    def char_at(self, pos: QPoint) -> int | None:
        """The character (code point offset) under viewport point ``pos``."""
        return None if self.side is None else char_at(self, self.side.spans, pos)

    def tooltip_html(self, char: int) -> str | None:
        """This side's token(s) holding ``char``: id and bytes."""
        if self.side is None:
            return None
        spans = self.side.spans
        vocab = spans.tokenizer.vocab
        parts = []
        for k in spans.covering_shown(char):  # a "\r\n"'s two tokens, where it has two
            tid = int(spans.ids[k])
            shown = html.escape(token_text(vocab.get(tid, b"")))
            parts.append(f"<b>id {tid:,}</b> &nbsp;<code>{shown}</code>")
        if not parts:
            return None
        return f"<i>{html.escape(self.side.label)}</i><br>" + "<br>".join(parts)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt override
        return answer_token_tooltip(self, event) or super().viewportEvent(event)

    def marked_offsets(self) -> list[int]:
        """Character offsets of the boundary marks painted now, on line breaks too (for
        tests)."""
        if self.side is None:
            return []
        spans = self.side.spans
        return sorted(
            [spans.from_utf16(p.start) for p in self.painted() if p.format.property(MARK_PROPERTY)]
            + [char for char, _unit, _background in self._breaks]
        )


def _legend_chip(kind: str, text: str) -> QLabel:
    """A legend entry drawn as the panes draw ``kind``: "shared" and "differ" tokens, or the
    "mark" of a boundary only one tokenizer has."""

    def restyle(label: QLabel) -> None:
        c = colours()
        if kind == "mark":
            style = f"color:{c.diff_mark}; font-weight:bold; text-decoration:underline;"
        else:
            background = c.shared[0] if kind == "shared" else c.tokens[0]
            style = (
                f"background:{background}; color:{c.token_text}; padding:1px 6px; "
                "border-radius:3px;"
            )
        label.setStyleSheet(style)

    return themed(QLabel(text), restyle)


NOTES_MARK = "†"  # beside a pane's line: its tokenizer has notes (in the tooltip)


class CompareView(LazyPage):
    """Text box, two tokenizer choices with their numbers, two synchronized panes."""

    compared = Signal(object)  # Comparison now shown
    failure = ("Could not compare", "Compare")

    def __init__(self, hub: AppModel, parent: QWidget | None = None) -> None:
        super().__init__("bpe-compare", hub, parent)
        self.comparison: Comparison | None = None
        # The text's spans under the run's tokenizer, which each step is split back from.
        self._runs = RunSpans()
        self._step_job = False  # the job under way only moves the run's step

        self.input = KeptTextEdit()  # its text() is the text given, "\r\n" and all
        self.input.setAccessibleName("Text to compare")
        self.input.setFont(monospace_font(11))
        self.input.setPlaceholderText("Type or paste text to compare…")
        self.input.setTabChangesFocus(True)  # a keyboard user can leave it; paste keeps tabs
        self.input.set_text(DEFAULT_TEXT)
        self.choices = (
            TokenizerPicker(hub, pane=COMPARE_LEFT, default=preset_key("gpt2")),
            TokenizerPicker(hub, pane=COMPARE_RIGHT, default=preset_key("o200k_base")),
        )
        self.panes = (ComparePane(), ComparePane())
        for side, pane in zip(("Left", "Right"), self.panes):
            pane.setAccessibleName(f"{side} tokenizer's tokens of the text")
        # The counts have a row of their own under the pick, the pane's width: beside it they
        # were cut after bytes/token in a 1280-pixel window (an audit). Still cut with "…"
        # in a narrower one, whole in the tooltip.
        self.stats = (steady_label(QLabel(" "), "0" * 24), steady_label(QLabel(" "), "0" * 24))
        for stats in self.stats:
            stats.setTextFormat(Qt.TextFormat.PlainText)  # tokenizer names may hold "<"
        # A mark beside the counts where the tokenizer has notes (Tokenizer.notes), which
        # its tooltip holds, as the editor's line does: the line itself has no room for them.
        self.marks = (QLabel(NOTES_MARK), QLabel(NOTES_MARK))
        for mark in self.marks:
            mark.hide()
        self.status = muted(steady_label(QLabel(" "), "0" * 50))

        sides = QSplitter(Qt.Orientation.Horizontal)
        for choice, stats, mark, pane in zip(self.choices, self.stats, self.marks, self.panes):
            column = QWidget()
            layout = QVBoxLayout(column)
            layout.setContentsMargins(0, 0, 0, 0)
            top = QHBoxLayout()
            top.addWidget(choice)
            top.addWidget(mark)
            top.addStretch(1)
            layout.addLayout(top)
            layout.addWidget(stats)
            layout.addWidget(pane, 1)
            sides.addWidget(column)
            self._watch(choice)
        sides.setChildrenCollapsible(False)
        sides.setHandleWidth(8)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.input)
        body.addWidget(sides)
        body.setSizes([150, 600])
        body.setChildrenCollapsible(False)
        body.setHandleWidth(8)

        header = QHBoxLayout()
        header.addWidget(title_label("Compare tokenizers"))
        header.addWidget(self.status, 1)
        legend = QHBoxLayout()
        legend.addWidget(_legend_chip("shared", "same tokens in both"))
        legend.addWidget(_legend_chip("differ", "tokens that differ"))
        legend.addWidget(_legend_chip("mark", "x"))
        legend.addWidget(QLabel("first character after a boundary only one of them has"))
        legend.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(header)
        layout.addWidget(body, 1)
        layout.addLayout(legend)

        self._syncing = False
        for source, target in ((0, 1), (1, 0)):
            bar = self.panes[source].verticalScrollBar()
            bar.valueChanged.connect(lambda v, s=source, t=target: self._sync_scroll(s, t))
        self.input.textChanged.connect(self.request)

    @property
    def busy(self) -> bool:
        """A result is due, being computed or still going into a pane."""
        return super().busy or any(pane.filling for pane in self.panes)

    # ------------------------------------------------------------ requests
    def set_text(self, text: str) -> None:
        """Compare ``text`` exactly, line breaks included (``KeptTextEdit``)."""
        self.input.set_text(text)

    def text(self) -> str:
        """The text compared: as given, with any edits."""
        return self.input.text()

    def _submit(self, throttle: bool = False) -> None:
        picked = self._picked()
        if len(picked) != 2:
            return
        a, b = picked
        self._dirty = False
        text = self.text()
        self.status.setText(f"Tokenizing with {a.label} and {b.label}…")
        shown = self.comparison
        if shown is not None:
            # A pane picked anew keeps the tokens of the one before until its own come: its
            # line says whose they are, first (a long label at the end was cut to "…").
            for stats, side, key, choice in zip(self.stats, (shown.a, shown.b), shown.keys, (a, b)):
                if key != choice.key:
                    stats.setText(f"Tokenizing with {choice.label}… ({side.label}'s until then)")
        self._submitting((a, b))
        picking = (self._picking(a), self._picking(b))
        runs, before = self._runs, self.comparison
        self._step_job = throttle
        self._job.submit(
            lambda is_stale: compare(text, a, b, is_stale, picking, runs, before),
            throttle=throttle,
        )

    def _on_step(self, step: int) -> None:
        if not self._follow_step():
            super()._on_step(step)

    def _follow_step(self) -> bool:
        """Show the timeline's step at once, on the GUI thread, when a pane shows the run's
        tokenizer and its spans at the step are split back from those kept for the text
        (``RunSpans.ready_at``): a replay's every frame shows its step. False: nothing to
        follow, or the step is asked for as usual (a job)."""
        shown = self.comparison
        if shown is None or not self.isVisible() or self._timer.isActive():
            return False
        if self._job.busy and not self._step_job:
            return False  # a new text or pick under way: the step comes with it
        choices = [picker.current() for picker in self.choices]
        sides: list[Side | Uncovered | Unbuilt] = []
        for choice, side, key in zip(choices, (shown.a, shown.b), shown.keys):
            if choice is None or choice.key != key or self._picking(choice):
                return False
            if not isinstance(side, Side) or side.run is None:
                sides.append(side)
                continue
            if choice.run is not side.run:
                return False  # another run's tokenizer (or the run's rebuilt): a job
            spans = self._runs.ready_at(side.run, shown.text, choice.step)
            if spans is None:
                return False
            sides.append(Side.of(choice.label, spans, side.notes, side.run))
        if all(new is old for new, old in zip(sides, (shown.a, shown.b))):
            return False  # no pane follows the run's step
        a, b = sides
        diff = shown.diff
        if isinstance(a, Side) and isinstance(b, Side):
            diff = diff_cuts(a.cuts, b.cuts)
        self._job.cancel()  # a step's job under way is older than this
        self._step_timer.stop()
        self._dirty = False
        self._show(Comparison(shown.text, a, b, diff, shown.keys))
        return True

    # ------------------------------------------------------------- results
    @Slot(object)
    def _on_done(self, comparison: object) -> None:
        if isinstance(comparison, FailedPick):
            self._pick_failed(comparison)
            return
        assert isinstance(comparison, Comparison)  # what this page's job returns
        # subtle: the job of the latest request is the only one delivered (jobs.LatestJob),
        # and a new text or pick makes a new request: this is of the text and picks shown.
        self._picks_shown()
        self._show(comparison)

    def _show(self, comparison: Comparison) -> None:
        self.comparison = comparison
        a, b = comparison.a, comparison.b
        # A pane's choice that cannot be built any more is a failure of that pane: the dialog
        # only if the user just picked it there, else the status line and the pane say it.
        unbuilt = [s for s in (a, b) if isinstance(s, Unbuilt)]
        announce = [s for s in unbuilt if s.pane in self._announce]
        self._announce.clear()
        for pane, stats, mark, side in zip(self.panes, self.stats, self.marks, (a, b)):
            if isinstance(side, Side):
                pane.show_side(comparison, side)
            else:
                pane.show_why_not(side)
            stats.setText(side.summary())
            self._show_notes(stats, mark, side.notes if isinstance(side, Side) else ())
        n = len(comparison.diff)
        if isinstance(a, Side) and isinstance(b, Side):
            more = a.tokens - b.tokens
            self.status.setText(
                f"{n:,} boundar{'y differs' if n == 1 else 'ies differ'} · "
                f"{more:+,} token{'' if abs(more) == 1 else 's'}: {a.label} minus {b.label}"
            )
        elif unbuilt:
            shown = [s.label for s in (a, b) if isinstance(s, Side)]
            # The other pane's tokens are on screen: "could not compare" read as if none were.
            lead = f"{shown[0]} shown alone" if shown else self.failure[0]
            self.status.setText(f"{lead}: {unbuilt[0].what}")
        else:
            cannot = " and ".join(s.label for s in (a, b) if isinstance(s, Uncovered))
            self.status.setText(f"{cannot} cannot encode this text: nothing to compare")
        if announce:
            self.error.emit(self.failure[1], announce[0].what)
        self.compared.emit(comparison)

    def _say_failed(self, message: str, announce: bool) -> None:
        super()._say_failed(message, announce)
        # The job that said "Tokenizing with …" over a pane's counts ended without a result:
        # the counts shown are again of the tokenizers shown.
        if self.comparison is not None:
            for stats, side in zip(self.stats, (self.comparison.a, self.comparison.b)):
                stats.setText(side.summary())

    @staticmethod
    def _show_notes(stats: QWidget, mark: QLabel, notes: tuple[str, ...]) -> None:
        """The notes in the tooltips of the line and its mark; the mark only where any."""
        tip = "\n".join(notes)
        stats.setToolTip(tip)
        mark.setToolTip(tip)
        mark.setVisible(bool(notes))

    def _cannot_build(self, pane: str, key: str) -> str | None:
        if self.comparison is None:
            return None
        sides = (self.comparison.a, self.comparison.b)
        return next(
            (s.what for s in sides if isinstance(s, Unbuilt) and (s.pane, s.key) == (pane, key)),
            None,
        )

    def _forget_result(self) -> None:
        if self.comparison is None:
            return
        self.comparison = None
        for pane, stats, mark in zip(self.panes, self.stats, self.marks):
            pane.clear_side()
            stats.setText(" ")
            self._show_notes(stats, mark, ())
        self.status.setText("The run's tokenizer is gone")

    def _sync_scroll(self, source: int, target: int) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            src, dst = (
                self.panes[source].verticalScrollBar(),
                self.panes[target].verticalScrollBar(),
            )
            if src.maximum() == dst.maximum():
                dst.setValue(src.value())
            elif src.maximum() > 0:
                dst.setValue(round(src.value() * dst.maximum() / src.maximum()))
        finally:
            self._syncing = False

    def shutdown(self) -> None:
        self._timer.stop()
        self._job.shutdown()
