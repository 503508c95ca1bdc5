"""The run as every view sees it: one plain-Python record, no Qt.

What it does: :class:`RunState` holds the corpus, the :class:`Phase`, the record of the run
(the ``MergeStep`` of every merge so far, oldest first), the vocabulary before the first merge,
a loaded tokenizer's rows (:class:`MergeRow`, counts unknown), the tokenizer the editor shows,
the step every view shows (``step``; ``live`` while it follows the newest merge, ``replaying``
while a replay animates it), the latest pre-tokenization progress and top pairs, and the run's
outcome. Everything a view shows is derived from it: the vocabulary at step k, the merges at
step k, the status. :class:`TrainingResult` is what a finished or stopped run produced.
Only :class:`~.app_model.AppModel` changes it (the session and the controller call it), and
its events tell the views what changed.
What it leaves out: events (``app_model``), threads (``training``), widgets (``views``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ...core import MergeStep, Tokenizer
from ...core.corpus.records import DEFAULT_TEXT_FIELD
from ...core.pretokenization.specials import DEFAULT_SPECIAL_TOKEN
from ...core.train.pair_history import PairHistory
from ...core.train.vocab import check_vocab_size, merge_budget
from .corpus_source import CorpusSource
from .errors import describe_error
from .lab_records import CorpusRef
from .run_steps import RunSteps
from .tokenizer_source import TokenizerSource


class Phase(enum.Enum):
    """Where the run is. ``PAUSED`` remembers the phase it resumes to (``RunState.resume_to``)."""

    IDLE = "idle"  # nothing trained or loaded yet
    PRE_TOKENIZING = "pre-tokenizing"
    MERGING = "merging"
    PAUSED = "paused"
    STOPPED = "stopped"  # the user stopped it: the merges so far are the result
    FINISHED = "finished"  # vocab_size reached, or the pairs ran out
    FAILED = "failed"
    LOADED = "loaded"  # a tokenizer read from files, no run behind it

    @property
    def training(self) -> bool:
        """True from Train until the run's outcome arrives."""
        return self in (Phase.PRE_TOKENIZING, Phase.MERGING, Phase.PAUSED)


@dataclass(frozen=True, slots=True)
class TrainingResult:
    """What a finished (or stopped) run produced; ``vocab`` and ``merges`` are copies."""

    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    special_tokens: tuple[str, ...]
    target_merges: int
    stopped: bool  # the user stopped it before vocab_size was reached
    merge_seconds: float  # time spent merging, pauses left out
    pattern: str = "gpt2"  # the pre-tokenization pattern it was trained with
    # Why nothing could be learned (``records.nothing_to_merge``: the corpus is empty, holds
    # no text, or no pair), worked out where it was trained; None when pairs were there.
    nothing_to_merge: str | None = None

    @property
    def exhausted(self) -> bool:
        """True when the corpus ran out of pairs before ``vocab_size`` was reached."""
        return not self.stopped and len(self.merges) < self.target_merges


@dataclass(frozen=True, slots=True)
class MergeRow:
    """One merge as the tables show it when its count is unknown (a loaded tokenizer).

    It answers the same attributes as ``MergeStep``, so a table holds either kind of row."""

    rank: int
    left: bytes
    right: bytes
    new_id: int
    count: int | None = None

    @property
    def merged(self) -> bytes:
        return self.left + self.right


class VocabRow(NamedTuple):
    """One token as the vocabulary table shows it."""

    token_id: int
    token: bytes
    rank: int | None  # the merge that made it; None for bytes and special tokens
    kind: str  # "byte", "special" or "merge"
    # The pair count when it was merged; None when unknown. The field shadows tuple.count,
    # which nothing calls on a row.
    count: int | None  # type: ignore[assignment]


def vocab_rows(
    vocab: Mapping[int, bytes], merges: Sequence[tuple[bytes, bytes]] = ()
) -> list[VocabRow]:
    """The rows of ``vocab`` in id order (counts unknown). Plain Python: the loader thread
    prepares them for GPT-2's 50,257 tokens while the GUI stays responsive."""
    rank_of: dict[bytes, int] = {}
    for rank, (a, b) in enumerate(merges):
        rank_of.setdefault(a + b, rank)
    rows: list[VocabRow] = []
    for token_id, token in sorted(vocab.items()):
        made_by = rank_of.get(token)
        kind = "merge" if made_by is not None else "byte" if len(token) == 1 else "special"
        rows.append(VocabRow(token_id, token, made_by, kind, None))
    return rows


