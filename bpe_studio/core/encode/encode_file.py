"""Encode a whole text file to a NumPy ``.npy`` array of token ids, in parallel.

What it does: cuts the file at boundaries that cannot change the ids (before a special token,
or after a safe line break: see ``boundaries.chunk_boundaries``), encodes the chunks in worker
processes, and streams their ids into the output in order, so neither the text nor all the ids
are ever held at once. The output is written beside its final name and renamed into place
(``atomic``). What it leaves out: the command line (``bpe_studio.cli``).
"""

from __future__ import annotations

import gc
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from ..corpus.counting import ignore_interrupts, mp_context, resolve_workers
from ..corpus.sources import check_corpus_path
from ..io.atomic import atomic_open
from ..pretokenization.boundaries import chunk_boundaries
from .forked_encode import AVAILABLE as CAN_FORK
from .forked_encode import crew, encode_range
from .tokenizer import Tokenizer

# Chunks are at most this large (bounding each worker's memory). Below that, each chunk is
# about the bytes not yet dealt out over twice the number of processes, and at least
# MIN_CHUNK_BYTES (past its last cut): every chunk has a fixed cost, but a forked process's
# larger chunks write more of the memory it shares with the others (copied on write), and
# the last chunks are small, so the processes finish together.
CHUNK_BYTES = 2 * 1024 * 1024
MIN_CHUNK_BYTES = 128 * 1024
# Below this size one process is faster than starting workers.
PARALLEL_MIN_BYTES = 1024 * 1024
# From this size on, the tokenizer's bulk tables are built before encoding starts.
PREPARE_MIN_BYTES = 256 * 1024

_worker_tokenizer: Tokenizer | None = None


@dataclass(frozen=True)
class EncodeStats:
    input_bytes: int
    tokens: int
    seconds: float  # encoding and writing; setup_seconds are not in it
    dtype: str
    setup_seconds: float = 0.0  # building the tokenizer's bulk tables (see prepare_bulk)
    load_seconds: float = 0.0  # building the tokenizer, when encode_file was given a builder

    @property
    def bytes_per_token(self) -> float:
        return self.input_bytes / self.tokens if self.tokens else 0.0

    @property
    def mb_per_second(self) -> float:
        return self.input_bytes / 1e6 / self.seconds if self.seconds > 0 else float("inf")


def ids_dtype(tokenizer: Tokenizer) -> np.dtype:
    """uint16 when every id fits, else uint32."""
    return np.dtype(np.uint16 if max(tokenizer.vocab) < 2**16 else np.uint32)


def _init_worker(tokenizer: Tokenizer | None) -> None:
    global _worker_tokenizer
    ignore_interrupts()
    # A worker makes no reference cycles (strings, bytes, dicts of them): the cyclic collector
    # would only spend time walking its caches.
    gc.disable()
    if tokenizer is not None:
        _worker_tokenizer = tokenizer


def _encode_range(job: tuple[str, int, int, str]) -> tuple[np.ndarray, int]:
    """Worker: the ids of one byte range of the file, and the range's length."""
    path, start, end, dtype = job
    assert _worker_tokenizer is not None
    return encode_range(_worker_tokenizer, path, start, end, dtype), end - start


