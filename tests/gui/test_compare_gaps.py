"""Compare's marks on text one tokenizer drops (pytest-qt, offscreen, files built with
``tokenizers``).

A BERT WordPiece file's pre-tokenizer drops whitespace: its spaces and line breaks are in no
token. Where the other side cuts there, the boundary differs all the same, and both panes mark
it (the audit found the WordPiece pane marking 6 of "9 boundaries differ": a mark was drawn
only inside a token). The oracle is ``tokenizers``' own offsets, run here directly.
"""

from __future__ import annotations

import tokenizers
from foreign_files import offset_cuts, sentencepiece_bpe, wordpiece

TEXT = "The quick brown fox jumps over the lazy dog.\nA second  line, indented\n"


def _held(path, text: str) -> set[int]:
    """The characters some token of ``tokenizers``' own encoding holds."""
    offsets = tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False)
    return {c for s, e in offsets.offsets for c in range(s, e)}


def _red_under(pane, offset: int, width: int) -> int:
    """Pixels of the mark's colour in the pane's grab, in the ``width`` pixels from where the
    character at ``offset`` starts (the underline may sit just below its box)."""
    from PySide6.QtGui import QColor, QTextCursor

    from bpe_studio.gui.views.theme import colours

    cursor = QTextCursor(pane.document())
    cursor.setPosition(pane.side.spans.to_utf16(offset))
    box = pane.cursorRect(cursor)
    image, mark = pane.viewport().grab().toImage(), QColor(colours().diff_mark)
    return sum(
        abs(c.red() - mark.red()) < 40
        and abs(c.green() - mark.green()) < 40
        and abs(c.blue() - mark.blue()) < 40
        for x in range(box.left(), box.left() + width)
        for y in range(box.top(), box.bottom() + 3)
        if (c := image.pixelColor(x, y))
    )


def test_a_boundary_on_text_one_side_drops_is_marked_in_both_panes(qtbot, compare_view, tmp_path):
    left, right = sentencepiece_bpe(tmp_path / "spbpe"), wordpiece(tmp_path / "wordpiece")
    oracle = (tokenizers.Tokenizer.from_file(str(p)) for p in (left, right))
    diff = sorted(set.symmetric_difference(*(set(offset_cuts(t, TEXT)) for t in oracle)))
    dropped = [c for c in diff if c not in _held(right, TEXT)]
    # The case at hand: boundaries on spaces and on a line break WordPiece holds in no token.
    assert {TEXT[c] for c in dropped} == {" ", "\n"}

    view = compare_view
    view.choices[0].add_file(left)
    view.choices[1].add_file(right)
    shown = []
    view.compared.connect(shown.append)
    view.set_text(TEXT)
    view.show()
    keys = (view.choices[0].key, view.choices[1].key)
    qtbot.waitUntil(lambda: bool(shown) and shown[-1].keys == keys, timeout=60_000)
    comparison = shown[-1]
    assert comparison.text == TEXT
    assert comparison.diff.tolist() == diff
    assert view.status.text().startswith(f"{len(diff):,} boundaries differ")
    for pane in view.panes:
        qtbot.waitUntil(lambda p=pane: p.marked_offsets() == diff, timeout=10_000)

    # Seen, not only listed: red under a dropped space, a red "↵" at a dropped line break.
    pane = view.panes[1]
    space = next(c for c in dropped if TEXT[c] == " ")
    assert _red_under(pane, space, pane.fontMetrics().horizontalAdvance(" ")) > 0
    brk = next(c for c in dropped if TEXT[c] == "\n")
    assert _red_under(pane, brk, 2 * pane.fontMetrics().horizontalAdvance("↵")) > 0
