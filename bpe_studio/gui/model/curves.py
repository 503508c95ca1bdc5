"""Compression curves computed away from the GUI thread as merges arrive: :class:`CurveFeeder`.

What it does: the GUI thread only enqueues work (``begin``, ``add_text``, ``feed``) and reads
the results (``series``, one :class:`CurveSeries` per text: ``tokens[k]`` is the text's token
count after ``k`` merges). A feeder thread hands the work to a child process running
:func:`~.curve_server.serve` and files its replies. No Qt signal crosses threads: the plot polls
``version``. A new ``begin`` makes everything enqueued before it stale: the thread drops it.
A process that ended (killed) is reported once; the next ``begin`` starts a new one.

Why a process and not the thread itself: the counting is pure Python, so in any thread of the
app it holds the GIL the trainer needs; a process has its own. The figures that decided it
(``benchmarks/gui_bench.py``, curve on and off in the same run) are in the commit messages.
What it leaves out: drawing (``views/compression_plot``), choosing the texts, and Qt.
"""

from __future__ import annotations

import itertools
import queue
import threading
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import NamedTuple

from ...core.corpus.counting import mp_context
from ...core.formats.hf.pipeline import HfPipeline
from ...core.io.worker_pool import ended_abruptly
from .curve_server import HELD_OUT_BYTES, IN_SAMPLE_BYTES, Merge, TextSpec, serve

# The held-out text of the demo: TinyStories' validation split (resources/README.md).
DEFAULT_HELDOUT = Path(str(files("bpe_studio.resources") / "heldout" / "tinystories_valid.txt"))
SHUTDOWN_WAIT = 2.0  # s: how long closing waits for the curves before ending their process
# Merges per command sent to the process: the thread converts and pickles one command at a
# time, and calls the feeder's ``between_commands`` between two (the app's waits while the
# window repaints).
FEED_CHUNK = 512
IN_SAMPLE = "in-sample"
HELD_OUT = "held-out"
__all__ = [
    "HELD_OUT_BYTES",
    "IN_SAMPLE_BYTES",
    "CurveFailure",
    "CurveFeeder",
    "CurveSeries",
    "TextSpec",
    "live_curve_threads",
]

# Every feeder started and not yet shut down: tests assert none is left after closing.
_LIVE: set[CurveFeeder] = set()


def live_curve_threads() -> int:
    """How many curve threads or processes were started and are still running."""
    return sum(feeder.running for feeder in list(_LIVE))


class CurveFailure(NamedTuple):
    """A line saying what failed; for a text that could not be read, its curve and file."""

    message: str
    name: str | None = None
    path: Path | None = None


@dataclass
class CurveSeries:
    """One text's curve: ``tokens[k]`` is its token count after ``k`` merges (grown by the
    feeder thread; read a copy with :meth:`counts`)."""

    name: str
    source: str  # what the text is, for the legend: a file name
    bytes: int
    tokens: array = field(default_factory=lambda: array("q"))
    error: str | None = None  # the merges could not be followed (not a trained merge list)

    def counts(self) -> array:
        """A copy of the counts so far (an atomic slice: the thread may append meanwhile)."""
        return self.tokens[:]


@dataclass(frozen=True)
class BuildOrder:
    """A merge list in the order its tokens can be made: ``rows`` (the given rows, each after
    the merges that make its two parts, otherwise in rank order), how many rows were moved
    later than their rank, and how many can never apply (a part no merge makes)."""

    rows: list
    moved: int
    unmade: int


def build_order(rows: Sequence) -> BuildOrder:
    """The order in which ``rows`` (with ``left``, ``right``, in rank order) can be applied
    one by one, each part made before the merge that uses it. A trained run's merges already
    are in that order; a file's may not be (Llama 3's ``tokenizer.json`` lists merges whose
    parts later merges make): a merge waits until its parts exist, then comes right after
    the merge that made the last of them (merges that wait on the same token keep their rank
    order). Merges whose parts nothing makes are left out.

    >>> rows = [Merge(0, b"a", b"bc"), Merge(1, b"b", b"c"), Merge(2, b"x", b"y")]
    >>> order = build_order(rows)
    >>> [m.rank for m in order.rows], order.moved, order.unmade
    ([1, 0, 2], 1, 0)
    """
    made: set[bytes] = set()
    waiting: dict[bytes, list[int]] = {}  # a missing part -> the rows waiting for it
    missing: dict[int, int] = {}  # a waiting row -> how many of its parts are missing
    out: list = []
    moved = 0
    for i, row in enumerate(rows):
        parts = {part for part in (row.left, row.right) if len(part) > 1 and part not in made}
        if parts:
            missing[i] = len(parts)
            for part in parts:
                waiting.setdefault(part, []).append(i)
            continue
        ready = [i]
        while ready:  # this row, then the rows that waited for what it makes, in rank order
            j = ready.pop(0)
            if j != i:
                moved += 1
            out.append(rows[j])
            token = rows[j].left + rows[j].right
            if token in made:
                continue
            made.add(token)
            for k in waiting.pop(token, ()):
                missing[k] -= 1
                if missing[k] == 0:
                    del missing[k]
                    ready.append(k)
            ready.sort()
    return BuildOrder(out, moved, len(missing))


