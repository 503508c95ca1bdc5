"""What users (and scripts) do in the wrong order, found by fuzzing the app with random action
sequences: each test failed before its fix. A paused run's corpus cannot be swapped; a run let
go while paused never comes back as the next run's result; a second failed Train does not
claim an earlier tokenizer is shown; a paused run's editor says which step it shows; a
replay at "whole run in N s" keeps that promise while the run still trains; Save refuses
GPT-2 files that would not load back as the tokenizer shown."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from gui_helpers import FIXTURES, bad_after_probe, paused_in_window, save_and_wait

from bpe_studio.core import Tokenizer
from bpe_studio.gui.model.saving import gpt2_problem
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.training.replay import Pace, Replay
from bpe_studio.gui.training.session import live_training_threads

CORPUS = FIXTURES / "tinystories_sample.txt"


def test_opening_a_corpus_leaves_a_paused_run_alone(qtbot, window, tmp_path):
    paused_in_window(qtbot, window, CORPUS, 600, after=20, workers=1)
    merges = list(window.state.record)
    other = tmp_path / "other.txt"
    other.write_text("another corpus entirely " * 50, encoding="utf-8")
    assert window.open_corpus(other) is False
    assert window.state.phase is Phase.PAUSED and list(window.state.record) == merges
    assert window.state.corpus_source.paths == (str(CORPUS),)


def test_a_run_let_go_while_paused_never_becomes_the_next_runs_result(qtbot, qapp, window):
    paused_in_window(qtbot, window, FIXTURES / "code_slice.txt", 900, after=20, workers=1)
    qtbot.waitUntil(lambda: len(window.state.record) == 21)  # the merges' last batch shown
    discarded = [(m.left, m.right) for m in window.state.record]
    window.hub.discard_run()  # what the app does once the user says "discard"
    assert window.open_corpus(FIXTURES / "mixed_web_slice.txt")
    window.panel.vocab_spin.setValue(300)
    assert window.start_training()
    # The run let go ends (its thread gone); the new one pre-tokenizes or merges meanwhile.
    qtbot.waitUntil(lambda: live_training_threads() <= 1, timeout=30_000)
    qapp.processEvents()  # whatever the run let go had queued is delivered

    def own_result() -> bool:
        state = window.state
        made = [(m.left, m.right) for m in state.record]
        return state.result is None or list(state.result.merges) == made != discarded

    assert own_result()  # before: the run let go ended the new one, with its own 21 merges
    window.stop_training()
    qtbot.waitUntil(lambda: not window.state.phase.training, timeout=60_000)
    qtbot.waitUntil(lambda: live_training_threads() == 0, timeout=30_000)
    qapp.processEvents()  # anything either run had queued is delivered
    assert window.state.result is not None and own_result()


def test_a_second_failed_train_does_not_claim_a_tokenizer_is_shown(qtbot, window, tmp_path):
    bad = bad_after_probe(tmp_path / "latin1.txt", "caf\xe9 na\xefve ".encode("latin-1") * 500)
    messages: list[str] = []
    window.controller.error.connect(lambda title, message: messages.append(message))
    assert window.open_corpus(bad)
    window.panel.workers_spin.setValue(1)
    for _ in range(2):
        assert window.start_training()
        qtbot.waitUntil(lambda: window.state.phase is Phase.FAILED, timeout=30_000)
        qtbot.waitUntil(lambda: len(messages) > 0, timeout=10_000)
        assert "not valid UTF-8" in messages[-1]
        assert "still shown" not in messages[-1]
        messages.clear()


def test_a_paused_run_moved_back_says_which_step_the_editor_shows(qtbot, window):
    paused_in_window(qtbot, window, CORPUS, 600, after=29, workers=1)
    window.timeline.select_step(5)
    # First the 30-merge tokenizer cut to step 5, then "tokenizing… · ..." while the
    # controller's rebuild at step 5 runs: the label it ends with is the one that matters
    # (before the fix it ended "training, 5 merges so far", and this wait timed out).
    label = window.editor.source_label
    expected = "5 of 30 merges, paused at merge 30"
    qtbot.waitUntil(lambda: label.text().endswith(expected), timeout=30_000)


class _Hub:
    """What a replay reads and calls of the app model, for a run that goes on training."""

    def __init__(self, published: int) -> None:
        self.published = published
        self.state = SimpleNamespace(step=0, replaying=False)
        # The signals a replay listens to, none sent here.
        for signal in ("reset", "step_changed", "live_changed", "replay_pause_asked"):
            setattr(self, signal, SimpleNamespace(connect=lambda slot: None))

    def select_step(self, k: int) -> None:
        self.state.step = k

    def set_replaying(self, on: bool, paused: bool = False) -> None:
        self.state.replaying = on

    def follow_live(self) -> None:
        self.state.step = self.published


def test_a_whole_run_pace_follows_a_run_that_still_trains(qtbot):
    hub = _Hub(published=100)
    replay = Replay(hub)  # type: ignore[arg-type]
    replay.start(Pace(whole_run_seconds=20))
    replay.pause()
    hub.published = 1000  # the run trained on meanwhile
    replay._last -= 1.0  # a frame one second after the last
    replay._tick()
    # 1,000 merges in 20 s is 50 a second (at the first 100 merges' pace it was 5); a
    # slow machine may add a few hundredths of a second to the frame.
    assert 50 <= hub.state.step < 60


def test_save_refuses_gpt2_files_that_would_not_load_back(qtbot, window, tmp_path):
    window.panel.pattern_choice.set_pattern("cl100k")
    paused_in_window(qtbot, window, CORPUS, 400, after=10, workers=1)
    window.stop_training()
    qtbot.waitUntil(lambda: window.state.phase is Phase.STOPPED, timeout=30_000)
    messages: list[tuple[str, str]] = []
    window.controller.error.connect(lambda title, message: messages.append((title, message)))
    assert not save_and_wait(qtbot, window, tmp_path / "gpt2", "gpt2")
    assert not (tmp_path / "gpt2").exists()
    assert messages[-1][0] == "Cannot save as GPT-2 files"
    assert "they hold no pattern (this tokenizer splits text with cl100k)" in messages[-1][1]
    assert save_and_wait(qtbot, window, tmp_path / "hf", "hf")  # which holds the pattern
    data = window.controller.saveable_data()
    assert data is not None
    unusual = replace(data, pattern="gpt2", special_tokens={"my special": 256})
    problem = gpt2_problem(unusual)
    assert problem is not None and not problem.only_way
    assert "'my special' would not be taken for one" in problem.message
    assert "tokenizer.json or tiktoken files" in problem.message
    assert gpt2_problem(replace(data, pattern="gpt2")) is None
    # A tokenizer.json's added token that is not special: tiktoken files refuse it too, so
    # the advice names tokenizer.json alone (found by an audit).
    vocab = dict(data.vocab) | {len(data.vocab): b"<think>"}
    added = replace(data, pattern="gpt2", vocab=vocab, added_tokens={"<think>": len(data.vocab)})
    problem = gpt2_problem(added)
    assert problem is not None and "no added token that is not special" in problem.message
    assert "tiktoken" not in problem.message.split("Save it as")[1].split("(")[0]
    # The review: naming on loading cannot undo an ordinary '<y>' taken for a special token.
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"<x", 257: b"<x>", 258: b"<y>"}
    both = Tokenizer(vocab, [(b"<", b"x"), (b"<x", b">")], ["<x>"]).to_data()
    problem = gpt2_problem(both)
    assert problem is not None and problem.only_way
    assert problem.message.endswith("Loaded back, they give other ids whatever is named.")


def test_save_names_a_special_token_gpt2_files_hold_under_another_spelling():
    """The conversions audit: vocab.json holds '<|中文|>' as '<|ä¸Ńæĸĩ|>', which other GPT-2
    readers (tokenizers) do not find by its text; Save said nothing of it."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: "<|中文|>".encode()}
    problem = gpt2_problem(Tokenizer(vocab, [(b"a", b"b")], ["<|中文|>"]).to_data())
    assert problem is not None and not problem.only_way
    assert "special token '<|中文|>' under its byte-level spelling" in problem.message
    assert problem.message.endswith("Save it as tokenizer.json or tiktoken files, which hold both.")


