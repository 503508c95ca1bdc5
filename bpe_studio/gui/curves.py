"""Compression curves computed off the GUI thread as merges arrive: :class:`CurveFeeder`.

What it does: one Python thread owns a :class:`~bpe_studio.core.CompressionCurve` per text (an
in-sample slice of the corpus, a held-out file) and applies each merge it is fed to every one of
them, appending the token count after each merge to that text's :class:`CurveSeries`
(``tokens[k]`` is the count after ``k`` merges). The GUI thread only enqueues work (``begin``,
``add_text``, ``feed``) and reads the series; no Qt signal crosses threads, the plot polls
``version``. A new ``begin`` makes all earlier work stale: the thread drops it between merges.
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
from pathlib import Path
from typing import Protocol

from ..core import CompressionCurve

# The held-out text of the demo: TinyStories' validation split (resources/README.md).
DEFAULT_HELDOUT = Path(str(files("bpe_studio.resources") / "heldout" / "tinystories_valid.txt"))
IN_SAMPLE_BYTES = 1_000_000  # the in-sample slice: about this much of the corpus's start
IN_SAMPLE = "in-sample"
HELD_OUT = "held-out"
_CHECK_EVERY = 256  # merges between two looks at whether the work went stale

# Every feeder thread started and not yet joined: tests assert none is left after closing.
_LIVE: set[threading.Thread] = set()


def live_curve_threads() -> int:
    """How many curve threads were started and not yet shut down."""
    return sum(1 for thread in list(_LIVE) if thread.is_alive())


class Merge(Protocol):
    """What a curve needs of a merge: ``MergeStep`` and the tables' ``MergeRow`` both answer."""

    rank: int
    left: bytes
    right: bytes


