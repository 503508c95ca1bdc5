"""The timeline bar, the replay and the compression curve, driven through the main window.

The curve's counts are checked against the core tokenizer truncated to each step, encoding the
same text here (``Tokenizer.truncated(k).encode``), not against the curve's own code.
"""

from __future__ import annotations

import html

import pytest
from gui_helpers import EOT, FIXTURES, bad_after_probe, paused_in_window, train_in_window
from PySide6.QtCore import Qt

from bpe_studio.core import Tokenizer
from bpe_studio.gui.model.curve_server import read_text
from bpe_studio.gui.model.curves import HELD_OUT, IN_SAMPLE, live_curve_threads
from bpe_studio.gui.training.replay import Pace
from bpe_studio.gui.views.picker import RUN
from bpe_studio.gui.views.timeline import describe_step

CORPUS = FIXTURES / "tinystories_slice.txt"
VOCAB = 700
FAST = Pace(per_second=2_000)  # a replay of ~440 merges in a few dozen frames
SLOW = Pace(per_second=1)


@pytest.fixture
def trained_window_and_result(qtbot, window):
    result = train_in_window(qtbot, window, CORPUS, VOCAB)
    assert result is not None and not result.stopped
    return window, result


def heldout_file(tmp_path):
    """Real text: English, Chinese and emoji from the fixtures, a special token in between."""
    english = (FIXTURES / "english_books_slice.txt").read_text(encoding="utf-8")[:6000]
    chinese = (FIXTURES / "chinese_slice.txt").read_text(encoding="utf-8")[:800]
    path = tmp_path / "heldout.txt"
    path.write_text(f"{english}\n{EOT}\n{chinese} 😀😊 café\n", encoding="utf-8")
    return path


def wait_curves(qtbot, window):
    qtbot.waitUntil(lambda: not window.curve.feeder.busy, timeout=60_000)
    qtbot.waitUntil(lambda: window.curve.feeder.version == window.curve._drawn, timeout=10_000)


