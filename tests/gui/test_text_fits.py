"""Text the window shows is never cut mid-word at 1600x1000, and counts read as English
(issue 23, item 13): "1 token", "not in the editor's text"."""

from __future__ import annotations

import html
import re

from gui_helpers import shown, train_in_window
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.views.common import SteadyLabel, steady_label

LONG = "Cannot decode: 'abc' (item 2 of 3) is not a token id, and this sentence goes on and on"


def cut(steady: SteadyLabel) -> bool:
    """Whether the label's text runs past its edge: wider than the label, not wrapped."""
    label = steady.label
    if label.wordWrap():
        return label.heightForWidth(label.width()) > label.height()
    plain = html.unescape(re.sub(r"<[^>]*>", "", label.text()))
    return label.fontMetrics().horizontalAdvance(plain) > label.width()


def shown_label(host: QWidget, fmt: Qt.TextFormat) -> SteadyLabel:
    """A steady label 200 px wide on ``host`` (shown: resizes reach hidden widgets late)."""
    label = steady_label(QLabel(""))
    label.setParent(host)
    label.setTextFormat(fmt)
    label.show()
    label.resize(200, label.sizeHint().height())
    return label


def test_a_steady_label_cuts_plain_text_with_an_ellipsis_and_wraps_rich_text(qtbot):
    host = shown(qtbot, QWidget(), 2200, 200)
    plain = shown_label(host, Qt.TextFormat.PlainText)
    plain.setText(LONG)
    assert plain.text() == LONG  # in full for whoever asks
    assert plain.label.text().endswith("…") and plain.label.toolTip() == LONG
    assert not cut(plain)
    plain.resize(2000, plain.height())  # room again: all of it, no tooltip
    assert plain.label.text() == LONG and plain.label.toolTip() == ""
    rich = shown_label(host, Qt.TextFormat.RichText)
    one_line = rich.sizeHint().height()
    rich.setText(f"<b>{html.escape(LONG)}</b>")
    assert rich.label.wordWrap() and rich.sizeHint().height() > one_line
    rich.resize(200, rich.sizeHint().height())
    assert not cut(rich)


def test_a_summary_is_cut_between_its_parts_and_a_wrapping_label_wraps(qtbot):
    """First-hour audit (h_first62) at 1520×920: Compare's right header read "… 2.98
    characters/token · GPT-4o (o200…", the lab's usage line "… 166 no…". A line of parts
    is cut after its last whole part; the lab's usage line wraps instead."""
    host = shown(qtbot, QWidget(), 2200, 200)
    summary = "241 tokens · 3.68 bytes/token · 2.98 characters/token · GPT-4o (o200k_base)"
    label = shown_label(host, Qt.TextFormat.PlainText)
    fits = label.label.fontMetrics().horizontalAdvance(summary.removesuffix(" (o200k_base)"))
    label.resize(fits + 4, label.height())
    label.setText(summary)
    assert label.label.text() == "241 tokens · 3.68 bytes/token · 2.98 characters/token · …"
    assert label.label.toolTip() == summary and not cut(label)
    wrapping = steady_label(QLabel(""), wrap=True)
    wrapping.setParent(host)
    wrapping.setTextFormat(Qt.TextFormat.PlainText)
    wrapping.show()
    wrapping.resize(200, wrapping.sizeHint().height())
    one_line = wrapping.sizeHint().height()
    wrapping.setText(LONG)
    assert wrapping.label.text() == LONG and wrapping.label.toolTip() == ""
    assert wrapping.label.wordWrap() and wrapping.sizeHint().height() > one_line
    wrapping.resize(200, wrapping.sizeHint().height())
    assert not cut(wrapping)
    # A word wider than the label is clipped however the lines wrap: the tooltip holds it
    # (the second review: a long under-trained candidate was clipped with no tooltip).
    word = "x" * 400
    wrapping.setText(f"never used: {word}")
    assert wrapping.label.toolTip() == f"never used: {word}"


def test_nothing_is_cut_at_1600_by_1000(qtbot, window):
    window.resize(1600, 1000)
    train_in_window(qtbot, window, DEMO_CORPUS, 5_000)
    window.timeline.select_step(1_700)
    editor = window.editor
    qtbot.waitUntil(lambda: editor.spans is not None and not editor.busy, timeout=30_000)
    # A token selected: the panel's heading and detail line.
    why = window.inspector.why
    cursor = editor.edit.textCursor()
    cursor.setPosition(12)
    rect = editor.edit.cursorRect(cursor)
    qtbot.mouseClick(editor.edit.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: why.explanation is not None and not why.busy, timeout=30_000)
    window.ids_panel.decode_input.setText("12, abc, 99999999")
    window.ids_panel.decode_now()
    qtbot.waitUntil(lambda: window.ids_panel.error != "", timeout=10_000)
    qtbot.wait(50)  # the labels' last layout
    labels = {
        "status": window.panel.status,
        "editor's tokenizer": editor.source_label,
        "why heading": why.heading,
        "why detail": why.detail,
        "decoder error": window.ids_panel.error_label,
        "timeline": window.timeline.label,
        "vocabulary title": window.vocab_table.title,
    }
    assert [name for name, label in labels.items() if cut(label)] == []
    # These fit whole: the step the editor shows and why an id cannot be decoded.
    for label in (editor.source_label, window.ids_panel.error_label, window.panel.status):
        assert label.label.text() == label.text(), label.text()
    assert editor.source_label.text().startswith("at step 1,700 · ")


def test_counts_read_as_english(qtbot, window):
    train_in_window(qtbot, window, DEMO_CORPUS, 400)
    why = window.inspector.why
    token_id = 300
    for n, words in ((0, "not in the editor's text"), (1, "1 time in the editor")):
        why.set_occurrence_counter(lambda _id, n=n: n)
        window.hub.select_token(token_id)
        qtbot.waitUntil(
            lambda: why.explanation is not None and why.explanation.token_id == token_id,
            timeout=30_000,
        )
        why.refresh_occurrences()
        assert why.detail.text().endswith(f" · {words}")
        assert " 0 time" not in why.detail.text()
    # The step-through's last line for a piece of one token.
    steps = window.inspector.step_through
    steps.show_piece("a")
    qtbot.waitUntil(
        lambda: steps.walkthrough is not None and steps.walkthrough.text == "a" and not steps.busy,
        timeout=30_000,
    )
    lines = [steps.merges_list.item(i).text() for i in range(steps.merges_list.count())]
    assert lines[-1].endswith("done: 1 token")
    # The ids panel and the editor's status line for one token.
    window.editor.set_text("a")
    qtbot.waitUntil(
        lambda: window.editor.spans is not None and not window.editor.busy, timeout=30_000
    )
    qtbot.waitUntil(lambda: window.ids_panel.count_label.text() == "1 token", timeout=10_000)
    assert window.editor.status.text().startswith("1 token · 1 character · ")