def test_a_run_no_other_format_holds_can_still_be_saved_as_gpt2_files(qtbot, window, tmp_path):
    """The review of this stop: a run trained with a pattern neither tokenizer.json nor
    tiktoken can say (\\X) could not be saved at all: GPT-2 files were refused, pointing
    to formats that refused it too. They are offered now, with what they lose said."""
    window.panel.pattern_choice.set_pattern(r"\X+|\s+")
    paused_in_window(qtbot, window, CORPUS, 400, after=10, workers=1)
    window.stop_training()
    qtbot.waitUntil(lambda: window.state.phase is Phase.STOPPED, timeout=30_000)
    data = window.controller.saveable_data()
    assert data is not None
    problem = gpt2_problem(data)
    assert problem is not None and problem.only_way
    assert "Save GPT-2 files anyway?" in problem.message
    asked: list[str] = []
    window.controller.confirm = lambda title, question: asked.append(title) or False
    assert not save_and_wait(qtbot, window, tmp_path / "no", "gpt2")
    assert asked == ["Save as GPT-2 files?"] and not (tmp_path / "no").exists()
    window.controller.confirm = lambda title, question: True
    assert save_and_wait(qtbot, window, tmp_path / "gpt2", "gpt2")
    back = Tokenizer.from_files(
        tmp_path / "gpt2" / "vocab.json",
        tmp_path / "gpt2" / "merges.txt",
        list(data.special_tokens),
        pattern=r"\X+|\s+",
    )
    assert back.merges == list(data.merges)


