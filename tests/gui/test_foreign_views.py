"""WordPiece, Unigram and SentencePiece-style BPE files in the app (pytest-qt, offscreen).

Loaded with "Load tokenizer…", such a file is offered to the editor, Compare and Report, and
the run stays as it was; the editor's ids and Compare's counts are ``tokenizers``' own (the
file run directly); the explain panels say they apply to byte-level BPE.
"""

from __future__ import annotations

import pytest
import tokenizers
from foreign_files import (
    falcon_style,
    llama3_style,
    own_ids,
    sentencepiece_bpe,
    unigram,
    wordpiece,
)
from gui_helpers import train_in_window, wait_for_spans
from test_picker import editor_ids

from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.model.tokenizer_recipes import inspector_cache
from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.views.picker import file_key, preset_key
from bpe_studio.gui.views.step_through import StepThroughPanel
from bpe_studio.gui.views.why_token import WhyTokenPanel

TEXT = "Hello world, naïve café: 12345 tokens!\n  indented\tline 中文 😀 don't\n"
MAKERS = {"wordpiece": wordpiece, "unigram": unigram, "sentencepiece_bpe": sentencepiece_bpe}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("foreign_gui")
    return {name: make(root / name) for name, make in MAKERS.items()}


@pytest.mark.parametrize("name", list(MAKERS))
def test_loaded_file_is_offered_to_the_editor_not_the_run(qtbot, window, files, name):
    path = files[name]
    window.editor.set_text(TEXT)
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        assert window.load_tokenizer(path)
    assert blocker.args == [True], window.last_error
    assert window.state.phase is Phase.IDLE and window.state.loaded is None
    assert window.picker.key == file_key(path)
    assert window.picker.currentText() == path.parent.name  # by its folder (issue 33, 5)
    assert "run by tokenizers" in window.editor_tokenizer.note.text()
    assert editor_ids(qtbot, window) == own_ids(path, TEXT)
    # Compare and Report list it too.
    for choice in (*window.compare.choices, *window.report.choices):
        assert file_key(path) in choice.keys()


def test_a_byte_level_file_the_reader_refuses_is_offered_run_by_tokenizers(qtbot, window, tmp_path):
    path = falcon_style(tmp_path / "falcon")
    window.editor.set_text(TEXT)
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        assert window.load_tokenizer(path)
    assert blocker.args == [True], window.last_error
    assert window.state.phase is Phase.IDLE and window.state.loaded is None
    assert window.picker.key == file_key(path)
    note = f"{path}: run by tokenizers"
    assert window.statusBar().currentMessage().startswith(note)  # said once, on loading
    assert note in window.editor_tokenizer.note.toolTip()
    assert editor_ids(qtbot, window) == own_ids(path, TEXT)


def test_the_next_file_loaded_ends_the_last_ones_note(qtbot, window, files, tmp_path):
    """An audit: a file run by tokenizers said in the status bar why; a second file
    without notes loaded after it left that note there, naming the first file."""
    first = falcon_style(tmp_path / "falcon")
    for path in (first, files["unigram"]):
        with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
            assert window.load_tokenizer(path)
        assert blocker.args == [True], window.last_error
        assert window.picker.key == file_key(path)
        if path == first:
            assert window.statusBar().currentMessage().startswith(f"{first}: run by tokenizers")
    assert window.statusBar().currentMessage() == ""
    assert window.hub.notice is None


def test_a_loaded_runs_notes_stay_on_the_editors_line(qtbot, window, tmp_path):
    """An audit: a byte-level file with truncation and padding loaded as the run said so in
    the status bar once, and the editor's line (docs/formats.md promises it there) was empty."""
    import json

    path = llama3_style(tmp_path / "padded")
    obj = json.loads(path.read_text(encoding="utf-8"))
    obj["truncation"] = {"direction": "Right", "max_length": 8, "strategy": "LongestFirst"}
    obj["truncation"]["stride"] = 0
    path.write_text(json.dumps(obj), encoding="utf-8")
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        assert window.load_tokenizer(path)
    assert blocker.args == [True], window.last_error
    assert window.state.phase is Phase.LOADED
    (note,) = window.state.loaded.tokenizer.notes
    assert "truncation" in note
    qtbot.waitUntil(lambda: window.editor_tokenizer.picker.key == "run")
    assert note in window.editor_tokenizer.note.text()
    assert note in window.editor_tokenizer.note.toolTip()
    window.editor_tokenizer.picker.pick(preset_key("gpt2"))
    qtbot.waitUntil(lambda: "truncation" not in window.editor_tokenizer.note.text())
    window.editor_tokenizer.picker.pick("run")  # back on the run: said again
    assert note in window.editor_tokenizer.note.text()


def test_tooltip_names_the_token_as_the_file_writes_it(qtbot, window, files):
    path = files["wordpiece"]
    window.editor.set_text("hello worlds")
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000):
        window.load_tokenizer(path)
    wait_for_spans(qtbot, window.editor)
    qtbot.waitUntil(lambda: editor_ids(qtbot, window) == own_ids(path, "hello worlds"))
    backend = tokenizers.Tokenizer.from_file(str(path))
    last = backend.id_to_token(own_ids(path, "hello worlds")[-1])
    html = window.editor.edit.tooltip_html(len("hello worlds") - 1)
    assert f"WordPiece token &#x27;{last}&#x27;" in html


