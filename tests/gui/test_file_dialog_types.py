"""The app's file dialogs tell the files they list apart by name, never by reading them.

Found on a real display, as root: typing ``/proc/report.csv`` into Export CSV froze the app for
good. Qt's own icon provider reads each listed file's first bytes on the GUI thread to name its
type, and a read of ``/proc/kmsg`` never returns. A file that is not what its name says stands in
for it here: an extension-less file that starts as a PDF does.
"""

from __future__ import annotations

from PySide6.QtCore import QFileInfo, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QFileIconProvider,
    QFileSystemModel,
    QLineEdit,
)

from bpe_studio.gui.views import file_dialogs

PDF_START = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"
TYPE_COLUMN = 2


def listed_type(folder, name, ask) -> str | None:
    """The Type column the dialog ``ask`` opens shows for ``folder/name`` (None when the
    dialog never listed it)."""
    path = str(folder / name)
    seen: list[str] = []
    polls = [0]

    def look() -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, QFileDialog):
            model = dialog.findChild(QFileSystemModel)
            index = model.index(path) if model is not None else None
            if index is not None and index.isValid():
                kind = model.index(index.row(), TYPE_COLUMN, index.parent()).data()
                if kind:
                    seen.append(str(kind))
                    dialog.reject()
                    return
            polls[0] += 1
            if polls[0] > 500:  # never listed: answer, so that the test fails rather than hangs
                dialog.reject()
                return
        QTimer.singleShot(10, look)

    QTimer.singleShot(0, look)
    ask()
    return seen[0] if seen else None


def test_a_file_is_typed_by_its_name_in_every_dialog(qtbot, tmp_path):
    (tmp_path / "report").write_bytes(PDF_START)
    (tmp_path / "notes.txt").write_text("plain words\n", encoding="utf-8")
    default = QFileIconProvider().type(QFileInfo(str(tmp_path / "report")))
    assert "PDF" in default  # Qt's own provider reads the file (the test is meaningful)
    file_dialogs.remember(file_dialogs.CORPUS, tmp_path)
    file_dialogs.remember(file_dialogs.EXPORT, tmp_path)
    asks = {
        "open": lambda: file_dialogs.open_file(None, file_dialogs.CORPUS, "Open", "All (*)"),
        "open several": lambda: file_dialogs.open_files(None, file_dialogs.CORPUS, "Open", ""),
        "save": lambda: file_dialogs.save_file(
            None, file_dialogs.EXPORT, "Export", "report.csv", "All (*)"
        ),
    }
    for what, ask in asks.items():
        kind = listed_type(tmp_path, "report", ask)
        assert kind is not None, what
        assert "PDF" not in kind, (what, kind)
        text = listed_type(tmp_path, "notes.txt", ask)
        assert text is not None and "text" in text.lower(), (what, text)  # names still tell


def test_the_provider_is_shared_and_names_folders(tmp_path):
    provider = file_dialogs.by_name()
    assert provider is file_dialogs.by_name()  # a dialog does not own its provider
    (tmp_path / "report").write_bytes(PDF_START)
    assert "PDF" not in provider.type(QFileInfo(str(tmp_path / "report")))
    assert provider.type(QFileInfo(str(tmp_path))) == "Folder"
    assert isinstance(provider.icon(QFileInfo(str(tmp_path / "report"))), QIcon)


def _answer_with(name: str) -> None:
    """Type ``name`` into the save dialog once it is open, and accept it."""

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QFileDialog):
            QTimer.singleShot(10, answer)
            return
        edit = dialog.findChild(QLineEdit, "fileNameEdit")
        edit.setText(name)
        dialog.accept()

    QTimer.singleShot(0, answer)


def test_a_name_typed_without_an_extension_gets_the_filters(qtbot, tmp_path):
    # Found by an audit: "report" typed into Export CSV was saved as "report", which no
    # spreadsheet offers to open; a name with its own extension keeps it.
    file_dialogs.remember(file_dialogs.EXPORT, tmp_path)
    for typed, file_filter, expected in [
        ("report", "CSV (*.csv)", "report.csv"),
        ("chart", "PNG image (*.png)", "chart.png"),
        ("notes.txt", "CSV (*.csv)", "notes.txt"),
        ("anything", "All (*)", "anything"),
    ]:
        _answer_with(typed)
        chosen = file_dialogs.save_file(
            None, file_dialogs.EXPORT, "Export", "proposed.csv", file_filter
        )
        assert chosen == str(tmp_path / expected), (typed, file_filter)
