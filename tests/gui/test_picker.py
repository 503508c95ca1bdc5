"""The editor's tokenizer picker and loading tokenizer files of every format (issue 10).

Ids are checked against the presets built here and, for files, against the libraries that
own the formats (Hugging Face ``tokenizers``, ``tiktoken``), never against the app's spans.
"""

from __future__ import annotations

import base64
import json

import pytest
from gui_helpers import FIXTURES, wait_for_spans
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.views.picker import PRESETS, RUN, preset_key

TEXT = "Hello world, naïve café: 12345 tokens!\n  indented\tline 中文 😀 don't\n"


def editor_ids(qtbot, window) -> list[int]:
    qtbot.waitUntil(
        lambda: (
            window.editor.spans is not None
            and not window.editor.busy
            and window.editor.spans.tokenizer is window.editor.source.get()
        ),
        timeout=30_000,
    )
    return [int(i) for i in window.editor.spans.ids]


@pytest.mark.parametrize("label_name", PRESETS, ids=[name for _, name in PRESETS])
def test_picking_a_preset_recolours_the_editor(qtbot, window, label_name):
    label, name = label_name
    window.editor.set_text(TEXT)
    window.picker.pick(preset_key(name))
    qtbot.waitUntil(lambda: window.state.picked is not None, timeout=30_000)
    assert window.editor.source is window.state.picked
    assert label in window.editor.source.label
    expected = Tokenizer.preset(name).encode(TEXT)
    assert editor_ids(qtbot, window) == expected
    # Back to the run's tokenizer: the editor follows the run again.
    window.picker.pick(RUN)
    assert window.state.picked is None
    assert window.editor.source is window.state.shown


def test_only_the_latest_choice_arrives(qtbot, window):
    window.editor.set_text(TEXT)
    window.picker.pick(preset_key("o200k_base"))
    window.picker.pick(preset_key("gpt2"))  # before o200k is built
    qtbot.waitUntil(
        lambda: not window.picker.busy and window.state.picked is not None, timeout=30_000
    )
    assert "GPT-2" in window.state.picked.label
    assert editor_ids(qtbot, window) == Tokenizer.preset("gpt2").encode(TEXT)


@pytest.fixture(scope="module")
def small_tokenizer() -> Tokenizer:
    vocab, merges = train_bpe(FIXTURES / "tinystories_sample.txt", 400, ["<|endoftext|>"])
    return Tokenizer(vocab, merges, ["<|endoftext|>"])


def _load(qtbot, window, path):
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        assert window.load_tokenizer(path)
    assert blocker.args == [True], window.last_error


def test_load_hf_tokenizer_json(qtbot, window, tmp_path, small_tokenizer):
    from tokenizers import Tokenizer as HfTokenizer

    (path,) = small_tokenizer.save(tmp_path, format="hf")
    _load(qtbot, window, path)
    state = window.state
    assert state.phase is Phase.LOADED
    # The tables show its merges and tokens.
    assert window.merge_list.model.rowCount() == len(small_tokenizer.merges)
    assert window.vocab_table.model.rowCount() == len(small_tokenizer.vocab)
    assert "tokenizer.json" in window.panel.status.text()
    # The editor shows it: ids as Hugging Face's own library gives them.
    window.editor.set_text(TEXT)
    assert editor_ids(qtbot, window) == HfTokenizer.from_file(str(path)).encode(TEXT).ids
    # It is listed in the picker, and stays there after the next load.
    assert f"file:{path}" in window.picker.keys()
    assert window.picker.key == RUN


def test_load_and_drop_tiktoken_files(qtbot, window, tmp_path, small_tokenizer):
    import tiktoken

    rank_file, sidecar = small_tokenizer.save(tmp_path, format="tiktoken", name="small")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(rank_file))])
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        window.dropEvent(event)
    assert blocker.args == [True], window.last_error
    assert window.state.phase is Phase.LOADED
    assert window.merge_list.model.rowCount() == len(small_tokenizer.merges)
    # tiktoken, built from the files the app just read, gives the editor's ids.
    meta = json.loads(sidecar.read_text(encoding="utf-8"))
    ranks = {}
    for line in rank_file.read_text(encoding="ascii").splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    enc = tiktoken.Encoding(
        "small",
        pat_str=meta["pat_str"],
        mergeable_ranks=ranks,
        special_tokens=meta["special_tokens"],
    )
    window.editor.set_text(TEXT)
    assert editor_ids(qtbot, window) == enc.encode(TEXT)


def test_load_a_bare_rank_file_named_after_its_encoding(qtbot, window):
    # No NAME.json beside it: the name says the pattern (cl100k).
    path = FIXTURES.parents[1] / "resources" / "tokenizers" / "cl100k_base.tiktoken.gz"
    _load(qtbot, window, path)
    tok = window.state.loaded.tokenizer
    assert tok.pattern_name == "cl100k" and len(tok.merges) == 100_000
    assert "cl100k pattern" in window.panel.status.text()


def test_gpt2_pair_still_loads_and_a_picked_preset_survives_a_load(qtbot, window):
    window.editor.set_text(TEXT)
    window.picker.pick(preset_key("cl100k_base"))
    qtbot.waitUntil(lambda: window.state.picked is not None, timeout=30_000)
    _load(qtbot, window, FIXTURES / "gpt2_vocab.json")
    # The loaded file is the run now, and the editor shows it.
    assert window.state.picked is None and window.picker.key == RUN
    assert editor_ids(qtbot, window) == Tokenizer.preset("gpt2").encode(TEXT)
    # Its entry picks the very same tokenizer.
    window.picker.pick(f"file:{FIXTURES / 'gpt2_vocab.json'}")
    assert window.state.picked.get() is window.state.loaded.tokenizer
    wait_for_spans(qtbot, window.editor)


def test_openai_rank_file_under_another_name_asks_nothing(qtbot, window, tmp_path):
    # The core knows OpenAI's own rank files by their bytes, so the app does not ask which
    # pattern one was made with because its name says nothing.
    shipped = FIXTURES.parents[1] / "resources" / "tokenizers" / "o200k_base.tiktoken.gz"
    renamed = tmp_path / "downloaded.tiktoken.gz"
    renamed.write_bytes(shipped.read_bytes())

    def choose(path):
        raise AssertionError(f"asked for the pattern of {path}")

    window.choose_pattern = choose
    _load(qtbot, window, renamed)
    tok = window.state.loaded.tokenizer
    assert tok.pattern_name == "o200k" and len(tok.merges) == 199_742


def test_a_bare_rank_file_asks_for_its_pattern(qtbot, window, tmp_path, small_tokenizer):
    rank_file, sidecar = small_tokenizer.save(tmp_path, format="tiktoken", name="mystery")
    sidecar.unlink()  # neither a NAME.json nor the name tells the pattern
    asked = []

    def choose(path):
        asked.append(path)
        return None  # cancelled: nothing is loaded

    window.choose_pattern = choose
    assert not window.load_tokenizer(rank_file)
    assert asked == [rank_file] and window.state.phase is Phase.IDLE
    window.choose_pattern = lambda path: "o200k"
    _load(qtbot, window, rank_file)
    assert window.state.loaded.tokenizer.pattern_name == "o200k"
    assert window.state.loaded.tokenizer.merges == small_tokenizer.merges
