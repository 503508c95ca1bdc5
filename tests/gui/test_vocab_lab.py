"""The Vocabulary lab tab (issue 36) in the real window (pytest-qt, offscreen), its work in
the lab's own process.

Its numbers are the core report's: the charts, the summary lines and the lists are checked
against ``bpe-studio inspect``'s JSON object built here, in this process, from the core
(``token_table``, ``corpus_usage``, ``overlap``). Also: Cancel stops a corpus's usage and
keeps the make-up; a tokenizer that fails to load is undone in its picker and said once, a
corpus that is not UTF-8 is named; the run's make-up follows the timeline's step (checked
against the run's tokenizer rebuilt at each step and classified anew); a result that arrives
for a choice no longer shown is never drawn; clicking a token explains it; exports; a Hub
model from an offline cache; no process is left behind.
"""

from __future__ import annotations

import csv
import io
import json
import os

import numpy as np
import pytest
import tokenizers
from gui_helpers import FIXTURES, paused_in_window, train_in_window
from hub_snapshot import two_models
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QImage, QPalette

from bpe_studio.cli.inspect import report
from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain.categories import label as category_label
from bpe_studio.core.explain.overlap import overlap
from bpe_studio.core.explain.usage import corpus_usage
from bpe_studio.core.explain.vocabulary import token_table
from bpe_studio.core.io.hf_hub import HubModel
from bpe_studio.gui.model import lab_process
from bpe_studio.gui.model.lab_lists import Show, shows
from bpe_studio.gui.model.lab_process import live_lab_processes
from bpe_studio.gui.model.lab_records import Ended, MakeupResult, Outcome, UsageResult
from bpe_studio.gui.model.run_tokenizer import run_tokenizer_at
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.views import lab_tokens, theme
from bpe_studio.gui.views import vocab_lab as lab_page
from bpe_studio.gui.views.picker import NONE, RUN, hub_key, preset_key

CORPUS = FIXTURES / "tinystories_sample.txt"
WAIT = 180_000


@pytest.fixture(autouse=True)
def no_lab_process_left(qapp, qtbot):
    yield
    for widget in qapp.topLevelWidgets():
        getattr(widget, "close_without_asking", widget.close)()
    qtbot.waitUntil(lambda: live_lab_processes() == 0, timeout=30_000)


@pytest.fixture
def lab(window):
    window.show_error = lambda title, message: errors.append(message)
    errors: list[str] = []
    window.errors = errors
    window.lab.error.disconnect()
    window.lab.error.connect(lambda title, message: errors.append(message))
    window.tabs.setCurrentWidget(window.lab)
    return window.lab


def settled(qtbot, page, condition=lambda: True, timeout=WAIT) -> None:
    qtbot.waitUntil(lambda: not page.busy and condition(), timeout=timeout)


def core_report(tok: Tokenizer, corpus, other: Tokenizer | None) -> dict:
    """``bpe-studio inspect``'s JSON object for the same tokenizers and corpus."""
    table = token_table(tok)
    usage = corpus_usage(tok, [str(corpus)], table=table, workers=1) if corpus else None
    shares = overlap(table, token_table(other)) if other is not None else None
    return json.loads(json.dumps(report(table, usage, shares)))


def test_the_tabs_numbers_are_the_core_reports(qtbot, window, lab):
    lab.picker.pick(preset_key("gpt2"))
    lab.choose_corpus(str(CORPUS))
    lab.against.pick(preset_key("cl100k_base"))
    settled(qtbot, lab, lambda: lab.lab.overlap is not None and lab.lab.usage is not None)
    expected = core_report(Tokenizer.preset("gpt2"), CORPUS, Tokenizer.preset("cl100k_base"))
    charts = lab.charts
    assert charts.drawn_categories == {
        name: (c["tokens"], c["leading_space"]) for name, c in expected["categories"].items()
    }
    assert list(charts.drawn_categories) == list(expected["categories"])  # largest first
    assert charts.drawn_lengths == {int(n): c for n, c in expected["length_histogram"].items()}
    counts = expected["counts"]
    line = lab.makeup_line.text()
    assert f"{counts['tokens']:,} tokens · {counts['special_tokens']:,} special" in line
    assert f"{counts['ordinary_tokens']:,} ordinary · {counts['unreachable']:,} unreachable" in line
    corpus = expected["corpus"]
    ranks, drawn = charts.drawn_usage
    assert drawn.tolist() == [c for _, c in corpus["ranked"]]
    assert charts.drawn_tail == (corpus["used"], counts["ordinary_tokens"])
    usage_line = lab.usage_line.text()
    assert f"→ {corpus['tokens']:,} tokens" in usage_line
    assert f"used {corpus['used']:,} of {counts['ordinary_tokens']:,}" in usage_line
    assert f"never used {corpus['unused']:,}" in usage_line
    under = corpus["undertrained"]
    assert f"{len(under['inside']):,} inside used tokens" in usage_line
    assert f"{len(under['across']):,} only across tokens" in usage_line
    against = expected["against"]
    assert charts.drawn_overlap == {
        name: (s["shared"], s["only_this"], s["only_other"])
        for name, s in against["categories"].items()
    }
    assert f"shared {against['shared']:,}" in lab.overlap_line.text()
    # The lists: the never-used ones, then each category's, as the report has them.
    lab.tokens.choose_show(Show.NEVER_USED)
    listed = lab.tokens.model
    assert [listed.token_id(r) for r in range(listed.rowCount())] == sorted(
        i for ids in corpus["unused_ids"].values() for i in ids
    )
    assert lab.tokens.count.text().startswith(f"{corpus['unused']:,} tokens")
    for name, ids in corpus["unused_ids"].items():
        lab.tokens.choose_category(name)
        assert [listed.token_id(r) for r in range(listed.rowCount())] == ids
    assert not window.errors


def test_clicking_a_token_explains_it(qtbot, window, lab):
    lab.picker.pick(preset_key("gpt2"))
    lab.choose_corpus(str(CORPUS))
    settled(qtbot, lab, lambda: lab.lab.usage is not None)
    lab.tokens.choose_show(Show.USED)
    table = lab.tokens.table
    first = lab.tokens.model.index(0, 1)
    token_id = lab.tokens.model.token_id(0)
    rect = table.visualRect(first)
    from PySide6.QtCore import Qt

    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    why = lab.why
    qtbot.waitUntil(lambda: why.explanation is not None and not why.busy, timeout=WAIT)
    assert window.state.selected_token == token_id
    assert why.explanation.tree.token == Tokenizer.preset("gpt2").vocab[token_id]
    assert "GPT-2" in why.heading.text() and "not the run's" in why.heading.text()
    # The keyboard moves the selection, and the token explained with it (a real-display
    # audit: the row moved, the explanation stayed on the one clicked).
    qtbot.keyClick(table, Qt.Key.Key_Down)
    second = lab.tokens.model.token_id(1)
    qtbot.waitUntil(lambda: window.state.selected_token == second, timeout=WAIT)
    qtbot.waitUntil(
        lambda: (
            why.explanation is not None
            and why.explanation.tree.token == Tokenizer.preset("gpt2").vocab[second]
        ),
        timeout=WAIT,
    )


def test_a_token_of_the_run_says_so_while_the_lab_shows_another_tokenizer(qtbot, window, lab):
    """The lab shows GPT-4o (its default) and a token of the run is selected (a vocabulary
    row, the editor): the lab's "Why this token" names whose token it explains, as it does
    for a token of GPT-4o."""
    train_in_window(qtbot, window, CORPUS, 400)
    window.tabs.setCurrentWidget(lab)
    assert window.hub.pane("lab").key == preset_key("o200k_base")
    token_id = window.state.merge_rows[-1].new_id
    window.hub.select_token(token_id)  # what a click on a vocabulary row does
    why = lab.why
    qtbot.waitUntil(
        lambda: why.explanation is not None and why.explanation.token_id == token_id,
        timeout=WAIT,
    )
    assert "in the run's tokenizer" in why.heading.text()
    assert "GPT-4o" not in why.heading.text()