def test_a_pattern_tokenizer_json_would_drop_text_for_is_asked_about(qtbot, window, tmp_path):
    """An audit: a run trained with a pattern that leaves text unmatched refuses that text;
    the tokenizer.json saved for it drops it, as tokenizers does. Saving as such asks."""
    # Every character of the corpus, no Han one.
    window.panel.pattern_choice.set_pattern(r"\P{Han}+")
    paused_in_window(qtbot, window, CORPUS, 300, after=10, workers=1)
    window.stop_training()
    qtbot.waitUntil(lambda: window.state.phase is Phase.STOPPED, timeout=30_000)
    asked: list[tuple[str, str]] = []
    window.controller.confirm = lambda title, question: asked.append((title, question)) or False
    assert not save_and_wait(qtbot, window, tmp_path / "no", "hf")
    ((title, question),) = asked
    assert title == "Save as tokenizer.json?" and "leaves text such as '中' unmatched" in question
    assert not (tmp_path / "no").exists()
    assert save_and_wait(qtbot, window, tmp_path / "tt", "tiktoken") and len(asked) == 1
    window.controller.confirm = lambda title, question: True
    assert save_and_wait(qtbot, window, tmp_path / "hf", "hf")
    assert "drops text such as '中'" in Tokenizer.load(tmp_path / "hf" / "tokenizer.json").notes[0]


def test_what_tiktoken_files_lose_of_a_loaded_file_is_asked_about(qtbot, window, tmp_path):
    """An audit: Save as tiktoken of a Llama 3-shaped tokenizer.json dropped its template
    ('<|begin_of_text|> $A') with no question, where the library's save warns of it: loaded
    back, add_special_tokens=True added nothing. Cancel writes nothing."""
    import tokenizers
    from foreign_files import llama3_style

    path = llama3_style(tmp_path / "llama", full=True)
    oracle = tokenizers.Tokenizer.from_file(str(path))
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        assert window.load_tokenizer(path)
    assert blocker.args == [True], window.last_error
    asked: list[tuple[str, str]] = []
    window.ask = lambda title, question: asked.append((title, question)) or False
    assert not save_and_wait(qtbot, window, tmp_path / "no", "tiktoken")
    ((title, question),) = asked
    assert title == "Save as tiktoken files?"
    assert "hold no post-processor template ('<|begin_of_text|> $A')" in question
    assert not (tmp_path / "no").exists()
    assert save_and_wait(qtbot, window, tmp_path / "hf", "hf") and len(asked) == 1  # it holds it
    hf = Tokenizer.load(tmp_path / "hf" / "tokenizer.json")
    assert hf.encode("Hi", add_special_tokens=True) == oracle.encode("Hi").ids
    window.ask = lambda title, question: True
    assert save_and_wait(qtbot, window, tmp_path / "tt", "tiktoken")
    saved = Tokenizer.load(tmp_path / "tt" / "tokenizer.tiktoken")
    plain = oracle.encode("Hi", add_special_tokens=False).ids
    assert saved.encode("Hi", add_special_tokens=True) == plain  # what the question said


def test_saving_beside_another_tokenizer_asks_first(qtbot, window, tmp_path):
    """A session audit: run A saved as tokenizer.json, run B then saved as GPT-2 files and as
    tiktoken files into the same folder, with no question: the folder then held three
    tokenizers, and `encode --tokenizer DIR` and Tokenizer.load refused it as ambiguous.
    Saving beside another tokenizer now asks, naming it; No writes nothing; files of the
    same format are the "Replace files?" question's, not this one's."""
    from bpe_studio.core.formats.files import tokenizers_in

    paused_in_window(qtbot, window, CORPUS, 300, after=10, workers=1)
    window.stop_training()
    qtbot.waitUntil(lambda: window.state.phase is Phase.STOPPED, timeout=30_000)
    folder = tmp_path / "run"
    asked: list[tuple[str, str]] = []

    def answer(yes: bool):
        return lambda title, question: asked.append((title, question)) or yes

    window.controller.confirm = answer(True)
    assert save_and_wait(qtbot, window, folder, "hf") and asked == []
    window.controller.confirm = answer(False)
    assert not save_and_wait(qtbot, window, folder, "gpt2")
    ((title, question),) = asked
    assert title == "Save beside another tokenizer?"
    assert "(tokenizer.json)" in question and str(folder) in question
    assert sorted(p.name for p in folder.iterdir()) == ["tokenizer.json"]
    asked.clear()
    window.controller.confirm = answer(True)
    assert save_and_wait(qtbot, window, folder, "gpt2")
    assert [t for t, _ in asked] == ["Save beside another tokenizer?"]
    assert sorted(p.name for p in tokenizers_in(folder)) == ["tokenizer.json", "vocab.json"]
    asked.clear()
    window.controller.confirm = answer(False)
    assert not save_and_wait(qtbot, window, folder, "gpt2")  # the same format: replacing is asked
    assert [t for t, _ in asked] == ["Replace files?"]
