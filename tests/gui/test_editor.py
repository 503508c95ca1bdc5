"""The token editor: spans equal the tokenizer's, split characters painted whole, tooltips,
and a 1 MB paste tokenized off the GUI thread."""

from __future__ import annotations

import threading

import pytest
from gui_helpers import EOT, FIXTURES, shown, wait_for_spans
from PySide6.QtGui import QTextOption

import bpe_studio.gui.jobs.span_service as spans_module
from bpe_studio.core import Tokenizer
from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.views.token_editor import TokenEditor

MIXED = (
    "Once upon a time, a cat sat.<|endoftext|>\n中文分词：你好，世界！\n"
    "Emoji 😀😊 and café\t tabs  spaces\n\n" * 3
)


@pytest.fixture
def editor(qtbot):
    return shown(qtbot, TokenEditor(), 700, 400)


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", errors="surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def test_spans_equal_the_tokenizers(qtbot, editor, chinese_tokenizer):
    editor.set_tokenizer(TokenizerSource("test", tokenizer=chinese_tokenizer))
    editor.set_text(MIXED)
    spans = wait_for_spans(qtbot, editor)
    reference = Tokenizer(chinese_tokenizer.vocab, chinese_tokenizer.merges, [EOT]).spans(MIXED)
    assert editor.token_spans() == reference
    assert any(s.partial for s in reference), "the test text should split some characters"
    assert f"{len(reference):,} tokens" in editor.status.text()
    n_bytes = len(MIXED.encode())
    assert f"{n_bytes / len(reference):.2f} bytes/token" in editor.status.text()
    del spans


def test_split_characters_are_painted_whole(qtbot, editor, chinese_tokenizer):
    editor.set_tokenizer(TokenizerSource("test", tokenizer=chinese_tokenizer))
    editor.set_text(MIXED)
    wait_for_spans(qtbot, editor)
    editor.edit.paint_visible_tokens()
    units = _utf16_units(editor.text())
    painted = editor.edit.painted()
    assert painted
    for start, end, _ in painted:
        assert start < end
        for p in (start, end):  # never between the two halves of an emoji
            assert not (0 < p < len(units) and 0xD800 <= units[p - 1] <= 0xDBFF)
    # Every character held by a split token lies inside one range marked with a wave.
    text = editor.text()
    covered = set()
    for start, end, fmt in painted:
        if fmt.underlineStyle() == fmt.UnderlineStyle.WaveUnderline:
            covered.update(range(start, end))
    for span in chinese_tokenizer.spans(text):
        if span.partial:
            a = len(text[: span.start].encode("utf-16-le")) // 2
            b = len(text[: span.end].encode("utf-16-le")) // 2
            assert set(range(a, b)) <= covered


def test_tooltip_names_id_bytes_and_rank(qtbot, editor, chinese_tokenizer):
    editor.set_tokenizer(TokenizerSource("test", tokenizer=chinese_tokenizer))
    editor.set_text(MIXED)
    wait_for_spans(qtbot, editor)
    spans = chinese_tokenizer.spans(MIXED)
    merged = next(s for s in spans if chinese_tokenizer.merge_rank(s.id) is not None)
    tip = editor.edit.tooltip_html(merged.start)
    assert f"id {merged.id:,}" in tip
    assert f"merge rank {chinese_tokenizer.merge_rank(merged.id):,}" in tip
    token = chinese_tokenizer.vocab[merged.id]
    assert " ".join(f"{b:02x}" for b in token[:24]) in tip
    split = next(s for s in spans if s.partial)
    assert "split across" in editor.edit.tooltip_html(split.start)


def test_whitespace_toggle(qtbot, editor):
    editor.whitespace.setChecked(True)
    flags = editor.edit.document().defaultTextOption().flags()
    assert flags & QTextOption.Flag.ShowTabsAndSpaces
    editor.whitespace.setChecked(False)
    flags = editor.edit.document().defaultTextOption().flags()
    assert not flags & QTextOption.Flag.ShowTabsAndSpaces