def test_cancel_stops_the_usage_and_keeps_the_makeup(qtbot, window, lab, tmp_path):
    big = tmp_path / "big.txt"
    text = (FIXTURES / "tinystories_slice.txt").read_text(encoding="utf-8")
    with open(big, "w", encoding="utf-8") as f:
        for _ in range(60):  # about 18 MB: seconds of encoding
            f.write(text)
    lab.picker.pick(preset_key("gpt2"))
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    lab.choose_corpus(str(big))
    qtbot.waitUntil(
        lambda: lab.lab.progress is not None and "big.txt" in lab.lab.progress.stage,
        timeout=WAIT,
    )
    assert lab.cancel_button.isEnabled()
    lab.cancel_button.click()
    settled(qtbot, lab)
    assert lab.lab.usage is None and lab.lab.makeup is not None
    assert lab.status.text().startswith("Cancelled: the usage of big.txt")
    assert lab.compute_button.isVisible() and not lab.cancel_button.isEnabled()
    assert lab.lab.next_job() is None  # nothing restarts by itself
    # The process is fine: another corpus is measured.
    lab.choose_corpus(str(CORPUS))
    settled(qtbot, lab, lambda: lab.lab.usage is not None)
    assert lab.lab.usage.usage.tokens == len(Tokenizer.preset("gpt2").encode(CORPUS.read_text()))
    assert not lab.compute_button.isVisible()


def test_a_tokenizer_or_corpus_that_fails_is_said_and_undone(qtbot, window, lab, tmp_path):
    lab.picker.pick(preset_key("gpt2"))
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    bad = tmp_path / "broken" / "tokenizer.json"
    bad.parent.mkdir()
    bad.write_text("{ not json", encoding="utf-8")
    lab.picker.add_file(bad)
    settled(qtbot, lab, lambda: bool(window.errors))
    assert len(window.errors) == 1 and "tokenizer.json" in window.errors[0]
    assert lab.picker.key == preset_key("gpt2") and window.hub.pane("lab").key == lab.picker.key
    assert lab.lab.makeup.ref.key == preset_key("gpt2")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("caf\u00e9 au lait\n".encode("latin-1"))
    lab.choose_corpus(str(latin1))
    settled(qtbot, lab, lambda: len(window.errors) == 2)
    assert "latin1.txt" in window.errors[1] and "UTF-8" in window.errors[1]
    assert "latin1.txt" in lab.status.text()
    assert lab.lab.usage is None and lab.lab.makeup is not None
    assert lab.compute_button.isVisible()


def test_a_tokenizer_file_loaded_again_after_a_change_is_read_again(qtbot, window, lab, tmp_path):
    """An audit: a tokenizer.json retrained into the same folder and loaded again ("Load
    tokenizer file…" of the same path) kept showing the old file's make-up and usage."""
    from gui_helpers import EOT

    from bpe_studio.core import train_bpe

    first = Tokenizer(*train_bpe(CORPUS, 300, [EOT]), [EOT])
    second = Tokenizer(*train_bpe(CORPUS, 420, [EOT, "<|pad|>"]), [EOT, "<|pad|>"])
    folder = tmp_path / "model"
    (path,) = first.save(folder, format="hf")
    lab.choose_corpus(str(CORPUS))
    key = lab.picker.add_file(path)
    text = CORPUS.read_text(encoding="utf-8")
    for tok in (first, second):
        if tok is second:
            assert second.save(folder, format="hf") == [path]  # retrained in place
            assert lab.picker.add_file(path) == key  # as "Load tokenizer file…" does
        settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.usage.complete)
        m = lab.lab.makeup.table.makeup()
        assert (m.tokens, m.special_tokens) == (len(tok.vocab), len(tok.special_tokens))
        assert f"{len(tok.special_tokens)} special" in lab.makeup_line.text()
        assert lab.lab.usage.usage.tokens == len(tok.encode(text))
        assert f"→ {len(tok.encode(text)):,} tokens" in lab.usage_line.text()


def test_a_byte_level_file_tokenizers_runs_says_why_it_has_no_reach(qtbot, lab, tmp_path):
    """An audit: the line read "byte-level BPE (not read exactly here) … unreachable: the
    Reach rule applies to byte-level BPE only", contradicting itself; its tokens were listed
    in GPT-2's byte-to-character spelling ("Ġ" for a space)."""
    from foreign_files import falcon_style

    path = falcon_style(tmp_path / "falcon")
    lab.picker.add_file(path)
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    line = lab.makeup_line.text()
    assert "byte-level BPE (not read exactly here)" in line
    assert "Reach needs a file this project reads itself; this one is run by tokenizers" in line
    assert "applies to byte-level BPE only" not in line
    table = lab.lab.makeup.table
    assert table.shown(table.row(220)) == "␣"  # b" " in GPT-2's byte order


def test_the_tokenizers_notes_are_shown_under_the_summary(qtbot, lab, tmp_path):
    """Audit h_kinds64: a Llama 3-shaped file with only a truncation, read exactly, was
    examined without a word of its note (truncation not applied: the usage covers whole
    texts), which inspect, Compare and the editor say; nor was the note of a file run by
    tokenizers, chosen against it. Both are said under the summary, whole in the tooltip;
    a preset has none, and the line goes."""
    import tokenizers
    from foreign_files import falcon_style, llama3_style

    oracle = tokenizers.Tokenizer.from_file(str(llama3_style(tmp_path / "made", full=False)))
    oracle.enable_truncation(max_length=4)
    path = tmp_path / "truncated" / "tokenizer.json"
    path.parent.mkdir()
    oracle.save(str(path))
    lab.picker.add_file(path)
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    (note,) = lab.lab.makeup.notes
    assert note.startswith(f"{path}: its truncation is not applied")
    assert "unreachable" in lab.makeup_line.text()  # read exactly: its reach is worked out
    assert not lab.notes_line.isHidden()
    assert lab.notes_line.text() == note and lab.notes_line.toolTip() == note

    other = falcon_style(tmp_path / "falcon")
    lab.against.add_file(other)
    settled(qtbot, lab, lambda: lab.lab.overlap is not None)
    (run_by,) = lab.lab.overlap.other_notes
    assert run_by.startswith(f"{other}: run by tokenizers")
    assert lab.notes_line.text() == f"{note}; {run_by}"
    assert lab.notes_line.toolTip() == f"{note}\n{run_by}"

    lab.picker.pick(preset_key("gpt2"))
    settled(qtbot, lab, lambda: lab.lab.makeup.ref.key == preset_key("gpt2"))
    settled(qtbot, lab, lambda: lab.lab.overlap is not None)
    assert lab.lab.makeup.notes == () and lab.notes_line.text() == run_by
    lab.against.pick(NONE)
    settled(qtbot, lab, lambda: lab.lab.overlap is None)
    assert lab.notes_line.isHidden() and lab.notes_line.toolTip() == ""


def test_a_json_of_records_is_asked_about_and_a_text_field_stays_with_records(
    qtbot, window, lab, tmp_path
):
    """An audit: the lab read a .json of records as text without asking (the Train page
    asks), and a text field typed for records stayed, hidden, for a plain .txt chosen next,
    whose usage failed with "say records='jsonl'" (a Python argument, in the window)."""
    texts = ["Once upon a time there was a cat.", "The cat sat on a mat, and slept."]
    rows = tmp_path / "rows.json"
    rows.write_text("".join(json.dumps({"content": t}) + "\n" for t in texts), encoding="utf-8")
    asked: list[str] = []
    answer = ["cancel"]
    window.ask_records = lambda title, question: asked.append(question) or answer[0]
    lab.picker.pick(preset_key("gpt2"))
    gpt2 = Tokenizer.preset("gpt2")
    lab.choose_corpus(str(rows))  # cancelled: no corpus chosen
    assert len(asked) == 1 and "rows.json: its first line is a JSON object" in asked[0]
    assert lab.lab.corpus == lab_page.LabCorpus() and not lab.text_field.isVisible()
    answer[0] = "jsonl"
    lab.choose_corpus(str(rows))
    assert lab.text_field.isVisible()
    lab.text_field.setText("content")
    lab.text_field.editingFinished.emit()
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.usage.complete)
    assert lab.lab.usage.usage.tokens == sum(len(gpt2.encode(t)) for t in texts)
    assert lab.usage_line.text().startswith("rows.json (as records): ")
    lab.choose_corpus(str(CORPUS))
    assert not lab.text_field.isVisible()
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.usage.complete)
    assert lab.lab.problem is None and window.errors == []
    assert lab.lab.usage.usage.tokens == len(gpt2.encode(CORPUS.read_text(encoding="utf-8")))


def _makeup_at(state, k: int) -> dict:
    """The run's make-up after ``k`` merges, from its tokenizer rebuilt and classified anew."""
    m = token_table(run_tokenizer_at(state, k)()).makeup()
    return {name: (c.tokens, c.leading_space) for name, c in m.categories.items()}


