"""The inspector's panels, driven through their slots: the merge tree drawn for a selected token
(checked against a walk of the vocabulary and merge list written here), clicks on nodes and
"grew into" rows select tokens, the step-through replays the encoder to exactly what
``encode`` gives (English, Chinese, emoji; at a timeline step; a picked tokenizer), and Play
reaches the end. The references below read only the merge list as bytes and the record's
counts, never the code under test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gui_helpers import EOT, FIXTURES
from PySide6.QtCore import Qt

from bpe_studio.core import Tokenizer, trainer_from_file
from bpe_studio.core.train.vocab import initial_vocab
from bpe_studio.gui.jobs.loader import prepare, prepare_file
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.state import RunSettings, TrainingResult
from bpe_studio.gui.model.tokenizer_recipes import inspector_cache
from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.views.inspector import InspectorPanel
from bpe_studio.gui.views.step_through import MAX_PIECE_BYTES, StepThroughPanel
from bpe_studio.gui.views.why_token import WhyTokenPanel

VOCAB = 1200


# ------------------------------------------------------------------ references
def first_rank(merges: list[tuple[bytes, bytes]]) -> dict[bytes, int]:
    """Token bytes -> the rank of the first merge that makes them."""
    made: dict[bytes, int] = {}
    for rank, (a, b) in enumerate(merges):
        made.setdefault(a + b, rank)
    return made


def ids_of(vocab: dict[int, bytes]) -> dict[bytes, int]:
    ids: dict[bytes, int] = {}
    for i in sorted(vocab):
        ids.setdefault(vocab[i], i)
    return ids


def ref_tree(vocab, merges, counts, token: bytes):
    """``(id, rank, count line, children)`` walked from the merge list: a token made by a merge
    has that merge's parts as children; bytes and special tokens are leaves."""
    made, ids = first_rank(merges), ids_of(vocab)

    def walk(t: bytes):
        rank = made.get(t)
        if rank is None:
            return (ids[t], None, None, ())
        a, b = merges[rank]
        count = counts[rank]
        line = f"count {count:,}" if count is not None else "count n/a"
        return (ids[t], rank, line, (walk(a), walk(b)))

    return walk(token)


def ref_uses(vocab, merges, token: bytes) -> list[tuple[int, int]]:
    """(rank, made id) of each merge with ``token`` as a part; a repeated pair only once."""
    ids, seen, out = ids_of(vocab), set(), []
    for rank, (a, b) in enumerate(merges):
        if (a, b) not in seen and token in (a, b):
            out.append((rank, ids[a + b]))
        seen.add((a, b))
    return out


def ref_rank_encode(merges, piece: bytes) -> list[bytes]:
    """Rank-based BPE on one piece: merge the lowest-ranked adjacent pair (leftmost of
    equals) until none has a merge."""
    ranks: dict[tuple[bytes, bytes], int] = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(pair, rank)
    parts = [bytes([b]) for b in piece]
    while True:
        found = [(ranks[p], i) for i, p in enumerate(zip(parts, parts[1:])) if p in ranks]
        if not found:
            return parts
        _, i = min(found)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    """A real run on slices of TinyStories and Chinese web text (so Chinese has merges)."""
    english = (FIXTURES / "tinystories_slice.txt").read_text(encoding="utf-8")[:120_000]
    chinese = (FIXTURES / "chinese_slice.txt").read_text(encoding="utf-8")[:40_000]
    corpus = tmp_path_factory.mktemp("inspector") / "corpus.txt"
    corpus.write_text(english + EOT + chinese + EOT + " 😀😊 😀" * 50, encoding="utf-8")
    return list(trainer_from_file(corpus, VOCAB, [EOT]))


@pytest.fixture(scope="module")
def run(steps):
    vocab = initial_vocab([EOT])
    vocab.update((s.new_id, s.left + s.right) for s in steps)
    merges = [(s.left, s.right) for s in steps]
    return vocab, merges, [s.count for s in steps]


def training_hub(steps) -> AppModel:
    """A hub mid-run: every merge recorded and published, no result yet."""
    hub = AppModel()
    hub.begin_run(RunSettings(VOCAB, (EOT,)), initial_vocab([EOT]))
    hub.start_merging()
    hub.append_merges(steps)
    hub.publish()
    return hub


def finished_hub(steps, run) -> AppModel:
    hub = training_hub(steps)
    vocab, merges, _ = run
    hub.finish(TrainingResult(dict(vocab), list(merges), (EOT,), VOCAB - 257, False, 1.0))
    return hub


def why_panel(qtbot, hub) -> WhyTokenPanel:
    panel = WhyTokenPanel(hub, inspector_cache())
    qtbot.addWidget(panel)
    panel.resize(600, 500)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def wait_explained(qtbot, panel: WhyTokenPanel, token_id: int) -> None:
    qtbot.waitUntil(
        lambda: panel.explanation is not None and panel.explanation.token_id == token_id,
        timeout=20_000,
    )


def deep_token(vocab, merges) -> bytes:
    """The token of the run with the deepest merge tree (a long word)."""
    made = first_rank(merges)

    def depth(t: bytes) -> int:
        rank = made.get(t)
        return 0 if rank is None else 1 + max(depth(p) for p in merges[rank])

    return max((a + b for a, b in merges), key=lambda t: (depth(t), len(t)))


