"""The Vocabulary lab tab responsive while it computes (issue 36): the longest GUI-thread stall.

In the real main window (offscreen), the Vocabulary lab tab shown, a 5 ms ``QTimer`` heartbeat
on the GUI thread measures the largest gap between two beats (and the GUI thread's own CPU
time inside it) from the moment the lab is asked for GPT-4o's make-up, the usage of the first
``--mb`` MB of English books (2 workers) and the overlap with GPT-4, until all three are drawn
and 300 ms after. Two ways of doing the same work, alternating, each in a new window:

- ``process``: the app's design: the lab's own process (``model.lab_process``), fed by a
  thread that only sends requests and receives results;
- ``thread``: the same core calls (``token_table``, ``corpus_usage``, ``overlap``) in a
  background thread of the GUI process (a ``LatestJob``, as the Report runs its work), the
  results handed to the same model and views.

Issue 36 asks for no gap over 100 ms. These are timings, so the tests do not assert them; the
machine is shared, so the load average is printed with them and only same-run comparisons
mean much.

    QT_QPA_PLATFORM=offscreen BPE_STUDIO_CORPORA=... python benchmarks/bench_lab.py
        [--reps 3] [--mb 20] [--ways process,thread] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_table import Heart, wait  # noqa: E402
from corpora import MB, corpus, line_slice, scratch_dir  # noqa: E402

WORKERS = 2
AFTER_MS = 300  # the heartbeat watches this long after the last result is drawn


def _thread_job(corpus_path: Path, refs: tuple, corpus_ref: object):
    """The lab's work as one background job of the GUI process (the design not taken)."""
    from bpe_studio.core import Tokenizer
    from bpe_studio.core.explain.usage import corpus_usage
    from bpe_studio.core.explain.vocabulary import token_table
    from bpe_studio.gui.model.lab_records import MakeupResult
    from bpe_studio.gui.model.lab_server import overlap_result, usage_result

    a_ref, b_ref = refs

    def job(is_stale):
        a = Tokenizer.preset("o200k_base")
        table = token_table(a)
        usage = corpus_usage(a, [str(corpus_path)], table=table, workers=WORKERS)
        other = token_table(Tokenizer.preset("cl100k_base"))
        return [
            MakeupResult(a_ref, table),
            usage_result(a_ref, corpus_ref, usage, table),
            overlap_result(a_ref, b_ref, table, other),
        ]

    return job


def one_run(app, way: str, corpus_path: Path) -> dict:
    from bpe_studio.gui.jobs.latest import LatestJob
    from bpe_studio.gui.main_window import MainWindow
    from bpe_studio.gui.model.lab_records import CorpusRef, TokenizerRef
    from bpe_studio.gui.views.picker import preset_key

    window = MainWindow()
    window.resize(1600, 1000)
    window.show()
    page, lab = window.lab, window.hub.lab
    if way == "thread":
        page.runner.run = lambda: False  # type: ignore[method-assign]  # no process
    window.tabs.setCurrentWidget(page)
    start = time.perf_counter()
    wait(app, lambda: time.perf_counter() > start + 1.0)  # the window settles
    heart = Heart()
    heart.start()
    start = time.perf_counter()
    page.picker.pick(preset_key("o200k_base"))  # the default, shown already
    page.against.pick(preset_key("cl100k_base"))
    page.choose_corpus(str(corpus_path))
    if way == "thread":
        a = TokenizerRef(preset_key("o200k_base"), page.picker.label_of(preset_key("o200k_base")))
        b = TokenizerRef(
            preset_key("cl100k_base"), page.against.label_of(preset_key("cl100k_base"))
        )
        ref = lab.wanted_corpus()
        assert isinstance(ref, CorpusRef)
        job = LatestJob("bench-lab-thread", page)
        job.done.connect(lambda results: [lab.receive(r) for r in results])
        job.failed.connect(lambda message: print("failed:", message, file=sys.stderr))
        job.submit(_thread_job(corpus_path, (a, b), ref))
    wait(
        app,
        lambda: lab.makeup is not None and lab.usage is not None and lab.overlap is not None,
        timeout=900,
    )
    done = time.perf_counter() - start
    end = time.perf_counter() + AFTER_MS / 1000
    wait(app, lambda: time.perf_counter() > end)
    gap, cpu = heart.stop()
    row = {
        "way": way,
        "max_gap_ms": round(gap, 1),
        "gap_cpu_ms": round(cpu, 1),
        "done_s": round(done, 2),
        "load": round(os.getloadavg()[0], 1),
    }
    window.close_without_asking()
    wait(app, lambda: not window.lab.runner.process.running, timeout=30)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--mb", type=float, default=20)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--ways", default="process,thread", help="which of process,thread to run (both)"
    )
    args = parser.parse_args()
    ways = tuple(w for w in ("process", "thread") if w in args.ways.split(","))

    from bpe_studio.gui.app import application
    from bpe_studio.gui.responsiveness.collector import collect_on_gui_thread

    (books,) = corpus("english_books.txt")
    app = application()
    collect_on_gui_thread()
    rows = []
    with scratch_dir() as scratch:
        sliced = Path(scratch) / "english_books_slice.txt"
        sliced.write_bytes(line_slice(books, 0, int(args.mb * MB)))
        heart = Heart()
        heart.start()
        idle = time.perf_counter()
        wait(app, lambda: time.perf_counter() > idle + 2)
        noise, _ = heart.stop()
        print(f"idle heartbeat (the machine's own noise): {noise:.0f} ms", flush=True)
        for rep in range(args.reps):
            for way in ways if rep % 2 == 0 else ways[::-1]:
                row = one_run(app, way, sliced)
                rows.append(row)
                print(json.dumps(row), flush=True)
    summary = {}
    for way in ways:
        runs = [r for r in rows if r["way"] == way]
        summary[way] = {
            "median_max_gap_ms": statistics.median(r["max_gap_ms"] for r in runs),
            "worst_max_gap_ms": max(r["max_gap_ms"] for r in runs),
            "median_done_s": statistics.median(r["done_s"] for r in runs),
            "loads": [r["load"] for r in runs],
        }
    print(
        f"\n{args.mb:g} MB of English, o200k against cl100k, {WORKERS} workers, "
        f"{args.reps} runs each"
    )
    print("| way | largest GUI-thread gap, median (worst) | all drawn after, median | load |")
    print("|---|---|---|---|")
    for way, s in summary.items():
        print(
            f"| {way} | {s['median_max_gap_ms']:.0f} ms ({s['worst_max_gap_ms']:.0f} ms) | "
            f"{s['median_done_s']:.1f} s | {min(s['loads'])}-{max(s['loads'])} |"
        )
    if args.json:
        args.json.write_text(json.dumps({"runs": rows, "summary": summary}, indent=2))


if __name__ == "__main__":
    main()