def test_a_1mb_paste_is_tokenized_in_the_background(qtbot, editor, chinese_tokenizer):
    """The paste returns before any span is computed (tokenizing runs on the job thread); the
    spans arrive later and equal the tokenizer's. benchmarks/gui_bench.py times the paste and
    the GUI thread's largest gap meanwhile."""
    english = (FIXTURES / "english_books_slice.txt").read_text(encoding="utf-8")
    chinese = (FIXTURES / "chinese_slice.txt").read_text(encoding="utf-8")
    big = ((english + chinese) * 4)[:1_000_000]
    editor.set_tokenizer(TokenizerSource("test", tokenizer=chinese_tokenizer))
    wait_for_spans(qtbot, editor)
    gui_thread = threading.get_ident()
    computed_in: list[int] = []
    real_compute = spans_module.compute_spans

    def spy(*args, **kwargs):
        computed_in.append(threading.get_ident())
        return real_compute(*args, **kwargs)

    spans_module.compute_spans = spy
    try:
        with qtbot.waitSignal(editor.spans_ready, timeout=60_000):
            editor.set_text(big)
            assert editor.spans is None and editor.busy  # nothing computed on this thread
    finally:
        spans_module.compute_spans = real_compute
    assert computed_in and gui_thread not in computed_in
    assert len(editor.spans) == len(chinese_tokenizer.spans(big))


def test_a_deferred_tokenizer_that_fails_to_build_fails_again_not_quietly():
    calls = []

    def make():
        calls.append(1)
        raise ValueError("the run's record is gone")

    source = TokenizerSource.deferred("run", make, merge_count=3)
    for _ in range(2):
        with pytest.raises(ValueError, match="record is gone"):
            source.get()
    assert len(calls) == 2  # built again, never from an empty recipe


def test_an_added_token_that_is_not_special_is_named_so(qtbot, editor, tmp_path):
    # Found by an audit: the tooltip of Qwen3's <think> (seven bytes, no merge) said
    # "single byte".
    import tokenizers
    from core_helpers import SLICES, read_fixture
    from hf_shapes import FAMILIES, trained_bpe

    hf = trained_bpe(*FAMILIES["llama3"], [read_fixture(SLICES["english"])[:20_000]], 400)
    hf.add_tokens([tokenizers.AddedToken("<think>", special=False, normalized=False)])
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = Tokenizer.from_hf(tmp_path / "tokenizer.json")
    editor.set_tokenizer(TokenizerSource("qwen-like", tokenizer=tok))
    editor.set_text("a<think>b")
    wait_for_spans(qtbot, editor)
    tip = editor.edit.tooltip_html(2)
    assert f"id {hf.token_to_id('<think>'):,}" in tip and "added token" in tip
    assert "single byte" not in tip and "single byte" in editor.edit.tooltip_html(0)


