"""The editor's tokenizer picker and loading tokenizer files of every format (issue 10).

Ids are checked against the presets built here and, for files, against the libraries that
own the formats (Hugging Face ``tokenizers``, ``tiktoken``), never against the app's spans.
"""

from __future__ import annotations

import base64
import json
import os

import pytest
from gui_helpers import FIXTURES, drop_event, wait_for_spans

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.core.formats.base.preset_table import PRESETS
from bpe_studio.core.io.hf_hub import POPULAR
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.views import file_dialogs
from bpe_studio.gui.views.picker import (
    ASK_HUB,
    LOAD_FILE,
    NONE,
    RUN,
    TokenizerPicker,
    file_key,
    hub_key,
    preset_key,
)

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


# Every preset the core ships, with the label a user knows it by.
LABELS = {
    "gpt2": "GPT-2",
    "cl100k_base": "GPT-4 (cl100k_base)",
    "o200k_base": "GPT-4o (o200k_base)",
}


def test_the_picker_offers_every_preset_of_the_core(window):
    assert set(LABELS) == set(PRESETS)
    offered = [window.picker.itemText(window.picker.findData(preset_key(n))) for n in PRESETS]
    assert offered == [LABELS[n] for n in PRESETS]


@pytest.mark.parametrize("name", PRESETS)
def test_picking_a_preset_recolours_the_editor(qtbot, window, name):
    label = LABELS[name]
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
        lambda: not window.editor_tokenizer.busy and window.state.picked is not None, timeout=30_000
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
    # Named by its folder (issue 33, defect 5), the file's own name after it.
    assert f"{tmp_path.name} (tokenizer.json)" in window.panel.status.text()
    # The editor shows it: ids as Hugging Face's own library gives them.
    window.editor.set_text(TEXT)
    assert editor_ids(qtbot, window) == HfTokenizer.from_file(str(path)).encode(TEXT).ids
    # It is listed in the picker, and stays there after the next load.
    assert file_key(path) in window.picker.keys()
    assert window.picker.key == RUN


def test_load_and_drop_tiktoken_files(qtbot, window, tmp_path, small_tokenizer):
    import tiktoken

    rank_file, sidecar = small_tokenizer.save(tmp_path, format="tiktoken", name="small")
    event = drop_event(rank_file)
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


def test_a_dropped_folder_the_app_saved_into_loads_its_tokenizer(
    qtbot, window, tmp_path, small_tokenizer
):
    """An audit (wrong order): the folder a Save had just written, dropped on the window (or
    given to `bpe-studio gui`), was opened as a corpus and refused: "is a directory, not a
    text file: open the text files in it, or give Glob or URL… a pattern such as …/*.txt".
    A folder holding a tokenizer loads it; one holding none is still refused as a corpus."""
    folder = tmp_path / "saved"
    small_tokenizer.save(folder, format="gpt2")
    event = drop_event(folder)
    with qtbot.waitSignal(window.controller.load_finished, timeout=30_000) as blocker:
        window.dropEvent(event)
    assert blocker.args == [True], window.last_error
    assert window.state.phase is Phase.LOADED
    assert window.state.loaded.tokenizer.merges == small_tokenizer.merges
    empty = tmp_path / "texts"
    empty.mkdir()
    assert not window.open_file(empty)
    assert "is a directory, not a text file" in window.last_error


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
    window.picker.pick(file_key(FIXTURES))  # the GPT-2 pair stands for its directory
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


def test_every_picker_offers_the_same_choices(window):
    # One picker widget: the editor's, Compare's and Report's list the run's tokenizer, the
    # presets and the popular Hub models in one order, then "Load tokenizer file…" and "Open
    # from Hugging Face Hub…"; the pages add "(none)" where a slot may be empty.
    editor = window.picker.keys()
    hub = [hub_key(repo) for _, repo in POPULAR]
    presets = [preset_key(name) for name in PRESETS]
    assert editor == [RUN, *presets, *hub, "None", LOAD_FILE, ASK_HUB]
    for picker in (*window.compare.choices, *window.report.choices, window.lab.picker):
        assert isinstance(picker, TokenizerPicker)
        assert [k for k in picker.keys() if k != NONE] == editor


