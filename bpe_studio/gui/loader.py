"""Loading a GPT-2-format tokenizer to inspect, off the GUI thread.

What it does: :func:`prepare` reads ``vocab.json`` + ``merges.txt``, builds the
:class:`~bpe_studio.core.Tokenizer` and the merge and vocabulary rows the tables show (counts
unknown), all in plain Python that any thread may run; GPT-2's files take about half a
second. :class:`TokenizerLoader` runs it on a :class:`~.jobs.LatestJob` and reports ``loaded`` or
``failed`` on the GUI thread.
What it leaves out: showing the result (the controller puts it into the state).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from ..core import Tokenizer, infer_special_tokens, load_merges, load_vocab
from .jobs import LatestJob
from .state import LoadedTokenizer, MergeRow, vocab_rows
from .worker import describe_error


def prepare(vocab_file: Path, merges_file: Path) -> LoadedTokenizer:
    """Load and prepare a tokenizer for the views; raises OSError or ValueError naming the
    file (and line) on bad input."""
    vocab = load_vocab(vocab_file)
    merges = load_merges(merges_file)
    specials = infer_special_tokens(vocab, merges)
    tokenizer = Tokenizer(vocab, merges, specials)
    inverse = {tok: i for i, tok in sorted(tokenizer.vocab.items(), reverse=True)}
    rows = [MergeRow(rank, a, b, inverse[a + b]) for rank, (a, b) in enumerate(merges)]
    vocab_table = vocab_rows(tokenizer.vocab, tokenizer.merges)
    return LoadedTokenizer(tokenizer, vocab_file, merges_file, specials, rows, vocab_table)


def _describe(error: BaseException) -> str:
    if isinstance(error, (OSError, ValueError)):
        return describe_error(error)
    return f"{type(error).__name__}: {error}"


class TokenizerLoader(QObject):
    """One load at a time; ``loaded`` / ``failed`` arrive on the GUI thread."""

    loaded = Signal(object)  # LoadedTokenizer
    failed = Signal(str)  # a readable message naming the file

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._job = LatestJob("bpe-load", self, describe=_describe)
        self._job.done.connect(self._on_done)
        self._job.failed.connect(self._on_failed)
        self._busy = False

    @property
    def busy(self) -> bool:
        return self._busy

    def active_threads(self) -> int:
        return self._job.active_threads()

    def load(self, vocab_file: Path, merges_file: Path) -> bool:
        """Start loading; False (and nothing started) while a load is under way."""
        if self._busy:
            return False
        self._busy = True

        def job(is_stale: Callable[[], bool]) -> LoadedTokenizer:
            return prepare(vocab_file, merges_file)

        self._job.submit(job)
        return True

    @Slot(object)
    def _on_done(self, loaded: LoadedTokenizer) -> None:
        self._busy = False
        self.loaded.emit(loaded)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self._busy = False
        self.failed.emit(message)

    def shutdown(self) -> None:
        """Abandon a load under way and wait for its thread (closing the window)."""
        self._busy = False
        self._job.shutdown()
