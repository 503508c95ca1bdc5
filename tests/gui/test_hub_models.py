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
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.views.hub_models import ask_model, recent_models
from bpe_studio.gui.views.picker import ASK_HUB, NONE, TokenizerPicker, hub_key, preset_key

TEXT = "Hello world, naïve café: 12345 tokens!\n中文 😀 don't\n"


@pytest.fixture
def snapshots(monkeypatch, tmp_path):
    return two_models(monkeypatch, tmp_path)


def choose_action(picker, key: str) -> None:
    """Choose an action in the menu as the user would (it runs when activated)."""
    index = picker.findData(key)
    picker.setCurrentIndex(index)
    picker.activated.emit(index)


def test_menus_offer_the_popular_models_and_the_hub_action(qtbot, window):
    for picker in (window.picker, *window.compare.choices, *window.report.choices):
        keys = picker.keys()
        for _, repo in POPULAR:
            assert hub_key(repo) in keys
        assert ASK_HUB in keys
        items = [picker.itemText(i) for i in range(picker.count())]
        assert "Open from Hugging Face Hub…" in items
        assert "Llama 3.1 8B (Hub: meta-llama/Llama-3.1-8B)" in items


def test_open_from_the_hub_in_the_editor_offline(qtbot, window, snapshots):
    window.editor.set_text(TEXT)
    picker = window.picker
    picker.ask_model = lambda: HubModel("acme/uni")
    choose_action(picker, ASK_HUB)
    assert picker.key == hub_key("acme/uni")
    bar = window.editor_tokenizer
    qtbot.waitUntil(lambda: not bar.busy and window.state.picked is not None, timeout=30_000)
    assert editor_ids(qtbot, window) == own_ids(snapshots["uni"], TEXT)
    assert "Unigram, run by tokenizers" in bar.note.text()
    assert recent_models()[0] == "acme/uni"
    # Every menu lists it at once, and one built later among the recent ones.
    for choice in (*window.compare.choices, *window.report.choices):
        assert hub_key("acme/uni") in choice.keys()
    fresh = TokenizerPicker(AppModel(), pane="a new pane")
    qtbot.addWidget(fresh)
    assert hub_key("acme/uni") in fresh.keys()


def test_the_dialog_takes_the_model_as_the_command_line_and_its_page_spell_it(qtbot, monkeypatch):
    """An audit: "hf:acme/llama3" (the command line's spelling, and the form of the refusal's
    own example) and a model page's address were refused, each with a warning, and asked
    again."""
    from PySide6.QtWidgets import QInputDialog, QMessageBox

    warnings: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a: warnings.append(a[2])))
    typed = [
        ("hf:acme/llama3", HubModel("acme/llama3")),
        (" hf:Qwen/Qwen2.5-7B@main ", HubModel("Qwen/Qwen2.5-7B", "main")),
        ("https://huggingface.co/acme/llama3", HubModel("acme/llama3")),
        ("https://huggingface.co/acme/llama3/tree/v2", HubModel("acme/llama3", "v2")),
        ("acme/llama3@v1", HubModel("acme/llama3", "v1")),
    ]
    for text, model in typed:
        # Typed once; asked again (refused), the user cancels.
        answers = [text, ""]
        monkeypatch.setattr(
            QInputDialog,
            "getItem",
            staticmethod(lambda *a, answers=answers: (answers.pop(0), True)),
        )
        assert ask_model(None) == model
    assert warnings == []
    # Still refused, and asked again: not a model (a dataset's page), a malformed name.
    answers = ["https://huggingface.co/datasets/acme/web", "hf:acme", ""]
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(lambda *a: (answers.pop(0), True)))
    assert ask_model(None) is None
    assert [w.split(":")[0] for w in warnings] == ["https", "hf"]
    assert "datasets/acme/web: expected a Hugging Face model" in warnings[0]


def test_a_cancelled_ask_changes_nothing(qtbot, window):
    picker = window.picker
    before = picker.key
    picker.ask_model = lambda: None
    choose_action(picker, ASK_HUB)
    assert picker.key == before and window.state.picked is None


