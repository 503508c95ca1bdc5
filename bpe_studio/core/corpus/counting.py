"""Counting pre-tokens: the primitives every corpus task uses, and the byte-range worker.

What it does: turns text (or byte ranges of files, read by worker processes) into
``{pretoken_bytes: count}`` under a pre-tokenization pattern (GPT-2's unless told otherwise).
Special tokens are split out first and never counted; pre-tokens never cross a special token.
A text is counted a piece at a time, cut where counting piece by piece gives exactly the
counts of the whole text (``boundaries``, with the pattern's cut rules). Partial counts travel
packed (:func:`pack_counts`) and are added up as they arrive (``_collect``). From
:data:`COMPILED_COUNT_FROM` bytes a pattern with a compiled scanner is counted by the kernels
instead (:func:`counting_scanner`, :func:`prepare_counting`; ``tally``), with the same counts.
Also the sizes that decide how a corpus is cut, the one rule for a ``workers`` argument
(:func:`resolve_workers`) and the choice of how worker processes start. What it leaves out:
which files and tasks (``sources``, ``tasks``), merging (``train``).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from ..io.worker_memory import keep_freed_memory
from ..io.worker_pool import workers_within_limit
from ..pretokenization import re_split, scan_load
from ..pretokenization.boundaries import cut_rules, text_cuts
from ..pretokenization.pretokenizer import (
    UncoveredText,
    first_uncovered,
    pretokenizer,
    uncovered_message,
)
from ..pretokenization.scanner import Scanner, compiled_scanner
from ..pretokenization.specials import Specials
from ..text.surrogates import replace_surrogates
from .sources import CorpusError
from .stamps import read_range

# A file smaller than this is counted in-process: starting workers would cost more than it saves.
IN_PROCESS_LIMIT = 4 * 1024 * 1024
# Workers read chunks of about this size, so no process ever holds the whole corpus.
CHUNK_BYTES = 4 * 1024 * 1024
# In-process counting goes chunk by chunk too: each chunk is a few long calls into C that hold
# the GIL, which other threads (the GUI's) wait for, so chunks stay short
# (docs/patterns.md, "Thresholds and the figures behind them").
IN_PROCESS_CHUNK = 256 * 1024
# A worker splits its chunk into pieces of about this many characters: the list of pre-token
# strings one ``findall`` returns costs some 60 bytes per pre-token, so a whole chunk's list
# would be the largest thing a worker holds (docs/training.md, "Memory").
WORKER_PIECE = 256 * 1024
# Separates the pre-tokens in a worker's result: a byte that UTF-8 never contains.
_SEPARATOR = b"\xff"
# A corpus of at least this many bytes, under a pattern with a compiled scanner, is counted
# by the compiled kernels (``tally``); a smaller one on the regex path, unless the kernels
# are loaded already. Below it compiled counting would still save time (half of it at 20 MB)
# but numba's ~90 MiB would be more than the whole regex-path run takes, and the issue keeps
# memory at most today's (docs/training.md, "Compiled counting", "The threshold").
COMPILED_COUNT_FROM = 32 * 1024 * 1024
# Counting at least this many characters on the regex path builds a named pattern's fast ``re``
# forms first (``re_split.prepare``): text is split a WORKER_PIECE at a time, and GPT-2's
# pieces are too short for ``re_split`` to build its pattern on its own, so every non-ASCII
# piece went to ``regex``, at about half ``re``'s speed. Building it costs ~18 ms of CPU, what
# ``re`` wins back on about 0.7 MB of English (docs/training.md, "Counting on the regex path").
FAST_PATTERNS_FROM = 1024 * 1024

ProgressFn = Callable[[int, int], None]
FindallFn = Callable[[str], list[str]]
SplitFn = Callable[[str], list[str]]


class TrainingCancelled(Exception):
    """Raised when training is cancelled before any merge was made (during pre-tokenization)."""


def count_text(
    text: str, special_tokens: Sequence[str] = (), *, pattern: str = "gpt2"
) -> Counter[bytes]:
    """Count the pre-tokens (as UTF-8 bytes) of ``text`` under ``pattern`` (a name or a regex
    string), special tokens split out first. Surrogates are replaced as the tokenizer does
    (see ``surrogates``)."""
    return Counter(_count_str(text, [0, len(text)], special_tokens, pattern))


def _count_str(
    text: str, cuts: Sequence[int], special_tokens: Sequence[str], pattern: str
) -> dict[bytes, int]:
    """The pre-token counts (as UTF-8 bytes) of ``text``, counted one piece ``text[cuts[i]:
    cuts[i + 1]]`` at a time; ``cuts`` are places no pre-token crosses (``boundaries``)."""
    counts: Counter[str] = Counter()
    split = Specials.of(special_tokens).split
    _count_into(counts, text, cuts, split, pretokenizer(pattern).findall)
    try:
        return _encoded(counts)
    except UnicodeEncodeError:
        # subtle: joining surrogate pairs changes the text's length; the cuts are dropped
        # (a decoded file never holds surrogates, only text passed in as a str does).
        text = replace_surrogates(text)
        return _count_str(text, [0, len(text)], special_tokens, pattern)


def _count_into(
    counts: Counter[str], text: str, cuts: Sequence[int], split: SplitFn, findall: FindallFn
) -> None:
    """Add the pre-tokens of ``text`` to ``counts``, one piece ``text[cuts[i]:cuts[i + 1]]``
    at a time, special tokens split out of each."""
    for a, b in zip(cuts, cuts[1:]):
        for piece in split(text[a:b] if b - a < len(text) else text):
            counts.update(findall(piece))


def _encoded(counts: Counter[str]) -> dict[bytes, int]:
    """``counts`` keyed by UTF-8 bytes; UnicodeEncodeError when a key holds a surrogate."""
    return {k.encode("utf-8"): v for k, v in counts.items()}


def prepare_patterns(pattern: str, size: int) -> None:
    """Before counting ``size`` characters (or bytes) under ``pattern`` on the regex path:
    build a named pattern's fast forms now if the text repays it (:data:`FAST_PATTERNS_FROM`;
    worker processes forked afterwards start with them). Custom regexes have none."""
    if size >= FAST_PATTERNS_FROM:
        re_split.prepare(pretokenizer(pattern).name)


def counts_compiled(pattern: str, size: int) -> bool:
    """Whether a corpus of ``size`` bytes under ``pattern`` is counted by the compiled kernels
    whatever this process has loaded (see :data:`COMPILED_COUNT_FROM`)."""
    return size >= COMPILED_COUNT_FROM and compiled_scanner(pattern) is not None


def counting_scanner(pattern: str, size: int) -> Scanner | None:
    """The compiled scanner that counts a corpus of ``size`` bytes under ``pattern``, or None
    for the regex path: from :data:`COMPILED_COUNT_FROM` bytes, or for any size once the
    kernels are loaded in this process (they then cost nothing more)."""
    if size < COMPILED_COUNT_FROM and not scan_load.ready():
        return None
    return compiled_scanner(pattern)


def prepare_counting(scanner: Scanner | None, status: Callable[[str], None] | None) -> bool:
    """Make the compiled kernels ready before counting with ``scanner`` (forked workers then
    start with them): loaded, or compiled on the first run, which ``status`` hears of.
    False (the regex path, then) when there is no scanner or numba fails to load."""
    if scanner is None:
        return False
    try:
        scan_load.prepare(status)
    except scan_load.ScannerUnavailable:
        return False
    return True


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity (macOS, Windows)
        return os.cpu_count() or 1


def resolve_workers(workers: int | None) -> int:
    """The number of processes a ``workers`` argument asks for: None means every core this
    process may run on (``available_cores``), as many as the open-file limit has room for
    (``worker_pool.workers_within_limit``, at least 1); otherwise a whole number of at least
    1 (0 and negatives are errors, not "all")."""
    # A pool's worker (multiprocessing's daemonic processes) may start no process of its own.
    daemonic = multiprocessing.current_process().daemon
    if workers is None:
        if daemonic:
            return 1
        fit = workers_within_limit()  # (however they start: not known yet)
        return available_cores() if fit is None else max(1, min(available_cores(), fit))
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise TypeError(f"workers must be a whole number or None, got {workers!r}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1 (or None for every core), got {workers}")
    if workers > 1 and daemonic:
        raise ValueError(
            f"workers={workers}: this process is a worker of a multiprocessing pool, which "
            "may start no processes of its own; pass workers=1 (or None)"
        )
    return workers


def not_utf8(name: str, offset: int, reason: str, line: int | None = None) -> CorpusError:
    """The error for a file whose text is not UTF-8 at byte ``offset`` (of its decompressed
    text, for a compressed file), on ``line`` (from 1) when it is known."""
    on_line = f", line {line}" if line is not None else ""
    return CorpusError(
        f"{name}: not valid UTF-8 at byte offset {offset} ({reason}){on_line}; convert the "
        "file to UTF-8 first"
    )


def read_head(
    path: str | os.PathLike, limit: int, *, whole_lines: bool = False, name: str | None = None
) -> str:
    """The start of the UTF-8 file ``path``: at most ``limit`` bytes, cut back to a whole
    character, and with ``whole_lines`` after the last line break in them (where there is
    one); the whole file when it is shorter. Text that is not UTF-8 raises
    :func:`not_utf8`'s error naming the file (as ``name`` when given), byte offset and line,
    as training would: one message for every reader of a file's start."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    cut = len(data) > limit
    if cut:
        data = data[:limit]
        end = data.rfind(b"\n") if whole_lines else -1
        if end > 0:
            data = data[: end + 1]
    return decode_head(data, name or os.fspath(path), cut=cut)


