"""What each view shows is what it says it shows (issue 33): the editor's dots on the
compression plot belong to its text (defect 3); a file whose merges come before the merges that
make their parts still gets its held-out curve, on a sane axis (defect 4); the editor names the
step and tokenizer its colours are of, or says it is updating (defect 6); a run discarded to
train never comes back, and "Saved …" ends when the run learns more (defect 9)."""

from __future__ import annotations

import html
import json
import threading

import pytest
from foreign_files import LLAMA3_REGEX
from gui_helpers import (
    EOT,
    FIXTURES,
    paused_in_window,
    save_and_wait,
    train_in_window,
    wait_for_spans,
)

from bpe_studio.core import Tokenizer
from bpe_studio.core.formats.gpt2 import bytes_to_unicode
from bpe_studio.gui.jobs import span_service as spans_module
from bpe_studio.gui.model.curves import HELD_OUT
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.views.compression_plot import MergeAxis
from bpe_studio.gui.views.picker import RUN, preset_key

TINY = FIXTURES / "tinystories_sample.txt"
SLICE = FIXTURES / "tinystories_slice.txt"


# ----------------------------------------------------------------- defect 3
def test_the_editors_dots_belong_to_the_text_it_shows(qtbot, window):
    result = train_in_window(qtbot, window, TINY, 600)
    editor, curve, hub = window.editor, window.curve, window.hub
    first = "Once upon a time there was a little dog. " * 20
    second = "中文分词：你好，世界！ The cat sat on the mat, 2024." * 10
    editor.set_text(first)
    wait_for_spans(qtbot, editor)
    for k in (100, 300):
        hub.select_step(k)
        qtbot.waitUntil(lambda k=k: len(editor.tokenizer.merges) == k and not editor.busy)
    n = len(result.merges)
    assert sorted(curve.editor_dots.getData()[0].tolist()) == [100.0, 300.0, float(n)]
    editor.set_text(second)
    wait_for_spans(qtbot, editor)
    full = Tokenizer(result.vocab, result.merges, [EOT])
    xs, ys = curve.editor_dots.getData()
    # Only the second text's points: its bytes per token under the run's first k merges.
    assert xs.tolist() == [300.0]
    size = len(second.encode("utf-8"))
    for x, y in zip(xs.tolist(), ys.tolist()):
        assert y == pytest.approx(size / len(full.truncated(int(x)).encode(second)))
    assert f"editor {ys[0]:.2f}" in curve.value_label.text()
    # Back to the first text: its points come back, the second's go.
    editor.set_text(first)
    wait_for_spans(qtbot, editor)
    assert sorted(curve.editor_dots.getData()[0].tolist()) == [100.0, 300.0, float(n)]


def test_a_tokenizer_picked_for_the_editor_adds_no_dot_to_the_runs_curve(qtbot, window):
    train_in_window(qtbot, window, TINY, 400)
    editor, curve = window.editor, window.curve
    wait_for_spans(qtbot, editor)
    dots = curve.editor_dots.getData()[0].tolist()
    window.picker.pick(preset_key("gpt2"))
    qtbot.waitUntil(lambda: window.state.picked is not None and not editor.busy, timeout=30_000)
    editor.set_text("a text only GPT-2 has seen")
    wait_for_spans(qtbot, editor)
    assert curve.editor_dots.getData()[0].tolist() == [] != dots


