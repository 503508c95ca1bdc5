"""Tokens of hundreds of kilobytes (a corpus of one letter doubles its token each merge): every
view shows them cut in the middle, never whole. (A training audit: on 4 MB of "x" the merge
table and the timeline laid out a 4-million-character text on every paint, 14 s a frame, the
window frozen and the trainer held with it; on 50 MB the app reached merge 30 of 143 in 8
minutes, where the command line takes a minute.)"""

from __future__ import annotations

from gui_helpers import train_in_window
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QApplication, QGraphicsItem, QLabel

from bpe_studio.gui.views.common import CELL_BYTES
from bpe_studio.gui.views.table_models import token_tooltip

# Far above what a cut token shows (its readable start and end, ~CELL_BYTES characters, and a
# line of hex), far below the 1,048,576 characters of the longest token here.
MOST = 4 * CELL_BYTES + 400
RUN = 1 << 20  # bytes of "x": the last merge makes the whole run one token


def _cells(model) -> list[str]:
    texts = []
    for r in range(model.rowCount()):
        for c in range(model.columnCount()):
            index = model.index(r, c, QModelIndex())
            for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                value = model.data(index, role)
                if isinstance(value, str):
                    texts.append(value)
    return texts


def _token_length(model, row: int, column: int) -> int:
    """The bytes of the token in a cell, as its tooltip says them ("(1,048,576 bytes: …")."""
    tip = str(model.index(row, column).data(Qt.ItemDataRole.ToolTipRole) or "")
    said = tip.rsplit("(", 1)[-1].split(" byte")[0].replace(",", "")
    return int(said) if said.isdigit() else 0


def test_megabyte_tokens_are_shown_cut_in_every_view(qtbot, window, tmp_path):
    corpus = tmp_path / "x.txt"
    corpus.write_bytes(b"hello world\n" + b"x" * RUN + b"\n")
    window.resize(1400, 900)
    result = train_in_window(qtbot, window, corpus, 300, specials="")
    assert result is not None and not result.stopped
    longest = max(len(a + b) for a, b in result.merges)
    assert longest == RUN  # the run was made of doublings, the last the whole run
    for model in (window.merge_list.model, window.vocab_table.model):
        cells = _cells(model)
        assert cells and max(map(len, cells)) < MOST
    assert any("…" in t for t in _cells(window.merge_list.model))
    # Ctrl+C copies a cell's whole token, not the cut it shows (a re-audit: 256 characters,
    # "…" and all); a short one as it is shown.
    from bpe_studio.core.text.display import readable_token

    clipboard = QApplication.clipboard()
    for view, column in ((window.merge_list.table, 3), (window.vocab_table.table, 1)):
        model = view.model()
        rows = range(model.rowCount())
        longest_row = max(rows, key=lambda r: _token_length(model, r, column))
        index = model.index(longest_row, column)
        view.scrollTo(index)
        qtbot.mouseClick(
            view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center()
        )
        assert view.currentIndex().column() == column
        qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
        assert clipboard.text() == readable_token(b"x" * RUN), view.accessibleName()
        index = model.index(0, 0)  # an id: as shown
        view.scrollTo(index)
        qtbot.mouseClick(
            view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center()
        )
        qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
        assert clipboard.text() == model.index(0, 0).data()
    token = b"x" * longest
    assert len(token_tooltip(token)) < MOST
    # The timeline at the step of the longest token's merge names it.
    rank = next(k for k, (a, b) in enumerate(result.merges) if len(a + b) == longest)
    window.timeline.select_step(rank + 1)
    # The longest token explained: the heading, its tree's nodes and their tooltips.
    token_id = next(i for i, t in result.vocab.items() if t == token)
    window.hub.select_token(token_id)
    why = window.inspector.why
    qtbot.waitUntil(lambda: not why.busy and why.explanation is not None, timeout=30_000)
    qtbot.wait(50)
    window.grab()  # every view laid out and painted with these texts
    for label in window.findChildren(QLabel):
        assert len(label.text()) < MOST, label.objectName() or label.text()[:80]
    assert "x…x" in window.timeline.label.text()
    # Paused in a replay, the line the label shows still names the step (a re-audit: cut
    # between its parts, it showed "Replay paused · …").
    window.timeline.replay.start()
    window.timeline.select_step(rank + 1)  # pauses the replay, as a user's step does
    assert window.state.replaying and window.state.replay_paused
    shown = window.timeline.label.label.text()
    assert shown.startswith(f"Replay paused: step {rank + 1:,} of"), shown
    items: list[QGraphicsItem] = why.tree.scene().items()
    tooltips = [item.toolTip() for item in items if item.toolTip()]
    assert tooltips and max(map(len, tooltips)) < MOST
    assert max(map(len, _cells(why.uses))) < MOST if why.uses.rowCount() else True


def test_a_merged_cell_is_the_cut_of_the_joined_pair_without_joining_it():
    """The merge table's Merged cell cuts the pair without joining two long tokens; it must
    read as the joined token's own cut, characters split between the two parts included."""
    import random

    from bpe_studio.core.text.display import readable_cut
    from bpe_studio.gui.views.common import merged_text

    rng = random.Random(7)
    alphabet = ["a", "中", "😀", "é", " ", "\n", "\x00"]
    for _ in range(2_000):
        left = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300))).encode()
        right = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300))).encode()
        left, right = left[: rng.randint(0, len(left))], right[rng.randint(0, len(right)) :]
        for most in (CELL_BYTES, 48, 10):
            assert merged_text(left, right, most) == readable_cut(left + right, most)
