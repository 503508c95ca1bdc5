"""The app on the corpora of #28: JSON Lines records with their text field, a glob of compressed
files, and counting on a local Dask cluster (per-task progress, the cluster's line in the
status, Stop cancelling the count). The merges are the core's own, computed here."""

from __future__ import annotations

import dataclasses
import gzip
import json
import multiprocessing

import pytest
from gui_helpers import EOT
from PySide6.QtWidgets import QLineEdit

from bpe_studio.core import train_bpe
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.model.status import status_text

# Trains on a LocalCluster in this process (see tests/conftest.py).
pytestmark = [pytest.mark.dask_in_process, pytest.mark.slow]  # a local cluster of processes

FIXTURES_TEXT = ("english_books_slice.txt", "code_slice.txt")


def dask_workers() -> list[str]:
    """The worker processes of a LocalCluster this process started (its nannies run here)."""
    return [p.name for p in multiprocessing.active_children() if p.name.startswith("Dask")]


def write_records(folder, fixtures_dir):
    path = folder / "docs.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for name in FIXTURES_TEXT:
            text = (fixtures_dir / name).read_text(encoding="utf-8")
            f.writelines(json.dumps({"body": p}) + "\n" for p in text.split("\n\n") if p)
    return path


def test_records_counted_on_a_local_cluster(qtbot, window, tmp_path, fixtures_dir):
    path = write_records(tmp_path, fixtures_dir)
    panel = window.panel
    assert window.open_corpus(str(path))
    assert panel.text_field_edit.isVisible() and "records" in panel.corpus_label.text()
    panel.text_field_edit.setText("body")
    panel.vocab_spin.setValue(600)
    panel.workers_spin.setValue(2)
    panel.cluster_choice.combo.setCurrentIndex(1)  # Local Dask cluster
    assert panel.cluster() == "local:2"
    assert window.start_training()
    qtbot.waitUntil(lambda: window.state.phase is Phase.FINISHED, timeout=120_000)
    assert window.state.result.merges == train_bpe(path, 600, [EOT], text_field="body")[1]
    # Where it counted, as the status line said during the count.
    assert window.state.counting_on.startswith("pre-tokenizing on the Dask cluster local:2: ")
    counting = dataclasses.replace(window.state, phase=Phase.PRE_TOKENIZING, bytes_done=1)
    shown = status_text(counting)
    assert (
        shown.startswith("Pre-tokenizing: 1 B / ") and " · on the Dask cluster local:2: " in shown
    )
    qtbot.waitUntil(lambda: not dask_workers(), timeout=30_000)


def test_stop_cancels_the_count_on_the_cluster(qtbot, window, tmp_path, fixtures_dir):
    for i, name in enumerate(FIXTURES_TEXT * 6):
        text = (fixtures_dir / name).read_text(encoding="utf-8")
        (tmp_path / f"part-{i:02}.txt.gz").write_bytes(gzip.compress(text.encode("utf-8")))
    assert window.open_corpus([str(tmp_path / "part-*.txt.gz")])
    assert "12 files" in window.panel.corpus_label.text()
    window.panel.workers_spin.setValue(2)
    window.panel.cluster_choice.combo.setCurrentIndex(1)
    assert window.start_training()
    qtbot.waitUntil(lambda: bool(dask_workers()), timeout=120_000)
    # Some tasks have ended (the bar moved), others have not: stop.
    qtbot.waitUntil(lambda: 0 < window.state.bytes_done < window.state.bytes_total, timeout=120_000)
    window.stop_training()
    qtbot.waitUntil(lambda: window.state.phase is Phase.STOPPED, timeout=60_000)
    assert window.state.result.merges == []
    qtbot.waitUntil(lambda: not dask_workers(), timeout=30_000)


def test_a_scheduler_address_is_checked_as_typed(window):
    choice = window.panel.cluster_choice
    choice.combo.setCurrentIndex(2)  # Dask scheduler
    edit: QLineEdit = choice.address_edit
    assert "type its address" in window.panel.input_problem()
    edit.setText("localhost:8786")
    assert "tcp://HOST:8786" in window.panel.input_problem()
    edit.setText("tcp://10.0.0.5:8786")
    assert window.panel.input_problem() is None
    assert window.panel.cluster() == "tcp://10.0.0.5:8786"


def test_a_field_typed_for_records_is_not_sent_with_plain_text(
    qtbot, window, tmp_path, fixtures_dir
):
    """The core refuses a text field other than the default for plain text (#32); the field
    typed for a records corpus stays in its hidden box when a text file is opened next."""
    records = write_records(tmp_path, fixtures_dir)
    panel = window.panel
    assert window.open_corpus(str(records))
    panel.text_field_edit.setText("body")
    text = fixtures_dir / FIXTURES_TEXT[0]
    assert window.open_corpus(str(text))
    assert panel.text_field_edit.isHidden() and panel.text_field() == "text"
    panel.vocab_spin.setValue(300)
    assert window.start_training()
    qtbot.waitUntil(lambda: window.state.phase is Phase.FINISHED, timeout=120_000)
    assert window.state.result.merges == train_bpe(text, 300, [EOT])[1]


def test_a_workers_error_is_the_dialog_alone_not_stderr(qtbot, window, tmp_path, capfd):
    """Issue 33, defect 17: a wrong text field, found on a Dask worker, is the one line of the
    error dialog; the workers' and the scheduler's logs (their ERROR lines and tracebacks, in
    processes that write to this process's stderr) say nothing about it."""
    path = tmp_path / "docs.jsonl"
    # The first record has the field (Train reads it before it starts: corpus_probe).
    rows = [{"body": "b0"}] + [{"title": f"t{i}"} for i in range(1, 50)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    panel = window.panel
    assert window.open_corpus(str(path))
    panel.text_field_edit.setText("body")
    panel.workers_spin.setValue(2)
    panel.cluster_choice.combo.setCurrentIndex(1)  # Local Dask cluster
    capfd.readouterr()  # what came before the run is not the run's
    assert window.start_training()
    qtbot.waitUntil(lambda: window.error_box is not None, timeout=120_000)
    assert "docs.jsonl: line 2: no field 'body'" in window.error_box.text()
    qtbot.waitUntil(lambda: not dask_workers(), timeout=30_000)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ERROR" not in err and "distributed" not in err, err