def decode_head(data: bytes, name: str, *, cut: bool) -> str:
    """``data``, the start of the file ``name``, decoded; ``cut``: more of it follows, so a
    character cut at its end is left out. Text that is not UTF-8 raises :func:`not_utf8`'s
    error naming the file, byte offset and line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        # subtle: a cut through the last character's bytes is "unexpected end of data";
        # everything before that character is whole.
        if cut and e.reason == "unexpected end of data" and e.start >= len(data) - 3:
            return data[: e.start].decode("utf-8")
        line = data.count(b"\n", 0, e.start) + 1
        raise not_utf8(name, e.start, e.reason, line) from None


def decode_chunk(
    data: bytes,
    path: str | os.PathLike,
    offset: int,
    *,
    with_line: bool = False,
    name: str | None = None,
    ranged: bool = False,
) -> str:
    """``data``, read from byte ``offset`` of ``path``, decoded; an error names the file (as
    ``name`` when given) and the byte offset, and with ``with_line`` the line too (for a chunk
    after the file's start, ``path`` is the file itself: the lines before the chunk are
    counted in it, on the error path only). ``ranged``: ``data`` is a byte range of the file
    ``path``, which may go on after it."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = None
        if with_line:
            before = _line_of(path, offset) if offset else 1
            line = before + data.count(b"\n", 0, e.start)
        reason = e.reason
        if ranged and e.end == len(data):
            reason = _reason_read_on(path, offset + e.start, data[e.start :]) or reason
        raise not_utf8(name or os.fspath(path), offset + e.start, reason, line) from None