def test_load_tokenizer_file_is_an_action_that_offers_the_file(window, monkeypatch, tmp_path):
    picker = window.compare.choices[1]
    before = picker.key
    changes: list[str] = []
    picker.choice_changed.connect(lambda: changes.append(picker.key))
    answer: list[str] = []  # the paths the dialog gives: none, cancelled
    monkeypatch.setattr(file_dialogs, "run_dialog", lambda *a, **k: answer)
    picker.activated.emit(picker.findData(LOAD_FILE))  # cancelled: nothing changes
    assert picker.key == before and changes == []
    (path,) = Tokenizer.preset("gpt2").save(tmp_path, format="hf")
    answer.append(str(path))
    picker.activated.emit(picker.findData(LOAD_FILE))
    assert picker.key == file_key(path) and changes == [file_key(path)]
    assert picker.currentText() == tmp_path.name  # by its folder, not "tokenizer.json"
    # Files come after the presets, before the separator and the action.
    keys = picker.keys()
    assert keys.index(file_key(path)) == keys.index(preset_key(PRESETS[-1])) + 1


def test_a_pickers_load_file_asks_a_bare_rank_files_pattern(
    qtbot, window, monkeypatch, tmp_path, small_tokenizer
):
    """An audit: Compare's or the editor's "Load tokenizer file…" of a rank file whose
    pattern nothing tells failed with "pass one (--pattern on the command line, pattern= in
    Python)", which the app has no way to do; Load tokenizer asked. The pickers ask too."""
    from bpe_studio.gui.model.panes import COMPARE_RIGHT

    rank_file, sidecar = small_tokenizer.save(tmp_path, format="tiktoken", name="mystery")
    sidecar.unlink()
    view = window.compare
    window.tabs.setCurrentWidget(view)
    view.set_text(TEXT)
    picker = view.choices[1]
    before = picker.key
    monkeypatch.setattr(file_dialogs, "run_dialog", lambda *a, **k: [str(rank_file)])
    asked = []

    def cancel(path):
        asked.append(path)
        return None

    picker.choose_pattern = cancel
    picker.activated.emit(picker.findData(LOAD_FILE))  # the pattern's question cancelled
    assert asked == [rank_file] and picker.key == before
    assert not any(k.startswith("file:") for k in picker.keys())
    picker.choose_pattern = lambda path: small_tokenizer.pattern
    with qtbot.waitSignal(view.compared, timeout=60_000) as blocker:
        picker.activated.emit(picker.findData(LOAD_FILE))
    assert picker.key == file_key(rank_file)
    assert window.hub.pane(COMPARE_RIGHT).key == picker.key
    assert blocker.args[0].b.tokens == len(small_tokenizer.encode(TEXT))
    assert window.last_error is None
    # The editor's picker lists it and reads it with the pattern given.
    window.editor.set_text(TEXT)
    window.picker.pick(file_key(rank_file))
    assert editor_ids(qtbot, window) == small_tokenizer.encode(TEXT)


def test_a_loaded_file_stays_to_pick_in_every_picker(qtbot, window, tiktoken_gpt2):
    """Compare, the Report and the lab listed a file loaded with Load tokenizer only as the
    run's tokenizer, so it left them at the next load, while the editor kept it."""
    from reference_encoder import shipped_tiktoken

    _load(qtbot, window, FIXTURES / "gpt2_vocab.json")
    cl100k = FIXTURES.parents[1] / "resources" / "tokenizers" / "cl100k_base.tiktoken.gz"
    _load(qtbot, window, cl100k)  # the run is cl100k now
    pickers = [
        window.picker,
        *window.compare.choices,
        *window.report.choices,
        window.lab.picker,
        window.lab.against,
    ]
    for picker in pickers:
        assert file_key(FIXTURES) in picker.keys(), picker.pane  # the GPT-2 pair's directory
        assert file_key(cl100k) in picker.keys(), picker.pane
    # Compared, the first file's side counts GPT-2's tokens as tiktoken gives them.
    view = window.compare
    view.choices[0].pick(file_key(FIXTURES))
    view.choices[1].pick(RUN)
    with qtbot.waitSignal(view.compared, timeout=60_000) as blocker:
        view.set_text(TEXT)
        window.tabs.setCurrentWidget(view)
    comparison = blocker.args[0]
    assert comparison.keys == (file_key(FIXTURES), RUN)
    assert comparison.a.tokens == len(tiktoken_gpt2.encode(TEXT))
    assert comparison.b.tokens == len(shipped_tiktoken("cl100k_base").encode(TEXT))


