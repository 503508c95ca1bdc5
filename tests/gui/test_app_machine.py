"""The app after any sequence of actions (issue 33): hypothesis's rule-based state machine drives
the real main window offscreen through random sequences of what a user does (train, pause,
stop, scrub or type a step, replay, skip, pick an editor tokenizer, edit the text, pick Compare
panes, run the Report, save, load, discard) and, once each action has settled (its jobs done:
waited for, never slept on), checks that every view tells the truth:

- every view's step is the timeline's;
- the editor's ids are the shown tokenizer's encoding of the shown text;
- each Compare pane's label names the tokenizer whose counts it shows;
- the editor's points on the compression plot belong to the text and tokenizer shown;
- no busy label ("…ing…") remains once the jobs are done;
- a discarded run appears nowhere;
- a pick that failed leaves the choice before selected and shown;
- the Vocabulary lab's make-up is its tokenizer's (the run's at the timeline's step), its
  usage is of the corpus chosen, and a cancelled job is not restarted by itself.

The Hub is a local cache in offline mode (a model the menus list fails as it would offline),
never the network. CI runs a bounded, derandomized set of sequences; set
``BPE_STUDIO_MACHINE_EXAMPLES`` (and ``BPE_STUDIO_MACHINE_STEPS``) for a longer run locally,
e.g. ``BPE_STUDIO_MACHINE_EXAMPLES=200 python -m pytest tests/gui/test_app_machine.py``, which
then explores new sequences each run (not derandomized).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from foreign_files import sentencepiece_bpe
from gui_helpers import EOT, FIXTURES
from hub_snapshot import offline_hub
from hypothesis import HealthCheck, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.foreign import ForeignTokenizer, open_tokenizer
from bpe_studio.core.explain.vocabulary import token_table
from bpe_studio.core.text.display import plural
from bpe_studio.gui.model.panes import COMPARE_LEFT, COMPARE_RIGHT, EDITOR
from bpe_studio.gui.model.run_tokenizer import run_tokenizer_at
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.training.replay import Pace
from bpe_studio.gui.views.compare import Side
from bpe_studio.gui.views.picker import RUN, hub_key, preset_key

CORPUS = FIXTURES / "tinystories_sample.txt"
EXAMPLES = int(os.environ.get("BPE_STUDIO_MACHINE_EXAMPLES", "16"))
STEPS = int(os.environ.get("BPE_STUDIO_MACHINE_STEPS", "15"))
OFFLINE_MODEL = "Qwen/Qwen2.5-7B"  # a model the menus list; not in the offline cache
RUN_LABEL = "The run's tokenizer"  # how every picker and page names the run
# Text from assigned characters only: Latin letters, digits, punctuation, CJK, an emoji, and
# the special token (docs/unicode.md).
TEXT = st.lists(
    st.sampled_from(
        ["Once", " upon", " a", " time", ",", " 2024", "\n", " 中文", "分词", " 😀", " café", EOT]
    ),
    min_size=1,
    max_size=30,
).map("".join)
BUSY = re.compile(r"\b\w+ing\b[^·]*…")  # "Tokenizing…", "Loading GPT-2…", "updating to step 9…"
SETTLE_MS = 120_000


class AppMachine(RuleBasedStateMachine):
    def __init__(self, qtbot, files: dict[str, Path], saves: Path) -> None:
        super().__init__()
        from bpe_studio.gui.main_window import MainWindow

        self.qtbot, self.files, self.saves = qtbot, files, saves
        win = self.window = MainWindow()
        win.ask = lambda title, question: True  # discarding is what the user said
        win.ask_close = lambda title, question: "discard"
        win.show_error = lambda title, message: self.errors.append(message)
        for page in (win.compare, win.report, win.lab):
            page.error.disconnect()
            page.error.connect(lambda title, message: self.errors.append(message))
        qtbot.addWidget(win)
        win.resize(1440, 900)
        win.show()
        qtbot.waitExposed(win)
        self.errors: list[str] = []
        self.discarded: set[int] = set()  # run ids discarded
        self.saved = 0
        self.makeups: dict[tuple, dict] = {}  # independent make-ups of this run's steps

    # ------------------------------------------------------------ helpers
    @property
    def state(self):
        return self.window.hub.state

    def settle(self) -> None:
        """Wait until no job is under way: the run (unless paused), loads, the editor's
        pick and spans, the pages' jobs and the inspector's."""
        win = self.window

        def quiet() -> bool:
            training = self.state.phase.training and self.state.phase is not Phase.PAUSED
            return not (
                training
                or win.controller.loader.busy
                or win.controller.editor_refresh_pending
                or win.editor_tokenizer.busy
                or win.editor.busy
                or win.ids_panel.busy
                or (win.compare.isVisible() and win.compare.busy)
                or (win.report.isVisible() and win.report.busy)
                or (win.lab.isVisible() and win.lab.busy)
                or self.state.stopping
            )

        self.qtbot.waitUntil(quiet, timeout=SETTLE_MS)

    def finish_run(self) -> None:
        session = self.window.controller.session
        if session is not None and self.state.phase.training:
            with self.qtbot.waitSignal(session.finished, timeout=SETTLE_MS):
                pass
        self.settle()

    # -------------------------------------------------------------- rules
    @initialize()
    def open_corpus(self) -> None:
        assert self.window.open_corpus(CORPUS)
        self.window.panel.workers_spin.setValue(1)

    @precondition(lambda self: not self.window.controller.busy)
    @rule(vocab=st.sampled_from([300, 500, 800]), pause_at=st.none() | st.integers(5, 40))
    def train(self, vocab: int, pause_at: int | None) -> None:
        before = self.state.run_id if self.window.hub.unsaved else None
        self.window.panel.vocab_spin.setValue(vocab)
        assert self.window.start_training()
        if before is not None:
            self.discarded.add(before)
        session = self.window.controller.session
        if pause_at is None:
            self.finish_run()
        else:
            session.pause_after(pause_at)
            self.qtbot.waitUntil(
                lambda: session.worker_waiting or not self.state.phase.training, timeout=SETTLE_MS
            )
            self.settle()

    @precondition(lambda self: self.state.phase is Phase.PAUSED)
    @rule()
    def resume(self) -> None:
        self.window.toggle_pause()
        self.finish_run()

    @precondition(lambda self: self.state.phase is Phase.PAUSED)
    @rule()
    def stop(self) -> None:
        self.window.stop_training()
        self.finish_run()

    @precondition(lambda self: self.state.published > 0)
    @rule(where=st.floats(0, 1), typed=st.booleans())
    def move_step(self, where: float, typed: bool) -> None:
        k = round(where * self.state.published)
        if typed:
            self.window.timeline.spin.setValue(k)
        else:
            self.window.timeline.select_step(k)
        self.settle()

    @precondition(lambda self: self.state.published > 0 and not self.state.phase.training)
    @rule(skip=st.booleans())
    def replay(self, skip: bool) -> None:
        replay = self.window.timeline.replay
        replay.start(Pace(per_second=5_000))
        if skip:
            replay.skip()
        else:
            self.qtbot.waitUntil(lambda: not self.state.replaying, timeout=SETTLE_MS)
        self.settle()

    @rule(text=TEXT)
    def edit_text(self, text: str) -> None:
        self.window.editor.set_text(text)
        self.settle()

    @rule(which=st.sampled_from(["run", "gpt2", "cl100k_base", "hub", "sentencepiece", "file"]))
    def pick_for_editor(self, which: str) -> None:
        picker = self.window.picker
        before = (picker.key, self.state.picked)
        if which == "run":
            picker.pick(RUN)
        elif which == "hub":
            picker.pick(hub_key(OFFLINE_MODEL))
        elif which in ("sentencepiece", "file"):
            picker.add_file(self.files[which])
        else:
            picker.pick(preset_key(which))
        self.settle()
        if which == "hub":  # it fails offline: the choice before stays, everywhere
            assert (picker.key, self.state.picked) == before
            assert self.window.hub.pane(EDITOR).key == before[0]

    @rule(side=st.sampled_from([0, 1]), which=st.sampled_from(["gpt2", "o200k_base", "run", "hub"]))
    def pick_for_compare(self, side: int, which: str) -> None:
        win = self.window
        win.tabs.setCurrentWidget(win.compare)
        picker = win.compare.choices[side]
        before = picker.key
        key = {"run": RUN, "hub": hub_key(OFFLINE_MODEL)}.get(which, preset_key(which))
        if which == "run" and self.state.shown is None:
            key = preset_key("gpt2")  # no run's tokenizer yet: a pick that cannot fail
        picker.pick(key)
        self.settle()
        if which == "hub":
            assert picker.key == before and win.hub.pane(picker.pane).key == before

    @rule(which=st.sampled_from(["run", "gpt2", "file", "hub"]))
    def pick_for_lab(self, which: str) -> None:
        win = self.window
        win.tabs.setCurrentWidget(win.lab)
        picker = win.lab.picker
        before = picker.key
        if which == "file":
            picker.add_file(self.files["file"])
        else:
            picker.pick({"run": RUN, "hub": hub_key(OFFLINE_MODEL)}.get(which, preset_key(which)))
        self.settle()
        if which == "hub":  # it fails offline: the choice before stays
            assert picker.key == before and win.hub.pane(picker.pane).key == before

    @rule(which=st.sampled_from(["none", "run", "german"]), cancel=st.booleans())
    def lab_corpus(self, which: str, cancel: bool) -> None:
        win = self.window
        win.tabs.setCurrentWidget(win.lab)
        win.lab.choose_corpus({"none": None, "run": "run"}.get(which, str(FIXTURES / "german.txt")))
        if cancel:
            self.qtbot.waitUntil(lambda: not win.lab._request.isActive(), timeout=SETTLE_MS)
            win.lab.cancel()
        self.settle()
        if cancel and win.lab.lab.cancelled:
            assert win.lab.lab.next_job() is None  # a cancelled job is not restarted

    @rule(which=st.sampled_from(["none", "gpt2"]))
    def lab_against(self, which: str) -> None:
        win = self.window
        win.tabs.setCurrentWidget(win.lab)
        win.lab.against.pick("none" if which == "none" else preset_key(which))
        self.settle()

    @rule()
    def run_report(self) -> None:
        win = self.window
        win.tabs.setCurrentWidget(win.report)
        self.settle()
        assert win.report.report is not None or win.report.status.text().startswith("Could")

    @precondition(lambda self: not self.window.controller.busy)
    @rule(fmt=st.sampled_from(["gpt2", "hf", "tiktoken"]))
    def save(self, fmt: str) -> None:
        self.saved += 1
        target = self.saves / f"save{self.saved}"
        saveable = self.window.controller.saveable_data() is not None
        started = self.window.save_tokenizer(target, fmt)
        assert started == saveable
        if started:
            # It runs in the background; Save, Train and Load are off until it has ended.
            assert not self.window.panel.save_button.isEnabled() and self.window.controller.busy
            with self.qtbot.waitSignal(
                self.window.controller.save_finished, timeout=SETTLE_MS
            ) as blocker:
                pass
            if blocker.args == [True]:
                assert self.window.hub.unsaved == 0
        self.settle()

    @precondition(lambda self: not self.window.controller.busy)
    @rule()
    def load(self) -> None:
        before = self.state.run_id if self.window.hub.unsaved else None
        with self.qtbot.waitSignal(self.window.controller.load_finished, timeout=SETTLE_MS):
            assert self.window.load_tokenizer(self.files["file"])
        if before is not None:
            self.discarded.add(before)
        self.settle()

    @precondition(lambda self: not self.window.controller.busy and self.window.hub.unsaved)
    @rule()
    def discard(self) -> None:
        """Open another corpus and let the unsaved run go."""
        self.discarded.add(self.state.run_id)
        other = FIXTURES / "german.txt" if self.state.corpus == CORPUS else CORPUS
        assert self.window.open_corpus(other)
        self.settle()

    def teardown(self) -> None:
        from gui_helpers import threads_running

        self.window.close()
        self.qtbot.waitUntil(lambda: not threads_running(), timeout=SETTLE_MS)

    # --------------------------------------------------------- invariants
    @invariant()
    def every_view_shows_the_timelines_step(self) -> None:
        win, s = self.window, self.state
        assert win.timeline.spin.value() == s.step
        if s.published and not s.loaded:
            row = win.merge_list.selected_rank()
            assert row is None or row == s.step - 1 or s.step == 0
        if not s.phase.training and s.pair_history is not None and s.published:
            title = win.chart.pairs_plot.titleLabel.text
            assert s.live or f"{s.step:,}" in title, (title, s.step)

    @invariant()
    def the_editors_ids_are_its_tokenizers_encoding_of_its_text(self) -> None:
        editor = self.window.editor
        spans = editor.spans
        if spans is None:
            return
        tok = editor.current_tokenizer
        assert tok is not None, editor.source_label.text()  # painted is what it should show
        text = editor.text()
        assert spans.text == text
        if isinstance(tok, ForeignTokenizer):
            assert spans.ids.tolist() == list(tok.encode(text))
        else:
            assert spans.ids.tolist() == tok.encode(text)
        s = self.state
        if s.picked is None and s.shown is not None and s.loaded is None:
            assert len(tok.merges) == s.step  # the run's tokenizer at the timeline's step
        label = editor.source_label.text()
        if editor.source is not None and s.picked is None and editor.step is not None:
            assert label.startswith(f"at step {s.step:,} · ")

    @invariant()
    def each_compare_pane_names_the_tokenizer_it_counts(self) -> None:
        compare = self.window.compare
        comparison = compare.comparison
        if comparison is None or compare.busy:
            return
        for picker, side, stats, pane in zip(
            compare.choices,
            (comparison.a, comparison.b),
            compare.stats,
            (COMPARE_LEFT, COMPARE_RIGHT),
        ):
            if isinstance(side, Side):
                assert stats.text().startswith(f"{plural(side.tokens, 'token')} · ")
                assert stats.text().endswith(f" · {side.label}")
            else:  # the run discarded under it, or a pattern that leaves the text out
                assert stats.text() == side.summary()
            key = self.window.hub.pane(pane).key
            chosen = picker.choice(key)  # the run's names its step: "(step 143)"
            assert side.label == (chosen.label if chosen else picker.label_of(key))
            assert picker.key == self.window.hub.pane(pane).key

    @invariant()
    def the_editors_points_belong_to_its_text_and_tokenizer(self) -> None:
        win = self.window
        points = win.curve._editor_points
        assert points == win.hub.editor_points()
        if self.state.picked is not None:
            return  # no points were added for it (checked below when they were)
        text = win.hub.editor_text
        if not points or self.state.loaded is not None or self.state.result is None:
            return
        full = Tokenizer(
            self.state.result.vocab, self.state.result.merges, self.state.special_tokens
        )
        size = len(text.encode("utf-8"))
        for step, per_token in points.items():
            tokens = len(full.truncated(step).encode(text, allowed_special="all"))
            assert per_token == pytest.approx(size / tokens)

    @invariant()
    def no_busy_label_remains(self) -> None:
        win = self.window
        if self.state.phase.training and self.state.phase is not Phase.PAUSED:
            return
        for label in (
            win.editor.source_label,
            win.editor.status,
            win.editor_tokenizer.note,
            win.compare.status,
            win.report.status,
            win.lab.status,
        ):
            if label.isVisible() or label is win.editor_tokenizer.note:
                assert not BUSY.search(label.text()), label.text()

    @invariant()
    def a_discarded_run_appears_nowhere(self) -> None:
        s = self.state
        assert s.run_id not in self.discarded
        win = self.window
        if s.phase is Phase.IDLE:
            assert win.merge_list.model.rowCount() == 0
            assert s.shown is None and "trained on" not in win.editor.source_label.text()
        if s.shown is None:  # no page shows or exports a run that is gone
            report = win.report.report
            assert report is None or not any(t.startswith(RUN_LABEL) for t in report.tokenizers)
            compared = win.compare.comparison
            assert compared is None or not any(
                side.label.startswith(RUN_LABEL) for side in (compared.a, compared.b)
            )

    @invariant()
    def the_labs_makeup_is_its_tokenizers_at_the_step(self) -> None:
        win, s = self.window, self.state
        page, lab = win.lab, win.lab.lab
        if lab.makeup is not None:
            assert lab.makeup.ref.run_id not in self.discarded
        if not page.isVisible() or page.busy or lab.makeup is None:
            return
        ref = lab.makeup.ref
        assert ref.key == win.hub.pane("lab").key == page.picker.key
        assert page.makeup_line.text().startswith(ref.label)
        shown = lab.shown_makeup()
        assert shown is not None
        makeup, step = shown
        if ref.is_run:
            assert ref.run_id == s.run_id and step == s.step and lab.behind() is None
            key: tuple = ("run", s.run_id, step)
            if key not in self.makeups:
                self.makeups[key] = _categories(run_tokenizer_at(s, step)())
        else:
            key = (ref.key,)
            if key not in FILE_MAKEUPS:
                kind, _, value = ref.key.partition(":")
                tok = Tokenizer.preset(value) if kind == "preset" else open_tokenizer(value)
                FILE_MAKEUPS[key] = _categories(tok)
        expected = self.makeups[key] if ref.is_run else FILE_MAKEUPS[key]
        assert page.charts.drawn_categories == expected
        usage = lab.usage
        if usage is not None:
            assert usage.corpus == lab.wanted_corpus() and usage.ref.same_tokenizer(ref)


# Independent make-ups of the presets and files, worked out once for every sequence (the
# files are written once, before the first): o200k's took about a second each time.
FILE_MAKEUPS: dict[tuple, dict] = {}


def _categories(tok) -> dict:
    m = token_table(tok).makeup()
    return {name: (c.tokens, c.leading_space) for name, c in m.categories.items()}


@pytest.mark.slow
def test_the_app_tells_the_truth_after_any_sequence_of_actions(qtbot, tmp_path, monkeypatch):
    offline_hub(monkeypatch, tmp_path)
    files = {
        "sentencepiece": sentencepiece_bpe(tmp_path / "sp"),
        "file": tmp_path / "run" / "tokenizer.json",
    }
    (tmp_path / "run").mkdir()
    trained = Tokenizer(*_small_run())
    trained.save(tmp_path / "run", "hf")
    FILE_MAKEUPS.clear()  # this test's files
    saves = tmp_path / "saves"
    local = "BPE_STUDIO_MACHINE_EXAMPLES" in os.environ
    run_state_machine_as_test(
        lambda: AppMachine(qtbot, files, saves),
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            derandomize=not local,
            database=None,
            suppress_health_check=list(HealthCheck),
            print_blob=True,
            verbosity=Verbosity.verbose
            if os.environ.get("BPE_STUDIO_MACHINE_VERBOSE")
            else Verbosity.normal,
        ),
    )


def _small_run():
    from bpe_studio.core import train_bpe

    vocab, merges = train_bpe(CORPUS, 400, [EOT])
    return vocab, merges, [EOT]
