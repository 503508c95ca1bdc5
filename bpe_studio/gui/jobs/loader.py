"""Loading a tokenizer file to inspect, off the GUI thread.

What it does: :func:`prepare_file` reads a tokenizer in any format the core reads — a GPT-2
``vocab.json`` with its ``merges.txt`` beside it (:func:`merges_beside`), a Hugging Face
``tokenizer.json``, a tiktoken ``.tiktoken`` / ``.tiktoken.gz`` rank file — and :func:`prepare`
a GPT-2 pair given as two paths; both build the :class:`~bpe_studio.core.Tokenizer` and the
merge and vocabulary rows the tables show (counts unknown), in plain Python that any thread may
run (GPT-2's files take about half a second). :class:`TokenizerLoader` runs them on a
:class:`~.latest.LatestJob` and reports ``loaded`` or ``failed`` on the GUI thread.
What it leaves out: showing the result (the controller puts it into the state), and the
pickers' presets (``views/picker``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from ...core import Tokenizer, infer_special_tokens
from ...core.encode.foreign import ForeignTokenizer, open_foreign
from ...core.formats.beside import tokenizer_json_beside
from ...core.formats.files import TIKTOKEN_SUFFIXES, foreign_file, tokenizers_in
from ...core.formats.gpt2 import holds_vocabulary, load_files
from ...core.formats.tiktoken import openai_encoding_of, sidecar_beside
from ..model.file_names import tokenizer_name
from ..model.state import LoadedTokenizer, MergeRow, vocab_rows
from .latest import LatestJob

# What "Load tokenizer…" and drag-and-drop accept, as a file-dialog filter.
TOKENIZER_FILTER = "Tokenizer files (*.json *.tiktoken *.gz);;All files (*)"


# A rank file without the NAME.tiktoken.json that gives its pattern: the pattern its name suggests
# (cl100k_base.tiktoken, as tiktoken's own cache and ../shared/tokenizers name them).
_PATTERN_IN_NAME = (("cl100k", "cl100k"), ("o200k", "o200k"), ("r50k", "gpt2"), ("gpt2", "gpt2"))


def merges_beside(vocab_file: Path) -> Path:
    """``merges.txt`` for ``vocab.json``; ``x_merges.txt`` for ``x_vocab.json`` (GPT-2's
    ``gpt2_vocab.json``)."""
    name = vocab_file.name
    if "vocab" in name:
        return vocab_file.with_name(name.replace("vocab", "merges").rsplit(".", 1)[0] + ".txt")
    return vocab_file.with_name("merges.txt")


def is_tokenizer_file(path: Path) -> bool:
    """Whether a dropped file is a tokenizer (rather than a corpus): by its name, or a folder
    holding one (as Save writes it: the loader reads a folder), which as a corpus was
    refused as "a directory, not a text file"."""
    lower = path.name.lower()
    if lower.endswith(".json") or lower.endswith(TIKTOKEN_SUFFIXES):
        return True
    try:
        return path.is_dir() and bool(tokenizers_in(path))
    except OSError:
        return False  # opened as a corpus, which says why it cannot be read


def names_a_vocab(path: Path) -> bool:
    """Whether ``path`` is a GPT-2 vocabulary by its name (``*vocab*.json``) and its start:
    a whole tokenizer saved as ``my_vocab.json`` is a ``tokenizer.json``
    (``gpt2.holds_vocabulary``), not a vocabulary wanting its merges file."""
    return path.name.lower().endswith(".json") and "vocab" in path.name and holds_vocabulary(path)


def is_gpt2_vocab(path: Path) -> bool:
    """A GPT-2 vocabulary (:func:`names_a_vocab`) with its merges file beside it is read as
    GPT-2 files; any other ``.json`` as a Hugging Face ``tokenizer.json``."""
    return merges_beside(path).is_file() and names_a_vocab(path)


def _loaded(tokenizer: Tokenizer, vocab_file: Path, merges_file: Path) -> LoadedTokenizer:
    specials = list(tokenizer.special_tokens)
    inverse = {tok: i for i, tok in sorted(tokenizer.vocab.items(), reverse=True)}
    merges = tokenizer.merges
    rows = [MergeRow(rank, a, b, inverse[a + b]) for rank, (a, b) in enumerate(merges)]
    vocab_table = vocab_rows(tokenizer.vocab, merges)
    return LoadedTokenizer(tokenizer, vocab_file, merges_file, specials, rows, vocab_table)


def prepare(vocab_file: Path, merges_file: Path) -> LoadedTokenizer:
    """Load and prepare a GPT-2-format tokenizer for the views, with a warning when the
    model's ``tokenizer.json`` beside it encodes otherwise (``formats.beside``); raises
    OSError or ValueError naming the file (and line) on bad input."""
    # The pair read as the library reads it: a merge naming a token the vocabulary lacks is
    # said by its line, before the inference of special tokens takes the token that line
    # should have made for one "made by no merge".
    vocab, merges = load_files(vocab_file, merges_file)
    specials = infer_special_tokens(vocab, merges, files=(vocab_file, merges_file))
    tokenizer = Tokenizer(vocab, merges, specials)
    warning = tokenizer_json_beside(vocab_file, tokenizer.to_data())
    return replace(_loaded(tokenizer, vocab_file, merges_file), warning=warning)


def _has_sidecar(path: Path) -> bool:
    """Whether the ``NAME.tiktoken.json`` that gives a rank file's pattern is beside it."""
    return sidecar_beside(path) is not None


