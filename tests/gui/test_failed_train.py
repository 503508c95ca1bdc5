"""A Train that fails before its first merge, after the run before was discarded: nothing of
either run stays on screen, and one cause makes one dialog. A tokenizer that cannot tokenize
the editor's text says why in the core's words, with no colours or ids of another.

The cause here is a custom pattern that misses a character (``[^K]+``: the corpus has a "K"
only past the start Train reads before it discards the run, ``corpus_probe``): the run fails
on the corpus, and the held-out text's compression curve fails on it too.
"""

from __future__ import annotations

from gui_helpers import EOT, FIXTURES, train_in_window, wait_for_spans

from bpe_studio.core.train.vocab import initial_vocab
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.views.picker import preset_key

TINY = FIXTURES / "tinystories_slice.txt"
TEXT = f"Once upon a time there was a girl.{EOT}\nThe end.\n"


def _dialogs(window) -> list[str]:
    """The titles of the error dialogs the window shows from now on."""
    titles: list[str] = []
    show = window.show_error

    def record(title: str, message: str) -> None:
        titles.append(title)
        show(title, message)

    window.show_error = record
    for source in (window.controller.error, window.curve.error):
        source.disconnect(show)
        source.connect(record)
    return titles


def test_a_failed_train_after_a_discard_shows_neither_run_and_one_dialog(qtbot, window):
    train_in_window(qtbot, window, TINY, 400)
    window.timeline.select_step(100)  # not live: the editor shows the run at a step
    window.editor.set_text(TEXT)
    wait_for_spans(qtbot, window.editor)
    assert window.ids_panel.ids.size > 0
    dialogs = _dialogs(window)
    window.panel.pattern_choice.set_pattern("[^K]+")
    assert window.start_training()  # the unsaved run is discarded (window.ask says yes)
    with qtbot.waitSignal(window.controller.session.finished, timeout=60_000) as blocker:
        pass
    assert blocker.args[0] is None and window.state.phase is Phase.FAILED
    # The held-out curve's failure has reached the plot (and was not reported): its feeder
    # is idle and the plot has taken its failures.
    curve = window.curve
    qtbot.waitUntil(lambda: not curve.feeder.busy and not curve._poll.isActive(), timeout=30_000)
    assert dialogs == ["Training failed"]
    editor = window.editor
    qtbot.waitUntil(lambda: not editor.busy, timeout=30_000)
    assert editor.source is None and editor.spans is None and editor.tokenizer is None
    assert editor.source_label.text() == ""
    assert editor.status.text() == "No tokenizer yet: train one or load one"
    assert window.ids_panel.ids.size == 0
    assert window.ids_panel.ids_text() == ""


def test_an_editor_tokenizer_missing_characters_says_so_and_paints_nothing(qtbot, window):
    """The tokenizer of a run that has just begun with that pattern (bytes only): the core's
    message, not an internal one, and the colours and ids of the tokenizer before go."""
    editor = window.editor
    editor.set_text(TEXT)
    window.picker.pick(preset_key("gpt2"))
    wait_for_spans(qtbot, editor)
    assert window.ids_panel.ids.size > 0
    bad = TokenizerSource(
        "Tokenizer: bytes only (no merges yet)",
        vocab=initial_vocab([EOT]),
        special_tokens=[EOT],
        pattern="x*",
        run_id=10_000,
    )
    editor.set_tokenizer(bad)
    qtbot.waitUntil(lambda: not editor.busy, timeout=30_000)
    status = editor.status.text()
    assert status.startswith(
        "Could not tokenize the text: The pattern 'x*' matches only empty text before 'O'"
    )
    assert "split_back" not in status
    assert editor.spans is None and editor.tokenizer is None
    assert window.ids_panel.ids.size == 0
    # The audit: "could not tokenize with trained on en2m.txt, 999 merges" (a run's
    # tokenizer is described, not named): what happened, then the tokenizer as the header
    # names it alone.
    assert editor.source_label.text() == "could not tokenize · bytes only (no merges yet)"


