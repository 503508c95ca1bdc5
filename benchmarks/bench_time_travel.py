"""Time travel at real scale (issue 25): what recording the pairs costs, and how fast the views
follow the step of a real run.

Corpora: the first ``--mb`` MB (line-aligned) of ``english_books.txt``, ``chinese.txt`` and
``code.txt`` from ``../shared/corpora`` (or ``$BPE_STUDIO_CORPORA``), and the app's bundled
TinyStories sample (2.1 MB; its pairs run out near 10,000 merges), each trained to
``--vocab`` (32,000).

``headless``: training as ``train_bpe`` does it (``trainer_from_file``, 2 workers, then every
merge), with the best 20 pairs recorded before every merge (``record_pairs=20``, what the app
does) and without, with each merge engine; every run in its own process, for its peak RSS
(``ru_maxrss``), the two kinds taking turns; best of ``--repeat``. The cost of recording is
the merge loop's CPU time with it less without, as a share of the whole training's wall time
without it (CPU time, because the wall times of runs on a shared machine vary by more than
the cost). The record's own size is reported too.

``gui``: the real main window (offscreen, styled as the app), the corpus trained to the vocab
size in it, then
- the pair chart at ``--steps`` random steps: from ``select_step`` until the chart has drawn
  that step and repainted (it reads the record on the GUI thread);
- the editor holding 10,000 characters of the corpus (its last ones) at ``--positions`` random
  steps: from ``select_step`` until its spans for exactly that step are painted;
- a replay of the whole run in 20 s: after every frame of the replay (its timer's tick), the
  step each view shows against the timeline's: the pair chart, the editor, the compression
  plot's cursor and its newest editor dot. A view is "within one frame" when it shows this
  frame's step or the one before. Frames where the chart says "Counting" or the editor
  "Tokenizing" are counted too, and the editor's step moves served on the GUI thread
  (``SpanService.advance``) with what each cost there.

    python benchmarks/bench_time_travel.py headless [--corpora english,chinese,code,sample]
    QT_QPA_PLATFORM=offscreen python benchmarks/bench_time_travel.py gui [--json out.json]
    python benchmarks/bench_time_travel.py both --markdown     (what run_all.py --time-travel adds)
    python benchmarks/bench_time_travel.py --render headless.json gui.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.corpora import line_slice  # noqa: E402

SPECIALS = ["<|endoftext|>"]
NAMES = {"english": "english_books.txt", "chinese": "chinese.txt", "code": "code.txt"}
SAMPLE = ROOT / "resources" / "sample" / "tinystories_sample.txt"
EDITOR_CHARS = 10_000
REPLAY_SECONDS = 20


def corpus_path(name: str, mb: float, scratch: Path) -> Path:
    if name == "sample":
        return SAMPLE
    shared = Path(os.environ.get("BPE_STUDIO_CORPORA", ROOT.parent / "shared" / "corpora"))
    out = scratch / f"{name}_{mb:g}mb.txt"
    if not out.exists():
        out.write_bytes(line_slice(shared / NAMES[name], 0, int(mb * 1_000_000)))
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary_ms(values: list[float]) -> dict:
    return {
        "n": len(values),
        "median_ms": round(1000 * statistics.median(values), 1),
        "p95_ms": round(1000 * percentile(values, 0.95), 1),
        "max_ms": round(1000 * max(values), 1),
    }


# ------------------------------------------------------------------ headless
def train_once(path: str, vocab: int, engine: str, record: int) -> dict:
    """One headless training (in this process): seconds, merges, record size, peak RSS."""
    from bpe_studio.core import trainer_from_file

    start = time.perf_counter()
    trainer = trainer_from_file(
        path, vocab, SPECIALS, workers=2, engine=engine, record_pairs=record
    )
    cpu = time.process_time()
    merges = sum(1 for _ in trainer)
    merge_cpu = time.process_time() - cpu
    seconds = time.perf_counter() - start
    history = trainer.pair_history
    record_bytes = 0
    if history is not None:
        rows = history._rows  # the engine's record
        if hasattr(rows, "_rows"):  # the compiled engine's array: 3 int64 per pair
            record_bytes = len(rows) * rows._rows.shape[1] * 8
        else:  # the Python engine's flat list of entries (each entry counted once)
            entries = rows._entries
            record_bytes = sys.getsizeof(entries) + sys.getsizeof(rows._ends)
            record_bytes += sum(sys.getsizeof(e) for e in {id(e): e for e in entries}.values())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "seconds": seconds,
        "merge_cpu": merge_cpu,
        "merges": merges,
        "record_bytes": record_bytes,
        "rss": rss,
    }


def headless(args: argparse.Namespace, scratch: Path) -> dict:
    out: dict = {}
    for name in args.corpora.split(","):
        path = corpus_path(name, args.mb, scratch)
        for engine in ("compiled", "python"):
            runs: dict[int, list[dict]] = {0: [], 20: []}
            for _ in range(args.repeat):
                for record in (0, 20):
                    call = f"train_once({str(path)!r}, {args.vocab}, {engine!r}, {record})"
                    code = (
                        f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); "
                        "from benchmarks.bench_time_travel import train_once; "
                        f"print('RESULT', json.dumps({call}))"
                    )
                    proc = subprocess.run(
                        [sys.executable, "-c", code], capture_output=True, text=True, check=True
                    )
                    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
                    runs[record].append(json.loads(line[7:]))
            best = {r: min(v, key=lambda x: x["seconds"]) for r, v in runs.items()}
            cpu = {r: min(x["merge_cpu"] for x in v) for r, v in runs.items()}
            row = {
                "merges": best[20]["merges"],
                "seconds_without": round(best[0]["seconds"], 3),
                "seconds_with": round(best[20]["seconds"], 3),
                "merge_cpu_without": round(cpu[0], 3),
                "merge_cpu_with": round(cpu[20], 3),
                # The recording's CPU (the merge loop's, with against without) against the
                # whole headless training's wall time: the wall times alone vary more than
                # that on a shared machine.
                "cost_pct": round(100 * (cpu[20] - cpu[0]) / best[0]["seconds"], 1),
                "record_mib": round(best[20]["record_bytes"] / 2**20, 1),
                "peak_rss_mib_without": round(max(x["rss"] for x in runs[0]) / 2**20),
                "peak_rss_mib_with": round(max(x["rss"] for x in runs[20]) / 2**20),
            }
            out[f"{name} ({path.stat().st_size / 1e6:.1f} MB), {engine}"] = row
            print(name, engine, row, file=sys.stderr, flush=True)
    return out


# ------------------------------------------------------------------ gui
def _wait(app, condition, timeout: float = 600.0) -> None:
    end = time.perf_counter() + timeout
    while not condition():
        app.processEvents()
        if time.perf_counter() > end:
            raise TimeoutError("the window did not get there in time")
        time.sleep(0.001)


def editor_at(editor, k: int) -> bool:
    """The editor shows its spans for exactly step ``k`` and is not working on another."""
    tok = editor.tokenizer
    return tok is not None and len(tok.merges) == k and not editor.busy


def gui_corpus(app, path: Path, args: argparse.Namespace, rng: random.Random) -> dict:
    from bpe_studio.gui.main_window import MainWindow
    from bpe_studio.gui.training.replay import Pace

    win = MainWindow()
    win.ask = lambda title, question: True
    win.resize(1600, 1000)
    win.show()
    assert win.open_corpus(path)
    win.panel.vocab_spin.setValue(args.vocab)
    win.panel.workers_spin.setValue(2)
    results: list = []
    start = time.perf_counter()
    assert win.start_training()
    win.controller.session.finished.connect(results.append)
    _wait(app, lambda: bool(results))
    result = results[0]
    hub, chart, editor, plot = win.hub, win.chart, win.editor, win.curve
    n = hub.published
    out: dict = {
        "merges": n,
        "gui_seconds": round(time.perf_counter() - start, 1),
        "gui_merges_per_s": round(len(result.merges) / max(result.merge_seconds, 1e-9)),
    }
    _wait(app, lambda: not editor.busy)

    # The pair chart at random steps.
    times = []
    for k in rng.sample(range(n + 1), min(args.steps, n + 1)):
        t0 = time.perf_counter()
        hub.select_step(k)
        assert chart.shown_step == k, (chart.shown_step, k)
        chart.pairs_widget.repaint()
        chart.decay_widget.repaint()
        times.append(time.perf_counter() - t0)
        app.processEvents()
    out["chart"] = summary_ms(times)

    # The editor at random steps.
    text = path.read_text(encoding="utf-8")[-EDITOR_CHARS:]
    editor.set_text(text)
    _wait(app, lambda: not editor.busy)
    times = []
    for k in rng.sample(range(1, n), min(args.positions, n - 1)):
        t0 = time.perf_counter()
        hub.select_step(k)
        _wait(app, lambda k=k: editor_at(editor, k))
        times.append(time.perf_counter() - t0)
    out["editor"] = summary_ms(times)

    # A 20 s replay, every view sampled after each frame.
    dots: list[int] = []
    real_add = hub.add_editor_point

    def add_editor_point(run_id: int, text: str, step: int, per_token: float) -> bool:
        added = real_add(run_id, text, step, per_token)
        if added:  # the editor's dot for the text and run shown (AppModel.editor_points)
            dots.append(step)
        return added

    hub.add_editor_point = add_editor_point  # type: ignore[method-assign]
    replay = win.timeline.replay
    frames: list[dict] = []

    def sample() -> None:
        tok = editor.tokenizer
        frames.append(
            {
                "step": hub.state.step,
                "chart": chart.shown_step,
                "editor": len(tok.merges) if tok is not None else None,
                "cursor": int(round(plot.cursor.value())),
                "dot": dots[-1] if dots else None,
                "counting": "Counting" in chart.pairs_title(),
                "tokenizing": editor.status.text().startswith("Tokenizing"),
            }
        )

    # The editor's step moves served on the GUI thread (SpanService.advance): how often, and
    # what each cost there.
    real_advance = editor.service.advance
    advanced: list[float] = []
    declined = [0]

    def advance(source, step, painted) -> bool:
        t = time.perf_counter()
        done = real_advance(source, step, painted)
        if done:
            advanced.append(time.perf_counter() - t)
        else:
            declined[0] += 1
        return done

    editor.service.advance = advance  # type: ignore[method-assign]
    replay._timer.timeout.connect(sample)  # after the replay's own tick: the frame's step
    finished: list[bool] = []
    replay.finished.connect(lambda: finished.append(True))
    t0 = time.perf_counter()
    replay.start(Pace(whole_run_seconds=REPLAY_SECONDS))
    _wait(app, lambda: bool(finished), timeout=REPLAY_SECONDS * 4)
    replay_s = time.perf_counter() - t0
    replay._timer.timeout.disconnect(sample)
    hub.add_editor_point = real_add  # type: ignore[method-assign]
    editor.service.advance = real_advance  # type: ignore[method-assign]
    within: dict[str, float] = {}
    for view in ("chart", "editor", "cursor", "dot"):
        ok = sum(
            1
            for prev, f in zip(frames, frames[1:])
            if f[view] is not None and f[view] in (f["step"], prev["step"])
        )
        within[view] = round(100 * ok / max(len(frames) - 1, 1), 1)
    behind = []  # frames since the timeline showed the step the editor shows
    for i, f in enumerate(frames):
        j = i
        while j > 0 and f["editor"] is not None and frames[j]["step"] > f["editor"]:
            j -= 1
        behind.append(i - j)
    out["replay"] = {
        "seconds": round(replay_s, 1),
        "frames": len(frames),
        "frames_per_s": round(len(frames) / replay_s, 1),
        "within_one_frame_pct": within,
        "counting_frames": sum(f["counting"] for f in frames),
        "tokenizing_frames": sum(f["tokenizing"] for f in frames),
        "editor_steps_shown": len({f["editor"] for f in frames}),
        "editor_on_gui_thread": {
            "moves": len(advanced),
            "to_the_thread": declined[0],
            **(summary_ms(advanced) if advanced else {}),
        },
        "editor_frames_behind_median_p90": (
            statistics.median(behind) if behind else None,
            percentile(behind, 0.9) if behind else None,
        ),
    }
    win.close_without_asking()  # the run is the benchmark's: no question
    app.processEvents()
    return out


def gui(args: argparse.Namespace, scratch: Path) -> dict:
    from bpe_studio.gui.app import application

    app = application()
    rng = random.Random(args.seed)
    out = {}
    for name in args.corpora.split(","):
        path = corpus_path(name, args.mb, scratch)
        label = f"{name} ({path.stat().st_size / 1e6:.1f} MB)"
        out[label] = gui_corpus(app, path, args, rng)
        print(label, json.dumps(out[label]), file=sys.stderr, flush=True)
    return out


def markdown(headless_out: dict, gui_out: dict) -> str:
    """The two parts' figures as Markdown tables (``run_all.py --time-travel`` appends them)."""
    lines = [
        "Recording the best 20 pairs before every merge, headless (cost: the merge loop's CPU "
        "with it less without, against the training's wall time without it):",
        "",
        "| corpus, engine | merges | training without | merge CPU without / with | cost "
        "| record | peak RSS without / with |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in headless_out.items():
        lines.append(
            f"| {name} | {r['merges']:,} | {r['seconds_without']:.2f} s "
            f"| {r['merge_cpu_without']:.3f} / {r['merge_cpu_with']:.3f} s | {r['cost_pct']}% "
            f"| {r['record_mib']} MiB | {r['peak_rss_mib_without']} / "
            f"{r['peak_rss_mib_with']} MiB |"
        )
    lines += [
        "",
        "The views at any step and during a 20 s replay, in the window (offscreen):",
        "",
        "| corpus | merges | chart median / p95 | editor median / p95 | replay frames/s "
        "| within one frame: chart, cursor, editor, editor dot | editor behind (frames, "
        "median / p90) | Counting / Tokenizing frames | editor moves on the GUI thread: "
        "count, median / max |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in gui_out.items():
        rp, w = r["replay"], r["replay"]["within_one_frame_pct"]
        behind = rp["editor_frames_behind_median_p90"]
        on_gui = rp.get("editor_on_gui_thread", {})
        gui_moves = (
            f"{on_gui['moves']}, {on_gui['median_ms']} / {on_gui['max_ms']} ms"
            if on_gui.get("moves")
            else "0"
        )
        lines.append(
            f"| {name} | {r['merges']:,} | {r['chart']['median_ms']} / {r['chart']['p95_ms']} ms "
            f"| {r['editor']['median_ms']} / {r['editor']['p95_ms']} ms | {rp['frames_per_s']} "
            f"| {w['chart']}%, {w['cursor']}%, {w['editor']}%, {w['dot']}% "
            f"| {behind[0]} / {behind[1]} | {rp['counting_frames']} / {rp['tokenizing_frames']} "
            f"| {gui_moves} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", nargs="?", default="both", choices=("headless", "gui", "both"))
    parser.add_argument("--corpora", default="english,chinese,code,sample")
    parser.add_argument("--mb", type=float, default=10)
    parser.add_argument("--vocab", type=int, default=32_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--scratch", default="/tmp/bpe-studio-bench-time-travel")
    parser.add_argument("--json")
    parser.add_argument(
        "--markdown", action="store_true", help="with 'both': print the figures as tables"
    )
    parser.add_argument(
        "--render",
        nargs=2,
        metavar=("HEADLESS_JSON", "GUI_JSON"),
        help="print the tables of two earlier --json outputs, measuring nothing",
    )
    args = parser.parse_args()
    if args.render:
        parts = [json.loads(Path(f).read_text(encoding="utf-8")) for f in args.render]
        print(markdown(*parts), end="")
        return 0
    if args.part != "headless":
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    out: dict = {}
    if args.part in ("headless", "both"):
        out["headless"] = headless(args, scratch)
    if args.part in ("gui", "both"):
        out["gui"] = gui(args, scratch)
    if args.json:
        one = out["headless"] if args.part == "headless" else out.get("gui", out)
        Path(args.json).write_text(
            json.dumps(out if args.part == "both" else one, indent=2), encoding="utf-8"
        )
    if args.markdown and args.part == "both":
        print(markdown(out["headless"], out["gui"]), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