def test_compare_and_report_name_the_models(qtbot, window, snapshots, tmp_path):
    compare = window.compare
    compare.choices[0].pick(preset_key("o200k_base"))
    compare.choices[1].add_hub_model(HubModel("acme/ll", "v1"))
    with qtbot.waitSignal(compare.compared, timeout=60_000) as blocker:
        compare.set_text(TEXT)
        window.tabs.setCurrentWidget(compare)
    comparison = blocker.args[0]
    assert comparison.b.label == "acme/ll@v1"
    assert comparison.b.tokens == len(own_ids(snapshots["ll"], TEXT))

    report = window.report
    report.choices[0].pick(preset_key("o200k_base"))
    report.choices[1].add_hub_model(HubModel("acme/uni"))
    report.choices[2].add_hub_model(HubModel("acme/ll", "v1"))
    report.choices[3].pick(NONE)
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
    note_label = window.editor_tokenizer.note
    qtbot.waitUntil(lambda: "Could not load" in note_label.text(), timeout=30_000)
    note = note_label.text()
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
            and "1.0 MB of 4.0 MB" in picker.progress.dialog.labelText()
        ),
        timeout=30_000,
    )
    assert "Downloading the tokenizer of acme/new" in picker.progress.dialog.labelText()
    window.editor.set_text("the GUI thread is free")  # the GUI answers meanwhile
    release.set()
    bar = window.editor_tokenizer
    qtbot.waitUntil(lambda: not bar.busy and window.state.picked is not None, timeout=30_000)
    assert not picker.progress.dialog.isVisible()
    assert recent_models()[0] == "acme/new"


def test_a_download_has_a_dialog_with_cancel_from_its_start(qtbot, window, monkeypatch, snapshots):
    """Issue 33, defect 8: the dialog shows while the Hub is still being asked (before any
    byte), has Cancel, and Cancel stops the download: the editor keeps the tokenizer it showed,
    says the download was cancelled, and no error is reported."""
    import threading

    from PySide6.QtWidgets import QPushButton
    from test_failed_picks import errors_of

    asked, stopped = threading.Event(), threading.Event()

    def download(repo_id, filename, *, revision=None, tqdm_class=None, **kwargs):
        asked.wait(30)  # the Hub has not answered yet
        bar = tqdm_class(total=4_000_000, unit="B")
        try:
            for _ in range(3000):  # the bytes come until the download is stopped
                bar.update(1_000)
                threading.Event().wait(0.01)
        except BaseException:
            stopped.set()
            raise
        return str(snapshots["uni"])

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    shown = errors_of(window)
    picker = window.picker
    picker.pick(preset_key("gpt2"))
    qtbot.waitUntil(lambda: window.state.picked is not None and not window.editor.busy)
    gpt2 = window.state.picked
    picker.add_hub_model(HubModel("acme/slow"))
    progress = picker.progress
    qtbot.waitUntil(
        lambda: progress.dialog is not None and progress.dialog.isVisible(), timeout=10_000
    )
    assert "Asking the Hugging Face Hub" in progress.dialog.labelText()
    assert "acme/slow" in progress.dialog.labelText()
    cancel = [b for b in progress.dialog.findChildren(QPushButton) if b.text() == "Cancel"]
    assert cancel and cancel[0].isVisible()
    asked.set()
    qtbot.waitUntil(lambda: "Downloading" in progress.dialog.labelText(), timeout=10_000)
    cancel[0].click()
    assert not progress.dialog.isVisible()
    qtbot.waitUntil(stopped.is_set, timeout=10_000)
    qtbot.waitUntil(lambda: not window.editor_tokenizer.busy, timeout=30_000)
    assert picker.key == preset_key("gpt2") and window.state.picked is gpt2
    assert "download cancelled" in window.editor_tokenizer.note.text()
    assert shown == []
    assert "acme/slow" not in recent_models()


