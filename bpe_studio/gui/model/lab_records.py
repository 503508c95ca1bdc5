"""What the Vocabulary lab asks for and gets back: tokenizers named by key, jobs, results.

What it does: :class:`TokenizerRef` names the tokenizer a result is of (the picker's key and
label; for the run's tokenizer, which run and how many of its merges), :class:`CorpusRef` the
corpus a usage is of. :class:`TokenizerSpec` tells the lab's process how to get a tokenizer
(a preset, a file, a Hub model's file, or the run's data, sent in slices: :class:`RunData`).
:class:`LabJob` is one numbered request: the tokenizer examined, and optionally a corpus and
a second tokenizer. The results (:class:`MakeupResult`, :class:`UsageResult`,
:class:`OverlapResult`) carry the refs they were computed for, so the model keeps only those
that still match what the tab shows (``vocab_lab``). All of it is plain, picklable data.
What it leaves out: computing (``lab_server``), the process (``lab_process``), the rules of
which result is shown (``vocab_lab``).
"""

from __future__ import annotations

import enum
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...core import MergeStep, Tokenizer
from ...core.explain.overlap import Overlap
from ...core.explain.usage import CorpusUsage
from ...core.explain.vocabulary import TokenTable

RUN_KEY = "run"  # the picker's key of the run's tokenizer (views.picker.RUN)


@dataclass(frozen=True)
class TokenizerRef:
    """A tokenizer as the lab names it: the picker's ``key`` and ``label``; for the run's
    (``key`` "run"), the run (``run_id``) and how many of its merges it holds (``merges``);
    for a file, the version of it on disk (``file_versions``: a file changed since is another
    tokenizer under the same key and label)."""

    key: str
    label: str = field(compare=False)  # how the picker names it; the key is what counts
    run_id: int | None = None
    merges: int | None = None
    version: Hashable = None

    @property
    def is_run(self) -> bool:
        return self.key == RUN_KEY

    @property
    def identity(self) -> tuple:
        """What tells this tokenizer from another (a run's at any step is one)."""
        return (self.key, self.run_id, self.version)

    def same_tokenizer(self, other: TokenizerRef | None) -> bool:
        """The same tokenizer, or (the run's) the same run at another step."""
        return other is not None and self.identity == other.identity

    @property
    def name(self) -> str:
        """The label, with the step for a run's tokenizer: "The run's tokenizer (step 500)"."""
        if self.is_run and self.merges is not None:
            return f"{self.label} (step {self.merges:,})"
        return self.label


@dataclass(frozen=True)
class CorpusRef:
    """A corpus as the trainer reads it: paths, globs or URLs, and the records' text field;
    ``records``: how the user said to read a file whose name does not say (the core's
    ``records``: "jsonl", "text"; None: each file's name says)."""

    paths: tuple[str, ...]
    text_field: str
    label: str
    records: str | None = None


class Kind(enum.Enum):
    """How the lab's process gets a tokenizer."""

    PRESET = "preset"  # Tokenizer.preset(name)
    FILE = "file"  # open_tokenizer(path): any file the pickers offer
    RUN = "run"  # the run's data, sent before the job (RunData)


@dataclass(frozen=True)
class TokenizerSpec:
    """How the process gets ``ref``'s tokenizer: a preset or file by ``source``, or the run's
    data (:class:`RunData`, turned into messages by the sending thread). ``name`` is what the
    tokenizer is called (a Hub model's ``ORG/NAME``; its file is fetched before the job)."""

    ref: TokenizerRef
    kind: Kind
    source: str = ""
    name: str = ""
    hub: str | None = None  # a Hub model's ORG/NAME[@REV]: its file is fetched first
    run: RunData | None = field(default=None, compare=False)

    @property
    def cache_key(self) -> tuple:
        """What the process keeps the tokenizer by."""
        if self.kind is Kind.RUN:
            return ("run", self.ref.run_id, self.ref.merges)
        return (self.kind.value, self.source, self.ref.version)


