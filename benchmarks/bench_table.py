"""The vocabulary table on 200,000 tokens: the longest GUI-thread stall while filtering and sorting.

It loads o200k_base (``Tokenizer.preset("o200k_base")``, 200,019 tokens) into the real
vocabulary table (offscreen, in a top-level window that paints as the app's main window does:
background jobs wait between their slices while it repaints), runs a 5 ms ``QTimer`` heartbeat
on the GUI thread, and measures the largest gap between two beats (the longest the window
could not respond) and the time until the table shows the result, for:
- showing the tokenizer (the model reset, and reachability starting in the background), then
  waiting while the fonts of its scripts are loaded between events;
- typing five characters into the filter, one every 80 ms, as a person types, and clearing it;
- scrolling to the end and back; sorting by each column, ascending then descending (a header
  click each), and scrolling to the end of the last order;
- "Unreachable only" on and off; "Hide tokens after step" with the timeline moved to the
  middle and the end;
each action once (the first time, which also pays for what Qt does once) and again.
``--no-warmup`` leaves the fonts to be loaded by the repaints that first need them (as before).

Issue 11 asks for no stall over 100 ms. These are timings, so the tests do not assert them.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_table.py [--json out.json] [--no-warmup]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TYPED = "hello"
KEY_INTERVAL_MS = 80


def loaded_o200k():
    """o200k_base as the loader prepares a tokenizer for the tables (off the clock)."""
    from bpe_studio.core import Tokenizer
    from bpe_studio.gui.model.state import LoadedTokenizer, MergeRow, vocab_rows

    tok = Tokenizer.preset("o200k_base")
    inverse = {t: i for i, t in sorted(tok.vocab.items(), reverse=True)}
    rows = [MergeRow(r, a, b, inverse[a + b]) for r, (a, b) in enumerate(tok.merges)]
    specials = list(tok.special_tokens)
    table = vocab_rows(tok.vocab, tok.merges)
    return LoadedTokenizer(tok, Path("o200k_base"), Path("o200k_base"), specials, rows, table)


class Heart:
    """The longest gap between two ticks of a 5 ms timer on the GUI thread, and the GUI
    thread's CPU time within that gap (its own work; the rest of the gap is waiting: for the
    GIL held by a background job, or for a core on a loaded machine)."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._beat)
        self.last, self.last_cpu = time.perf_counter(), time.thread_time()
        self.gap = self.gap_cpu = 0.0

    def _beat(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        if now - self.last > self.gap:
            self.gap, self.gap_cpu = now - self.last, cpu - self.last_cpu
        self.last, self.last_cpu = now, cpu

    def start(self) -> None:
        self.last, self.last_cpu = time.perf_counter(), time.thread_time()
        self.gap = self.gap_cpu = 0.0
        self.timer.start()

    def stop(self) -> tuple[float, float]:
        """The longest gap and the GUI thread's CPU time within it, in ms."""
        self._beat()
        self.timer.stop()
        return self.gap * 1000, self.gap_cpu * 1000


def wait(app, condition, timeout: float = 120.0) -> None:
    from PySide6.QtCore import QEventLoop

    end = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > end:
            raise RuntimeError("timed out")
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--no-warmup",
        action="store_true",
        help="do not load the fonts of the vocabulary's scripts ahead (as before it did)",
    )
    args = parser.parse_args()

    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from bpe_studio.gui.app import application
    from bpe_studio.gui.model.app_model import AppModel
    from bpe_studio.gui.responsiveness.collector import (
        collect_on_gui_thread,
        keep_out_of_collections,
    )
    from bpe_studio.gui.responsiveness.trainer_hold import HoldTrainerWhilePainting
    from bpe_studio.gui.views.vocab_table import VocabTableView

    class Host(HoldTrainerWhilePainting, QWidget):
        """The table's top-level window, painting as the app's main window does (background
        jobs wait between their slices while it repaints)."""

    app = application()  # styled as the app is: Fusion, its style sheet, antialiased plots
    # As the app does: the cyclic collector runs on the GUI thread's timer, and a loaded
    # tokenizer's objects are kept out of its passes (Controller._on_loaded).
    collect_on_gui_thread()
    loaded = loaded_o200k()
    keep_out_of_collections()
    hub = AppModel()
    host = Host()
    view = VocabTableView(hub, host)
    QVBoxLayout(host).addWidget(view)
    if args.no_warmup:
        view.warmer.start = lambda samples: None  # type: ignore[method-assign]
    host.resize(700, 600)
    host.show()
    app.processEvents()
    heart = Heart()
    results: dict[str, dict] = {}

    def record(what: str, start: float, again: bool = False) -> None:
        row = results.setdefault(what, {"action": what})
        time_ = "again" if again else "first"
        stall, cpu = heart.stop()
        row[f"{time_}_max_stall_ms"] = round(stall, 1)
        row[f"{time_}_stall_cpu_ms"] = round(cpu, 1)
        row[f"{time_}_done_after_ms"] = round((time.perf_counter() - start) * 1000, 1)
        row["rows_shown"] = view.proxy.rowCount()

    heart.start()
    start = time.perf_counter()
    wait(app, lambda: time.perf_counter() > start + 2)
    record("nothing (2 s idle: the machine's own noise)", start)

    heart.start()
    start = time.perf_counter()
    hub.show_loaded(loaded)
    wait(app, lambda: view.model.unreachable is not None)
    record(f"show {len(loaded.vocab_rows):,} tokens (+ reachability in the background)", start)

    heart.start()
    start = time.perf_counter()
    wait(app, lambda: not view.warming)
    record("until the fonts of its scripts are loaded (in the background)", start)

    header = view.table.horizontalHeader()
    names = view.model.HEADERS
    ascending, descending = Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder
    bar = view.table.verticalScrollBar()

    def typing() -> None:
        view.filter_edit.setFocus()
        for i, ch in enumerate(TYPED):
            QTimer.singleShot(
                i * KEY_INTERVAL_MS, lambda ch=ch: QTest.keyClick(view.filter_edit, ch)
            )

    def sort(col: int, order: Qt.SortOrder):
        return lambda: header.setSortIndicator(col, order)  # what a header click does

    def scroll(value: int | None):
        return lambda: bar.setValue(bar.maximum() if value is None else value)

    middle = len(loaded.merge_rows) // 2
    # (what, action, done when): each runs once as the first time, then again.
    actions = [
        (
            f"type {TYPED!r} into the filter (one key per {KEY_INTERVAL_MS} ms)",
            typing,
            lambda: view.filter_edit.text() == TYPED,
        ),
        ("clear the filter", view.filter_edit.clear, lambda: True),
        ("scroll to the end (id order)", scroll(None), lambda: True),
        ("scroll to the top", scroll(0), lambda: True),
    ]
    for col, name in enumerate(names):
        for order, way in ((ascending, "ascending"), (descending, "descending")):
            actions.append((f"sort by {name} {way}", sort(col, order), lambda: True))
    actions += [
        ("scroll to the end (sorted)", scroll(None), lambda: True),
        ("back to id order", sort(-1, ascending), lambda: True),
        ("unreachable only", lambda: view.unreachable_box.setChecked(True), lambda: True),
        ("all tokens again", lambda: view.unreachable_box.setChecked(False), lambda: True),
        ("hide tokens after step", lambda: view.hide_box.setChecked(True), lambda: True),
        (f"timeline to step {middle:,}", lambda: hub.select_step(middle), lambda: True),
        (
            "timeline to the last step",
            lambda: hub.select_step(len(loaded.merge_rows)),
            lambda: True,
        ),
        ("show later tokens again", lambda: view.hide_box.setChecked(False), lambda: True),
    ]
    # Twice: the first time also pays for what Qt does once (fonts for scripts not drawn yet,
    # the sort keys of the token texts); the second is what every later time costs.
    for again in (False, True):
        for what, act, done in actions:
            heart.start()
            start = time.perf_counter()
            act()
            wait(app, lambda done=done: done() and not view.busy)
            # Until the result is on screen: the view's repaint after the change.
            app.processEvents()
            record(what, start, again)

    view.shutdown()
    host.close()
    rows = list(results.values())
    width = max(len(r["action"]) for r in rows)
    heads = ("longest stall", "its GUI CPU", "done after")
    print(f"{'':<{width}}" + "".join(f"  {h:^21}" for h in heads))
    print(f"{'action':<{width}}" + f"  {'first':>10} {'again':>10}" * 3 + "  rows")
    for r in rows:
        values = [
            r.get(f"{t}_{what}")
            for what in ("max_stall_ms", "stall_cpu_ms", "done_after_ms")
            for t in ("first", "again")
        ]
        cells = "".join(
            f"{' ' if i % 2 else '  '}" + (f"{v:>8.1f}ms" if v is not None else f"{'':>10}")
            for i, v in enumerate(values)
        )
        print(f"{r['action']:<{width}}{cells}  {r['rows_shown']:>8,}")
    stalls = [r[k] for r in rows for k in r if k.endswith("max_stall_ms")]
    cpus = [r[k] for r in rows for k in r if k.endswith("stall_cpu_ms")]
    print(f"most GUI-thread CPU within one stall: {max(cpus):.1f} ms")
    print(f"longest GUI-thread stall: {max(stalls):.1f} ms (load: {os.getloadavg()[0]:.2f})")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
