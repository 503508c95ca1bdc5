"""Loading a GPT-2-format tokenizer to inspect, off the GUI thread.

What it does: :func:`prepare` reads ``vocab.json`` + ``merges.txt``, builds the
:class:`~bpe_studio.core.Tokenizer` and everything the views need from it (the merge rows and
the vocabulary rows), all in plain Python that any thread may run; GPT-2's files take about
half a second. :class:`TokenizerLoader` runs it in a one-thread pool and reports ``loaded``
or ``failed`` on the GUI thread, which then only swaps the prepared rows into its models.
What it leaves out: showing the result (``main_window``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal, Slot

from ..core import MergeStep, Tokenizer, infer_special_tokens, load_merges, load_vocab
from .models import VocabRows, vocab_rows
from .worker import describe_error


@dataclass(frozen=True, eq=False)
class LoadedTokenizer:
    tokenizer: Tokenizer
    vocab_file: Path
    merges_file: Path
    special_tokens: list[str]
    steps: list[MergeStep]  # one per merge; counts unknown (0)
    rows: VocabRows


def prepare(vocab_file: Path, merges_file: Path) -> LoadedTokenizer:
    """Load and prepare a tokenizer for the views; raises OSError or ValueError naming the
    file (and line) on bad input."""
    vocab = load_vocab(vocab_file)
    merges = load_merges(merges_file)
    specials = infer_special_tokens(vocab, merges)
    tokenizer = Tokenizer(vocab, merges, specials)
    inverse = {tok: i for i, tok in sorted(tokenizer.vocab.items(), reverse=True)}
    steps = [MergeStep(rank, a, b, inverse[a + b], 0) for rank, (a, b) in enumerate(merges)]
    rows = vocab_rows(tokenizer.vocab, tokenizer.merges)
    return LoadedTokenizer(tokenizer, vocab_file, merges_file, specials, steps, rows)


class _LoadJob(QRunnable):
    def __init__(self, loader: TokenizerLoader, generation: int, vocab: Path, merges: Path):
        super().__init__()
        self.setAutoDelete(True)
        self._loader, self._generation = loader, generation
        self._vocab, self._merges = vocab, merges

    def run(self) -> None:
        try:
            result: LoadedTokenizer | str = prepare(self._vocab, self._merges)
        except (OSError, ValueError) as error:
            result = describe_error(error)
        except Exception as error:  # anything else must reach the user too, not kill the pool
            result = f"{type(error).__name__}: {error}"
        self._loader.done.emit(self._generation, result)


class TokenizerLoader(QObject):
    """One load at a time; ``loaded`` / ``failed`` arrive on the GUI thread."""

    done = Signal(int, object)  # from the pool thread: generation, LoadedTokenizer | message
    loaded = Signal(object)  # LoadedTokenizer
    failed = Signal(str)  # a readable message naming the file

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._pool.setObjectName("bpe-load")
        self._generation = 0
        self._busy = False
        self.done.connect(self._on_done, Qt.ConnectionType.QueuedConnection)

    @property
    def busy(self) -> bool:
        return self._busy

    def active_threads(self) -> int:
        return self._pool.activeThreadCount()

    def load(self, vocab_file: Path, merges_file: Path) -> bool:
        """Start loading; False (and nothing started) while a load is under way."""
        if self._busy:
            return False
        self._busy = True
        self._generation += 1
        self._pool.start(_LoadJob(self, self._generation, vocab_file, merges_file))
        return True

    @Slot(int, object)
    def _on_done(self, generation: int, result: LoadedTokenizer | str) -> None:
        if generation != self._generation:
            return  # abandoned by shutdown()
        self._busy = False
        if isinstance(result, str):
            self.failed.emit(result)
        else:
            self.loaded.emit(result)

    def shutdown(self) -> None:
        """Abandon a load under way and wait for its thread (closing the window)."""
        self._generation += 1
        self._busy = False
        self._pool.waitForDone()
