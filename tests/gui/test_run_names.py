"""The run's tokenizer named by what it is in the Report and the Vocabulary lab's exports.

An audit on a real display: with hf_small/tokenizer.json loaded (the editor's heading "hf_small,
1,744 merges"), the Report's legend, header and CSV and the lab's summary CSV said only "The
run's tokenizer", so an exported file did not say which tokenizer it measured.
"""

from __future__ import annotations

import csv
import io

from gui_helpers import train_in_window

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.core.explain.report import report_csv
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.lab_process import live_lab_processes
from bpe_studio.gui.views.picker import RUN

WAIT = 180_000
SPECIALS = ["<|endoftext|>"]


def _report_names(qtbot, window) -> tuple[str, list[str], list[str], str]:
    """The Report's run column name, its headers, its legend's names and its CSV."""
    report = window.report
    assert report.choices[-1].uses_run
    with qtbot.waitSignal(report.computed, timeout=WAIT) as blocker:
        window.tabs.setCurrentWidget(report)
    computed = blocker.args[0]
    headers = [
        report.table.horizontalHeaderItem(col).text() for col in range(report.table.columnCount())
    ]
    legend = [label.text for _, label in report.legend.items]
    return computed.tokenizers[-1], headers, legend, report_csv(computed)


def _csv_tokenizers(text: str) -> set[str]:
    """The tokenizers the Report's CSV rows name."""
    return {row["tokenizer"] for row in csv.DictReader(io.StringIO(text))}


def _lab_tokenizer_name(qtbot, window, tmp_path) -> str:
    """What the lab's exported summary CSV calls the tokenizer it examined (the run's)."""
    lab = window.lab
    window.tabs.setCurrentWidget(lab)
    lab.picker.pick(RUN)
    qtbot.waitUntil(lambda: not lab.busy and lab.lab.makeup is not None, timeout=WAIT)
    assert lab.export_summary_csv(tmp_path / "lab.csv")
    rows = csv.DictReader(io.StringIO((tmp_path / "lab.csv").read_text("utf-8")))
    name = next(r["value"] for r in rows if (r["section"], r["name"], r["measure"]) == (
        "about", "tokenizer", "name"))  # fmt: skip
    return name


def test_a_loaded_files_run_column_and_lab_csv_name_the_file(qtbot, window, tmp_path):
    run = Tokenizer(*train_bpe(DEMO_CORPUS, 300, SPECIALS), SPECIALS)
    run.save(tmp_path / "hf_small", format="hf")
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000):
        assert window.load_tokenizer(tmp_path / "hf_small" / "tokenizer.json")
    k = len(run.merges)
    name, headers, legend, text = _report_names(qtbot, window)
    assert name == f"The run's tokenizer: hf_small (step {k:,})"
    assert headers[-1] == f"The run's tokenizer:\nhf_small\n(step {k:,})\n(bytes/token)"
    assert name in legend
    assert name in _csv_tokenizers(text)
    assert _lab_tokenizer_name(qtbot, window, tmp_path) == "The run's tokenizer: hf_small"
    window.close_without_asking()
    qtbot.waitUntil(lambda: live_lab_processes() == 0, timeout=30_000)


def test_a_trained_runs_column_and_lab_csv_name_its_corpus(qtbot, window, tmp_path):
    train_in_window(qtbot, window, DEMO_CORPUS, 400)
    name, headers, legend, text = _report_names(qtbot, window)
    corpus = window.state.run_corpus.name
    assert name == f"The run's tokenizer: trained on {corpus} (step 143)"  # 400 - 257 merges
    assert name in legend and name in _csv_tokenizers(text)
    assert (
        _lab_tokenizer_name(qtbot, window, tmp_path) == f"The run's tokenizer: trained on {corpus}"
    )
    window.close_without_asking()
    qtbot.waitUntil(lambda: live_lab_processes() == 0, timeout=30_000)
