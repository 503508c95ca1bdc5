"""The ids panel under the editor (issue 10, "Ids, as tiktokenizer shows them"): the list equals
``encode`` and copies whole; pasted ids and a .npy decode with tokens coloured; bad input is
named in one line, never a crash."""

from __future__ import annotations

import numpy as np
import pytest
from gui_helpers import wait_for_spans
from PySide6.QtGui import QGuiApplication

from bpe_studio.core import Tokenizer
from bpe_studio.gui.model.tokenizer_source import TokenizerSource
from bpe_studio.gui.views import ids_panel as ids_module
from bpe_studio.gui.views.ids_panel import IdsPanel, parse_ids
from bpe_studio.gui.views.token_editor import TokenEditor

TEXT = "Hello, world! 中文 😀 and <|endoftext|> done.\r\nNext line"


@pytest.fixture
def panel(qtbot, gpt2_tokenizer):
    editor = TokenEditor()
    qtbot.addWidget(editor)
    ids = IdsPanel(editor)
    qtbot.addWidget(ids)
    editor.set_tokenizer(TokenizerSource("gpt2", tokenizer=gpt2_tokenizer))
    editor.set_text(TEXT)
    wait_for_spans(qtbot, editor)
    qtbot.waitUntil(lambda: not ids.busy and ids.ids_text() != "")
    yield ids
    ids.shutdown()
    editor.shutdown()


def test_ids_list_equals_encode(qtbot, panel, gpt2_tokenizer):
    expected = gpt2_tokenizer.encode(TEXT)
    assert [int(x) for x in panel.ids_text().split(", ")] == expected
    assert panel.count_label.text() == f"{len(expected):,} tokens"
    panel.copy_ids()
    assert QGuiApplication.clipboard().text() == panel.ids_text()
    assert QGuiApplication.clipboard().text() == ", ".join(map(str, expected))


def test_the_list_is_laid_out_in_lines(qtbot, panel, gpt2_tokenizer):
    # The latency audit: the list as one paragraph of 20,000 ids was laid out again whole at
    # each step of a replay, stalling the GUI thread. It is shown in lines of a few ids;
    # what is read or copied from it is still one comma-separated list.
    editor = panel._editor
    text = TEXT * 20
    editor.set_text(text)
    wait_for_spans(qtbot, editor)
    expected = gpt2_tokenizer.encode(text)
    qtbot.waitUntil(lambda: not panel.busy and panel.ids_text().count(", ") == len(expected) - 1)
    shown = panel.ids_view.document()
    per_line = panel.ids_per_line(np.asarray(expected))
    assert shown.blockCount() == -(-len(expected) // per_line) > 1
    assert panel.ids_text() == ", ".join(map(str, expected))
    panel.copy_ids()
    assert QGuiApplication.clipboard().text() == ", ".join(map(str, expected))


def test_a_long_list_is_shown_in_part_and_copied_whole(qtbot, panel, gpt2_tokenizer, monkeypatch):
    monkeypatch.setattr(ids_module, "DISPLAY_IDS", 5)
    editor = panel._editor
    editor.set_text(TEXT * 3)
    wait_for_spans(qtbot, editor)
    qtbot.waitUntil(lambda: not panel.busy and len(panel.ids_text().split(", ")) == 5)
    expected = gpt2_tokenizer.encode(TEXT * 3)
    assert "first 5 shown" in panel.count_label.text()
    QGuiApplication.clipboard().setText("")
    panel.copy_ids()
    qtbot.waitUntil(lambda: QGuiApplication.clipboard().text() != "")
    assert [int(x) for x in QGuiApplication.clipboard().text().split(", ")] == expected


@pytest.mark.parametrize(
    "pasted", ["{}", "[{}]", "{}\n", "  ({})  "], ids=["plain", "brackets", "newline", "parens"]
)
def test_pasted_ids_decode_with_colours(qtbot, panel, gpt2_tokenizer, pasted):
    ids = gpt2_tokenizer.encode("café 😀 ok")
    with qtbot.waitSignal(panel.decoded, timeout=10_000) as decoded:
        panel.decode_input.setText(pasted.format(" ".join(map(str, ids))))
    spans = decoded.args[0]
    assert panel.decoded_text() == "café 😀 ok"
    assert [int(i) for i in spans.ids] == ids
    panel.decoded_view.paint_visible_tokens()
    assert panel.decoded_view.spans is spans and panel.decoded_view.painted()
    assert panel.error == ""


def test_unknown_id_and_bad_items_are_named(qtbot, panel):
    with qtbot.waitSignal(panel._decode_job.failed, timeout=10_000):
        panel.decode_input.setText("11, 99999, 12")
    assert panel.error.startswith("Cannot decode: unknown token id 99,999 (item 2 of 3)")
    assert "\n" not in panel.error
    panel.decode_input.setText("11, twelve")
    qtbot.waitUntil(lambda: "twelve" in panel.error, timeout=10_000)
    assert "item 2 of 2" in panel.error
    # Fixed input clears the error.
    with qtbot.waitSignal(panel.decoded, timeout=10_000):
        panel.decode_input.setText("11 12")
    assert panel.error == ""


def test_npy_file_decodes(qtbot, panel, gpt2_tokenizer, tmp_path):
    ids = gpt2_tokenizer.encode("from a file\n")
    path = tmp_path / "ids.npy"
    np.save(path, np.array(ids, dtype=np.uint16))
    with qtbot.waitSignal(panel.decoded, timeout=10_000):
        assert panel.open_npy(path)
    assert panel.decoded_text() == "from a file\n"
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((2, 2), dtype=np.float32))
    assert not panel.open_npy(bad)
    assert "bad.npy" in panel.error and "1-D integer" in panel.error
    junk = tmp_path / "junk.npy"
    junk.write_text("not numpy")
    assert not panel.open_npy(junk)
    assert "junk.npy" in panel.error


