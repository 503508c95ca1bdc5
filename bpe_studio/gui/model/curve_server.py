"""The compression curves' own process: reads the texts and applies the merges it is sent.

What it does: :func:`serve` runs in a child process (started by ``curves.CurveFeeder``) and
answers commands on a pipe: ``begin`` (new texts and the merges so far), ``text`` (add or
replace one text, caught up with the merges so far), ``merges`` (the next merges) and ``stop``.
It holds one :class:`~bpe_studio.core.CompressionCurve` per text and replies with the token
counts after each merge. Why a process: the counting is pure Python, and in a thread of the
app it would take the GIL from the trainer (docs in ``curves``). :func:`read_slice` and
:func:`read_text` read the texts, with one-line errors naming the file.
What it leaves out: threads, Qt (this module must not import it: the child imports it).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import NamedTuple

from ...core import CompressionCurve
from ...core.corpus.counting import decode_chunk, ignore_interrupts, read_head
from ...core.corpus.head import corpus_head
from ...core.explain.report import CORPUS_LIMIT
from ...core.formats.hf.pipeline import HfPipeline
from .lab_records import CorpusRef

IN_SAMPLE_BYTES = CORPUS_LIMIT  # the in-sample slice: the Report's corpus sample
HELD_OUT_BYTES = 10_000_000  # a held-out file is measured on at most about this much


# Sends one reply to the app (the pipe's send).
Reply = Callable[[tuple], None]


class TextSpec(NamedTuple):
    """Where a curve's text comes from: ``path``, its first ~``limit`` bytes or (None) all;
    or, given ``corpus``, that corpus's first ~``limit`` bytes however it is kept (compressed,
    records, several files: ``corpus.head``; ``path`` is then its first path)."""

    path: Path
    limit: int | None = None
    corpus: CorpusRef | None = None

    @classmethod
    def of_corpus(cls, corpus: CorpusRef, limit: int) -> TextSpec:
        return cls(Path(corpus.paths[0]), limit, corpus)

    @property
    def source(self) -> str:
        return self.corpus.label if self.corpus is not None else self.path.name

    def read(self) -> str:
        if self.corpus is not None:
            c = self.corpus
            return corpus_head(c.paths, self.limit or 0, c.text_field, c.records)
        return read_text(self.path) if self.limit is None else read_slice(self.path, self.limit)


class Merge(NamedTuple):
    """A merge as sent to the process (what ``CompressionCurve.apply`` reads of a step)."""

    rank: int
    left: bytes
    right: bytes


def read_slice(path: Path, limit: int = IN_SAMPLE_BYTES) -> str:
    """The start of a UTF-8 file, about ``limit`` bytes, cut after a line break (or, with none,
    before an incomplete character). Raises ``ValueError`` naming the file, byte offset and
    line for bad UTF-8 (``counting.read_head``)."""
    return read_head(path, limit, whole_lines=True)


def read_text(path: Path) -> str:
    """A whole UTF-8 file; ``ValueError`` naming the file, byte offset and line for bad
    UTF-8, as training says it."""
    return decode_chunk(Path(path).read_bytes(), path, 0, with_line=True)


def describe(name: str, spec: TextSpec, error: Exception) -> str:
    if isinstance(error, OSError) and error.strerror:
        return f"{name} text {spec.path}: {error.strerror}"
    return f"{name} text: {error}"


class _Curves:
    """The child's state: the texts' curves and every merge of the current run so far."""

    def __init__(self) -> None:
        self.specials: tuple[str, ...] = ()
        self.pattern = "gpt2"
        # A loaded tokenizer.json's pipeline, and the tokens matched but read as text.
        self.pipeline: HfPipeline | None = None
        self.ordinary: tuple[str, ...] = ()
        self.merges: list[Merge] = []
        self.curves: dict[str, CompressionCurve] = {}
        self.failed: set[str] = set()  # curves whose merges could not be followed

    def add(self, name: str, spec: TextSpec, reply: Reply) -> None:
        try:
            text = spec.read()
        except (OSError, ValueError) as unreadable:
            # The curve and its file travel with the message: the plot goes back from a
            # held-out text it cannot read (views/compression_plot).
            reply(("failure", describe(name, spec, unreadable), name, spec.path))
            return
        curve = CompressionCurve(
            text, self.specials, pattern=self.pattern, pipeline=self.pipeline,
            ordinary=self.ordinary,
        )  # fmt: skip
        counts, error = _follow(curve, [curve.tokens], self.merges)
        self.curves[name] = curve
        self.failed.discard(name)
        if error is not None:
            self.failed.add(name)
        reply(("series", name, spec.source, curve.bytes, counts, error))

    def extend(self, merges: list[Merge], reply: Reply) -> None:
        self.merges.extend(merges)
        out = {}
        for name, curve in self.curves.items():
            if name not in self.failed:
                counts, error = _follow(curve, [], merges)
                if error is not None:
                    self.failed.add(name)
                out[name] = (counts, error)
        reply(("extend", out))


def _follow(
    curve: CompressionCurve, counts: list[int], merges: list[Merge]
) -> tuple[array, str | None]:
    """Apply ``merges``, appending each count to ``counts``; the error that stopped it, if any."""
    append, apply = counts.append, curve.apply
    try:
        for step in merges:
            append(apply(step))  # type: ignore[arg-type]  # a Merge answers as a MergeStep
    except ValueError as error:
        return array("q", counts), str(error)
    return array("q", counts), None


def serve(conn: Connection) -> None:
    """The child process's loop; every command is answered with replies, then ``("done",)``."""
    ignore_interrupts()  # Ctrl-C in the app's terminal is the app's to handle, not this loop's
    state = _Curves()
    reply = conn.send
    while True:
        try:
            command = conn.recv()
        except EOFError:  # the app is gone
            return
        kind = command[0]
        if kind == "stop":
            return
        try:
            if kind == "begin":
                _, texts, state.specials, state.pattern, merges, pipeline, ordinary = command
                state.pipeline, state.ordinary = pipeline, ordinary
                state.merges, state.curves, state.failed = [], {}, set()
                state.extend(merges, lambda _: None)
                for name, spec in texts.items():
                    state.add(name, spec, reply)
            elif kind == "text":
                _, name, spec = command
                state.add(name, spec, reply)
            elif kind == "merges":
                state.extend(command[1], reply)
            else:  # the app's mistake: said, not ignored
                raise ValueError(f"unknown command {kind!r}")
        except Exception as error:  # report, and keep serving
            reply(("failure", f"compression curve: {type(error).__name__}: {error}"))
        reply(("done",))