def test_cancel_while_the_hub_is_asked_leaves_compare_quietly(
    qtbot, window, monkeypatch, snapshots
):
    """Cancelled before any byte came: however the fetch then ends (here the Hub's own
    'not in the cache' error, as offline), the pick is undone with no error dialog."""
    import threading

    from PySide6.QtCore import Qt
    from test_failed_picks import errors_of

    asked = threading.Event()

    def download(repo_id, filename, *, revision=None, tqdm_class=None, **kwargs):
        asked.wait(30)
        raise hub_error(errors.LocalEntryNotFoundError)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    compare = window.compare
    shown = errors_of(window)
    with qtbot.waitSignal(compare.compared, timeout=60_000):
        window.tabs.setCurrentWidget(compare)
    left = compare.choices[0]
    before = left.key
    left.add_hub_model(HubModel("acme/away"))
    dialog = lambda: left.progress.dialog  # noqa: E731
    qtbot.waitUntil(lambda: dialog() is not None and dialog().isVisible(), timeout=10_000)
    qtbot.keyClick(dialog(), Qt.Key.Key_Escape)  # Esc cancels as the button does
    asked.set()
    qtbot.waitUntil(lambda: not compare.busy and left.key == before, timeout=30_000)
    assert window.hub.pane(left.pane).key == before
    assert not dialog().isVisible()
    assert shown == []


def test_a_fetch_that_fails_at_once_never_shows_its_dialog_later(qtbot):
    """The first fetch in a process that fails at once (offline) leaves nothing that would show
    the dialog later. QProgressDialog shows itself from a timer of its own, started when it is
    made (4 s) or given its first value; finish() hid the dialog but left that timer, which
    then showed "Asking the Hugging Face Hub…" for a pick already failed, and left it shown.
    Waiting those seconds out would make a slow test and one that says nothing about a timer
    restarted later, so this checks the cause: once a fetch is over, none of the dialog's own
    timers is running (the only way it shows itself), and the dialog is hidden."""
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QWidget

    from bpe_studio.gui.views.hub_models import DownloadProgress

    parent = QWidget()
    qtbot.addWidget(parent)
    parent.show()
    progress = DownloadProgress(parent)

    def own_timers_running() -> list[QTimer]:
        timers = progress.dialog.findChildren(
            QTimer, options=Qt.FindChildOption.FindDirectChildrenOnly
        )
        return [t for t in timers if t.isActive()]

    for report in (False, True):  # fails before any byte; fails after a first report
        fetch = progress.callback("meta-llama/Llama-3.1-8B")
        qtbot.waitUntil(lambda: progress.dialog is not None and progress._active)
        if report:
            fetch(0, 4_000_000)
            qtbot.waitUntil(lambda: "Downloading" in progress.dialog.labelText())
        progress.finish()
        assert not progress.dialog.isVisible()
        assert own_timers_running() == []


def test_a_fetch_cancelled_before_its_start_is_heard_shows_no_dialog(qtbot):
    """Seen in a loaded CI run: a Hub fetch began (its job thread said so), GPT-2 was picked
    before the GUI thread heard that, and the pick's cancel came first. The late "began"
    then started the dialog's timer for a fetch already cancelled: "Asking the Hugging Face
    Hub…" showed over the GPT-2 pick and stayed, as that fetch's end no longer matched the
    one under way. The test holds the GUI thread's events as the race did."""
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QWidget

    from bpe_studio.gui.views.hub_models import DownloadProgress

    parent = QWidget()
    qtbot.addWidget(parent)
    parent.show()
    progress = DownloadProgress(parent)
    fetch = progress.callback("acme/slow", "hub:acme/slow")  # the job thread's start
    fetch(16_000, 4_000_000)  # and its first bytes, both queued, not yet heard
    progress.cancel()  # the other pick, before the GUI thread went round
    progress.finish(fetch)  # and the fetch's end, which may come before or after the news
    QCoreApplication.processEvents()  # the queued news is heard after them
    # The timer is what would show the dialog (SHOW_AFTER_MS later): checked, not waited out.
    assert not progress._show_timer.isActive()
    assert progress.dialog is None or not progress.dialog.isVisible()


def test_a_malformed_remembered_name_is_not_offered(qtbot, settings_in_tmp):
    # A settings file edited by hand (or left by an older version) listed "bad name here":
    # choosing it raised a traceback on the GUI thread and left the box naming it while the
    # editor showed the tokenizer before.
    from PySide6.QtCore import QSettings

    from bpe_studio.gui.views.hub_models import RECENT_KEY

    QSettings("bpe-studio", "bpe-studio").setValue(RECENT_KEY, ["bad name here", "acme/ok"])
    assert recent_models() == ["acme/ok"]
    picker = TokenizerPicker(AppModel(), pane="a new pane")
    qtbot.addWidget(picker)
    assert hub_key("acme/ok") in picker.keys()
    assert not any("bad name" in picker.itemText(i) for i in range(picker.count()))