def test_a_first_train_failing_at_the_corpus_leaves_the_views_as_before(qtbot, window, tmp_path):
    """A training audit: the first Train of a window failed on a byte past what Open reads;
    nothing was on screen before it, yet the vocabulary table showed the failed run's 257
    byte rows, and the compression plot its step 0 ("step 0: held-out 1.00 · editor 1.04
    bytes/token") beside the editor's "No tokenizer yet"."""
    from gui_helpers import bad_after_probe

    from bpe_studio.gui.views.compression_plot import FAILED_HINT

    window.editor.set_text(TEXT)
    dialogs = _dialogs(window)
    assert window.open_corpus(bad_after_probe(tmp_path / "bad.txt"))
    window.panel.workers_spin.setValue(1)
    assert window.start_training()
    with qtbot.waitSignal(window.controller.session.finished, timeout=60_000) as blocker:
        pass
    assert blocker.args[0] is None and window.state.phase is Phase.FAILED
    curve = window.curve
    qtbot.waitUntil(lambda: not curve.feeder.busy and not curve._poll.isActive(), timeout=30_000)
    qtbot.waitUntil(lambda: not window.editor.busy, timeout=30_000)
    qtbot.wait(50)
    assert dialogs == ["Training failed"]
    assert window.vocab_table.model.rowCount() == 0
    assert window.merge_list.model.rowCount() == 0
    assert curve.hint.isVisible() and curve.hint.toPlainText() == FAILED_HINT
    assert curve.value_label.text() == ""
    assert all(line.xData is None or len(line.xData) == 0 for line in curve.lines.values())
    assert window.editor.status.text() == "No tokenizer yet: train one or load one"


def test_a_run_failing_while_it_merges_shows_every_merge_it_made_in_the_editor(
    qtbot, window, monkeypatch
):
    """A run that failed after 600 merges keeps them on screen, and the timeline stands at
    the last; the editor (and Compare, the Report) showed instead the run's tokenizer as last
    rebuilt while merging, paced to every 400 merges and a second: up to 400 merges short,
    at every step past it too ("500 of 700 merges" at step 600)."""
    from reference_encoder import ReferenceEncoder

    from bpe_studio.core.pretokenization.names import pattern_regex
    from bpe_studio.gui.app import DEMO_CORPUS
    from bpe_studio.gui.responsiveness import frame_budget
    from bpe_studio.gui.training import worker as worker_module

    # No rebuild while merging: the one before the failure is the bytes-only tokenizer.
    monkeypatch.setattr(frame_budget, "EDITOR_REFRESH_MERGES", 10**9)
    real = worker_module.trainer_from_file

    def failing_trainer(*args, **kwargs):
        trainer = real(*args, **kwargs)

        class Failing:
            def __getattr__(self, name: str):
                return getattr(trainer, name)

            def __iter__(self):
                for made, step in enumerate(trainer):
                    if made == 600:
                        raise MemoryError("the test's trainer ran out of memory")
                    yield step

        return Failing()

    monkeypatch.setattr(worker_module, "trainer_from_file", failing_trainer)
    _dialogs(window)
    window.editor.set_text(TEXT)
    train_in_window(qtbot, window, DEMO_CORPUS, 256 + 1 + 1000)
    state = window.hub.state
    assert state.phase is Phase.FAILED and state.published == 600 and state.step == 600
    for k in (600, 550):
        window.hub.select_step(k)
        qtbot.waitUntil(lambda: window.editor.source is state.shown, timeout=10_000)
        wait_for_spans(qtbot, window.editor)
        vocab = dict(initial_vocab([EOT]))
        vocab.update((s.new_id, s.left + s.right) for s in state.record[:k])
        merges = [(s.left, s.right) for s in state.record[:k]]
        reference = ReferenceEncoder(vocab, merges, {EOT: 256}, pattern_regex("gpt2"))
        assert [int(i) for i in window.editor.spans.ids] == reference.encode(TEXT), k
