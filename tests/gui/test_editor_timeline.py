"""The editor follows the timeline (issue 9), tokenizes exactly its text and colours whatever is
visible (issue 11, items 3, 4, 20), and keeps the contracts other views code against.

References are computed here from scratch: a tokenizer built from the first k merges of the
files (not ``truncated``, which the editor uses), and ``encode`` of the exact text."""

from __future__ import annotations

import numpy as np
import pytest
from gui_helpers import EOT, FIXTURES, shown, train_in_window, wait_for_spans
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest

from bpe_studio.core import Tokenizer
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.state import LoadedTokenizer, MergeRow
from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.views.token_editor import TokenEditor

ENGLISH = (FIXTURES / "english_books_slice.txt").read_text(encoding="utf-8")[:3000]
DEMO_CORPUS = FIXTURES.parent.parent / "resources" / "sample" / "tinystories_sample.txt"


def first_merges(tok: Tokenizer, k: int) -> Tokenizer:
    """The tokenizer of the first k merges, built from scratch: bytes, specials, and the
    tokens those merges make (ids kept)."""
    merges = tok.merges[:k]
    made = {a + b for a, b in merges}
    base = {i: t for i, t in tok.vocab.items() if len(t) == 1}
    base.update({tok.special_id(s): s.encode() for s in tok.special_tokens})
    vocab = dict(base)
    vocab.update({i: t for i, t in tok.vocab.items() if t in made})
    return Tokenizer(vocab, merges, list(tok.special_tokens))


def loaded_hub(tok: Tokenizer) -> AppModel:
    hub = AppModel()
    inverse = {t: i for i, t in tok.vocab.items()}
    merge_rows = [MergeRow(r, a, b, inverse[a + b]) for r, (a, b) in enumerate(tok.merges)]
    loaded = LoadedTokenizer(
        tok, FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", [EOT], merge_rows, []
    )
    hub.show_loaded(loaded)
    return hub


@pytest.fixture
def editor(qtbot):
    return shown(qtbot, TokenEditor(), 700, 400)


def ids_of(editor) -> list[int]:
    return [int(i) for i in editor.spans.ids]


def test_editor_tokens_follow_the_step(qtbot, editor, gpt2_tokenizer):
    hub = loaded_hub(gpt2_tokenizer)
    editor.bind(hub)
    editor.set_text(ENGLISH)
    wait_for_spans(qtbot, editor)
    assert ids_of(editor) == gpt2_tokenizer.encode(ENGLISH)
    n = len(gpt2_tokenizer.merges)
    for k in (0, 1, 250, 5000, n - 1, n, 32_000):
        hub.select_step(k)
        wait_for_spans(qtbot, editor)
        assert ids_of(editor) == first_merges(gpt2_tokenizer, k).encode(ENGLISH), k
        assert editor.tokenizer is not None and len(editor.tokenizer.merges) == k
    hub.select_step(10)
    wait_for_spans(qtbot, editor)
    assert editor.source_label.text().startswith("at step 10 · ")


def test_scrubbing_latest_position_wins(qtbot, editor, gpt2_tokenizer):
    hub = loaded_hub(gpt2_tokenizer)
    editor.bind(hub)
    editor.set_text(ENGLISH)
    wait_for_spans(qtbot, editor)
    seen: list[int] = []
    editor.spans_ready.connect(lambda spans: seen.append(len(spans.tokenizer.merges)))
    for k in range(100, 3000, 97):  # a drag: many positions before the event loop turns
        hub.select_step(k)
    wait_for_spans(qtbot, editor)
    assert seen[-1] == hub.state.step
    assert ids_of(editor) == first_merges(gpt2_tokenizer, hub.state.step).encode(ENGLISH)