def _reason_read_on(path: str | os.PathLike, at: int, head: bytes) -> str | None:
    """Why the character that starts at byte ``at`` of ``path`` with ``head`` (a range's
    last bytes, cut short by its end) is not UTF-8, read on into the file: a range that ends
    inside a bad character would otherwise say "unexpected end of data" where the file goes
    on (and decoding the whole file says "invalid continuation byte")."""
    with open(path, "rb") as f:
        f.seek(at)
        rest = f.read(4)
    try:
        rest.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.reason if e.start == 0 and rest.startswith(head) else None
    return None


def _line_of(path: str | os.PathLike, offset: int) -> int:
    """The line (from 1) of ``path`` that holds byte ``offset``."""
    lines, done = 1, 0
    with open(path, "rb") as f:
        while done < offset:
            block = f.read(min(1 << 20, offset - done))
            if not block:
                break
            lines += block.count(b"\n")
            done += len(block)
    return lines


def uncovered_in_file(
    path: str | os.PathLike, start: int, text: str, specials: Specials, pattern: str
) -> UncoveredText:
    """The error for a chunk of ``path`` (``text``, read from byte ``start``) that
    ``pattern`` leaves a character of unmatched (``pattern.UncoveredText``): it names the
    file and the line and byte offset of the first such character."""

    def where(at: int) -> str:
        offset = start + len(text[:at].encode("utf-8", "surrogatepass"))
        return f"line {_line_of(path, offset)} (byte offset {offset})"

    return uncovered_error(os.fspath(path), text, specials, pattern, where)


