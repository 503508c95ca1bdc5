"""A pick whose tokenizer cannot be had puts the choice before back, everywhere (issue 33,
defect 2): a Hub model offline in Compare, in the Report and in the editor; a broken file.
The pane goes on showing the tokenizer it showed, labelled as such, the user hears why once,
and the failing download is not tried again by the next edit. The Hub is a local cache in
offline mode (``tests/core/hub_snapshot.py``), never the network."""

from __future__ import annotations

import pytest
from hub_snapshot import hub_at_a_closed_port, offline_hub

from bpe_studio.core import Tokenizer
from bpe_studio.gui.views.picker import hub_key, preset_key

QWEN = "Qwen/Qwen2.5-7B"  # listed in every menu; nothing of it is in the offline cache


@pytest.fixture
def offline(monkeypatch, tmp_path):
    return offline_hub(monkeypatch, tmp_path)


def errors_of(window) -> list[tuple[str, str]]:
    shown: list[tuple[str, str]] = []
    window.show_error = lambda title, message: shown.append((title, message))
    for page in (window.compare, window.report):
        page.error.disconnect()
        page.error.connect(lambda title, message: shown.append((title, message)))
    return shown


def test_a_hub_model_that_fails_offline_leaves_compare_as_it_was(qtbot, window, offline):
    compare = window.compare
    errors = errors_of(window)
    with qtbot.waitSignal(compare.compared, timeout=60_000):
        window.tabs.setCurrentWidget(compare)
    left, right = compare.choices
    before = compare.comparison
    left.pick(hub_key(QWEN))
    qtbot.waitUntil(lambda: not compare.busy and left.key != hub_key(QWEN), timeout=60_000)
    # The pane's picker, its label and its counts are GPT-2's again, all three.
    assert left.key == preset_key("gpt2") and window.hub.pane(left.pane).key == left.key
    assert compare.comparison.a.label == left.label_of(left.key) == before.a.label
    assert compare.stats[0].text().endswith(f" · {before.a.label}")
    assert len(errors) == 1 and QWEN in errors[0][1]
    # The next pick for the other pane shows what it picked, and no "Could not compare" stays.
    with qtbot.waitSignal(compare.compared, timeout=60_000):
        right.pick(preset_key("cl100k_base"))
    assert compare.comparison.b.label == right.label_of(preset_key("cl100k_base"))
    assert not compare.status.text().startswith("Could not")
    # Editing the text does not fetch the model that failed again.
    with qtbot.waitSignal(compare.compared, timeout=60_000):
        compare.set_text("a new text")
    assert len(errors) == 1


def test_a_hub_model_that_fails_offline_leaves_the_editor_as_it_was(qtbot, window, offline):
    errors = errors_of(window)
    window.editor_tokenizer.error.disconnect()
    window.editor_tokenizer.error.connect(lambda title, message: errors.append((title, message)))
    picker = window.picker
    picker.pick(preset_key("gpt2"))
    qtbot.waitUntil(lambda: window.state.picked is not None and not window.editor.busy)
    gpt2 = window.state.picked
    picker.pick(hub_key("Qwen/Qwen3-8B"))
    qtbot.waitUntil(lambda: not window.editor_tokenizer.busy, timeout=60_000)
    qtbot.waitUntil(lambda: not window.editor.busy, timeout=30_000)
    assert picker.key == preset_key("gpt2") and window.state.picked is gpt2
    ids = window.editor.spans.ids.tolist()
    assert ids == Tokenizer.preset("gpt2").encode(window.editor.text())
    note = window.editor_tokenizer.note
    assert "Could not load Qwen/Qwen3-8B" in note.text() and "Qwen/Qwen3-8B" in note.toolTip()
    # The first-hour audit: the note, cut beside the picker, was all that said why.
    assert len(errors) == 1 and "Qwen/Qwen3-8B" in errors[0][1]
    assert "The editor shows" in errors[0][1]


def test_a_failed_pick_names_the_runs_tokenizer_mid_sentence(qtbot, window, offline):
    """A session audit: "The editor shows The run's tokenizer." """
    errors = []
    window.editor_tokenizer.error.disconnect()
    window.editor_tokenizer.error.connect(lambda title, message: errors.append(message))
    window.picker.pick(hub_key("Qwen/Qwen3-8B"))
    qtbot.waitUntil(lambda: bool(errors), timeout=60_000)
    assert errors[0].endswith("The editor shows the run's tokenizer.")
    assert window.editor_tokenizer.note.text().endswith("showing the run's tokenizer")