def test_parse_ids():
    assert parse_ids("[1, 2,3  4;5]") == [1, 2, 3, 4, 5]
    assert parse_ids("") == []
    # An audit: "-3 is not a token id (a whole number)" said what -3 is; ids start at 0.
    with pytest.raises(ValueError, match=r"'-3' \(item 2 of 2\) .*whole numbers from 0 up"):
        parse_ids("1 -3")


def test_ids_are_decoded_with_the_tokenizer_the_editor_shows(qtbot, panel, gpt2_tokenizer):
    # Issue 23, item 12: never with the one the editor showed before, while the new one loads.
    ids = [72, 101]  # GPT-2 decodes them to "i" and half a character; bytes only, to "He"
    panel.decode_input.setText("72, 101")
    panel.decode_now()
    qtbot.waitUntil(lambda: not panel.busy and panel.decoded_text() != "", timeout=10_000)
    assert panel.decoded_text() == gpt2_tokenizer.decode(ids)
    raw = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    used: list[Tokenizer] = []
    panel.decoded.connect(lambda spans: used.append(spans.tokenizer))
    editor = panel._editor
    editor.set_tokenizer(TokenizerSource("bytes only", tokenizer=raw))
    # The editor's spans for it are not there yet: the panel says what it waits for and
    # shows nothing decoded with GPT-2, even when asked to decode meanwhile.
    assert panel.decoded_text() == ""
    assert panel.error == "Loading the editor's tokenizer (bytes only) to decode…"
    panel.decode_now()
    assert used == [] and panel.decoded_text() == ""
    wait_for_spans(qtbot, editor)
    qtbot.waitUntil(lambda: not panel.busy and panel.decoded_text() != "", timeout=10_000)
    assert panel.decoded_text() == raw.decode(ids) == "He"
    assert used and all(tok is raw for tok in used)
    assert panel.error == ""