def pattern_from_name(path: Path) -> str | None:
    """For a rank file without the ``NAME.tiktoken.json`` that gives its pattern: the pattern
    its name suggests, or None. Other files: None (they carry their pattern, or are GPT-2's)."""
    lower = path.name.lower()
    if not lower.endswith(TIKTOKEN_SUFFIXES) or _has_sidecar(path):
        return None
    return next((p for key, p in _PATTERN_IN_NAME if key in lower), None)


def needs_pattern(path: Path) -> bool:
    """A rank file whose pattern neither a ``NAME.tiktoken.json`` beside it, nor its name, nor
    its bytes (one of OpenAI's own files, which the core recognises) tell: the user has to say
    it."""
    lower = path.name.lower()
    if not lower.endswith(TIKTOKEN_SUFFIXES) or _has_sidecar(path):
        return False
    return pattern_from_name(path) is None and openai_encoding_of(path) is None


@dataclass(frozen=True)
class OfferedTokenizer:
    """A loaded tokenizer of another kind than byte-level BPE (``core.encode.foreign``): it has
    no merges to train, replay or explain, so it never becomes the run; the editor, Compare
    and Report offer it (``label`` names it there)."""

    label: str
    tokenizer: ForeignTokenizer
    source: str  # the file's path


def prepare_file(path: Path, pattern: str | None = None) -> LoadedTokenizer | OfferedTokenizer:
    """Load and prepare the tokenizer in ``path`` (see the module docstring for the formats);
    ``pattern`` is for a rank file whose pattern nothing beside it gives (the default is the
    one its name suggests). The prepared record names ``path`` as both its vocabulary and its
    merges file, except for GPT-2 files; a ``tokenizer.json`` of another kind than byte-level
    BPE is offered instead (:class:`OfferedTokenizer`). Raises OSError or ValueError naming
    the file."""
    foreign = foreign_file(path)
    if foreign is not None:
        tok = open_foreign(foreign)
        return OfferedTokenizer(f"{tokenizer_name(path)} ({foreign.kind})", tok, str(path))
    if is_gpt2_vocab(path):
        return prepare(path, merges_beside(path))
    return _loaded(Tokenizer.load(path, pattern or pattern_from_name(path)), path, path)


class TokenizerLoader(QObject):
    """One load at a time; ``loaded`` / ``failed`` arrive on the GUI thread."""

    loaded = Signal(object)  # LoadedTokenizer or OfferedTokenizer
    failed = Signal(str)  # a readable message naming the file

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._job = LatestJob("bpe-load", self)
        self._job.done.connect(self._on_done)
        self._job.failed.connect(self._on_failed)
        self._busy = False

    @property
    def busy(self) -> bool:
        return self._busy

    def active_threads(self) -> int:
        return self._job.active_threads()

    def load(
        self, vocab_file: Path, merges_file: Path | None = None, pattern: str | None = None
    ) -> bool:
        """Start loading a GPT-2 pair, or (``merges_file`` None) any tokenizer file, a rank
        file with ``pattern`` if given; False (and nothing started) while a load is under
        way."""
        if self._busy:
            return False
        self._busy = True

        def job(is_stale: Callable[[], bool]) -> LoadedTokenizer | OfferedTokenizer:
            if merges_file is None:
                return prepare_file(vocab_file, pattern)
            return prepare(vocab_file, merges_file)

        self._job.submit(job)
        return True

    @Slot(object)
    def _on_done(self, loaded: LoadedTokenizer | OfferedTokenizer) -> None:
        self._busy = False
        self.loaded.emit(loaded)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self._busy = False
        self.failed.emit(message)

    def cancel(self) -> None:
        """Abandon a load under way without waiting: its result is dropped (neither
        ``loaded`` nor ``failed`` comes), and another may start."""
        self._busy = False
        self._job.cancel()

    def shutdown(self) -> None:
        """Abandon a load under way and wait for its thread (closing the window)."""
        self._busy = False
        self._job.shutdown()
