"""Saving a tokenizer's files, off the GUI thread.

What it does: :class:`TokenizerSaver` runs the two slow parts of a Save on a
:class:`~.latest.LatestJob`: :meth:`~TokenizerSaver.check` (what the format refuses or asks
about, ``saving.check_save``) and :meth:`~TokenizerSaver.write` (the files, each atomically:
:func:`write_files`), and reports ``checked`` or ``written`` on the GUI thread. On
GPT-4o's o200k_base each takes one to several seconds, which froze the window when they ran
on the GUI thread. A write that fails reports a :class:`SaveOutcome` whose message names the
file it stopped at.
What it leaves out: the questions asked between the two (``training.save_flow``, on the GUI
thread) and what a save changes in the model.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from ...core.formats.base.data import TokenizerData
from ...core.formats.files import LossyFormatWarning, save_data
from ...core.io.atomic import output_folder
from ...core.io.write_failure import write_failure
from ..model.saving import SaveCheck, check_save
from .latest import LatestJob


@dataclass(frozen=True)
class SaveOutcome:
    """How a write ended: the files written, or (``error``) why not, naming the folder and
    the file the save stopped at."""

    written: tuple[Path, ...] = ()
    error: str | None = None


def write_files(target: Path, data: TokenizerData, format: str) -> SaveOutcome:
    """Write ``data`` into ``target`` in ``format``; what it loses was asked about before,
    so its warnings are not given again. A save that fails takes the folders it made with
    it; one the user had stays."""
    try:
        with output_folder(target), warnings.catch_warnings():
            warnings.simplefilter("ignore", LossyFormatWarning)
            written = save_data(target, data, format)
    except (OSError, ValueError) as error:
        # The file the save stopped at (a folder may refuse one file and not the next, a
        # disk fill up halfway): the folder alone would not say which.
        if isinstance(error, OSError):
            said = write_failure(error.filename or target, error)
        else:
            said = str(error)
        return SaveOutcome(error=f"Could not save the tokenizer to {target}:\n\n{said}")
    return SaveOutcome(written=tuple(written))


class TokenizerSaver(QObject):
    """One save's check or write at a time; ``checked`` / ``written`` / ``failed`` arrive on
    the GUI thread."""

    checked = Signal(object)  # SaveCheck
    written = Signal(object)  # SaveOutcome
    failed = Signal(str)  # the job raised something else: one readable line

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._job = LatestJob("bpe-save", self)
        self._job.done.connect(self._on_done)
        self._job.failed.connect(self.failed)

    def active_threads(self) -> int:
        return self._job.active_threads()

    def check(self, data: TokenizerData, format: str) -> None:
        """Find what saving ``data`` in ``format`` refuses or asks about (``checked``)."""

        def job(is_stale: Callable[[], bool]) -> SaveCheck:
            return check_save(data, format)

        self._job.submit(job)

    def write(self, target: Path, data: TokenizerData, format: str) -> None:
        """Write the files (``written``, also when the write failed)."""

        def job(is_stale: Callable[[], bool]) -> SaveOutcome:
            return write_files(target, data, format)

        self._job.submit(job)

    @Slot(object)
    def _on_done(self, result: SaveCheck | SaveOutcome) -> None:
        if isinstance(result, SaveCheck):
            self.checked.emit(result)
        else:
            self.written.emit(result)

    def cancel(self) -> None:
        """Drop the check or write asked for: nothing more arrives until the next one (a
        write under way still ends, each file atomically)."""
        self._job.cancel()

    def shutdown(self) -> None:
        """Drop what is under way and wait for its thread (closing the window): a write
        under way ends (each file is written atomically), and its news is dropped."""
        self._job.shutdown()