def test_a_click_or_hover_on_right_to_left_text_is_of_the_character_under_it(
    qtbot, editor, gpt2_tokenizer, tiktoken_gpt2
):
    """An editor audit: the character under the pointer was the one after the nearest gap
    between characters, which in Hebrew or Arabic is the glyph's neighbour: hovering or
    clicking a letter showed and selected the token of the letter beside it."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QTextCursor

    text = "abc שלום עולם xyz مرحبا بالعالم end"
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text(text)
    wait_for_spans(qtbot, editor)
    ids = tiktoken_gpt2.encode(text)
    _, token_starts = tiktoken_gpt2.decode_with_offsets(ids)
    edit = editor.edit

    def edge(unit: int):
        cursor = QTextCursor(edit.document())
        cursor.setPosition(unit)
        return edit.cursorRect(cursor)

    # Letters inside the right-to-left words (not beside a change of direction, where a gap
    # has two places on screen); the text is all in the Basic Multilingual Plane.
    inside = [
        i
        for word in ("שלום", "עולם", "مرحبا", "بالعالم")
        for i in range(text.index(word) + 1, text.index(word) + len(word) - 1)
    ]
    for char in inside:
        a, b = edge(char), edge(char + 1)
        assert a.top() == b.top() and a.x() > b.x()  # laid out right to left
        # The first token holding it (a letter split in two bytes starts two tokens).
        token = ids[token_starts.index(max(s for s in token_starts if s <= char))]
        for part in (0.3, 0.7):
            point = QPoint(round(b.x() + (a.x() - b.x()) * part), a.center().y())
            assert edit.char_at(point) == char
            assert f"id {token:,}" in edit.tooltip_html(edit.char_at(point))
            with qtbot.waitSignal(editor.token_clicked) as clicked:
                qtbot.mouseClick(edit.viewport(), Qt.MouseButton.LeftButton, pos=point)
            assert clicked.args == [token]


def test_the_selected_tokens_outline_is_around_its_own_glyphs_in_right_to_left_text(qtbot, editor):
    """An editor audit: an occurrence was outlined by the box between the cursor positions
    of its two ends, which in Hebrew or Arabic lies over other words (the token " שלום"
    outlined "עולם", the word bidi shows beside "abc"), and a token inside Arabic was a
    3-pixel box. Each box now holds the token's own glyphs, read back from the point under
    its centre."""
    from reference_encoder import shipped_tiktoken

    text = "abc שלום עולם xyz مرحبا بالعالم end\nand a line\r\n"
    enc = shipped_tiktoken("o200k_base")
    ids = enc.encode(text)
    _, token_starts = enc.decode_with_offsets(ids)
    ranges = list(zip(token_starts, token_starts[1:] + [len(text)], strict=True))
    editor.set_tokenizer(TokenizerSource("o200k", tokenizer=Tokenizer.preset("o200k_base")))
    editor.set_text(text)
    wait_for_spans(qtbot, editor)
    edit = editor.edit
    assert " שלום" in [text[a:b] for a, b in ranges]  # one token, right to left
    for token in set(ids):
        editor.highlight_token(token)
        edit.paint_visible_tokens()
        boxes = edit.outline_boxes()
        held = [(a, b) for (a, b), t in zip(ranges, ids, strict=True) if t == token]
        assert len(boxes) >= len(held)
        for box in boxes:
            char = edit.char_at(box.center())
            assert any(a <= char < b for a, b in held), (token, box, char)


def test_a_line_break_mark_hides_no_letter_of_right_to_left_text(qtbot, editor, gpt2_tokenizer):
    """An editor audit: a line break's "↵" was drawn at its cursor position, which in a
    line of Arabic or Hebrew lies among the letters: it hid one. It now goes right of the
    line's glyphs, where the point under it is the line break itself."""
    from bpe_studio.gui.views.char_under_point import glyph_boxes
    from bpe_studio.gui.views.line_breaks import line_break_box

    text = "مرحبا بالعالم\nשלום עולם abc\nend\n"
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text(text)
    spans = wait_for_spans(qtbot, editor)
    edit = editor.edit
    edit.paint_visible_tokens()
    breaks = [i for i, c in enumerate(text) if c == "\n"]
    assert [spans.from_utf16(unit) for unit, _ in edit._markers] == breaks
    lines = zip([0] + [unit + 1 for unit, _ in edit._markers], [u for u, _ in edit._markers])
    letters = [box for a, b in lines for box in glyph_boxes(edit, a, b)]
    assert len(letters) >= 3
    for unit, _ in edit._markers:
        box = line_break_box(edit, unit)
        assert not any(box.intersects(letter) for letter in letters)
        assert edit.char_at(box.center()) == spans.from_utf16(unit)  # its tooltip, its token


