"""What the app trains on and where it counts: a corpus of one or more files, and a cluster.

What it does: :class:`CorpusSource` is the corpus the user opened: paths, a glob or URLs
(``core.corpus.sources`` resolves them: compressed files, JSON Lines and Parquet records),
with a name for the panel, the stored size and whether it holds records (then a text field
is asked for). ``plain`` is the one plain local text file the sample-reading views (the
compression curve's in-sample text, the report) can read, or None. :class:`ClusterChoice`
picks where pre-tokens are counted: this machine's processes, a local Dask cluster of the
panel's worker count, or a running scheduler's address (checked as typed, with the core's
own message).
What it leaves out: the panel's layout (``controls``), training (``worker``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLineEdit, QWidget

from ..core.corpus.cluster import LOCAL, parse_address
from ..core.corpus.sources import Kind, resolve_corpus
from .training_inputs import PROBLEM_STYLE


@dataclass(frozen=True, slots=True)
class CorpusSource:
    """A corpus as the user named it (``paths``: paths, globs or URLs) and what it holds."""

    paths: tuple[str, ...]
    name: str  # for the panel and messages
    size: int  # bytes as stored
    files: int
    records: bool  # JSON Lines or Parquet records: a text field is needed
    plain: Path | None  # the one plain local text file it is, else None


def corpus_source(paths: list[str]) -> CorpusSource:
    """The corpus ``paths`` name, resolved now (a missing file, a glob that matches nothing or a
    missing package raises the core's error, which names it)."""
    files = resolve_corpus(paths)
    first = paths[0] if len(paths) == 1 else f"{paths[0]} (and {len(paths) - 1} more)"
    single = files[0] if len(files) == 1 else None
    plain = (
        Path(single.url)
        if single is not None and single.plain_local and single.kind is Kind.TEXT
        else None
    )
    local_file = len(paths) == 1 and single is not None and single.local
    return CorpusSource(
        tuple(paths),
        os.path.basename(first) if local_file else first,
        sum(f.size for f in files),
        len(files),
        any(f.kind is not Kind.TEXT for f in files),
        plain,
    )


# The choices: label, and whether the address edit is shown.
WHERE = (("This machine", "here"), ("Local Dask cluster", "local"), ("Dask scheduler", "remote"))


class ClusterChoice(QWidget):
    """Where pre-tokens are counted; ``address(workers)`` is the core's ``cluster`` value."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = QComboBox()
        for label, key in WHERE:
            self.combo.addItem(label, key)
        self.combo.setToolTip(
            "Where the corpus's pre-tokens are counted: this machine's processes, a Dask "
            "cluster of Workers processes started for the run, or a running Dask scheduler "
            "(its workers must reach the corpus by the same path or URL). The merges are the "
            "same; the merging runs here"
        )
        self.address_edit = QLineEdit()
        self.address_edit.setPlaceholderText("tcp://host:8786")
        self.address_edit.setMinimumWidth(140)
        self.address_edit.setVisible(False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.combo)
        layout.addWidget(self.address_edit)
        self.combo.currentIndexChanged.connect(self._on_choice)
        self.address_edit.textChanged.connect(self._on_address)

    def where(self) -> str:
        return str(self.combo.currentData())

    def address(self, workers: int) -> str | None:
        """None (this machine), ``local:N`` or the scheduler's address as typed."""
        where = self.where()
        if where == "here":
            return None
        if where == "local":
            return f"{LOCAL}:{workers}"
        return self.address_edit.text().strip()

    def problem(self) -> str | None:
        if self.where() != "remote":
            return None
        address = self.address_edit.text().strip()
        if not address:
            return "Dask scheduler: type its address (tcp://host:8786)"
        try:
            if parse_address(address) != -1:
                return (
                    "Dask scheduler: give its address (tcp://host:8786); for a local "
                    "cluster choose Local Dask cluster"
                )
        except ValueError as error:
            return f"Dask scheduler: {error}"
        return None

    @Slot()
    def _on_choice(self) -> None:
        remote = self.where() == "remote"
        self.address_edit.setVisible(remote)
        if remote:
            self.address_edit.setFocus()
        self._on_address()

    @Slot()
    def _on_address(self) -> None:
        problem = self.problem()
        self.address_edit.setStyleSheet(PROBLEM_STYLE if problem else "")
        self.address_edit.setToolTip(problem or "")
        self.changed.emit()