def test_the_page_is_busy_until_the_step_moved_to_is_drawn(qtbot, window, lab):
    """Found by a longer run of the app's state machine (load, the lab on the run's
    tokenizer, the timeline moved to step 0): the page said it was not busy while the
    step's redraw still waited for the next turn of the event loop, so a wait for it to
    settle (the tests', a script's) read the step before's categories."""
    train_in_window(qtbot, window, CORPUS, 400)
    window.tabs.setCurrentWidget(lab)
    lab.picker.pick(RUN)
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    window.timeline.select_step(0)
    assert lab.busy
    settled(qtbot, lab)
    assert lab.charts.drawn_categories == _makeup_at(window.state, 0)


def test_the_runs_makeup_follows_the_timeline(qtbot, window, lab):
    session = paused_in_window(qtbot, window, FIXTURES / "tinystories_slice.txt", 900, 99)
    state = window.state
    window.tabs.setCurrentWidget(lab)
    lab.picker.pick(RUN)
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    assert state.step == 100 and lab.step_row.isVisible()
    assert lab.charts.drawn_categories == _makeup_at(state, 100)
    assert "at step 100," in lab.makeup_line.text()
    window.hub.select_step(37)  # scrubbed: drawn from the same table, no job
    qtbot.waitUntil(lambda: "at step 37," in lab.makeup_line.text(), timeout=10_000)
    assert lab.charts.drawn_categories == _makeup_at(state, 37)
    assert lab.step_slider.value() == 37
    lab.step_slider.setValue(80)  # the lab's own slider moves the timeline
    assert state.step == 80
    qtbot.waitUntil(lambda: "at step 80," in lab.makeup_line.text(), timeout=10_000)
    window.hub.follow_live()
    session.pause_after(399)  # more merges: the make-up follows them
    window.toggle_pause()
    qtbot.waitUntil(lambda: session.worker_waiting, timeout=WAIT)
    settled(qtbot, lab, lambda: state.phase is Phase.PAUSED and lab.lab.makeup.ref.merges == 400)
    assert state.step == 400
    assert lab.charts.drawn_categories == _makeup_at(state, 400)
    window.toggle_pause()
    qtbot.waitUntil(lambda: not state.phase.training, timeout=WAIT)
    settled(qtbot, lab, lambda: lab.lab.makeup.ref.merges == state.published)
    assert lab.charts.drawn_categories == _makeup_at(state, state.published)


def test_a_result_for_a_choice_no_longer_shown_is_never_drawn(qtbot, window, lab):
    held: list = []
    process = lab.runner.process
    process._deliver = held.append  # the process's news, held back (its thread appends)
    lab.picker.pick(preset_key("gpt2"))
    qtbot.waitUntil(lambda: any(isinstance(m, MakeupResult) for m in held), timeout=WAIT)
    lab.picker.pick(preset_key("cl100k_base"))  # the user picks GPT-4 before it is shown
    qtbot.waitUntil(
        lambda: any(
            isinstance(m, MakeupResult) and m.ref.key == preset_key("cl100k_base") for m in held
        ),
        timeout=WAIT,
    )
    drawn: list[dict] = []
    lab.lab.results_changed.connect(lambda: drawn.append(dict(lab.charts.drawn_categories)))
    taken: list[tuple[str, bool]] = []
    receive = lab.lab.receive

    def spy(message):
        ok = receive(message)
        if isinstance(message, MakeupResult):
            taken.append((message.ref.key, ok))
        return ok

    lab.lab.receive = spy
    process._deliver = lab.runner._deliver
    for message in held:  # all of it, late, in the order it came
        lab.runner._deliver(message)
    settled(qtbot, lab, lambda: len(taken) == 2)
    assert taken == [(preset_key("gpt2"), False), (preset_key("cl100k_base"), True)]
    gpt2 = token_table(Tokenizer.preset("gpt2")).makeup()
    gpt2_bars = {k: (c.tokens, c.leading_space) for k, c in gpt2.categories.items()}
    assert drawn and all(bars != gpt2_bars for bars in drawn)
    assert lab.lab.makeup.ref.key == preset_key("cl100k_base")
    assert lab.makeup_line.text().startswith("GPT-4 (cl100k_base), byte-level BPE: 100,261")


def test_the_usage_is_shown_before_the_scan_and_completed_after(qtbot, window, lab):
    held: list = []
    process = lab.runner.process
    process._deliver = held.append  # the process's news, held back (its thread appends)
    lab.picker.pick(preset_key("gpt2"))
    lab.choose_corpus(str(CORPUS))

    def usage_done() -> bool:
        done = [m for m in held if isinstance(m, UsageResult) and m.complete]
        return bool(done) and any(isinstance(m, Ended) for m in held[held.index(done[-1]) :])

    qtbot.waitUntil(usage_done, timeout=WAIT)
    process._deliver = lab.runner._deliver
    seen: list[tuple[bool, str, bool]] = []
    for message in held:  # in the order it came, each drawn as it is taken
        lab.lab.receive(message)
        if isinstance(message, UsageResult) and lab.lab.usage is message:
            listed = Show.ACROSS in shows(lab.lab)
            seen.append((message.complete, lab.usage_line.text(), listed))
    assert [(complete, listed) for complete, _, listed in seen] == [(False, False), (True, True)]
    first, last = seen[0][1], seen[1][1]
    assert "inside used tokens; the text is being searched for the others' bytes" in first
    assert "only across tokens" in last and "searched" not in last
    settled(qtbot, lab)
    assert lab.usage_line.text() == last and not window.errors


def test_a_scan_cancelled_leaves_the_usage_shown_and_says_so(qtbot, window, lab):
    held: list = []
    process = lab.runner.process
    process._deliver = held.append
    lab.picker.pick(preset_key("gpt2"))
    lab.choose_corpus(str(CORPUS))
    first = lambda: next(  # noqa: E731
        (m for m in held if isinstance(m, UsageResult) and not m.complete), None
    )
    qtbot.waitUntil(lambda: first() is not None, timeout=WAIT)
    job = lab.lab.running
    for message in held[: held.index(first()) + 1]:  # the news up to the first part only
        lab.lab.receive(message)
    assert "being searched" in lab.usage_line.text()
    lab.runner.cancel()  # the user's Cancel during the scan
    lab.lab.receive(Ended(job.number, Outcome.CANCELLED))
    process._deliver = lab.runner._deliver
    assert lab.lab.running is None and lab.lab.usage is first()
    assert lab.usage_line.text().endswith("; the text was not searched for the others' bytes")
    assert lab.status.text().startswith("Cancelled: ") and "the usage of" in lab.status.text()
    assert not lab.compute_button.isHidden()
    lab.compute_button.click()  # asked again: computed whole
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.usage.complete)
    assert "only across tokens" in lab.usage_line.text() and not window.errors


def test_exports(qtbot, window, lab, tmp_path):
    lab.picker.pick(preset_key("gpt2"))
    lab.choose_corpus(str(CORPUS))
    settled(qtbot, lab, lambda: lab.lab.usage is not None)
    assert lab.export_summary_csv(tmp_path / "lab.csv")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "lab.csv").read_text("utf-8"))))
    values = {(r["section"], r["name"], r["measure"]): r["value"] for r in rows}
    assert values["makeup", "all", "tokens"] == "50257"
    assert values["about", "corpus", "name"] == CORPUS.name
    lab.tokens.choose_show(Show.INSIDE)
    assert lab.export_tokens_csv(tmp_path / "tokens.csv")
    tokens = list(csv.DictReader(io.StringIO((tmp_path / "tokens.csv").read_text("utf-8"))))
    assert sorted(int(r["id"]) for r in tokens) == sorted(lab.lab.usage.usage.inside)
    assert all(r["count"] == "0" for r in tokens)
    assert lab.export_png(tmp_path / "lab.png")
    assert (tmp_path / "lab.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # A path that cannot be written: said, naming it, and nothing half written.
    folder = tmp_path / "a folder"
    folder.mkdir()
    assert not lab.export_summary_csv(folder)
    assert f"{folder}: {folder} is a folder, not a file" in window.errors[-1]


def test_text_a_bert_style_file_drops_is_not_counted_as_none(qtbot, window, lab, tmp_path):
    """An audit: the lab's line gave a BERT-style file (BertPreTokenizer, WordPiece: every
    space dropped) a bytes/token over the whole input as if nothing were dropped, and its
    CSV 0 dropped bytes. What it drops is not counted (its ids are not the text's bytes):
    the line says so and that the ratio is of the whole input; the CSV's cell is empty.
    The oracle: tokenizers' own pre-tokenizer leaves bytes out of its pieces."""
    from foreign_files import pre_tokenizer_dropped, wordpiece

    path = wordpiece(tmp_path / "bert")
    text = "The cat sat on the mat, again and again.\n" * 40
    corpus = tmp_path / "t.txt"
    corpus.write_text(text, encoding="utf-8")
    assert pre_tokenizer_dropped(path, text) > 0
    lab.picker.add_file(path)
    lab.choose_corpus(str(corpus))
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.usage.complete)
    assert lab.lab.usage.usage.dropped is None
    line = lab.usage_line.text()
    assert "bytes/token of the whole input, the text dropped not counted out)" in line
    assert "its pre-tokenizer drops text, as tokenizers does (no id stands for it): not " in line
    assert lab.export_summary_csv(tmp_path / "lab.csv")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "lab.csv").read_text("utf-8"))))
    values = {(r["section"], r["name"], r["measure"]): r["value"] for r in rows}
    assert values["corpus", "text", "dropped_bytes"] == ""
    assert values["corpus", "text", "bytes"] == str(len(text.encode()))