def test_a_long_npy_is_read_off_the_gui_thread_and_shown_in_part(
    qtbot, panel, gpt2_tokenizer, tmp_path, monkeypatch
):
    """A scale audit: opening 50 million ids read the file on the GUI thread, decoded every
    id and froze the window setting 194 million characters. Now the file is read and checked
    off the GUI thread and only the first DISPLAY_IDS ids are decoded and handed to it."""
    import threading

    monkeypatch.setattr(ids_module, "DISPLAY_IDS", 50)
    ids = np.array(gpt2_tokenizer.encode("Once upon a time, 中文 😀 ok.\n" * 100), dtype=np.uint16)
    assert len(ids) > 1000
    path = tmp_path / "long.npy"
    np.save(path, ids)
    loads_on_gui: list[bool] = []
    real_load = np.load

    def load(*args, **kwargs):
        loads_on_gui.append(threading.current_thread() is threading.main_thread())
        return real_load(*args, **kwargs)

    monkeypatch.setattr(np, "load", load)
    handed: list[int] = []
    real_set_text = panel.decoded_view.set_text
    monkeypatch.setattr(
        panel.decoded_view, "set_text", lambda text: (handed.append(len(text)), real_set_text(text))
    )
    with qtbot.waitSignal(panel.decoded, timeout=20_000) as decoded:
        assert panel.open_npy(path)
    head = gpt2_tokenizer.decode(ids[:50].tolist())
    assert panel.decoded_text() == head and len(decoded.args[0]) == 50
    assert loads_on_gui == [False]
    assert max(handed) == len(head)  # never more than the shown ids' text
    assert panel.error == f"The first 50 of {len(ids):,} ids are decoded"
    # Every id is checked, not only those shown.
    ids[-3] = 60_000
    np.save(path, ids)
    with qtbot.waitSignal(panel._decode_job.failed, timeout=20_000):
        assert panel.open_npy(path)
    assert f"unknown token id 60,000 (item {len(ids) - 2:,} of {len(ids):,})" in panel.error


class _Runs:
    """Unpickled, it would write a file: an object array's pickle must never be loaded."""

    def __init__(self, flag):
        self.flag = flag

    def __reduce__(self):
        return (open, (str(self.flag), "w"))


def test_a_file_that_is_no_npy_or_holds_objects_is_named_and_never_unpickled(
    qtbot, panel, tmp_path
):
    """A real-display audit: a text file named .npy got numpy's "contains pickled (object)
    data ... allow_pickle=" and an .npz renamed .npy "an array of shape ? and type ?"."""
    text = tmp_path / "ids.npy"
    text.write_text("15496, 11, 995\n")
    assert not panel.open_npy(text)
    assert panel.error == (
        f"Cannot decode: {text} is not a .npy file (it starts with b'15496, 11, 995\\n'); "
        "token ids are a 1-D integer array saved with numpy.save"
    )
    archive = tmp_path / "archive.npy"
    np.savez(tmp_path / "archive.npz", ids=np.arange(5))
    (tmp_path / "archive.npz").rename(archive)
    assert not panel.open_npy(archive)
    assert f"{archive} is not a .npy file (it starts with b'PK" in panel.error
    assert "a zip archive, as .npz files are" in panel.error
    flag = tmp_path / "unpickled"
    objects = tmp_path / "objects.npy"
    np.save(objects, np.array([_Runs(flag), 1], dtype=object), allow_pickle=True)
    assert not panel.open_npy(objects)
    assert panel.error == (
        f"Cannot decode: {objects} holds Python objects (dtype object), which are refused, "
        "never unpickled; token ids are a 1-D integer array"
    )
    assert not flag.exists()


def test_ids_of_the_text_before_are_not_given_as_the_new_texts(qtbot, panel, tiktoken_gpt2):
    """The wrong-order audit: the whole text replaced, the panel kept the old text's count and
    list, as current, while the editor said "Tokenizing…", and Copy ids then gave the old
    text's ids for the new one. Until the new text's ids are listed, the count says it is
    updating and Copy waits; then it gives the new text's ids (tiktoken's, independent)."""
    editor = panel._editor
    new = "Another text, quite unlike the one before: 12345 ids."
    editor.set_text(new)
    assert "updating" in panel.count_label.text().lower()
    assert not panel.copy_button.isEnabled()
    QGuiApplication.clipboard().setText("")
    panel.copy_ids()  # pressed before the new ids came: given once they do
    wait_for_spans(qtbot, editor)
    expected = tiktoken_gpt2.encode_ordinary(new)
    qtbot.waitUntil(lambda: QGuiApplication.clipboard().text() != "")
    assert QGuiApplication.clipboard().text() == ", ".join(map(str, expected))
    assert panel.count_label.text() == f"{len(expected):,} tokens"
    assert panel.copy_button.isEnabled()
