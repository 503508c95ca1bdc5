"""Help: the keyboard shortcuts, and what the app is.

What it does: :func:`shortcut_rows` lists every shortcut a window answers, read from the
window itself (its menus' entries and its ``QShortcut`` objects, each with the words its
``whatsThis`` holds), so the list never goes stale; :class:`ShortcutsDialog` shows them (F1).
:func:`about_text` says what BPE Studio is, its version and what it runs on; :func:`show_about`
shows it.
What it leaves out: the menus (``menu_bar``).
"""

from __future__ import annotations

import html
import platform

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ... import __version__


def _keys(sequence: QKeySequence) -> str:
    return sequence.toString(QKeySequence.SequenceFormat.NativeText)


# Keys a view answers itself (its keyPressEvent, its table's activation), not as a shortcut.
VIEW_KEYS = (
    ("Ctrl+Enter", "Editor: why this token, for the token at the cursor"),
    ("Ctrl+Tab", "Editor: leave it for the next control (Tab types a tab)"),
    ("Enter", "Merges: move the timeline to the merge selected"),
    ("Arrows, Enter", "Merge tree: step through its nodes; follow the one outlined"),
    ("Tab, Shift+Tab", "Tables: leave for the next (previous) control; arrows move in them"),
)


# The most of the screen's height the shortcuts' list takes.
SCREEN_SHARE = 0.85


def shortcut_rows(window: QWidget) -> list[tuple[str, str]]:
    """(keys, what they do) of every shortcut ``window`` answers: its menus' entries, then its
    shortcuts, in the order they were made, then the keys its views answer (``VIEW_KEYS``)."""
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    for action in window.findChildren(QAction):
        keys = _keys(action.shortcut())
        if keys and keys not in seen and action.text():
            seen.add(keys)
            what = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
            rows.append((keys, what.removesuffix("…")))
    for shortcut in window.findChildren(QShortcut):
        keys = ", ".join(filter(None, map(_keys, shortcut.keys())))
        if keys and keys not in seen and shortcut.whatsThis():
            seen.add(keys)
            rows.append((keys, shortcut.whatsThis()))
    return rows + list(VIEW_KEYS)


class ShortcutsDialog(QDialog):
    """Every shortcut of the window, in a table."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 2, self)
        self.table.setHorizontalHeaderLabels(["Keys", "What they do"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        # It takes focus (first, before Close) so that PgDn, the arrows and End scroll it:
        # its last rows are out of sight on a short screen, where a mouse may be the only way.
        self.table.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        for row, (keys, what) in enumerate(rows):
            self.table.setItem(row, 0, QTableWidgetItem(keys))
            self.table.setItem(row, 1, QTableWidgetItem(what))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, parent=self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        height = self.table.verticalHeader().length() + header.height() + 8
        # Whole if the screen has room, else a share of it that leaves the title bar and the
        # Close button on screen (a scaled screen has few logical pixels); the table scrolls.
        screen = window.screen().availableGeometry()
        self.resize(520, min(height + 60, int(screen.height() * SCREEN_SHARE)))

    def rows(self) -> list[tuple[str, str]]:
        table, rows = self.table, []
        for r in range(table.rowCount()):
            keys, what = table.item(r, 0), table.item(r, 1)
            if keys is not None and what is not None:
                rows.append((keys.text(), what.text()))
        return rows


def about_text() -> str:
    """What the app is, its version, and what it runs on (rich text)."""
    return (
        f"<h3>BPE Studio {html.escape(__version__)}</h3>"
        "<p>Train byte-level BPE tokenizers exactly as Stanford CS336 (assignment 1) "
        "specifies, watch them learn merge by merge, and see how any text is tokenized: "
        "your own tokenizers, GPT-2's, GPT-4's, GPT-4o's and open models' from the Hugging "
        "Face Hub.</p>"
        "<p>A library, a command line (<code>bpe-studio train</code>, <code>encode</code>, "
        "<code>decode</code>, <code>inspect</code>) and this app, over the same engine. "
        "MIT licence.</p>"
        f"<p>Python {html.escape(platform.python_version())} · PySide6 "
        f"{html.escape(pyside_version)} · Qt {html.escape(qVersion())}</p>"
    )


def show_about(parent: QWidget) -> None:
    """The About box (modal)."""
    QMessageBox.about(parent, "About BPE Studio", about_text())