def test_a_failed_picks_note_goes_once_the_run_it_names_is_another(qtbot, window, offline):
    """First-hour audit (h_first62): "Could not load Qwen/Qw… · showing the run's tokenizer"
    stayed beside the editor's picker after another tokenizer was loaded and a new corpus
    trained: about a run long gone. It goes with a new run, and with the next pick."""
    from gui_helpers import FIXTURES, train_in_window

    errors = []
    window.editor_tokenizer.error.disconnect()
    window.editor_tokenizer.error.connect(lambda title, message: errors.append(message))
    note = window.editor_tokenizer.note
    window.picker.pick(hub_key(QWEN))
    qtbot.waitUntil(lambda: note.text().startswith("Could not load"), timeout=60_000)
    train_in_window(qtbot, window, FIXTURES / "tinystories_slice.txt", 300)
    assert note.text() == "" and note.toolTip() == ""
    window.picker.pick(hub_key(QWEN))
    qtbot.waitUntil(lambda: note.text().startswith("Could not load"), timeout=60_000)
    window.picker.pick(preset_key("gpt2"))
    qtbot.waitUntil(lambda: not window.editor_tokenizer.busy, timeout=60_000)
    assert note.text().startswith("50,257 tokens")


def test_a_broken_file_picked_in_the_report_leaves_its_column(qtbot, window, tmp_path):
    broken = tmp_path / "tokenizer.json"
    broken.write_text("{not json", encoding="utf-8")
    report = window.report
    errors = errors_of(window)
    with qtbot.waitSignal(report.computed, timeout=120_000):
        window.tabs.setCurrentWidget(report)
    first = report.report.tokenizers
    slot = report.choices[1]
    before = slot.key
    slot.add_file(broken)
    qtbot.waitUntil(lambda: not report.busy and slot.key == before, timeout=120_000)
    assert report.report.tokenizers == first
    assert errors and str(broken.name) in errors[-1][1]


def test_a_pane_whose_shown_choice_goes_away_says_so_and_stops(qtbot, window):
    """The run's tokenizer in Compare, then the run discarded: the pane's choice itself can no
    longer be built. The page says why on its status line, once, and computes nothing more
    (undoing a pick would have nothing to go back to)."""
    from gui_helpers import FIXTURES, train_in_window

    train_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 400)
    compare = window.compare
    errors = errors_of(window)
    with qtbot.waitSignal(compare.compared, timeout=60_000):
        window.tabs.setCurrentWidget(compare)
    with qtbot.waitSignal(compare.compared, timeout=60_000):
        compare.choices[1].pick("run")
    assert window.open_corpus(FIXTURES / "german.txt")  # discards the unsaved run
    qtbot.waitUntil(lambda: not compare.busy, timeout=30_000)
    qtbot.wait(300)  # long enough for a loop of requests to show itself
    # The other pane's tokens stay on screen, and the line says so (not "could not compare").
    assert not compare.busy and compare.status.text().startswith("GPT-2 shown alone: ")
    assert errors == []  # no dialog: nothing the user picked failed


def test_an_unreachable_hub_in_the_editor_is_the_note_alone_not_stderr(
    qtbot, window, offline, monkeypatch, capfd
):
    """Issue 33, defect 17: the Hub at a closed port of this machine (not offline mode: what a
    dropped connection looks like), nothing cached. The editor says why in its note; stderr
    gets none of huggingface_hub's retry warnings (it retried five times, 11 lines)."""
    from huggingface_hub.utils import _http

    hub_at_a_closed_port(monkeypatch)
    monkeypatch.setattr(_http.time, "sleep", lambda seconds: None)  # a retry would wait first
    picker = window.picker
    picker.pick(preset_key("gpt2"))
    qtbot.waitUntil(lambda: window.state.picked is not None and not window.editor.busy)
    capfd.readouterr()
    picker.pick(hub_key("Qwen/Qwen3-8B"))
    note = window.editor_tokenizer.note
    qtbot.waitUntil(lambda: "Could not load Qwen/Qwen3-8B" in note.text(), timeout=60_000)
    assert "the Hub cannot be reached" in note.toolTip()
    err = capfd.readouterr().err
    assert "Retry" not in err and "huggingface" not in err.lower() and not err.strip(), err


