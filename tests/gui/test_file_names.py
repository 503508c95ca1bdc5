"""Hugging Face files are named by their model, never all "tokenizer.json" (issue 33, defect
5): by the Hub name of a file in the Hugging Face cache, the name the model's config gives, or
the folder holding it; no two picker entries alike; the same names in Compare, the Report and
its CSV, the status line and the editor's header."""

from __future__ import annotations

import json

import pytest
from foreign_files import llama3_style, sentencepiece_bpe
from gui_helpers import save_and_wait, wait_for_spans
from hub_snapshot import add_snapshot, offline_hub

from bpe_studio.core.explain.report import report_csv
from bpe_studio.gui.model.file_names import distinct_name, tokenizer_name
from bpe_studio.gui.views.picker import NONE, file_key, preset_key


def entries(picker) -> list[str]:
    return [picker.itemText(i) for i in range(picker.count())]


def test_files_are_named_by_their_model(tmp_path, monkeypatch):
    llama = llama3_style(tmp_path / "Llama-3.1-8B", full=False)
    assert llama.name == "tokenizer.json"
    assert tokenizer_name(llama) == "Llama-3.1-8B"
    # A config that names the model wins over the folder's name.
    named = llama3_style(tmp_path / "checkpoint-500", full=False)
    config = {"name_or_path": "acme/stories-8k", "model_max_length": 2048}
    (named.parent / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    assert tokenizer_name(named) == "acme/stories-8k"
    # A config naming a folder it was saved from is no name.
    local = llama3_style(tmp_path / "run-7", full=False)
    (local.parent / "config.json").write_text('{"_name_or_path": "./out"}', encoding="utf-8")
    assert tokenizer_name(local) == "run-7"
    # In the Hugging Face cache: the Hub's name, not the snapshot's commit folder.
    cache = offline_hub(monkeypatch, tmp_path)
    snapshot = add_snapshot(cache, "meta-llama/Llama-3.1-8B", {"tokenizer.json": llama})
    assert tokenizer_name(snapshot / "tokenizer.json") == "meta-llama/Llama-3.1-8B"
    # A file whose own name says what it is keeps it.
    rank = tmp_path / "o200k_base.tiktoken"
    rank.write_text("", encoding="utf-8")
    assert tokenizer_name(rank) == "o200k_base.tiktoken"
    # Two folders of one name: the folders above tell them apart.
    assert distinct_name("Llama", tmp_path / "b" / "Llama" / "tokenizer.json", {"Llama"}) == (
        "b/Llama"
    )


def test_no_two_picker_entries_are_alike_and_every_view_names_the_model(qtbot, window, tmp_path):
    llama = llama3_style(tmp_path / "Llama-3.1-8B", full=False)
    gemma = sentencepiece_bpe(tmp_path / "gemma-2-2b")
    twin = llama3_style(tmp_path / "other" / "Llama-3.1-8B", full=False)
    picker = window.picker
    for path in (llama, gemma, twin):
        picker.add_file(path, choose=False)
    listed = entries(picker)
    assert "Llama-3.1-8B" in listed and "gemma-2-2b" in listed
    assert "other/Llama-3.1-8B" in listed and "tokenizer.json" not in listed
    assert len(listed) == len(set(listed))
    # The editor's header and note name the model too.
    window.editor.set_text("Hello there")
    picker.pick(file_key(llama))
    qtbot.waitUntil(lambda: window.state.picked is not None, timeout=30_000)
    wait_for_spans(qtbot, window.editor)
    assert window.editor.source_label.text() == "Llama-3.1-8B"

    # Compare's side and the Report's column (and its CSV) by the model's name.
    compare = window.compare
    compare.choices[0].pick(preset_key("gpt2"))
    compare.choices[1].add_file(gemma)
    with qtbot.waitSignal(compare.compared, timeout=60_000) as blocker:
        window.tabs.setCurrentWidget(compare)
    assert blocker.args[0].b.label == "gemma-2-2b"
    assert compare.stats[1].text().endswith(" · gemma-2-2b")
    report = window.report
    report.choices[0].pick(preset_key("gpt2"))
    report.choices[1].add_file(llama)
    report.choices[2].add_file(twin)
    report.choices[3].pick(NONE)
    with qtbot.waitSignal(report.computed, timeout=120_000) as blocker:
        window.tabs.setCurrentWidget(report)
    result = blocker.args[0]
    assert result.tokenizers[1:] == ("Llama-3.1-8B", "other/Llama-3.1-8B")
    rows = report_csv(result).splitlines()
    named = {line.split(",")[1] for line in rows[1:]}
    assert {"Llama-3.1-8B", "other/Llama-3.1-8B"} <= named
    assert not any("tokenizer.json" in line for line in rows)


def test_a_loaded_file_is_named_by_its_model_in_the_status_line(qtbot, window, tmp_path):
    llama = llama3_style(tmp_path / "Llama-3.1-8B", full=False)
    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000):
        assert window.load_tokenizer(llama)
    assert window.panel.status.text().startswith("Loaded Llama-3.1-8B (tokenizer.json): ")
    assert "Llama-3.1-8B" in entries(window.picker)
    assert window.state.shown.label.startswith("Tokenizer: Llama-3.1-8B, ")


