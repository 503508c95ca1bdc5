"""Counting a corpus as tasks, and running them in worker processes of this machine.

What it does: :func:`make_tasks` cuts a corpus (``sources``) into :class:`CountTask` units:
byte ranges of a plain local text file, cut where the pattern always cuts
(``boundaries.chunk_boundaries``, as ever), or of a plain local JSON Lines file, cut at line
breaks; a whole compressed or remote file, read as a stream; one Parquet row group.
:func:`count_task` counts one, wherever it runs (a process of this machine or a Dask
worker, ``cluster``). A file boundary is a document boundary, and so is a record boundary: a
stream is counted a piece at a time, cut only where the pattern always cuts, and each record's
text alone. :func:`count_file` runs the tasks here: in this process for a small corpus, in
worker processes otherwise, by the compiled kernels when ``counting`` says so;
:func:`count_corpus` is the same, returning the compiled counts as the arrays they are in
(``tally.PieceCounts``) for the trainer.
What it leaves out: the counting primitives (``counting``), reading records (``records``),
counting on a cluster (``cluster``).
"""

from __future__ import annotations

import codecs
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial

from ..io.interrupts import checked, held_interrupts, raise_dropped, results
from ..io.worker_pool import WorkerPool
from ..pretokenization.boundaries import CutRules, chunk_boundaries, cut_rules, text_cuts
from ..pretokenization.pretokenizer import UncoveredText, pretokenizer
from ..pretokenization.scanner import compiled_scanner
from ..pretokenization.specials import Specials, validate_special_tokens
from ..text.surrogates import replace_surrogates
from . import counting
from .counting import (
    ChunkResult,
    MeasuredFn,
    ProgressFn,
    _collect,
    _count_chunk,
    _count_into,
    _encoded,
    _line_of,
    counting_scanner,
    mp_context,
    not_utf8,
    pack_counts,
    pool_start_explained,
    prepare_counting,
    resolve_workers,
    start_worker,
    uncovered_error,
)
from .records import (
    DEFAULT_TEXT_FIELD,
    Place,
    jsonl_documents,
    parquet_documents,
    parquet_row_groups,
)
from .sources import (
    CorpusError,
    CorpusFile,
    CorpusPaths,
    Kind,
    changes_first,
    check_counted_once,
    check_text_field,
    check_text_files,
    check_unchanged_files,
    resolve_corpus,
)
from .tally import CompiledCounter, PieceCounts

# subtle: the sizes that decide how a corpus is cut (``counting.IN_PROCESS_LIMIT``,
# ``CHUNK_BYTES``, ``IN_PROCESS_CHUNK``, ``WORKER_PIECE``) are read from ``counting`` when used,
# so there is one setting of each for the byte-range workers there and the tasks here.
# A stream (a compressed or remote file) is decompressed and decoded this many bytes at a time.
STREAM_BLOCK = 4 * 1024 * 1024
Corpus = CorpusPaths | Sequence[CorpusFile]


@dataclass(frozen=True)
class CountTask:
    """One unit of counting: bytes ``start``..``end`` of a plain local file (``end`` None:
    the whole file, read as a stream), or Parquet row group ``group``. ``nbytes`` is the
    stored bytes it stands for (progress); ``field`` the records' text field."""

    file: CorpusFile
    start: int = 0
    end: int | None = None
    group: int | None = None
    nbytes: int = 0
    field: str = DEFAULT_TEXT_FIELD


def line_boundaries(path: str, target: int) -> list[int]:
    """Byte offsets ``[0, ..., size]`` about ``target`` bytes apart, each just after a line
    break (a JSON Lines record never holds one)."""
    size = os.path.getsize(path)
    bounds = [0]
    with open(path, "rb") as f:
        while bounds[-1] + target < size:
            f.seek(bounds[-1] + target)
            f.readline()
            if f.tell() >= size:
                break
            bounds.append(f.tell())
    return bounds + [size]


def make_tasks(
    files: Sequence[CorpusFile],
    target: int,
    special_tokens: list[str],
    pattern: str,
    field: str = DEFAULT_TEXT_FIELD,
    rules: CutRules | None = None,
) -> list[CountTask]:
    """The tasks counting ``files`` takes; byte ranges are about ``target`` bytes, cut by
    ``pattern``'s rules, or by ``rules`` when given (a tokenizer's own: a ``tokenizer.json``
    pipeline's, which its steps and normalizer decide)."""
    rules = rules if rules is not None else cut_rules(pattern)
    specials = Specials.of(special_tokens)
    tasks: list[CountTask] = []
    for f in files:
        if f.kind is Kind.PARQUET:
            with f.open() as stream:
                sizes = parquet_row_groups(stream, f.name)
            tasks += [CountTask(f, group=g, nbytes=n, field=field) for g, n in enumerate(sizes)]
        elif f.plain_local:
            if f.kind is Kind.TEXT:
                bounds = chunk_boundaries(f.url, target, specials, rules)
            else:
                bounds = line_boundaries(f.url, target)
            tasks += [
                CountTask(f, a, b, nbytes=b - a, field=field) for a, b in zip(bounds, bounds[1:])
            ]
        else:
            tasks.append(CountTask(f, nbytes=f.size, field=field))
    return tasks


