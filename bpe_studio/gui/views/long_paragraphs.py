"""Text boxes ready for paragraphs of many thousand characters (a one-line paste of minified
code, JSON or a web dump), which Qt lays out whole, as one paragraph.

What it does: :func:`ready_for_long_paragraphs` has a ``QPlainTextEdit`` keep the glyphs of
each paragraph longer than :data:`LONG_PARAGRAPH` once laid out (a layout drops them, and each
paint then shaped the whole paragraph again to draw a screenful of it), and show its vertical
scroll bar whenever its text is that long (the bar appearing after the text was laid out
narrowed the viewport and had the text laid out a second time). Both are set as an edit is
reported, before the document lays it out. The cost: a long paragraph's glyphs stay in memory
while it is shown (docs/responsiveness.md).
What it leaves out: painting token colours over such a paragraph (:mod:`.block_formats`).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QPlainTextEdit

# Paragraphs longer than this (UTF-16 units, the break included) count as long: laying out one
# is no longer a matter of milliseconds (docs/responsiveness.md has the figures).
LONG_PARAGRAPH = 20_000


class _LongParagraphs(QObject):
    def __init__(self, edit: QPlainTextEdit) -> None:
        super().__init__(edit)
        self._edit = edit
        edit.document().contentsChange.connect(self._on_contents_change)
        self._on_contents_change(0, 0, edit.document().characterCount())

    @Slot(int, int, int)
    def _on_contents_change(self, position: int, removed: int, added: int) -> None:
        # subtle: the document reports an edit before its layout takes it in, so what is set
        # here holds for the layout of the edit itself.
        edit = self._edit
        doc = edit.document()
        long_text = doc.characterCount() > LONG_PARAGRAPH
        policy = (
            Qt.ScrollBarPolicy.ScrollBarAlwaysOn
            if long_text
            else Qt.ScrollBarPolicy.ScrollBarAsNeeded
        )
        if edit.verticalScrollBarPolicy() != policy:
            edit.setVerticalScrollBarPolicy(policy)
        if not long_text:
            return
        # Only the paragraphs the edit touched can have grown long (or be new: Enter typed in
        # a long one makes a new paragraph, with a new layout, of its second part).
        block, end = doc.findBlock(position), position + added
        while block.isValid() and block.position() <= end:
            if block.length() > LONG_PARAGRAPH:
                block.layout().setCacheEnabled(True)
            block = block.next()


def ready_for_long_paragraphs(edit: QPlainTextEdit) -> None:
    """Have ``edit`` keep its long paragraphs' glyphs and its scroll bar (module docstring),
    from now on."""
    _LongParagraphs(edit)
