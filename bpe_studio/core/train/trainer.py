"""Incremental byte-level BPE training, CS336 assignment 1 semantics.

What it does: from pre-token counts, repeatedly merges the most frequent adjacent pair (ties:
the lexicographically greater pair of bytes) and yields one immutable :class:`MergeStep` per
merge. :func:`train_bpe` is that generator run to the end; the GUI iterates the same generator.
What it leaves out: reading files and pre-tokenizing (``corpus``), the id layout (``vocab``),
encoding (``tokenizer``), the merge loop itself (the engines below).

Two merge engines keep pair counts, where each pair occurs and a priority queue, so that a
merge never rescans all pairs; they make the same merges:
- ``merge_python``: pure Python, starts instantly; words are strings of ids, merged by
  ``str.replace``, Python code runs once per merge site.
- ``merge_engine``: flat arrays and numba-compiled kernels; a merge touches only the places the
  pair occurs. Importing numba and loading the cached kernels costs a fixed time and memory
  (the first run ever compiles them; docs/training.md), which small and medium corpora do
  not repay.
``engine="auto"`` takes the compiled one when the corpus has at least :data:`COMPILED_FROM`
positions (bytes of the unique pre-tokens that have a pair), and falls back to Python, saying so
once in the log, when numba cannot be imported. docs/training.md has the measurements.

Ids: 0..255 are the bytes, then the special tokens in order, then one id per merge.
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypedDict

from ..corpus.cluster import Cluster, count_on_cluster
from ..corpus.counting import ProgressFn, TrainingCancelled, counts_compiled
from ..corpus.sources import check_counted_once
from ..corpus.tasks import Corpus, corpus_files, count_corpus
from ..pretokenization import scan_load
from ..pretokenization.specials import refuse_single_bytes, validate_special_tokens
from . import merge_engine
from .engine_start import EngineStart, check_counts, pairable
from .merge_python import PythonMergeEngine
from .pair_history import PairHistory, RecordedRows
from .vocab import check_vocab_size, initial_vocab

if TYPE_CHECKING:
    from typing_extensions import Unpack

Pair = tuple[int, int]
EngineChoice = Literal["auto", "python", "compiled"]
StatusFn = Callable[[str], None]
ENGINES: tuple[EngineChoice, ...] = ("auto", "python", "compiled")
# Positions (bytes of the unique pre-tokens with a pair) from which "auto" compiles: below it
# the Python engine keeps within the time targets and saves numba's memory (docs/training.md,
# "The threshold").
COMPILED_FROM = 1_000_000

log = logging.getLogger("bpe_studio.trainer")
_fallback_said = False


@dataclass(frozen=True, slots=True)
class MergeStep:
    """One merge, as the trainer made it.

    ``rank`` is the 0-based merge index, ``count`` the pair's frequency when it was merged
    (pre-token counts weighted), ``new_id`` the id of ``left + right`` in the vocabulary.
    """

    rank: int
    left: bytes
    right: bytes
    new_id: int
    count: int

    @property
    def merged(self) -> bytes:
        return self.left + self.right


class _Engine(Protocol):
    """What both merge engines offer (``merge_python``, ``merge_engine``)."""

    def best(self) -> tuple[int, int, int] | None: ...
    def add_token(self, token_id: int, token: bytes) -> None: ...
    def merge(self, new_id: int) -> int: ...
    def top(self, k: int) -> list[tuple[int, int, int]]: ...
    def close(self) -> None: ...
    @property
    def recorded(self) -> RecordedRows | None: ...


def count_positions(pretoken_counts: Mapping[bytes, int]) -> int:
    """The merge engines' working size: bytes of the unique pre-tokens that hold a pair."""
    known = getattr(pretoken_counts, "positions", None)  # counts held as arrays know it
    if isinstance(known, int):
        return known
    return sum(len(t) for t, _ in pairable(pretoken_counts))


def auto_engine(positions: int) -> Literal["python", "compiled"]:
    """The engine ``"auto"`` prefers for a corpus of this many positions."""
    return "python" if positions < COMPILED_FROM else "compiled"


def choose_engine(engine: EngineChoice, positions: int) -> Literal["python", "compiled"]:
    """The engine to train ``positions`` positions with. ``"auto"`` is :func:`auto_engine`'s
    choice if numba imports (else Python, logged once per process); ``"compiled"`` raises
    :class:`~bpe_studio.core.train.merge_engine.CompiledEngineUnavailable` (naming the import
    failure) when it does not."""
    global _fallback_said
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "python" or (engine == "auto" and auto_engine(positions) == "python"):
        return "python"
    try:
        merge_engine.load_kernels()
    except merge_engine.CompiledEngineUnavailable as exc:
        if engine == "compiled":
            raise
        if not _fallback_said:
            _fallback_said = True
            log.warning("training with the slower Python merge engine: %s", exc)
        return "python"
    return "compiled"