def test_a_file_opened_in_one_picker_is_listed_in_every_picker(
    qtbot, window, tmp_path, small_tokenizer
):
    """A real-display audit: a file opened with one picker's "Load tokenizer file…" (the
    lab's Against, Compare's) was listed in that picker alone."""
    from bpe_studio.gui.model.panes import COMPARE_RIGHT

    (path,) = small_tokenizer.save(tmp_path, format="hf")
    view = window.compare
    window.tabs.setCurrentWidget(view)
    key = view.choices[1].add_file(path)  # as its action does, once a file is chosen
    qtbot.waitUntil(lambda: window.hub.pane(COMPARE_RIGHT).key == key, timeout=60_000)
    others = [window.picker, view.choices[0], *window.report.choices, window.lab.picker,
              window.lab.against]  # fmt: skip
    for picker in others:
        assert key in picker.keys(), picker.pane
        assert picker.key != key  # listed, not chosen
    # Picked in another, it is the same tokenizer: the lab's make-up counts its tokens.
    window.tabs.setCurrentWidget(window.lab)
    window.lab.picker.pick(key)
    qtbot.waitUntil(
        lambda: window.lab.lab.makeup is not None and window.lab.lab.makeup.ref.key == key,
        timeout=60_000,
    )
    assert window.lab.lab.makeup.table.makeup().tokens == len(small_tokenizer.vocab)


def test_one_file_reached_by_two_paths_is_one_entry(qtbot, window, tmp_path, small_tokenizer):
    """The review: a tokenizer.json opened by its own path and through a linked folder was
    listed twice in every picker."""
    real = tmp_path / "real"
    (path,) = small_tokenizer.save(real, format="hf")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    picker = window.compare.choices[1]
    first = picker.add_file(path, choose=False)
    again = picker.add_file(tmp_path / "link" / "tokenizer.json", choose=False)
    assert again == first
    assert sum(k.startswith("file:") for k in picker.keys()) == 1


