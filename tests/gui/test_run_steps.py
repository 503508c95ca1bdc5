"""The run's tokenizer at each step is cut from one build (``model/run_steps``): a paused
run's replay asked for a new tokenizer of the run every frame, each built from the record
(the editor's, and Compare's and the Report's through it), and each had its merges as ids
worked out anew.

References are built here from scratch: a ``Tokenizer`` of the record's first ``k`` merges."""

from __future__ import annotations

import numpy as np
import pytest
from gui_helpers import EOT, FIXTURES, paused_in_window, wait_for_spans

from bpe_studio.core import Tokenizer, initial_vocab, iter_merges
from bpe_studio.core.explain import spans_at_step
from bpe_studio.core.explain.spans_at_step import MergeIds
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.run_tokenizer import run_tokenizer_at
from bpe_studio.gui.model.state import RunSettings
from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.training.replay import Pace

CORPUS = FIXTURES / "tinystories_slice.txt"
TEXT = (FIXTURES / "english_books_slice.txt").read_text(encoding="utf-8")[:2000]
MERGES = 300


def reference(steps, k: int) -> Tokenizer:
    vocab = dict(initial_vocab([EOT]))
    vocab.update((s.new_id, s.left + s.right) for s in steps[:k])
    return Tokenizer(vocab, [(s.left, s.right) for s in steps[:k]], [EOT])


class Counted:
    """Counts the tokenizers built with merges (a run's, from its record) and the merges
    worked out as ids, from the moment it is made."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.builds = self.merge_ids = 0
        init, of = Tokenizer.__init__, MergeIds.of.__func__

        def counted_init(tok, vocab, merges, *args, **kwargs):
            self.builds += len(merges) > 0
            init(tok, vocab, merges, *args, **kwargs)

        def counted_of(cls, tok):
            self.merge_ids += 1
            return of(cls, tok)

        monkeypatch.setattr(Tokenizer, "__init__", counted_init)
        monkeypatch.setattr(spans_at_step.MergeIds, "of", classmethod(counted_of))


@pytest.fixture(scope="module")
def steps():
    return list(iter_merges(CORPUS, 256 + 1 + MERGES, [EOT], workers=1))


def paused_hub(steps) -> AppModel:
    hub = AppModel()
    hub.begin_run(RunSettings(256 + 1 + MERGES, (EOT,)), initial_vocab([EOT]))
    hub.start_merging()
    hub.append_merges(steps[:200])
    hub.publish()
    hub.set_paused(True)
    return hub


def test_every_step_is_cut_from_one_build_and_encodes_as_its_merges_do(steps, monkeypatch):
    hub = paused_hub(steps)
    order = [0, 1, 37, 120, 199, 200, 150, 3, 200, 64]  # forward, back, forward again
    references = {k: reference(steps, k) for k in order}
    wanted = {k: MergeIds.of(references[k]) for k in order}
    counted = Counted(monkeypatch)
    for k in order:
        source = TokenizerSource.deferred(f"step {k}", run_tokenizer_at(hub.state, k), k, 1)
        tok = source.get()
        assert len(tok.merges) == k and tok.vocab == references[k].vocab, k
        assert tok.encode(TEXT) == references[k].encode(TEXT), k
        ids = source.merge_ids()
        assert ids is not None
        for name in ("left", "right", "new"):
            assert np.array_equal(getattr(ids, name), getattr(wanted[k], name)), (k, name)
    assert counted.builds == 1 and counted.merge_ids == 1
    # The record grew (the run resumed): a step past the build is built once more, with
    # every merge recorded, and the steps before it are cut from that one.
    hub.append_merges(steps[200:])
    hub.publish()
    for k in (250, MERGES, 10):
        tok = run_tokenizer_at(hub.state, k)()
        assert tok.encode(TEXT) == reference(steps, k).encode(TEXT), k
    assert counted.builds == 2 + 3  # the second build, and the three references


def test_another_run_is_built_anew(steps, monkeypatch):
    first = paused_hub(steps)
    tok = run_tokenizer_at(first.state, 100)()
    second = paused_hub(list(steps))  # the same merges, another run's record
    counted = Counted(monkeypatch)
    other = run_tokenizer_at(second.state, 100)()
    assert counted.builds == 1 and other is not tok
    assert other.encode(TEXT) == tok.encode(TEXT)


def test_a_paused_runs_replay_builds_its_tokenizer_once(qtbot, window, monkeypatch):
    """In the window: a run paused after 400 merges, replayed over dozens of frames; the
    editor shows at each step chosen afterwards what the first k merges encode."""
    paused_in_window(qtbot, window, CORPUS, 700, 399)
    hub, editor, bar = window.hub, window.editor, window.timeline
    qtbot.waitUntil(lambda: hub.state.published == 400, timeout=30_000)
    editor.set_text(TEXT)
    wait_for_spans(qtbot, editor)
    counted = Counted(monkeypatch)
    frames: list[int] = []
    hub.step_changed.connect(frames.append)
    bar.replay.start(Pace(per_second=400))  # a second at 30 frames a second
    qtbot.waitUntil(lambda: not hub.state.replaying, timeout=60_000)
    wait_for_spans(qtbot, editor)
    assert len(frames) >= 10
    assert counted.builds <= 1 and counted.merge_ids <= 1, (counted.builds, len(frames))
    steps = hub.state.record
    for k in (0, 5, 233, 400):
        hub.select_step(k)
        wait_for_spans(qtbot, editor)
        assert [int(i) for i in editor.spans.ids] == reference(steps, k).encode(TEXT), k