def _training_specials(special_tokens: Sequence[str]) -> list[str]:
    """The special tokens of a run (``validate_special_tokens``); a mapping of them to ids is
    refused: training numbers them 256, 257, ... in order, and the ids given were ignored."""
    if isinstance(special_tokens, Mapping):
        raise TypeError(
            "special tokens for training are a list: their ids are 256, 257, ... in order "
            f"(the ids of {dict(list(special_tokens.items())[:3])!r} would be ignored)"
        )
    return validate_special_tokens(special_tokens)


class BpeTrainer:
    """Iterate to train: ``for step in BpeTrainer(counts, 1000, ["<|endoftext|>"]): ...``.

    ``vocab`` and ``merges`` grow as the iteration goes; ``top_pairs(k)`` tells the pairs that
    would be merged next; ``cancel()`` ends the iteration before the next merge. ``top_pairs``,
    ``cancel`` and ``close`` may be called from any thread while another iterates (a
    progress monitor's): each waits for the merge under way, never runs inside it.
    ``engine``: ``"auto"`` (by corpus size), ``"python"`` or ``"compiled"`` (see
    :func:`choose_engine`); the merges are the same. ``engine_used`` says which one runs.
    ``status(message)`` is told when the compiled engine is compiling (the first run only).
    ``record_pairs``: keep the ``record_pairs`` best pairs before every merge in
    ``pair_history`` (a :class:`~bpe_studio.core.train.pair_history.PairHistory`; None when 0).
    """

    def __init__(
        self,
        pretoken_counts: Mapping[bytes, int],
        vocab_size: int,
        special_tokens: Sequence[str] = (),
        *,
        cancel_event: threading.Event | None = None,
        engine: EngineChoice = "auto",
        status: StatusFn | None = None,
        record_pairs: int = 0,
    ) -> None:
        if isinstance(record_pairs, bool) or not isinstance(record_pairs, int):
            raise TypeError(f"record_pairs must be an int, got {record_pairs!r}")
        if record_pairs < 0:
            raise ValueError(f"record_pairs = {record_pairs} must not be negative")
        check_counts(pretoken_counts)
        self.special_tokens = _training_specials(special_tokens)
        refuse_single_bytes(self.special_tokens)
        self.vocab_size = check_vocab_size(vocab_size, self.special_tokens)
        # The counts it was built from (the caller's mapping, not a copy), e.g. for a viewer
        # that recounts the pairs of any step.
        self.pretoken_counts = pretoken_counts
        self.vocab = initial_vocab(self.special_tokens)
        self.merges: list[tuple[bytes, bytes]] = []
        self._cancel = cancel_event or threading.Event()
        # subtle: the engines' top() pops and pushes their queue, and close() empties their
        # arrays: either inside another thread's merge gave other merges (or an IndexError).
        self._lock = threading.Lock()
        self.engine_used = choose_engine(engine, count_positions(pretoken_counts))
        tokens = list(self.vocab.values())
        self._engine: _Engine
        start = EngineStart.of(pretoken_counts, tokens, vocab_size, record_pairs)
        if self.engine_used == "compiled":
            merge_engine.prepare(status)
            self._engine = merge_engine.CompiledMergeEngine(start)
        else:
            self._engine = PythonMergeEngine(start)
        del start
        recorded = self._engine.recorded
        self.pair_history = (
            None if recorded is None else PairHistory(recorded, self.vocab, record_pairs)
        )

    @property
    def target_merges(self) -> int:
        """How many merges reaching ``vocab_size`` takes (fewer happen if pairs run out)."""
        return self.vocab_size - 256 - len(self.special_tokens)

    def cancel(self) -> None:
        """Stop at the next merge (from any thread): iterating ends, what was made stays."""
        self._cancel.set()

    def __repr__(self) -> str:
        made, target = len(self.merges), self.target_merges
        state = " (cancelled)" if self.cancelled else ""
        return (
            f"<BpeTrainer {made:,} of {target:,} merges made{state}, vocabulary size "
            f"{self.vocab_size:,}, {self.engine_used} engine>"
        )

    def close(self) -> None:
        """End training and free its working state (pre-tokens, pair index, queue) without a
        long pause of other threads (a GUI's); ``vocab`` and ``merges`` stay. Iterating after
        it makes no more merges."""
        with self._lock:
            self._engine.close()

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancel.is_set()

    def top_pairs(self, k: int) -> list[tuple[bytes, bytes, int]]:
        """The ``k`` pairs that would be merged next, best first, with their counts."""
        vocab = self.vocab
        with self._lock:
            return [(vocab[a], vocab[b], c) for a, b, c in self._engine.top(k)]

    def __iter__(self) -> Iterator[MergeStep]:
        engine, vocab, lock = self._engine, self.vocab, self._lock
        while len(vocab) < self.vocab_size and not self._cancel.is_set():
            with lock:
                best = engine.best()
                if best is None:
                    return
                a, b, count = best
                new_id = len(vocab)
                left, right = vocab[a], vocab[b]
                vocab[new_id] = left + right
                engine.add_token(new_id, left + right)
                self.merges.append((left, right))
                engine.merge(new_id)
            yield MergeStep(len(self.merges) - 1, left, right, new_id, count)