def test_compare_counts_a_foreign_file_as_tokenizers_does(qtbot, files):
    from bpe_studio.gui.views.compare import CompareView

    view = CompareView(AppModel())
    qtbot.addWidget(view)
    view.resize(1200, 700)
    path = files["sentencepiece_bpe"]
    view.choices[0].pick(preset_key("o200k_base"))
    view.choices[1].add_file(path)
    with qtbot.waitSignal(view.compared, timeout=60_000) as blocker:
        view.set_text(TEXT)
        view.show()
    comparison = blocker.args[0]
    assert comparison.b.tokens == len(own_ids(path, TEXT))
    # Its cuts come from tokenizers' offsets: "world" starts a token at offset 6 (by hand:
    # the normalizer's "▁" before it belongs to it).
    assert 6 in comparison.b.cuts.tolist()
    view.shutdown()


def test_explain_panels_say_they_apply_to_byte_level_bpe(qtbot, files):
    from bpe_studio.core.encode.foreign import open_tokenizer

    hub = AppModel()
    tok = open_tokenizer(files["unigram"])
    hub.pick_tokenizer(TokenizerSource("Unigram", tokenizer=tok))
    why = WhyTokenPanel(hub, inspector_cache())
    qtbot.addWidget(why)
    why.show()
    hub.select_token(tok.encode("the")[0], hub.state.picked)
    qtbot.waitUntil(lambda: why.explanation is not None, timeout=20_000)
    assert "applies to byte-level BPE" in why.explanation.problem
    assert "Unigram" in why.explanation.problem
    steps = StepThroughPanel(hub, inspector_cache())
    qtbot.addWidget(steps)
    steps.show()
    steps.show_piece("hello")
    qtbot.waitUntil(lambda: steps.walkthrough is not None and not steps.busy, timeout=20_000)
    assert "applies to byte-level BPE" in steps.walkthrough.problem
    # An audit: the editor gives such a tokenizer's cursor no piece (""), and the panel then
    # asked the user to click into the text they had just clicked.
    steps.show_piece("")
    qtbot.waitUntil(lambda: "applies to byte-level BPE" in steps.message.text(), timeout=20_000)
    assert "Type a word" not in steps.message.text()


def test_an_offered_file_leaves_the_unsaved_run(qtbot, window, files):
    """Load asks before an unsaved run would go, but an offered file replaces no run: the run
    stays, unsaved, in every view (it went at the question before)."""
    train_in_window(qtbot, window, DEMO_CORPUS, 400)
    state, hub = window.state, window.hub
    run_id, unsaved = state.run_id, hub.unsaved
    assert unsaved > 0
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        assert window.load_tokenizer(files["wordpiece"])
    assert blocker.args == [True], window.last_error
    assert window.picker.key == file_key(files["wordpiece"])
    assert state.run_id == run_id and state.phase is Phase.FINISHED and hub.unsaved == unsaved
    assert window.merge_list.model.rowCount() == unsaved


def test_a_normalizing_file_is_drawn_with_its_own_spans_at_every_step(qtbot, window, tmp_path):
    """An audit: under an NFKC + Lowercase byte-level file the editor drew "the ﬁle İs here"
    as 'the', ' ﬁl', 'e ', ... (split back by bytes the normalized text does not have), and
    under a prefix space it showed no tokens at all."""
    from hf_shapes import trained_bpe
    from tokenizers import normalizers, pre_tokenizers

    from bpe_studio.core import Tokenizer
    from bpe_studio.core.explain.span_arrays import compute_spans

    text = "the ﬁle İs here, Hello world"
    for name, normalizer, prefix in (
        ("nfkc", normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]), False),
        ("prefix", None, True),
    ):
        hf = trained_bpe(
            normalizer, pre_tokenizers.ByteLevel(add_prefix_space=prefix), [TEXT * 20, text], 300
        )
        path = tmp_path / name / "tokenizer.json"
        path.parent.mkdir()
        hf.save(str(path))
        window.editor.set_text(text)
        with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
            assert window.load_tokenizer(path)
        assert blocker.args == [True], window.last_error
        tok = Tokenizer.from_hf(path)
        for k in (len(tok.merges), 9, 0, 30):
            window.timeline.select_step(k)
            qtbot.waitUntil(
                lambda k=k: (
                    window.editor.spans is not None
                    and not window.editor.busy
                    and len(window.editor.spans.tokenizer.merges) == k
                ),
                timeout=30_000,
            )
            fresh = compute_spans(tok.truncated(k), text)
            for field in ("ids", "starts", "ends", "partial"):
                got = getattr(window.editor.spans, field).tolist()
                assert got == getattr(fresh, field).tolist(), (name, k, field)
        assert fresh.ids.tolist() != [] and "split_back" not in window.editor.status.text()


def test_the_editors_picker_loads_a_file_and_leaves_the_run(qtbot, window, tmp_path, monkeypatch):
    """Found by the app audit: the README says every picker offers "Load tokenizer file…",
    but the editor's offered only the Hub: a file reached the editor only through Load
    tokenizer…, which replaces the run on screen. Loaded in the editor's picker, it is shown
    there and the run stays."""
    from bpe_studio.gui.views import picker as picker_module
    from bpe_studio.gui.views.picker import LOAD_FILE

    path = llama3_style(tmp_path / "llama")
    result = train_in_window(qtbot, window, DEMO_CORPUS, 300)
    window.editor.set_text(TEXT)
    choices = window.editor_tokenizer.picker
    assert LOAD_FILE in choices.keys()
    monkeypatch.setattr(picker_module, "ask_for_tokenizer_file", lambda parent: str(path))
    choices.activated.emit(choices.findData(LOAD_FILE))  # the user picks the action
    qtbot.waitUntil(lambda: choices.key == file_key(path), timeout=30_000)
    qtbot.waitUntil(lambda: editor_ids(qtbot, window) == own_ids(path, TEXT), timeout=30_000)
    assert window.state.phase is Phase.FINISHED and window.state.loaded is None
    assert window.state.result is result  # the run is the one trained
