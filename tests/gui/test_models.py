"""The table models: Qt's model tester on each, and batched growth."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from bpe_studio.core import trainer_from_file
from bpe_studio.core.display import readable_token
from bpe_studio.core.vocab import initial_vocab
from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.models import SORT_ROLE, MergeTableModel, VocabFilterProxy, VocabTableModel

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def steps():
    return list(trainer_from_file(DEMO_CORPUS, 400, [EOT]))


def test_merge_model_passes_model_tester(qtmodeltester, steps):
    model = MergeTableModel()
    model.append(steps[:50])
    model.append(steps[50:])
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == len(steps)
    last = model.rowCount() - 1
    assert model.data(model.index(last, 3)) == readable_token(steps[-1].merged)
    assert model.data(model.index(last, 0), SORT_ROLE) == steps[-1].rank


def test_vocab_model_and_proxy_pass_model_tester(qtmodeltester, steps):
    model = VocabTableModel()
    model.reset(initial_vocab([EOT]))
    model.append_merges(steps)
    qtmodeltester.check(model, force_py=True)
    proxy = VocabFilterProxy()
    proxy.setSourceModel(model)
    proxy.set_filter_text(" th")
    qtmodeltester.check(proxy, force_py=True)
    shown = {proxy.data(proxy.index(r, 1)) for r in range(proxy.rowCount())}
    expected = {readable_token(s.merged) for s in steps if b" th" in s.merged.lower()}
    assert shown == expected and expected


def test_loaded_merges_have_no_counts(qtmodeltester, steps):
    model = MergeTableModel()
    model.reset(steps, counts_known=False)
    qtmodeltester.check(model, force_py=True)
    assert model.data(model.index(0, 4)) == "—"


def test_one_insert_per_batch(qtbot, steps):
    model = MergeTableModel()
    inserts: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda parent, first, last: inserts.append((first, last)))
    model.append(steps[:30])
    model.append(steps[30:31])
    assert inserts == [(0, 29), (30, 30)]


def test_vocab_rows_know_their_merge(steps):
    model = VocabTableModel()
    model.reset(initial_vocab([EOT]))
    model.append_merges(steps)
    row = model.row_of_id(steps[7].new_id)
    assert model.data(model.index(row, 3)) == "7"
    assert model.data(model.index(row, 4)) == f"{steps[7].count:,}"
    assert model.data(model.index(256, 3)) == "special"
    assert model.data(model.index(65, 3)) == "byte"
    assert model.data(model.index(0, 0), Qt.ItemDataRole.TextAlignmentRole) is not None


def test_filter_by_id(steps):
    model = VocabTableModel()
    model.reset(initial_vocab([EOT]))
    model.append_merges(steps)
    proxy = VocabFilterProxy()
    proxy.setSourceModel(model)
    proxy.set_filter_text("300")
    ids = {
        model.token_at(proxy.mapToSource(proxy.index(r, 0)).row())[0]
        for r in range(proxy.rowCount())
    }
    assert 300 in ids