def test_slider_spin_buttons_and_keys_drive_the_step(qtbot, trained_window_and_result):
    window, result = trained_window_and_result
    bar, state = window.timeline, window.state
    n = len(result.merges)
    assert state.published == n and state.step == n and state.live
    assert bar.slider.maximum() == n and bar.slider.value() == n
    assert bar.live_button.isChecked()

    bar.slider.setValue(120)  # as a drag does
    assert state.step == 120 and not state.live
    assert not bar.live_button.isChecked() and bar.spin.value() == 120
    row = state.record[119]
    assert bar.label.text() == describe_step(120, n, row)
    assert f"step 120 of {n:,}: last merge, rank 119:" in bar.label.text()  # row 119

    bar.spin.setValue(7)
    assert state.step == 7 and bar.slider.value() == 7
    qtbot.mouseClick(bar.back_button, Qt.MouseButton.LeftButton)
    assert state.step == 6
    qtbot.mouseClick(bar.forward_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(bar.forward_button, Qt.MouseButton.LeftButton)
    assert state.step == 8
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert state.step == 7
    qtbot.keyClick(
        window,
        Qt.Key.Key_Right,
        Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert state.step == 107
    # Alt+Page Up/Down do the same (a session audit: openbox's window manager takes
    # Alt+Shift+arrows, so they never reached the app there).
    qtbot.keyClick(window, Qt.Key.Key_PageUp, Qt.KeyboardModifier.AltModifier)
    assert state.step == 7
    qtbot.keyClick(window, Qt.Key.Key_PageDown, Qt.KeyboardModifier.AltModifier)
    assert state.step == 107
    bar.slider.setValue(0)
    assert state.step == 0 and "bytes only" in bar.label.text()
    assert not bar.back_button.isEnabled()

    # Live returns to the newest merge.
    qtbot.mouseClick(bar.live_button, Qt.MouseButton.LeftButton)
    assert state.live and state.step == n and bar.slider.value() == n


def test_the_timeline_keys_act_from_every_tab_and_type_nothing(qtbot, trained_window_and_result):
    """A real-display audit: on Compare, Report and the Vocabulary lab, Alt+P (Replay, as the
    Run menu shows) and the timeline's other keys did nothing: Qt turns off the shortcuts of
    a hidden widget, and the key went to the focused one instead, typing "p" into Compare's
    text or picking another tokenizer in a list. They are the window's now."""
    window, result = trained_window_and_result
    bar, state = window.timeline, window.state
    window.show()
    window.activateWindow()
    window.tabs.setCurrentWidget(window.compare)
    box = window.compare.input
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    before = box.text()
    bar.slider.setValue(40)
    qtbot.keyClick(box, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert state.step == 39
    qtbot.keyClick(box, Qt.Key.Key_P, Qt.KeyboardModifier.AltModifier)
    assert bar.replay.running and state.replaying
    qtbot.keyClick(box, Qt.Key.Key_P, Qt.KeyboardModifier.AltModifier)
    assert not bar.replay.running and state.replay_paused
    qtbot.keyClick(box, Qt.Key.Key_L, Qt.KeyboardModifier.AltModifier)
    assert state.live and state.step == len(result.merges)
    assert box.text() == before  # nothing typed
    combo = window.compare.choices[0]
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus)
    chosen = combo.currentIndex()
    qtbot.keyClick(combo, Qt.Key.Key_P, Qt.KeyboardModifier.AltModifier)
    assert bar.replay.running and combo.currentIndex() == chosen
    bar.replay.pause()
    # The Run menu's entry says what choosing it does now, as the button does.
    menu = window.menus.run_menu
    entry = next(a for a in menu.actions() if a.text().endswith("\tAlt+P"))
    menu.aboutToShow.emit()
    assert entry.text() == "Resume the &replay\tAlt+P" and bar.replay_button.text() == "Resume"
    bar.replay.start(SLOW)
    menu.aboutToShow.emit()
    assert entry.text() == "Pause the &replay\tAlt+P"
    entry.trigger()
    assert not bar.replay.running
    # Named again as the replay ends, the menu open or not (a real-display audit: left open
    # through the replay's end, it still read "Pause the replay", and choosing it replayed).
    bar.replay.start(FAST)
    assert entry.text() == "Pause the &replay\tAlt+P"
    qtbot.waitUntil(lambda: not state.replaying, timeout=30_000)
    assert entry.text() == "&Replay\tAlt+P" and bar.replay_button.text() == "Replay"


def test_the_run_menu_lists_the_timeline_keys_and_moves_the_step(qtbot, trained_window_and_result):
    """A keyboard audit: Alt+Left/Right, Alt+Shift+Left/Right and Alt+L were only in Help's
    list. Run > Timeline names each with its keys, moves the step as the keys do, and an entry
    is off where its button is (back at step 0, forward at the newest merge); the keys still
    work (listed, not taken twice: Qt drops a key two owners claim)."""
    window, result = trained_window_and_result
    n, state, bar = len(result.merges), window.state, window.timeline
    menu = window.menus.timeline_menu
    entries = {a.text().split("\t")[1]: a for a in menu.actions()}
    assert list(entries) == ["Alt+Left", "Alt+Right", "Alt+Shift+Left", "Alt+Shift+Right", "Alt+L"]
    assert entries["Alt+Left"].text() == "One merge back\tAlt+Left"
    assert entries["Alt+L"].text() == "Follow the newest merge (Live)\tAlt+L"
    assert all(not a.shortcut().toString() for a in entries.values())
    assert entries["Alt+Left"].isEnabled() and not entries["Alt+Right"].isEnabled()
    entries["Alt+Shift+Left"].trigger()
    assert state.step == n - 100 and not state.live
    entries["Alt+Left"].trigger()
    assert state.step == n - 101 and entries["Alt+Right"].isEnabled()
    entries["Alt+Shift+Right"].trigger()
    assert state.step == n - 1
    entries["Alt+Right"].trigger()
    assert state.step == n and not entries["Alt+Shift+Right"].isEnabled()
    bar.select_step(0)
    assert not entries["Alt+Left"].isEnabled() and not entries["Alt+Shift+Left"].isEnabled()
    entries["Alt+L"].trigger()
    assert state.live and state.step == n
    qtbot.keyClick(window, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert state.step == n - 1  # the key itself still answers


def test_replay_reaches_the_end_through_every_frame(qtbot, trained_window_and_result):
    window, result = trained_window_and_result
    bar, state = window.timeline, window.state
    n = len(result.merges)
    seen: list[int] = []
    window.hub.step_changed.connect(lambda value: seen.append(value))
    bar.pace_combo.setCurrentIndex(bar.pace_combo.count() - 1)
    bar.replay.start(FAST)
    assert state.replaying and bar.skip_button.isEnabled() and bar.replay_button.text() == "Pause"
    qtbot.waitUntil(lambda: not state.replaying, timeout=30_000)
    assert state.step == n and state.live
    assert seen[0] == 0 and seen[-1] == n
    assert seen == sorted(seen) and len(seen) > 2  # forward only, several frames
    assert bar.replay_button.text() == "Replay" and not bar.skip_button.isEnabled()


def test_replay_pauses_resumes_and_skips(qtbot, trained_window_and_result):
    window, result = trained_window_and_result
    bar, state = window.timeline, window.state
    n = len(result.merges)
    bar.replay.start(SLOW)
    assert state.step == 0 and bar.replay.running
    qtbot.mouseClick(bar.replay_button, Qt.MouseButton.LeftButton)  # Pause
    assert not bar.replay.running and state.replaying and bar.replay_button.text() == "Resume"
    bar.slider.setValue(50)  # scrubbing while paused: resume goes on from there
    # Paused, the status line and the timeline say so (not "Pause (Alt+P) stops it").
    status = window.panel.status.text()
    assert status.startswith(f"Replay paused at step 50 of {n:,}") and "Resume" in status
    assert bar.label.text().startswith("Replay paused: step 50")
    qtbot.mouseClick(bar.replay_button, Qt.MouseButton.LeftButton)
    assert bar.replay.running and state.step == 50
    assert window.panel.status.text().startswith("Replaying the run: step 50")
    assert bar.label.text().startswith("Replaying: step 50")
    qtbot.mouseClick(bar.skip_button, Qt.MouseButton.LeftButton)
    assert state.step == n and state.live and not state.replaying and not bar.replay.running


def test_a_step_chosen_outside_the_timeline_pauses_the_replay_there(
    qtbot, trained_window_and_result
):
    """An audit: Enter on a merge and the lab's own step slider moved the step during a
    replay, whose next frame put it back where the replay had got to (the timeline's own
    controls paused it)."""
    window, result = trained_window_and_result
    bar, state, merges, lab = window.timeline, window.state, window.merge_list, window.lab
    window.tabs.setCurrentWidget(lab)
    lab.picker.pick(RUN)  # its step slider is the run's timeline
    qtbot.waitUntil(lab.step_row.isVisible, timeout=10_000)
    bar.replay.start(SLOW)
    merges.table.activated.emit(merges.model.index(99, 0))  # Enter on merge 100
    assert state.step == 100 and not bar.replay.running and state.replay_paused
    qtbot.mouseClick(bar.replay_button, Qt.MouseButton.LeftButton)  # Resume: from there
    assert bar.replay.running and state.step == 100
    lab.step_slider.setValue(200)
    assert state.step == 200 and not bar.replay.running and state.replay_paused
    # Its own frames go on when resumed, to the end.
    bar.replay.set_pace(FAST)
    qtbot.mouseClick(bar.replay_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not state.replaying, timeout=30_000)
    assert state.step == len(result.merges) and state.live


def test_a_merge_picked_during_a_replay_pauses_it_and_stays_picked(
    qtbot, trained_window_and_result
):
    """On a real display: a merge clicked while a replay played was deselected by its next
    frame (the step's row is selected and scrolled to), so Enter then moved the timeline to
    the replay's own step, not the merge clicked."""
    window, _ = trained_window_and_result
    bar, state, merges = window.timeline, window.state, window.merge_list
    bar.replay.set_pace(SLOW)
    bar.replay.start()
    bar.select_step(5)  # paused at 5 by the timeline; resumed:
    qtbot.mouseClick(bar.replay_button, Qt.MouseButton.LeftButton)
    assert bar.replay.running and merges.selected_rank() == 4
    table = merges.table
    rect = table.visualRect(merges.model.index(6, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert not bar.replay.running and state.replay_paused and state.step == 5
    assert merges.selected_rank() == 6
    qtbot.keyClick(table, Qt.Key.Key_Down)  # keys move the pick, the step stays
    assert merges.selected_rank() == 7 and state.step == 5
    qtbot.keyClick(table, Qt.Key.Key_Return)
    assert state.step == 8 and merges.selected_rank() == 7


def test_live_chosen_in_the_lab_ends_a_replay_as_the_timelines_live_does(qtbot, window):
    """The review of the fix above: the lab's Live button, pressed while a replay of a run
    still training played, paused the replay (a step chosen elsewhere) while the step
    followed live: "Replay paused · step 201 of 201" over merges arriving."""
    paused_in_window(qtbot, window, CORPUS, VOCAB, 199)
    bar, state, lab = window.timeline, window.state, window.lab
    window.tabs.setCurrentWidget(lab)
    lab.picker.pick(RUN)
    bar.replay.start(SLOW)
    qtbot.waitUntil(lab.live_button.isEnabled, timeout=10_000)
    lab.live_button.click()
    assert state.live and not state.replaying and not bar.replay.running
    assert state.step == state.published == 200
    assert bar.replay_button.text() == "Replay" and not bar.skip_button.isEnabled()


def test_the_merge_list_selects_the_step_after_a_skip_or_a_jump(qtbot, trained_window_and_result):
    # Issue 23, item 8: the list's selected row is the timeline's step, wherever it jumps.
    window, result = trained_window_and_result
    bar, state, merges = window.timeline, window.state, window.merge_list
    n = len(result.merges)
    bar.replay.start(SLOW)
    bar.slider.setValue(50)  # scrubbing: merge 50 (row 49) is selected
    assert merges.selected_rank() == 49
    qtbot.mouseClick(bar.skip_button, Qt.MouseButton.LeftButton)
    assert state.step == n and state.live
    assert merges.selected_rank() == n - 1  # the last merge, not row 49
    bar.select_step(10)
    assert merges.selected_rank() == 9
    qtbot.mouseClick(bar.live_button, Qt.MouseButton.LeftButton)  # Live: another jump
    assert state.live and merges.selected_rank() == n - 1
    # A row the user picks stays picked when the step jumps back to live.
    bar.select_step(10)
    merges.select_rank(3)
    qtbot.mouseClick(bar.live_button, Qt.MouseButton.LeftButton)
    assert merges.selected_rank() == 3


def test_the_merge_list_selects_the_last_merge_of_a_finished_or_loaded_tokenizer(qtbot, window):
    # A real-display audit: neither a run that ended live, nor a tokenizer loaded with as
    # many merges as the one before (no step change), had the step's row selected.
    merges = window.merge_list
    result = train_in_window(qtbot, window, CORPUS, VOCAB)
    assert window.state.live and merges.selected_rank() == len(result.merges) - 1
    for _ in range(2):
        with qtbot.waitSignal(window.controller.load_finished, timeout=60_000):
            window.load_tokenizer(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
        qtbot.waitUntil(lambda: merges.selected_rank() == 49_999, timeout=10_000)
        assert window.state.step == 50_000


def test_closing_during_replay_leaves_nothing_running(qtbot, trained_window_and_result):
    window, _ = trained_window_and_result
    window.timeline.replay.start(SLOW)
    assert window.timeline.replay.running and live_curve_threads() == 1
    window.close()
    assert not window.timeline.replay.running
    assert not window.curve._poll.isActive()
    assert live_curve_threads() == 0


def test_curve_counts_equal_the_truncated_tokenizer(qtbot, window, tmp_path):
    heldout = heldout_file(tmp_path)
    window.curve.open_heldout(heldout)  # before training: the run measures it from the start
    result = train_in_window(qtbot, window, CORPUS, VOCAB)
    wait_curves(qtbot, window)
    tok = Tokenizer(result.vocab, result.merges, [EOT])
    n = len(result.merges)
    series = window.curve.feeder.series
    held, sample = series[HELD_OUT], series[IN_SAMPLE]
    text = heldout.read_text(encoding="utf-8")
    corpus = CORPUS.read_text(encoding="utf-8")  # under 1 MB: the in-sample slice is all of it
    assert held.bytes == len(text.encode()) and sample.bytes == len(corpus.encode())
    assert len(held.tokens) == len(sample.tokens) == n + 1
    for k in (0, 1, 37, 250, n):
        expected = len(tok.truncated(k).encode(text))
        assert held.tokens[k] == expected, k
        assert window.curve.value_at(HELD_OUT, k) == pytest.approx(held.bytes / expected)
    for k in (0, 180, n):
        assert sample.tokens[k] == len(tok.truncated(k).encode(corpus)), k
    # The cursor and the values at the timeline's step.
    window.timeline.select_step(250)
    assert window.curve.cursor.value() == 250
    label = window.curve.value_label.text()
    assert label.startswith("step 250") and f"held-out {held.bytes / held.tokens[250]:.2f}" in label
    # Another held-out text, after the run: computed over all its merges.
    other = tmp_path / "other.txt"
    other.write_text(corpus[:3000], encoding="utf-8")
    window.curve.open_heldout(other)
    qtbot.waitUntil(lambda: window.curve.feeder.series[HELD_OUT].source == "other.txt")
    wait_curves(qtbot, window)
    again = window.curve.feeder.series[HELD_OUT]
    assert len(again.tokens) == n + 1
    assert again.tokens[n] == len(tok.encode(corpus[:3000]))


def test_a_compressed_corpus_has_its_in_sample_curve(qtbot, window, tmp_path):
    """An audit: a .txt.gz corpus had no in-sample curve (only a plain file's start was
    read); it is measured on its decompressed text."""
    import gzip

    corpus = CORPUS.read_text(encoding="utf-8")[:20_000]
    packed = tmp_path / "slice.txt.gz"
    packed.write_bytes(gzip.compress(corpus.encode("utf-8")))
    result = train_in_window(qtbot, window, packed, 300)
    wait_curves(qtbot, window)
    sample = window.curve.feeder.series[IN_SAMPLE]
    tok = Tokenizer(result.vocab, result.merges, [EOT])
    assert sample.source == "slice.txt.gz" and sample.bytes == len(corpus.encode())
    n = len(result.merges)
    for k in (0, n // 2, n):
        assert sample.tokens[k] == len(tok.truncated(k).encode(corpus)), k


def test_a_corpus_gone_after_its_run_is_said_when_its_curve_is_measured_again(
    qtbot, window, tmp_path
):
    """An audit (wrong order): the corpus deleted after training, then Record off and on:
    the in-sample curve was dropped with no word (its failures were left for the run to say,
    which had read the corpus long before)."""
    corpus = tmp_path / "c.txt"
    corpus.write_bytes((FIXTURES / "tinystories_sample.txt").read_bytes())
    train_in_window(qtbot, window, corpus, 300)
    wait_curves(qtbot, window)
    assert IN_SAMPLE in window.curve.feeder.series
    corpus.unlink()
    window.last_error = None
    window.curve.record_box.setChecked(False)
    window.curve.record_box.setChecked(True)
    qtbot.waitUntil(lambda: window.last_error is not None, timeout=30_000)
    assert str(corpus) in window.last_error and "not found" in window.last_error


def test_bad_heldout_file_is_reported(qtbot, window, tmp_path):
    train_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 300)
    wait_curves(qtbot, window)
    before = window.curve.feeder.series[HELD_OUT]
    missing = tmp_path / "missing.txt"
    window.curve.open_heldout(missing)
    qtbot.waitUntil(lambda: window.last_error is not None, timeout=10_000)
    assert str(missing) in window.last_error
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    window.last_error = None
    window.curve.open_heldout(bad)
    qtbot.waitUntil(lambda: window.last_error is not None, timeout=10_000)
    assert str(bad) in window.last_error and "UTF-8" in window.last_error
    assert window.curve.feeder.series[HELD_OUT] is before  # the last good curve stays


def test_bad_heldout_file_is_reported_before_any_run(qtbot, window, tmp_path):
    # Found by fuzzing the app: with no run on screen a bad file was accepted silently (the
    # dialog came at the next Train), and an empty one drew a held-out curve flat at 0.
    before = window.hub.heldout
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    for path, reason in [(tmp_path / "missing.txt", "No such file"), (empty, "empty"),
                         (latin1, "not valid UTF-8 at byte offset 3")]:  # fmt: skip
        window.last_error = None
        assert window.curve.open_heldout(path) is False
        assert window.last_error is not None
        assert str(path) in window.last_error and reason in window.last_error
        assert window.hub.heldout == before


def test_a_heldout_file_bad_past_its_start_gives_way_to_the_one_before(qtbot, window, tmp_path):
    """An audit (wrong order): a held-out file that is UTF-8 through the start Open checks and
    not after it failed in the background, yet stayed the held-out text: the plot kept the
    old curve and its name while the next Train failed on the file again, with no held-out
    curve at all. The text before is the held-out text again, and the dialog says so."""
    train_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 300)
    wait_curves(qtbot, window)
    before = window.hub.heldout
    bad = bad_after_probe(tmp_path / "held.txt")
    assert window.curve.open_heldout(bad)
    qtbot.waitUntil(lambda: window.last_error is not None, timeout=10_000)
    assert str(bad) in window.last_error
    assert window.last_error.endswith(
        "The held-out text is TinyStories validation (English, bundled) again."
    )
    assert window.hub.heldout == before
    window.last_error = None
    train_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 400)
    wait_curves(qtbot, window)
    assert window.last_error is None
    assert window.curve.feeder.series[HELD_OUT].source == before.name


def test_two_bad_heldout_files_opened_in_a_row_give_way_to_the_good_one(qtbot, window, tmp_path):
    """The second opened before the first one's failure came: it goes back past the first."""
    train_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 300)
    wait_curves(qtbot, window)
    before = window.hub.heldout
    errors: list[str] = []
    window.curve.error.connect(lambda title, message: errors.append(message))
    first, second = bad_after_probe(tmp_path / "one.txt"), bad_after_probe(tmp_path / "two.txt")
    assert window.curve.open_heldout(first) and window.curve.open_heldout(second)
    qtbot.waitUntil(lambda: len(errors) == 2, timeout=10_000)
    wait_curves(qtbot, window)
    assert window.hub.heldout == before
    assert errors[1].endswith("TinyStories validation (English, bundled) again.")
    assert window.curve.feeder.series[HELD_OUT].source == before.name


def test_a_heldout_file_gone_before_the_first_run_gives_way_at_train(qtbot, window, tmp_path):
    """With no run on screen the file is read at Train: gone by then, the run is measured on
    the text before it (and the next run is not asked to read the gone file again)."""
    before = window.hub.heldout
    gone = tmp_path / "held.txt"
    gone.write_text("Once upon a time there was a held-out text.\n", encoding="utf-8")
    assert window.curve.open_heldout(gone)
    gone.unlink()
    train_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 300)
    wait_curves(qtbot, window)
    qtbot.waitUntil(lambda: window.last_error is not None, timeout=10_000)
    assert str(gone) in window.last_error and window.hub.heldout == before
    qtbot.waitUntil(lambda: HELD_OUT in window.curve.feeder.series, timeout=10_000)
    assert window.curve.feeder.series[HELD_OUT].source == before.name


def test_loaded_tokenizer_gets_a_heldout_curve(qtbot, window, tmp_path):
    heldout = heldout_file(tmp_path)
    window.curve.open_heldout(heldout)
    window.load_tokenizer(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    qtbot.waitUntil(lambda: window.state.loaded is not None, timeout=60_000)
    wait_curves(qtbot, window)
    series = window.curve.feeder.series
    assert IN_SAMPLE not in series
    held = series[HELD_OUT]
    tok = window.state.loaded.tokenizer
    text = read_text(heldout)
    assert len(held.tokens) == len(tok.merges) + 1 and held.error is None
    for k in (0, 500, len(tok.merges)):
        assert held.tokens[k] == len(tok.truncated(k).encode(text)), k


def test_loaded_tokenizer_json_curve_counts_through_its_normalizer(qtbot, window, tmp_path):
    # A Lowercase normalizer and ByteLevel with its prefix space: counted by the pattern
    # alone, the curve measured other text than the tokenizer encodes (the editor's dot,
    # from encode, fell off it).
    tokenizers = pytest.importorskip("tokenizers")
    pre = tokenizers.pre_tokenizers
    made = tokenizers.Tokenizer(tokenizers.models.BPE())
    made.normalizer = tokenizers.normalizers.Lowercase()
    made.pre_tokenizer = pre.ByteLevel(add_prefix_space=True)
    made.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=VOCAB, special_tokens=[EOT], initial_alphabet=pre.ByteLevel.alphabet()
    )
    made.train_from_iterator([CORPUS.read_text(encoding="utf-8")], trainer)
    path = tmp_path / "tokenizer.json"
    made.save(str(path))
    heldout = heldout_file(tmp_path)
    window.curve.open_heldout(heldout)
    window.load_tokenizer(path)
    qtbot.waitUntil(lambda: window.state.loaded is not None, timeout=60_000)
    wait_curves(qtbot, window)
    held = window.curve.feeder.series[HELD_OUT]
    tok = window.state.loaded.tokenizer
    text = read_text(heldout)
    assert len(held.tokens) == len(tok.merges) + 1 and held.error is None
    assert held.tokens[-1] == len(made.encode(text, add_special_tokens=False).ids)
    for k in (0, 50, 200):
        assert held.tokens[k] == len(tok.truncated(k).encode(text)), k


def test_recording_off_computes_nothing(qtbot, window):
    window.curve.record_box.setChecked(False)
    train_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 300)
    wait_curves(qtbot, window)
    assert window.curve.feeder.series == {}
    window.curve.record_box.setChecked(True)  # turned on afterwards: catches up
    wait_curves(qtbot, window)
    assert len(window.curve.feeder.series[IN_SAMPLE].tokens) == window.state.published + 1


def test_editor_counts_are_points_at_the_step(qtbot, trained_window_and_result):
    window, _ = trained_window_and_result
    hub, curve, editor = window.hub, window.curve, window.editor
    window.timeline.select_step(40)
    qtbot.waitUntil(lambda: not editor.busy and len(editor.tokenizer.merges) == 40)
    text, run = hub.editor_text, hub.state.run_id
    spans = editor.spans
    at_40 = spans.utf8_length / len(spans)
    assert hub.add_editor_point(run, text, 90, 3.125)  # as the editor reports one
    xs, ys = curve.editor_dots.getData()
    points = dict(zip(xs.tolist(), ys.tolist()))
    assert points[40.0] == pytest.approx(at_40) and points[90.0] == 3.125
    assert f"editor {at_40:.2f}" in curve.value_label.text()
    # A point of another text, or of another run, is not the editor's now: dropped.
    assert not hub.add_editor_point(run, text + " and more", 12, 2.0)
    assert not hub.add_editor_point(run + 1, text, 12, 2.0)
    assert 12.0 not in curve.editor_dots.getData()[0].tolist()
    assert html.unescape(curve.legend_html).endswith("</span> editor text, run's tokenizer")


def test_the_empty_curve_shows_a_hint_not_axes(qtbot, window):
    curve = window.curve
    assert curve.showing_hint and not curve.plot.getAxis("left").isVisible()
    train_in_window(qtbot, window, CORPUS, VOCAB)
    wait_curves(qtbot, window)
    assert not curve.showing_hint and curve.plot.getAxis("left").isVisible()

    # The view follows the curves again (the hint had fixed it to 0..1).
    def follows() -> bool:
        (_, x_high), (_, y_high) = curve.plot.vb.viewRange()
        return x_high >= VOCAB - 256 - 1 - 1 and y_high > 2.0

    qtbot.waitUntil(follows, timeout=10_000)  # pyqtgraph ranges on its next paint


def test_loading_a_tokenizer_as_long_as_the_last_fits_the_axis_again(qtbot, window):
    # The hint between two tokenizers framed the axis at 0..1; fitting it again was skipped
    # when the new last merge equalled the old one (the same files twice; train, save, load),
    # and the curve stayed a flat line at 0..1, its step off screen.
    curve = window.curve
    for _ in range(2):
        with qtbot.waitSignal(window.controller.load_finished, timeout=60_000):
            window.load_tokenizer(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
        wait_curves(qtbot, window)
        qtbot.waitUntil(lambda: not curve.showing_hint, timeout=30_000)
        last = len(window.state.loaded.tokenizer.merges)
        qtbot.waitUntil(lambda n=last: curve.plot.vb.viewRange()[0][1] >= n, timeout=10_000)


def test_a_bad_corpus_gives_one_dialog_not_two(qtbot, window, tmp_path):
    # The run says the corpus is not UTF-8; the in-sample curve must not say it again.
    corpus = bad_after_probe(tmp_path / "binary.txt", b"text \xff\xfe more text\n" * 200)
    errors: list[str] = []
    window.curve.error.connect(lambda title, message: errors.append(message))
    window.controller.error.connect(lambda title, message: errors.append(message))
    assert window.open_corpus(corpus)
    window.start_training()
    qtbot.waitUntil(lambda: window.state.phase.name == "FAILED", timeout=30_000)
    wait_curves(qtbot, window)
    window.curve._on_poll()  # whatever the curve process reported has been handled
    assert len(errors) == 1 and "UTF-8" in errors[0] and str(corpus) in errors[0]


def test_the_legend_names_the_heldout_text_and_warns_when_the_corpus_is_unlike_it(
    qtbot, window, tmp_path
):
    curve = window.curve
    result = train_in_window(qtbot, window, FIXTURES / "chinese_slice.txt", 300)
    assert result is not None
    wait_curves(qtbot, window)
    legend = curve.legend_html
    assert "held-out: TinyStories validation (English, bundled)" in legend
    assert "the corpus is not English: Open held-out…" in legend
    assert "in-sample: chinese_slice.txt" in legend
    assert "corpus is not" in curve.open_button.toolTip()
    # A held-out text of the user's choice: named by its file, no warning.
    other = tmp_path / "<b>held.txt"  # markup in a file name is shown as text
    other.write_text((FIXTURES / "chinese_slice.txt").read_text(encoding="utf-8")[:3000])
    curve.open_heldout(other)
    qtbot.waitUntil(lambda: curve.feeder.series[HELD_OUT].source == other.name)
    wait_curves(qtbot, window)
    legend = curve.legend_html
    assert "held-out: &lt;b&gt;held.txt" in legend and "not English" not in legend
    assert "corpus is not" not in curve.open_button.toolTip()


def test_an_english_corpus_gets_no_warning(qtbot, trained_window_and_result):
    window, _ = trained_window_and_result
    wait_curves(qtbot, window)
    legend = window.curve.legend_html
    assert "held-out: TinyStories validation (English, bundled)" in legend
    assert "not English" not in legend


def test_a_step_key_whose_button_is_off_leaves_live_as_it_is(qtbot, window):
    """A keyboard audit: at the newest merge of a run paused live, Alt+Right ("one merge
    forward", its button and Run menu entry greyed) moved nothing but left live mode: once
    the run went on, the timeline no longer followed it. A key now acts only where its
    button can."""
    session = paused_in_window(qtbot, window, CORPUS, VOCAB, after=99)
    state, bar = window.state, window.timeline
    assert state.live and state.step == 100 == state.published
    assert not bar.forward_button.isEnabled()
    window.activateWindow()
    for key in (Qt.Key.Key_Right, Qt.Key.Key_PageDown):
        qtbot.keyClick(window, key, Qt.KeyboardModifier.AltModifier)
        assert state.live and bar.live_button.isChecked() and state.step == 100
    session.resume()
    with qtbot.waitSignal(session.finished, timeout=60_000):
        pass
    assert state.live and state.step == state.published > 100  # it followed the run
    qtbot.keyClick(window, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert not state.live and state.step == state.published - 1  # one that can, acts


def test_a_step_typed_while_the_replay_plays_is_kept_and_chosen(qtbot, trained_window_and_result):
    """A real-display audit: typing a step into the box while a replay played (or a run
    trained live) was undone at every frame, the box showing the replay's step again between
    keys ("2", then "14", "17"), and Enter chose nothing. What is typed stays until Enter (or
    leaving the box), which chooses it."""
    window, result = trained_window_and_result
    bar, state = window.timeline, window.state
    bar.replay.start(Pace(per_second=20))
    bar.spin.setFocus()
    bar.spin.selectAll()
    for typed, key in (("2", "2"), ("25", "5"), ("250", "0")):
        before = state.step
        qtbot.keyClick(bar.spin, key)
        qtbot.waitUntil(lambda before=before: state.step > before, timeout=10_000)  # a frame
        assert bar.spin.lineEdit().text() == typed
    qtbot.keyClick(bar.spin, Qt.Key.Key_Return)
    assert state.step == 250 and not bar.replay.running
    assert bar.spin.value() == bar.slider.value() == 250
    # Typed and chosen, the box follows the step again.
    bar.replay.start(Pace(per_second=20))
    qtbot.waitUntil(lambda: state.step > 251, timeout=10_000)
    assert bar.spin.value() == state.step


def test_grabbing_the_slider_while_the_replay_plays_holds_the_step_there(
    qtbot, trained_window_and_result
):
    """A real-display audit: the slider's handle pressed (held, not yet moved) while a replay
    played ran on away from the mouse, the replay going on until the mouse moved; then it
    jumped back under it. Grabbing the handle chooses the step it shows: the replay pauses
    there."""
    from PySide6.QtWidgets import QStyle, QStyleOptionSlider

    window, result = trained_window_and_result
    bar, state = window.timeline, window.state
    bar.replay.start(Pace(per_second=100))
    qtbot.waitUntil(lambda: state.step > 50, timeout=10_000)
    bar.replay.pause()  # to find the handle where it stands
    option = QStyleOptionSlider()
    bar.slider.initStyleOption(option)
    handle = bar.slider.style().subControlRect(
        QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderHandle, bar.slider
    )
    bar.replay.start()  # resumed, the handle where it was found
    grabbed = state.step
    qtbot.mousePress(bar.slider, Qt.MouseButton.LeftButton, pos=handle.center())
    assert bar.slider.isSliderDown()
    assert not bar.replay.running and state.replay_paused and not state.live
    assert state.step == grabbed == bar.slider.value()
    qtbot.mouseRelease(bar.slider, Qt.MouseButton.LeftButton, pos=handle.center())
    assert state.step == grabbed


def test_grabbing_the_labs_step_slider_while_the_replay_plays_holds_the_step_there(
    qtbot, trained_window_and_result
):
    """As the timeline's handle (the test above): the Vocabulary lab's step slider, the run's
    timeline there, pressed and held while a replay played, ran on from under the mouse."""
    from PySide6.QtWidgets import QStyle, QStyleOptionSlider

    window, result = trained_window_and_result
    bar, state, lab = window.timeline, window.state, window.lab
    window.tabs.setCurrentWidget(lab)
    lab.picker.pick(RUN)  # its step slider is the run's timeline
    qtbot.waitUntil(lab.step_row.isVisible, timeout=10_000)
    slider = lab.step_slider
    bar.replay.start(Pace(per_second=100))
    qtbot.waitUntil(lambda: state.step > 50, timeout=10_000)
    bar.replay.pause()
    option = QStyleOptionSlider()
    slider.initStyleOption(option)
    handle = slider.style().subControlRect(
        QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderHandle, slider
    )
    bar.replay.start()
    grabbed = state.step
    qtbot.mousePress(slider, Qt.MouseButton.LeftButton, pos=handle.center())
    assert slider.isSliderDown()
    assert not bar.replay.running and state.replay_paused and not state.live
    assert state.step == grabbed == slider.value() == bar.slider.value()
    qtbot.mouseRelease(slider, Qt.MouseButton.LeftButton, pos=handle.center())


def test_compare_and_the_report_follow_a_paused_runs_replay(qtbot, window):
    """Seen on the X display: a run paused, Compare (and the Report) on the run's tokenizer,
    Replay: the pages stayed blank ("The chart appears once the samples are encoded") until
    the replay ended. While paused, the run's tokenizer is rebuilt at every step moved to,
    and each rebuild asked the page again after its debounce, which the next frame's began
    again: nothing was computed. A rebuild of the run now counts as a step moved to."""
    import re

    paused_in_window(qtbot, window, CORPUS, VOCAB, 399)
    hub, compare = window.hub, window.compare
    qtbot.waitUntil(lambda: hub.state.published == 400, timeout=30_000)
    window.tabs.setCurrentWidget(compare)
    compare.choices[0].pick(RUN)
    text = compare.text()
    seen: set[int] = set()

    def a_step_during_the_replay() -> bool:
        shown = compare.comparison
        if shown is None or not hub.state.replaying:
            return False
        found = re.search(r"\(step ([\d,]+)\)", shown.a.label)
        k = int(found.group(1).replace(",", "")) if found else None
        if k is not None and 0 < k < 400:
            st = hub.state
            reference = Tokenizer(st.vocab_at(k), st.merges_at(k), list(st.special_tokens))
            assert [int(i) for i in shown.a.spans.ids] == reference.encode(text), k
            seen.add(k)
        return len(seen) >= 2

    window.timeline.replay.start(Pace(per_second=40))  # a step each frame, for 10 s
    qtbot.waitUntil(a_step_during_the_replay, timeout=20_000)
    window.tabs.setCurrentWidget(window.report)
    report = window.report
    qtbot.waitUntil(lambda: report.report is not None and hub.state.replaying, timeout=20_000)
    window.timeline.replay.skip()


def test_the_editor_follows_a_paused_runs_replay_without_encoding_each_step(
    qtbot, window, monkeypatch
):
    """Seen measuring a run of tinystories.txt paused at 9,000 merges: during the replay the
    editor was 200 merges behind the timeline (median; 680 at p90) and said "updating to
    step…" in every sample. The controller's rebuild at each step was a new tokenizer, so
    each step was a fresh encode of the text in the span thread. The editor now cuts the
    paused run's one tokenizer to the step: every frame's step is shown in that frame, on the
    GUI thread, with no encode; at rest its ids are those of the first k merges."""
    from bpe_studio.gui.jobs import span_service

    paused_in_window(qtbot, window, CORPUS, VOCAB, 399)
    hub, editor, controller = window.hub, window.editor, window.controller
    qtbot.waitUntil(lambda: hub.state.published == 400, timeout=30_000)
    text = CORPUS.read_text(encoding="utf-8")[:3000]
    editor.set_text(text)
    hub.select_step(10)  # the first move: the text encoded once with the paused tokenizer
    qtbot.waitUntil(lambda: not controller.editor_refresh_pending and not editor.busy)
    qtbot.waitUntil(lambda: editor.current_tokenizer is not None, timeout=30_000)
    encodes = []
    real = span_service.compute_spans
    monkeypatch.setattr(
        span_service, "compute_spans", lambda *a, **kw: encodes.append(1) or real(*a, **kw)
    )
    for k in range(25, 400, 25):  # a replay's frames, each with the controller's rebuild
        hub.select_step(k)
        assert editor.current_tokenizer is not None, k  # shown in the frame that moved
        assert len(editor.current_tokenizer.merges) == k
        qtbot.waitUntil(lambda: not controller.editor_refresh_pending)
        assert editor.current_tokenizer is not None, k  # and not taken back by the rebuild
    assert not editor.busy and encodes == []
    st = hub.state
    reference = Tokenizer(st.vocab_at(375), st.merges_at(375), list(st.special_tokens))
    assert [int(i) for i in editor.spans.ids] == reference.encode(text)
    assert editor.source_label.text() == "375 of 400 merges, paused at merge 400"


def test_compare_follows_a_paused_runs_replay_in_each_frame_without_encoding_each_step(
    qtbot, window, monkeypatch
):
    """Seen measuring a run paused with Compare showing its tokenizer beside GPT-2 on a 1 MB
    text: during the replay Compare trailed the timeline by 450-500 merges, catching up
    only when the replay stopped. The controller gave every view a new tokenizer at each
    step, and Compare encoded its text with both tokenizers for each. Paused, the run's
    tokenizer is now one source and the step moves alone: Compare splits its spans back to
    each step in the frame that moves to it, and its counts are those of the first k
    merges."""
    from bpe_studio.core.explain import span_arrays
    from bpe_studio.gui.views import compare as compare_module

    paused_in_window(qtbot, window, CORPUS, VOCAB, 399)
    hub, compare, controller = window.hub, window.compare, window.controller
    qtbot.waitUntil(lambda: hub.state.published == 400, timeout=30_000)
    text = CORPUS.read_text(encoding="utf-8")[:3000]
    compare.choices[0].pick(RUN)
    compare.set_text(text)
    window.tabs.setCurrentWidget(compare)
    hub.select_step(10)  # the first move: the text encoded once with the paused tokenizer
    qtbot.waitUntil(lambda: not controller.editor_refresh_pending and not compare.busy)
    qtbot.waitUntil(lambda: compare.comparison is not None and not compare.busy, timeout=30_000)
    encodes = []
    for module in (compare_module, span_arrays):
        real = module.compute_spans
        monkeypatch.setattr(
            module,
            "compute_spans",
            lambda *a, real=real, **kw: encodes.append(1) or real(*a, **kw),
        )
    tokenizers = []  # the run's tokenizer made anew: every view starts over
    hub.tokenizer_changed.connect(lambda: tokenizers.append(hub.state.shown))
    st = hub.state
    for k in range(25, 400, 25):  # a replay's frames
        hub.select_step(k)
        side = compare.comparison.a
        assert side.label.endswith(f"(step {k:,})"), (k, side.label)  # shown in the frame
        assert len(side.spans.tokenizer.merges) == k
        qtbot.waitUntil(lambda: not controller.editor_refresh_pending)
    assert not compare.busy and encodes == [] and tokenizers == []
    reference = Tokenizer(st.vocab_at(375), st.merges_at(375), list(st.special_tokens))
    expected = reference.encode(text)
    side = compare.comparison.a
    assert [int(i) for i in side.spans.ids] == expected
    assert compare.stats[0].text().startswith(f"{len(expected):,} tokens")


def test_compare_leaves_a_step_of_many_tokens_to_its_job(qtbot, window, monkeypatch):
    """Seen measuring a replay with Compare on 1 MB: its first frames, steps near 0, split
    the text back to about a token a byte on the GUI thread (a million tokens: turns of
    up to 180 ms). The GUI thread now splits only when the step's tokens are few
    (``GUI_SPLIT_TOKENS``, counted before splitting); a step of more goes to the page's job,
    and shows there."""
    from bpe_studio.gui.model import run_spans

    paused_in_window(qtbot, window, CORPUS, VOCAB, 399)
    hub, compare, controller = window.hub, window.compare, window.controller
    qtbot.waitUntil(lambda: hub.state.published == 400, timeout=30_000)
    text = CORPUS.read_text(encoding="utf-8")[:3000]
    compare.choices[0].pick(RUN)
    compare.set_text(text)
    window.tabs.setCurrentWidget(compare)
    hub.select_step(350)
    qtbot.waitUntil(lambda: not controller.editor_refresh_pending and not compare.busy)
    qtbot.waitUntil(lambda: compare.comparison is not None and not compare.busy, timeout=30_000)
    tokens = compare.comparison.a.tokens
    monkeypatch.setattr(run_spans, "GUI_SPLIT_TOKENS", tokens + 50)
    hub.select_step(340)  # a few more tokens: split in the frame
    assert compare.comparison.a.label.endswith("(step 340)")
    hub.select_step(5)  # about a token a byte: the job's
    assert compare.comparison.a.label.endswith("(step 340)")
    qtbot.waitUntil(lambda: compare.comparison.a.label.endswith("(step 5)"), timeout=30_000)
    st = hub.state
    reference = Tokenizer(st.vocab_at(5), st.merges_at(5), list(st.special_tokens))
    assert [int(i) for i in compare.comparison.a.spans.ids] == reference.encode(text)