def test_a_windows_line_break_shows_both_its_tokens(qtbot, editor, gpt2_tokenizer, tiktoken_gpt2):
    """An editor audit: GPT-2 gives "\\r\\n" two tokens, counted and listed, but a document
    holds it as one line break, so the "\\n" token was painted, hovered and named nowhere.
    The line break's tooltip names both."""
    from bpe_studio.gui.views.line_breaks import line_break_box

    text = "one\r\ntwo"
    ids = tiktoken_gpt2.encode(text)
    assert [tiktoken_gpt2.decode([i]) for i in ids[1:3]] == ["\r", "\n"]
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text(text)
    wait_for_spans(qtbot, editor)
    edit = editor.edit
    edit.paint_visible_tokens()
    ((unit, _),) = edit._markers  # one "↵", at the line's end
    tip = edit.tooltip_html(edit.char_at(line_break_box(edit, unit).center()))
    assert f"id {ids[1]:,}" in tip and f"id {ids[2]:,}" in tip
    assert "split" not in tip  # two characters, not one split
    assert f"id {ids[0]:,}" not in tip and f"id {ids[3]:,}" not in tip


def test_a_tall_editor_of_characters_split_in_three_is_coloured_to_its_bottom(
    qtbot, gpt2_tokenizer, tiktoken_gpt2
):
    """An editor audit: the painting cap counted tokens, not the blocks painted, so a large
    editor showing Chinese under GPT-2 (three tokens a character) stopped colouring a
    third of the way up its screen."""
    from bpe_studio.gui.views.token_editor import MAX_PAINTED

    editor = shown(qtbot, TokenEditor(), 1900, 1150)
    line = "靐齉麤爨驫鱻羴犇骉" * 6
    assert len(tiktoken_gpt2.encode(line)) == 3 * len(line)  # three tokens each
    text = "\n".join([line] * 200)
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text(text)
    spans = wait_for_spans(qtbot, editor)
    edit = editor.edit
    edit.paint_visible_tokens()
    start, end = edit.visible_range()
    shown_chars = range(spans.from_utf16(start), min(spans.from_utf16(end), len(text)))
    assert 3 * sum(c != "\n" for c in (text[i] for i in shown_chars)) > MAX_PAINTED
    painted = edit.painted()
    last = max(i for i in shown_chars if text[i] != "\n")
    assert any(p.start <= spans.to_utf16(last) < p.end for p in painted)


def test_the_selected_n_of_a_windows_line_break_is_outlined_on_it(
    qtbot, editor, gpt2_tokenizer, tiktoken_gpt2
):
    """An editor audit: GPT-2's "\\n" token of a "\\r\\n" has no place of its own in the
    document (one line break), so selecting it outlined none of its occurrences, which
    "Why this token" counts. Each is outlined on its line break."""
    text = "one\r\ntwo\r\n"
    newline = tiktoken_gpt2.encode("\n")[0]
    assert tiktoken_gpt2.encode(text).count(newline) == 2
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text(text)
    wait_for_spans(qtbot, editor)
    edit = editor.edit
    editor.highlight_token(newline)
    edit.paint_visible_tokens()
    boxes = edit.outline_boxes()
    assert sorted(edit.char_at(box.center()) for box in boxes) == [3, 8]  # each "\r"


def test_split_characters_keep_their_shades_as_the_view_scrolls(
    qtbot, editor, gpt2_tokenizer, tiktoken_gpt2
):
    """An editor audit: the two shades of split characters were counted from the first
    token on screen, so scrolling by one line changed the shade of most blocks on it. They
    are counted from the text's start now; side by side they still alternate."""
    line = "靐齉麤 x"
    assert len(tiktoken_gpt2.encode("靐")) == 3  # each of the three is split
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text("\n".join([line] * 60))
    wait_for_spans(qtbot, editor)
    edit = editor.edit

    def shades() -> dict[int, str]:
        edit.paint_visible_tokens()
        painted = edit.painted()
        wavy = [
            p for p in painted if p.format.underlineStyle() == p.format.UnderlineStyle.WaveUnderline
        ]
        for p, q in zip(wavy, wavy[1:]):
            if p.end == q.start:  # side by side: told apart
                assert p.format.background() != q.format.background()
        return {p.start: p.format.background().color().name() for p in wavy}

    before = shades()
    edit.verticalScrollBar().setValue(1)
    after = shades()
    common = set(before) & set(after)
    assert len(common) > 10
    assert all(before[u] == after[u] for u in common)
