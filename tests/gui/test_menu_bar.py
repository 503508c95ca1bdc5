"""The menu bar and its shortcuts (issue 33, defect 12): File (Open corpus, Load tokenizer,
Save tokenizer, Quit), View, Help (Keyboard shortcuts on F1, About); Ctrl+O, Ctrl+S, Ctrl+Q
answer from the keyboard; the file dialogs open in the user's last folder, else home, never
inside the installed package (where the bundled sample lives)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_helpers import FIXTURES, save_ended, train_in_window
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QKeySequence, QScreen
from PySide6.QtWidgets import QApplication, QFileDialog, QTableWidget

from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.views import file_dialogs
from bpe_studio.gui.views.help_dialogs import ShortcutsDialog


def menu_texts(menu) -> dict[str, str]:
    """Each entry's text (without its '&') and its shortcut."""
    return {
        action.text().replace("&", ""): action.shortcut().toString()
        for action in menu.actions()
        if not action.isSeparator()
    }


@pytest.fixture
def asked(monkeypatch, tmp_path):
    """The folder each file dialog opened in; the dialogs answer from ``answers``."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    seen: list[str] = []
    answers: list[object] = []

    def dialog(parent, caption, start, file_filter, mode):
        seen.append(str(start))
        answer = answers.pop(0) if answers else ""
        return [answer] if answer else []

    monkeypatch.setattr(file_dialogs, "run_dialog", dialog)
    return home, seen, answers


def press(qtbot, window, keys: str) -> None:
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5_000)
    sequence = QKeySequence(keys)[0]
    qtbot.keyClick(window, sequence.key(), sequence.keyboardModifiers())


def test_the_menus_hold_what_a_user_looks_for(window):
    bar = window.menuBar()
    titles = [a.text().replace("&", "") for a in bar.actions()]
    assert titles == ["File", "View", "Run", "Help"]
    file = menu_texts(window.menus.file_menu)
    assert file["Open corpus…"] == "Ctrl+O"
    assert file["Load tokenizer…"] == "Ctrl+L"
    save = window.menus.save_action.text().replace("&", "")
    assert save == "Save tokenizer as GPT-2 files (vocab.json + merges.txt)…"  # not "((…))"
    assert window.menus.save_action.shortcut().toString() == "Ctrl+S"
    assert file["Quit"] == "Ctrl+Q"
    help_ = menu_texts(window.menus.help_menu)
    assert help_["Keyboard shortcuts"] == "F1" and "About BPE Studio" in help_
    view = menu_texts(window.menus.view_menu)
    assert "Appearance" in view


def test_f1_lists_the_shortcuts_and_ctrl_q_quits(qtbot, window):
    press(qtbot, window, "F1")
    qtbot.waitUntil(lambda: bool(window.findChildren(ShortcutsDialog)), timeout=5_000)
    dialog = window.findChildren(ShortcutsDialog)[0]
    qtbot.waitUntil(dialog.isVisible, timeout=5_000)
    grid = dialog.findChild(QTableWidget)
    keys = {grid.item(row, 0).text() for row in range(grid.rowCount())}
    assert {"Ctrl+O", "Ctrl+S", "Ctrl+Q", "F1", "Ctrl+Enter", "Ctrl+Tab"} <= keys
    assert {"Alt+Shift+Left, Alt+PgUp", "Alt+Shift+Right, Alt+PgDown"} <= keys  # both listed
    dialog.close()
    press(qtbot, window, "Ctrl+Q")
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5_000)


def test_dialogs_open_at_home_then_in_the_last_folder_never_in_the_package(
    qtbot, window, asked, tmp_path
):
    home, seen, answers = asked
    # Ctrl+O: the first dialog opens at home.
    press(qtbot, window, "Ctrl+O")
    assert seen == [str(home)]
    # The bundled sample chosen: the next dialog does not open inside the package.
    answers.append(str(DEMO_CORPUS))
    window.menus.open_action.trigger()
    assert window.state.corpus == DEMO_CORPUS.resolve()
    press(qtbot, window, "Ctrl+L")
    assert seen[-1] == str(home) and "resources" not in seen[-1]
    # A corpus of the user's: the next dialogs open in its folder.
    mine = tmp_path / "texts" / "mine.txt"
    mine.parent.mkdir()
    mine.write_text((FIXTURES / "tinystories_sample.txt").read_text(encoding="utf-8")[:20_000])
    answers.append(str(mine))
    press(qtbot, window, "Ctrl+O")
    assert window.state.corpus == mine.resolve()
    press(qtbot, window, "Ctrl+L")
    assert Path(seen[-1]) == mine.parent
    # Ctrl+S saves the trained run, asking for a folder where the last one was.
    train_in_window(qtbot, window, mine, 300)
    assert window.menus.save_action.isEnabled()
    out = tmp_path / "out"
    out.mkdir()
    answers.append(str(out))
    press(qtbot, window, "Ctrl+S")
    assert Path(seen[-1]) == mine.parent
    qtbot.waitUntil(lambda: any(out.iterdir()), timeout=30_000)


def test_a_folder_a_save_failed_in_is_not_the_next_dialogs(qtbot, window, asked, tmp_path):
    # A session audit: after a save that failed (a read-only folder, a full disk), the next
    # save dialog opened in that folder.
    home, seen, answers = asked
    mine = tmp_path / "texts" / "mine.txt"
    mine.parent.mkdir()
    mine.write_text((FIXTURES / "tinystories_sample.txt").read_text(encoding="utf-8")[:20_000])
    answers.append(str(mine))
    window.menus.open_action.trigger()
    train_in_window(qtbot, window, mine, 300)
    failing = tmp_path / "failing"
    (failing / "vocab.json").mkdir(parents=True)  # the save cannot write its vocab.json
    answers.append(str(failing))
    window.menus.save_action.trigger()
    save_ended(qtbot, window)
    assert window.last_error is not None and str(failing) in window.last_error
    window.error_box.close()
    window.menus.save_action.trigger()  # cancelled (no answer)
    save_ended(qtbot, window)
    assert Path(seen[-1]) == mine.parent
    out = tmp_path / "out"
    out.mkdir()
    answers.append(str(out))
    window.menus.save_action.trigger()
    save_ended(qtbot, window)
    assert (out / "vocab.json").is_file()
    window.menus.save_action.trigger()  # cancelled
    save_ended(qtbot, window)
    assert Path(seen[-1]) == out


def test_ctrl_s_saves_in_the_format_saved_last_not_one_that_failed(qtbot, window, asked, tmp_path):
    # A house audit: the format was remembered as its entry was clicked, so a save that
    # failed (a folder it cannot write in) or was cancelled became the format Ctrl+S used,
    # and the next start's, though tokenizer.json had been saved last.
    from bpe_studio.gui.views.controls import SAVE_FORMATS
    from bpe_studio.gui.views.menu_bar import last_save_format

    home, seen, answers = asked
    mine = tmp_path / "mine.txt"
    mine.write_text((FIXTURES / "tinystories_sample.txt").read_text(encoding="utf-8")[:20_000])
    train_in_window(qtbot, window, mine, 300)
    out = tmp_path / "out"
    out.mkdir()
    answers.append(str(out))
    window.menus.save("hf")
    save_ended(qtbot, window)
    assert (out / "tokenizer.json").is_file()
    failing = tmp_path / "failing"
    (failing / "tokenizer.tiktoken").mkdir(parents=True)  # the save cannot write it
    answers.append(str(failing))
    window.menus.save("tiktoken")
    save_ended(qtbot, window)
    assert window.last_error is not None and str(failing) in window.last_error
    window.error_box.close()
    window.menus.save("gpt2")  # cancelled (no answer)
    save_ended(qtbot, window)
    assert last_save_format(SAVE_FORMATS) == "hf"
    assert "Hugging Face" in window.menus.save_action.text()
    again = tmp_path / "again"
    again.mkdir()
    answers.append(str(again))
    window.menus.save_action.trigger()  # Ctrl+S
    save_ended(qtbot, window)
    assert [p.name for p in again.iterdir()] == ["tokenizer.json"]


def test_an_export_that_failed_leaves_the_folder_unremembered(qtbot, asked, tmp_path):
    from bpe_studio.gui.views.save_chooser import choose_and_save

    home, seen, answers = asked
    failing, kept = tmp_path / "failing", tmp_path / "kept"
    failing.mkdir()
    kept.mkdir()
    answers.append(str(failing / "report.csv"))
    choose_and_save(None, "Export", "report.csv", "CSV (*.csv)", lambda path: False)
    assert file_dialogs.start_folder(file_dialogs.EXPORT) == str(home)
    answers.append(str(kept / "report.csv"))
    choose_and_save(None, "Export", "report.csv", "CSV (*.csv)", lambda path: True)
    assert file_dialogs.start_folder(file_dialogs.EXPORT) == str(kept)


def test_f1s_list_fits_the_screen_and_scrolls_by_keys(qtbot, window, monkeypatch):
    # A keyboard audit: at twice the scale on a 1080 px screen (540 logical px) the dialog's
    # Close button was below the screen's edge, and no key scrolled the table to its last rows.
    short = QRect(0, 0, 960, 400)
    monkeypatch.setattr(QScreen, "availableGeometry", lambda screen: short)
    dialog = ShortcutsDialog(window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(dialog.isVisible, timeout=5_000)
    assert dialog.height() <= 0.86 * short.height()
    table = dialog.table
    assert table.focusPolicy() & Qt.FocusPolicy.TabFocus
    table.setFocus()
    qtbot.waitUntil(table.hasFocus, timeout=5_000)
    last = table.model().index(table.rowCount() - 1, 0)
    assert table.visualRect(last).bottom() > table.viewport().height()  # out of sight at first
    qtbot.keyClick(table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    rect = table.visualRect(last)
    assert rect.top() >= 0 and rect.bottom() <= table.viewport().height()
    assert not table.selectedIndexes()  # a list to read, not to pick from


def test_file_dialogs_open_roomy(qtbot, window, monkeypatch, tmp_path):
    # A keyboard audit: the dialogs opened at 632x416 whatever the window, their Size and
    # Date columns cut.
    from PySide6.QtCore import QTimer

    monkeypatch.setenv("HOME", str(tmp_path))
    window.resize(1000, 700)  # within the test screen (the dialog stays within it)
    qtbot.waitUntil(lambda: window.width() == 1000 and window.height() == 700)
    seen = []

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QFileDialog):
            QTimer.singleShot(20, answer)
            return
        seen.append(dialog.size())
        dialog.reject()

    for ask in (
        lambda: file_dialogs.open_file(window, file_dialogs.CORPUS, "Open", "Text (*.txt)"),
        lambda: file_dialogs.existing_folder(window, file_dialogs.SAVE, "Save into"),
        window.lab._ask_files,  # the lab's corpus dialog is the app's too
    ):
        QTimer.singleShot(20, answer)
        assert not ask()
    assert len(seen) == 3
    for size in seen:
        assert size.width() >= 0.69 * 1000 and size.height() >= 0.69 * 700, size