def trainer_from_file(
    input_path: Corpus,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    cancel_event: threading.Event | None = None,
    pattern: str = "gpt2",
    engine: EngineChoice = "auto",
    status: StatusFn | None = None,
    record_pairs: int = 0,
    cluster: Cluster | None = None,
    text_field: str | None = None,
    records: str | None = None,
) -> BpeTrainer:
    """Pre-tokenize ``input_path`` (one file, or a sequence of files counted as one corpus;
    paths, globs or URLs, see ``tasks.count_file``; in ``.jsonl`` and ``.parquet`` files, or
    every file with ``records`` "jsonl" or "parquet", each record's ``text_field`` (default
    "text") is a document) in parallel under ``pattern`` (a name or a regex string) and return
    a trainer ready to iterate. ``engine``, ``status`` and
    ``record_pairs`` as for :class:`BpeTrainer`. ``cluster``: count on a Dask cluster
    instead of this machine's processes (an address, ``"local"``, ``"local:N"`` or
    ``"tcp://HOST:PORT"``, or a ``distributed.Client``; see ``cluster``); ``status`` then
    also hears where the counting runs.

    When the compiled engine will be used, its kernels are loaded (or
    compiled, on the first run) in a background thread while the pre-tokens are counted: from
    the start with ``engine="compiled"``, and with ``"auto"`` once the pre-tokens counted so far
    have :data:`COMPILED_FROM` positions (see ``measured`` below), or from the start when the
    corpus is counted by the compiled scanners (``counting.counts_compiled``: numba is loaded
    for them, so ``"auto"`` merges with the compiled engine too). ``status`` hears of each
    compile once (the scanners', the merge engine's), as soon as it is under way.

    Raises :class:`~bpe_studio.core.corpus.counting.TrainingCancelled` if ``cancel_event`` is set
    during pre-tokenization.
    """
    specials = _training_specials(special_tokens)
    refuse_single_bytes(specials)
    vocab_size = check_vocab_size(vocab_size, specials)
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    event = cancel_event or threading.Event()
    said: set[str] = set()
    said_lock = threading.Lock()

    def say(message: str) -> None:
        with said_lock:
            if status is None or message in said:
                return
            said.add(message)
        status(message)

    # Positions never exceed the corpus's bytes, so a smaller corpus always trains in Python.
    files = corpus_files(input_path, records)
    check_counted_once(files)  # here for a cluster's count too
    size = sum(f.size for f in files)
    # Counted by the compiled scanners (on this machine): numba's cost is paid, so "auto" takes
    # the compiled merge engine as well, several times faster than Python's at any size.
    numba_counts = engine == "auto" and cluster is None and counts_compiled(pattern, size)
    may_compile = engine == "compiled" or (engine == "auto" and size >= COMPILED_FROM)
    forked = threading.Event()
    preparing = threading.Event()

    def start_preparing() -> None:
        # subtle: called once count_file's worker processes exist, so that they are forked
        # from a process with no extra thread (see corpus.mp_context).
        forked.set()
        if engine == "compiled" or numba_counts:
            preparing.set()
            merge_engine.prepare_in_background()

    def measured(positions: int) -> None:
        # The positions of the pre-tokens counted so far only grow: once they reach
        # COMPILED_FROM, "auto" will compile, and numba loads while the rest is counted.
        # Loading it any sooner, on a guess, would cost its memory (docs/training.md) for nothing
        # when the corpus then trains in Python.
        if may_compile and forked.is_set() and not preparing.is_set():
            if auto_engine(positions) == "compiled":
                preparing.set()
                merge_engine.prepare_in_background()

    def progress_and_status(done: int, total: int) -> None:
        if merge_engine.compiling():
            say(merge_engine.LOADER.said_compiling())
        if progress is not None:
            progress(done, total)

    # The same counting on this machine's processes or on a cluster's workers.
    counting = dict(
        progress=progress_and_status,
        should_stop=event.is_set,
        pattern=pattern,
        started=start_preparing,
        measured=measured,
        text_field=text_field,
    )
    if cluster is None:
        counts = count_corpus(files, specials, workers=workers, status=say, **counting)  # type: ignore[arg-type]
    else:
        counts = count_on_cluster(files, specials, cluster=cluster, status=status, **counting)  # type: ignore[arg-type]
    if event.is_set():
        raise TrainingCancelled("training cancelled during pre-tokenization")
    if numba_counts and scan_load.ready():
        engine = "compiled"
    return BpeTrainer(
        counts,
        vocab_size,
        specials,
        cancel_event=event,
        engine=engine,
        status=say,
        record_pairs=record_pairs,
    )


