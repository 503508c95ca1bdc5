"""What the app keeps for the next start (``QSettings``), and saying once when it cannot.

A session audit: with the settings folder on a read-only mount, or ``bpe-studio.conf`` a
folder, the appearance, the recent Hub models and the dialogs' folders were forgotten at the
next start and nothing said so."""

from __future__ import annotations

from pathlib import Path

from bpe_studio.gui.views import file_dialogs, hub_models, kept_settings, theme
from bpe_studio.gui.views.common import app_settings


def settings_file() -> Path:
    return Path(app_settings().fileName())


def unkept_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "settings are not kept" in line]


def set_everything(tmp_path: Path) -> None:
    theme.remember_choice(theme.DARK)
    hub_models.remember_model("acme/x")
    file_dialogs.remember(file_dialogs.CORPUS, tmp_path)


def test_settings_that_are_kept_say_nothing(qtbot, window, tmp_path, capsys):
    set_everything(tmp_path)
    assert unkept_lines(capsys.readouterr().err) == []
    assert window.statusBar().currentMessage() == ""
    assert theme.saved_choice() == theme.DARK


def test_a_settings_file_that_is_a_folder_is_said_once(qtbot, window, tmp_path, capsys):
    conf = settings_file()
    conf.mkdir(parents=True)
    set_everything(tmp_path)
    set_everything(tmp_path)  # every write fails again: still said once
    lines = unkept_lines(capsys.readouterr().err)
    assert len(lines) == 1
    assert lines[0].startswith(f"bpe-studio: settings are not kept: {conf}: is a directory. ")
    message = window.statusBar().currentMessage()
    assert message.startswith(f"Settings are not kept: {conf}: is a directory. ")
    assert message.endswith("; move that folder out of the way.")


def test_a_read_only_settings_folder_is_said_even_when_qt_says_no_error(
    qtbot, window, tmp_path, capsys, monkeypatch
):
    # A read-only mount cannot be made here (the tests may run as root, whom permissions do
    # not stop): the folder's file system says it is read-only, and nothing may be written
    # there. Qt's status of an object that wrote nothing is NoError.
    folder = settings_file().parent
    monkeypatch.setattr(kept_settings, "_writable", lambda path: path != folder)
    monkeypatch.setattr(kept_settings, "_file_system", lambda path: (path == folder, False))
    theme.remember_choice(theme.LIGHT)
    lines = unkept_lines(capsys.readouterr().err)
    assert len(lines) == 1
    assert f"settings are not kept: {settings_file()}: read-only file system. " in lines[0]
    message = window.statusBar().currentMessage()
    assert message.startswith(f"Settings are not kept: {settings_file()}: read-only file system. ")
    assert "make its folder writable" in message


def test_a_settings_folder_that_cannot_be_made_is_named(tmp_path, capsys, monkeypatch):
    # The settings file's folder is missing and its parent refuses it (permissions).
    monkeypatch.setattr(kept_settings, "_writable", lambda path: False)
    monkeypatch.setattr(kept_settings, "_file_system", lambda path: (False, False))
    missing = tmp_path / "config" / "bpe-studio" / "bpe-studio.conf"
    assert kept_settings._why_unwritable(missing) == "permission denied"
    monkeypatch.setattr(kept_settings, "_writable", lambda path: True)
    monkeypatch.setattr(kept_settings, "_file_system", lambda path: (False, True))
    assert kept_settings._why_unwritable(missing) == "no space left on device"
