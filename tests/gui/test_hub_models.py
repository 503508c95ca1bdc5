"""Hugging Face Hub models in the app (pytest-qt, offscreen), never over the network: local
snapshots in a temporary Hugging Face cache read offline, failures and progress through a
stand-in for ``hf_hub_download`` raising huggingface_hub's own errors. Ids are the files' own,
run by ``tokenizers`` directly."""

from __future__ import annotations

import huggingface_hub
import pytest
from foreign_files import own_ids
from hub_snapshot import hub_error, two_models
from huggingface_hub import errors
from test_picker import editor_ids

from bpe_studio.core.explain.report import bundled_samples
from bpe_studio.core.io.hf_hub import POPULAR, HubModel
from bpe_studio.gui.hub import StateHub
from bpe_studio.gui.views.choices import TokenizerChoice
from bpe_studio.gui.views.hub_models import recent_models
from bpe_studio.gui.views.picker import ASK_HUB, hub_key

TEXT = "Hello world, naïve café: 12345 tokens!\n中文 😀 don't\n"


@pytest.fixture
def snapshots(monkeypatch, tmp_path):
    return two_models(monkeypatch, tmp_path)


def test_menus_offer_the_popular_models_and_the_hub_action(qtbot, window):
    keys = window.picker.keys()
    for _, repo in POPULAR:
        assert hub_key(repo) in keys
    assert ASK_HUB in keys
    choice = window.compare.choices[0]
    items = [choice.itemText(i) for i in range(choice.count())]
    assert "Open from Hugging Face Hub…" in items
    assert any("meta-llama/Llama-3.1-8B" in item for item in items)


def test_open_from_the_hub_in_the_editor_offline(qtbot, window, snapshots):
    window.editor.set_text(TEXT)
    picker = window.picker
    picker.ask_model = lambda: HubModel("acme/uni")
    picker.combo.setCurrentIndex(picker.combo.findData(ASK_HUB))  # as the user would
    assert picker.key == hub_key("acme/uni")
    qtbot.waitUntil(lambda: not picker.busy and window.state.picked is not None, timeout=30_000)
    assert editor_ids(qtbot, window) == own_ids(snapshots["uni"], TEXT)
    assert "Unigram, run by tokenizers" in picker.note.text()
    assert recent_models()[0] == "acme/uni"
    # Every menu lists it at once, and one built later among the recent ones.
    for choice in (*window.compare.choices, *window.report.choices):
        assert choice.index_of(("hf", "acme/uni")) >= 0
    fresh = TokenizerChoice(StateHub())
    qtbot.addWidget(fresh)
    assert fresh.index_of(("hf", "acme/uni")) >= 0


def test_a_cancelled_ask_changes_nothing(qtbot, window):
    picker = window.picker
    before = picker.key
    picker.ask_model = lambda: None
    picker.combo.setCurrentIndex(picker.combo.findData(ASK_HUB))
    assert picker.key == before and window.state.picked is None


def test_compare_and_report_name_the_models(qtbot, window, snapshots, tmp_path):
    compare = window.compare
    compare.choices[0].select("o200k_base")
    compare.choices[1].add_hub_model(HubModel("acme/ll", "v1"))
    with qtbot.waitSignal(compare.compared, timeout=60_000) as blocker:
        compare.set_text(TEXT)
        window.tabs.setCurrentWidget(compare)
    comparison = blocker.args[0]
    assert comparison.b.label == "acme/ll@v1"
    assert comparison.b.tokens == len(own_ids(snapshots["ll"], TEXT))

    report = window.report
    report.choices[0].select("o200k_base")
    report.choices[1].add_hub_model(HubModel("acme/uni"))
    report.choices[2].add_hub_model(HubModel("acme/ll", "v1"))
    report.choices[3].select(None)
    with qtbot.waitSignal(report.computed, timeout=120_000) as blocker:
        window.tabs.setCurrentWidget(report)
    result = blocker.args[0]
    assert result.tokenizers == ("GPT-4o (o200k_base)", "acme/uni", "acme/ll@v1")
    for sample in bundled_samples():
        expected = len(own_ids(snapshots["uni"], sample.text))
        assert result.cell(sample.name, "acme/uni").tokens == expected


def test_a_gated_model_says_how_to_log_in(qtbot, window, monkeypatch, snapshots):
    def gated(*args, **kwargs):
        raise hub_error(errors.GatedRepoError)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", gated)
    window.picker.pick(hub_key("meta-llama/Llama-3.1-8B"))
    qtbot.waitUntil(lambda: "Could not load" in window.picker.note.text(), timeout=30_000)
    note = window.picker.note.text()
    assert "meta-llama/Llama-3.1-8B: a gated model" in note and "`hf auth login`" in note


def test_a_download_shows_its_progress_without_blocking(qtbot, window, monkeypatch, snapshots):
    import threading

    release = threading.Event()

    def download(repo_id, filename, *, revision=None, tqdm_class=None, **kwargs):
        if filename != "tokenizer.json":
            raise hub_error(errors.RemoteEntryNotFoundError)
        bar = tqdm_class(total=4_000_000, unit="B")
        bar.update(1_000_000)
        release.wait(30)  # the download goes on while the test looks at the window
        bar.update(3_000_000)
        return str(snapshots["uni"])

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    picker = window.picker
    picker.add_hub_model(HubModel("acme/new"))
    qtbot.waitUntil(
        lambda: (
            picker.progress.dialog is not None
            and "1.0 of 4.0 MB" in picker.progress.dialog.labelText()
        ),
        timeout=30_000,
    )
    assert "Downloading the tokenizer of acme/new" in picker.progress.dialog.labelText()
    window.editor.set_text("the GUI thread is free")  # the GUI answers meanwhile
    release.set()
    qtbot.waitUntil(lambda: not picker.busy and window.state.picked is not None, timeout=30_000)
    assert not picker.progress.dialog.isVisible()
    assert recent_models()[0] == "acme/new"