class TrainOptions(TypedDict, total=False):
    """The keyword options :func:`iter_merges` and :func:`train_bpe` pass on to
    :func:`trainer_from_file` (the defaults are its own)."""

    workers: int | None
    progress: ProgressFn | None
    pattern: str
    engine: EngineChoice
    cluster: Cluster | None
    text_field: str | None
    records: str | None


def iter_merges(
    input_path: Corpus,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    **options: Unpack[TrainOptions],
) -> Iterator[MergeStep]:
    """Train on a file (or several, as one corpus), yielding each merge as it is made.
    ``workers``, ``progress``, ``pattern``, ``engine``, ``cluster``, ``text_field`` and
    ``records`` as for :func:`train_bpe`."""
    _check_options(options, "iter_merges")
    yield from trainer_from_file(input_path, vocab_size, special_tokens, **options)


# Names people bring from other trainers (CS336's adapters, multiprocessing) for ``workers``.
_WORKER_SPELLINGS = frozenset({"num_processes", "num_workers", "n_workers", "processes", "jobs"})


def _check_options(options: Mapping[str, object], where: str) -> None:
    """TypeError naming ``where`` (not the function it passes the options to) for an option
    it does not take, with the options it does."""
    known = TrainOptions.__annotations__
    for name in options:
        if name not in known:
            close = "workers" if name in _WORKER_SPELLINGS else None
            close = close or next(iter(difflib.get_close_matches(name, known, 1)), None)
            hint = f" (did you mean {close!r}?)" if close else ""
            raise TypeError(
                f"{where}() got an unexpected keyword argument {name!r}{hint}; its options "
                f"are {', '.join(known)}"
            )


def train_bpe(
    input_path: Corpus,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    **options: Unpack[TrainOptions],
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Train a byte-level BPE tokenizer on a UTF-8 text file, or on several files counted as
    one corpus (paths, globs such as ``"shards/*.txt.gz"``, fsspec URLs such as
    ``"s3://bucket/web/*.parquet"``; JSON Lines and Parquet records are documents). The
    tokenizer that encodes as it was trained is ``Tokenizer(vocab, merges, special_tokens,
    pattern)``.

    Keyword options (see :class:`TrainOptions`): ``workers`` (processes that pre-tokenize;
    None, the default, for every core), ``progress(bytes_done, bytes_total)`` during
    pre-tokenization, ``pattern`` (the pre-tokenization pattern, a name: "gpt2" (the
    default), "cl100k", "o200k", or a regex string) and ``engine`` (the merge engine,
    "auto" by default; see :class:`BpeTrainer`; the merges do not depend on it),
    ``cluster`` (count the pre-tokens on a Dask cluster: ``"local"``, ``"local:N"``, a
    scheduler's ``"tcp://HOST:PORT"`` or a ``distributed.Client``; the merges are the same;
    a local cluster is started from a script's ``if __name__ == "__main__":`` block, since
    each worker process runs the script again), ``text_field`` (the records' text field in
    ``.jsonl`` and ``.parquet`` files, ``"text"`` by default; another field for a corpus of
    plain text is a ValueError naming its files) and ``records`` (``"jsonl"`` or
    ``"parquet"``: every file holds such records, whatever its name says).

    Returns ``(vocab, merges)``: ``vocab`` maps id -> token bytes (0..255 the bytes, then the
    special tokens, then one token per merge), ``merges`` lists ``(left, right)`` in order.
    A special token of a single byte (``"a"``) is a ValueError naming it, before the corpus
    is read: the byte has its token already (``specials.refuse_single_bytes``).
    """
    _check_options(options, "train_bpe")
    trainer = trainer_from_file(input_path, vocab_size, special_tokens, **options)
    for _ in trainer:
        pass
    return dict(trainer.vocab), list(trainer.merges)
