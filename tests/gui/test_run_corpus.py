"""The run keeps the corpus it trained on (an audit, issue 67): a Train that learns nothing on
another corpus puts the run before back, and its in-sample curve stays that of its own corpus;
the Vocabulary lab's "The run's corpus" is the run's, and the corpus opened since is an entry
of its own; with no run trained (a loaded tokenizer, a discard) no corpus is the run's."""

from __future__ import annotations

import os

import pytest
from gui_helpers import EOT, FIXTURES, bad_after_probe, save_and_wait, train_in_window

from bpe_studio.core import Tokenizer
from bpe_studio.gui.model.curves import IN_SAMPLE
from bpe_studio.gui.model.state import Phase

TINY = FIXTURES / "tinystories_sample.txt"


def other_corpus(tmp_path):
    """A corpus unlike TINY: CJK ideographs and hiragana (assigned characters), spaced."""
    words = ["".join(chr(0x4E00 + (i * 7 + j) % 300) for j in range(3)) for i in range(400)]
    path = tmp_path / "other.txt"
    path.write_text(" ".join(words) + " ひらがな\n", encoding="utf-8")
    return path


def wait_curves(qtbot, window):
    qtbot.waitUntil(lambda: not window.curve.feeder.busy, timeout=60_000)
    qtbot.waitUntil(lambda: window.curve.feeder.version == window.curve._drawn, timeout=10_000)


def nothing_learned_on(qtbot, window, corpus, how: str) -> None:
    """Open ``corpus`` and Train on it so that nothing is learned: stopped at once, or
    failing (the corpus is not UTF-8 after what Open reads of it)."""
    assert window.open_corpus(corpus)
    assert window.start_training()
    session = window.controller.session
    if how == "stopped":
        window.stop_training()
    with qtbot.waitSignal(session.finished, timeout=60_000):
        pass


@pytest.mark.parametrize("how", ["stopped", "failed"])
def test_the_in_sample_curve_stays_the_runs_own_after_a_train_that_learns_nothing(
    qtbot, window, tmp_path, how
):
    result = train_in_window(qtbot, window, TINY, 400)
    # Saved: the next Train keeps it to restore.
    assert save_and_wait(qtbot, window, tmp_path, "gpt2")
    window.last_error = None
    other = other_corpus(tmp_path) if how == "stopped" else bad_after_probe(tmp_path / "o.txt")
    nothing_learned_on(qtbot, window, other, how)
    assert window.state.result is result  # the run before is back
    assert window.state.phase is Phase.FINISHED
    wait_curves(qtbot, window)
    sample = window.curve.feeder.series[IN_SAMPLE]
    text = TINY.read_text(encoding="utf-8")  # under 1 MB: the in-sample slice is all of it
    size = len(text.encode("utf-8"))
    assert sample.source == TINY.name and sample.bytes == size
    n = len(result.merges)
    expected = size / len(Tokenizer(result.vocab, result.merges, [EOT]).encode(text))
    assert window.curve.value_at(IN_SAMPLE, n) == pytest.approx(expected)
    assert f"in-sample: {TINY.name}" in window.curve.legend_html
    assert f"in-sample {expected:.2f}" in window.curve.value_label.text()
    assert window.state.corpus_source.name == other.name  # the corpus opened stays opened


def test_the_labs_runs_corpus_is_the_one_it_trained_on_and_the_opened_one_is_its_own_entry(
    qtbot, window, tmp_path
):
    train_in_window(qtbot, window, TINY, 400)
    assert save_and_wait(qtbot, window, tmp_path, "gpt2")  # kept when another corpus is opened
    lab = window.lab
    window.tabs.setCurrentWidget(lab)
    box, view = lab.corpus_box, lab.corpus_box.view()
    assert box.itemText(1) == f"The run's corpus ({TINY.name})"
    assert view.isRowHidden(2)  # the opened corpus is the run's: listed once
    other = other_corpus(tmp_path)
    assert window.open_corpus(other)  # opened, not trained on
    assert box.itemText(1) == f"The run's corpus ({TINY.name})"
    assert box.itemText(2) == f"The opened corpus ({other.name})" and not view.isRowHidden(2)
    lab.choose_corpus("run")
    assert lab.lab.wanted_corpus().paths == (str(TINY),)
    qtbot.waitUntil(lambda: not lab.busy and lab.lab.usage is not None, timeout=180_000)
    assert lab.lab.usage.corpus.paths == (str(TINY),)
    lab.choose_corpus("opened")
    assert box.currentIndex() == 2
    assert lab.lab.wanted_corpus().paths == (str(other),)
    qtbot.waitUntil(
        lambda: (
            not lab.busy
            and lab.lab.usage is not None
            and lab.lab.usage.corpus.paths == (str(other),)
        ),
        timeout=180_000,
    )
    # Trained on: the opened corpus is the run's again, one entry, the lab's choice with it.
    train_in_window(qtbot, window, other, 300)
    assert box.itemText(1) == f"The run's corpus ({other.name})" and view.isRowHidden(2)
    assert box.currentIndex() == 1 and lab.lab.wanted_corpus().paths == (str(other),)


