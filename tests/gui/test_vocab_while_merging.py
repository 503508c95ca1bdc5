"""The vocabulary table while a run merges: a frame's new tokens that would land below the rows
in view wait (at most ``CATCH_UP_MS``) instead of repainting the whole table each frame, and
every token is there as soon as the user could look for it: scrolled to the end, paused,
sorted or filtered, a token selected, the run over. A step change repaints the table only
when a row in view changes colour.

The expected rows are counted here from the merges the test publishes.
"""

from __future__ import annotations

from gui_helpers import EOT, PaintCounter

from bpe_studio.core import MergeStep
from bpe_studio.core.train.vocab import initial_vocab
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.state import Phase, RunSettings
from bpe_studio.gui.views.vocab_table import VocabTableView

BASE_ROWS = 257  # 256 bytes and <|endoftext|>


def merging_hub() -> AppModel:
    hub = AppModel()
    hub.begin_run(RunSettings(2000, (EOT,)), initial_vocab([EOT]))
    hub.start_merging()
    return hub


def publish_merges(hub: AppModel, count: int) -> None:
    """``count`` more merges, published as one frame."""
    first = len(hub.state.record)
    hub.append_merges(
        [
            MergeStep(rank, bytes([97 + rank % 26]), b"#%d" % rank, 257 + rank, 1000 - rank)
            for rank in range(first, first + count)
        ]
    )
    hub.publish()


def table_view(qtbot, hub: AppModel) -> VocabTableView:
    view = VocabTableView(hub)
    qtbot.addWidget(view)
    view.resize(520, 360)  # about a dozen rows in view: the byte tokens fill it
    view.show()
    qtbot.waitExposed(view)
    return view


def test_new_rows_below_the_view_wait_then_arrive(qtbot):
    hub = merging_hub()
    view = table_view(qtbot, hub)
    assert view.model.rowCount() == BASE_ROWS
    publish_merges(hub, 10)
    # Out of sight: not added yet, but counted in the title.
    assert view.model.rowCount() == BASE_ROWS
    assert f"{BASE_ROWS + 10:,} tokens" in view.title.text()
    qtbot.waitUntil(lambda: view.model.rowCount() == BASE_ROWS + 10)
    assert view.proxy.rowCount() == BASE_ROWS + 10


def test_waiting_rows_arrive_when_the_user_could_look_for_them(qtbot):
    hub = merging_hub()
    view = table_view(qtbot, hub)
    publish_merges(hub, 5)
    assert view.model.rowCount() == BASE_ROWS
    hub.set_paused(True)  # a paused run is looked at
    assert view.model.rowCount() == BASE_ROWS + 5

    hub.set_paused(False)
    publish_merges(hub, 5)
    assert view.model.rowCount() == BASE_ROWS + 5
    bar = view.table.verticalScrollBar()
    bar.setValue(bar.maximum())  # scrolled to the end
    assert view.model.rowCount() == BASE_ROWS + 10
    publish_merges(hub, 5)  # below the end in view
    assert view.model.rowCount() == BASE_ROWS + 10
    bar.setValue(bar.maximum())  # and on to the new end
    assert view.model.rowCount() == BASE_ROWS + 15

    view.table.scrollToTop()
    publish_merges(hub, 5)
    assert view.model.rowCount() == BASE_ROWS + 15
    assert view.select_token(257 + 17)  # a waiting token is selected: it is there
    assert view.model.rowCount() == BASE_ROWS + 20

    view.table.scrollToTop()
    publish_merges(hub, 5)
    hub.set_phase(Phase.FINISHED)
    assert view.model.rowCount() == BASE_ROWS + 25


def test_a_sorted_or_filtered_table_gets_every_row_at_once(qtbot):
    hub = merging_hub()
    view = table_view(qtbot, hub)
    view.filter_edit.setText("#")
    qtbot.waitUntil(lambda: not view.busy and not view.proxy.spec.trivial)
    publish_merges(hub, 8)
    assert view.model.rowCount() == BASE_ROWS + 8
    # The filter's order follows (off the GUI thread): the byte "#" and every merged token.
    qtbot.waitUntil(lambda: not view.busy and view.proxy.rowCount() == 1 + 8)


def test_a_step_change_repaints_only_when_a_row_in_view_changes_colour(qtbot):
    hub = merging_hub()
    view = table_view(qtbot, hub)
    publish_merges(hub, 40)
    hub.set_phase(Phase.FINISHED)
    # The byte tokens in view have no merge: no step greys them.
    assert not view._greying_changes(40, 3)
    view.table.scrollToBottom()
    qtbot.waitUntil(lambda: view.table.rowAt(0) > BASE_ROWS)
    in_view = [
        view.model.rank_at(row)
        for row in range(view.table.rowAt(0), view.model.rowCount())
        if view.table.rowAt(0) <= row
    ]
    lowest = min(rank for rank in in_view if rank is not None)
    assert view._greying_changes(40, lowest)  # the rows from lowest on turn grey
    assert not view._greying_changes(lowest, lowest - 1)  # no row in view has that rank

    counter = PaintCounter()
    view.table.viewport().installEventFilter(counter)
    hub.select_step(lowest)
    qtbot.waitUntil(lambda: counter.paints > 0)  # the greyed rows were repainted
    view.table.viewport().removeEventFilter(counter)


def test_keys_in_the_table_move_among_every_token(qtbot):
    from PySide6.QtCore import Qt

    hub = merging_hub()
    view = table_view(qtbot, hub)
    publish_merges(hub, 12)
    assert view.model.rowCount() == BASE_ROWS  # waiting
    view.activateWindow()
    view.table.setFocus()
    qtbot.waitUntil(view.table.hasFocus)
    qtbot.keyClick(view.table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    # Ctrl+End reaches the newest token, not the last row added before it.
    assert view.table.currentIndex().row() == BASE_ROWS + 12 - 1