# ------------------------------------------------------------------ why this token
@pytest.mark.parametrize("phase", ["training", "finished"])
def test_merge_tree_of_a_selected_token(qtbot, steps, run, phase):
    vocab, merges, counts = run
    hub = training_hub(steps) if phase == "training" else finished_hub(steps, run)
    panel = why_panel(qtbot, hub)
    token = deep_token(vocab, merges)
    token_id = ids_of(vocab)[token]
    hub.select_token(token_id)
    wait_explained(qtbot, panel, token_id)
    shown = panel.tree.shown_structure()
    assert shown == ref_tree(vocab, merges, counts, token)
    assert shown[3], "the deepest token is made by a merge"
    # Every node drawn, and none overlapping another.
    items = panel.tree.node_items()
    assert len(items) == 2 * len(token) - 1
    boxes = [item.mapRectToScene(item.box()) for item in items]
    assert not any(a.intersects(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    # The heading names the merge and its pair count from the record.
    rank = first_rank(merges)[token]
    assert f"merge {rank:,}" in panel.detail.text() and f"{counts[rank]:,}" in panel.detail.text()


def deep_token_explained(qtbot, steps, run):
    """A finished run's hub and a Why panel explaining a token of a deep merge tree."""
    vocab, merges, _ = run
    hub = finished_hub(steps, run)
    panel = why_panel(qtbot, hub)
    token_id = ids_of(vocab)[deep_token(vocab, merges)]
    hub.select_token(token_id)
    wait_explained(qtbot, panel, token_id)
    return hub, panel


def test_clicking_a_node_selects_its_token(qtbot, steps, run):
    vocab, merges, counts = run
    hub, panel = deep_token_explained(qtbot, steps, run)
    child = panel.tree.root.children[1]
    assert child.children, "pick a merged child so that its own tree has children too"
    view = panel.tree
    view.centerOn(child)
    pos = view.mapFromScene(child.mapToScene(child.box().center()))
    with qtbot.waitSignal(hub.token_selected, timeout=5000) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [child.token_id]
    assert hub.state.selected_token == child.token_id
    wait_explained(qtbot, panel, child.token_id)
    assert panel.tree.shown_structure() == ref_tree(vocab, merges, counts, vocab[child.token_id])


def test_the_keyboard_steps_through_the_nodes_and_follows_one(qtbot, steps, run):
    """The accessibility audit: only a click reached a node. Arrows step through the nodes
    (root first, breadth first), Enter follows the one the outline is on."""
    hub, panel = deep_token_explained(qtbot, steps, run)
    view = panel.tree
    nodes = view.node_items()
    panel.activateWindow()
    view.setFocus()
    qtbot.waitUntil(view.hasFocus)
    # The focus shows on the root at once (a keyboard audit: the tree took the focus and
    # showed it nowhere until an arrow was pressed).
    assert view.current is nodes[0] and view._outline is not None
    assert view._outline.isVisible()
    for _ in range(2):
        qtbot.keyClick(view, Qt.Key.Key_Down)
    assert view.current is nodes[2]
    qtbot.keyClick(view, Qt.Key.Key_Up)
    assert view.current is nodes[1]
    with qtbot.waitSignal(hub.token_selected, timeout=5000) as blocker:
        qtbot.keyClick(view, Qt.Key.Key_Return)
    assert blocker.args == [nodes[1].token_id]
    wait_explained(qtbot, panel, nodes[1].token_id)
    assert panel.tree.current is None  # a new tree: the keyboard starts at its root again


def test_grew_into_lists_the_merges_using_the_token(qtbot, steps, run):
    vocab, merges, counts = run
    hub = finished_hub(steps, run)
    panel = why_panel(qtbot, hub)
    # No token yet: the table is folded, as after a reset (an audit: an empty table stood
    # in the lab until the first reset, and folded from then on).
    assert not panel.uses_table.isVisibleTo(panel) and panel.uses_title.text() == "Grew into"
    ids = ids_of(vocab)
    for token in [b" t", b"e", b" the", deep_token(vocab, merges)]:
        hub.select_token(ids[token])
        wait_explained(qtbot, panel, ids[token])
        rows = [(r.rank, r.new_id) for r in panel.uses.rows]
        assert rows == ref_uses(vocab, merges, token)
        assert panel.uses.counts == [counts[rank] for rank, _ in rows]
        n = len(rows)
        assert panel.uses_table.isVisibleTo(panel) == (n > 0)
    # " t" grew into something; clicking a row selects what it made.
    hub.select_token(ids[b" t"])
    wait_explained(qtbot, panel, ids[b" t"])
    first = panel.uses.rows[0]
    with qtbot.waitSignal(hub.token_selected, timeout=5000) as blocker:
        panel.uses_table.clicked.emit(panel.uses.index(0, 1))
    assert blocker.args == [first.new_id]


def test_grew_into_greys_merges_after_the_timeline_step(qtbot, steps, run):
    vocab, merges, _ = run
    hub = finished_hub(steps, run)
    panel = why_panel(qtbot, hub)
    token_id = ids_of(vocab)[b" t"]
    hub.select_token(token_id)
    wait_explained(qtbot, panel, token_id)
    ranks = [r.rank for r in panel.uses.rows]
    k = ranks[len(ranks) // 2]
    hub.select_step(k)
    greyed = [
        panel.uses.data(panel.uses.index(i, 0), Qt.ItemDataRole.ForegroundRole) is not None
        for i in range(len(ranks))
    ]
    assert greyed == [r >= k for r in ranks]


def test_loaded_gpt2_tree_has_no_counts_and_folds_nothing(qtbot):
    loaded = prepare(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    hub = AppModel()
    hub.show_loaded(loaded)
    panel = why_panel(qtbot, hub)
    tok = loaded.tokenizer
    vocab, merges = tok.vocab, tok.merges
    for token in [b" University", b"\xe4\xb8\xad", b"<|endoftext|>"]:
        token_id = ids_of(vocab)[token]
        hub.select_token(token_id)
        wait_explained(qtbot, panel, token_id)
        expected = ref_tree(vocab, merges, [None] * len(merges), token)
        assert panel.tree.shown_structure() == expected
        assert panel.tree.folded == 0
    assert panel.tree.root.kind == "special"


def test_occurrences_come_from_the_editor_counter(qtbot, steps, run):
    vocab, _, _ = run
    hub = finished_hub(steps, run)
    panel = why_panel(qtbot, hub)
    asked: list[int] = []
    panel.set_occurrence_counter(lambda token_id: asked.append(token_id) or 3)
    token_id = ids_of(vocab)[b" the"]
    hub.select_token(token_id)
    wait_explained(qtbot, panel, token_id)
    assert "3 times" in panel.detail.text() and asked[-1] == token_id


def test_an_unknown_id_is_explained_not_raised(qtbot, steps, run):
    hub = finished_hub(steps, run)
    panel = why_panel(qtbot, hub)
    hub.select_token(10**7)
    wait_explained(qtbot, panel, 10**7)
    assert panel.explanation.tree is None and panel.tree.root is None


# ------------------------------------------------------------------ step-through
def step_panel(qtbot, hub) -> StepThroughPanel:
    panel = StepThroughPanel(hub, inspector_cache())
    qtbot.addWidget(panel)
    panel.resize(600, 450)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def replay(qtbot, panel: StepThroughPanel, piece: str, typed: bool = False):
    if typed:
        panel.piece_edit.setText(piece)
        panel._on_typed(piece)
    else:
        panel.show_piece(piece)
    qtbot.waitUntil(
        lambda: (
            panel.walkthrough is not None and panel.walkthrough.text == piece and not panel.busy
        ),
        timeout=20_000,
    )
    return panel.walkthrough


def check_replay(qtbot, panel, tok: Tokenizer, merges, piece: str) -> None:
    w = replay(qtbot, panel, piece)
    assert w.steps, piece
    assert list(w.steps[-1].tokens) == tok.encode(piece), piece
    # The encoder's tokens, read back as bytes, are what a rank-by-rank replay gives.
    assert [w.tokens[i] for i in w.steps[-1].tokens] == ref_rank_encode(merges, piece.encode())
    # Every step drawn: the pair merged is the lowest-ranked one (leftmost of equals).
    for i, step in enumerate(w.steps):
        panel.show_step(i)
        assert panel.strip.tokens == step.tokens
        if step.chosen is not None:
            ranks = panel.strip.candidates
            assert ranks[step.chosen] == min(ranks.values())
            assert step.chosen == min(p for p, r in ranks.items() if r == ranks[step.chosen])


PIECES = [" little", " happily", "中文", "你好", "😀", " 😀😊", "Lily", EOT]


@pytest.mark.parametrize("piece", PIECES)
def test_step_through_last_step_is_encode_gpt2(qtbot, piece):
    loaded = prepare(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    hub = AppModel()
    hub.show_loaded(loaded)
    panel = step_panel(qtbot, hub)
    tok = loaded.tokenizer
    if piece == EOT:
        w = replay(qtbot, panel, piece)
        assert [list(s.tokens) for s in w.steps] == [tok.encode(piece)]
        return
    check_replay(qtbot, panel, tok, tok.merges, piece)


def test_step_through_follows_the_timeline_step(qtbot, steps, run):
    vocab, merges, _ = run
    hub = finished_hub(steps, run)
    panel = step_panel(qtbot, hub)
    full = Tokenizer(vocab, merges, [EOT])
    for k in [len(merges), 600, 40, 0]:
        hub.select_step(k)
        panel.refresh()
        for piece in [" little", "中文", " 😀"]:
            panel.show_piece(piece)
            qtbot.waitUntil(lambda: not panel.busy, timeout=20_000)
            w = panel.walkthrough
            assert list(w.steps[-1].tokens) == full.truncated(k).encode(piece), (k, piece)
            assert [w.tokens[i] for i in w.steps[-1].tokens] == ref_rank_encode(
                merges[:k], piece.encode()
            )


def test_step_through_while_training_uses_the_editors_tokenizer(qtbot, steps, run):
    """Following the run live, the editor shows the run's tokenizer as last rebuilt (paced),
    so the step-through replays that one, not every merge published since: the code review
    found them 5 merges apart. At an earlier step both use the record's merges to it."""
    vocab, merges, _ = run
    hub = training_hub(steps[:300])
    hub.show_tokenizer(
        TokenizerSource(
            "training, 200 merges so far",
            vocab=initial_vocab([EOT]) | {s.new_id: s.left + s.right for s in steps[:200]},
            merges=merges[:200],
            special_tokens=[EOT],
            run_id=hub.state.run_id,
        )
    )
    assert hub.state.live and hub.state.published == 300
    panel = step_panel(qtbot, hub)
    piece = " little"
    w = replay(qtbot, panel, piece)
    assert [w.tokens[i] for i in w.steps[-1].tokens] == ref_rank_encode(merges[:200], b" little")
    assert ref_rank_encode(merges[:200], b" little") != ref_rank_encode(merges[:300], b" little")
    hub.select_step(250)  # past the rebuilt one: the record's 250 merges, as the editor
    panel.refresh()
    panel.show_piece(piece)
    qtbot.waitUntil(lambda: not panel.busy and bool(panel.walkthrough.steps), timeout=20_000)
    w = panel.walkthrough
    assert [w.tokens[i] for i in w.steps[-1].tokens] == ref_rank_encode(merges[:250], b" little")


def test_step_through_uses_a_picked_tokenizer(qtbot, steps, run):
    hub = finished_hub(steps, run)
    loaded = prepare(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    hub.select_step(10)  # the picked tokenizer is shown whole, whatever the step
    hub.pick_tokenizer(TokenizerSource("GPT-2", tokenizer=loaded.tokenizer))
    panel = step_panel(qtbot, hub)
    w = replay(qtbot, panel, " University")
    assert list(w.steps[-1].tokens) == loaded.tokenizer.encode(" University")


def test_typed_text_is_cut_into_pieces(qtbot, steps, run):
    vocab, merges, _ = run
    hub = finished_hub(steps, run)
    panel = step_panel(qtbot, hub)
    w = replay(qtbot, panel, "Lily said hi", typed=True)
    assert w.pieces == ("Lily", " said", " hi") and w.piece == "Lily"
    assert panel.piece_menu.isVisibleTo(panel) and panel.piece_menu.count() == 3
    panel.piece_menu.setCurrentIndex(1)
    panel.piece_menu.activated.emit(1)
    qtbot.waitUntil(lambda: panel.walkthrough.index == 1 and not panel.busy, timeout=20_000)
    w = panel.walkthrough
    assert [w.tokens[i] for i in w.steps[-1].tokens] == ref_rank_encode(merges, b" said")


def test_a_piece_too_long_is_refused_politely(qtbot, steps, run):
    hub = finished_hub(steps, run)
    panel = step_panel(qtbot, hub)
    piece = "a" * (MAX_PIECE_BYTES + 1)
    w = replay(qtbot, panel, piece)
    assert w.problem and f"{MAX_PIECE_BYTES + 1:,}" in w.problem
    assert not panel.play_button.isEnabled()


def test_back_forward_and_play_reach_the_end(qtbot, steps, run):
    hub = finished_hub(steps, run)
    panel = step_panel(qtbot, hub)
    w = replay(qtbot, panel, " happily")
    last = len(w.steps) - 1
    assert last >= 3 and panel.index == 0 and not panel.back_button.isEnabled()
    panel.forward()
    panel.forward()
    assert panel.index == 2 and panel.counter.text() == f"Step 3/{last + 1}"
    panel.back()
    assert panel.index == 1
    panel.set_play_interval(10)
    panel.toggle_play()
    assert panel.playing
    qtbot.waitUntil(lambda: not panel.playing, timeout=10_000)
    assert panel.index == last and not panel.forward_button.isEnabled()
    assert panel.strip.chosen is None and "Done" in panel.message.text()
    panel.toggle_play()  # at the end, Play starts over
    assert panel.index == 0 and panel.playing
    panel.stop()


# ------------------------------------------------------------------ in the window
def test_inspector_in_the_main_window(qtbot, window, tmp_path: Path):
    from gui_helpers import train_in_window

    train_in_window(qtbot, window, FIXTURES / "tinystories_slice.txt", 800)
    inspector: InspectorPanel = window.inspector
    assert inspector.tabText(0) == "Why this token" and inspector.tabText(1) == "Step-through"
    tok = window.state.shown.get()
    token_id = tok.encode(" little")[0]
    window.hub.select_token(token_id)
    wait_explained(qtbot, inspector.why, token_id)
    assert inspector.why.tree.root.token_id == token_id
    inspector.setCurrentIndex(1)
    inspector.step_through.show_piece(" little")
    qtbot.waitUntil(
        lambda: inspector.step_through.walkthrough is not None and not inspector.step_through.busy,
        timeout=20_000,
    )
    assert list(inspector.step_through.walkthrough.steps[-1].tokens) == tok.encode(" little")
    assert window.grab().save(str(tmp_path / "window.png"))


def test_a_very_deep_tree_is_folded_and_a_fold_opens(qtbot):
    from bpe_studio.gui.views.merge_tree import FIT_FLOOR, MAX_NODES

    # "a" * n made by a chain of n - 1 merges: a tree of 2n - 1 nodes, n - 1 deep.
    n = 1200
    vocab = {i: bytes([i]) for i in range(256)}
    merges = [(b"a" * (k - 1), b"a") for k in range(2, n + 1)]
    vocab.update({255 + k: b"a" * k for k in range(2, n + 1)})
    tok = Tokenizer(vocab, merges)
    hub = AppModel()
    hub.pick_tokenizer(TokenizerSource("chain", tokenizer=tok))
    panel = why_panel(qtbot, hub)
    top = ids_of(vocab)[b"a" * n]
    hub.select_token(top, hub.state.picked)  # a token of the picked tokenizer
    wait_explained(qtbot, panel, top)
    items = panel.tree.node_items()
    assert len(items) <= MAX_NODES and panel.tree.folded == 1
    folded = [item for item in items if item.kind == "folded"]
    assert len(folded) == 1 and not folded[0].children
    # Drawn down the chain: each level one merged token and one "a".
    chain = [item.token_id for item in items if item.token_id != ord("a")]
    assert chain == [top - d for d in range(len(chain))] and chain[-1] == folded[0].token_id
    assert len(items) == 2 * len(chain) - 1
    assert panel.tree.zoom() >= FIT_FLOOR, "too big to fit: drawn readable, scrolled to the root"
    with qtbot.waitSignal(hub.token_selected, timeout=5000) as blocker:
        panel.tree.node_clicked.emit(folded[0].token_id)
    wait_explained(qtbot, panel, blocker.args[0])
    assert panel.tree.root.token_id == folded[0].token_id


def test_grew_into_follows_a_live_run(qtbot, steps, run):
    vocab, merges, _ = run
    hub = training_hub(steps[:100])
    panel = why_panel(qtbot, hub)
    token = b" t"
    token_id = ids_of(vocab)[token]
    hub.select_token(token_id)
    wait_explained(qtbot, panel, token_id)
    assert [r.rank for r in panel.uses.rows] == [r for r, _ in ref_uses(vocab, merges[:100], token)]
    assert ref_uses(vocab, merges[:100], token) != ref_uses(vocab, merges, token)
    hub.append_merges(steps[100:])
    hub.publish()
    # Within a second or so the panel explains the token again, with every merge published.
    qtbot.waitUntil(
        lambda: [(r.rank, r.new_id) for r in panel.uses.rows] == ref_uses(vocab, merges, token),
        timeout=20_000,
    )


def test_no_merge_uses_it_says_yet_only_while_merges_can_come(qtbot, steps, run):
    """The "(yet)" after "no merge uses it as a part": only while the run trains (or is paused):
    a finished run, or a loaded tokenizer, makes no more merges."""
    vocab, merges, _ = run
    last = ids_of(vocab)[merges[-1][0] + merges[-1][1]]
    assert not ref_uses(vocab, merges, merges[-1][0] + merges[-1][1])
    hub = training_hub(steps)
    panel = why_panel(qtbot, hub)
    hub.select_token(last)
    wait_explained(qtbot, panel, last)
    assert panel.uses_title.text() == "Grew into: no merge uses it as a part (yet)"
    hub.set_paused(True)
    hub.select_token(last)
    qtbot.waitUntil(lambda: not panel.busy, timeout=20_000)
    assert panel.uses_title.text() == "Grew into: no merge uses it as a part (yet)"
    hub.set_paused(False)
    hub.finish(TrainingResult(dict(vocab), list(merges), (EOT,), VOCAB - 257, False, 1.0))
    qtbot.waitUntil(
        lambda: panel.uses_title.text() == "Grew into: no merge uses it as a part", timeout=20_000
    )
    # A loaded tokenizer: no more merges either.
    loaded = prepare(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    hub.show_loaded(loaded)
    a, b = loaded.tokenizer.merges[-1]
    gpt2_last = ids_of(loaded.tokenizer.vocab)[a + b]
    hub.select_token(gpt2_last)
    wait_explained(qtbot, panel, gpt2_last)
    assert not panel.uses.rows
    assert panel.uses_title.text() == "Grew into: no merge uses it as a part"


def test_an_added_token_is_not_called_a_byte(qtbot, tmp_path):
    """A real-display audit: Why this token called Qwen-style `<think>` (7 bytes, added,
    not special) "a byte"."""
    import tokenizers
    from core_helpers import SLICES, read_fixture
    from hf_shapes import FAMILIES, trained_bpe

    hf = trained_bpe(*FAMILIES["llama3"], [read_fixture(SLICES["english"])[:20_000]], 400)
    hf.add_special_tokens([tokenizers.AddedToken(EOT, special=True)])
    hf.add_tokens([tokenizers.AddedToken("<think>", special=False, normalized=False)])
    hf.save(str(tmp_path / "tokenizer.json"))
    loaded = prepare_file(tmp_path / "tokenizer.json")
    hub = AppModel()
    hub.show_loaded(loaded)
    panel = why_panel(qtbot, hub)
    said = {}
    for text in ("<think>", EOT, "a"):
        token_id = hf.token_to_id(text) if text != "a" else loaded.tokenizer.encode("a")[0]
        hub.select_token(token_id)
        wait_explained(qtbot, panel, token_id)
        said[text] = panel.detail.text()
    assert said["<think>"].startswith("an added token, in the vocabulary as it is: no merge")
    assert said[EOT].startswith("a special token: no merge made it")
    assert said["a"].startswith("a byte: no merge made it")


def test_a_tokenizer_json_named_like_a_vocabulary_loads_as_one(tmp_path):
    """Found by the review: a whole tokenizer.json saved as my_vocab.json was read as a GPT-2
    vocabulary, and Load asked for its merges file; GPT-2's own vocabulary is still one."""
    from foreign_files import llama3_style, own_ids

    from bpe_studio.gui.jobs.loader import is_gpt2_vocab, names_a_vocab

    original = llama3_style(tmp_path / "original", full=False)
    named = tmp_path / "my_vocab.json"
    named.write_bytes(original.read_bytes())
    assert not names_a_vocab(named) and not is_gpt2_vocab(named)
    loaded = prepare_file(named)
    text = "Hello world 12345, it's 2024!\n\n  ok"
    assert loaded.tokenizer.encode(text) == own_ids(original, text)
    assert is_gpt2_vocab(FIXTURES / "gpt2_vocab.json")


def test_a_long_tokens_heading_keeps_its_id_whole(qtbot):
    """A scale audit: beside a long token (196 bytes of box drawing) the heading broke after
    "id", its "d" cut off and the number on the next line. It may break before "id" now,
    never inside "id 6,690", and it wraps rather than being cut at the panel's edge."""
    from PySide6.QtGui import QTextDocument

    loaded = prepare(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    hub = AppModel()
    hub.show_loaded(loaded)
    tok = loaded.tokenizer
    longest = max(tok.merges, key=lambda m: len(m[0] + m[1]))
    token_id = tok.encode_single_token(longest[0] + longest[1])
    panel = why_panel(qtbot, hub)
    panel.resize(340, 500)
    panel.show_token(token_id)
    wait_explained(qtbot, panel, token_id)
    label = panel.heading
    # Too wide for the panel, the heading wraps: also where the text without its tags, in
    # the label's font, would fit (the token is in 15 pt): it had been cut at the edge then.
    from PySide6.QtWidgets import QApplication

    measure = QTextDocument()
    measure.setDocumentMargin(0)
    measure.setDefaultFont(label.label.font())
    measure.setHtml(label.text())
    plain = label.label.fontMetrics().horizontalAdvance(measure.toPlainText())
    between = 0
    for width in range(300, 1200, 10):
        panel.resize(width, 500)
        QApplication.processEvents()
        room = label.width() - 4
        if plain < room < measure.idealWidth():
            between += 1
            assert label.label.wordWrap(), width
    assert between
    panel.resize(340, 500)
    QApplication.processEvents()
    doc = QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setHtml(label.text())
    doc.setTextWidth(label.width())
    doc.size()  # lays the text out
    lines = []
    block = doc.begin()
    while block.isValid():
        layout = block.layout()
        for i in range(layout.lineCount()):
            line = layout.lineAt(i)
            lines.append(block.text()[line.textStart() : line.textStart() + line.textLength()])
        block = block.next()
    number = f"{token_id:,}"
    (holding,) = [line for line in lines if number in line]
    assert f"id\u00a0{number}" in holding
    assert all(line.rstrip().endswith("id") is False for line in lines)


def whole_token_file(directory: Path, ignore_merges: bool) -> Path:
    """A byte-level ``tokenizer.json`` whose vocabulary holds ``zz``, which no merge makes,
    and ``ab``, which one does; with or without Llama 3's ``ignore_merges``."""
    import tokenizers
    from tokenizers import decoders, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    vocab |= {"ab": len(vocab), "zz": len(vocab) + 1}
    hf = tokenizers.Tokenizer(models.BPE(vocab, [("a", "b")], ignore_merges=ignore_merges))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    directory.mkdir()
    hf.save(str(directory / "tokenizer.json"))
    return directory / "tokenizer.json"


def test_a_piece_found_whole_is_stepped_through_as_the_encoder_does(qtbot, tmp_path):
    """A real-display audit: under ignore_merges the editor showed one id for " Zyxwvut"
    (a vocabulary token no merge makes) while the step-through merged its bytes into five
    tokens, "what the encoder gives for this piece"."""
    loaded = prepare_file(whole_token_file(tmp_path / "llama3", ignore_merges=True))
    hub = AppModel()
    hub.show_loaded(loaded)
    panel = step_panel(qtbot, hub)
    zz = loaded.tokenizer.encode("zz")
    assert len(zz) == 1
    w = replay(qtbot, panel, "zz")
    assert [list(s.tokens) for s in w.steps] == [zz] and w.steps[0].whole
    said = panel.message.text()
    assert "Found whole in the vocabulary" in said and f"[{zz[0]:,}]" in said
    assert "ignore_merges" in said and "found whole" in panel.merges_list.item(0).text()
    w = replay(qtbot, panel, "ab")  # the merges reach the token looked up: both are said
    assert len(w.steps) == 2 and list(w.steps[-1].tokens) == loaded.tokenizer.encode("ab")
    panel.show_step(1)
    assert "finds the piece whole" in panel.message.text()


@pytest.mark.parametrize("ignore_merges", [True, False])
def test_a_token_no_merge_makes_is_said_found_whole_or_never_given(qtbot, tmp_path, ignore_merges):
    """The same audit: Why this token called Llama 3's whole-only token "an added token"."""
    loaded = prepare_file(whole_token_file(tmp_path / "tok", ignore_merges))
    hub = AppModel()
    hub.show_loaded(loaded)
    panel = why_panel(qtbot, hub)
    token_id = loaded.tokenizer.encode_single_token(b"zz")
    hub.select_token(token_id)
    wait_explained(qtbot, panel, token_id)
    if ignore_merges:
        assert loaded.tokenizer.encode("zz") == [token_id]
        assert panel.detail.text().startswith(
            "a vocabulary token no merge reaches: the encoder finds it whole, as the file "
            "sets ignore_merges"
        )
    else:
        assert loaded.tokenizer.encode("zz") != [token_id]
        assert panel.detail.text().startswith(
            "a vocabulary token no merge makes: encoding never gives it"
        )


def nfc_file(directory: Path) -> Path:
    """A Qwen2-shaped byte-level ``tokenizer.json`` (an NFC normalizer) whose merges make
    "é" both ways: composed (U+00E9) and decomposed ("e" and U+0301), which NFC never
    leaves in a text, so encoding never gives that token."""
    import tokenizers
    from tokenizers import decoders, models, normalizers, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    to_unicode = {b: c for b, c in zip(range(256), _byte_alphabet(), strict=True)}

    def spelled(data: bytes) -> str:
        return "".join(to_unicode[b] for b in data)

    vocab = {c: i for i, c in enumerate(alphabet)}
    pairs = [(b"\xcc", b"\x81"), (b"e", b"\xcc\x81"), (b"\xc3", b"\xa9")]
    merges = [(spelled(a), spelled(b)) for a, b in pairs]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    hf = tokenizers.Tokenizer(models.BPE(vocab, merges))
    hf.normalizer = normalizers.NFC()
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    directory.mkdir()
    hf.save(str(directory / "tokenizer.json"))
    return directory / "tokenizer.json"


def _byte_alphabet() -> list[str]:
    """GPT-2's byte-to-unicode alphabet, byte 0 first."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def test_why_this_token_says_when_encoding_never_gives_a_merged_token(qtbot, tmp_path):
    """A real-display audit of the Vocabulary lab with a Qwen2-shaped file (NFC): the
    decomposed "é" (e + U+0301), Reach "no" in the list beside it, was explained only as
    "made by merge 1: e + ́", as if encoding gave it; NFC composes that text, so it never
    does. The panel now says so; the composed "é" is said nothing of the kind."""
    loaded = prepare_file(nfc_file(tmp_path / "qwen2"))
    tok = loaded.tokenizer
    hub = AppModel()
    hub.show_loaded(loaded)
    panel = why_panel(qtbot, hub)
    decomposed = tok.encode_single_token("e\u0301".encode())
    composed = tok.encode_single_token("\u00e9".encode())
    assert tok.encode("e\u0301") == [composed]  # NFC first: never the decomposed token
    hub.select_token(decomposed)
    wait_explained(qtbot, panel, decomposed)
    detail = panel.detail.text()
    assert detail.startswith("made by merge 1:") and "encoding never gives it" in detail, detail
    assert "encoding never gives it" in panel.detail.toolTip()  # whole where the panel is short
    hub.select_token(composed)
    wait_explained(qtbot, panel, composed)
    assert "never" not in panel.detail.text(), panel.detail.text()


def test_why_this_token_under_ignore_merges_finds_whole_only_what_a_piece_can_be(qtbot, tmp_path):
    """The same audit with a Llama-3-shaped file (ignore_merges): a vocabulary token no merge
    makes and the pre-tokenizer always splits ("z!": "z", "!") was said "found whole", which
    encoding never does."""
    import tokenizers
    from tokenizers import decoders, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    vocab |= {"zz": len(vocab), "z!": len(vocab) + 1}
    hf = tokenizers.Tokenizer(models.BPE(vocab, [], ignore_merges=True))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    (tmp_path / "llama3").mkdir()
    hf.save(str(tmp_path / "llama3" / "tokenizer.json"))
    loaded = prepare_file(tmp_path / "llama3" / "tokenizer.json")
    tok = loaded.tokenizer
    hub = AppModel()
    hub.show_loaded(loaded)
    panel = why_panel(qtbot, hub)
    split = tok.encode_single_token(b"z!")
    assert tok.encode("z!") != [split] and hf.encode("z!").ids != [split]
    hub.select_token(split)
    wait_explained(qtbot, panel, split)
    assert panel.detail.text().startswith(
        "a vocabulary token no merge makes: encoding never gives it"
    ), panel.detail.text()


def test_step_through_merges_an_ordinary_piece_that_spells_an_added_token(tmp_path):
    """The third review: with a single_word added token "word" not found in "word_1" (a word
    character follows), encoding merges "word" as bytes, but Step-through ended on the added
    token's id, as for a piece that is the token."""
    import tokenizers
    from hf_shapes import flagged_file

    from bpe_studio.gui.views.step_through import walk

    path = flagged_file(tmp_path, ignore_merges=False)
    tok = Tokenizer.from_hf(path)
    for text in ("word_1 word", "a word_word"):
        hf = tokenizers.Tokenizer.from_file(path).encode(text, add_special_tokens=False).ids
        pieces = walk(tok, text, 0).pieces
        joined = [t for i in range(len(pieces)) for t in walk(tok, text, i).steps[-1].tokens]
        assert joined == tok.encode(text) == hf, text


def test_the_empty_trees_message_wraps_to_a_narrow_view(qtbot):
    # A keyboard audit: at 1280x720 the message in place of a tree was cut on the left, with
    # a horizontal scroll bar (it wrapped at a fixed width, wider than the view).
    from bpe_studio.gui.views.merge_tree import MergeTreeView

    view = MergeTreeView()
    qtbot.addWidget(view)
    view.resize(220, 200)
    view.show()
    qtbot.waitExposed(view)
    view.show_message("Select a token (in the editor, the vocabulary or the merge list) to see")
    qtbot.wait(20)
    assert not view.horizontalScrollBar().isVisible()
    text = view.scene().items()[0]
    left = view.mapFromScene(text.sceneBoundingRect().topLeft())
    right = view.mapFromScene(text.sceneBoundingRect().topRight())
    assert left.x() >= 0 and right.x() <= view.viewport().width()
    view.resize(600, 200)  # wider: no wider than it reads well
    qtbot.waitUntil(lambda: view.viewport().width() > 500)
    assert text.sceneBoundingRect().width() <= 330


def test_a_click_on_an_unfocused_tree_follows_the_node_clicked(qtbot, steps, run):
    """The review: the keyboard's start on the root (on focus-in) also ran for a click, and
    scrolled a zoomed tree to the root before the press arrived: the node clicked was lost."""
    from PySide6.QtGui import QTransform

    hub, panel = deep_token_explained(qtbot, steps, run)
    view = panel.tree
    panel.activateWindow()
    view.setTransform(QTransform.fromScale(4, 4))
    far = view.node_items()[-1]  # a leaf, the last breadth first: far from the root
    view.centerOn(far)
    viewport = view.viewport()
    root_shown = view.mapFromScene(view.root.sceneBoundingRect()).boundingRect()
    assert not viewport.rect().intersects(root_shown)  # zoomed so that the root is away
    assert not view.hasFocus()
    spot = view.mapFromScene(far.sceneBoundingRect().center())
    assert view.node_at(spot) is far
    with qtbot.waitSignal(hub.token_selected, timeout=5000) as blocker:
        qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=spot)
    assert blocker.args == [far.token_id]


def bfs_ranks(tree) -> list[tuple[int, int | None]]:
    """(id, rank) of a reference tree's nodes, root first, breadth first."""
    out, i = [tree], 0
    while i < len(out):
        out += list(out[i][3])
        i += 1
    return [(node[0], node[1]) for node in out]


def plain(label) -> str:
    return re.sub(r"<[^>]+>", "", label.text()).replace("&nbsp;", " ")


def test_a_token_made_after_the_timeline_step_is_not_learned_yet(qtbot, steps, run):
    """The audit: stepped back before the merge that makes the selected token, the panel still
    presented it as at the end of the run (heading, tree), while the vocabulary greyed it."""
    vocab, merges, counts = run
    hub = finished_hub(steps, run)
    panel = why_panel(qtbot, hub)
    token = deep_token(vocab, merges)
    token_id, rank = ids_of(vocab)[token], first_rank(merges)[token]
    hub.select_token(token_id)
    wait_explained(qtbot, panel, token_id)
    nodes = bfs_ranks(ref_tree(vocab, merges, counts, token))
    merged = sorted({r for _, r in nodes if r is not None})
    assert len(merged) > 2 and merged[-1] == rank

    # Steps from before its first part's merge to the one that makes it: merges 0..k-1 are
    # applied at step k, so a node is greyed while its rank >= k.
    for k in (merged[0], merged[len(merged) // 2], rank):
        hub.select_step(k)
        assert f"not learned yet at step {k:,}" in plain(panel.heading)
        detail = plain(panel.detail)
        assert detail.startswith(f"to be made by merge {rank:,}:")
        assert f"pair count {counts[rank]:,} when merged" in detail
        shown = [(item.token_id, item.later) for item in panel.tree.node_items()]
        assert shown == [(i, r is not None and r >= k) for i, r in nodes]
        assert any(later for _, later in shown) and not all(later for _, later in shown)
        assert "not learned yet" in panel.tree.root.toolTip()

    # Past its merge: learned, nothing greyed, as at the end of the run.
    for k in (rank + 1, len(merges)):
        hub.select_step(k)
        assert "not learned" not in plain(panel.heading)
        assert plain(panel.detail).startswith(f"made by merge {rank:,}:")
        assert not any(item.later for item in panel.tree.node_items())
        assert "not learned" not in panel.tree.root.toolTip()

    # A byte exists at every step.
    byte_id = ids_of(vocab)[token[:1]]
    hub.select_token(byte_id)
    wait_explained(qtbot, panel, byte_id)
    hub.select_step(0)
    assert "not learned" not in plain(panel.heading)
    assert not panel.tree.root.later

    # Selected while the timeline is already before its merge: explained as not learned yet.
    hub.select_token(token_id)
    wait_explained(qtbot, panel, token_id)
    assert "not learned yet at step 0" in plain(panel.heading)
    shown = [(item.token_id, item.later) for item in panel.tree.node_items()]
    assert shown == [(i, r is not None) for i, r in nodes]


def test_a_token_of_a_file_with_no_tree_gets_a_heading(qtbot, window, tmp_path):
    """A lab audit: Why this token for a Unigram's "<0xE4>" or "▁"-piece, or a WordPiece
    "##" piece, said only that trees apply to byte-level BPE: no id, bytes or spelling."""
    import html

    import tokenizers
    from foreign_files import unigram_byte_fallback, wordpiece

    path = unigram_byte_fallback(tmp_path / "uni")
    written = "a token, written in the file as <code>&lt;0xE4&gt;</code>"
    _heading_of_a_file_token(qtbot, window, path, "<0xE4>", "&lt;e4&gt;", "1 byte", written)
    # WordPiece's pieces are shown as the file writes them (the vocabulary table's way).
    path = wordpiece(tmp_path / "wp")
    vocab = tokenizers.Tokenizer.from_file(str(path)).get_vocab()
    piece = next(t for t in sorted(vocab) if t.startswith("##") and len(t) > 3 and t.isascii())
    size, plain = f"{len(piece)} bytes", "a token of the file's vocabulary"
    _heading_of_a_file_token(qtbot, window, path, piece, html.escape(piece), size, plain)


def _heading_of_a_file_token(qtbot, window, path, spelling, shown, size, detail) -> None:
    import tokenizers

    token_id = tokenizers.Tokenizer.from_file(str(path)).token_to_id(spelling)
    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000) as blocker:
        window.load_tokenizer(path)
    assert blocker.args == [True], window.last_error
    why = window.inspector.why
    # A file of another kind is offered to the editor, not made the run: picked there.
    source = window.state.picked
    assert source is not None and window.state.loaded is None
    window.hub.select_token(token_id, source)

    def explained() -> bool:
        exp = why.explanation
        return not why.busy and exp is not None and exp.token_id == token_id

    qtbot.waitUntil(explained, timeout=30_000)
    heading = why.heading.text()
    assert f"id&nbsp;{token_id:,} · {size}" in heading and shown in heading, heading
    assert why.detail.text().startswith(detail), why.detail.text()
    message = why.tree._message
    assert message is not None
    assert message.toPlainText().startswith("Why this token (its merge tree) applies")