def uncovered_error(
    name: str, text: str, specials: Specials, pattern: str, where: Callable[[int], str]
) -> UncoveredText:
    """The error naming file ``name`` for ``text``, which ``pattern`` leaves a character of
    unmatched; ``where(offset)`` tells where the character at ``offset`` of ``text`` is."""
    compiled = pretokenizer(pattern).compiled
    at = next(
        (
            i
            for a, b, _ in specials.segments(text)
            if (i := first_uncovered(compiled, text, a, b)) >= 0
        ),
        0,
    )
    return UncoveredText(f"{name}: {uncovered_message(pattern, text[at], where(at))}")


# path, start, end, special tokens, pattern[, compiled: count with its scanner].
_Job = tuple[str, int, int, list[str], str] | tuple[str, int, int, list[str], str, bool]
# A chunk's counts as a worker sends them: its pre-tokens joined by _SEPARATOR, their counts
# (array "q", as bytes), and the chunk's size in bytes.
ChunkResult = tuple[bytes, bytes, int]
# Told, after each chunk is added up, the positions of the pre-tokens counted so far (the bytes
# of the unique pre-tokens of two bytes or more, see ``trainer.count_positions``).
MeasuredFn = Callable[[int], None]


def pack_counts(counts: dict[bytes, int]) -> tuple[bytes, bytes]:
    """``counts`` as two flat byte strings (see :data:`ChunkResult`): one pickled object each,
    where a pickled dict costs an object and a memo entry per pre-token on both sides."""
    return _SEPARATOR.join(counts), array("q", counts.values()).tobytes()


def unpack_counts(tokens: bytes, freqs: bytes) -> tuple[list[bytes], list[int]]:
    """The pre-tokens and counts :func:`pack_counts` packed, in the same order."""
    numbers = array("q")
    numbers.frombytes(freqs)
    # subtle: b"".split(sep) is [b""], not []: an empty chunk has no pre-token to list.
    return (tokens.split(_SEPARATOR) if numbers else []), numbers.tolist()


def _count_chunk(args: _Job) -> ChunkResult:
    """Worker: read one byte range of a file, count its pre-tokens a piece at a time and pack
    the counts."""
    path, start, end, special_tokens, pattern = args[:5]
    compiled = len(args) > 5 and bool(args[5])
    with open(path, "rb") as f:
        data = read_range(f, start, end, path)
    text = decode_chunk(data, path, start, with_line=True, ranged=True)
    del data
    specials = Specials.of(special_tokens)
    cuts = text_cuts(text, specials, cut_rules(pattern), WORKER_PIECE)
    scanner = compiled_scanner(pattern) if compiled else None
    if scanner is not None:
        from .tally import count_packed

        # subtle: a decoded file holds no surrogate, so the counts always pack.
        packed = count_packed(scanner, specials, text, cuts)
        assert packed is not None
        return (*packed, end - start)
    try:
        counts = _count_str(text, cuts, special_tokens, pattern)
    except UncoveredText:
        raise uncovered_in_file(path, start, text, specials, pattern) from None
    del text
    return (*pack_counts(counts), end - start)


