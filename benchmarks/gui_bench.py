"""GUI training speed and responsiveness against headless training, on the same corpus.

For each corpus it measures, best of ``--repeat`` runs:
- headless: ``trainer_from_file`` then iterating the trainer (what ``train_bpe`` does), timing
  the merge phase and the whole call;
- GUI: the real main window (offscreen), Train clicked, until the result arrives; the merge
  phase as the worker timed it, the whole run from the click, and the largest gap between two
  ticks of a 10 ms ``QTimer`` heartbeat on the GUI thread while training ran and
  for ``END_WATCH_MS`` after it ended (the views switching to the finished run); from the first
  merge on, the share of the time the window held the trainer (frames and their repaints) and
  the frames shown per second (``responsiveness.frame_budget.FrameBudget``); with the
  compression curve's recording off and on (``--curve``), and with it on, how long its thread
  still needed after the run ended (``curve_lag_s``). The three kinds of run take turns, so a
  loaded machine slows them alike;
- the editor: pasting 1 MB of English and Chinese, the time the paste itself takes on the GUI
  thread and the largest heartbeat gap until the background tokenizing is done.

These are the timings the GUI tests do not assert (they would measure the machine).

    QT_QPA_PLATFORM=offscreen python benchmarks/gui_bench.py [--repeat 3] [--json out.json]
        [--curve off|on|both] [--english-mb 20] [--no-paste] [--frames] [--profile]

Corpora: the bundled TinyStories sample (vocab 10,000) and, when ``../shared/corpora`` (or
``$BPE_STUDIO_CORPORA``) is there, the first ``--english-mb`` MB of ``english_books.txt``
(line-aligned, as the training benchmark takes it; 0: the whole 38 MB), vocab 10,000.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.corpora import line_slice, scratch_dir  # noqa: E402
from bpe_studio.core import trainer_from_file  # noqa: E402
from bpe_studio.gui.app import DEMO_CORPUS, application  # noqa: E402

SPECIALS = ["<|endoftext|>"]
PARTS = ("before merging", "merging", "end")
END_WATCH_MS = 400  # the heartbeat watches this long after the run's ``finished``


def corpora(english_mb: float, scratch: Path) -> list[tuple[str, Path, int]]:
    found = [("tinystories sample (2.1 MB)", DEMO_CORPUS, 10_000)]
    shared = Path(os.environ.get("BPE_STUDIO_CORPORA", ROOT.parent / "shared" / "corpora"))
    books = shared / "english_books.txt"
    if books.exists():
        if english_mb:
            sliced = scratch / "english_books_slice.txt"
            sliced.write_bytes(line_slice(books, 0, int(english_mb * 1_000_000)))
            found.append((f"english_books, first {english_mb:g} MB", sliced, 10_000))
        else:
            found.append(("english_books (37.9 MB)", books, 10_000))
    return found


def headless(path: Path, vocab_size: int) -> dict:
    # As in a plain headless process: the cyclic collector on. (The app turns automatic
    # collection off for the whole process once a window exists, so without this the
    # headless runs after a GUI run would be measured without it.)
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        start = time.perf_counter()
        trainer = trainer_from_file(path, vocab_size, SPECIALS)
        merge_start = time.perf_counter()
        merges = sum(1 for _ in trainer)
        end = time.perf_counter()
    finally:
        if not was_enabled:
            gc.disable()
    return {"merges": merges, "merge_seconds": end - merge_start, "total_seconds": end - start}


class FrameLog:
    """What the GUI thread itself does per frame while training: each drain of the worker's
    merges, each published frame (drain + every view's update) and each repaint of the
    window, as wall and GUI-thread CPU seconds. CPU time leaves out waiting for the GIL, so
    it is the GUI's own work however loaded the machine is; wall time includes the waits."""

    KINDS = ("drain", "frame", "repaint")

    def __init__(self) -> None:
        self.times: dict[str, list[tuple[float, float]]] = {k: [] for k in self.KINDS}

    @contextmanager
    def timing(self, kind: str) -> Iterator[None]:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            self.times[kind].append((time.perf_counter() - wall, time.thread_time() - cpu))

    def watch(self, session) -> None:
        """Time the session's drains and frames (looked up on the instance at each call)."""
        drain, frame = session._drain, session._flush_now

        def timed_drain(**kwargs) -> None:
            with self.timing("drain"):
                drain(**kwargs)

        def timed_frame() -> None:
            with self.timing("frame"):
                frame()

        session._drain, session._flush_now = timed_drain, timed_frame

    def summary(self) -> dict:
        out = {}
        for kind, pairs in self.times.items():
            if not pairs:
                continue
            walls = sorted(w * 1000 for w, _ in pairs)
            cpus = sorted(c * 1000 for _, c in pairs)
            out[kind] = {
                "count": len(pairs),
                "cpu_median_ms": round(statistics.median(cpus), 2),
                "cpu_max_ms": round(cpus[-1], 1),
                "wall_median_ms": round(statistics.median(walls), 2),
                "wall_max_ms": round(walls[-1], 1),
            }
        return out


def gui(
    path: Path,
    vocab_size: int,
    curve: bool = False,
    frames: FrameLog | None = None,
    profile: cProfile.Profile | None = None,
) -> dict:
    from PySide6.QtCore import QEvent, QEventLoop, QTimer

    from bpe_studio.gui.main_window import MainWindow

    class TimedWindow(MainWindow):
        def event(self, event: QEvent) -> bool:
            if frames is None or event.type() != QEvent.Type.UpdateRequest:
                return super().event(event)
            with frames.timing("repaint"):
                return super().event(event)

    app = application()  # styled as the app is: Fusion, its style sheet, antialiased plots
    window = TimedWindow()
    window.resize(window.sizeHint())
    window.show()
    app.processEvents()
    window.open_corpus(path)
    window.panel.vocab_spin.setValue(vocab_size)
    window.panel.workers_spin.setValue(os.cpu_count() or 1)
    window.curve.record_box.setChecked(curve)

    state = {"last": 0.0, "gap": 0.0, "on": False, "where": "", "cpu": 0.0, "gap_cpu": 0.0}
    # The trainer held and the frames shown from the first merge on (the session's own
    # counters, read at the first heartbeat that finds a merge recorded).
    merging: dict[str, float] = {}

    # The largest gap in each part of the run: before the first merge (pre-tokenizing, the
    # views' reset), while merging, and from the run's end on (the views switching to it).
    parts = {"before merging": 0.0, "merging": 0.0, "end": 0.0}

    def beat() -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        if not merging and window.state.record:
            merging["held"] = session.turn.held_seconds
            merging["frames"] = session.frames.frames
        if state["on"]:
            run = window.state
            part = (
                "end" if not run.phase.training else "merging" if run.record else "before merging"
            )
            parts[part] = max(parts[part], now - state["last"])
        if state["on"] and now - state["last"] > state["gap"]:
            state["gap"] = now - state["last"]
            # The GUI thread's own CPU time within the gap; the rest of it was waiting (for
            # the GIL, or for a core of a loaded machine).
            state["gap_cpu"] = cpu - state["cpu"]
            run = window.state
            state["where"] = (
                f"{run.phase.value} at {len(run.record)} merges,"
                f" {(state['last'] - start) * 1000:.0f} ms after Train"
            )
        state["last"], state["cpu"] = now, cpu

    heart = QTimer()
    heart.setInterval(10)
    heart.timeout.connect(beat)
    heart.start()
    start = time.perf_counter()
    state["last"], state["cpu"], state["on"] = start, time.thread_time(), True
    if profile is not None:
        profile.enable()
    window.start_training()
    loop = QEventLoop()
    session = window.controller.session
    assert session is not None
    if frames is not None:
        frames.watch(session)
    session.finished.connect(loop.quit)  # after a failure too, with None
    loop.exec()  # a real event loop that sleeps when idle, as app.exec() does
    total = time.perf_counter() - start
    held = session.turn.held_seconds - merging.get("held", 0.0)
    shown = session.frames.frames - merging.get("frames", 0)
    # The views switch to the finished run after ``finished`` (and repaint after that): the
    # heartbeat keeps watching for END_WATCH_MS more.
    QTimer.singleShot(END_WATCH_MS, loop.quit)
    loop.exec()
    if profile is not None:
        profile.disable()
    state["on"] = False
    heart.stop()
    ended = time.perf_counter()
    while window.curve.feeder.busy:  # the curve's thread catching up with the last merges
        app.processEvents()
        time.sleep(0.005)
    curve_lag = time.perf_counter() - ended
    curves = {n: len(s.tokens) - 1 for n, s in window.curve.feeder.series.items()}
    result = window.state.result
    window.close_without_asking()  # the run is the benchmark's: no question
    app.processEvents()
    if result is None:
        raise RuntimeError(f"GUI training failed: {window.last_error}")
    window.deleteLater()
    app.processEvents()
    return {
        "merges": len(result.merges),
        "merge_seconds": result.merge_seconds,
        "total_seconds": total,
        "max_gap_ms": state["gap"] * 1000,
        "max_gap_by_part_ms": {k: round(v * 1000, 1) for k, v in parts.items()},
        "max_gap_gui_cpu_ms": state["gap_cpu"] * 1000,
        "where": state["where"],
        "curve_lag_s": curve_lag,
        "curve_merges": curves,
        # Of the merge phase: the share of its wall time the window held the trainer (each
        # frame's update and the repaints after it), and the frames shown per second.
        "held_share": held / result.merge_seconds if result.merge_seconds else 0.0,
        "frames_per_s": shown / result.merge_seconds if result.merge_seconds else 0.0,
    }


def paste() -> dict:
    """Paste 1 MB of English and Chinese into the editor with a trained tokenizer: how long the
    paste blocks the GUI thread, and its largest heartbeat gap until the spans arrive."""
    from PySide6.QtCore import QEventLoop, QTimer

    from bpe_studio.core import Tokenizer, train_bpe
    from bpe_studio.gui.model.tokenizer_source import TokenizerSource
    from bpe_studio.gui.views.token_editor import TokenEditor

    fixtures = ROOT / "tests" / "fixtures"
    app = application()  # styled as the app is: Fusion, its style sheet, antialiased plots
    vocab, merges = train_bpe(fixtures / "chinese_slice.txt", 700, SPECIALS)
    english = (fixtures / "english_books_slice.txt").read_text(encoding="utf-8")
    chinese = (fixtures / "chinese_slice.txt").read_text(encoding="utf-8")
    big = ((english + chinese) * 4)[:1_000_000]
    editor = TokenEditor()
    editor.resize(700, 400)
    editor.show()
    editor.set_tokenizer(TokenizerSource("bench", tokenizer=Tokenizer(vocab, merges, SPECIALS)))
    loop = QEventLoop()
    editor.spans_ready.connect(loop.quit)
    loop.exec()
    state = {"last": 0.0, "gap": 0.0}

    def beat() -> None:
        now = time.perf_counter()
        state["gap"] = max(state["gap"], now - state["last"])
        state["last"] = now

    heart = QTimer()
    heart.setInterval(10)
    heart.timeout.connect(beat)
    start = time.perf_counter()
    editor.set_text(big)
    pasted = time.perf_counter() - start
    state["last"] = time.perf_counter()
    heart.start()
    loop.exec()
    heart.stop()
    editor.shutdown()
    editor.close()
    app.processEvents()
    return {"paste_ms": pasted * 1000, "max_gap_ms": state["gap"] * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--verbose", action="store_true", help="print every GUI run")
    parser.add_argument(
        "--curve", choices=["off", "on", "both"], default="both", help="compression curve"
    )
    parser.add_argument(
        "--english-mb", type=float, default=20, help="MB of english_books.txt (0: all)"
    )
    parser.add_argument("--no-paste", action="store_true", help="skip the editor paste")
    parser.add_argument("--english-only", action="store_true", help="skip the bundled sample")
    parser.add_argument(
        "--frames",
        action="store_true",
        help="time the GUI thread's own work per drain, frame and repaint while training",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="profile the GUI thread's CPU time while training (slows it)",
    )
    args = parser.parse_args()
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.curve]
    rows = []
    scratch = scratch_dir()
    found = corpora(args.english_mb, Path(scratch.name))
    if args.english_only:
        found = [c for c in found if c[0].startswith("english")]
        if not found:
            parser.error("english_books.txt not found (set BPE_STUDIO_CORPORA)")
    for name, path, vocab_size in found:
        h: list[dict] = []
        g: dict[bool, list[dict]] = {mode: [] for mode in modes}
        for _ in range(args.repeat):  # taking turns: the machine's load falls on all alike
            h.append(headless(path, vocab_size))
            for mode in modes:
                log = FrameLog() if args.frames else None
                prof = cProfile.Profile(time.thread_time) if args.profile else None
                g[mode].append(gui(path, vocab_size, curve=mode, frames=log, profile=prof))
                if log is not None:
                    g[mode][-1]["frames"] = log.summary()
                if prof is not None:
                    out = io.StringIO()
                    stats = pstats.Stats(prof, stream=out).sort_stats("cumulative")
                    stats.print_stats(r"bpe_studio|pyqtgraph", 30)
                    print(f"GUI thread CPU, {name}, curve {'on' if mode else 'off'}:")
                    print(out.getvalue(), flush=True)
        if args.verbose:
            for mode in modes:
                for r in g[mode]:
                    shown = {k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}
                    print(f"  GUI run (curve {'on' if mode else 'off'}):", shown, flush=True)
        hb = min(h, key=lambda r: r["merge_seconds"])
        for mode in modes:
            gb = min(g[mode], key=lambda r: r["merge_seconds"])
            assert hb["merges"] == gb["merges"], (hb, gb)
            if mode:
                assert set(gb["curve_merges"].values()) == {gb["merges"]}, gb["curve_merges"]
            row = {
                "corpus": name,
                "curve": "on" if mode else "off",
                "vocab_size": vocab_size,
                "merges": hb["merges"],
                "headless_merges_per_s": hb["merges"] / hb["merge_seconds"],
                "gui_merges_per_s": gb["merges"] / gb["merge_seconds"],
                "headless_total_s": min(r["total_seconds"] for r in h),
                "gui_total_s": min(r["total_seconds"] for r in g[mode]),
                "max_heartbeat_gap_ms": max(r["max_gap_ms"] for r in g[mode]),
                "max_gap": {
                    k: worst[k]
                    for k in ("where", "max_gap_gui_cpu_ms")
                    for worst in [max(g[mode], key=lambda r: r["max_gap_ms"])]
                },
                "max_gap_by_part_ms": {
                    k: max(r["max_gap_by_part_ms"][k] for r in g[mode]) for k in PARTS
                },
                "curve_lag_s": max(r["curve_lag_s"] for r in g[mode]),
                "held_share": statistics.median(r["held_share"] for r in g[mode]),
                "frames_per_s": statistics.median(r["frames_per_s"] for r in g[mode]),
                "load_average": os.getloadavg()[0],
            }
            if args.frames:
                row["frames"] = {
                    kind: {
                        key: max(r["frames"][kind][key] for r in g[mode] if kind in r["frames"])
                        for key in next(r["frames"][kind] for r in g[mode] if kind in r["frames"])
                    }
                    for kind in FrameLog.KINDS
                    if any(kind in r["frames"] for r in g[mode])
                }
            row["gui_vs_headless"] = row["gui_merges_per_s"] / row["headless_merges_per_s"]
            rows.append(row)
            print(
                f"{name}, curve {row['curve']}: {row['merges']:,} merges | headless"
                f" {row['headless_merges_per_s']:,.0f} merges/s | GUI"
                f" {row['gui_merges_per_s']:,.0f} merges/s ({row['gui_vs_headless']:.0%})"
                f" | whole run headless {row['headless_total_s']:.2f} s, GUI"
                f" {row['gui_total_s']:.2f} s | max GUI heartbeat gap"
                f" {row['max_heartbeat_gap_ms']:.0f} ms | curve done"
                f" {row['curve_lag_s']:.2f} s after the run (worst of {args.repeat} runs)"
                f" ({row['max_gap']['where']}; GUI thread CPU in it"
                f" {row['max_gap']['max_gap_gui_cpu_ms']:.0f} ms; by part:"
                f" {', '.join(f'{k} {v:.0f}' for k, v in row['max_gap_by_part_ms'].items())} ms)"
                f" | merging: trainer held"
                f" {row['held_share']:.0%} of the time, {row['frames_per_s']:.1f} frames/s"
                f" (medians) | load {row['load_average']:.2f}",
                flush=True,
            )
            for kind, f in row.get("frames", {}).items():
                print(
                    f"    GUI thread per {kind}: CPU median {f['cpu_median_ms']:.2f} ms, max"
                    f" {f['cpu_max_ms']:.1f} ms | wall median {f['wall_median_ms']:.2f} ms, max"
                    f" {f['wall_max_ms']:.1f} ms ({f['count']} of them; worst of the runs)",
                    flush=True,
                )
    scratch.cleanup()
    if args.no_paste:
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        return 0
    pastes = [paste() for _ in range(args.repeat)]
    row = {
        "corpus": "editor: 1 MB paste",
        "paste_ms": min(p["paste_ms"] for p in pastes),
        "max_heartbeat_gap_ms": max(p["max_gap_ms"] for p in pastes),
    }
    rows.append(row)
    print(
        f"editor, 1 MB paste (English + Chinese): paste {row['paste_ms']:.0f} ms (best of"
        f" {args.repeat}) | max GUI heartbeat gap while tokenizing"
        f" {row['max_heartbeat_gap_ms']:.0f} ms (worst of {args.repeat})",
        flush=True,
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