def lab_menu(lab) -> list[tuple[str, bool]]:
    """The lab's corpus entries as the menu offers them: text, and whether it can be chosen."""
    box, view = lab.corpus_box, lab.corpus_box.view()
    model = box.model()
    return [
        (box.itemText(i), model.item(i).isEnabled())
        for i in range(3)  # none, the run's, the opened one
        if not view.isRowHidden(i)
    ]


def test_with_a_loaded_tokenizer_or_no_run_no_corpus_is_the_runs(qtbot, window, tmp_path):
    """A review: after Load tokenizer (GPT-2's files) the lab said "The run's corpus
    (german.txt)", the corpus opened, which GPT-2 never trained on (the compression plot
    rightly drew no in-sample curve); after a Discard too."""
    german = FIXTURES / "german.txt"
    train_in_window(qtbot, window, TINY, 400)
    assert save_and_wait(qtbot, window, tmp_path, "gpt2")  # kept when another corpus is opened
    lab = window.lab
    window.tabs.setCurrentWidget(lab)
    box = lab.corpus_box
    lab.choose_corpus("run")
    assert box.currentIndex() == 1 and lab.lab.wanted_corpus().paths == (str(TINY),)
    assert window.open_corpus(german)
    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000):
        assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    assert window.state.loaded is not None
    menu = lab_menu(lab)
    assert menu == [
        ("(no corpus)", True),
        ("The run's corpus (none: a loaded tokenizer)", False),
        (f"The opened corpus ({german.name})", True),
    ]
    assert not any(text.startswith("The run's corpus (german") for text, _ in menu)
    # The lab's choice was the run's corpus: it is the opened one now, computed on it.
    assert box.currentIndex() == 2
    assert lab.lab.wanted_corpus().paths == (os.fspath(german),)
    lab.choose_corpus("run")  # no run's corpus to choose: the opened one stands for it
    assert box.currentIndex() == 2
    assert IN_SAMPLE not in window.curve.feeder.series  # the plot agrees: no run's corpus

    window.controller.hub.discard_run()
    assert lab_menu(lab) == [
        ("(no corpus)", True),
        ("The run's corpus (none: no run trained)", False),
        (f"The opened corpus ({german.name})", True),
    ]
    assert box.currentIndex() == 2

    # Trained on: the opened corpus is the run's, one entry, the lab's choice with it.
    train_in_window(qtbot, window, german, 300)
    assert lab_menu(lab) == [("(no corpus)", True), (f"The run's corpus ({german.name})", True)]
    assert box.currentIndex() == 1 and lab.lab.wanted_corpus().paths == (os.fspath(german),)


def typed(window, field: str) -> None:
    """``field`` typed in the Train page's Text field, and Enter."""
    window.panel.text_field_edit.setText(field)
    window.panel.text_field_edit.editingFinished.emit()


def test_the_runs_records_read_with_another_text_field_are_the_opened_corpus_apart(
    qtbot, window, tmp_path
):
    """A run trained on records' "body"; the Train page's Text field changed to "title"
    since: the corpus opened is read otherwise than the run's (the next Train reads the
    titles), so it is listed apart, its field named, and each entry reads its own field."""
    import json

    rows = tmp_path / "rows.jsonl"
    text = TINY.read_text(encoding="utf-8")[:20_000]
    rows.write_text(
        "".join(
            json.dumps({"title": f"Story {i}", "body": t}) + "\n"
            for i, t in enumerate(text.split("\n\n"))
        ),
        encoding="utf-8",
    )
    assert window.open_corpus(rows)
    typed(window, "body")
    train_in_window(qtbot, window, rows, 300)
    lab = window.lab
    window.tabs.setCurrentWidget(lab)
    box, view = lab.corpus_box, lab.corpus_box.view()
    assert view.isRowHidden(2)  # the same records, the same field: one entry
    typed(window, "title")
    assert not view.isRowHidden(2)
    assert box.itemText(2) == "The opened corpus (rows.jsonl, text field 'title')"
    lab.choose_corpus("run")
    assert lab.lab.wanted_corpus().text_field == "body"
    lab.choose_corpus("opened")
    assert lab.lab.wanted_corpus().text_field == "title"
    typed(window, "body")  # the run's again: listed once, chosen
    assert view.isRowHidden(2) and box.currentIndex() == 1
