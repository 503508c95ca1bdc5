"""The vocabulary table and pair chart against issue 9 (reachability) and issue 11 (items 9, 11,
12, 20): sorting and filtering off the GUI thread, escaped titles, phase notes, one step per
frame, uncrowded labels, one id format, hints on empty plots.

References are written here: reachability by merging a token's bytes lowest rank first in plain
Python, sorting with Python's stable ``sorted``, filtering with ``in``.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from core_helpers import in_no_text
from gui_helpers import EOT, FIXTURES, train_in_window
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPainter

from bpe_studio.core import BpeTrainer, Tokenizer
from bpe_studio.core.text.display import readable_token
from bpe_studio.core.train.vocab import initial_vocab
from bpe_studio.gui.jobs.loader import prepare
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.state import LoadedTokenizer, MergeRow, Phase, RunSettings, vocab_rows
from bpe_studio.gui.model.vocab_index import ViewSpec
from bpe_studio.gui.views.pair_chart import (
    FAILED_NOTE,
    IDLE_NOTE,
    MIN_WIDTH,
    PRETOKENIZING_NOTE,
    PairChart,
    loaded_note,
    log_ticks,
    pair_label,
)
from bpe_studio.gui.views.theme import colours
from bpe_studio.gui.views.vocab_table import VocabTableView

GPT2 = (FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")


def slow_unreachable(vocab: dict[int, bytes], merges, specials: set[int]) -> set[int]:
    rank = {pair: r for r, pair in reversed(list(enumerate(merges)))}
    inverse: dict[bytes, int] = {}
    for i, t in sorted(vocab.items(), reverse=True):
        inverse[t] = i
    out = set()
    for i, token in vocab.items():
        if i in specials:
            continue
        parts = [bytes([b]) for b in token]
        while len(parts) > 1:
            ranked = [(rank.get(p, 1 << 60), j) for j, p in enumerate(zip(parts, parts[1:]))]
            best, j = min(ranked)
            if best == 1 << 60:
                break
            parts[j : j + 2] = [parts[j] + parts[j + 1]]
        if len(parts) != 1 or inverse[parts[0]] != i or in_no_text(token):
            out.add(i)  # merged into another token, or in no text (tokens of no UTF-8)
    return out


def loaded_hub(tokenizer: Tokenizer, name: str = "vocab.json") -> AppModel:
    merges = tokenizer.merges
    inverse = {t: i for i, t in sorted(tokenizer.vocab.items(), reverse=True)}
    rows = [MergeRow(r, a, b, inverse[a + b]) for r, (a, b) in enumerate(merges)]
    loaded = LoadedTokenizer(
        tokenizer,
        Path(name),
        Path("merges.txt"),
        list(tokenizer.special_tokens),
        rows,
        vocab_rows(tokenizer.vocab, merges),
    )
    hub = AppModel()
    hub.show_loaded(loaded)
    return hub


@pytest.fixture(scope="module")
def gpt2_loaded() -> LoadedTokenizer:
    return prepare(*GPT2)


_KEEP: list[VocabTableView] = []


@pytest.fixture(autouse=True)
def close_tables():
    """Close every table a test made: a view dropped by the garbage collector instead would
    go without its closeEvent, which ends its background jobs."""
    yield
    while _KEEP:
        _KEEP.pop().close()


def table_for(qtbot, hub: AppModel) -> VocabTableView:
    view = VocabTableView(hub)
    qtbot.addWidget(view)
    _KEEP.append(view)
    view.resize(700, 400)
    view.show()
    qtbot.waitExposed(view)
    return view


def shown_ids(view: VocabTableView) -> list[int]:
    proxy, model = view.proxy, view.model
    return [
        model.token_at(proxy.mapToSource(proxy.index(r, 0)).row())[0]
        for r in range(proxy.rowCount())
    ]


# ------------------------------------------------------------------ reachability (#9)
def test_reachability_column_filter_and_count(qtbot):
    vocab = initial_vocab([EOT]) | {257: b"ab", 258: b"bc", 259: b"abc", 260: b"abcd"}
    merges = [(b"a", b"b"), (b"b", b"c"), (b"a", b"bc"), (b"abc", b"d")]
    hub = loaded_hub(Tokenizer(vocab, merges, [EOT]))
    view = table_for(qtbot, hub)
    qtbot.waitUntil(lambda: view.model.unreachable is not None, timeout=30_000)
    expected = slow_unreachable(vocab, merges, {256})
    no_text = [0xC0, 0xC1, *range(0xF5, 0x100)]  # bytes no UTF-8 text holds
    # "abc" always becomes "ab" "c"; so "abcd" never forms
    assert expected == {*no_text, 259, 260}
    assert view.model.unreachable == expected
    model = view.model
    assert model.data(model.index(model.row_of_id(259), 5)) == "no"
    assert model.data(model.index(model.row_of_id(257), 5)) == "yes"
    assert "15 unreachable" in view.title.text()
    view.unreachable_box.setChecked(True)
    qtbot.waitUntil(lambda: not view.busy, timeout=30_000)
    assert shown_ids(view) == [*no_text, 259, 260]


def test_reachability_of_gpt2_equals_slow_reference(qtbot, gpt2_loaded):
    hub = AppModel()
    hub.show_loaded(gpt2_loaded)
    view = table_for(qtbot, hub)
    qtbot.waitUntil(lambda: view.model.unreachable is not None, timeout=60_000)
    tok = gpt2_loaded.tokenizer
    specials = {tok.special_id(s) for s in tok.special_tokens}
    assert view.model.unreachable == slow_unreachable(tok.vocab, tok.merges, specials)


def test_reachability_is_computed_off_the_gui_thread(qtbot, monkeypatch, gpt2_loaded):
    import bpe_studio.gui.views.vocab_table as vt

    threads: list[threading.Thread] = []
    real = vt.unreachable_tokens

    def spy(tokenizer, *args):
        threads.append(threading.current_thread())
        return real(tokenizer, *args)

    monkeypatch.setattr(vt, "unreachable_tokens", spy)
    hub = AppModel()
    view = table_for(qtbot, hub)
    hub.show_loaded(gpt2_loaded)
    qtbot.waitUntil(lambda: view.model.unreachable is not None, timeout=60_000)
    assert threads and threading.main_thread() not in threads


def test_background_jobs_start_after_the_table_has_repainted(qtbot, monkeypatch, gpt2_loaded):
    """Showing a tokenizer repaints the table first, then starts the reachability and glyph
    jobs (responsiveness.after_paint.AfterPaint): their GIL stretches never fall inside that
    repaint."""
    from PySide6.QtCore import QEvent, QObject

    events: list[str] = []

    class PaintLog(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt override
            if event.type() == QEvent.Type.Paint:
                events.append("paint")
            return False

    hub = AppModel()
    view = table_for(qtbot, hub)
    for name in ("_reach", "_glyphs"):
        job = getattr(view, name)
        real = job.submit
        monkeypatch.setattr(
            job, "submit", lambda fn, real=real, name=name: (events.append(name), real(fn))[1]
        )
    log = PaintLog()
    view.table.viewport().installEventFilter(log)
    hub.show_loaded(gpt2_loaded)
    assert "_reach" not in events and view.warming  # deferred, and said to be under way
    qtbot.waitUntil(lambda: view.model.unreachable is not None and not view.warming, timeout=60_000)
    view.table.viewport().removeEventFilter(log)
    assert events.index("paint") < events.index("_reach") and "_glyphs" in events


def test_a_finished_runs_reachability_is_built_off_the_gui_thread(qtbot, monkeypatch, window):
    import sys as _sys

    from bpe_studio.gui.model.state import RunState

    threads: list[threading.Thread] = []
    real = RunState.vocab_at

    def spy(self, k):
        if _sys._getframe(1).f_code.co_filename.endswith("vocab_table.py"):
            threads.append(threading.current_thread())
        return real(self, k)

    monkeypatch.setattr(RunState, "vocab_at", spy)
    result = train_in_window(qtbot, window, FIXTURES / "tinystories_slice.txt", 400)
    view = window.vocab_table
    qtbot.waitUntil(lambda: view.model.unreachable is not None and not view.warming, timeout=30_000)
    assert threads and threading.main_thread() not in threads
    # The same answer as the slow reference on the run's own vocabulary and merges.
    specials = {i for i, t in result.vocab.items() if t == EOT.encode()}
    assert view.model.unreachable == slow_unreachable(result.vocab, result.merges, specials)


# --------------------------------------------------------- #11 item 9: 200k-ready tables
def test_filtering_and_sorting_run_off_the_gui_thread(qtbot, gpt2_loaded):
    hub = AppModel()
    view = table_for(qtbot, hub)
    hub.show_loaded(gpt2_loaded)
    calls: list[threading.Thread] = []
    real = view.proxy.index_cache.order

    def spy(*args, **kwargs):
        calls.append(threading.current_thread())
        return real(*args, **kwargs)

    view.proxy.index_cache.order = spy  # type: ignore[method-assign]
    view.filter_edit.setFocus()
    qtbot.keyClicks(view.filter_edit, " the")
    # Typing computed nothing on the GUI thread: the order comes later, once.
    assert calls == [] and view.proxy.rowCount() == len(gpt2_loaded.vocab_rows)
    qtbot.waitUntil(lambda: not view.busy and view.proxy.spec.text == " the", timeout=60_000)
    assert calls and threading.main_thread() not in calls
    assert len(calls) < 4
    needle = readable_token(b" the").lower()
    expected = [
        r.token_id for r in gpt2_loaded.vocab_rows if needle in readable_token(r.token).lower()
    ]
    assert shown_ids(view) == expected and expected


@pytest.mark.parametrize("typed", ["²", "m²", "①", "٣"])
def test_digits_that_are_no_ascii_number_filter_as_text(qtbot, gpt2_loaded, typed):
    # "²" and "①" pass str.isdigit() but int() cannot read them; "٣" it reads as 3. Each is
    # a character to look for in the tokens, as any other typed text.
    hub = AppModel()
    view = table_for(qtbot, hub)
    hub.show_loaded(gpt2_loaded)
    view.filter_edit.setText(typed)
    qtbot.waitUntil(lambda: not view.ordering, timeout=60_000)
    needle = typed.encode("utf-8")
    expected = [r.token_id for r in gpt2_loaded.vocab_rows if needle in r.token]
    assert shown_ids(view) == expected
    assert "filtering" not in view.title.text() and "could not" not in view.title.text()


def test_an_order_that_fails_says_so_in_the_title(qtbot, gpt2_loaded, monkeypatch):
    hub = AppModel()
    view = table_for(qtbot, hub)
    hub.show_loaded(gpt2_loaded)

    def broken(*args, **kwargs):
        raise RuntimeError("out of order")

    monkeypatch.setattr(view.proxy.index_cache, "order", broken)
    view.filter_edit.setText("the")
    qtbot.waitUntil(lambda: "out of order" in view.title.text(), timeout=60_000)
    assert "filtering…" not in view.title.text()
    monkeypatch.undo()
    view.filter_edit.setText("they")  # the next order clears it
    qtbot.waitUntil(lambda: view.proxy.spec.text == "they" and not view.ordering, timeout=60_000)
    assert "could not" not in view.title.text()


def test_sorting_shows_the_first_rows_of_the_new_order(qtbot, gpt2_loaded):
    # Issue 23, item 13: not the rows that happen to sit at the old scroll offset.
    hub = AppModel()
    view = table_for(qtbot, hub)
    hub.show_loaded(gpt2_loaded)
    qtbot.waitUntil(lambda: not view.busy, timeout=60_000)
    bar, header = view.table.verticalScrollBar(), view.table.horizontalHeader()
    qtbot.waitUntil(lambda: bar.maximum() > 2000, timeout=10_000)
    bar.setValue(bar.maximum() // 2)
    assert view.table.rowAt(0) > 1000
    header.setSortIndicator(1, Qt.SortOrder.AscendingOrder)  # as a header click: by token
    qtbot.waitUntil(lambda: not view.busy and view.proxy.spec.sort_column == 1, timeout=60_000)
    assert bar.value() == 0 and view.table.rowAt(0) == 0
    # A selected row stays in view through the next sort, wherever the order puts it.
    token_id = 30_000
    assert view.select_token(token_id)
    header.setSortIndicator(1, Qt.SortOrder.DescendingOrder)
    qtbot.waitUntil(lambda: not view.busy and view.proxy.spec.descending, timeout=60_000)
    assert view.selected_token_id() == token_id
    row = view.proxy.mapFromSource(view.model.index(view.model.row_of_id(token_id), 0)).row()
    last = view.table.rowAt(view.table.viewport().height() - 1)
    assert view.table.rowAt(0) <= row <= last
    # Moving the timeline's step with "Hide tokens after step" keeps the offset.
    view.table.clearSelection()
    bar.setValue(bar.maximum() // 3)
    kept = bar.value()
    view.filter_edit.setText("e")
    qtbot.waitUntil(lambda: not view.busy and view.proxy.spec.text == "e", timeout=60_000)
    assert bar.value() == 0  # a filter is another order too
    bar.setValue(kept // 4)
    offset = bar.value()
    assert offset > 0
    hub.select_step(40_000)
    view.hide_box.setChecked(True)
    qtbot.waitUntil(lambda: not view.busy and view.proxy.spec.hide_after == 40_000, timeout=60_000)
    assert bar.value() == 0  # hiding rows is a new filter...
    bar.setValue(offset // 2)
    offset = bar.value()
    hub.select_step(40_001)
    qtbot.waitUntil(lambda: not view.busy and view.proxy.spec.hide_after == 40_001, timeout=60_000)
    assert bar.value() == offset  # ...but a moved step keeps the rows in view


def test_another_tokenizer_shows_its_first_rows(qtbot, gpt2_loaded):
    # An audit: GPT-2 loaded after a run scrolled to row 3,999 showed rows from 3,989 on.
    hub = AppModel()
    view = table_for(qtbot, hub)
    hub.show_loaded(gpt2_loaded)
    qtbot.waitUntil(lambda: not view.busy, timeout=60_000)
    bar = view.table.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 2000, timeout=10_000)
    bar.setValue(bar.maximum() // 2)
    assert view.table.rowAt(0) > 1000
    hub.show_loaded(prepare(*GPT2))
    qtbot.waitUntil(lambda: not view.busy and bar.maximum() > 2000, timeout=60_000)
    assert bar.value() == 0 and view.table.rowAt(0) == 0


@pytest.mark.parametrize("column", range(6))
def test_sorting_each_column_equals_python_sorted(qtbot, gpt2_loaded, column):
    hub = AppModel()
    view = table_for(qtbot, hub)
    hub.show_loaded(gpt2_loaded)
    qtbot.waitUntil(lambda: view.model.unreachable is not None, timeout=60_000)
    unreachable = view.model.unreachable
    rows = gpt2_loaded.vocab_rows

    def key(r):
        return (
            r.token_id,
            readable_token(r.token).lower(),
            len(r.token),
            -1 if r.rank is None else r.rank,
            -1 if r.count is None else r.count,
            0 if r.token_id in unreachable else 1,
        )[column]

    for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
        view.table.horizontalHeader().setSortIndicator(column, order)  # as a header click
        qtbot.waitUntil(lambda: not view.busy, timeout=60_000)
        descending = order == Qt.SortOrder.DescendingOrder
        expected = [r.token_id for r in sorted(rows, key=key, reverse=descending)]
        assert shown_ids(view) == expected, (column, order)


def test_filter_by_typed_id_with_commas(gpt2_loaded):
    hub = AppModel()
    hub.show_loaded(gpt2_loaded)
    from bpe_studio.gui.views.table_models import VocabFilterProxy, VocabTableModel

    model = VocabTableModel(hub)
    proxy = VocabFilterProxy()
    proxy.setSourceModel(model)
    proxy.set_spec(ViewSpec("50,256"))
    ids = {model.token_at(proxy.mapToSource(proxy.index(r, 0)).row())[0] for r in range(3)}
    assert 50256 in ids


# --------------------------------------------------------------- #11 item 11: escaping
def run_hub() -> AppModel:
    hub = AppModel()
    hub.begin_run(RunSettings(2000, (EOT,)), initial_vocab([EOT]))
    hub.start_merging()
    return hub


def recording_hub(counts: dict[bytes, int]) -> tuple[AppModel, BpeTrainer]:
    """A hub merging with a trainer that records its pairs (merges are appended by hand)."""
    hub = run_hub()
    trainer = BpeTrainer(counts, 2000, [EOT], record_pairs=20)
    hub.set_pair_history(trainer.pair_history)
    return hub, trainer


def test_pair_chart_title_shows_byte_tokens(qtbot):
    hub, _ = recording_hub({b"\xe6\x9c": 50_888, b"<b>x": 3})
    chart = PairChart(hub)
    qtbot.addWidget(chart)
    hub.publish()
    title = chart.pairs_plot.titleLabel.item.toPlainText()
    assert "<e6> + <9c>" in title and "50,888" in title


# ------------------------------------------------------------ #11 item 12: phases, next
def test_pair_chart_says_what_phase_it_is_in(qtbot, gpt2_loaded):
    hub = AppModel()
    chart = PairChart(hub)
    qtbot.addWidget(chart)

    def note() -> str:
        return chart._pairs_note.toPlainText() if chart._pairs_note.isVisible() else ""

    assert note() == IDLE_NOTE
    assert not chart.pairs_plot.getAxis("left").isVisible()  # a hint, not empty axes
    hub.begin_run(RunSettings(2000, (EOT,)), initial_vocab([EOT]))
    assert note() == PRETOKENIZING_NOTE
    assert "No pairs left" not in chart.pairs_plot.titleLabel.item.toPlainText()
    # First-hour audit (h_first62): while the merge engine's first compile held the run, the
    # status line said so and the chart still said the corpus was being pre-tokenized.
    hub.set_compiling(True)
    hub.publish()
    assert note() == (
        "Compiling the merge engine (first run only): pairs are counted when merging starts"
    )
    hub.set_compiling(False)
    hub.publish()
    assert note() == PRETOKENIZING_NOTE
    hub.finish(None, "the corpus is not UTF-8")
    assert hub.state.phase is Phase.FAILED and note() == FAILED_NOTE
    hub.show_loaded(gpt2_loaded)
    assert note() == loaded_note(gpt2_loaded)
    assert note().startswith(
        f"{gpt2_loaded.vocab_file.name} and {gpt2_loaded.merges_file.name} (GPT-2"
    )


def test_pair_chart_live_shows_the_pairs_before_the_next_merge(qtbot):
    hub, trainer = recording_hub({b" the": 900, b"and": 500, b" then": 40})
    chart = PairChart(hub)
    qtbot.addWidget(chart)
    merges = iter(trainer)
    hub.append_merges([next(merges)])  # (" ", "t") merged: the chart shows what comes next
    hub.publish()
    nxt = next(merges)
    assert chart.shown_pairs()[0] == (nxt.left, nxt.right, nxt.count)
    assert "live" in chart.pairs_title()


def test_pair_chart_title_cuts_its_words_before_the_pair(qtbot):
    """A session audit: "Next, rank 77,656: …" lost the pair itself, what the title is for.
    The words before the pair go first ("Next, rank k: ", "Rank k: ", "#k: "; the rank
    stays), the pair's text is cut only when it alone is too wide, and a title cut has its
    whole text in the tooltip."""
    # Long pre-tokens: late merges pair long tokens, whose title does not fit the chart.
    hub, trainer = recording_hub(
        {b"abcdefghijklmnopqrstuvwxyz": 900, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ": 800}
    )
    chart = PairChart(hub)
    qtbot.addWidget(chart)
    chart.resize(MIN_WIDTH, 400)
    chart.show()
    qtbot.waitExposed(chart)
    rows = list(trainer)
    hub.append_merges(rows)
    hub.publish()
    metrics = chart._title_metrics  # the font the titles are measured in
    shortened = elided = 0
    for k in range(len(rows)):
        hub.select_step(k)
        # The title's room: beside the left axis, as wide as its longest bar label.
        room = chart.pairs_widget.width() - chart.pairs_plot.getAxis("left").width() - 16
        title = chart.pairs_title()
        plain = chart.pairs_plot.titleLabel.item.toPlainText()
        nxt = rows[k]
        label = pair_label(nxt.left, nxt.right)
        whole = f"Next merge, rank {k:,}: {label} ({nxt.count:,})"
        prefixes = (f"Next merge, rank {k:,}: ", f"Next, rank {k:,}: ", f"Rank {k:,}: ")
        prefix = next((p for p in (*prefixes, f"#{k:,}: ") if plain.startswith(p)), None)
        assert prefix is not None, (k, plain)  # the rank is always said
        shown = plain.removeprefix(prefix).removesuffix(f" ({nxt.count:,})")
        if shown != label:  # cut to fit: only when even the shortest words leave no room
            elided += 1
            assert shown.endswith("…") and label.startswith(shown[:-1]), (k, shown, label)
            assert metrics.horizontalAdvance(f"#{k:,}: {label}") > room, (k, plain)
        if prefix not in prefixes[:2]:
            shortened += 1
        assert chart.pairs_widget.toolTip() == ("" if plain == whole else whole)
        assert colours().accent_text in title  # the pair in the accent colour
    assert shortened and elided  # the narrow chart did need both


# ----------------------------------------------------------------- #11 item 20: polish
def text_rects(axis):
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [rect for rect, _, text in texts if text]


def assert_apart(rects):
    for i, a in enumerate(rects):
        for b in rects[i + 1 :]:
            overlap = a.intersected(b)
            assert overlap.width() <= 1 or overlap.height() <= 1, (a, b)


def test_log_ticks_never_crowd_early_in_training():
    import math

    for low, high in ((2.9, 3.0), (2.0, 3.1), (1.3, 4.8), (0.0, 6.5), (4.7, 4.71)):
        ticks = log_ticks(low, high)
        assert 2 <= len(ticks) <= 10, (low, high, ticks)
        positions = [p for p, _ in ticks]
        assert positions == sorted(positions)
        assert all(low - 1e-9 <= p <= high + 1e-9 for p in positions)
        assert len({label for _, label in ticks}) == len(ticks)
        # Labels name their values: "2k" at log10(2000).
        for p, label in ticks:
            value = 10**p
            assert label.rstrip("kMG") and abs(math.log10(value) - p) < 1e-9


def test_chart_at_1024x640_has_no_overlapping_labels(qtbot, window):
    from gui_helpers import train_in_window

    from bpe_studio.gui.app import DEMO_CORPUS

    window.resize(1024, 640)
    train_in_window(qtbot, window, DEMO_CORPUS, 300)  # early: a short range of counts
    chart = window.chart
    qtbot.waitUntil(lambda: not chart.pending, timeout=30_000)
    qtbot.wait(50)
    assert chart.minimumWidth() >= MIN_WIDTH and chart.width() >= MIN_WIDTH
    for plot in (chart.pairs_plot, chart.decay_plot):
        for name in ("left", "bottom"):
            rects = text_rects(plot.getAxis(name))
            assert rects, name
            assert_apart(rects)
    window.hub.select_step(3)
    qtbot.waitUntil(lambda: not chart.pending, timeout=30_000)
    assert_apart(text_rects(chart.pairs_plot.getAxis("left")))


def test_sort_indicator_leaves_count_readable(qtbot, gpt2_loaded):
    from bpe_studio.gui.views.theme import STYLE_SHEET

    hub = AppModel()
    hub.show_loaded(gpt2_loaded)
    view = table_for(qtbot, hub)
    view.setStyleSheet(STYLE_SHEET.read_text(encoding="utf-8"))  # as the app draws it
    header, model = view.table.horizontalHeader(), view.model
    titles = model.HEADERS

    def pixels(col: int, title: bool, indicator: bool) -> set[tuple[int, int]]:
        """The dark pixels of section ``col``."""
        model.HEADERS = titles if title else tuple("" for _ in titles)
        model.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(titles) - 1)
        header.setSortIndicator(col if indicator else -1, Qt.SortOrder.DescendingOrder)
        qtbot.wait(20)
        image = header.grab().toImage()
        x0 = header.sectionViewportPosition(col)
        found = set()
        for x in range(x0, x0 + header.sectionSize(col)):
            for y in range(image.height()):
                if image.pixelColor(x, y).lightness() < 160:
                    found.add((x, y))
        return found

    try:
        for col in range(len(titles)):
            text = pixels(col, True, False)
            arrow = pixels(col, False, True) - pixels(col, False, False)
            assert text and arrow, col
            assert not text & arrow, f"the sort indicator covers {titles[col]!r}"
    finally:
        model.HEADERS = titles


def test_ids_are_formatted_with_separators(qtbot, gpt2_loaded):
    hub = AppModel()
    hub.show_loaded(gpt2_loaded)
    view = table_for(qtbot, hub)
    model = view.model
    assert model.data(model.index(model.row_of_id(50256), 0)) == "50,256"
    row = model.row_of_id(gpt2_loaded.merge_rows[1234].new_id)
    assert model.data(model.index(row, 3)) == "1,234"
    from bpe_studio.gui.views.merge_list import MergeListView

    merges = MergeListView(hub)
    qtbot.addWidget(merges)
    assert merges.model.data(merges.model.index(1234, 0)) == "1,234"


def test_first_launch_shows_hints_not_axes(qtbot, window):
    chart = window.chart
    assert chart._pairs_note.isVisible() and chart._note.isVisible()
    for plot in (chart.pairs_plot, chart.decay_plot):
        assert not plot.getAxis("left").isVisible()
        assert not plot.getAxis("bottom").isVisible()


def test_spaced_ticks_keep_labels_a_line_apart():
    from bpe_studio.gui.views.pair_chart import spaced_ticks

    ticks = [(0.0, "1"), (0.3, "2"), (0.7, "5"), (1.0, "10"), (1.3, "20")]
    # 40 px per unit, labels 14 px tall: keep a tick only 0.35 units after the last kept.
    assert [label for _, label in spaced_ticks(ticks, 40.0, 14.0)] == ["1", "5", "20"]
    assert spaced_ticks(ticks, 1000.0, 14.0) == ticks
