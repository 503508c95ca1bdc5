"""The Vocabulary lab's own process: builds tokenizers and runs the core's vocabulary report.

What it does: :func:`serve` runs in a child process (started by ``lab_process.LabProcess``)
and answers messages on a pipe: the run's data in slices (``run-base``, ``run-merges``,
``loaded-vocab``, ``loaded-merges``, ``loaded-rest``), then a ``job``
(:class:`~.lab_records.LabJob`): the make-up of its tokenizer (``core.explain.vocabulary``),
the usage of its corpus (``core.explain.usage``, in worker processes of its own) and the
overlap with its second tokenizer (``core.explain.overlap``); ``stop`` ends it. It replies
with progress, each result as soon as it is known, a failure naming the part that failed,
and how the job ended. A job is cancelled when the app raises the shared number of the last
cancelled job to its own (``core.explain.work.Cancelled`` between slices of the work).
It keeps the last few tokenizers and tables, so a new corpus or second tokenizer costs no
rebuild, and a run's table is extended with its newest tokens only.

Why a process: the report holds the interpreter for long single calls (pickling a tokenizer
for the usage's worker processes: half a second for o200k; the overlap's set operations over
200,000 tokens: a tenth of a second), which in a thread of the app would stall the window
(docs/responsiveness.md).
What it leaves out: threads and Qt (this module must not import them: the child imports it).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from ...core import Tokenizer
from ...core.corpus.counting import ignore_interrupts, runs_without_qt
from ...core.encode.foreign import AnyTokenizer, open_tokenizer
from ...core.explain.categories import CATEGORIES
from ...core.explain.overlap import Overlap, overlap
from ...core.explain.usage import CorpusUsage, corpus_usage
from ...core.explain.vocabulary import TokenTable, token_table
from ...core.explain.work import Cancelled
from ...core.formats.base.data import TokenizerData
from .errors import describe_job_error
from .lab_records import (
    CorpusRef,
    Ended,
    Failure,
    Kind,
    LabJob,
    MakeupResult,
    Outcome,
    OverlapResult,
    Part,
    Progress,
    TokenizerRef,
    TokenizerSpec,
    UsageResult,
)

KEPT = 3  # tokenizers (and their tables) kept between jobs
PROGRESS_EVERY = 0.05  # s: progress replies at most this often


class _JobCancel:
    """``is_set()`` once the app has cancelled job ``number`` (or a later one)."""

    def __init__(self, cancelled_upto: Any, number: int) -> None:
        self._shared, self._number = cancelled_upto, number

    def is_set(self) -> bool:
        return bool(self._shared.value >= self._number)


class _Server:
    def __init__(self, conn: Connection, cancelled_upto: Any) -> None:
        self.conn = conn
        self.cancelled_upto = cancelled_upto
        self.tokenizers: OrderedDict[tuple, AnyTokenizer] = OrderedDict()
        self.tables: OrderedDict[tuple, TokenTable] = OrderedDict()
        # The run's data as received (one run at a time, kept apart from the tokenizers
        # above: the sender sends it only when the run or its merges are new): a trained
        # run's id, base vocabulary, special tokens, pattern and merges (new id, left,
        # right); or a loaded one's tokenizer, and the parts of it still arriving.
        self.run_id: int | None = None
        self.run_base: tuple[dict[int, bytes], tuple[str, ...], str] = ({}, (), "gpt2")
        self.run_merges: list[tuple[int, bytes, bytes]] = []
        self.run_table: TokenTable | None = None  # the latest table of that run (previous=)
        self.loaded_run: tuple[int, TokenizerData | Tokenizer] | None = None
        self.loaded: dict[str, Any] = {}
        self._last_progress = 0.0
        self._last_stage = ""

    # ----------------------------------------------------------- messages
    def handle(self, message: tuple) -> bool:
        """Act on one message; False for ``stop``."""
        kind = message[0]
        if kind == "stop":
            return False
        if kind == "run-base":
            _, run_id, base, specials, pattern = message
            if run_id != self.run_id:
                self.run_id, self.run_merges, self.run_table = run_id, [], None
            self.run_base = (dict(base), tuple(specials), pattern)
        elif kind == "run-merges":
            _, run_id, start, merges = message
            if run_id == self.run_id:
                del self.run_merges[start:]
                self.run_merges.extend(merges)
        elif kind == "loaded-vocab":
            self.loaded.setdefault("vocab", {}).update(message[1])
        elif kind == "loaded-merges":
            self.loaded.setdefault("merges", []).extend(message[1])
        elif kind == "loaded-rest":
            _, run_id, rest = message
            parts, self.loaded = self.loaded, {}
            data = TokenizerData(parts.get("vocab", {}), parts.get("merges", []), **rest)
            self.loaded_run = (run_id, data)  # built by the job that needs it
            if run_id != self.run_id:
                self.run_id, self.run_merges, self.run_table = run_id, [], None
        elif kind == "job":
            self.run_job(message[1])
        else:  # a message of a kind this process does not know: the app's mistake, said
            raise ValueError(f"the Vocabulary lab's process got an unknown message {kind!r}")
        return True

    def send(self, reply: object) -> None:
        self.conn.send(reply)

    def progress(self, number: int, stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        soon = now - self._last_progress < PROGRESS_EVERY
        if soon and done < total and stage == self._last_stage:
            return
        self._last_progress, self._last_stage = now, stage
        self.send(Progress(number, stage, done, total))

    # ---------------------------------------------------------- the work
    def run_job(self, job: LabJob) -> None:
        cancel = _JobCancel(self.cancelled_upto, job.number)
        part, key = Part.A, job.a.ref.key
        try:
            a = self.tokenizer(job, job.a)
            table = self.table(job, job.a, a, cancel, steps=job.steps)
            if job.makeup:
                self.send(MakeupResult(job.a.ref, table, tuple(a.notes)))
            if job.corpus is not None:
                part, key = Part.CORPUS, job.corpus.label
                self.send(self.usage(job, a, table, job.corpus, cancel))
            if job.b is not None:
                part, key = Part.B, job.b.ref.key
                b = self.tokenizer(job, job.b)
                other = self.table(job, job.b, b, cancel, steps=False)
                part = Part.JOB
                self.progress(job.number, "comparing the vocabularies", 0, 1)
                self.send(overlap_result(job.a.ref, job.b.ref, table, other, tuple(b.notes)))
        except Cancelled:
            self.send(Ended(job.number, Outcome.CANCELLED))
            return
        except Exception as error:  # every failure is the user's to hear, one line
            self.send(Failure(job.number, part, key, describe_job_error(error)))
            self.send(Ended(job.number, Outcome.FAILED))
            return
        self.send(Ended(job.number, Outcome.DONE))

    def tokenizer(self, job: LabJob, spec: TokenizerSpec) -> AnyTokenizer:
        key = spec.cache_key
        tok = self.tokenizers.get(key)
        if tok is None:
            self.progress(job.number, f"loading {spec.ref.name}", 0, 1)
            tok = self._build(spec)
            self.tokenizers[key] = tok
            while len(self.tokenizers) > KEPT:
                self.tokenizers.popitem(last=False)
        self.tokenizers.move_to_end(key)
        return tok

    def _build(self, spec: TokenizerSpec) -> AnyTokenizer:
        if spec.kind is Kind.PRESET:
            return Tokenizer.preset(spec.source)
        if spec.kind is Kind.FILE:
            tok = open_tokenizer(spec.source)
            if spec.name:
                tok.name = spec.name
            return tok
        run_id = spec.ref.run_id
        if spec.ref.merges is None:  # a loaded tokenizer, received in slices before the job
            if self.loaded_run is None or self.loaded_run[0] != run_id:
                raise ValueError("the run's tokenizer did not arrive")  # sent before the job
            built = self.loaded_run[1]
            if isinstance(built, TokenizerData):
                built = Tokenizer.from_data(built)
                self.loaded_run = (run_id, built)
            return built
        if run_id != self.run_id:
            raise ValueError("the run's data did not arrive")  # the sender sends it first
        base, specials, pattern = self.run_base
        rows = self.run_merges[: spec.ref.merges]
        vocab = dict(base)
        vocab.update((made, left + right) for made, left, right in rows)
        merges = [(left, right) for _, left, right in rows]
        return Tokenizer(vocab, merges, list(specials), pattern)

    def table(
        self, job: LabJob, spec: TokenizerSpec, tok: AnyTokenizer, cancel: _JobCancel, steps: bool
    ) -> TokenTable:
        key = (*spec.cache_key, steps)
        table = self.tables.get(key)
        if table is not None:
            self.tables.move_to_end(key)
            return table
        previous = None
        if spec.kind is Kind.RUN and spec.ref.run_id == self.run_id:
            previous = self.run_table
        stage = f"classifying the tokens of {spec.ref.name}"

        def progress(done: int, total: int) -> None:
            self.progress(job.number, stage, done, total)

        table = token_table(tok, progress=progress, cancel=cancel, previous=previous, steps=steps)
        if spec.kind is Kind.RUN and spec.ref.run_id == self.run_id:
            self.run_table = table
        self.tables[key] = table
        while len(self.tables) > KEPT:
            self.tables.popitem(last=False)
        return table

    def usage(
        self,
        job: LabJob,
        tok: AnyTokenizer,
        table: TokenTable,
        corpus: CorpusRef,
        cancel: _JobCancel,
    ) -> UsageResult:
        stages = {
            "decompressing": f"decompressing {corpus.label}",
            "encoding": f"encoding {corpus.label}",
            "scanning": f"scanning {corpus.label}",
        }

        def progress(phase: str, done: int, total: int) -> None:
            self.progress(job.number, stages.get(phase, phase), done, total)

        usage = corpus_usage(
            tok,
            list(corpus.paths),
            table=table,
            workers=job.workers,
            text_field=corpus.text_field,
            records=corpus.records,
            progress=progress,
            cancel=cancel,
            # The encoder's first compile on this machine: said, not a silent stall.
            status=lambda message: self.progress(job.number, message, 0, 0),
            # The counts go to the tab as soon as the encoding pass ends; the scan for the
            # unused tokens' bytes (about a third of the time) completes them after.
            encoded=lambda first: self.send(
                usage_result(job.a.ref, corpus, first, table, complete=False)
            ),
        )
        return usage_result(job.a.ref, corpus, usage, table)


def usage_result(
    ref: TokenizerRef,
    corpus: CorpusRef,
    usage: CorpusUsage,
    table: TokenTable,
    complete: bool = True,
) -> UsageResult:
    """``usage`` with what the tab draws worked out here: the ranking, and per category how
    many ordinary tokens were used and never used (``complete``: see ``UsageResult``)."""
    ids, counts = usage.ranked(table)
    unused = {name: len(group) for name, group in usage.unused_by_category(table).items()}
    used_mask = ~table.special & (usage.row_counts(table) > 0)
    used_codes = np.bincount(table.category[used_mask], minlength=len(CATEGORIES))
    used = {CATEGORIES[c]: int(n) for c, n in enumerate(used_codes.tolist()) if n}
    return UsageResult(ref, corpus, usage, ids, counts, used, unused, complete)


def overlap_result(
    ref: TokenizerRef,
    other_ref: TokenizerRef,
    table: TokenTable,
    other: TokenTable,
    other_notes: tuple[str, ...] = (),
) -> OverlapResult:
    """The overlap of two tables, with the rows of each whose bytes the other holds."""
    shares = overlap(table, other)
    mine, theirs = _shared_rows(table, shares), _shared_rows(other, shares)
    return OverlapResult(ref, other_ref, shares, other, mine, theirs, other_notes)


def _shared_rows(table: TokenTable, shares: Overlap) -> np.ndarray:
    """A mask over ``table``'s rows: its ordinary tokens whose bytes both vocabularies hold."""
    shared = set(shares.shared_tokens)
    held = np.fromiter((t in shared for t in table.tokens), dtype=bool, count=len(table))
    return held & ~table.special


def serve(conn: Connection, cancelled_upto: Any, temp: str | None = None) -> None:
    """The process's loop: one message at a time until ``stop`` or the app goes away.
    ``temp``: the folder its temporary files go in, which the app removes once it has ended
    (an ended process removes nothing: closing the window ends a busy one at once)."""
    # subtle: the report makes millions of objects and no cycles (core.explain.work); the
    # collector would only walk the tokenizers kept here.
    import gc
    import os
    import tempfile

    if temp is not None:
        tempfile.tempdir = temp
    gc.disable()
    ignore_interrupts()  # Ctrl-C in the app's terminal is the app's to handle
    if hasattr(os, "setpgrp"):
        # subtle: a group of its own, which its usage's worker processes (forked from it)
        # join: the app ends the whole group when this process does not stop in time
        # (``LabProcess.shutdown``); ending this process alone would leave them waiting.
        os.setpgrp()
    runs_without_qt()
    server = _Server(conn, cancelled_upto)
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return  # the app is gone
            if not server.handle(message):
                return
    except (BrokenPipeError, EOFError, OSError):
        return
    finally:
        conn.close()