def _ranges(tokenizer: Tokenizer, path: str, size: int, workers: int) -> list[tuple[int, int]]:
    """The byte ranges the file is encoded in (see CHUNK_BYTES): runs of the file's cuts
    every MIN_CHUNK_BYTES or more (``chunk_boundaries``), joined into chunks."""
    target = min(CHUNK_BYTES // 2, max(MIN_CHUNK_BYTES, size // 1024))
    cuts = chunk_boundaries(path, target, tokenizer.specials, tokenizer.cut_rules)
    bounds = [0]
    for cut in cuts[1:-1]:
        wanted = min(CHUNK_BYTES - target, (size - bounds[-1]) // (2 * workers))
        # The file's last run, often short, goes with the chunk before it.
        if cut - bounds[-1] >= wanted and cuts[-1] - cut >= target // 2:
            bounds.append(cut)
    bounds.append(cuts[-1])
    return list(zip(bounds, bounds[1:]))


def _parallel(size: int, workers: int, ranges: list[tuple[int, int]]) -> bool:
    return workers > 1 and size >= PARALLEL_MIN_BYTES and len(ranges) > 1


def _chunks(
    tokenizer: Tokenizer, path: str, ranges: list[tuple[int, int]], workers: int, dtype: np.dtype
) -> Iterator[tuple[np.ndarray, int]]:
    """Each range's ids and length, in order: in this process, or in a pool of freshly
    started workers (where this process may not fork, see ``corpus.mp_context``)."""
    jobs = [(path, a, b, dtype.name) for a, b in ranges]
    global _worker_tokenizer
    if not _parallel(os.path.getsize(path), workers, ranges):
        _worker_tokenizer = tokenizer
        for job in jobs:
            yield _encode_range(job)
        return
    with ProcessPoolExecutor(
        workers, mp_context=mp_context(), initializer=_init_worker, initargs=(tokenizer,)
    ) as pool:
        # subtle: map() submits every job up front but results come back in order; each
        # is a few MB, and chunks are written as soon as they arrive.
        try:
            yield from pool.map(_encode_range, jobs)
        except BaseException:
            # Interrupted or failed: drop the queued chunks instead of encoding them all.
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def _write_npy(f: IO[bytes], dtype: np.dtype, total: int, blocks: Iterable[bytes]) -> None:
    header = {"descr": dtype.str, "fortran_order": False, "shape": (total,)}
    np.lib.format.write_array_header_1_0(f, header)
    for block in blocks:
        f.write(block)


def encode_file(
    tokenizer: Tokenizer | Callable[[], Tokenizer],
    input_path: str | os.PathLike,
    output_path: str | os.PathLike,
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> EncodeStats:
    """Encode ``input_path`` (UTF-8) into ``output_path`` (a 1-D ``.npy`` of ids), in
    ``workers`` processes (None: every core; see ``corpus.resolve_workers``).

    ``tokenizer`` is a tokenizer or a function that builds one (called once here, and its
    time is ``load_seconds``): given that, where workers are forked, up to one per core is
    forked first and builds its own tokenizer while this process builds its (see
    ``forked_encode.Crew.fork``), so building costs no time on free cores and the workers
    then encode faster; each holds its own tokenizer's memory.

    The ids equal ``tokenizer.encode`` of the file's text. A UTF-8 file cannot hold a lone
    surrogate (its three-byte form is invalid UTF-8): such a file raises ``CorpusError``
    naming the byte offset, like any other invalid UTF-8."""
    src = check_corpus_path(input_path)
    out = Path(output_path)
    workers = resolve_workers(workers)
    size = src.stat().st_size
    path = os.fspath(src)
    out.parent.mkdir(parents=True, exist_ok=True)
    if _forks(workers, size):
        return _encode_forked(tokenizer, path, size, workers, out, progress)
    tok, load_seconds = _built(tokenizer)
    dtype = ids_dtype(tok)
    setup_start = time.perf_counter()
    _prepare(tok, size)
    start = time.perf_counter()
    ranges = _ranges(tok, path, size, workers)
    total = _encode_in_order(tok, path, ranges, workers, dtype, out, _Progress(size, progress))
    return EncodeStats(
        size, total, time.perf_counter() - start, dtype.name, start - setup_start, load_seconds
    )


def _forks(workers: int, size: int) -> bool:
    """Whether to encode in forked children (``forked_encode``) rather than in a pool of
    freshly started workers: for a parallel encode, where this process may fork
    (``corpus.mp_context``) and the platform has what a crew needs."""
    if workers < 2 or size < PARALLEL_MIN_BYTES or not CAN_FORK:
        return False
    return mp_context().get_start_method() == "fork"


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity (macOS)
        return os.cpu_count() or 1


def _built(tokenizer: Tokenizer | Callable[[], Tokenizer]) -> tuple[Tokenizer, float]:
    """The tokenizer (built, if given a function that builds one) and the seconds that took."""
    if isinstance(tokenizer, Tokenizer):
        return tokenizer, 0.0
    start = time.perf_counter()
    return tokenizer(), time.perf_counter() - start


def _prepare(tok: Tokenizer, size: int) -> None:
    """For a file of ``size`` bytes worth it, build ``tok``'s bulk tables now."""
    if size >= PREPARE_MIN_BYTES:
        tok.prepare_bulk()


def _ready(
    tok: Tokenizer, path: str, size: int, workers: int
) -> tuple[Tokenizer, list[tuple[int, int]], str]:
    """In a worker that built its own tokenizer: ``tok`` with its bulk tables built (for a
    large file), the file's chunks and the ids' dtype, as the caller makes them."""
    _prepare(tok, size)
    return tok, _ranges(tok, path, size, workers), ids_dtype(tok).name


class _Progress:
    """``progress(done, size)`` told of each finished chunk's bytes (and of none at first)."""

    def __init__(self, size: int, progress: Callable[[int, int], None] | None) -> None:
        self._size, self._progress, self._done = size, progress, 0
        if progress:
            progress(0, size)

    def __call__(self, nbytes: int) -> None:
        self._done += nbytes
        if self._progress:
            self._progress(self._done, self._size)


def _encode_forked(
    tokenizer: Tokenizer | Callable[[], Tokenizer],
    path: str,
    size: int,
    workers: int,
    out: Path,
    progress: Callable[[int, int], None] | None,
) -> EncodeStats:
    """Encode in this process beside forked children (``forked_encode``): given a function
    that builds the tokenizer, up to one per core is forked first and builds its own; the
    rest are forked once this process's is built, and inherit it with its tables."""
    with crew(path, workers - 1, os.fspath(out.parent)) as team:
        if not isinstance(tokenizer, Tokenizer):
            load = tokenizer
            team.fork(min(workers, _cores()) - 1, lambda: _ready(load(), path, size, workers))
        tok, load_seconds = _built(tokenizer)
        dtype = ids_dtype(tok)
        dtype_name = dtype.name
        # Built before the clock (like tiktoken's Encoding, which its own rate leaves out).
        setup_start = time.perf_counter()
        _prepare(tok, size)
        start = ready = time.perf_counter()
        ranges = _ranges(tok, path, size, workers)
        late = min(workers, len(ranges)) - 1 - len(team.pids)
        if late > 0:
            team.fork(late, lambda: (tok, ranges, dtype_name))
        located = team.encode(tok, ranges, dtype, _Progress(size, progress))
        # The encoding began when the first process began it: a child that built its own
        # tokenizer sooner may have begun before this one.
        start = min(start, team.began)
        total = sum(count for _, _, count in located)
        width = dtype.itemsize
        with atomic_open(out, "wb") as f:
            _write_npy(f, dtype, total, (
                os.pread(held.fileno(), count * width, offset) for held, offset, count in located
            ))  # fmt: skip
    return EncodeStats(
        size, total, time.perf_counter() - start, dtype_name, ready - setup_start, load_seconds
    )


def _encode_in_order(
    tokenizer: Tokenizer,
    path: str,
    ranges: list[tuple[int, int]],
    workers: int,
    dtype: np.dtype,
    out: Path,
    advance: Callable[[int], None],
) -> int:
    """Write the ids of ``ranges`` (``_chunks``) to ``out``; return their count."""
    total = 0
    # Ids go to a raw temporary file first: the .npy header needs the final length.
    with tempfile.TemporaryFile(dir=out.parent) as raw:
        for arr, nbytes in _chunks(tokenizer, path, ranges, workers, dtype):
            raw.write(arr.tobytes())
            total += len(arr)
            advance(nbytes)
        raw.seek(0)
        with atomic_open(out, "wb") as f:
            _write_npy(f, dtype, total, iter(lambda: raw.read(1 << 20), b""))
    return total