def count_task(
    task: CountTask, special_tokens: list[str], pattern: str, compiled: bool = False
) -> ChunkResult:
    """Count one task's pre-tokens (in any process) and pack them (``counting.ChunkResult``);
    ``compiled``: with the pattern's compiled scanner (``counting.counting_scanner``)."""
    if not compiled:
        # A worker started clean builds its own; forked ones have count_corpus's.
        counting.prepare_patterns(pattern, task.nbytes)
    f = task.file
    if f.kind is Kind.TEXT:
        if task.end is not None:
            try:
                return _count_chunk(
                    (f.url, task.start, task.end, special_tokens, pattern, compiled)
                )
            except (CorpusError, UncoveredText) as e:
                # Read by its absolute path (a worker's directory may be another), named as
                # the user named it.
                raise type(e)(str(e).replace(f.url, f.name, 1)) from None
        return (*_count_stream(f, special_tokens, pattern, compiled), task.nbytes)

    place = Place()

    def documents() -> Iterable[str]:
        if task.group is not None:
            with f.open() as stream:
                yield from parquet_documents(stream, f.name, task.group, task.field, place)
        elif task.end is not None:
            with open(f.url, "rb") as stream:
                stream.seek(task.start)
                lines = _ByteRange(stream, task.end - task.start)
                line_of = _line_from(f.url, task.start)
                yield from jsonl_documents(lines, f.name, task.field, line_of, place)
        else:
            with f.open() as stream:
                yield from jsonl_documents(stream, f.name, task.field, place=place)

    counted = _count_documents(documents, f.name, special_tokens, pattern, compiled, place)
    return (*counted, task.nbytes)


class _ByteRange:
    """The lines of an open file from where it stands, up to ``size`` bytes (a record range)."""

    def __init__(self, f: Iterable[bytes], size: int) -> None:
        self._f, self._left = f, size

    def __iter__(self) -> Iterator[bytes]:
        for line in self._f:
            if self._left <= 0:
                return
            self._left -= len(line)
            yield line


def _line_from(path: str, start: int) -> Callable[[int], int]:
    """Line numbers in ``path`` of the lines of a range starting at byte ``start`` (its
    first line's counted once, when first asked: an error's)."""
    first = cache(lambda: _line_of(path, start))
    return lambda i: first() + i


def _count_stream(
    f: CorpusFile, special_tokens: list[str], pattern: str, compiled: bool = False
) -> tuple[bytes, bytes]:
    """Count a file read as a stream, a block at a time: what may still change as text comes
    in (within the pattern's lookahead and the longest special token of the end) waits for
    the next block, so the counts are those of the whole text. Returns them packed."""
    specials, rules = Specials.of(special_tokens), cut_rules(pattern)
    counter = _counter(specials, pattern, compiled)
    margin = specials.longest + (rules.lookahead or 0) + 4
    decoder = codecs.getincrementaldecoder("utf-8")()
    carry, read, line = "", 0, 1
    with f.open() as stream:
        while True:
            block = stream.read(STREAM_BLOCK)
            pending = len(decoder.getstate()[0])
            try:
                text = carry + decoder.decode(block, final=not block)
            except UnicodeDecodeError as e:
                # The lines before ``carry``, in it, and in this block before the error (the
                # decoder's pending bytes, part of one character, hold no line break).
                at = line + carry.count("\n") + block.count(b"\n", 0, max(e.start - pending, 0))
                raise not_utf8(f.text_name, read - pending + e.start, e.reason, at) from None
            read += len(block)
            cuts = text_cuts(text, specials, rules, counting.WORKER_PIECE)
            if block:  # subtle: a cut this close to the end may not be one in the whole text
                cuts = [0] + [c for c in cuts[1:] if c <= len(text) - margin]
            try:
                counter.add(text, cuts)
            except UncoveredText:

                def where(at: int, text: str = text, first: int = line) -> str:
                    return f"line {first + text.count(chr(10), 0, at)} of its text"

                raise uncovered_error(f.name, text, specials, pattern, where) from None
            line += text.count("\n", 0, cuts[-1])
            carry = text[cuts[-1] :]
            if not block:
                return counter.packed()


