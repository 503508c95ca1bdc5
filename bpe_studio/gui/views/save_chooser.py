"""Asking where to save something, then saving it there.

What it does: :func:`choose_and_save` shows the save-file dialog (in the folder the user last
exported to, ``file_dialogs``) and, unless it is cancelled, calls ``save`` with the chosen
path; the folder is remembered for the next export once ``save`` says it succeeded. What it
leaves out: writing the file and reporting errors (``save`` does both).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QWidget

from .file_dialogs import EXPORT, remember, save_file


def choose_and_save(
    parent: QWidget, caption: str, name: str, file_filter: str, save: Callable[[str], object]
) -> None:
    """``name``: the file name the dialog proposes; ``file_filter``: e.g. ``"CSV (*.csv)"``;
    ``save(path)``: true when the file was written."""
    path = save_file(parent, EXPORT, caption, name, file_filter)
    if path and save(path):
        remember(EXPORT, path)