def hub_keys(picker: TokenizerPicker) -> list[str]:
    curated = {hub_key(repo) for _, repo in POPULAR}
    return [k for k in picker.keys() if k.startswith("hf:") and k not in curated]


def test_the_menus_list_the_recent_models_the_settings_hold_now(qtbot, settings_in_tmp):
    # A session audit: a model opened in another window of the app (another process) was
    # not listed until a restart, and one opened again stayed where it was listed, not first.
    from PySide6.QtCore import QSettings

    from bpe_studio.gui.views.hub_models import RECENT_KEY, remember_model

    hub = AppModel()
    picker = TokenizerPicker(hub, pane="a new pane", default=preset_key("gpt2"))
    qtbot.addWidget(picker)
    picks: list[str] = []
    picker.choice_changed.connect(lambda: picks.append(picker.key))
    assert hub_keys(picker) == []
    # Another process of the app remembers two models: its file holds them, no signal comes.
    QSettings("bpe-studio", "bpe-studio").setValue(RECENT_KEY, ["acme/b", "acme/a"])
    picker.showPopup()
    picker.hidePopup()
    assert hub_keys(picker) == [hub_key("acme/b"), hub_key("acme/a")]
    QSettings("bpe-studio", "bpe-studio").setValue(RECENT_KEY, ["acme/a", "acme/b"])
    picker.showPopup()
    picker.hidePopup()
    assert hub_keys(picker) == [hub_key("acme/a"), hub_key("acme/b")]
    # Opened again in this process: first at once, in every menu.
    remember_model("acme/b")
    assert hub_keys(picker) == [hub_key("acme/b"), hub_key("acme/a")]
    # The box still shows its choice, and no pick was made by listing.
    assert picker.key == preset_key("gpt2") and picks == []
    assert hub.pane("a new pane").key == preset_key("gpt2")


def test_a_model_opened_is_listed_where_the_settings_keep_nothing(qtbot, settings_in_tmp):
    from pathlib import Path

    from bpe_studio.gui.views.common import app_settings
    from bpe_studio.gui.views.hub_models import remember_model

    Path(app_settings().fileName()).mkdir(parents=True)  # the settings file is a folder
    picker = TokenizerPicker(AppModel(), pane="a new pane")
    qtbot.addWidget(picker)
    remember_model("acme/c")
    picker.showPopup()
    picker.hidePopup()
    assert hub_keys(picker) == [hub_key("acme/c")]


def _stalled_download(monkeypatch, snapshots, began: list[str] | None = None):
    """A download whose bytes stop coming (a stalled link), until ``release`` is set; the
    events: ``asked`` once one has begun, ``ended`` once one ended. ``began`` lists the
    models whose download began."""
    import threading

    asked, release, ended = threading.Event(), threading.Event(), threading.Event()

    def download(repo_id, filename, *, revision=None, tqdm_class=None, **kwargs):
        try:
            if began is not None:
                began.append(repo_id)
            bar = tqdm_class(total=4_000_000, unit="B")
            bar.update(16_000)
            asked.set()
            release.wait(30)
            return str(snapshots["uni"])
        finally:
            ended.set()

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    return asked, release, ended


def test_another_pick_stops_a_stalled_download(qtbot, window, monkeypatch, snapshots):
    """The Hub audit: GPT-2 picked while a model downloaded stayed "Loading GPT-2…" until
    that download ended, its dialog shown all along."""
    asked, release, ended = _stalled_download(monkeypatch, snapshots)
    picker = window.picker
    picker.add_hub_model(HubModel("acme/slow"))
    qtbot.waitUntil(asked.is_set, timeout=10_000)
    picker.pick(preset_key("gpt2"))
    bar = window.editor_tokenizer
    qtbot.waitUntil(lambda: not bar.busy and picker.key == preset_key("gpt2"), timeout=10_000)
    assert "50,257 tokens" in bar.note.text()
    assert not ended.is_set()  # shown while the stalled download was still under way
    assert picker.progress.dialog is None or not picker.progress.dialog.isVisible()
    release.set()
    qtbot.waitUntil(ended.is_set, timeout=10_000)
    assert "acme/slow" not in recent_models()