def read_slice(path: Path, limit: int = IN_SAMPLE_BYTES) -> str:
    """The start of a UTF-8 file, about ``limit`` bytes, cut after a line break (or, with none,
    before an incomplete character). Raises ``ValueError`` naming the file for bad UTF-8."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        data = data[:limit]
        cut = data.rfind(b"\n")
        if cut > 0:
            data = data[: cut + 1]
    return _decode(path, data, partial_tail=True)


def read_text(path: Path) -> str:
    """A whole UTF-8 file; ``ValueError`` naming the file and byte offset for bad UTF-8."""
    return _decode(path, Path(path).read_bytes(), partial_tail=False)


def _decode(path: Path, data: bytes, *, partial_tail: bool) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        # subtle: a slice may end inside a character; only that tail is forgiven.
        if (
            partial_tail
            and error.start >= len(data) - 3
            and error.reason == "unexpected end of data"
        ):
            return data[: error.start].decode("utf-8")
        raise ValueError(f"{path}: not UTF-8 text (byte {error.start:,}: {error.reason})") from None


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


TextReader = Callable[[], str]


class CurveFeeder:
    """Feeds merges to compression curves in one background thread (see module docstring)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        # Written on the GUI thread only; the thread compares its work's generation with it.
        self.generation = 0
        self._submitted = 0  # commands enqueued (GUI thread)
        self._done = 0  # commands finished (feeder thread)
        self._numbers = itertools.count(1)
        #: The series by name; the thread rebinds the whole dict (an atomic swap).
        self.series: dict[str, CurveSeries] = {}
        #: Bumped by the thread after every change to ``series``.
        self.version = 0
        #: Texts that could not be read: one line each, taken by the GUI (``take_failures``).
        self._failures: queue.SimpleQueue[str] = queue.SimpleQueue()
        # Thread-side state of the current generation.
        self._merges: list[Merge] = []
        self._curves: dict[str, CompressionCurve] = {}
        self._specials: tuple[str, ...] = ()
        self._pattern = "gpt2"

    # ------------------------------------------------------------ GUI side
    @property
    def busy(self) -> bool:
        """Work was enqueued that the thread has not finished."""
        return self._done != self._submitted

    def begin(
        self,
        texts: dict[str, tuple[str, TextReader]],
        special_tokens: Sequence[str] = (),
        pattern: str = "gpt2",
        merges: Sequence[Merge] = (),
    ) -> None:
        """Start over: new curves for ``texts`` (name -> (source, reader), read in the thread),
        then ``merges`` applied; everything enqueued before is dropped."""
        self.generation += 1
        self._put(
            ("begin", self.generation, dict(texts), tuple(special_tokens), pattern, list(merges))
        )

    def add_text(self, name: str, source: str, reader: TextReader) -> None:
        """Add (or replace, once read) the curve ``name``, caught up with the merges so far."""
        self._put(("text", self.generation, name, source, reader))

    def feed(self, merges: Sequence[Merge]) -> None:
        """The next merges of the run, in rank order."""
        if merges:
            self._put(("merges", self.generation, list(merges)))

    def cancel(self) -> None:
        """Drop all work and all curves."""
        self.generation += 1
        self._put(("clear", self.generation))

    def take_failures(self) -> list[str]:
        out: list[str] = []
        while True:
            try:
                out.append(self._failures.get_nowait())
            except queue.Empty:
                return out

    def shutdown(self) -> None:
        """Drop all work and wait for the thread to end (it ends within a few merges)."""
        thread = self._thread
        self.generation += 1
        if thread is None:
            return
        self._queue.put(("stop",))
        thread.join()
        _LIVE.discard(thread)
        self._thread = None

    def _put(self, command: tuple) -> None:
        if self._thread is None:
            thread = threading.Thread(target=self._run, name="bpe-curves", daemon=True)
            self._thread = thread
            _LIVE.add(thread)
            thread.start()
        self._submitted += 1
        self._queue.put((next(self._numbers),) + command)

    # --------------------------------------------------------- thread side
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item[0] == "stop":
                return
            number, kind, generation, *args = item
            try:
                if generation == self.generation:
                    getattr(self, f"_do_{kind}")(generation, *args)
            except Exception as error:  # the curves must fail visibly, never kill the thread
                self._failures.put(f"compression curve: {type(error).__name__}: {error}")
            finally:
                self._done = number

    def _stale(self, generation: int) -> bool:
        return generation != self.generation

    def _do_clear(self, generation: int) -> None:
        self._merges, self._curves = [], {}
        self._publish({})

    def _do_begin(
        self,
        generation: int,
        texts: dict[str, tuple[str, TextReader]],
        specials: tuple[str, ...],
        pattern: str,
        merges: list[Merge],
    ) -> None:
        self._merges, self._curves = [], {}
        self._specials, self._pattern = specials, pattern
        self._publish({})
        for name, (source, reader) in texts.items():
            self._do_text(generation, name, source, reader)
        self._do_merges(generation, merges)

    def _do_text(self, generation: int, name: str, source: str, reader: TextReader) -> None:
        try:
            text = reader()
        except (OSError, ValueError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            where = f"{error.filename}: " if isinstance(error, OSError) and error.filename else ""
            self._failures.put(f"{name} text {source}: {where}{reason}")
            return
        if self._stale(generation):
            return
        curve = CompressionCurve(text, self._specials, pattern=self._pattern)
        series = CurveSeries(name, source, curve.bytes)
        series.tokens.append(curve.tokens)
        if not self._follow(generation, curve, series, self._merges):
            return
        self._curves[name] = curve
        self._publish({**self.series, name: series})

    def _do_merges(self, generation: int, merges: list[Merge]) -> None:
        self._merges.extend(merges)
        for name, curve in list(self._curves.items()):
            series = self.series.get(name)
            if series is not None and not self._follow(generation, curve, series, merges):
                return
        self.version += 1

    def _follow(
        self, generation: int, curve: CompressionCurve, series: CurveSeries, merges: list[Merge]
    ) -> bool:
        """Apply ``merges`` to ``curve``, appending to ``series``; False if the work went stale."""
        if series.error is not None:
            return True
        append, apply = series.tokens.append, curve.apply
        for i, step in enumerate(merges):
            if i % _CHECK_EVERY == 0:
                if self._stale(generation):
                    return False
                self.version += 1
            try:
                append(apply(step))  # type: ignore[arg-type]  # MergeRow answers as MergeStep
            except ValueError as error:
                series.error = str(error)
                return True
        return True

    def _publish(self, series: dict[str, CurveSeries]) -> None:
        self.series = series
        self.version += 1