def test_a_wordpiece_that_drops_nothing_says_its_unk_words_are_not_text_kept(
    qtbot, window, lab, tmp_path
):
    """An audit: under a WordPiece whose pre-tokenizer drops nothing, the never-used "xyz",
    met only inside "xyzw" (one [UNK] id: tokenizers' own tokens), was counted among the
    bytes "not in the text", which holds it: the line and the list's name say not in the
    text kept, and the line how many words the model got as [UNK]."""
    from foreign_files import wordpiece_keeping_spaces

    path = wordpiece_keeping_spaces(tmp_path / "wp")
    text = "Hello ok xyzw\n" * 12
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert hf.encode(text, add_special_tokens=False).tokens.count("[UNK]") == 12  # the oracle
    corpus = tmp_path / "t.txt"
    corpus.write_text(text, encoding="utf-8")
    lab.picker.add_file(path)
    lab.choose_corpus(str(corpus))
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.usage.complete)
    assert lab.lab.usage.usage.dropped == 0
    line = lab.usage_line.text()
    assert "not in the text kept · its WordPiece model gave 12 words as its unknown token" in line
    box = lab.tokens.show_box
    assert box.itemText(box.findData(Show.ABSENT)) == "Never used: bytes not in the text kept"
    assert not window.errors


def test_tokens_met_only_in_dropped_text_are_listed_as_not_in_the_text_kept(
    qtbot, window, lab, tmp_path
):
    """A tokenizer.json whose Split removes the digits: the lab listed "1999" among the
    tokens whose bytes occur only across tokens, though the encoder never sees them. The line,
    the list's name and the list say not in the text kept, as ``inspect`` does (its JSON: the
    oracle of the counts)."""
    from foreign_files import removing_split

    path = removing_split(tmp_path / "hf", "[0-9]+", invert=False, use_regex=True)
    corpus = tmp_path / "t.txt"
    corpus.write_text("cat2dog said 1999 and 1000.\n" * 30, encoding="utf-8")
    expected = core_report(open_tokenizer(path), corpus, None)["corpus"]["undertrained"]
    lab.picker.add_file(path)
    lab.choose_corpus(str(corpus))
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.usage.complete)
    line = lab.usage_line.text()
    assert f"{len(expected['across']):,} only across tokens, " in line
    assert f", {len(expected['absent']):,} not in the text kept · its pre-tokenizer left" in line
    box = lab.tokens.show_box
    assert box.itemText(box.findData(Show.ABSENT)) == "Never used: bytes not in the text kept"
    lab.tokens.choose_show(Show.ABSENT)
    listed = lab.tokens.model
    ids = [listed.token_id(r) for r in range(listed.rowCount())]
    assert ids == expected["absent"]
    assert tokenizers.Tokenizer.from_file(str(path)).token_to_id("1999") in ids
    assert not window.errors


def test_a_hub_model_from_an_offline_cache(qtbot, window, lab, monkeypatch, tmp_path):
    files = two_models(monkeypatch, tmp_path)
    lab.picker.add_hub_model(HubModel("acme/ll", "v1"))
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    assert lab.lab.makeup.ref.key == hub_key("acme/ll@v1")
    expected = token_table(Tokenizer.load(files["ll"])).makeup()
    assert lab.charts.drawn_lengths == expected.length_histogram
    assert lab.makeup_line.text().startswith("acme/ll@v1, byte-level BPE:")
    # A model not in the cache fails offline: undone, said once.
    lab.picker.pick(hub_key("Qwen/Qwen2.5-7B"))
    settled(qtbot, lab, lambda: bool(window.errors))
    assert lab.picker.key == hub_key("acme/ll@v1") and len(window.errors) == 1
    assert "Qwen/Qwen2.5-7B" in window.errors[0]


def _values_shown(plot) -> bool:
    return all(plot.getAxis(side).style["showValues"] for side in ("bottom", "left"))


def test_empty_charts_show_no_axis_values_and_say_what_is_worked_out(qtbot, window, lab):
    charts = lab.charts
    plots = (charts.categories_plot, charts.lengths_plot, charts.usage_plot, charts.overlap_plot)
    lab.picker.pick(preset_key("gpt2"))
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    # No corpus, no second tokenizer: their charts are empty, with no 0-to-1 scale.
    assert [_values_shown(p) for p in plots] == [True, True, False, False]
    assert "Choose a corpus" in charts._usage_note.toPlainText()
    lab.choose_corpus(str(CORPUS))
    qtbot.waitUntil(lambda: lab.lab.running is not None, timeout=WAIT)
    if lab.lab.usage is None:  # still being computed: the chart says so
        assert charts._usage_note.toPlainText() == "Being worked out…"
    settled(qtbot, lab, lambda: lab.lab.usage is not None)
    assert [_values_shown(p) for p in plots] == [True, True, True, False]
    assert charts._usage_note.toPlainText() == ""


def test_the_byte_length_view_ends_where_nearly_all_tokens_are(qtbot, window, lab):
    lab.picker.pick(preset_key("o200k_base"))
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    lengths = token_table(Tokenizer.preset("o200k_base")).makeup().length_histogram
    total, seen, end = sum(lengths.values()), 0, 0
    for n in sorted(lengths):  # the shortest length with 99.9% of the tokens at or below it
        seen += lengths[n]
        if seen >= 0.999 * total:
            end = n
            break
    assert max(lengths) > 2 * end  # o200k's longest tokens are far longer
    (x0, x1), _ = lab.charts.lengths_plot.vb.viewRange()
    assert x0 < 1 and end < x1 < end + 1
    assert "99.9% shown" in lab.charts._titles[id(lab.charts.lengths_plot)]
    axis = lab.charts.lengths_plot.getAxis("bottom").labelText
    assert axis.endswith(f"longest {max(lengths):,}")


def _stat(pid: int) -> tuple[str, int] | None:
    """A process's state letter and parent id (Linux /proc), None when it is gone."""
    try:
        text = open(f"/proc/{pid}/stat", encoding="ascii", errors="replace").read()
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
    return fields[0], int(fields[1])