def _collect(
    results: Iterable[ChunkResult],
    size: int,
    progress: ProgressFn | None,
    should_stop: Callable[[], bool] | None,
    measured: MeasuredFn | None = None,
    compiled: bool = False,
) -> Mapping[bytes, int]:
    """Add up chunk counts as they arrive, reporting progress and the positions so far, and
    polling for a stop; ``compiled``: in a :class:`~.tally.Tally` (the kernels loaded), whose
    :class:`~.tally.PieceCounts` it returns, else a ``Counter``."""
    if compiled:
        return _collect_compiled(results, size, progress, should_stop, measured)
    total: Counter[bytes] = Counter()
    get = total.get
    done = positions = 0
    for tokens, freqs, nbytes in results:
        keys, numbers = unpack_counts(tokens, freqs)
        del tokens, freqs
        if total:
            for key, n in zip(keys, numbers):
                old = get(key)
                if old is None:
                    total[key] = n
                    if len(key) > 1:
                        positions += len(key)
                else:
                    total[key] = old + n
        else:
            dict.update(total, zip(keys, numbers))
            positions = sum(n for n in map(len, keys) if n > 1)
        del keys, numbers
        if measured:
            measured(positions)
        done += nbytes
        if progress:
            progress(done, size)
        if should_stop and should_stop():
            raise TrainingCancelled("training cancelled during pre-tokenization")
    return total


def _collect_compiled(
    results: Iterable[ChunkResult],
    size: int,
    progress: ProgressFn | None,
    should_stop: Callable[[], bool] | None,
    measured: MeasuredFn | None,
) -> Mapping[bytes, int]:
    from .tally import Tally

    tally = Tally()
    done = 0
    for tokens, freqs, nbytes in results:
        tally.add(tokens, freqs)
        del tokens, freqs
        if measured:
            measured(tally.positions)
        done += nbytes
        if progress:
            progress(done, size)
        if should_stop and should_stop():
            raise TrainingCancelled("training cancelled during pre-tokenization")
    return tally.piece_counts()


def ignore_interrupts() -> None:
    """Pool initializer: a worker ignores SIGINT. Ctrl-C in a terminal signals the whole
    process group; the parent alone handles it (it stops the pool and reports once), so no
    worker prints a traceback of its own. SIGTERM ends a worker whatever its parent does with
    it (the command line turns it into Ctrl-C: a forked worker would inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start_worker() -> None:
    """Pool initializer of the workers that count or encode chunks: SIGINT ignored
    (:func:`ignore_interrupts`) and freed memory kept for the next chunk
    (``worker_memory.keep_freed_memory``)."""
    ignore_interrupts()
    keep_freed_memory()


@contextmanager
def pool_start_explained(context: multiprocessing.context.BaseContext) -> Iterator[None]:
    """Turn a pool broken at its start under forkserver or spawn into what to do about it.

    subtle: ``mp_context`` leaves fork for a process that runs other threads; a worker
    started otherwise imports the user's script again first, and one with no ``__main__``
    guard starts training again there, which multiprocessing refuses: the pool broke with
    "terminated abruptly", which says none of this."""
    try:
        yield
    except BrokenProcessPool as e:
        script = getattr(sys.modules.get("__main__"), "__file__", None)
        method = context.get_start_method()
        if method == "fork" or not script:
            raise
        raise RuntimeError(
            f"the worker processes stopped as they started. They were started with {method}, "
            "not fork, because this process runs other threads (forking it could deadlock), "
            f"so each first imports the script {script} again and runs its top level. Put the "
            'call under `if __name__ == "__main__":`, or pass workers=1'
        ) from e


_WITHOUT_QT = False  # set by runs_without_qt


def runs_without_qt() -> None:
    """Say that this process starts no Qt though PySide6 may be imported (a process of the
    app's started by the fork server, which imports the app's main module first): while it
    runs one thread, :func:`mp_context` may then fork it. Its workers are then its children,
    in its process group, and their queues' semaphores are never named, so ending the group
    at once (the app closing during a job) leaves none for the app's resource tracker to
    warn of at its exit."""
    global _WITHOUT_QT
    _WITHOUT_QT = True


def mp_context() -> multiprocessing.context.BaseContext:
    """fork where it is safe (fast, and scripts need no ``__main__`` guard); otherwise a clean
    start. subtle: forking a process that runs other threads (the GUI trains from a QThread,
    and Qt keeps threads of its own) can deadlock the child."""
    methods = multiprocessing.get_all_start_methods()
    single_threaded = (
        threading.current_thread() is threading.main_thread()
        and threading.active_count() == 1
        and (_WITHOUT_QT or not any(m.startswith(("PySide6", "PyQt")) for m in sys.modules))
    )
    if "fork" in methods and hasattr(os, "fork") and single_threaded:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