def test_picked_tokenizer_ignores_the_step(qtbot, editor, gpt2_tokenizer):
    hub = loaded_hub(gpt2_tokenizer)
    editor.bind(hub)
    editor.set_text(ENGLISH)
    hub.select_step(100)
    wait_for_spans(qtbot, editor)
    other = first_merges(gpt2_tokenizer, 700)
    hub.pick_tokenizer(TokenizerSource("picked", tokenizer=other))
    wait_for_spans(qtbot, editor)
    assert ids_of(editor) == other.encode(ENGLISH)
    hub.select_step(5)
    wait_for_spans(qtbot, editor)
    assert ids_of(editor) == other.encode(ENGLISH)
    hub.pick_tokenizer(None)
    wait_for_spans(qtbot, editor)
    assert ids_of(editor) == first_merges(gpt2_tokenizer, 5).encode(ENGLISH)


@pytest.mark.parametrize(
    "text",
    [
        "one\r\ntwo\r\n\r\nthree\r\n",
        "\ufeffbom first\r\nthen 😀 emoji\r\n中文\r\nend",
        "old mac\rline\r\rbreaks\n\r mixed\u2029para",
    ],
)
def test_the_text_given_is_tokenized_exactly(qtbot, editor, gpt2_tokenizer, text):
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text(text)
    spans = wait_for_spans(qtbot, editor)
    assert editor.text() == text
    assert ids_of(editor) == gpt2_tokenizer.encode(text)
    assert spans.text_length == len(text)
    assert (
        f"{len(gpt2_tokenizer.encode(text)):,} tokens · {len(text):,} characters"
        in editor.status.text()
    )
    # Every span maps to document positions holding the same characters.
    doc = editor.edit.document().toRawText()
    doc_chars = doc.encode("utf-16-le", "surrogatepass")
    for s in spans.to_spans():
        a, b = spans.to_utf16(s.start), spans.to_utf16(s.end)
        shown = doc_chars[2 * a : 2 * b].decode("utf-16-le", "surrogatepass")
        want = text[s.start : s.end].replace("\r\n", "\n").lstrip("\ufeff")
        for brk in "\r\n\u2029":  # a break's token may hold the "\n" of "\r\n" alone
            want, shown = want.replace(brk, ""), shown.replace(brk, "")
        assert shown == want


def test_crlf_file_counts_equal_encode_after_edits(qtbot, editor, gpt2_tokenizer, tmp_path):
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"first line\r\nsecond line\r\nthird\r\n")
    text = path.read_bytes().decode("utf-8")
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text(text)
    wait_for_spans(qtbot, editor)
    assert len(editor.spans) == len(gpt2_tokenizer.encode(text))
    assert editor.spans.text_length == len(text)
    # Typing keeps the other line ends as they came; a typed line break is "\n".
    cursor = editor.edit.textCursor()
    cursor.setPosition(len("first line\nsecond"))
    editor.edit.setTextCursor(cursor)
    qtbot.keyClicks(editor.edit, " X")
    qtbot.keyClick(editor.edit, Qt.Key.Key_Return)
    expected = "first line\r\nsecond X\n line\r\nthird\r\n"
    assert editor.text() == expected
    wait_for_spans(qtbot, editor)
    assert ids_of(editor) == gpt2_tokenizer.encode(expected)
    # Deleting a line break drops what it was.
    cursor.setPosition(len("first line"))
    cursor.deleteChar()
    assert editor.text() == "first linesecond X\n line\r\nthird\r\n"