def _descendants(pid: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None:
            parents[int(entry)] = stat[1]
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _running(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads processes from Linux's /proc")
def test_closing_while_a_usage_runs_leaves_no_worker_process(
    qtbot, window, lab, tmp_path, monkeypatch
):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the usage runs in worker processes only with two cores or more")
    big = tmp_path / "big.txt"
    big.write_text(CORPUS.read_text(encoding="utf-8") * 1_500, encoding="utf-8")  # ~5 MB
    lab.picker.pick(preset_key("gpt2"))
    lab.choose_corpus(str(big))
    process = lab.runner.process
    qtbot.waitUntil(lambda: process._process is not None, timeout=WAIT)
    child = process._process.pid
    workers: set[int] = set()

    def workers_started() -> bool:
        workers.update(_descendants(child))
        return len(workers) >= 2

    qtbot.waitUntil(workers_started, timeout=WAIT)
    # The window closes before the cancelled usage can end by itself: the process is ended.
    monkeypatch.setattr(lab_process, "SHUTDOWN_WAIT", 0.0)
    window.close_without_asking()
    qtbot.waitUntil(lambda: not any(_running(p) for p in workers | {child}), timeout=30_000)


def test_a_compressed_corpus_moves_on_and_its_copy_goes_with_the_process(
    qtbot, window, lab, tmp_path, monkeypatch
):
    """An audit: a .txt.gz corpus's progress stayed at 0% for its whole encoding, and Cancel
    waited for it. It is decompressed first (said), then encoded range by range; the copy,
    in the lab's process's own temporary folder, goes when the window closes mid-way (which
    ends the busy process at once, before it can remove anything itself)."""
    import gzip
    from pathlib import Path

    packed = tmp_path / "big.txt.gz"
    packed.write_bytes(gzip.compress(CORPUS.read_bytes() * 6_000, 1))  # ~20 MB of text
    stages: list[str] = []
    lab.lab.progress_changed.connect(
        lambda: stages.append(lab.lab.progress.stage) if lab.lab.progress else None
    )
    lab.picker.pick(preset_key("gpt2"))
    lab.choose_corpus(str(packed))

    def mid_encoding() -> bool:
        p = lab.lab.progress
        return p is not None and p.stage == "encoding big.txt.gz" and 0 < p.done < p.total

    qtbot.waitUntil(mid_encoding, timeout=WAIT)
    assert "decompressing big.txt.gz" in stages
    temp = Path(lab.runner.process._temp)
    assert [f.stat().st_size for f in temp.glob("bpe-studio-*/*.text")] == [
        len(CORPUS.read_bytes()) * 6_000
    ]
    monkeypatch.setattr(lab_process, "SHUTDOWN_WAIT", 0.0)
    window.close_without_asking()
    qtbot.waitUntil(lambda: not temp.exists(), timeout=30_000)


def _contrast(a, b) -> float:
    """WCAG's contrast ratio, computed here from its definition (not the theme's)."""

    def lum(colour) -> float:
        colour = QColor(colour)
        out = 0.0
        for weight, value in (
            (0.2126, colour.red()),
            (0.7152, colour.green()),
            (0.0722, colour.blue()),
        ):
            c = value / 255
            out += weight * (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
        return out

    high, low = sorted((lum(a), lum(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _painted_background(widget) -> QColor:
    """The commonest colour of the widget as rendered: what the chart is painted on."""
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    width, height, row = image.width(), image.height(), image.bytesPerLine() // 4
    data = np.frombuffer(image.constBits(), dtype=np.uint32, count=height * row)
    values, counts = np.unique(data.reshape(height, row)[:, :width], return_counts=True)
    rgb = int(values[np.argmax(counts)])
    return QColor((rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255)


def test_the_charts_follow_the_colour_scheme_live(qtbot, app_style, window, lab):
    """Drawn, then switched to dark and back: every chart is painted on a background of the
    scheme, its axes, titles, legends and notes read on it, and its bars stand out from it."""
    lab.picker.pick(preset_key("gpt2"))
    lab.choose_corpus(str(CORPUS))
    lab.against.pick(preset_key("cl100k_base"))
    settled(qtbot, lab, lambda: lab.lab.overlap is not None and lab.lab.usage is not None)
    charts = lab.charts
    for scheme in (theme.DARK, theme.LIGHT, theme.DARK):
        app_style(scheme)
        _charts_read_in(window, charts, dark=scheme == theme.DARK)
        painted = _painted_background(charts.widgets[0])
        for legend in (charts._cat_legend, charts._ov_legend):
            assert legend.items
            for _, text in legend.items:
                assert _contrast(text.opts["color"], painted) >= 4.5, text.text
        bars = [charts._cat_bars, charts._cat_lead, *charts._ov_bars]
        fills = [b.opts["brush"].color() for b in bars]
        for fill in fills:  # WCAG's least for graphics
            assert _contrast(fill, painted) >= 3.0, fill.name()
        assert _contrast(fills[0], fills[1]) >= 1.5  # the leading-space part stands apart
        assert len({f.name() for f in fills[2:]}) == 3  # only A, shared, only B
        assert _contrast(charts._curve.opts["pen"].color(), painted) >= 3.0
        assert charts.drawn_tail is not None
        assert _contrast(charts._tail_label.color, painted) >= 4.5


def _charts_read_in(window, charts, dark: bool) -> None:
    """Every chart is painted on a background of the scheme (``dark`` or not), and its axes
    and title read on it."""
    window_colour = window.palette().color(QPalette.ColorRole.Window)
    assert (window_colour.lightness() < 128) == dark
    assert len(charts.widgets) == 4
    for widget in charts.widgets:
        painted = _painted_background(widget)
        assert (painted.lightness() < 128) == dark, painted.name()
        plot = widget.getPlotItem()
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            assert _contrast(axis.textPen().color(), painted) >= 4.5
            assert _contrast(axis.pen().color(), painted) >= 1.8  # lines, not text
        title = plot.titleLabel
        if title.text:
            assert _contrast(title.opts["color"], painted) >= 4.5, title.text


@pytest.mark.parametrize("scheme", [theme.DARK, theme.LIGHT])
def test_charts_first_shown_after_a_change_of_scheme_are_in_it(qtbot, app_style, window, scheme):
    """The charts are built when the tab is first shown (not with the window), in the scheme
    of that moment (changed once before it, or twice), and draw what was worked out."""
    charts = window.lab.charts
    assert charts.widgets == []
    window.lab.picker.pick(preset_key("gpt2"))  # worked out when the tab is shown
    app_style(theme.DARK)
    app_style(scheme)
    assert charts.widgets == []
    window.tabs.setCurrentWidget(window.lab)
    settled(qtbot, window.lab, lambda: window.lab.lab.makeup is not None)
    _charts_read_in(window, charts, dark=scheme == theme.DARK)
    painted = _painted_background(charts.widgets[0])
    assert _contrast(charts._cat_bars.opts["brush"].color(), painted) >= 3.0
    for _, text in charts._cat_legend.items:
        assert _contrast(text.opts["color"], painted) >= 4.5, text.text
    ticks = charts.categories_plot.getAxis("left")._tickLevels[0]
    assert len(ticks) > 3 and ticks[0][1].startswith("Latin letters")


def test_a_result_redraws_only_its_own_chart(qtbot, window, lab, monkeypatch):
    """A corpus's usage arriving, and its job's end, redraw the usage chart alone: the make-up
    and overlap charts, unchanged, are not drawn again (each redraw of all four held the GUI
    thread over 100 ms); the list is filled once the charts are drawn."""
    lab.picker.pick(preset_key("gpt2"))
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    drawn: list[str] = []
    for name in ("show_makeup", "show_usage", "show_overlap"):
        original = getattr(lab.charts, name)

        def spy(*args, name=name, original=original, **kwargs):
            drawn.append(name)
            return original(*args, **kwargs)

        monkeypatch.setattr(lab.charts, name, spy)
    lab.choose_corpus(str(CORPUS))
    settled(qtbot, lab, lambda: lab.lab.usage is not None)
    assert "show_makeup" not in drawn and "show_overlap" not in drawn
    # The note "being worked out", then the usage as the encoding left it, then completed
    # by the scan: no more.
    assert 1 <= drawn.count("show_usage") <= 3
    assert lab.charts.drawn_usage[1].size
    listed = lab.tokens.model
    assert listed.rowCount() == lab.lab.makeup.table.makeup().tokens
    drawn.clear()
    lab._show_results()  # nothing changed: nothing drawn
    assert drawn == []


def test_every_line_names_the_step_its_figures_are_of(qtbot, window, lab):
    """The make-up follows the timeline; the usage and the overlap of the run's tokenizer
    are counted when the run pauses or ends. Scrubbed back, each line names the step it is
    of: the overlap's second side (the run's too) and its legend named none, or lost it
    when cut short."""
    paused_in_window(qtbot, window, FIXTURES / "tinystories_slice.txt", 900, 99)
    window.tabs.setCurrentWidget(lab)
    lab.picker.pick(RUN)
    lab.against.pick(RUN)
    lab.choose_corpus(str(CORPUS))
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.overlap is not None)
    window.hub.select_step(37)
    qtbot.waitUntil(lambda: "at step 37," in lab.makeup_line.text(), timeout=10_000)
    assert "by the run's tokenizer at step 100:" in lab.usage_line.text()
    overlap = lab.overlap_line.text()
    # Against itself: the second side is "the same tokenizer", not its name again.
    assert overlap.startswith("Against the same tokenizer (step 100) (ordinary")
    assert "only in The run's tokenizer: trained on tinystories_slice.txt (step 100) " in overlap
    legend = [label.text for _, label in lab.charts._ov_legend.items]
    assert legend == ["only run at step 100", "shared", "only the same tokenizer"]


def test_the_makeup_shown_while_a_new_pick_is_worked_out_says_whose_it_is(qtbot, window, lab):
    """A real-display audit: for seconds after picking another tokenizer, the charts showed
    the one before under the new name in the picker, with nothing saying whose they were."""
    lab.picker.pick(preset_key("gpt2"))
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    assert "until" not in lab.makeup_line.text()
    held: list = []
    process = lab.runner.process
    process._deliver = held.append  # the new make-up, held back
    lab.picker.pick(preset_key("cl100k_base"))
    qtbot.waitUntil(lambda: "until" in lab.makeup_line.text(), timeout=WAIT)
    line = lab.makeup_line.text()
    assert line.startswith("GPT-2 (shown until GPT-4 (cl100k_base)'s make-up is worked out)")
    process._deliver = lab.runner._deliver
    for message in list(held):
        lab.runner._deliver(message)
    settled(qtbot, lab, lambda: lab.lab.makeup.ref.key == preset_key("cl100k_base"))
    qtbot.waitUntil(lambda: lab.makeup_line.text().startswith("GPT-4 (cl100k_base),"))
    assert "until" not in lab.makeup_line.text()


def test_a_long_tail_of_lengths_does_not_squeeze_the_histogram(qtbot):
    """A real-display audit: a Chinese run's box-drawing lines (184 tokens of 50-220 bytes in
    32,000) kept the axis at 1-220, its 98.5% of 1-18 bytes in the first 8% of it."""
    from bpe_studio.core.explain.vocabulary import CategoryCount, Makeup
    from bpe_studio.gui.views.lab_charts import LabCharts

    lengths = {n: 2_000 - 100 * n for n in range(1, 19)}  # 26,100 tokens of 1-18 bytes
    lengths |= {n: 1 for n in range(50, 221)}  # 171 of 50-220 bytes: 0.65%
    total = sum(lengths.values())
    makeup = Makeup(None, total, 0, lengths, {"Han letters": CategoryCount(total, 0)}, 0)
    charts = LabCharts()
    qtbot.addWidget(charts)
    charts.resize(1200, 700)
    charts.show()
    charts.show_makeup(makeup, "Categories")
    low, high = charts.lengths_plot.viewRange()[0]
    assert high < 30  # the 99% of the tokens, not the tail
    assert charts._titles[id(charts.lengths_plot)] == "Byte lengths, 99.0% shown"
    assert charts.lengths_plot.getAxis("bottom").labelText.endswith("longest 220")


def test_the_merge_column_is_filled_for_a_preset_too(qtbot, window, lab, tmp_path):
    """A real-display audit: the list's Merge column and the CSV's merge_rank were empty for
    GPT-4o, whose Why this token said "made by merge 660"."""
    import csv
    import io

    from gpt2_bytes import read_gpt2_merges

    from bpe_studio.gui.model.lab_csv import tokens_csv
    from bpe_studio.gui.model.lab_lists import token_rows

    lab.picker.pick(preset_key("gpt2"))
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    rows = list(csv.DictReader(io.StringIO(tokens_csv(token_rows(lab.lab, Show.ALL)))))
    by_hex = {r["bytes"]: r for r in rows}
    merges = read_gpt2_merges(FIXTURES / "gpt2_merges.txt")
    first = {}
    for rank, (a, b) in enumerate(merges):
        first.setdefault(a + b, rank)
    for token in (b" the", b"ing", b" University"):
        assert by_hex[token.hex()]["merge_rank"] == str(first[token])
    assert by_hex[b"a".hex()]["merge_rank"] == ""  # a byte: no merge made it


def test_the_charts_keep_their_keys_and_labels_whole_in_a_small_window(qtbot, window, lab):
    """A real-display audit at 1280 x 800: the categories legend ran past its view box (its
    swatches hidden, its words over the bars) and the axis labels were cut."""
    from PySide6.QtGui import QFontMetrics

    window.resize(1280, 800)
    lab.picker.pick(preset_key("o200k_base"))
    lab.against.pick(preset_key("cl100k_base"))
    settled(qtbot, lab, lambda: lab.lab.makeup is not None and lab.lab.overlap is not None)
    charts = lab.charts
    qtbot.waitUntil(lambda: charts._cat_legend.isVisible(), timeout=WAIT)
    vb = charts.categories_plot.vb
    legend = charts._cat_legend
    left = legend.mapToItem(vb, legend.boundingRect().topLeft()).x()
    assert left >= 0  # inside the view box: its swatches show
    for plot in (charts.categories_plot, charts.lengths_plot, charts.overlap_plot):
        axis = plot.getAxis("bottom")
        width = QFontMetrics(axis.label.font()).horizontalAdvance(axis.labelText)
        assert width <= plot.vb.width(), axis.labelText


def test_a_wide_window_shows_every_column_of_the_token_list(qtbot, window, lab):
    """A real-display audit at 1600 x 1000: the list's Count and "In ..." columns were past
    its right edge (a horizontal scroll) while the charts kept their first 860 pixels."""
    window.resize(1600, 1000)
    lab.picker.pick(preset_key("gpt2"))
    lab.choose_corpus(str(CORPUS))
    lab.against.pick(preset_key("cl100k_base"))
    settled(qtbot, lab, lambda: lab.lab.overlap is not None and lab.lab.usage is not None)
    table = lab.tokens.table
    tip = Qt.ItemDataRole.ToolTipRole
    headers = [table.model().headerData(c, Qt.Orientation.Horizontal) for c in range(9)]
    assert headers[-2] == "Count"
    assert table.model().headerData(8, Qt.Orientation.Horizontal, tip) == "In GPT-4 (cl100k_base)"
    qtbot.waitUntil(lambda: table.horizontalScrollBar().maximum() == 0, timeout=5_000)
    assert lab.charts.width() >= lab_page.CHARTS_WIDTH
    # A split the user chose is theirs: a resize keeps the list's width.
    handle = lab.body.handle(1)
    qtbot.mousePress(handle, Qt.MouseButton.LeftButton, pos=handle.rect().center())
    qtbot.mouseMove(handle, handle.rect().center() - QPoint(120, 0))
    qtbot.mouseRelease(
        handle, Qt.MouseButton.LeftButton, pos=handle.rect().center() - QPoint(120, 0)
    )
    chosen = lab.body.sizes()[1]
    window.resize(1500, 1000)
    qtbot.waitUntil(lambda: lab.body.sizes()[1] == chosen, timeout=5_000)


def _lab_against_cl100k(qtbot, window, lab) -> None:
    """GPT-2 examined on the sample corpus, against GPT-4's cl100k, in a window small enough
    that the categories chart has a bar for the rest."""
    window.resize(1280, 720)
    lab.picker.pick(preset_key("gpt2"))
    lab.choose_corpus(str(CORPUS))
    lab.against.pick(preset_key("cl100k_base"))
    settled(qtbot, lab, lambda: lab.lab.overlap is not None and lab.lab.usage is not None)


def test_the_bar_of_the_rest_lists_its_categories_tokens(qtbot, window, lab):
    """An audit: clicking the "N more categories" bar listed every token."""
    from types import SimpleNamespace

    from PySide6.QtCore import QPointF

    _lab_against_cl100k(qtbot, window, lab)
    charts = lab.charts
    rest = list(charts._rest)
    assert len(rest) >= 2, "the window shows every category: no bar of the rest"
    vb = charts.categories_plot.vb
    row = len(charts._cat_shown) - 1  # the bar of the rest, at the bottom
    where = vb.mapViewToScene(QPointF(0.5, row))
    charts._on_click(SimpleNamespace(scenePos=lambda: where))  # as a click on it
    listed = lab.tokens.model
    names = {listed.data(listed.index(r, 2)) for r in range(listed.rowCount())}
    assert names == {category_label(n) for n in rest}
    assert listed.rowCount() == sum(charts.drawn_categories[n][0] for n in rest)
    assert lab.tokens.category_box.currentText() == f"{len(rest)} more categories"
    lab.tokens.choose_show(Show.NEVER_USED)  # the same categories, narrowed
    assert lab.tokens.category() == tuple(rest)


def test_the_token_list_keeps_its_sort_by_column_and_its_headers_whole(qtbot, window, lab):
    """An audit: a sort remembered as a column's place moved to another column when Count
    went (sorted by Count, then no corpus: sorted by "In other"); the "In <other>" header
    was cut at its start ("n llama3-st…"), and stood on the "Only in <other>" list, whose
    tokens are the other's own."""
    _lab_against_cl100k(qtbot, window, lab)
    tokens, model = lab.tokens, lab.tokens.model
    header = tokens.table.horizontalHeader()
    count = model.columns().index(lab_tokens.COUNT)
    tokens.table.sortByColumn(count, Qt.SortOrder.DescendingOrder)
    counts = lab.lab.usage.usage.counts
    ids = [model.token_id(r) for r in range(model.rowCount())]
    assert [int(counts[i]) for i in ids] == sorted((int(counts[i]) for i in ids), reverse=True)
    lab.choose_corpus(None)
    settled(qtbot, lab, lambda: lab.lab.usage is None)
    assert lab_tokens.COUNT not in model.columns()
    ids = [model.token_id(r) for r in range(model.rowCount())]
    assert ids == sorted(ids)  # no column sorted by: the list's own order
    assert header.sortIndicatorSection() == -1
    lab.choose_corpus(str(CORPUS))
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.usage.complete)
    count = model.columns().index(lab_tokens.COUNT)
    assert header.sortIndicatorSection() == count  # by Count again, remembered by name
    ids = [model.token_id(r) for r in range(model.rowCount())]
    assert [int(counts[i]) for i in ids] == sorted((int(counts[i]) for i in ids), reverse=True)
    # "In GPT-4 (cl100k_base)": its header ends in "…" within its column, the whole in its tip.
    held = model.columns().index(lab_tokens.HELD)
    shown = model.headerData(held, Qt.Orientation.Horizontal)
    whole = model.headerData(held, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert whole == "In GPT-4 (cl100k_base)" and shown.startswith("In ")
    style = header.style()
    room = 2 * style.pixelMetric(style.PixelMetric.PM_HeaderMargin, None, header)
    room += style.pixelMetric(style.PixelMetric.PM_HeaderMarkSize, None, header)
    assert header.fontMetrics().horizontalAdvance(shown) + room <= header.sectionSize(held)
    tokens.choose_show(Show.ONLY_OTHER)
    assert lab_tokens.HELD not in model.columns()


def test_a_tokenizer_against_itself_is_named_once(qtbot, window, lab):
    """An audit: GPT-4o against GPT-4o said "only in GPT-4o 0 · only in GPT-4o 0"."""
    lab.picker.pick(preset_key("gpt2"))
    lab.against.pick(preset_key("gpt2"))
    settled(qtbot, lab, lambda: lab.lab.overlap is not None)
    line = lab.overlap_line.text()
    assert line.startswith("Against the same tokenizer")
    assert line.count("GPT-2") == 1 and "only in the same tokenizer 0" in line
    assert lab.charts._ov_names == ("GPT-2", "the same tokenizer")
    assert lab.lab.overlap.overlap.total.shared == lab.lab.makeup.table.makeup().ordinary_tokens


def test_the_exported_charts_say_what_they_are_of(qtbot, window, lab, tmp_path):
    """An audit: the exported PNG named neither the tokenizer nor the corpus."""
    _lab_against_cl100k(qtbot, window, lab)
    assert lab.png_title() == (
        f"Vocabulary lab: GPT-2 · corpus {CORPUS.name} · against GPT-4 (cl100k_base)"
    )
    assert lab.export_png(tmp_path / "lab.png")
    image, grid = QImage(str(tmp_path / "lab.png")), lab.charts.grab()
    assert image.width() == grid.width() and image.height() > grid.height()
    # The title line is drawn: the band above the charts holds text, not only background.
    band = image.copy(0, 0, image.width(), image.height() - grid.height())
    colours = {band.pixel(x, y) for x in range(0, band.width(), 2) for y in range(band.height())}
    assert len(colours) > 2


def _gpt2_loaded_with_corpus(qtbot, window, lab) -> int:
    """GPT-2's files loaded (Load tokenizer…), examined as the run's with ``CORPUS`` chosen;
    how many merges its merges file lists."""
    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000):
        assert window.load_tokenizer(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    lines = (FIXTURES / "gpt2_merges.txt").read_text("utf-8").splitlines()
    lab.picker.pick(RUN)
    lab.choose_corpus(str(CORPUS))
    return sum(1 for line in lines if line and not line.startswith("#version"))


def test_a_loaded_tokenizers_charts_with_a_corpus_are_exported(qtbot, window, lab, tmp_path):
    """An audit: with a loaded tokenizer (Load tokenizer…) examined as the run's and a
    corpus's usage shown, Export PNG raised a TypeError (its title formatted the usage's
    step, which a loaded tokenizer's result names as None) and wrote nothing."""
    merges = _gpt2_loaded_with_corpus(qtbot, window, lab)
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.makeup is not None)
    assert lab.export_png(tmp_path / "lab.png")
    assert f"at step {merges:,} · corpus {CORPUS.name}" in lab.png_title()
    assert "used at step" not in lab.png_title()
    window.hub.select_step(100)  # the make-up follows; the corpus's use is of every merge
    settled(qtbot, lab)
    assert f"at step 100 · corpus {CORPUS.name} (used at step {merges:,})" in lab.png_title()
    assert lab.export_png(tmp_path / "lab100.png")
    assert not window.errors


def test_a_loaded_tokenizers_summary_says_the_step_its_corpus_use_is_of(
    qtbot, window, lab, tmp_path
):
    """An audit: a loaded tokenizer scrubbed back to step 100, its summary CSV said the
    make-up's step (100) and left the corpus's and the overlap's empty, as if their numbers
    were of step 100 too; they are of all its merges."""
    merges = _gpt2_loaded_with_corpus(qtbot, window, lab)
    lab.against.pick(preset_key("gpt2"))
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.overlap is not None)
    window.hub.select_step(100)
    settled(qtbot, lab)
    assert lab.export_summary_csv(tmp_path / "lab.csv")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "lab.csv").read_text("utf-8"))))
    values = {(r["section"], r["name"], r["measure"]): r["value"] for r in rows}
    assert values["about", "tokenizer", "step"] == "100"
    assert values["about", "corpus", "tokenizer_step"] == str(merges)
    assert values["about", "against", "tokenizer_step"] == str(merges)


