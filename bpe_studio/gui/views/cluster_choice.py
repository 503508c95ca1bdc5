"""Where the app counts a corpus's pre-tokens: this machine, a local Dask cluster, a scheduler.

What it does: :class:`ClusterChoice` picks where pre-tokens are counted: this machine's
processes, a local Dask cluster of the panel's worker count, or a running scheduler's address
(checked as typed, with the core's own message, ``core.corpus.cluster.parse_address``).
What it leaves out: the panel's layout (``controls``), counting (``core.corpus.cluster``).
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QWidget

from ...core.corpus.cluster import LOCAL, parse_address
from .training_inputs import edit_beside, mark_problem, reveal

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
        self.address_edit = edit_beside(self, self.combo, "tcp://host:8786", 110)
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
        reveal(self.address_edit, self.where() == "remote")
        self._on_address()

    @Slot()
    def _on_address(self) -> None:
        mark_problem(self.address_edit, self.problem())
        self.changed.emit()
