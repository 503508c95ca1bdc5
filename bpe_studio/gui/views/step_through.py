"""Step-through encoding: how the rank-based encoder turns one pre-token into ids.

What it does: for the piece under the editor cursor (:meth:`StepThroughPanel.show_piece`: a
pre-token, or a special or added token, which is one id and never merged) or text typed into
the panel (cut into pre-tokens; a menu picks one when there are several, listing at most
``MAX_MENU`` around the one replayed and saying so), a job
thread replays the encoder (``core.explain.encode_steps.encode_steps``) with the inspector's step
tokenizer (``tokenizer_recipes.step_recipe``: the picked tokenizer, else the run's cut to the
timeline's step, which is the editor's). A :class:`~.chips.ChipStrip` draws one step. Back, Forward,
a slider and Play (a timer) move through the steps; a list names every merge applied. The last step
is the encoder's output for the piece; under ``ignore_merges`` it may be the piece found whole in
the vocabulary, the only step when the merges would not make that token.
What it leaves out: finding the pre-token under the cursor (the editor's ``piece_at_cursor``),
pre-tokenization rules (``core.explain.encode_steps.pretokens``), drawing a step (``chips``).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QFontMetrics, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QScrollArea,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from ...core.encode.foreign import AnyTokenizer, ForeignTokenizer
from ...core.explain.encode_steps import EncodeStep, encode_steps, marked_pretokens
from ...core.text.display import readable_token
from ...core.text.surrogates import replace_surrogates
from ..jobs.latest import LatestJob
from ..model.app_model import AppModel
from ..model.tokenizer_cache import TokenizerCache
from ..model.tokenizer_recipes import step_recipe
from ..responsiveness.debounce import single_shot
from .chips import ChipStrip
from .common import counted, monospace_font, steady_label, token_text
from .layouts import column, vertical_split
from .theme import colours, muted, themed

MAX_PIECE_BYTES = 1024  # steps cost the square of the length; longer pieces are not replayed
PLAY_MS = 700  # one step per tick while playing
REFRESH_MS = 150  # a new step or tokenizer is replayed after this pause (500 while training)
MAX_LIST = 2000  # steps named in the list
MAX_MENU = 500  # pieces the menu lists at a time, around the one replayed


@dataclass(frozen=True, slots=True)
class Walkthrough:
    """The job's answer: the text's pieces, the one replayed, its steps and token bytes."""

    text: str
    pieces: tuple[str, ...]
    index: int
    steps: tuple[EncodeStep, ...]
    tokens: Mapping[int, bytes]  # bytes of every id in the steps
    special_ids: frozenset[int]
    problem: str | None = None
    is_token: bool = False  # the piece is a special or added token cut out of the text

    @property
    def piece(self) -> str:
        return self.pieces[self.index] if self.pieces else ""


_NO_TEXT = "Type a word above, or click into the editor's text."


def walk(tok: AnyTokenizer, text: str, index: int) -> Walkthrough:
    """Cut ``text`` into pieces and replay the encoder on piece ``index`` (job thread)."""
    specials = frozenset(tok.special_id(s) for s in tok.special_tokens)
    if isinstance(tok, ForeignTokenizer):
        problem = tok.not_explained("Step-through (the merges, one by one)")
        return Walkthrough(text, (), 0, (), {}, specials, problem)
    marked = marked_pretokens(tok, text)
    pieces = tuple(piece for piece, _ in marked)
    if not pieces:
        return Walkthrough(text, (), 0, (), {}, specials)
    index = max(0, min(index, len(pieces) - 1))
    size = len(pieces[index].encode("utf-8", "surrogatepass"))
    if size > MAX_PIECE_BYTES:
        problem = f"This pre-token is {size:,} bytes long; step-through replays up to "
        problem += f"{MAX_PIECE_BYTES:,}."
        return Walkthrough(text, pieces, index, (), {}, specials, problem)
    piece, is_token = marked[index]
    # An ordinary piece that spells an added token is merged as bytes, as encoding does.
    steps = tuple(
        encode_steps(tok, piece if is_token else replace_surrogates(piece).encode("utf-8"))
    )
    ids = {i for step in steps for i in step.tokens}
    tokens = {i: tok.vocab[i] for i in ids}
    return Walkthrough(text, pieces, index, steps, tokens, specials, is_token=is_token)


OTHER_PIECES = (
    "Pick one near an end to list its neighbours, type the piece, or click it in the editor."
)


def menu_window(n: int, index: int) -> tuple[int, int]:
    """The pieces ``[lo, hi)`` the menu lists of ``n``: ``MAX_MENU`` around ``index``."""
    lo = max(0, min(index - MAX_MENU // 2, n - MAX_MENU))
    return lo, min(n, lo + MAX_MENU)


def _a(word: str) -> str:
    return f"An {word}" if word[0] in "aeiou" else f"A {word}"


def _token_kind(w: Walkthrough) -> str:
    """ "special" or "added" (a tokenizer.json's token that is not special), for a piece
    that is one of them."""
    return "special" if w.steps[0].tokens[0] in w.special_ids else "added"


class StepThroughPanel(QWidget):
    """The "Step-through" tab."""

    def __init__(self, hub: AppModel, cache: TokenizerCache, parent: QWidget | None = None):
        super().__init__(parent)
        self.hub = hub
        self.cache = cache
        self.text = ""
        self.piece_index = 0
        self._from_editor = False  # the text is the piece under the editor cursor
        self.walkthrough: Walkthrough | None = None
        self.index = 0  # the step shown
        self._stale = False
        self._job = LatestJob("bpe-step-through", self)
        self._job.done.connect(self._on_walked)
        self._job.failed.connect(self._on_failed)
        self._refresh = single_shot(self, 0, self._on_refresh_timer)  # started with its delay
        self._play = QTimer(self)
        self._play.setInterval(PLAY_MS)
        self._play.timeout.connect(self._on_play_tick)

        self.piece_edit = QLineEdit()
        self.piece_edit.setAccessibleName("Text to step through")
        self.piece_edit.setPlaceholderText("Type a word, or put the editor cursor in one")
        self.piece_edit.setFont(monospace_font(11))
        self.piece_edit.textEdited.connect(self._on_typed)
        self.piece_menu = QComboBox()
        self.piece_menu.setToolTip("The text holds several pre-tokens: pick the one to replay")
        self.piece_menu.setFont(monospace_font())
        self.piece_menu.activated.connect(self._on_piece_picked)
        self.piece_menu.hide()
        # Wrapped: past MAX_MENU pieces it says which the menu lists, a long line.
        self.origin = steady_label(muted(QLabel("")), wrap=True)

        self.strip = ChipStrip()
        self.strip_scroll = QScrollArea()
        self.strip_scroll.setWidget(self.strip)
        self.strip_scroll.setWidgetResizable(True)
        self.strip_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.strip_scroll.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self._nothing: str | None = None  # the muted hint the message shows, if any
        themed(self, StepThroughPanel._restyle)
        # One row of chips whole (more rows scroll): the panel shares a small screen.
        frame = 2 * self.strip_scroll.frameWidth()
        self.strip_scroll.setMinimumHeight(int(self.strip.row_height()) + frame + 1)
        # Steady labels ask for the height of their wrapped text: the layouts and the
        # splitter above read only least heights, and gave a plain label's second line to
        # the chips, over which it was drawn.
        self.message = steady_label(QLabel(""), wrap=True)
        self.message.setTextFormat(Qt.TextFormat.RichText)

        self.back_button = QPushButton("◀ Back")
        self.play_button = QPushButton("▶ Play")
        self.forward_button = QPushButton("Forward ▶")
        self.back_button.clicked.connect(self.back)
        self.forward_button.clicked.connect(self.forward)
        self.play_button.clicked.connect(self.toggle_play)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setAccessibleName("Step of the encoding")
        self.slider.valueChanged.connect(self.show_step)
        self.counter = QLabel("")
        self.counter.setMinimumWidth(self.counter.fontMetrics().horizontalAdvance("Step 000/000"))
        self.merges_list = QListWidget()
        self.merges_list.setAccessibleName("Merges applied, in order")
        self.merges_list.setFont(monospace_font())
        self.merges_list.currentRowChanged.connect(self._on_list_row)
        # Three rows at least (it scrolls): the chips above it need the room more.
        rows = QFontMetrics(self.merges_list.font()).lineSpacing() * 3
        self.merges_list.setMinimumHeight(rows + 2 * self.merges_list.frameWidth())

        entry = QHBoxLayout()
        entry.addWidget(QLabel("Piece"))
        entry.addWidget(self.piece_edit, 1)
        entry.addWidget(self.piece_menu)
        # The slider has a row of its own: beside three buttons in a narrow pane it was a
        # handle wide.
        slide = QHBoxLayout()
        slide.addWidget(self.slider, 1)
        slide.addWidget(self.counter)
        nav = QHBoxLayout()
        for w in (self.back_button, self.play_button, self.forward_button):
            nav.addWidget(w)
        nav.addStretch(1)
        upper = QWidget()
        up = QVBoxLayout(upper)
        up.setContentsMargins(0, 0, 0, 0)
        up.addWidget(self.strip_scroll, 1)
        up.addWidget(self.message)
        up.addLayout(slide)
        up.addLayout(nav)
        legend = QLabel(
            "Numbers under a pair: the rank of its merge. The lowest (orange) is merged next; "
            "the green token was just made."
        )
        muted(legend)
        split = vertical_split(upper, self.merges_list, (3, 1), (300, 100))
        column(
            self,
            entry,
            self.origin,
            (split, 1),
            steady_label(legend, wrap=True),
            margins=(4, 4, 4, 0),
        )

        hub.step_changed.connect(self._on_state_changed)
        hub.tokenizer_changed.connect(self._on_state_changed)
        hub.reset.connect(self._on_state_changed)
        self._show_nothing("Type a word above, or click into the editor's text.")

    def _restyle(self) -> None:
        """The strip's background in the scheme's colours (the chips read theirs as they
        paint), and a hint shown in the muted grey written again in the new one."""
        background = colours().plot_background
        self.strip_scroll.setStyleSheet(f"QScrollArea {{ background: {background}; }}")
        self.strip.setStyleSheet(f"background: {background};")
        if self._nothing is not None:
            self._show_message(self._nothing)

    # ------------------------------------------------------------ inputs

    def show_piece(self, piece: str) -> None:
        """Replay the piece under the editor cursor (a pre-token, or a special or added
        token)."""
        self.piece_edit.setText(piece)
        self._from_editor = True
        self.origin.setText("The piece under the editor cursor")
        self._set_text(piece)

    @Slot(str)
    def _on_typed(self, text: str) -> None:
        self._from_editor = False
        self.origin.setText("Typed here")
        self._set_text(text)

    def _set_text(self, text: str) -> None:
        self.text, self.piece_index = text, 0
        self.stop()
        self.refresh(keep_step=False)

    @Slot(int)
    def _on_piece_picked(self, row: int) -> None:
        index = self.piece_menu.itemData(row)
        if index is None:  # the line saying how many pieces the menu leaves out
            return
        self.piece_index = index
        self.stop()
        self.refresh(keep_step=False)

    @Slot()
    def _on_state_changed(self, *args: object) -> None:
        # A new step or tokenizer: replay again after a pause. While training the step moves
        # every frame, so the timer is not restarted (it would never fire) and runs longer.
        if not self.text or self._refresh.isActive():
            return
        training = self.hub.state.phase.training
        self._refresh.start(500 if training else REFRESH_MS)

    @Slot()
    def _on_refresh_timer(self) -> None:
        if self.isVisible() or not self.hub.state.phase.training:
            self.refresh()
        else:
            self._stale = True

    def refresh_if_stale(self) -> None:
        if self._stale:
            self.refresh()

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.refresh_if_stale()

    def refresh(self, keep_step: bool = True) -> None:
        """Replay the current piece with the current tokenizer (in the job thread)."""
        self._stale = False
        self._keep_step = keep_step
        recipe = step_recipe(self.hub.state)
        if recipe is None:
            self._job.cancel()
            self._show_nothing("No tokenizer yet: train one or load one.")
            return
        if not self.text:
            self._show_nothing(_NO_TEXT)
            # Replayed all the same (nothing to replay): a tokenizer the step-through does not
            # apply to says so (an audit: the editor gives such a tokenizer's cursor no piece,
            # and the panel asked for a click into the text the user had just clicked).
        text, index, cache = self.text, self.piece_index, self.cache

        def job(is_stale: Callable[[], bool]) -> Walkthrough:
            return walk(recipe.get(cache), text, index)

        self._job.submit(job)

    @property
    def busy(self) -> bool:
        return self._job.busy or self._refresh.isActive()

    # ---------------------------------------------------------- stepping
    @property
    def last(self) -> int:
        w = self.walkthrough
        return len(w.steps) - 1 if w is not None and w.steps else 0

    @Slot()
    def back(self) -> None:
        self.show_step(self.index - 1)

    @Slot()
    def forward(self) -> None:
        self.show_step(self.index + 1)

    @Slot()
    def toggle_play(self) -> None:
        if self._play.isActive():
            self.stop()
            return
        if self.walkthrough is None or not self.walkthrough.steps:
            return
        if self.index >= self.last:
            self.show_step(0)
        self._play.start()
        self.play_button.setText("❚❚ Pause")

    def set_play_interval(self, ms: int) -> None:
        self._play.setInterval(ms)

    def stop(self) -> None:
        self._play.stop()
        self.play_button.setText("▶ Play")

    @property
    def playing(self) -> bool:
        return self._play.isActive()

    @Slot()
    def _on_play_tick(self) -> None:
        self.forward()
        if self.index >= self.last:
            self.stop()

    @Slot(int)
    def _on_list_row(self, row: int) -> None:
        if row >= 0 and row != self.index:
            self.show_step(row)

    @Slot(int)
    def show_step(self, index: int) -> None:
        w = self.walkthrough
        if w is None or not w.steps:
            return
        index = max(0, min(index, self.last))
        self.index = index
        step = w.steps[index]
        made = w.steps[index - 1].chosen if index else None
        self.strip.set_step(step, made, w.tokens, w.special_ids)
        for widget, value in ((self.slider, index), (self.merges_list, index)):
            widget.blockSignals(True)
            if widget is self.slider:
                self.slider.setValue(value)
            elif value < self.merges_list.count():
                self.merges_list.setCurrentRow(value)
            widget.blockSignals(False)
        self.counter.setText(f"Step {index + 1}/{len(w.steps)}")
        self.back_button.setEnabled(index > 0)
        self.forward_button.setEnabled(index < self.last)
        self._nothing = None
        self.message.setText(self._describe(w, index))
        if step.chosen is not None:
            self._scroll_to_pair(step.chosen)

    def _scroll_to_pair(self, position: int) -> None:
        """Scroll the chips so that the pair merged next shows whole: both chips and the
        badge. Scrolled to the top of its row, so no chip of that row is cut at the top."""
        box = self.strip.pair_rect(position)
        bar = self.strip_scroll.verticalScrollBar()
        shown = self.strip_scroll.viewport().height()
        if box.top() < bar.value() or box.bottom() > bar.value() + shown:
            bar.setValue(int(box.top()))

    def _describe(self, w: Walkthrough, index: int) -> str:
        step = w.steps[index]

        def tok(i: int) -> str:
            text = readable_token(w.tokens[i]).replace("&", "&amp;").replace("<", "&lt;")
            return f"<code>{text}</code>"

        if step.chosen is None:
            ids = ", ".join(f"{i:,}" for i in step.tokens)
            n = len(step.tokens)
            if w.is_token:
                return (
                    f"<b>Done.</b> {_a(_token_kind(w))} token, one id [{ids}]: cut out of the "
                    "text before pre-tokenization, never merged."
                )
            if step.whole and index == 0:
                return (
                    f"<b>Done.</b> Found whole in the vocabulary: the encoder gives this piece "
                    f"its one token [{ids}] without merging (the file sets ignore_merges)."
                )
            if step.whole:
                return (
                    f"<b>Done.</b> No adjacent pair has a merge: {counted(n, 'token')} [{ids}], "
                    "what the encoder gives for this piece. It finds the piece whole in the "
                    "vocabulary (the file sets ignore_merges); the merges reach the same token."
                )
            return (
                f"<b>Done.</b> No adjacent pair has a merge: {counted(n, 'token')} "
                f"[{ids}], what the encoder gives for this piece."
            )
        a, b = step.tokens[step.chosen], step.tokens[step.chosen + 1]
        made = w.steps[index + 1].tokens[step.chosen]
        rank = dict(step.candidates)[step.chosen]
        n = len(step.candidates)
        return (
            f"{counted(n, 'pair')} can merge; the lowest rank is <b>{rank:,}</b>: "
            f"{tok(a)} + {tok(b)} → {tok(made)} (id {made:,})"
        )

    # ------------------------------------------------------------ output
    @Slot(object)
    def _on_walked(self, w: Walkthrough) -> None:
        if w.text != self.text:
            return
        if not w.text:  # nothing replayed: only a tokenizer it does not apply to has news
            self._show_nothing(w.problem or _NO_TEXT)
            return
        keep = self._keep_step and self.walkthrough is not None
        old = self.index
        self.walkthrough = w
        self._fill_menu(w)
        self._say_origin(w)
        if w.problem or not w.steps:
            self._show_nothing(w.problem or "Nothing to encode.")
            self.walkthrough = w
            return
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(w.steps) - 1)
        self.slider.blockSignals(False)
        self.merges_list.blockSignals(True)
        self.merges_list.clear()
        for i, step in enumerate(w.steps[:MAX_LIST]):
            self.merges_list.addItem(self._list_line(w, i, step))
        self.merges_list.blockSignals(False)
        for widget in (self.back_button, self.forward_button, self.play_button, self.slider):
            widget.setEnabled(True)
        self.show_step(min(old, self.last) if keep else 0)

    def _list_line(self, w: Walkthrough, i: int, step: EncodeStep) -> str:
        if step.chosen is None:
            found = ", found whole in the vocabulary" if step.whole else ""
            if w.is_token:
                found = f" ({_token_kind(w)} token)"
            return f"{i + 1:>3}. done: {counted(len(step.tokens), 'token')}{found}"
        a, b = step.tokens[step.chosen], step.tokens[step.chosen + 1]
        rank = dict(step.candidates)[step.chosen]
        show = readable_token
        return f"{i + 1:>3}. {show(w.tokens[a])} + {show(w.tokens[b])}   (rank {rank:,})"

    def _fill_menu(self, w: Walkthrough) -> None:
        """The pieces, each with its index as data; past ``MAX_MENU`` those around the one
        replayed (picking one near an end lists its neighbours), and a line saying so."""
        menu = self.piece_menu
        menu.blockSignals(True)
        menu.clear()
        lo, hi = menu_window(len(w.pieces), w.index)
        for i in range(lo, hi):
            menu.addItem(f"{i + 1}: {token_text(w.pieces[i].encode('utf-8', 'replace'))}", i)
        tip = "The text holds several pre-tokens: pick the one to replay"
        if hi - lo < len(w.pieces):
            # Short: the menu is as wide as its longest line; the label above says the rest.
            menu.addItem(f"(listed: {lo + 1:,}–{hi:,} of {len(w.pieces):,})")
            model = menu.model()
            assert isinstance(model, QStandardItemModel)
            model.item(menu.count() - 1).setEnabled(False)
            tip += f". It lists {lo + 1:,}–{hi:,} of {len(w.pieces):,}. {OTHER_PIECES}"
        menu.setToolTip(tip)
        menu.setCurrentIndex(w.index - lo)
        menu.blockSignals(False)
        menu.setVisible(len(w.pieces) > 1)

    def _say_origin(self, w: Walkthrough) -> None:
        """Where the text came from and, for a text of many pieces, which the menu lists."""
        if self._from_editor:
            kind = f"{_token_kind(w)} token" if w.is_token and w.steps else "pre-token"
            text = f"The {kind} under the editor cursor"
        else:
            text = "Typed here"
        n = len(w.pieces)
        if n > MAX_MENU:
            lo, hi = menu_window(n, w.index)
            text += f": {n:,} pieces; the menu lists {lo + 1:,}–{hi:,}. {OTHER_PIECES}"
        self.origin.setText(text)

    def _show_nothing(self, message: str) -> None:
        self.walkthrough = None
        self.index = 0
        self.stop()
        self.strip.set_step(None, None, {}, frozenset())
        self.merges_list.clear()
        self.counter.setText("")
        self._show_message(message)
        for widget in (self.back_button, self.forward_button, self.play_button, self.slider):
            widget.setEnabled(False)

    def _show_message(self, message: str) -> None:
        """``message`` (plain text) in the scheme's muted grey; kept until a walkthrough shows,
        so that a change of scheme writes it again in the new grey."""
        self._nothing = message
        self.message.setText(
            f"<span style='color:{colours().muted}'>{html.escape(message, quote=False)}</span>"
        )

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self._show_nothing(f"Could not replay this piece: {message}")

    def shutdown(self) -> None:
        self.stop()
        self._refresh.stop()
        self._job.shutdown()