def test_the_curves_editor_value_is_given_only_beside_the_runs_tokenizer(qtbot, window):
    """An audit (issue 67): the plot's header said "editor 1.12 bytes/token" (the run's
    tokenizer on the editor's text) right above the editor saying 3.53 under GPT-4. The
    header gives it while the editor shows the run's tokenizer, and the legend says whose
    tokenizer the dots are."""
    result = train_in_window(qtbot, window, TINY, 400)
    editor, curve = window.editor, window.curve
    wait_for_spans(qtbot, editor)
    text = editor.text()
    n = len(result.merges)
    run_value = len(text.encode("utf-8")) / len(
        Tokenizer(result.vocab, result.merges, [EOT]).encode(text)
    )
    window.picker.pick(preset_key("cl100k_base"))
    qtbot.waitUntil(lambda: window.state.picked is not None and not editor.busy, timeout=30_000)
    gpt4 = len(text.encode("utf-8")) / len(Tokenizer.preset("cl100k_base").encode(text))
    assert f"{gpt4:.2f} bytes/token" in editor.status.text() and f"{gpt4:.2f}" != f"{run_value:.2f}"
    assert window.state.step == n
    header = curve.value_label.text()
    assert "editor" not in header and f"{run_value:.2f}" not in header
    # The dots stay, named for their tokenizer.
    assert html.unescape(curve.legend_html).endswith("</span> editor text, run's tokenizer")
    assert float(n) in curve.editor_dots.getData()[0].tolist()
    window.picker.pick(RUN)  # the run's tokenizer again: the editor's figure is the curve's
    qtbot.waitUntil(lambda: window.state.picked is None and not editor.busy, timeout=30_000)
    assert f"{run_value:.2f} bytes/token" in editor.status.text()
    assert f"editor {run_value:.2f} bytes/token" in curve.value_label.text()


