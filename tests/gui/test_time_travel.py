"""Time travel (issue 25): views keep up with a moving step, and one step shows one picture.

- Throttled requests (``LatestJob.submit(throttle=True)``): a job under way is never stopped
  by a newer step; it delivers, then the newest request starts. Jobs are steered with events:
  each waits for its gate, so steps are requested faster than work completes, and nothing
  depends on timing.
- A small step forward is shown by the editor in the call that moves the timeline (the spans
  moved forward on the GUI thread), equal to a fresh encode, and its ``encoded`` (the
  compression plot's dot) names that step; a move too large for that goes to the thread.
- The editor, driven by the timeline faster than it can tokenize (its tokenizer's ``at`` is
  held at a gate), passes through newest steps and ends on the last, the spans moved forward
  equal to a fresh encode; it never says "Tokenizing…" over valid colours while the step
  moves.
- The pair chart shows the step asked for at once, and the live, the replayed and the scrubbed
  chart show the same pairs for the same step (those of the slow reference).
"""

from __future__ import annotations

import threading

import pytest
from gui_helpers import EOT, FIXTURES, wait_for_spans

from bpe_studio.core import BpeTrainer, Tokenizer, count_text
from bpe_studio.core.explain.span_arrays import compute_spans
from bpe_studio.core.reference import top_pairs_after
from bpe_studio.core.train.vocab import initial_vocab
from bpe_studio.gui.jobs import span_service as spans_module
from bpe_studio.gui.jobs.latest import LatestJob
from bpe_studio.gui.jobs.span_service import SpanService
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.state import Phase, RunSettings, TrainingResult
from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.training.replay import Pace, Replay
from bpe_studio.gui.views.pair_chart import PairChart
from bpe_studio.gui.views.token_editor import TokenEditor