@dataclass(frozen=True, slots=True)
class SaveNews:
    """A Save under way, as the status line says it: the files it writes ("tokenizer.json")
    and the folder it writes them into (None while it is getting ready, before the folder
    is chosen); ``choosing`` while the folder dialog waits for the user."""

    files: str
    folder: Path | None = None
    choosing: bool = False


@dataclass(frozen=True, eq=False)
class LoadedTokenizer:
    """A tokenizer read from files, with the rows the tables show (prepared off the GUI
    thread: GPT-2's 50,000 merges)."""

    tokenizer: Tokenizer
    vocab_file: Path
    merges_file: Path
    special_tokens: list[str]
    merge_rows: list[MergeRow]
    vocab_rows: list[VocabRow]
    # Said on loading: the model's tokenizer.json beside GPT-2 files encodes otherwise.
    warning: str | None = None


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What Train asks of a run: the one record of it, from the controls (``TrainingPanel.
    settings``) through the controller and the session to the worker, which hands its fields
    to the core's trainer. The merge budget and the vocabulary-size rule are the core's."""

    vocab_size: int
    special_tokens: tuple[str, ...] = (DEFAULT_SPECIAL_TOKEN,)
    pattern: str = "gpt2"  # the pre-tokenization pattern (a name or a regex string)
    corpus: tuple[str, ...] = ()  # paths, globs and URLs counted as one corpus
    workers: int | None = None  # pre-tokenizing processes (None: the core's default)
    text_field: str = DEFAULT_TEXT_FIELD  # of JSON Lines and Parquet records
    cluster: str | None = None  # count on a Dask cluster (``core.corpus.cluster``)
    records: str | None = None  # the core's ``records`` (``CorpusSource.read_as``)

    @property
    def target_merges(self) -> int:
        """How many merges reaching ``vocab_size`` takes (fewer happen if pairs run out)."""
        return merge_budget(self.vocab_size, self.special_tokens)

    def vocab_problem(self) -> str | None:
        """Why ``vocab_size`` cannot be trained with these special tokens (the core's rule,
        ``check_vocab_size``, in its words), or None.

        >>> RunSettings(300).vocab_problem() is None
        True
        >>> RunSettings(200).vocab_problem()[:50]
        'Vocabulary size 200 is too small: it must be at le'
        """
        try:
            check_vocab_size(self.vocab_size, self.special_tokens)
        except (TypeError, ValueError) as error:
            return describe_error(error)
        return None


@dataclass
class RunState:
    """The one record of the run the views read. Mutated only through the ``AppModel``."""

    # The plain local text file trained on, which sample-reading views read; None for a
    # corpus of several, compressed or remote files or records (``corpus_source``).
    corpus: Path | None = None
    corpus_source: CorpusSource | None = None  # the corpus opened: the next Train trains on it
    # The records' text field the Train page names (``TrainingPanel.text_field_edit``): the
    # next Train reads the records of the corpus opened by it, and so does every view that
    # reads that corpus (``corpus_ref``); unused for plain text.
    text_field: str = DEFAULT_TEXT_FIELD
    # The corpus the run on screen trained on, set by Train and kept with its run: the corpus
    # opened since (without training) is not the one its tokenizer learned from. None with no
    # run trained (none yet, discarded, a loaded tokenizer): no view calls the corpus opened
    # the run's then, since no tokenizer on screen learned from it.
    run_corpus: CorpusSource | None = None
    phase: Phase = Phase.IDLE
    resume_to: Phase | None = None  # the phase a PAUSED run returns to
    settings: RunSettings | None = None  # of the current (or last) run
    # subtle: the record only ever grows during a run (appended in batches, never edited),
    # so a view may keep an index into it and read the new tail on ``merges_added``.
    record: list[MergeStep] = field(default_factory=list)
    base_vocab: dict[int, bytes] = field(default_factory=dict)  # bytes and specials
    published: int = 0  # rows of merge_rows the views show (the record may be ahead)
    loaded: LoadedTokenizer | None = None
    loaded_name: str = ""  # what every view calls the loaded file (AppModel.file_names)
    shown: TokenizerSource | None = None  # the run's tokenizer (trained or loaded), and its label
    # A tokenizer the user picked for the editor instead of the run's (a preset, a loaded file);
    # None: the editor shows the run's tokenizer at ``step``.
    picked: TokenizerSource | None = None
    step: int = 0  # the step every view shows: merges 0..step-1 applied
    live: bool = True  # step follows the newest merge
    replaying: bool = False  # a replay is animating ``step`` from 0 to ``published``
    replay_paused: bool = False  # ... and is paused: Resume goes on from ``step``
    selected_token: int | None = None
    # The tokenizer the selected token's id belongs to when it is not the run's (a token
    # clicked in the editor while it shows a picked tokenizer); None: the run's vocabulary.
    selected_in: TokenizerSource | None = None
    bytes_done: int = 0
    bytes_total: int = 0
    compiling: bool = False  # the merge engine is compiling (its first run), a phase of its own
    # Where the pre-tokens are counted, when on a Dask cluster: the core's line ("pre-tokenizing
    # on the Dask cluster local:2: 17 tasks on 2 workers").
    counting_on: str | None = None
    rate: float = 0.0  # merges per second, recently
    elapsed: float = 0.0  # seconds of the run, pauses left out
    merge_start: float | None = None  # ``elapsed`` when merging began; None before
    remaining: float | None = None  # estimated seconds of merging left; None until credible
    # The best pairs before every merge, recorded by the trainer as it merges (rows are
    # added in the worker thread, each before its merge is published); the pair chart reads
    # it at any step. None before merging starts and when loaded (files hold no counts).
    pair_history: PairHistory | None = None
    stopping: bool = False  # Stop was clicked; the outcome has not arrived yet
    result: TrainingResult | None = None
    error: str | None = None  # the last failure, as shown to the user
    loading: tuple[Path, Path] | None = None  # vocab and merges files being read
    load_error: str | None = None  # the last load failed (the run on screen is kept)
    # A Save under way (:class:`SaveNews`: its files, and its folder once chosen): nothing
    # else starts meanwhile, and the status line says so. None: no save.
    saving: SaveNews | None = None
    # Which run this is: a new number for every run, loaded tokenizer or discard (the app
    # model's counter), so a background result or an editor curve computed for another run
    # is told apart (``AppModel.run_id``).
    run_id: int = 0
    # How many of the run's merges a Save has written to files (a loaded tokenizer: all of
    # them, it came from files); the rest would be lost (``saving.unsaved_merges``).
    saved_merges: int = 0
    # The run's tokenizer, built once from the record, and each step cut from it (the
    # views' builds of a step, ``run_tokenizer_at``): a new one with each run.
    steps: RunSteps = field(default_factory=RunSteps, repr=False, compare=False)

    # ------------------------------------------------------------ derived
    @property
    def merges_done(self) -> int:
        return len(self.record)

    @property
    def target_merges(self) -> int:
        if self.loaded is not None:
            return len(self.loaded.merge_rows)
        return self.settings.target_merges if self.settings else 0

    @property
    def corpus_ref(self) -> CorpusRef | None:
        """The corpus opened as the next Train reads it (the Report's row, the Vocabulary
        lab's "The opened corpus"): its paths, and of records the Train page's text field."""
        source = self.corpus_source
        if source is None:
            return None
        # subtle: plain text is given the default, which the core alone accepts for it.
        field = self.text_field if source.records else DEFAULT_TEXT_FIELD
        return CorpusRef(source.paths, field, source.name, source.read_as)

    @property
    def run_corpus_ref(self) -> CorpusRef | None:
        """The run's corpus (``run_corpus``) as the run read it (the in-sample curve, the
        Vocabulary lab's "The run's corpus"): with the text field it trained with; None with
        no run trained."""
        source = self.run_corpus
        if source is None:
            return None
        s = self.settings
        field = s.text_field if s is not None and s.corpus == source.paths else DEFAULT_TEXT_FIELD
        return CorpusRef(source.paths, field, source.name, source.read_as)

    @property
    def special_tokens(self) -> tuple[str, ...]:
        if self.loaded is not None:
            return tuple(self.loaded.special_tokens)
        return self.settings.special_tokens if self.settings else ()

    @property
    def merge_rows(self) -> Sequence[MergeStep | MergeRow]:
        """The rows of the merge table: the loaded tokenizer's, else the run's record."""
        return self.loaded.merge_rows if self.loaded is not None else self.record

    def merges_at(self, k: int) -> list[tuple[bytes, bytes]]:
        """The first ``k`` merges as pairs."""
        return [(s.left, s.right) for s in self.merge_rows[:k]]

    def vocab_at(self, k: int) -> dict[int, bytes]:
        """The vocabulary after the first ``k`` merges of the run (bytes, specials, merges)."""
        if self.loaded is not None:
            return dict(self.loaded.tokenizer.vocab)
        vocab = dict(self.base_vocab)
        vocab.update((s.new_id, s.merged) for s in self.record[:k])
        return vocab
