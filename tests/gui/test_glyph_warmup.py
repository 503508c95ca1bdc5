"""The vocabulary table loads the fonts of its tokens' scripts ahead of the first repaint that
needs them (issue 11 item 9: o200k's first "sort by ID descending" stalled on Malayalam and
Telugu fallback fonts). Timing is benchmarks/bench_table.py's; these test the behaviour."""

from __future__ import annotations

import time
import unicodedata

from PySide6.QtWidgets import QWidget

# close_tables: the autouse fixture that closes the tables table_for made, here too (they are
# kept in that module's list, which its next test would otherwise find already deleted).
from test_tables_items import close_tables, loaded_hub, table_for  # noqa: F401

from bpe_studio.core import Tokenizer
from bpe_studio.core.text.display import readable_token
from bpe_studio.core.train.vocab import initial_vocab
from bpe_studio.gui.views.glyph_warmup import script_samples

MALAYALAM = "പ്രമുഖ"
TELUGU = "చర్య"
CJK = "中文"


def _script_word(text: str) -> str:
    return unicodedata.name(text[0]).split()[0]


def test_one_sample_per_script_the_tokens_hold():
    tokens = [MALAYALAM.encode(), TELUGU.encode(), CJK.encode(), b"hello", b" w"]
    samples = script_samples(tokens)
    # Slow reference: every non-ASCII character the tokens hold, by the first word of its name.
    wanted = {_script_word(ch) for t in tokens for ch in t.decode() if ch >= "\x80"}
    assert wanted == {"MALAYALAM", "TELUGU", "CJK"}
    got = {_script_word(s) for s in samples}
    assert wanted <= got
    # A few samples per script (letters, signs), not one per character.
    for word in wanted:
        chars = {ch for t in tokens for ch in t.decode() if _script_word(ch) == word}
        assert 1 <= sum(_script_word(s) == word for s in samples) < len(chars)
    # The tables' substitutes for bytes and invisible characters are laid out too.
    for byte in (b" ", b"\n", b"\xe6"):  # "␣", "↵", "<e6>" (its "<" stands for it)
        assert readable_token(byte)[0] in samples


def test_table_lays_out_its_scripts_on_the_gui_thread_once_a_tokenizer_is_shown(qtbot):
    vocab = initial_vocab([]) | {256: MALAYALAM.encode(), 257: TELUGU.encode()}
    hub = loaded_hub(Tokenizer(vocab, [], []))
    view = table_for(qtbot, hub)
    started: list[list[str]] = []
    real = view.warmer.start
    view.warmer.start = lambda samples: (started.append(samples), real(samples))
    hub.reset.emit()  # as a newly loaded tokenizer does
    qtbot.waitUntil(lambda: bool(started) and not view.warming, timeout=30_000)
    words = {_script_word(s) for s in started[-1]}
    assert {"MALAYALAM", "TELUGU"} <= words
    assert view.warmer.pending == 0


def test_a_new_tokenizer_or_closing_drops_the_queued_samples(qtbot):
    vocab = initial_vocab([]) | {256: MALAYALAM.encode()}
    hub = loaded_hub(Tokenizer(vocab, [], []))
    view = table_for(qtbot, hub)
    view.warmer.start(["a"] * 100_000)  # far more than one turn lays out
    assert view.warmer.pending > 0
    hub.reset.emit()  # the samples of the tokenizer shown now come from a new job
    assert view.warmer.pending == 0
    view.warmer.start(["a"] * 100_000)
    view.shutdown()
    assert view.warmer.pending == 0


def test_a_slow_layout_ends_its_turn_and_spaces_the_next(qtbot, monkeypatch):
    # A script no installed font covers makes one layout long (Qt's walk through every
    # fallback family). The turn must stop there, and the next wait at least as long as it
    # took, so the event loop serves other work between two walks.
    from bpe_studio.gui.views import glyph_warmup

    slow_s = 4 * glyph_warmup.TURN_BUDGET_S
    laid_out: list[str] = []

    class SlowMetrics:
        def __init__(self, *args: object) -> None:
            pass

        def horizontalAdvance(self, text: str) -> int:  # noqa: N802 - Qt's name
            laid_out.append(text)
            time.sleep(slow_s)  # at least this long: the spacing below follows from it
            return 1

    monkeypatch.setattr(glyph_warmup, "QFontMetrics", SlowMetrics)
    widget = QWidget()
    qtbot.addWidget(widget)
    warmer = glyph_warmup.GlyphWarmer(widget)
    warmer.start(["x", "y", "z"])
    warmer._timer.stop()  # turns are driven by hand below
    warmer._turn()
    assert laid_out == ["x"]  # one slow layout, then the turn ends
    assert warmer._timer.isActive()
    assert warmer._timer.interval() >= slow_s * 1000
    qtbot.waitUntil(lambda: warmer.pending == 0, timeout=30_000)
    assert laid_out == ["x", "y", "z"]
    assert not warmer._timer.isActive()