def test_the_exported_charts_carry_their_titles_whole(qtbot, window, lab, tmp_path):
    """A session audit: Export PNG grabbed the charts as on screen, so an exported title
    carried its cut ("Usage by rank of count: 31,478 of 31,999 u…"). On screen a cut title
    has its whole text in the tooltip; in the image it is wrapped, whole."""
    _lab_against_cl100k(qtbot, window, lab)
    charts = lab.charts
    window.resize(1280, 720)
    charts.resize(700, charts.height())  # narrow enough to cut the usage title
    qtbot.waitUntil(lambda: charts.usage_plot.titleLabel.text.endswith("…"))
    whole = {id(p): charts._titles[id(p)] for p in charts._plots}
    on_screen = [p.titleLabel.item.toPlainText() for p in charts._plots]
    cut = [p for p in charts._plots if p.titleLabel.text != whole[id(p)]]
    assert charts.usage_plot in cut
    for plot in cut:
        widget = charts.widgets[charts._plots.index(plot)]
        assert widget.toolTip() == whole[id(plot)]
    exported = []
    grab = charts.grab

    def grab_titles():  # each title as the image shows it (its lines joined)
        exported.extend(" ".join(p.titleLabel.item.toPlainText().split()) for p in charts._plots)
        return grab()

    charts.grab = grab_titles
    assert lab.export_png(tmp_path / "lab.png")
    assert exported == [" ".join(whole[id(p)].split()) for p in charts._plots]
    # The screen is as it was: one line each, cut to fit.
    assert [p.titleLabel.item.toPlainText() for p in charts._plots] == on_screen