def test_closing_stops_a_stalled_download(qtbot, window, monkeypatch, snapshots):
    """The Hub audit: closing the window mid-download froze it until the download ended."""
    asked, release, ended = _stalled_download(monkeypatch, snapshots)
    window.picker.add_hub_model(HubModel("acme/slow"))
    qtbot.waitUntil(asked.is_set, timeout=10_000)
    window.close_without_asking()
    assert not ended.is_set()  # closed while the stalled download was still under way
    release.set()
    qtbot.waitUntil(ended.is_set, timeout=10_000)


def test_a_second_hub_pick_is_stopped_by_a_third(qtbot, window, monkeypatch, snapshots):
    """The second Hub audit: model A, then model B mid-download, then GPT-2: A's end, which
    came after B had begun, cleared B's record, so GPT-2 waited for B's whole download and
    closing the window froze for it."""
    began: list[str] = []
    asked, release, ended = _stalled_download(monkeypatch, snapshots, began)
    picker, bar = window.picker, window.editor_tokenizer
    picker.add_hub_model(HubModel("acme/a"))
    qtbot.waitUntil(lambda: began == ["acme/a"], timeout=10_000)
    picker.add_hub_model(HubModel("acme/b"))
    qtbot.waitUntil(lambda: began == ["acme/a", "acme/b"], timeout=10_000)
    qtbot.waitUntil(lambda: picker.progress.key == hub_key("acme/b"), timeout=10_000)
    picker.pick(preset_key("gpt2"))
    qtbot.waitUntil(lambda: not bar.busy and "50,257 tokens" in bar.note.text(), timeout=10_000)
    assert not release.is_set()  # while B's download was stalled
    release.set()


def test_a_cancel_in_compare_holds_when_the_page_computes_again(
    qtbot, window, monkeypatch, snapshots
):
    """The second Hub audit: a model downloading on Compare's left, the text edited (the
    page's job made stale), then Cancel: the cancelled job's answer was dropped, the newer
    job downloaded the model again, and Compare showed it."""
    began: list[str] = []
    asked, release, ended = _stalled_download(monkeypatch, snapshots, began)
    compare = window.compare
    with qtbot.waitSignal(compare.compared, timeout=60_000):
        window.tabs.setCurrentWidget(compare)
    left = compare.choices[0]
    before = left.key
    left.add_hub_model(HubModel("acme/c"))
    qtbot.waitUntil(asked.is_set, timeout=10_000)
    compare.set_text("the text changed while the model downloads")
    qtbot.waitUntil(lambda: left.progress.key == hub_key("acme/c"), timeout=10_000)
    left.progress.cancel()  # as the dialog's Cancel does
    qtbot.waitUntil(lambda: not compare.busy and left.key == before, timeout=30_000)
    assert window.hub.pane(left.pane).key == before
    assert began == ["acme/c"]  # not downloaded again
    release.set()


def test_the_lab_stops_a_stalled_download_on_cancel(qtbot, window, monkeypatch, snapshots):
    """The second Hub audit: the Vocabulary lab fetched without a cancel: Cancel, another
    pick and closing the window all waited for the whole download."""
    asked, release, ended = _stalled_download(monkeypatch, snapshots)
    lab = window.lab
    window.tabs.setCurrentWidget(lab)
    lab.picker.add_hub_model(HubModel("acme/d"))
    qtbot.waitUntil(asked.is_set, timeout=30_000)
    lab.cancel()
    qtbot.waitUntil(lambda: not lab.busy, timeout=10_000)
    assert not ended.is_set()  # stopped while the download was stalled
    release.set()


def test_a_hub_models_failure_names_it_once(qtbot):
    """The second Hub audit: "Could not load acme/x: hf:acme/x: its tokenizer.json ...": the
    damaged-cache messages begin with the source, hf: and the name."""
    from bpe_studio.gui.views.picker import FailedPick

    said = "hf:acme/x: its tokenizer.json in the Hugging Face cache is empty; remove it"
    assert FailedPick("editor", hub_key("acme/x"), "acme/x", said).what == said
    assert FailedPick("editor", "k", "x.json", "not JSON").what == "x.json: not JSON"