def _merges(rows: Sequence) -> list[Merge]:
    """Merges as sent to the process: plain tuples pickle fastest."""
    return [Merge(r.rank, r.left, r.right) for r in rows]


def _for_process(command: tuple) -> tuple:
    """``command`` with its merge rows made :class:`Merge` tuples (in the feeder thread).

    subtle: done on the GUI thread, this would be a large share of the frame that ends a run
    (the last frame's thousands of merges), and of every frame while training, with the
    trainer held (docs/responsiveness.md)."""
    if command[0] == "merges":
        return ("merges", _merges(command[1]))
    if command[0] == "begin":
        return (*command[:4], _merges(command[4]), *command[5:])
    return command


class CurveFeeder:
    """Feeds merges to compression curves in a child process (see module docstring)."""

    def __init__(self, between_commands: Callable[[], object] = lambda: None) -> None:
        # Called in the feeder thread before each command: the app waits there while the GUI
        # thread updates or repaints the views, so pickling never competes with a repaint.
        self._between_commands = between_commands
        # None asks the feeder thread to stop.
        self._queue: queue.SimpleQueue[tuple | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        # Written on the GUI thread only; the thread compares each command's generation.
        self.generation = 0
        self._submitted = 0  # commands enqueued (GUI thread)
        self._done = 0  # commands finished (feeder thread)
        self._numbers = itertools.count(1)
        #: The series by name; the thread rebinds the whole dict (an atomic swap).
        self.series: dict[str, CurveSeries] = {}
        #: Bumped by the thread after every change to ``series``.
        self.version = 0
        self._failures: queue.SimpleQueue[CurveFailure] = queue.SimpleQueue()
        self._closed = False  # shut down for good: later work (a late signal) is dropped

    # ------------------------------------------------------------ GUI side
    @property
    def busy(self) -> bool:
        """Work was enqueued that is not finished."""
        return self._done != self._submitted

    @property
    def running(self) -> bool:
        thread, process = self._thread, self._process
        return bool(
            (thread is not None and thread.is_alive())
            or (process is not None and process.is_alive())
        )

    def begin(
        self,
        texts: dict[str, TextSpec],
        special_tokens: Sequence[str] = (),
        pattern: str = "gpt2",
        merges: Sequence = (),
        pipeline: HfPipeline | None = None,
        ordinary: Sequence[str] = (),
    ) -> None:
        """Start over: new curves for ``texts`` (read in the process), then ``merges`` (rows
        with ``rank``, ``left``, ``right``) applied; everything enqueued before is dropped.
        ``pipeline`` and ``ordinary``: a loaded tokenizer's, cutting text as it encodes
        (``CompressionCurve``; a pipeline travels to the process as its JSON)."""
        self._start_over()
        command = (
            "begin", dict(texts), tuple(special_tokens), pattern, list(merges), pipeline,
            tuple(ordinary),
        )  # fmt: skip
        self._put(command)

    def add_text(self, name: str, spec: TextSpec) -> None:
        """Add (or, once read, replace) the curve ``name``, caught up with the merges so far."""
        self._put(("text", name, spec))

    def feed(self, merges: Sequence) -> None:
        """The next merges of the run, in rank order."""
        for i in range(0, len(merges), FEED_CHUNK):
            self._put(("merges", list(merges[i : i + FEED_CHUNK])))

    def cancel(self) -> None:
        """Drop all work and all curves."""
        self._start_over()
        self._put(("begin", {}, (), "gpt2", [], None, ()))

    def _start_over(self) -> None:
        # subtle: the curves go at once, not when the thread reaches the new command (it
        # may be busy with the old run's merges for seconds): a view drawing now shows none
        # of a run that is gone.
        self.generation += 1
        self.series = {}
        self.version += 1

    def take_failures(self) -> list[str]:
        """The texts that could not be read or followed since the last call, one line each."""
        return [failure.message for failure in self.take_failure_records()]

    def take_failure_records(self) -> list[CurveFailure]:
        """As :meth:`take_failures`, each with the curve and file that could not be read."""
        out: list[CurveFailure] = []
        while True:
            try:
                out.append(self._failures.get_nowait())
            except queue.Empty:
                return out

    def shutdown(self) -> None:
        """Drop all work and end the thread and the process (waits for both). Final: work
        sent afterwards (by a signal still on its way when the window closed) is dropped
        instead of starting a new process."""
        self.generation += 1
        self._closed = True
        _LIVE.discard(self)
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._queue.put(None)
        thread.join(SHUTDOWN_WAIT)
        process, self._process = self._process, None
        if process is not None:
            if thread.is_alive():  # stuck in a long computation: it holds nothing of ours
                process.terminate()
                thread.join(SHUTDOWN_WAIT)  # its recv ends with EOFError
            process.join(SHUTDOWN_WAIT)
            if process.is_alive():
                process.terminate()
                process.join()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _put(self, command: tuple) -> None:
        if self._closed:
            return
        if self._thread is None:
            self._start()
        self._submitted += 1
        self._queue.put((next(self._numbers), self.generation, command))

    def _start(self) -> None:
        # subtle: the process is started by the thread, not here. The first process of the
        # app also starts multiprocessing's fork server and waits to hear from it; on the GUI
        # thread that wait would freeze the window on the first Train with the curve on
        # (docs/responsiveness.md).
        thread = threading.Thread(target=self._run, name="bpe-curves", daemon=True)
        self._thread = thread
        _LIVE.add(self)
        thread.start()

    def _start_process(self) -> None:
        ours, theirs = mp_context().Pipe()
        # typeshed's BaseContext lacks Process, which every concrete start method's context has.
        process = mp_context().Process(  # type: ignore[attr-defined]
            target=serve, args=(theirs,), name="bpe-curves"
        )
        process.daemon = True
        process.start()
        theirs.close()
        self._process, self._conn = process, ours

    # --------------------------------------------------------- thread side
    def _run(self) -> None:
        try:
            self._start_process()
        except (OSError, RuntimeError) as error:
            self._failures.put(
                CurveFailure(f"compression curve: its process could not start ({error})")
            )
            self._drop_all()
            return
        conn: Connection | None = self._conn
        while True:
            item = self._queue.get()
            if item is None:
                try:
                    if conn is not None:
                        conn.send(("stop",))
                except OSError:
                    pass  # the process is gone already
                return
            number, generation, command = item
            try:
                if generation != self.generation:
                    continue
                if conn is None:
                    if command[0] != "begin":
                        continue  # the curves went with their process: a begin starts anew
                    try:
                        conn = self._restart_process()
                    except (OSError, RuntimeError) as error:
                        self._failures.put(
                            CurveFailure(
                                f"compression curve: its process could not start again ({error})"
                            )
                        )
                        continue
                self._between_commands()
                if command[0] == "begin":
                    self._publish({}, generation)
                conn.send(_for_process(command))
                self._receive(conn, generation)
            except (OSError, EOFError):
                # subtle: the error is the pipe's ("Broken pipe", or none at all), not why
                # the process ended; the next begin (a run, a loaded tokenizer, the curve
                # turned on again) starts a new one.
                conn = None
                self._failures.put(
                    CurveFailure(
                        f"compression curve: {ended_abruptly('its process')}; the next run, "
                        "or turning the curve off and on, starts it anew"
                    )
                )
            finally:
                self._done = number

    def _restart_process(self) -> Connection:
        """A new process in place of one that ended (reaped first)."""
        old, conn = self._process, self._conn
        if conn is not None:
            conn.close()
        if old is not None:
            old.join(SHUTDOWN_WAIT)
        self._start_process()
        assert self._conn is not None
        return self._conn

    def _drop_all(self) -> None:
        """With no process: mark every command done until shutdown (nothing is computed)."""
        while (item := self._queue.get()) is not None:
            self._done = item[0]

    def _receive(self, conn: Connection, generation: int) -> None:
        """File the process's replies to one command (those of a stale one are dropped)."""
        while True:
            reply = conn.recv()
            kind = reply[0]
            if kind == "done":
                return
            if generation != self.generation:
                continue
            if kind == "failure":
                self._failures.put(CurveFailure(*reply[1:]))
            elif kind == "series":
                _, name, source, size, counts, error = reply
                series = CurveSeries(name, source, size, counts, error)
                self._publish({**self.series, name: series}, generation)
            elif kind == "extend":
                for name, (counts, error) in reply[1].items():
                    known = self.series.get(name)
                    if known is not None:
                        known.tokens.extend(counts)
                        known.error = known.error or error
                self.version += 1

    def _publish(self, series: dict[str, CurveSeries], generation: int) -> None:
        if generation == self.generation:  # not replaced meanwhile by a new start
            self.series = series
            self.version += 1