def test_the_pattern_of_a_bare_rank_file_may_be_a_regex_typed(qtbot, window, tmp_path, monkeypatch):
    """The patterns audit: the question offered the three names only, so a rank file made
    with a custom regex could not be loaded as it was made."""
    from PySide6.QtWidgets import QInputDialog

    from bpe_studio.core import Tokenizer

    regex = r" ?\p{L}+|\p{N}|[^\p{L}\p{N}]"  # its leading space is part of it
    custom = Tokenizer(
        {i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")], pattern=regex
    )
    rank_file, sidecar = custom.save(tmp_path, format="tiktoken", name="mystery")
    sidecar.unlink()
    offered = []

    def typed(parent, title, label, items, current, editable):
        offered.append((items, editable))
        return answers.pop(0), True

    answers = [regex, " o200k "]
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(typed))
    assert window.choose_pattern(rank_file) == regex
    assert window.choose_pattern(rank_file) == "o200k"  # a name's spaces are not its own
    assert offered == [(["gpt2", "cl100k", "o200k"], True)] * 2
    monkeypatch.setattr(window, "choose_pattern", lambda path: regex)
    _load(qtbot, window, rank_file)
    assert window.state.loaded.tokenizer.pattern == regex
    assert window.state.loaded.tokenizer.encode("ab12") == custom.encode("ab12")
    # The review: a page's picker built the file again, once it had changed on disk,
    # without the pattern typed ("a rank file holds no pre-tokenization pattern").
    picker = window.compare.choices[1]
    key = next(k for k in picker.keys() if k.startswith("file:"))
    stat = rank_file.stat()
    os.utime(rank_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    rebuilt = picker.choice(key).get()
    assert rebuilt is not window.state.loaded.tokenizer and rebuilt.pattern == regex


def test_a_file_changed_on_disk_is_read_again_by_compare_and_the_editor(
    qtbot, window, tmp_path, small_tokenizer
):
    """An audit: a tokenizer file retrained into the same folder kept its old tokenizer in
    the pickers' caches (kept by path alone): Compare, loading it again, and the editor,
    picking it again, showed the old file's tokens under its name."""
    from gui_helpers import EOT

    from bpe_studio.gui.model.panes import COMPARE_RIGHT

    smaller = Tokenizer(*train_bpe(FIXTURES / "tinystories_sample.txt", 300, [EOT]), [EOT])
    (path,) = small_tokenizer.save(tmp_path, format="hf")
    view = window.compare
    window.tabs.setCurrentWidget(view)
    view.set_text(TEXT)
    picker = view.choices[1]
    with qtbot.waitSignal(view.compared, timeout=60_000) as blocker:
        key = picker.add_file(path)
    assert blocker.args[0].b.tokens == len(small_tokenizer.encode(TEXT))
    assert window.hub.pane(COMPARE_RIGHT).key == key
    window.editor.set_text(TEXT)
    window.picker.pick(key)  # the editor too
    assert editor_ids(qtbot, window) == small_tokenizer.encode(TEXT)
    window.picker.pick(RUN)
    assert smaller.save(tmp_path, format="hf") == [path]  # retrained in place
    with qtbot.waitSignal(view.compared, timeout=60_000) as blocker:
        assert picker.add_file(path) == key  # "Load tokenizer file…" of the file shown
    assert blocker.args[0].b.tokens == len(smaller.encode(TEXT))
    window.picker.pick(key)
    assert editor_ids(qtbot, window) == smaller.encode(TEXT)


def _byte_level_file(path, merges: list[tuple[str, str]]) -> None:
    import tokenizers
    from tokenizers import decoders, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    hf = tokenizers.Tokenizer(models.BPE(vocab, merges))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.save(str(path))


def test_a_file_named_like_a_vocabulary_is_the_file_picked(qtbot, window, tmp_path):
    """A real-display audit of the Vocabulary lab: a picker took any ``*vocab*.json`` for its
    folder. A tokenizer.json saved as ``qwen2_vocab.json`` beside another model's
    ``tokenizer.json`` showed that other model's tokens under the folder's name, and GPT-2's
    pair saved as ``my_vocab.json`` + ``my_merges.txt`` (which ``bpe-studio inspect`` reads)
    failed with "a directory without vocab.json + merges.txt", naming the folder."""
    from tokenizers import Tokenizer as HfTokenizer

    folder = tmp_path / "models"
    folder.mkdir()
    _byte_level_file(folder / "qwen2_vocab.json", [("h", "e"), ("he", "l")])
    _byte_level_file(folder / "tokenizer.json", [("o", "r"), ("l", "d")])
    text = "hello world"
    expected = HfTokenizer.from_file(str(folder / "qwen2_vocab.json")).encode(text).ids
    assert expected != HfTokenizer.from_file(str(folder / "tokenizer.json")).encode(text).ids
    window.editor.set_text(text)
    key = window.picker.add_file(folder / "qwen2_vocab.json")
    assert key == file_key(folder / "qwen2_vocab.json")
    assert editor_ids(qtbot, window) == expected

    pair = tmp_path / "gpt2"
    pair.mkdir()
    (pair / "my_vocab.json").write_bytes((FIXTURES / "gpt2_vocab.json").read_bytes())
    (pair / "my_merges.txt").write_bytes((FIXTURES / "gpt2_merges.txt").read_bytes())
    window.picker.add_file(pair / "my_vocab.json")
    picked = lambda: window.state.picked  # noqa: E731
    qtbot.waitUntil(lambda: picked() is not None and "my_vocab" in picked().label, timeout=30_000)
    assert editor_ids(qtbot, window) == Tokenizer.preset("gpt2").encode(text)
    assert window.last_error is None