class Gates:
    """Jobs that say when they start and wait for their own gate to finish."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.gates: dict[int, threading.Event] = {}
        self._lock = threading.Lock()

    def job(self, k: int):
        gate = self.gates.setdefault(k, threading.Event())

        def run(is_stale):
            with self._lock:
                self.started.append(k)
            gate.wait(20)
            return k

        return run

    def release(self, k: int) -> None:
        self.gates.setdefault(k, threading.Event()).set()

    def release_all(self) -> None:
        for gate in self.gates.values():
            gate.set()


@pytest.fixture
def runner(qtbot):
    job = LatestJob("test-time-travel")
    yield job
    job.shutdown()


def test_throttled_requests_finish_and_then_the_newest_starts(qtbot, runner):
    gates, shown = Gates(), []
    runner.done.connect(shown.append)
    runner.submit(gates.job(0), throttle=True)
    qtbot.waitUntil(lambda: gates.started == [0], timeout=10_000)
    for k in range(1, 6):  # faster than job 0 ends: none stops it, none starts
        runner.submit(gates.job(k), throttle=True)
    gates.release(0)
    qtbot.waitUntil(lambda: gates.started == [0, 5], timeout=10_000)
    assert shown == [0]  # job 0 was shown, not dropped for being old
    for k in range(6, 10):
        runner.submit(gates.job(k), throttle=True)
    gates.release(5)
    qtbot.waitUntil(lambda: gates.started == [0, 5, 9], timeout=10_000)
    gates.release(9)
    qtbot.waitUntil(lambda: shown == [0, 5, 9] and not runner.busy, timeout=10_000)


def test_an_unthrottled_request_still_supersedes(qtbot, runner):
    gates, shown = Gates(), []
    runner.done.connect(shown.append)
    runner.submit(gates.job(0), throttle=True)
    qtbot.waitUntil(lambda: gates.started == [0], timeout=10_000)
    runner.submit(gates.job(1), throttle=True)
    runner.submit(gates.job(2))  # an edit: what runs is stale, the held step is dropped
    gates.release_all()
    qtbot.waitUntil(lambda: not runner.busy, timeout=10_000)
    assert shown == [2] and 1 not in gates.started


def test_a_job_with_no_result_lets_the_held_request_start(qtbot, runner):
    gates, shown = Gates(), []
    runner.done.connect(shown.append)
    runner.submit(lambda is_stale: None, throttle=True)
    runner.submit(gates.job(1), throttle=True)
    gates.release_all()
    qtbot.waitUntil(lambda: shown == [1] and not runner.busy, timeout=10_000)


# ------------------------------------------------------------------ a finished run
TEXT = (FIXTURES / "tinystories_slice.txt").read_text(encoding="utf-8")[:20_000]
VOCAB = 257 + 400


def finished_hub(text: str = TEXT) -> tuple[AppModel, list]:
    """A hub holding a finished run on ``text``, trained here with its pairs recorded; its
    merges, published one frame each while the run was live, as a training session would."""
    counts = dict(count_text(text, [EOT]))
    hub = AppModel()
    hub.begin_run(RunSettings(VOCAB, (EOT,)), initial_vocab([EOT]))
    trainer = BpeTrainer(counts, VOCAB, [EOT], record_pairs=20)
    hub.set_pair_history(trainer.pair_history)
    hub.start_merging()
    return hub, [counts, trainer]


def publish_live(hub: AppModel, trainer: BpeTrainer, seen: dict | None = None, chart=None):
    for step in trainer:
        hub.append_merges([step])
        hub.publish()
        if seen is not None:
            assert chart.pairs_title().endswith("· live") or "Next:" in chart.pairs_title()
            seen[hub.state.step] = chart.shown_pairs()
    result = TrainingResult(
        dict(trainer.vocab), list(trainer.merges), (EOT,), trainer.target_merges, False, 0.0
    )
    hub.finish(result)
    assert hub.state.phase is Phase.FINISHED


def test_live_replayed_and_scrubbed_charts_show_the_same_pairs(qtbot):
    hub, (counts, trainer) = finished_hub()
    chart = PairChart(hub)
    qtbot.addWidget(chart)
    chart.resize(900, 600)
    chart.show()
    live: dict[int, list] = {}
    publish_live(hub, trainer, live, chart)
    n = hub.published
    assert sorted(live) == list(range(1, n + 1))

    replayed: dict[int, list] = {}

    def grab(k: int) -> None:
        assert chart.shown_step == k  # drawn at once: the step's row is recorded
        replayed[k] = chart.shown_pairs()

    hub.step_changed.connect(grab)
    replay = Replay(hub)
    with qtbot.waitSignal(replay.finished, timeout=60_000):
        replay.start(Pace(per_second=4 * n))
    hub.step_changed.disconnect(grab)
    assert len(replayed) > 3

    for k in sorted(set(live) | set(replayed)) + [0]:
        hub.select_step(k)
        scrubbed = chart.shown_pairs()
        assert len(scrubbed) >= 5
        if k in live:
            assert scrubbed == live[k], f"live, step {k}"
        if k in replayed:
            assert scrubbed == replayed[k], f"replayed, step {k}"
    merges = list(trainer.merges)
    for k in (0, 1, 17, 250, n):
        hub.select_step(k)
        shown = chart.shown_pairs()
        assert shown == top_pairs_after(counts, merges[:k], 20)[: len(shown)], f"step {k}"


def editor_on_a_finished_run(qtbot) -> tuple[AppModel, TokenEditor]:
    """An editor bound to a finished run's hub, its text's spans shown at the last step."""
    hub, (_, trainer) = finished_hub()
    publish_live(hub, trainer)
    editor = TokenEditor()
    qtbot.addWidget(editor)
    editor.bind(hub)
    editor.set_text(TEXT[:3000])
    wait_for_spans(qtbot, editor)
    return hub, editor


def test_editor_follows_a_moving_step_through_newest_steps(qtbot, monkeypatch):
    # The span thread's part: no step is moved on the GUI thread here.
    monkeypatch.setattr(spans_module, "GUI_FORWARD_WORK", 0)
    monkeypatch.setattr(spans_module, "GUI_SPLIT_TOKENS", 0)
    hub, editor = editor_on_a_finished_run(qtbot)

    # Every tokenizer the editor asks for waits at a gate: the step moves faster than work.
    source = hub.state.shown
    real_at = source.at
    gates = Gates()

    def held_at(k):
        if 10 <= k < 60 and k not in gates.started:  # a step asked for, at its first ask
            gates.job(k)(lambda: False)
        return real_at(k)

    source.at = held_at
    statuses: list[str] = []
    hub.select_step(10)
    qtbot.waitUntil(lambda: gates.started == [10], timeout=10_000)
    for k in range(11, 40):
        hub.select_step(k)
        statuses.append(editor.status.text())
    gates.release(10)
    qtbot.waitUntil(lambda: gates.started == [10, 39], timeout=10_000)
    qtbot.waitUntil(lambda: len(editor.tokenizer.merges) == 10, timeout=10_000)
    for k in range(40, 60):
        hub.select_step(k)
        statuses.append(editor.status.text())
    gates.release(39)
    qtbot.waitUntil(lambda: gates.started == [10, 39, 59], timeout=10_000)
    qtbot.waitUntil(lambda: len(editor.tokenizer.merges) == 39, timeout=10_000)
    gates.release_all()
    qtbot.waitUntil(lambda: not editor.busy, timeout=10_000)
    assert len(editor.tokenizer.merges) == 59
    # Step 59 was split back from the whole tokenizer's spans: as a fresh encode.
    fresh = compute_spans(real_at(59), editor.text())
    for name in ("ids", "starts", "ends", "partial"):
        assert (getattr(editor.spans, name) == getattr(fresh, name)).all(), name
    # The colours of a step shown stay up, with their status, until the next arrive.
    assert statuses and all("tokens" in s and "Tokenizing" not in s for s in statuses)
    editor.shutdown()


def test_editor_shows_a_small_step_forward_in_the_same_frame(qtbot, monkeypatch):
    # Moving the spans shown forward, for texts too long to split back on the GUI thread.
    monkeypatch.setattr(spans_module, "GUI_SPLIT_TOKENS", 0)
    hub, editor = editor_on_a_finished_run(qtbot)
    hub.select_step(100)  # backward: the thread's
    qtbot.waitUntil(lambda: not editor.busy and len(editor.tokenizer.merges) == 100)
    source = hub.state.shown
    encoded: list[int] = []
    editor.encoded.connect(lambda n, size: encoded.append(len(editor.tokenizer.merges)))
    for k in [*range(101, 140), 170, 171, 230]:
        hub.select_step(k)  # no event is processed before the checks
        assert len(editor.tokenizer.merges) == k
        assert editor.current_tokenizer is not None
        assert encoded[-1] == k
        # The step leads the label, so that a label cut for room still shows it.
        assert editor.source_label.text().startswith(f"at step {k:,} · ")
        assert "Tokenizing" not in editor.status.text()
        if k % 10 == 0:
            fresh = compute_spans(source.at(k), editor.text())
            for name in ("ids", "starts", "ends", "partial"):
                assert (getattr(editor.spans, name) == getattr(fresh, name)).all(), (k, name)
    editor.shutdown()


def test_editor_leaves_a_large_step_forward_to_its_thread(qtbot, monkeypatch):
    monkeypatch.setattr(spans_module, "GUI_SPLIT_TOKENS", 0)
    hub, editor = editor_on_a_finished_run(qtbot)
    hub.select_step(100)
    qtbot.waitUntil(lambda: not editor.busy and len(editor.tokenizer.merges) == 100)
    tokens = len(editor.spans.ids)
    monkeypatch.setattr(spans_module, "GUI_FORWARD_WORK", 20 * tokens)
    hub.select_step(120)  # within the work allowed: at once
    assert len(editor.tokenizer.merges) == 120
    hub.select_step(141)  # beyond it: the thread's, shown later
    assert len(editor.tokenizer.merges) == 120
    qtbot.waitUntil(lambda: not editor.busy and len(editor.tokenizer.merges) == 141)
    fresh = compute_spans(hub.state.shown.at(141), editor.text())
    assert (editor.spans.ids == fresh.ids).all()
    editor.shutdown()


def test_editor_shows_any_step_in_the_same_frame_split_back(qtbot):
    hub, editor = editor_on_a_finished_run(qtbot)
    source = hub.state.shown
    n = len(source.get().merges)
    encoded: list[int] = []
    editor.encoded.connect(lambda count, size: encoded.append(len(editor.tokenizer.merges)))
    # Back, far forward, back again, the ends: each shown in the call that moves the timeline.
    for k in (n - 1, 3, n - 40, 0, 250, 249, n, 1, 120):
        hub.select_step(k)  # no event is processed before the checks
        assert len(editor.tokenizer.merges) == k
        assert encoded[-1] == k
        assert "Tokenizing" not in editor.status.text()
        fresh = compute_spans(source.at(k), editor.text())
        for name in ("ids", "starts", "ends", "partial"):
            assert (getattr(editor.spans, name) == getattr(fresh, name)).all(), (k, name)
    editor.shutdown()


def test_editor_splits_the_edited_text_not_the_one_before(qtbot):
    hub, editor = editor_on_a_finished_run(qtbot)
    source = hub.state.shown
    hub.select_step(200)
    assert len(editor.tokenizer.merges) == 200
    editor.set_text(TEXT[3000:5000])  # another text: its own spans, then split back
    wait_for_spans(qtbot, editor)
    qtbot.waitUntil(lambda: not editor.busy, timeout=10_000)
    for k in (150, 60, 199):
        hub.select_step(k)
        qtbot.waitUntil(
            lambda k=k: not editor.busy and len(editor.tokenizer.merges) == k, timeout=10_000
        )
        fresh = compute_spans(source.at(k), TEXT[3000:5000])
        assert editor.spans.text == TEXT[3000:5000]
        for name in ("ids", "starts", "ends", "partial"):
            assert (getattr(editor.spans, name) == getattr(fresh, name)).all(), (k, name)
    editor.shutdown()


def test_a_loaded_tokenizer_with_merges_out_of_order_shows_each_step_as_encoded(qtbot, tmp_path):
    # Merge 0 joins "a" and "bc", which merge 1 makes (Llama 3's file lists such merges):
    # at step 1 "abc" is three bytes, not the token merge 0 would make.
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"abc", 257: b"bc"}
    Tokenizer(vocab, [(b"a", b"bc"), (b"b", b"c")]).save(str(tmp_path / "t"))
    source = TokenizerSource("loaded", tokenizer=Tokenizer.load(str(tmp_path / "t")))
    service = SpanService(debounce_ms=0)
    shown: list = []
    service.ready.connect(shown.append)
    text = "abc xbc abcabc"
    for k in (2, 1, 0, 1):
        with qtbot.waitSignal(service.ready, timeout=10_000):
            service.request(source, lambda: text, step=k)
        assert shown[-1].spans.ids.tolist() == source.at(k).encode(text), k
    service.shutdown()