def test_the_arrow_keys_step_past_a_model_that_just_failed(qtbot, window, offline):
    """A closed picker stepped with Down: a model not in the offline cache fails and the
    picker goes back; Down again went to it again, so the keyboard never got past it (an
    accessibility audit). It now steps over it, and Up comes back across it the same way;
    the model stays in the list for a pick by name."""
    from PySide6.QtCore import Qt

    errors = errors_of(window)
    window.editor_tokenizer.error.disconnect()
    window.editor_tokenizer.error.connect(lambda title, message: errors.append((title, message)))
    picker = window.picker
    keys = picker.keys()
    first_hub = next(i for i, key in enumerate(keys) if key.startswith("hf:"))
    picker.pick(keys[first_hub - 1])
    qtbot.waitUntil(lambda: window.state.picked is not None and not window.editor.busy)
    before = picker.key
    picker.setFocus()
    qtbot.keyClick(picker, Qt.Key.Key_Down)
    qtbot.waitUntil(lambda: not window.editor_tokenizer.busy, timeout=60_000)
    qtbot.waitUntil(lambda: picker.key == before, timeout=30_000)
    assert len(errors) == 1 and keys[first_hub].removeprefix("hf:") in errors[0][1]
    qtbot.keyClick(picker, Qt.Key.Key_Down)
    assert picker.key == keys[first_hub + 1]
    qtbot.waitUntil(lambda: not window.editor_tokenizer.busy, timeout=60_000)
    qtbot.waitUntil(lambda: picker.key == keys[first_hub + 1] or len(errors) == 2, timeout=30_000)
    # Up from the one after it lands on the one before, past the failed model.
    picker.pick(keys[first_hub + 1])
    qtbot.keyClick(picker, Qt.Key.Key_Up)
    assert picker.key == before
    assert keys[first_hub] in picker.keys()
    qtbot.waitUntil(lambda: not window.editor_tokenizer.busy, timeout=60_000)
    # The wheel steps past both failed models too (the review: it went onto them).
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    centre = QPointF(picker.rect().center())
    down = QWheelEvent(
        centre, picker.mapToGlobal(centre), QPoint(), QPoint(0, -120),
        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase,
        False,
    )  # fmt: skip
    QApplication.sendEvent(picker, down)
    assert picker.key == keys[first_hub + 2]
    qtbot.waitUntil(lambda: not window.editor_tokenizer.busy, timeout=60_000)
    # Page Down steps one choice, as Qt's own does (the second review: it jumped to the last
    # entry, an action, and ran it), past the failed ones.
    picker.pick(before)
    qtbot.keyClick(picker, Qt.Key.Key_PageDown)
    assert picker.key not in (keys[first_hub], keys[first_hub + 1])
    assert picker.key in (keys[first_hub + 2], keys[first_hub + 3])


def test_a_failed_pick_beside_a_choice_gone_is_one_dialog_not_shown_instead(
    qtbot, window, tmp_path
):
    """A review: GPT-2's files in Compare's left pane, deleted (its pane says why, the right
    pane is shown alone), then a broken file picked in that pane opened two dialogs: "…
    <folder> is shown instead", false (it cannot be built), and then one about that folder.
    One dialog says both."""
    import shutil

    from gui_helpers import FIXTURES

    folder = tmp_path / "gpt2"
    folder.mkdir()
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(FIXTURES / f"gpt2_{name}", folder / name)
    compare = window.compare
    errors = errors_of(window)
    window.tabs.setCurrentWidget(compare)
    left = compare.choices[0]
    shown = left.add_file(folder / "vocab.json")
    qtbot.waitUntil(
        lambda: not compare.busy and window.hub.pane(left.pane).key == shown, timeout=60_000
    )
    for name in ("vocab.json", "merges.txt"):
        (folder / name).unlink()
    compare.set_text("Hello there.")
    qtbot.waitUntil(lambda: not compare.busy and "shown alone" in compare.status.text())
    assert errors == []  # the pane the user did not just pick: the status line says it
    broken = tmp_path / "other" / "tokenizer.json"
    broken.parent.mkdir()
    broken.write_text("{not json", encoding="utf-8")
    left.add_file(broken)
    qtbot.waitUntil(lambda: bool(errors) and not compare.busy, timeout=60_000)
    qtbot.waitUntil(lambda: left.key == shown)
    assert len(errors) == 1, errors
    message = errors[0][1]
    assert "not valid JSON" in message and "shown instead" not in message
    assert "cannot be built either: gpt2: " in message and "a directory without" in message
    assert compare.status.text().startswith("GPT-4o (o200k_base) shown alone: gpt2: ")