@dataclass(frozen=True, eq=False)
class RunData:
    """The run's tokenizer as captured on the GUI thread, cheaply (references): a loaded
    tokenizer, or the record's first ``merges`` rows over ``base_vocab``. subtle: the sending
    thread reads the record later; a run's record only grows, so its first rows stay."""

    loaded: Tokenizer | None
    record: Sequence[MergeStep]
    merges: int
    base_vocab: Mapping[int, bytes]
    special_tokens: tuple[str, ...]
    pattern: str


@dataclass(frozen=True, eq=False)
class LabJob:
    """One request to the lab's process (numbered by the sender)."""

    a: TokenizerSpec
    corpus: CorpusRef | None = None
    b: TokenizerSpec | None = None
    makeup: bool = True  # send the table of ``a`` (else it only serves the usage, overlap)
    steps: bool = False  # the table notes each token's merge rank (the run's, by step)
    workers: int | None = None
    number: int = 0

    def still_wanted(self, a: TokenizerRef | None, corpus: CorpusRef | None) -> bool:
        """Whether this job's tokenizer and corpus are those wanted: a job computing a usage
        still wanted is let finish when only the second tokenizer changed, and one of an
        earlier step of the run when the run has merged more meanwhile (the next job asks for
        the newer step)."""
        return self.a.ref.same_tokenizer(a) and (self.corpus is None or self.corpus == corpus)


# ------------------------------------------------------------------ results
@dataclass(frozen=True, eq=False)
class MakeupResult:
    """The table of the tokenizer ``ref`` (``core.explain.vocabulary``), and its ``notes``
    (``Tokenizer.notes``: what it does otherwise than its file says)."""

    ref: TokenizerRef
    table: TokenTable
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class UsageResult:
    """How ``corpus`` uses the tokenizer ``ref`` (``core.explain.usage``), with what the tab
    draws worked out in the process: the ordinary tokens used, most used first (ids and
    counts), and per category how many ordinary tokens were used and never used. A job sends
    two for a corpus: the first as soon as the encoding ends, before the text is scanned for
    the unused tokens' bytes (not ``complete``: ``usage.across`` and ``usage.absent`` are
    None), then the whole."""

    ref: TokenizerRef
    corpus: CorpusRef
    usage: CorpusUsage
    ranked_ids: np.ndarray
    ranked_counts: np.ndarray
    used: dict[str, int]
    unused: dict[str, int]
    complete: bool = True

    @property
    def used_total(self) -> int:
        return len(self.ranked_ids)

    @property
    def unused_total(self) -> int:
        return sum(self.unused.values())


@dataclass(frozen=True, eq=False)
class OverlapResult:
    """``ref``'s ordinary tokens against ``other``'s (``core.explain.overlap``), the other
    tokenizer's table (the tab lists its tokens too), and which rows of each table are
    ordinary tokens whose bytes the other holds as an ordinary token (``shared_rows``,
    ``other_shared_rows``: masks over the tables' rows), and the other tokenizer's notes
    (``other_notes``: ``Tokenizer.notes``)."""

    ref: TokenizerRef
    other: TokenizerRef
    overlap: Overlap
    other_table: TokenTable
    shared_rows: np.ndarray
    other_shared_rows: np.ndarray
    other_notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Progress:
    """Where a job is: ``stage`` (what it does, for a person), ``done`` of ``total``."""

    number: int
    stage: str
    done: int
    total: int


class Part(enum.Enum):
    """What a failure is about: the first tokenizer, the second, the corpus, or the job."""

    A = "a"
    B = "b"
    CORPUS = "corpus"
    JOB = "job"


@dataclass(frozen=True)
class Failure:
    number: int
    part: Part
    key: str  # the tokenizer's picker key, or the corpus's label
    message: str


class Outcome(enum.Enum):
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(frozen=True)
class Ended:
    number: int
    outcome: Outcome


Result = MakeupResult | UsageResult | OverlapResult
Message = Result | Progress | Failure | Ended