def test_an_axis_label_set_after_a_resize_stays_centred_on_its_plot(qtbot, window, lab):
    """An audit: the Overlap chart's x-axis label ran off the plot, cut off, after the page
    was laid out again (pyqtgraph centres a label only as its axis is resized)."""
    _lab_against_cl100k(qtbot, window, lab)
    for size in ((1700, 1000), (1280, 720), (1700, 1000)):
        window.resize(*size)
        qtbot.wait(200)
        for plot in lab.charts._plots:
            axis = plot.getAxis("bottom")
            x, width = axis.label.pos().x(), axis.label.boundingRect().width()
            assert 0 <= x and x + width <= axis.size().width() + 1, (size, axis.labelText)
            assert abs(x - (axis.size().width() - width) / 2) <= 1, (size, axis.labelText)


@pytest.mark.parametrize("used", [3_149, 5_000, 5_900])
def test_the_never_used_label_stays_clear_of_the_curve_and_the_axis(qtbot, used):
    """A lab audit: WordPiece on Chinese text left 2,846 of 5,995 tokens unused (47.5%); the
    label, put left of a band under half the plot, ran across the curve's start and the
    axis. Whatever the band's share, the label sits inside the band or, where the band is too
    narrow for it, left of it over ranks whose counts stay under it."""
    from types import SimpleNamespace

    from PySide6.QtCore import QPointF

    from bpe_studio.gui.views.lab_charts import LabCharts

    ordinary = 5_995
    # Flatter than Zipf's law, as a corpus in one script under a tokenizer of another leaves it.
    counts = (1e4 / np.arange(1, used + 1) ** 0.5).astype(np.int64) + 1
    charts = LabCharts()
    qtbot.addWidget(charts)
    charts.resize(560, 440)  # each plot about its least width
    charts.show()
    qtbot.waitExposed(charts)
    charts.show_usage(SimpleNamespace(ranked_counts=counts), ordinary, "Usage by rank")
    qtbot.wait(20)
    assert charts.drawn_tail == (used, ordinary)
    label, vb = charts._tail_label, charts.usage_plot.vb
    box = label.mapRectToView(label.boundingRect())  # in ranks and log10(count)
    band_left = used + 0.5
    if box.left() < band_left:  # left of the band: the curve over the label's ranks stays below it
        assert box.right() <= band_left + 1
        first = max(int(box.left()), 1)
        lower = min(box.top(), box.bottom())
        assert np.log10(counts[first - 1]) < lower, (first, box)
        axis_right = vb.mapSceneToView(vb.mapToScene(QPointF(0, 0))).x()
        assert box.left() > axis_right
    assert box.right() <= ordinary + 0.5 + 1e-6
    assert "never used" in label.toPlainText() and f"{ordinary - used:,}" in label.toPlainText()


