"""The hub's step: clamping, live mode and its signal, the replay flag, ``Pace``; and the
curve feeder's thread on its own (no window)."""

from __future__ import annotations

import pytest
from gui_helpers import EOT

from bpe_studio.core import Tokenizer, iter_merges, train_bpe
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.curve_server import TextSpec, read_slice
from bpe_studio.gui.model.curves import CurveFeeder, live_curve_threads
from bpe_studio.gui.model.state import RunSettings
from bpe_studio.gui.training.replay import Pace

TEXT = "the cat sat on the mat, the cat ate the rat.\n" * 8 + EOT + "\n that hat\n"


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def test_select_step_clamps_and_leaves_live(qtbot, corpus):
    hub = AppModel()
    hub.begin_run(RunSettings(280, (EOT,)), {})
    hub.append_merges(list(iter_merges(corpus, 280, [EOT])))
    hub.publish()
    n = hub.published
    assert n > 5 and hub.state.step == n and hub.state.live
    live: list[bool] = []
    steps: list[int] = []
    hub.live_changed.connect(lambda value: live.append(value))
    hub.step_changed.connect(lambda value: steps.append(value))
    hub.select_step(3)
    hub.select_step(3)  # no change: no signal
    hub.step_by(-10)
    hub.select_step(n + 50)
    assert steps == [3, 0, n] and live == [False]
    hub.follow_live()
    hub.follow_live()
    assert live == [False, True] and hub.state.live


def test_replaying_flag_signals_changes_only(qtbot):
    hub = AppModel()
    seen: list[bool] = []
    hub.replay_changed.connect(lambda value: seen.append(value))
    hub.set_replaying(True)
    hub.set_replaying(True)
    hub.set_replaying(False)
    assert seen == [True, False] and not hub.state.replaying


def test_pace():
    assert Pace(per_second=50).rate(10_000) == 50
    assert Pace(whole_run_seconds=20).rate(10_000) == 500
    for bad in ({}, {"per_second": 1, "whole_run_seconds": 1}, {"per_second": 0}):
        with pytest.raises(ValueError):
            Pace(**bad)


def test_feeder_in_batches_equals_the_truncated_tokenizer(qtbot, corpus, tmp_path):
    steps = list(iter_merges(corpus, 290, [EOT]))
    vocab, merges = train_bpe(corpus, 290, [EOT])
    tok = Tokenizer(vocab, merges, [EOT])
    held = "the rat sat on a hat; that cat"
    (tmp_path / "a.txt").write_text(held, encoding="utf-8")
    feeder = CurveFeeder()
    try:
        feeder.begin({"a": TextSpec(tmp_path / "a.txt")}, [EOT], "gpt2", steps[:5])
        feeder.feed(steps[5:11])
        feeder.feed(steps[11:])
        qtbot.waitUntil(lambda: not feeder.busy)
        counts = feeder.series["a"].tokens
        assert list(counts) == [len(tok.truncated(k).encode(held)) for k in range(len(steps) + 1)]
        # A new begin drops the old curves; a failing reader is reported, not raised.
        feeder.begin({"b": TextSpec(tmp_path / "nowhere.txt")})
        qtbot.waitUntil(lambda: not feeder.busy)
        assert feeder.series == {}
        assert "nowhere.txt" in feeder.take_failures()[0]
    finally:
        feeder.shutdown()
    assert live_curve_threads() == 0


def test_read_slice_cuts_at_a_line_or_a_whole_character(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"ab\ncd\n" + "é".encode() * 10)
    assert read_slice(path, 7) == "ab\ncd\n"
    path.write_bytes("é".encode() * 10)
    assert read_slice(path, 7) == "ééé"  # 6 bytes: the 4th character was cut in half
    path.write_bytes(b"ok\xff\n")
    with pytest.raises(ValueError, match="t.txt: not valid UTF-8 at byte offset 2 .*, line 1"):
        read_slice(path, 100)
    path.write_bytes(b"ok " + "é".encode()[:1])  # whole file, not cut: a bad end is bad
    with pytest.raises(ValueError, match="not valid UTF-8 at byte offset 3"):
        read_slice(path, 100)


def test_a_killed_curve_process_is_told_in_words_and_the_next_begin_starts_anew(
    qtbot, corpus, tmp_path
):
    steps = list(iter_merges(corpus, 290, [EOT]))
    (tmp_path / "a.txt").write_text("the rat sat on a hat", encoding="utf-8")
    texts = {"a": TextSpec(tmp_path / "a.txt")}
    feeder = CurveFeeder()
    try:
        feeder.begin(texts, [EOT], "gpt2", steps[:5])
        qtbot.waitUntil(lambda: not feeder.busy)
        first = feeder._process
        first.kill()  # as the out-of-memory killer ends it
        first.join()
        feeder.feed(steps[5:11])
        feeder.feed(steps[11:])
        qtbot.waitUntil(lambda: not feeder.busy)
        failures = feeder.take_failures()
        assert len(failures) == 1  # once, not once per command the dead process missed
        assert "ended abruptly (killed, or out of memory)" in failures[0]
        assert "starts it anew" in failures[0] and "Broken pipe" not in failures[0]
        feeder.begin(texts, [EOT], "gpt2", steps)
        qtbot.waitUntil(lambda: not feeder.busy)
        assert feeder._process is not first and feeder.take_failures() == []
        assert len(feeder.series["a"].tokens) == len(steps) + 1
    finally:
        feeder.shutdown()
    assert live_curve_threads() == 0