class _RegexCounter:
    """Pre-token counts on the regex path: a ``Counter`` of strings."""

    def __init__(self, specials: Specials, pattern: str) -> None:
        self.counts: Counter[str] = Counter()
        self._split, self._findall = specials.split, pretokenizer(pattern).findall

    def add(self, text: str, cuts: Sequence[int]) -> bool:
        _count_into(self.counts, text, cuts, self._split, self._findall)
        return True

    def packed(self) -> tuple[bytes, bytes]:
        """The counts packed; UnicodeEncodeError when a pre-token holds a surrogate."""
        return pack_counts(_encoded(self.counts))


def _counter(specials: Specials, pattern: str, compiled: bool) -> _RegexCounter | CompiledCounter:
    """What counts a task's texts: the compiled scanner's tally, or the regex path."""
    scanner = compiled_scanner(pattern) if compiled else None
    if scanner is None:
        return _RegexCounter(specials, pattern)
    return CompiledCounter(scanner, specials)


def _count_documents(
    documents: Callable[[], Iterable[str]],
    name: str,
    special_tokens: list[str],
    pattern: str,
    compiled: bool = False,
    place: Place | None = None,
) -> tuple[bytes, bytes]:
    """Count each document on its own (no pre-token crosses two) and add them up; returns
    the counts packed. ``place``: where the document being counted lies, for errors."""
    specials, rules = Specials.of(special_tokens), cut_rules(pattern)
    counter = _counter(specials, pattern, compiled)
    if isinstance(counter, CompiledCounter):
        # A batch of documents at a time, each a stretch of its own: one call per batch.
        ok = _add_batched(counter, documents(), specials, rules)
    else:
        ok = True
        for doc in documents():
            try:
                counter.add(doc, _document_cuts(doc, specials, rules))
            except UncoveredText as e:
                where = place.now if place is not None else "a record"
                raise UncoveredText(f"{name}: {where}: {e}") from None
    if ok:
        try:
            return counter.packed()
        except UnicodeEncodeError:
            pass
    # subtle: a JSON string may escape a lone surrogate ("\ud800"); such documents are
    # counted as the tokenizer encodes them (``surrogates``), so they are read again.
    return _count_documents(
        lambda: map(replace_surrogates, documents()),
        name,
        special_tokens,
        pattern,
        compiled,
        place,
    )


def _document_cuts(doc: str, specials: Specials, rules: CutRules) -> list[int]:
    if len(doc) > counting.WORKER_PIECE:
        return text_cuts(doc, specials, rules, counting.WORKER_PIECE)
    return [0, len(doc)]


def _add_batched(
    counter: CompiledCounter, docs: Iterable[str], specials: Specials, rules: CutRules
) -> bool:
    """Count ``docs`` about ``WORKER_PIECE`` characters at a time; False at a surrogate."""
    batch: list[str] = []
    cuts = [0]
    for doc in docs:
        base = cuts[-1]
        cuts += [base + c for c in _document_cuts(doc, specials, rules)[1:]]
        batch.append(doc)
        if cuts[-1] >= counting.WORKER_PIECE:
            if not counter.add("".join(batch), cuts):
                return False
            batch, cuts = [], [0]
    return not batch or counter.add("".join(batch), cuts)


def count_file(
    path: Corpus,
    special_tokens: Sequence[str] = (),
    *,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    should_stop: Callable[[], bool] | None = None,
    pattern: str = "gpt2",
    started: Callable[[], None] | None = None,
    measured: MeasuredFn | None = None,
    text_field: str | None = None,
    records: str | None = None,
    status: Callable[[str], None] | None = None,
) -> Counter[bytes]:
    """Count the pre-tokens of a corpus (see :func:`count_corpus`, which takes the same
    arguments) into a ``Counter`` of their UTF-8 bytes."""
    counts = count_corpus(
        path,
        special_tokens,
        workers=workers,
        progress=progress,
        should_stop=should_stop,
        pattern=pattern,
        started=started,
        measured=measured,
        text_field=text_field,
        records=records,
        status=status,
    )
    if isinstance(counts, PieceCounts):
        return counts.counter()
    assert isinstance(counts, Counter)
    return counts