def test_a_remembered_folder_that_cannot_be_asked_about_opens_home(qtbot, tmp_path, monkeypatch):
    """A cache audit: a remembered folder made private since, or a path too long, raised on
    the GUI thread, and File > Open opened no dialog until the settings were edited."""
    from pathlib import Path

    from PySide6.QtCore import QSettings

    from bpe_studio.gui.views import file_dialogs

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    monkeypatch.setattr(file_dialogs, "app_settings", lambda: settings)
    too_long = str(tmp_path / ("a" * 300))  # one name past the system's limit
    with pytest.raises(OSError):
        Path(too_long).is_dir()  # what the dialogs asked, unguarded
    settings.setValue("dialogs/open", too_long)
    settings.setValue("dialogs/last", too_long)
    assert file_dialogs.start_folder("open") == str(Path.home())
    file_dialogs.remember("open", too_long)  # nor does remembering raise


def test_the_glob_dialog_keeps_a_path_with_spaces_whole(tmp_path):
    """Found by the first-hour audit: "Glob or URL…" filled itself with the paths joined by
    spaces and read them back split at spaces: OK on ".../my corpus.txt" said
    ".../my: no such file"."""
    from bpe_studio.gui.model.corpus_source import joined_sources, split_sources

    spaced = tmp_path / "my corpus.txt"
    spaced.write_text("text", encoding="utf-8")
    sources = [str(spaced), "s3://bucket/web/*.parquet", "shards/part-*.txt.gz"]
    assert split_sources(joined_sources(sources)) == sources
    assert split_sources(f"  {spaced}  ") == [str(spaced)]  # typed as it is, unquoted
    assert split_sources("a.txt 'b c.txt'") == ["a.txt", "b c.txt"]
    assert split_sources("it's.txt b.txt") == ["it's.txt", "b.txt"]  # a lone quote


def test_a_saved_folder_and_the_file_in_it_are_one_tokenizer_of_one_name(qtbot, window, tmp_path):
    """A house audit: a run saved as tokenizer.json into ``stories-1k``, opened again as that
    folder (``bpe-studio gui DIR``, a drop) and then as the file in it, was named
    "stories-1k" and then "<its parent>/stories-1k" (another file of that name, it said), and
    every picker listed the one file twice."""
    from gui_helpers import FIXTURES, train_in_window

    train_in_window(qtbot, window, FIXTURES / "tinystories_sample.txt", 300)
    folder = tmp_path / "stories-1k"
    assert save_and_wait(qtbot, window, folder, "hf")
    for path in (folder, folder / "tokenizer.json"):
        with qtbot.waitSignal(window.controller.load_finished, timeout=60_000) as loaded:
            assert window.open_file(path)
        assert loaded.args == [True]
        assert window.panel.status.text().startswith("Loaded stories-1k")
        assert window.state.loaded_name == "stories-1k"
    for picker in (window.picker, window.compare.choices[0]):
        assert [name for name in entries(picker) if "stories-1k" in name] == ["stories-1k"]