def test_a_long_line_is_coloured_where_the_viewport_is(qtbot, editor, gpt2_tokenizer):
    line = ("a quick brown fox jumps over the lazy dog " * 30_000)[:1_000_000]
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    text = line + "\nthe end"
    editor.set_text(text)
    spans = wait_for_spans(qtbot, editor, timeout=120_000)
    bar = editor.edit.verticalScrollBar()
    for where in (bar.maximum() // 2, bar.maximum()):
        bar.setValue(where)
        editor.edit.paint_visible_tokens()
        painted = editor.edit.painted()
        assert painted
        # The character at the bottom of the viewport is inside a painted range.
        viewport = editor.edit.viewport()
        probe = editor.edit.cursorForPosition(QPoint(20, viewport.height() - 8)).position()
        probe = min(probe, len(text) - 1)  # at the very end: the last character
        assert probe > 10_000  # deep in the line, not its top
        assert any(s.start <= probe < s.end for s in painted), where
        first = min(s.start for s in painted)
        top = editor.edit.cursorForPosition(QPoint(0, 0)).position()
        assert first <= top
    del spans


def test_newlines_and_adjacent_specials_are_marked(qtbot, editor, gpt2_tokenizer):
    text = f"line one\n\nline two{EOT}{EOT}\n"
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text(text)
    wait_for_spans(qtbot, editor)
    editor.edit.paint_visible_tokens()
    # One marker per line break, in the colour of the token holding it.
    breaks = [i for i, ch in enumerate(text) if ch == "\n"]
    assert [unit for unit, _ in editor.edit._markers] == breaks
    # The two adjacent special tokens get different backgrounds.
    eot = gpt2_tokenizer.special_id(EOT)
    colours = [
        s.format.background().color().name()
        for s in editor.edit.painted()
        if text[s.start : s.end] == EOT
    ]
    assert len(colours) == 2 and colours[0] != colours[1]
    tip = editor.edit.tooltip_html(text.index(EOT))
    assert f"id {eot:,}" in tip and "50,256" in tip


def test_signals_and_highlight(qtbot, editor, gpt2_tokenizer):
    hub = loaded_hub(gpt2_tokenizer)
    editor.bind(hub)
    text = "the cat and the dog and the bird"
    with qtbot.waitSignal(editor.encoded, timeout=30_000) as encoded:
        editor.set_text(text)
    ids = gpt2_tokenizer.encode(text)
    assert encoded.args == [len(ids), len(text.encode())]
    the = gpt2_tokenizer.encode(" the")[0]
    assert editor.occurrences(the) == ids.count(the) == 2
    # A click on a token: token_clicked and the hub's selection; the hub's selection outlines.
    with qtbot.waitSignal(editor.token_clicked) as clicked:
        with qtbot.waitSignal(hub.token_selected):
            cursor = editor.edit.textCursor()
            cursor.setPosition(text.index(" dog") + 2)
            rect = editor.edit.cursorRect(cursor)
            qtbot.mouseClick(editor.edit.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert clicked.args == [gpt2_tokenizer.encode(" dog")[0]]
    hub.select_token(the)
    editor.edit.paint_visible_tokens()
    starts = [i for i in range(len(text)) if text.startswith(" the", i)]
    assert editor.edit._outlines == [(i, i + 4) for i in starts]
    editor.highlight_token(None)
    editor.edit.paint_visible_tokens()
    assert editor.edit._outlines == []
    # The pre-token under the cursor, after the cursor rests.
    with qtbot.waitSignal(editor.piece_at_cursor, timeout=5_000) as piece:
        cursor = editor.edit.textCursor()
        cursor.setPosition(text.index("bird") + 2)
        editor.edit.setTextCursor(cursor)
    assert piece.args == [" bird"]


def test_piece_at_cursor_inside_a_special_token(qtbot, editor, gpt2_tokenizer):
    text = f"hello{EOT}world"
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text(text)
    spans = wait_for_spans(qtbot, editor)
    assert spans.piece_at(text.index(EOT) + 3) == EOT  # the encoder's piece there
    assert spans.piece_at(0) == "hello"
    assert spans.piece_at(len(text) - 1) == "world"


def test_follows_a_real_training_run(qtbot, window):
    """After training on the bundled sample, the editor at step k tokenizes as the first k
    merges of the run do; the ids panel lists those ids."""
    result = train_in_window(qtbot, window, DEMO_CORPUS, 600)
    editor, hub = window.editor, window.hub
    for k in (0, 37, 200, len(result.merges)):
        hub.select_step(k)
        wait_for_spans(qtbot, editor)
        reference = Tokenizer(
            {**hub.state.vocab_at(k)}, hub.state.merges_at(k), list(result.special_tokens)
        )
        assert ids_of(editor) == reference.encode(editor.text()), k
        qtbot.waitUntil(lambda: not window.ids_panel.busy)
        panel = window.ids_panel
        listed = [int(x) for x in panel.ids_text().split(", ")]
        assert listed == reference.encode(editor.text())
        assert np.array_equal(panel.ids, np.array(listed))


def test_while_training_the_step_is_built_from_the_record(qtbot, editor):
    """Training, not live: a step past the run's (paced) tokenizer is built from the record,
    a step before it is that tokenizer's truncation; live, the run's tokenizer is shown."""
    from bpe_studio.core import initial_vocab, iter_merges
    from bpe_studio.gui.model.state import Phase, RunSettings

    steps = list(iter_merges(DEMO_CORPUS, 256 + 1 + 400, [EOT], workers=1))
    hub = AppModel()
    hub.begin_run(RunSettings(657, (EOT,)), initial_vocab([EOT]))
    hub.start_merging()
    hub.append_merges(steps)
    hub.publish()
    assert hub.state.phase is Phase.MERGING and hub.state.step == 400
    editor.bind(hub)
    editor.set_text(ENGLISH)
    wait_for_spans(qtbot, editor)
    bytes_only = Tokenizer(initial_vocab([EOT]), [], [EOT])
    assert ids_of(editor) == bytes_only.encode(ENGLISH)  # live: the run's tokenizer as shown

    def reference(k: int) -> list[int]:
        vocab = dict(initial_vocab([EOT]))
        vocab.update((s.new_id, s.left + s.right) for s in steps[:k])
        return Tokenizer(vocab, [(s.left, s.right) for s in steps[:k]], [EOT]).encode(ENGLISH)

    for k in (150, 399, 20):
        hub.select_step(k)
        wait_for_spans(qtbot, editor)
        assert ids_of(editor) == reference(k), k
    assert "training, 20 merges so far" not in editor.source_label.text()  # reused: 399's
    hub.show_tokenizer(editor.source)  # the controller's next rebuild: 399 merges
    hub.select_step(100)
    wait_for_spans(qtbot, editor)
    assert ids_of(editor) == reference(100)
    # The run has 400 merges; the tokenizer shown, cut to step 100, is the one built at 399,
    # which the header does not name: one step in it, the one shown (audit h_tui61).
    assert editor.source_label.text() == "at step 100 · training, 400 merges so far"


def test_truncations_are_kept_for_scrubbing_back(gpt2_tokenizer):
    from bpe_studio.gui.model import tokenizer_source as source_module

    source = TokenizerSource("gpt2", tokenizer=gpt2_tokenizer)
    assert (
        source.at(None) is gpt2_tokenizer
        and source.at(len(gpt2_tokenizer.merges)) is gpt2_tokenizer
    )
    first = source.at(100)
    assert len(first.merges) == 100 and source.at(100) is first
    for k in range(200, 200 + source_module.TRUNCATED_KEPT):
        source.at(k)
    assert source.at(100) is not first  # the least recently used went first
    assert source.at(200 + source_module.TRUNCATED_KEPT - 1) is source.at(
        200 + source_module.TRUNCATED_KEPT - 1
    )


def test_the_header_counts_the_merges_made_as_the_run_goes_on(qtbot, editor):
    """Training, at an earlier step: the header's "of N merges so far" is the run's count
    now, not the count when the tokenizer shown was made (it read "training, 100 of 150
    merges so far" while the run went on to 400 merges)."""
    from bpe_studio.core import initial_vocab, iter_merges
    from bpe_studio.gui.model.state import RunSettings

    steps = list(iter_merges(DEMO_CORPUS, 256 + 1 + 450, [EOT], workers=1))
    hub = AppModel()
    hub.begin_run(RunSettings(707, (EOT,)), initial_vocab([EOT]))
    hub.start_merging()
    hub.append_merges(steps[:150])
    hub.publish()
    editor.bind(hub)
    editor.set_text(ENGLISH)
    hub.select_step(100)  # built from the record: "training, 100 of 150 merges so far"
    wait_for_spans(qtbot, editor)
    assert editor.source_label.text() == "training, 100 of 150 merges so far"
    for made in (151, 300, 400):
        hub.append_merges(steps[hub.state.merges_done : made])
        hub.publish()  # a frame: not live, the step stays at 100
        assert hub.state.step == 100
        expected = f"training, 100 of {made:,} merges so far"
        assert editor.source_label.text() == expected
    # Merges received but not yet shown (no frame since) are not counted: the header says
    # what the timeline says (a scale audit: "452 of 1,276" beside a timeline at 844).
    hub.append_merges(steps[400:])
    hub.select_step(99)
    hub.select_step(100)
    assert hub.state.merges_done > hub.state.published == 400
    assert editor.source_label.text() == "training, 100 of 400 merges so far"
    # Paused and resumed, the words follow the phase (a pause shows every merge received).
    hub.set_paused(True)
    assert hub.state.published == 450
    assert editor.source_label.text() == "100 of 450 merges, paused at merge 450"
    hub.set_paused(False)
    assert editor.source_label.text() == "training, 100 of 450 merges so far"


def test_a_bom_goes_with_the_whole_text_it_began(qtbot, editor, gpt2_tokenizer):
    """An editor audit: a BOM given with the text stayed after select-all and delete (the
    editor looked empty and counted 3 tokens) or select-all and typing."""
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text("\ufeffhello")
    editor.edit.moveCursor(QTextCursor.MoveOperation.End)
    editor.edit.insertPlainText("!")  # an edit elsewhere keeps it
    assert editor.text() == "\ufeffhello!"
    editor.edit.selectAll()
    editor.edit.textCursor().removeSelectedText()
    assert editor.text() == ""
    editor.set_text("\ufeffhello")
    editor.edit.selectAll()
    editor.edit.insertPlainText("x")
    assert editor.text() == "x"
    wait_for_spans(qtbot, editor)
    assert ids_of(editor) == gpt2_tokenizer.encode("x")


@pytest.mark.parametrize("pasted", ["x", "x\ny", "中", "😀"])
def test_a_paste_at_the_start_keeps_every_crlf_given(qtbot, editor, gpt2_tokenizer, pasted):
    """An editor audit: Qt reports a paste at position 0 as the first paragraph and its
    break removed and added again, and the first kept "\\r\\n" became "\\n"."""
    from PySide6.QtWidgets import QApplication

    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    text = "ab\r\ncd\r\n\r\nef"
    editor.set_text(text)
    cursor = editor.edit.textCursor()
    cursor.setPosition(0)
    editor.edit.setTextCursor(cursor)
    QApplication.clipboard().setText(pasted)
    editor.edit.paste()
    assert editor.text() == pasted + text
    # Typed in the middle of a line afterwards, the breaks stay where they are too.
    cursor = editor.edit.textCursor()
    cursor.setPosition(len(pasted.encode("utf-16-le")) // 2 + 1)
    editor.edit.setTextCursor(cursor)
    editor.edit.insertPlainText("-")
    expected = pasted + "a-b\r\ncd\r\n\r\nef"
    assert editor.text() == expected
    wait_for_spans(qtbot, editor)
    assert ids_of(editor) == gpt2_tokenizer.encode(expected)


def _edit_at_random(edit, rnd) -> None:
    """One keyboard edit somewhere: a Backspace, a Delete, a letter, an Enter, or a
    selection deleted."""
    length = len(edit.toPlainText())
    cursor = edit.textCursor()
    cursor.setPosition(rnd.randint(0, length))
    kind = rnd.choice(["backspace", "delete", "letter", "enter", "selection"])
    if kind == "selection":
        cursor.setPosition(rnd.randint(0, length), QTextCursor.MoveMode.KeepAnchor)
    edit.setTextCursor(cursor)
    key = {"delete": Qt.Key.Key_Delete, "letter": Qt.Key.Key_X, "enter": Qt.Key.Key_Return}
    QTest.keyClick(edit, key.get(kind, Qt.Key.Key_Backspace))


def test_undo_gives_back_the_line_breaks_it_restores(qtbot, editor):
    """The editor's text after undo and redo is what it was at that point: a deleted "\\r\\n"
    or "\\r" that undo puts back is one again (it came back as "\\n": an editor audit)."""
    import random

    text = "ab\r\nc😀\r\n\r\nef\rgh\u2029ij"
    edit = editor.edit
    # The plain case: a kept break deleted with Delete, then undone and redone.
    editor.set_text(text)
    cursor = edit.textCursor()
    cursor.setPosition(2)
    edit.setTextCursor(cursor)
    QTest.keyClick(edit, Qt.Key.Key_Delete)
    assert editor.text() == "abc😀\r\n\r\nef\rgh\u2029ij"
    edit.undo()
    assert editor.text() == text
    edit.redo()
    assert editor.text() == "abc😀\r\n\r\nef\rgh\u2029ij"
    # Any few edits: undoing all of them gives the text back, redoing them their result,
    # and an edit made after undoing some leaves the rest still undoable.
    rnd = random.Random(58)
    document = edit.document()
    for _ in range(150):
        editor.set_text(text)
        for _ in range(rnd.randint(1, 6)):
            _edit_at_random(edit, rnd)
        done = editor.text()
        while document.isUndoAvailable():
            edit.undo()
        assert editor.text() == text
        while document.isRedoAvailable():
            edit.redo()
        assert editor.text() == done
        for _ in range(rnd.randint(0, 3)):
            edit.undo()
        _edit_at_random(edit, rnd)
        while document.isUndoAvailable():
            edit.undo()
        assert editor.text() == text


def test_a_break_made_right_after_a_lone_cr_is_a_break_of_its_own(
    qtbot, editor, gpt2_tokenizer, tiktoken_gpt2
):
    """An editor audit: Enter at the start of the line after a lone "\r" (or the text
    between it and a "\n" deleted) made the text "\r\n", one break where the document
    shows two: a line less counted and every colour after it a character off."""
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    edit = editor.edit
    editor.set_text("one\rtwo three")
    cursor = edit.textCursor()
    cursor.setPosition(len("one\r"))
    edit.setTextCursor(cursor)
    QTest.keyClick(edit, Qt.Key.Key_Return)
    expected = "one\r\rtwo three"
    assert editor.text() == expected
    spans = wait_for_spans(qtbot, editor)
    assert ids_of(editor) == tiktoken_gpt2.encode(expected)
    raw = edit.document().toRawText()  # each break a U+2029
    for s in spans.to_spans():
        shown = raw[spans.to_utf16(s.start) : spans.to_utf16(s.end)]
        assert shown == expected[s.start : s.end].replace("\r", "\u2029")
    # The text between a "\r" and a "\n" deleted: two breaks still.
    editor.set_text("a\rb\nc")
    cursor.setPosition(len("a\r"))
    cursor.deleteChar()
    assert editor.text() == "a\r\rc"


def test_undo_of_replacing_the_whole_text_gives_its_bom_back(qtbot, editor):
    text = "\ufeffab\r\ncd"
    editor.set_text(text)
    editor.edit.selectAll()
    QTest.keyClicks(editor.edit, "x")
    assert editor.text() == "x"
    editor.edit.undo()
    assert editor.text() == text


def test_undo_gives_back_every_deleted_break_however_many(qtbot, editor):
    """The review of the undo fix: it kept a whole table of breaks for each command, the
    newest 20 only, so after 25 joins the oldest five came back as "\\n" (and 300,000 lines
    cost 20 tables). Each command now keeps only what it dropped and its changes."""
    text = "".join(f"line{i}\r\n" for i in range(30))
    editor.set_text(text)
    edit = editor.edit
    for _ in range(25):
        cursor = edit.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.Start)
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
        edit.setTextCursor(cursor)
        QTest.keyClick(edit, Qt.Key.Key_Delete)  # joins the first two lines
        QTest.keyClicks(edit, " ")  # and a new command
    assert editor.text().count("\r\n") == 5
    while edit.document().isUndoAvailable():
        edit.undo()
    assert editor.text() == text
