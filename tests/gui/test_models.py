"""The table models: Qt's model tester on each, and batched growth."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from bpe_studio.core import Tokenizer, trainer_from_file
from bpe_studio.core.text.display import readable_token
from bpe_studio.core.train.vocab import initial_vocab
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.state import LoadedTokenizer, MergeRow, RunSettings, vocab_rows
from bpe_studio.gui.views.table_models import (
    SORT_ROLE,
    MergeTableModel,
    VocabFilterProxy,
    VocabTableModel,
)

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def steps():
    return list(trainer_from_file(DEMO_CORPUS, 400, [EOT]))


def run_hub(*batches):
    """A hub in a run with these batches of merges published, one frame each."""
    hub = AppModel()
    hub.begin_run(RunSettings(400, (EOT,)), initial_vocab([EOT]))
    for batch in batches:
        hub.append_merges(batch)
        hub.publish()
    return hub


def test_merge_model_passes_model_tester(qtmodeltester, steps):
    hub = run_hub(steps[:50])
    model = MergeTableModel(hub)
    hub.append_merges(steps[50:])
    assert model.rowCount() == 50  # recorded, not yet published
    hub.publish()
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == len(steps)
    last = model.rowCount() - 1
    assert model.data(model.index(last, 3)) == readable_token(steps[-1].merged)
    assert model.data(model.index(last, 0), SORT_ROLE) == steps[-1].rank


def test_vocab_model_and_proxy_pass_model_tester(qtmodeltester, steps):
    hub = run_hub()
    model = VocabTableModel(hub)
    hub.append_merges(steps)
    hub.publish()
    qtmodeltester.check(model, force_py=True)
    proxy = VocabFilterProxy()
    proxy.setSourceModel(model)
    proxy.set_filter_text(" th")
    qtmodeltester.check(proxy, force_py=True)
    shown = {proxy.data(proxy.index(r, 1)) for r in range(proxy.rowCount())}
    expected = {readable_token(s.merged) for s in steps if b" th" in s.merged.lower()}
    assert shown == expected and expected


def test_loaded_rows_have_unknown_counts(qtmodeltester, steps):
    vocab = initial_vocab([EOT]) | {s.new_id: s.merged for s in steps}
    merges = [(s.left, s.right) for s in steps]
    tokenizer = Tokenizer(vocab, merges, [EOT])
    rows = [MergeRow(s.rank, s.left, s.right, s.new_id) for s in steps]
    loaded = LoadedTokenizer(
        tokenizer, Path("vocab.json"), Path("merges.txt"), [EOT], rows, vocab_rows(vocab, merges)
    )
    hub = run_hub(steps)
    merge_model, vocab_model = MergeTableModel(hub), VocabTableModel(hub)
    hub.show_loaded(loaded)
    qtmodeltester.check(merge_model, force_py=True)
    qtmodeltester.check(vocab_model, force_py=True)
    assert merge_model.rowCount() == len(steps) and vocab_model.rowCount() == len(vocab)
    assert merge_model.data(merge_model.index(0, 4)) == "—"
    assert merge_model.data(merge_model.index(0, 4), SORT_ROLE) == -1
    assert merge_model.data(merge_model.index(3, 3)) == readable_token(steps[3].merged)
    row = vocab_model.row_of_id(steps[5].new_id)
    assert vocab_model.data(vocab_model.index(row, 3)) == "5"
    assert vocab_model.data(vocab_model.index(row, 4)) == "—"


def test_one_insert_per_frame(qtbot, steps):
    hub = run_hub()
    model = MergeTableModel(hub)
    inserts: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda parent, first, last: inserts.append((first, last)))
    hub.append_merges(steps[:10])
    hub.append_merges(steps[10:30])
    hub.publish()
    hub.append_merges(steps[30:31])
    hub.publish()
    hub.publish()  # nothing new: no insert
    assert inserts == [(0, 29), (30, 30)]


def test_vocab_rows_know_their_merge(steps):
    hub = run_hub(steps)
    model = VocabTableModel(hub)
    row = model.row_of_id(steps[7].new_id)
    assert model.data(model.index(row, 3)) == "7"
    assert model.data(model.index(row, 4)) == f"{steps[7].count:,}"
    assert model.data(model.index(256, 3)) == "special"
    assert model.data(model.index(65, 3)) == "byte"
    assert model.data(model.index(0, 0), Qt.ItemDataRole.TextAlignmentRole) is not None


def test_filter_by_id(steps):
    model = VocabTableModel(run_hub(steps))
    proxy = VocabFilterProxy()
    proxy.setSourceModel(model)
    proxy.set_filter_text("300")
    ids = {
        model.token_at(proxy.mapToSource(proxy.index(r, 0)).row())[0]
        for r in range(proxy.rowCount())
    }
    assert 300 in ids