# ----------------------------------------------------------------- defect 4
def llama_shape_file(directory, merges_kept: int = 1500, moved: int = 12):
    """A byte-level ``tokenizer.json`` shaped as Llama 3's: GPT-2's first merges, some of
    them listed before the merges that make their parts (as Llama 3.1's file lists
    ``Ġ ĠĠĠ`` before ``ĠĠ Ġ``), ``ignore_merges`` on."""
    from tokenizers import Regex, decoders, models, pre_tokenizers
    from tokenizers import Tokenizer as HfTokenizer

    lines = (FIXTURES / "gpt2_merges.txt").read_text(encoding="utf-8").splitlines()
    merges = [tuple(x.split(" ")) for x in lines if x and not x.startswith("#")][:merges_kept]
    made = {a + b: r for r, (a, b) in enumerate(merges)}
    late = [m for r, m in enumerate(merges) if r > 100 and (m[0] in made or m[1] in made)]
    early = late[:moved]
    merges = [merges[0], *early, *(m for m in merges[1:] if m not in early)]
    alphabet = list(bytes_to_unicode().values())
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    tok = HfTokenizer(models.BPE(vocab, merges, ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    path = directory / "tokenizer.json"
    tok.save(str(path))
    assert json.loads(path.read_text(encoding="utf-8"))["model"]["merges"]
    return path, len(merges)


def test_a_file_whose_merges_come_before_their_parts_gets_its_held_out_curve(
    qtbot, window, tmp_path
):
    path, n = llama_shape_file(tmp_path)
    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000) as loaded:
        assert window.load_tokenizer(path)
    assert loaded.args == [True] and window.state.phase is Phase.LOADED
    curve = window.curve
    qtbot.waitUntil(
        lambda: not curve.feeder.busy and curve.value_at(HELD_OUT, n) is not None, timeout=120_000
    )
    series = curve.feeder.series[HELD_OUT]
    assert series.error is None and len(series.tokens) == n + 1
    assert curve.value_at(HELD_OUT, n) > curve.value_at(HELD_OUT, 0)
    qtbot.waitUntil(lambda: curve._drawn == curve.feeder.version, timeout=30_000)
    assert "come before the merges that make their parts" in curve.legend_html
    low, high = curve.plot.vb.viewRange()[0]
    assert low <= 0 < n <= high and high < 1.1 * n  # the whole run, not a point's width


def test_the_merges_axis_reads_whole_merges():
    axis = MergeAxis("bottom")
    assert axis.tickStrings([0.0, 140_000.0, 280_147.0], 1.0, 140_000.0) == [
        "0",
        "140,000",
        "280,147",
    ]
    assert axis.tickStrings([0.0, 0.5, 1.0], 1.0, 0.5) == ["0", "", "1"]


# ----------------------------------------------------------------- defect 6
@pytest.fixture
def held_spans(monkeypatch):
    """Keeps the span thread from computing the editor's spans for a step or tokenizer until
    ``release()``: the GUI shows what it has meanwhile. The moves are left to the thread."""
    monkeypatch.setattr(spans_module, "GUI_SPLIT_TOKENS", 0)
    monkeypatch.setattr(spans_module, "GUI_FORWARD_WORK", 0)
    gate = threading.Event()
    gate.set()
    real_at = TokenizerSource.at

    def at(self, k):
        gate.wait(30)
        return real_at(self, k)

    monkeypatch.setattr(TokenizerSource, "at", at)
    return gate


def test_typing_an_earlier_step_never_names_it_over_the_later_steps_colours(
    qtbot, window, held_spans
):
    train_in_window(qtbot, window, SLICE, 1500)
    editor, hub = window.editor, window.hub
    hub.select_step(1200)
    qtbot.waitUntil(lambda: editor.tokenizer is not None and len(editor.tokenizer.merges) == 1200)
    qtbot.waitUntil(lambda: not editor.busy)
    held_spans.clear()
    window.timeline.spin.setValue(100)  # typed: the step every view shows is 100 at once
    assert hub.state.step == 100
    qtbot.wait(50)
    label = editor.source_label.text()
    assert len(editor.tokenizer.merges) == 1200  # the colours are still step 1,200's
    assert not label.startswith("at step 100") and "updating to step 100" in label
    assert "at step 1,200" in label
    held_spans.set()
    qtbot.waitUntil(lambda: len(editor.tokenizer.merges) == 100 and not editor.busy)
    assert editor.source_label.text().startswith("at step 100 · ")


def test_a_picked_tokenizer_is_not_named_before_its_colours_are_shown(qtbot, window, held_spans):
    train_in_window(qtbot, window, TINY, 400)
    editor = window.editor
    wait_for_spans(qtbot, editor)
    run_ids = editor.spans.ids.tolist()
    held_spans.clear()
    window.picker.pick(preset_key("gpt2"))
    qtbot.waitUntil(lambda: window.state.picked is not None, timeout=30_000)
    qtbot.wait(50)
    label = editor.source_label.text()
    painted = editor.edit._spans  # the colours on screen (marked out of date meanwhile)
    assert painted.ids.tolist() == run_ids  # still the run's colours, and it says so
    assert label.startswith("loading… · GPT-2 · still showing ") and "trained on" in label
    held_spans.set()
    qtbot.waitUntil(lambda: not editor.busy and editor.source_label.text().startswith("GPT-2"))
    assert editor.spans.ids.tolist() == Tokenizer.preset("gpt2").encode(editor.text())


# ----------------------------------------------------------------- defect 9
def test_a_run_discarded_to_train_never_comes_back(qtbot, window):
    old = train_in_window(qtbot, window, TINY, 400)
    asked: list[str] = []
    window.ask = lambda title, question: asked.append(question) or True
    assert window.start_training()  # discards the unsaved run
    session = window.controller.session
    window.stop_training()  # before the first merge, as a Stop while Dask counts
    with qtbot.waitSignal(session.finished, timeout=60_000):
        pass
    assert asked and window.state.result is not old
    assert window.merge_list.model.rowCount() == 0
    assert not window.panel.status.text().startswith("Done")
    assert window.state.phase is Phase.STOPPED and window.state.published == 0


def test_a_saved_run_comes_back_when_the_next_train_learns_nothing(qtbot, window, tmp_path):
    old = train_in_window(qtbot, window, TINY, 400)
    assert save_and_wait(qtbot, window, tmp_path, "gpt2")
    assert window.start_training()  # nothing to discard: it is saved
    session = window.controller.session
    window.stop_training()
    with qtbot.waitSignal(session.finished, timeout=60_000):
        pass
    assert window.state.result is old
    assert "shown before is shown again" in window.statusBar().currentMessage()


def test_saved_ends_when_the_run_learns_more(qtbot, window, tmp_path):
    session = paused_in_window(qtbot, window, SLICE, 3000, 300, workers=1)
    assert save_and_wait(qtbot, window, tmp_path, "gpt2")
    assert window.statusBar().currentMessage().startswith("Saved ")
    session.pause_after(600)
    window.toggle_pause()
    qtbot.waitUntil(lambda: session.worker_waiting and window.state.published > 301)
    assert window.statusBar().currentMessage() == ""
    assert window.hub.unsaved == window.state.merges_done - 301
    window.stop_training()