def test_with_no_run_yet_the_charts_wait_for_one_not_for_a_choice(qtbot, lab):
    """A live-run audit: the run's tokenizer picked before any run and GPT-4o chosen to
    compare against, the overlap chart still said "Choose a second tokenizer"."""
    from bpe_studio.gui.views.lab_charts import CHOOSE_AGAINST

    lab.picker.pick("run")
    qtbot.waitUntil(lambda: lab.lab.missing is not None, timeout=WAIT)
    # Nothing chosen yet: that is right (waited for: the charts redraw after the news).
    qtbot.waitUntil(lambda: lab.charts._ov_note_text == CHOOSE_AGAINST, timeout=WAIT)
    lab.against.pick(preset_key("o200k_base"))
    waiting = "Worked out once there is a tokenizer to examine"
    qtbot.waitUntil(lambda: lab.charts._ov_note_text == waiting, timeout=WAIT)
    assert lab.charts._ov_note.toPlainText() == waiting
    lab.choose_corpus(str(CORPUS))
    qtbot.waitUntil(lambda: lab.charts._usage[3] == waiting, timeout=WAIT)


def test_live_takes_a_finished_run_scrubbed_back_to_its_end_as_the_timelines_does(
    qtbot, window, lab
):
    """An audit: on a finished run moved back to step 37, the training page's Live was
    clickable and jumped to the last merge, while the lab's, beside its own step slider, stayed
    greyed out: the only way back to the end from the lab was dragging the slider there."""
    train_in_window(qtbot, window, FIXTURES / "tinystories_slice.txt", 400)
    state = window.state
    window.tabs.setCurrentWidget(lab)
    lab.picker.pick(RUN)
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    assert state.live and not lab.live_button.isEnabled()  # already at the end
    window.hub.select_step(37)
    qtbot.waitUntil(lambda: "at step 37," in lab.makeup_line.text(), timeout=10_000)
    assert lab.live_button.isEnabled()
    qtbot.mouseClick(lab.live_button, Qt.MouseButton.LeftButton)
    assert state.live and state.step == state.published
    end = f"at step {state.published:,},"
    qtbot.waitUntil(lambda: end in lab.makeup_line.text(), timeout=10_000)
    assert not lab.live_button.isEnabled()


def test_the_overlap_legend_stays_inside_its_view_box_in_a_1024_window(qtbot, window, lab):
    """A real-display audit at 1024 x 700: the overlap's legend ("only GPT-4 (cl100k_base)",
    "shared", "only qwen2.json") ran left past its view box, over the category labels: its
    swatches were hidden behind the axis and its words cut ("nly GPT-4 …"), so which colour
    was which tokenizer could not be read."""
    window.resize(1024, 700)
    lab.picker.pick(preset_key("cl100k_base"))
    lab.against.pick(preset_key("o200k_base"))
    settled(qtbot, lab, lambda: lab.lab.makeup is not None and lab.lab.overlap is not None)
    charts = lab.charts
    vb, legend = charts.overlap_plot.vb, charts._ov_legend
    qtbot.waitUntil(lambda: legend.isVisible() and len(legend.items) == 3, timeout=WAIT)
    left = legend.mapToItem(vb, legend.boundingRect().topLeft()).x()
    assert left >= 0, [label.text for _, label in legend.items]
    # Each side is still named (cut where it must be, whole in the chart's tooltip).
    words = [label.text for _, label in legend.items]
    assert words[0].startswith("only GPT-4") and words[2].startswith("only GPT-4o"), words
    tip = charts.widgets[charts._plots.index(charts.overlap_plot)].toolTip()
    assert "GPT-4 (cl100k_base)" in tip and "GPT-4o (o200k_base)" in tip, tip


def test_the_opened_corpus_of_records_is_read_with_the_train_pages_text_field(
    qtbot, window, lab, tmp_path
):
    """An audit: a .jsonl whose records keep their text under "body", opened on the Train
    page with Text field "body": the lab's "The opened corpus" read the records' "text" field
    (its own box's default) instead of what training would read; and a field changed on the
    Train page after the lab computed left the lab's figures standing."""
    bodies = ["Once upon a time there was a cat.", "The cat sat on a mat, and slept."]
    titles = ["A cat", "The mat"]
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"text": title, "body": body}) + "\n" for title, body in zip(titles, bodies)
        ),
        encoding="utf-8",
    )
    gpt2 = Tokenizer.preset("gpt2")
    lab.picker.pick(preset_key("gpt2"))
    assert window.open_corpus(rows)
    field = window.panel.text_field_edit
    field.setText("b")  # on the way to "body": not read until typed
    lab.choose_corpus("opened")
    assert lab.lab.wanted_corpus().text_field == "text"
    field.setText("body")
    field.editingFinished.emit()  # Enter, or the focus gone
    assert lab.lab.wanted_corpus().text_field == "body"
    assert not lab.text_field.isVisible()  # the Train page's field is the one read
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.usage.complete)
    assert lab.lab.problem is None and window.errors == []
    assert lab.lab.usage.corpus.text_field == "body"
    assert lab.lab.usage.usage.tokens == sum(len(gpt2.encode(t)) for t in bodies)
    expected = np.bincount(
        [i for t in bodies for i in gpt2.encode(t)], minlength=len(lab.lab.usage.usage.counts)
    )
    assert np.array_equal(lab.lab.usage.usage.counts, expected)
    # The field changed on the Train page: the figures of "body" go, and "text"'s come.
    field.setText("text")
    field.editingFinished.emit()
    assert lab.lab.usage is None
    settled(qtbot, lab, lambda: lab.lab.usage is not None and lab.lab.usage.complete)
    assert lab.lab.usage.corpus.text_field == "text"
    assert lab.lab.usage.usage.tokens == sum(len(gpt2.encode(t)) for t in titles)


def test_the_run_trained_while_the_lab_was_hidden_is_not_said_missing_when_shown(
    qtbot, window, lab
):
    """The X display: the lab on the run's tokenizer before any run said "There is no run's
    tokenizer yet"; a run trained (and paused) while another tab was shown, the lab shown
    again still said so until its job started: its lines are drawn for what is wanted now."""
    from bpe_studio.gui.model.vocab_lab import NO_RUN

    lab.picker.pick(RUN)
    qtbot.waitUntil(lambda: lab.makeup_line.text() == NO_RUN, timeout=10_000)
    window.tabs.setCurrentIndex(0)
    paused_in_window(qtbot, window, CORPUS, 600, 199)
    qtbot.waitUntil(lambda: window.hub.state.published == 200, timeout=30_000)
    window.tabs.setCurrentWidget(lab)
    assert lab.makeup_line.text() != NO_RUN
    settled(qtbot, lab, lambda: lab.lab.makeup is not None)
    assert "step 200" in lab.makeup_line.text()
