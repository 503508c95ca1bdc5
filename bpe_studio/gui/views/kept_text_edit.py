"""A plain-text box that gives back the very text it was given, line breaks included.

What it does: :class:`KeptTextEdit` is a ``QPlainTextEdit`` whose :meth:`~KeptTextEdit.text`
is what :meth:`~KeptTextEdit.set_text` was given, with the user's edits: every ``\\r\\n``,
``\\r``, U+2029 and a leading byte-order mark kept (a document holds each as a plain paragraph
break, or not at all), through edits, undo and redo (:class:`~.kept_breaks.KeptBreaks` does
the bookkeeping; this wires it to the document's signals), and no-break spaces (the raw text,
not ``toPlainText``). Compare's text box is one, and the editor's ``TokenTextEdit`` is built
on it.
What it leaves out: painting tokens (``TokenTextEdit``).
"""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from .kept_breaks import KeptBreaks
from .long_paragraphs import ready_for_long_paragraphs


class KeptTextEdit(QPlainTextEdit):
    """A ``QPlainTextEdit`` whose :meth:`text` is the text given, as edited since."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._kept = KeptBreaks()
        self._setting_text = False
        self.document().contentsChange.connect(self._on_contents_change)
        self.document().undoCommandAdded.connect(self._on_undo_command_added)
        ready_for_long_paragraphs(self)  # a one-line megabyte is a paste away

    def set_text(self, text: str) -> None:
        """Show ``text``; :meth:`text` gives it back exactly."""
        self._setting_text = True
        try:
            self.setPlainText(text)
        finally:
            self._setting_text = False
        self._kept.given(text, self._raw_utf16)

    def text(self) -> str:
        """The text given (or as edited since): every line break as it came."""
        return self._kept.text(self.document().toRawText())

    def _raw_utf16(self) -> bytes:
        """The document's raw text in UTF-16 (its positions are UTF-16 units)."""
        return self.document().toRawText().encode("utf-16-le", "surrogatepass")

    @Slot()
    def _on_undo_command_added(self) -> None:
        self._kept.command_added(self.document().availableUndoSteps())

    @Slot(int, int, int)
    def _on_contents_change(self, position: int, removed: int, added: int) -> None:
        if self._setting_text:
            return  # set_text starts the bookkeeping anew once the text is in
        doc = self.document()
        self._kept.edited(
            position,
            removed,
            added,
            depth=doc.availableUndoSteps(),
            whole=position == 0 and doc.characterCount() - 1 == added,
            raw16=self._raw_utf16,
        )
