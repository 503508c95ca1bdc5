"""The vocabulary size box: a line of digits that never changes the number typed.

What it does: :class:`VocabSizeEdit` takes a whole number typed with or without group
separators ("50,000", "50000"), any number of digits, and shows a value set from code (or
one typed, once the box is left) grouped as the app writes amounts; Up and Down step it by
one, Page Up and Page Down by ten, as a spin box does. A size out of range stays as typed:
the panel frames it in red and says why in the core's words (``RunSettings.vocab_problem``).
A ``QSpinBox`` held at most 2**31 - 1 and dropped the keystroke that would pass it: typing
3000000000 gave 300,000,000, which Train then trained.
What it leaves out: the rule itself (``core.train.vocab``) and the red frame (``controls``).
"""

from __future__ import annotations

import re

from PySide6.QtCore import QRegularExpression, QSize, Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent, QRegularExpressionValidator
from PySide6.QtWidgets import QLineEdit, QWidget

from ...core.train.vocab import MAX_VOCAB_SIZE

# What may be typed: digits, the separators of "50,000" or "50 000" between them, and the
# white space around a number pasted from a spreadsheet cell or a terminal line ("50000\n").
_TYPED = QRegularExpression(r"\s*(?:[0-9][0-9, _\x{00a0}\x{202f}]*)?\s*")
_SEPARATORS = re.compile(r"[,_\s\u00a0\u202f]")
# More digits than the largest size has: the number is past it whatever the digits (and
# Python turns at most a few thousand digits into an int).
_MOST_DIGITS = len(str(MAX_VOCAB_SIZE))
# Keys that step the value, as a spin box steps it.
_STEPS = {
    Qt.Key.Key_Up: 1,
    Qt.Key.Key_Down: -1,
    Qt.Key.Key_PageUp: 10,
    Qt.Key.Key_PageDown: -10,
}


class VocabSizeEdit(QLineEdit):
    """A vocabulary size as typed; :meth:`value` is the number (0 while the box is empty,
    which :meth:`problem` names)."""

    valueChanged = Signal(object)  # noqa: N815 - QSpinBox's name; an int, maybe past 2**31

    def __init__(self, value: int = 0, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setValidator(QRegularExpressionValidator(_TYPED, self))
        self.setAccessibleName("Vocabulary size")
        self._value = -1
        self.textChanged.connect(self._on_text)
        self.editingFinished.connect(self._grouped)
        self.setValue(value)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        """Room for the largest size the core allows, as a spin box had: no wider."""
        hint = super().sizeHint()
        digits = self.fontMetrics().horizontalAdvance("2,147,483,648") + 16
        return QSize(min(hint.width(), digits), hint.height())

    def value(self) -> int:
        return self._value

    def setValue(self, value: int) -> None:  # noqa: N802 - QSpinBox's name, for callers
        self.setText(f"{max(0, value):,}")

    def problem(self) -> str | None:
        """Why the box holds no size (it is empty, or a number of more digits than the
        largest size has), or None: the size's own range is the core's rule, said by the
        panel."""
        digits = _SEPARATORS.sub("", self.text()).lstrip("0")
        if len(digits) > _MOST_DIGITS:
            return (
                f"Vocabulary size: a number of {len(digits):,} digits is too large: it must be "
                f"at most {MAX_VOCAB_SIZE:,}"
            )
        if self.text().strip():
            return None
        return "Vocabulary size: type the number of tokens (256 bytes + special tokens + merges)"

    @Slot(str)
    def _on_text(self, text: str) -> None:
        digits = _SEPARATORS.sub("", text).lstrip("0")
        if len(digits) > _MOST_DIGITS:
            value = MAX_VOCAB_SIZE + 1  # past the largest size by its digits alone
        else:
            value = int(digits) if digits else 0
        if value != self._value:
            self._value = value
            self.valueChanged.emit(value)

    @Slot()
    def _grouped(self) -> None:
        """The number typed, grouped ("3000000000" shows as "3,000,000,000"): the same number,
        easier to read (a digit too many is seen)."""
        digits = _SEPARATORS.sub("", self.text()).lstrip("0")
        if len(digits) > _MOST_DIGITS:
            return  # kept as typed: no number here stands for it
        if self.text().strip() and self.text() != f"{self._value:,}":
            self.setValue(self._value)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        step = _STEPS.get(Qt.Key(event.key()))
        if step is None or self.isReadOnly():
            super().keyPressEvent(event)
            return
        self.setValue(self._value + step)
        event.accept()
