"""The inputs of a training run that need more than a spin box: pattern, special tokens, checks.

What it does: :class:`PatternChoice` picks the pre-tokenization pattern (GPT-2's, cl100k's,
o200k's, or a custom regex checked as it is typed, with core's own error message);
:class:`SpecialTokensEdit` takes special tokens one per line, so a token may hold spaces
(``<|im start|>``), and refuses one that is a single byte in the trainer's words
(:func:`special_token_problem`); :func:`special_ids_text` says which id each one gets. Every
problem is one line the panel shows (the vocabulary size's is the core's rule,
``RunSettings.vocab_problem``), and Train stays disabled while there is one.
What it leaves out: the panel's layout and the buttons (``controls``).
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QSizePolicy,
    QWidget,
)

from ...core import pretokenizer
from ...core.pretokenization.specials import refuse_single_bytes
from ...core.train.vocab import BYTE_TOKENS
from ..model.errors import describe_error
from .theme import colours

# The choices: label, pattern name (None: the custom regex typed beside it).
PATTERN_CHOICES: tuple[tuple[str, str | None], ...] = (
    ("GPT-2", "gpt2"),
    ("GPT-4 (cl100k)", "cl100k"),
    ("GPT-4o (o200k)", "o200k"),
    ("Custom regex…", None),
)


def problem_style() -> str:
    """The red border of an input that cannot be trained, in the scheme's error colour."""
    return f"border: 1px solid {colours().error}; border-radius: 3px"


def special_token_problem(token: str) -> str | None:
    """Why ``token`` cannot be a special token of a trained vocabulary, as the trainer says
    it (a single byte: ``specials.refuse_single_bytes``), or None."""
    try:
        refuse_single_bytes([token])
    except ValueError as error:
        return describe_error(error)
    return None


def special_ids_text(special_tokens: tuple[str, ...]) -> str:
    """The ids a trained vocabulary gives the special tokens (they follow the 256 bytes)."""
    if not special_tokens:
        return "No special tokens"
    return "\n".join(f"{tok} → {BYTE_TOKENS + i}" for i, tok in enumerate(special_tokens))


class SpecialTokensEdit(QPlainTextEdit):
    """Special tokens, one per line: spaces inside a token are part of it. Blank lines and the
    spaces around a line are dropped (a token cannot begin or end with a space here); a repeated
    token counts once, as in the core."""

    HELP = (
        "Special tokens, one per line (may be empty). They get the ids after the 256 bytes, "
        "in this order, and are never split or merged."
    )

    LINES_SHOWN = 2  # the edit's height, in lines; more scroll

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlainText(text)
        self.setTabChangesFocus(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        lines = self.fontMetrics().lineSpacing()
        self.setFixedHeight(self.LINES_SHOWN * lines + 12)
        self.setToolTip(self.HELP)

    def text(self) -> str:
        # subtle: toPlainText turns U+2028 into a line break and a no-break space into a
        # space; the document's raw text keeps both, its lines ended by U+2029.
        return "\n".join(self.document().toRawText().split("\u2029"))

    def setText(self, text: str) -> None:  # noqa: N802 - QLineEdit's name, for callers
        self.setPlainText(text)

    def lines(self) -> list[str]:
        """The edit's lines as typed (``text``), each without the spaces around it. subtle:
        split at line breaks only; ``str.splitlines`` also splits at NEL, U+2028, \\v, \\f and
        \\x1c-\\x1e, which made two special tokens of one holding them, where the command
        line takes one."""
        return [line.strip(" \t") for line in self.text().split("\n")]

    def first_line_shown(self) -> int:
        """The line at the top of the edit (it scrolls by whole lines: no wrapping)."""
        return self.verticalScrollBar().value()

    def tokens(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(line for line in self.lines() if line))

    def problem(self) -> str | None:
        """Why the first token that cannot be trained cannot (the trainer's words), or None."""
        return next(filter(None, map(special_token_problem, self.tokens())), None)


class PatternChoice(QWidget):
    """A named pattern, or a custom regex validated as it is typed (red border and core's
    message while it does not compile)."""

    changed = Signal()  # the choice or the regex changed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = QComboBox()
        for label, name in PATTERN_CHOICES:
            self.combo.addItem(label, name)
        self.combo.setToolTip("How the corpus is split into pre-tokens before merging")
        self.regex_edit = edit_beside(
            self, self.combo, r"a regex, e.g. \p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+", 110
        )
        self.combo.currentIndexChanged.connect(self._on_choice)
        self.regex_edit.textChanged.connect(self._on_regex)

    def pattern(self) -> str:
        """The pattern name, or the custom regex as typed."""
        name = self.combo.currentData()
        return name if name is not None else self.regex_edit.text()

    def set_pattern(self, pattern: str) -> None:
        """Choose a named pattern, or type ``pattern`` as the custom regex."""
        index = self.combo.findData(pattern)
        if index < 0:
            self.regex_edit.setText(pattern)
            index = self.combo.count() - 1
        self.combo.setCurrentIndex(index)

    def problem(self) -> str | None:
        """Why the pattern cannot be used (core's message), or None."""
        if self.combo.currentData() is not None:
            return None
        regex = self.regex_edit.text()
        if not regex:
            return "Custom pattern: type a regex (or choose a named pattern)"
        try:
            pretokenizer(regex)
        except ValueError as error:
            return f"Custom pattern: {error}"
        return None

    @Slot()
    def _on_choice(self) -> None:
        reveal(self.regex_edit, self.combo.currentData() is None)
        self._on_regex()

    @Slot()
    def _on_regex(self) -> None:
        mark_problem(self.regex_edit, self.problem())
        self.changed.emit()


def edit_beside(owner: QWidget, combo: QComboBox, placeholder: str, width: int) -> QLineEdit:
    """Lay out ``combo`` in ``owner`` with a line edit beside it, hidden until a choice needs
    it (:func:`reveal`); returns the edit."""
    edit = QLineEdit()
    edit.setPlaceholderText(placeholder)
    edit.setAccessibleName(placeholder)  # the placeholder is all it shows
    edit.setMinimumWidth(width)
    edit.setVisible(False)
    owner.setSizePolicy(QSizePolicy.Policy.Maximum, owner.sizePolicy().verticalPolicy())
    layout = QHBoxLayout(owner)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    layout.addWidget(combo)
    layout.addWidget(edit, 1)
    return edit


def reveal(edit: QLineEdit, shown: bool) -> None:
    """Show the edit a choice needs (and put the cursor in it), or hide it. Shown, it grows
    into the room its row has to spare; hidden, the choice keeps its own width."""
    edit.setVisible(shown)
    owner = edit.parentWidget()
    if owner is not None:
        grow = QSizePolicy.Policy.Expanding if shown else QSizePolicy.Policy.Maximum
        owner.setSizePolicy(grow, owner.sizePolicy().verticalPolicy())
    if shown:
        edit.setFocus()


def mark_problem(edit: QWidget, problem: str | None) -> None:
    """A red border and the problem as the tooltip while there is one."""
    edit.setStyleSheet(problem_style() if problem else "")
    edit.setToolTip(problem or "")