def count_corpus(
    path: Corpus,
    special_tokens: Sequence[str] = (),
    *,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    should_stop: Callable[[], bool] | None = None,
    pattern: str = "gpt2",
    started: Callable[[], None] | None = None,
    measured: MeasuredFn | None = None,
    text_field: str | None = None,
    records: str | None = None,
    status: Callable[[str], None] | None = None,
) -> Mapping[bytes, int]:
    """Count the pre-tokens of a corpus: one file or several counted as one corpus, each a
    path, a glob or a URL (``sources``), under ``pattern`` (a name or a regex string). Plain
    text is UTF-8; in ``.jsonl`` and ``.parquet`` files (or every file, with ``records``
    "jsonl" or "parquet") each record's ``text_field`` (default "text") is a document; a
    field other than the default for a corpus without records is an error
    (``sources.check_text_field``). No pre-token crosses two files or two records.

    Small corpora are counted in this process; larger ones in ``workers`` processes (None:
    every core; see :func:`~bpe_studio.core.corpus.counting.resolve_workers`), each reading its own
    tasks. ``progress(bytes_done, bytes_total)`` is called as tasks finish (bytes as stored).
    ``should_stop()`` is polled between tasks; when it returns true,
    :class:`~bpe_studio.core.corpus.counting.TrainingCancelled` is raised.
    ``started()`` is called once counting is under way, after any worker process has started
    (a thread it starts is then not inherited by a forked worker). ``measured(positions)``
    is told, after each task, the positions (see ``trainer.count_positions``) of the
    pre-tokens counted so far: it grows to the whole corpus's, never beyond.
    A corpus of ``counting.COMPILED_COUNT_FROM`` bytes or more, under a pattern with a
    compiled scanner, is counted by the compiled kernels (the same counts); the first run
    on a machine compiles them first, and ``status(message)`` hears of it.
    Errors (a missing file, invalid UTF-8, a record without its text field) name the file.
    Returns a ``Counter``, or, when the kernels counted, ``tally.PieceCounts`` (the same
    counts, held in arrays: the trainer hands them to the merge engines as they are).
    """
    files = corpus_files(path, records)
    check_text_field(files, text_field)
    check_counted_once(files)
    check_text_files(files)
    text_field = text_field or DEFAULT_TEXT_FIELD
    specials = validate_special_tokens(special_tokens)
    pattern = pretokenizer(pattern).pattern  # a bad regex fails here, before any work
    size = sum(f.size for f in files)
    workers = resolve_workers(workers)
    # subtle: prepared here, before any worker is forked, so that each starts with the kernels
    # (or, on the regex path, with the fast patterns).
    compiled = prepare_counting(counting_scanner(pattern, size), status)
    if not compiled:
        counting.prepare_patterns(pattern, size)
    if size <= counting.IN_PROCESS_LIMIT or workers == 1 and size <= 4 * counting.IN_PROCESS_LIMIT:
        tasks = make_tasks(files, counting.IN_PROCESS_CHUNK, specials, pattern, text_field)
        total = sum(t.nbytes for t in tasks)
        if progress:
            progress(0, total)
        if started:
            started()
        run = partial(count_task, special_tokens=specials, pattern=pattern, compiled=compiled)
        # Between two chunks, a Ctrl-C a finalizer dropped is raised (``raise_dropped``).
        counts = checked(map(run, tasks), raise_dropped)
        with changes_first(files):
            counted = _collect(counts, total, progress, should_stop, measured, compiled)
        check_unchanged_files(files)
        return counted

    target = min(counting.CHUNK_BYTES, max(size // (workers * 4), 1 << 20))
    # A file that exists only in this process goes to the workers with its bytes.
    files = [f.carried() for f in files]
    tasks = make_tasks(files, target, specials, pattern, text_field)
    total = sum(t.nbytes for t in tasks)
    if progress:
        progress(0, total)
    run = partial(count_task, special_tokens=specials, pattern=pattern, compiled=compiled)
    # Ctrl-C is held while the pool runs and raised between two results (held_interrupts).
    context = mp_context()
    with (
        pool_start_explained(context),
        held_interrupts() as check,
        # (no more workers than chunks: one beyond them would start only to wait)
        WorkerPool(min(workers, len(tasks)), mp_context=context, initializer=start_worker) as pool,
    ):
        try:
            # subtle: every job is submitted at once, which starts all the workers.
            counts = results([pool.submit(run, task) for task in tasks], check)
            if started:
                started()
            with changes_first(files):
                counted = _collect(counts, total, progress, should_stop, measured, compiled)
            check_unchanged_files(files)
            return counted
        except BaseException as error:
            pool.end(error)
            raise


def corpus_files(path: Corpus, records: str | None = None) -> list[CorpusFile]:
    """The files of a corpus named by paths, globs or URLs (``records`` as for
    ``sources.resolve_corpus``), or already resolved."""
    if isinstance(path, (str, os.PathLike)):
        return resolve_corpus(path, records)
    if isinstance(path, (bytes, bytearray)) or not isinstance(path, Iterable):
        raise TypeError(
            f"a corpus is a path (str or os.PathLike), or a list of them, not "
            f"{type(path).__name__} {path!r:.60}"
        )
    given = list(path)
    odd = next((p for p in given if not isinstance(p, (str, os.PathLike, CorpusFile))), None)
    if odd is not None:
        raise TypeError(
            f"a corpus path must be a str or os.PathLike, not {type(odd).__name__} {odd!r:.60}"
        )
    if given and all(isinstance(f, CorpusFile) for f in given):
        return [f for f in given if isinstance(f, CorpusFile)]
    return resolve_corpus([f for f in given if not isinstance(f, CorpusFile)], records)
