"""Step-through defects found by an audit: a special or added token under the editor cursor
is stepped through (one id, never merged), not answered with "Type a word above"; in a narrow
pane the pair merged next shows whole (both chips and its badge, no chip cut at the top); a
text of more pieces than the menu lists says so and every piece can still be reached."""

from __future__ import annotations

import pytest
from gui_helpers import EOT, FIXTURES, train_in_window, wait_for_spans

from bpe_studio.core import Tokenizer
from bpe_studio.core.explain.span_arrays import compute_spans
from bpe_studio.gui.jobs.loader import prepare
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.tokenizer_recipes import inspector_cache
from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.views.step_through import StepThroughPanel


def panel_of(qtbot, hub: AppModel, width: int = 600, height: int = 450) -> StepThroughPanel:
    panel = StepThroughPanel(hub, inspector_cache())
    qtbot.addWidget(panel)
    panel.resize(width, height)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def gpt2_hub() -> AppModel:
    hub = AppModel()
    hub.show_loaded(prepare(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt"))
    return hub


def replayed(qtbot, panel: StepThroughPanel, text: str, typed: bool = False):
    if typed:
        panel.piece_edit.setText(text)
        panel.piece_edit.textEdited.emit(text)
    else:
        panel.show_piece(text)
    qtbot.waitUntil(
        lambda: panel.walkthrough is not None and panel.walkthrough.text == text and not panel.busy,
        timeout=20_000,
    )
    return panel.walkthrough


# ------------------------------------------------------- a special token under the cursor
def test_a_special_token_under_the_editor_cursor_is_stepped_through(qtbot, window):
    """The audit: with the cursor in <|endoftext|> the Piece field was wiped and the panel
    said "Type a word above, or click into the editor's text." though typing the token
    stepped it through (one step, its id)."""
    train_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 300)
    eot_id = next(i for i, b in window.state.vocab_at(0).items() if b == EOT.encode())
    window.inspector.setCurrentIndex(1)
    panel, editor = window.inspector.step_through, window.editor
    text = f"Hello world{EOT}bye"
    editor.set_text(text)
    wait_for_spans(qtbot, editor)
    for char, piece in ((3, "Hello"), (text.index(EOT) + 4, EOT), (len(text) - 1, "bye")):
        cursor = editor.edit.textCursor()
        cursor.setPosition(char)
        editor.edit.setTextCursor(cursor)
        qtbot.waitUntil(
            lambda piece=piece: (
                panel.piece_edit.text() == piece
                and panel.walkthrough is not None
                and panel.walkthrough.text == piece
                and not panel.busy
            ),
            timeout=10_000,
        )
    # The rest of the loop ends on "bye"; back into the special token for the checks.
    cursor.setPosition(text.index(EOT) + 1)
    editor.edit.setTextCursor(cursor)
    qtbot.waitUntil(lambda: panel.piece_edit.text() == EOT and not panel.busy, timeout=10_000)
    w = panel.walkthrough
    assert w is not None and w.piece == EOT
    assert [s.tokens for s in w.steps] == [(eot_id,)]
    assert panel.counter.text() == "Step 1/1"
    message = panel.message.text()
    assert "special token" in message and "never" in message and "pre-tokenization" in message
    assert f"[{eot_id:,}]" in message
    assert panel.origin.text() == "The special token under the editor cursor"


@pytest.mark.parametrize("token, kind", [("<tool>", "added"), ("<pad>", "special")])
def test_an_added_token_under_the_cursor_is_stepped_through(qtbot, tmp_path, token, kind):
    """The same for a loaded tokenizer.json's added tokens: what the editor sends for a
    character inside one (SpanArrays.piece_at) replays to that token's id, as `tokenizers`
    gives it."""
    import tokenizers
    from hf_shapes import flagged_file

    path = flagged_file(tmp_path)
    tok = Tokenizer.from_hf(path)
    hub = AppModel()
    hub.pick_tokenizer(TokenizerSource("flagged", tokenizer=tok))
    panel = panel_of(qtbot, hub)
    text = f"a word  {token}a word"
    spans = compute_spans(tok, text)
    assert spans is not None
    expected = tokenizers.Tokenizer.from_file(path).token_to_id(token)
    for char in range(text.index(token), text.index(token) + len(token)):
        assert spans.piece_at(char) == token
    w = replayed(qtbot, panel, spans.piece_at(text.index(token) + 2))
    assert [s.tokens for s in w.steps] == [(expected,)]
    assert f"{kind} token" in panel.message.text() and "never" in panel.message.text()


# ---------------------------------------------------------------- the pair merged next
def pair_shows_whole(panel: StepThroughPanel) -> list[str]:
    """What of the pair merged next lies outside the chips' viewport: its chips and the
    badge under the gap between them (the badge's height from the strip's constants)."""
    strip, view = panel.strip, panel.strip_scroll.viewport()
    i = strip.chosen
    a, b = strip.chip_rect(i), strip.chip_rect(i + 1)
    under = a.bottom() + strip.LINK + strip.BADGE_H
    parts = {"left chip": a, "right chip": b}
    shown = view.rect()
    out = []
    for name, box in parts.items():
        top = strip.mapTo(view, box.topLeft().toPoint())
        bottom = strip.mapTo(view, box.bottomRight().toPoint())
        if not (shown.contains(top) and shown.contains(bottom)):
            out.append(f"{name} {top.y()}..{bottom.y()} of {shown.height()}")
    badge_bottom = strip.mapTo(view, a.bottomLeft().toPoint()).y() + (under - a.bottom())
    if badge_bottom > shown.bottom():
        out.append(f"badge ends at {badge_bottom} of {shown.height()}")
    return out


@pytest.mark.parametrize(
    "piece", [" \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466", "abracadabra" * 8]
)
def test_the_pair_merged_next_shows_whole_in_a_narrow_pane(qtbot, piece):
    """The audit, at 384 x 300: the chips scrolled only to the pair's right chip, so a pair
    cut by the wrap showed one chip ("<8d>" of "<e2><80> + <8d>") and no badge, and with
    several rows the tops of the chips were cut."""
    panel = panel_of(qtbot, gpt2_hub(), 384, 300)
    w = replayed(qtbot, panel, piece)
    assert len(w.steps) > 3
    rows = set()
    for i, step in enumerate(w.steps):
        panel.show_step(i)
        qtbot.wait(1)
        rows.update(panel.strip.chip_rect(k).top() for k in range(len(step.tokens)))
        if step.chosen is not None:
            assert pair_shows_whole(panel) == [], (i, piece)
    assert len(rows) > 1  # the strip did wrap


# -------------------------------------------------------------------------- the menu
def test_a_text_of_more_pieces_than_the_menu_lists_says_so(qtbot):
    """The audit: a 100 KB paste of 23,507 pre-tokens silently listed the first 500."""
    panel = panel_of(qtbot, gpt2_hub())
    text = " ".join(f"w{'x' * (i % 7)}" for i in range(1200))  # 1,200 pre-tokens (GPT-2)
    w = replayed(qtbot, panel, text, typed=True)
    assert len(w.pieces) == 1200
    origin = panel.origin.text()
    assert "1,200 pieces" in origin and "1–500" in origin and "editor" in origin, origin
    menu = panel.piece_menu
    items = [menu.itemText(r) for r in range(menu.count())]
    assert any("of 1,200" in t for t in items), items[-3:]

    def pick(number: int) -> None:
        """Pick piece ``number`` (1-based) if the menu lists it, else the last one listed."""
        rows = [r for r in range(menu.count()) if menu.itemData(r) is not None]
        row = next((r for r in rows if menu.itemData(r) == number - 1), rows[-1])
        index = menu.itemData(row)
        menu.setCurrentIndex(row)
        menu.activated.emit(row)
        qtbot.waitUntil(
            lambda: panel.walkthrough.index == index and not panel.busy,
            timeout=20_000,
        )

    for _ in range(6):  # each pick near an end lists that piece's neighbours
        if panel.walkthrough.index == 1199:
            break
        pick(1200)
    w = panel.walkthrough
    assert w.index == 1199 and w.piece == " w" + "x" * (1199 % 7)
    assert "1,200 pieces" in panel.origin.text()
