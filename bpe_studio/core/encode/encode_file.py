"""Encode a whole text file to a NumPy ``.npy`` array of token ids, in parallel.

What it does: cuts the file at boundaries that cannot change the ids (before a special token,
or after a safe line break: see ``boundaries.chunk_boundaries``), encodes the chunks in this
process or in a pool of worker processes (``concurrent.futures.ProcessPoolExecutor``), and
streams their ids into the output in order, so neither the text nor all the ids are ever held
at once. Given a function that builds the tokenizer where this process may fork
(``counting.mp_context``), the workers are forked first and each builds its own (the pool's
initializer); one of them makes the plan, and this process builds none. Otherwise the
tokenizer is built here, and forked workers inherit it while clean-started ones are sent it.
A worker writes each chunk's ids to a file of its own in a folder beside the output and sends
back only its name: sent through the pool's pipe, a chunk's megabytes of ids kept the worker
waiting for this process to read them, 64 KB at a time. The output is written beside its
final name and renamed into place (``atomic``). What it leaves out: the command line and
standard input (``bpe_studio.cli``, which copies a stream to a file first).
"""

from __future__ import annotations

import gc
import os
import shutil
import struct
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import IO, NamedTuple

import numpy as np

from ..corpus.counting import (
    available_cores,
    decode_chunk,
    mp_context,
    pool_start_explained,
    resolve_workers,
    start_worker,
    uncovered_in_file,
)
from ..corpus.sources import NUL_WINDOW, check_corpus_path, check_text_end, check_text_head
from ..corpus.stamps import Stamp, check_unchanged, read_range, stamp
from ..io.atomic import atomic_open, folder_for, remove_stale_beside, temp_prefix
from ..io.interrupts import checked, held_interrupts, no_check, raise_dropped, results
from ..io.worker_pool import WorkerPool
from ..pretokenization.boundaries import chunk_boundaries
from ..pretokenization.pretokenizer import UncoveredText
from .foreign import ForeignTokenizer
from .id_arrays import ids_dtype as smallest_dtype
from .merging import kernel_start
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
# The .npy header written before the ids (``_npy_header``): room for any count.
NPY_HEADER_BYTES = 128

# A pool worker's tokenizer (``_init_worker``).
_worker_tokenizer: Tokenizer | None = None
# Why a worker holds no tokenizer: building its own failed.
_worker_failure: Exception | None = None
# The seconds a worker took to build its tokenizer and its bulk tables.
_worker_seconds = (0.0, 0.0)
# path, byte range, ids' dtype name, the folder a worker writes the ids to (``_Spilled``)
Job = tuple[str, int, int, str, str]


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


def ids_dtype(tokenizer: Tokenizer | ForeignTokenizer) -> np.dtype:
    """uint16 when every id it gives fits, its template's too, else uint32
    (``id_arrays.ids_dtype``, the one rule)."""
    # subtle: a tokenizer.json of another kind may name an id past its vocabulary in its
    # post-processor (tokenizers adds it all the same): the ids written with the template
    # hold it, so their dtype is chosen for it too (a byte-level file is refused for it).
    template = tokenizer.template
    added = () if template is None else (*template.before, *template.after)
    return smallest_dtype(max((tokenizer.max_token_value, *added)))


def encode_range(
    tokenizer: Tokenizer, path: str, start: int, end: int, dtype: str, name: str | None = None
) -> np.ndarray:
    """The ids of bytes ``start:end`` of ``path``. Errors name the file (as ``name``, when
    given: how the user named it): invalid UTF-8, or text the tokenizer's pattern does not
    cover."""
    shown = name or path
    with open(path, "rb") as f:
        text = decode_chunk(
            read_range(f, start, end, shown), path, start, with_line=True, name=shown, ranged=True
        )
    try:
        return tokenizer.encode_array(text, dtype)
    except UncoveredText:
        error = uncovered_in_file(path, start, text, tokenizer.specials, tokenizer.pattern)
        raise UncoveredText(str(error).replace(path, shown, 1)) from None


def _init_worker(tokenizer: Tokenizer | Callable[[], Tokenizer], size: int) -> None:
    """Pool initializer: ignore Ctrl-C (the caller handles it) and hold the tokenizer, built
    here when given a function that builds one, with its bulk tables for a large file."""
    global _worker_tokenizer, _worker_failure, _worker_seconds
    # subtle: a forked worker starts with its parent's globals; none of them is its own.
    _worker_tokenizer, _worker_failure = None, None
    start_worker()
    # A worker makes no reference cycles (strings, bytes, dicts of them): the cyclic collector
    # would only spend time walking its caches.
    gc.disable()
    try:
        tok, load_seconds = _built(tokenizer)
        start = time.perf_counter()
        _prepare(tok, size)
    except Exception as e:  # subtle: an initializer's error would break the pool, unnamed
        _worker_failure = e
        return
    _worker_tokenizer = tok
    _worker_seconds = (load_seconds, time.perf_counter() - start)


def _tokenizer_here() -> Tokenizer:
    """This process's tokenizer; in a worker that could not build it, the error it met."""
    if _worker_tokenizer is None:
        assert _worker_failure is not None
        raise _worker_failure
    return _worker_tokenizer


def _plan_job(path: str, size: int, workers: int) -> _Plan:
    """In a worker that built its own tokenizer: the plan (``_plan``) made with it."""
    return _plan(_tokenizer_here(), path, size, workers, *_worker_seconds)


class _Spilled(NamedTuple):
    """A chunk's ids, written by a worker to ``path``: ``tokens`` of them."""

    path: str
    tokens: int


def _encode_job(job: Job) -> tuple[_Spilled, int]:
    """In a worker: one chunk of the file encoded, its ids written to a file in the job's
    folder (named for where the chunk starts); that file and the chunk's length."""
    ids, nbytes = _encode_chunk(_tokenizer_here(), job)
    path = os.path.join(job[4], str(job[1]))
    with open(path, "wb") as f:
        f.write(np.ascontiguousarray(ids).data)
    return _Spilled(path, len(ids)), nbytes


def _encode_chunk(tokenizer: Tokenizer, job: Job) -> tuple[np.ndarray, int]:
    """The ids of one chunk of the file, and its length."""
    path, start, end, dtype, _ = job
    return encode_range(tokenizer, path, start, end, dtype), end - start


def _ranges(tokenizer: Tokenizer, path: str, size: int, workers: int) -> list[tuple[int, int]]:
    """The byte ranges the file is encoded in (see CHUNK_BYTES): runs of the file's cuts
    every MIN_CHUNK_BYTES or more (``chunk_boundaries``), joined into chunks."""
    target = min(CHUNK_BYTES // 2, max(MIN_CHUNK_BYTES, size // 1024))
    cuts = chunk_boundaries(path, target, tokenizer.cut_specials, tokenizer.cut_rules)
    bounds = [0]
    for cut in cuts[1:-1]:
        wanted = min(CHUNK_BYTES - target, (size - bounds[-1]) // (2 * workers))
        # The file's last run, often short, goes with the chunk before it.
        if cut - bounds[-1] >= wanted and cuts[-1] - cut >= target // 2:
            bounds.append(cut)
    bounds.append(cuts[-1])
    return list(zip(bounds, bounds[1:]))


def _write_npy(f: IO[bytes], dtype: np.dtype, total: int, blocks: Iterable[bytes]) -> None:
    header = {"descr": dtype.str, "fortran_order": False, "shape": (total,)}
    np.lib.format.write_array_header_1_0(f, header)
    for block in blocks:
        f.write(block)


class _Plan(NamedTuple):
    """How a file is encoded: its chunks, the ids' dtype, and the seconds the tokenizer took
    to build (when ``encode_file`` built it) and to build its bulk tables."""

    ranges: list[tuple[int, int]]
    dtype: str
    load_seconds: float
    setup_seconds: float


def _plan(
    tok: Tokenizer, path: str, size: int, workers: int, load_seconds: float, setup_seconds: float
) -> _Plan:
    return _Plan(
        _ranges(tok, path, size, workers), ids_dtype(tok).name, load_seconds, setup_seconds
    )


def encode_file(
    tokenizer: Tokenizer | ForeignTokenizer | Callable[[], Tokenizer],
    input_path: str | os.PathLike,
    output_path: str | os.PathLike,
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    status: Callable[[str], None] | None = None,
) -> EncodeStats:
    """Encode ``input_path`` (UTF-8) into ``output_path`` (a 1-D ``.npy`` of ids), in
    ``workers`` processes (None: every core; see ``counting.resolve_workers``), at most one
    per core this process may use.

    ``tokenizer`` is a tokenizer or a function that builds one (its time is
    ``load_seconds``). Given that, where workers are forked, they are forked first and each
    builds its own tokenizer (the pool's initializer; this process builds none), so each
    holds its own tokenizer's memory and none writes pages another shares.

    The ids equal ``tokenizer.encode`` of the file's text. A UTF-8 file cannot hold a lone
    surrogate (its three-byte form is invalid UTF-8): such a file raises ``CorpusError``
    naming the byte offset, like any other invalid UTF-8.

    For a file of ``PREPARE_MIN_BYTES`` or more, the compiled encoder's kernels are loaded
    here before any worker starts (forked workers inherit them); the first time on a machine
    they are compiled, and ``status`` is told so first (``kernel_start.COMPILING``).

    A :class:`~.foreign.ForeignTokenizer` (given built) encodes the whole text in one call:
    where its text may be cut without changing the ids is its own affair."""
    if not isinstance(tokenizer, (Tokenizer, ForeignTokenizer)) and not callable(tokenizer):
        raise TypeError(
            f"encode_file takes a tokenizer (or a function that builds one), not {tokenizer!r:.60}"
        )
    src = check_corpus_path(input_path)
    with open(src, "rb") as f:
        check_text_head(f.read(NUL_WINDOW), os.fspath(input_path))
        check_text_end(f, os.fstat(f.fileno()).st_size, os.fspath(input_path))
    out = Path(output_path)
    _check_output(src, out)
    if isinstance(tokenizer, ForeignTokenizer):
        with folder_for(out):
            return _encode_whole(tokenizer, os.fspath(src), stamp(src), out, progress)
    # subtle: at most one process per core: each builds the tokenizer (o200k: 0.7 s, ~170 MB),
    # so more only cost time and memory (16 on two cores: 11 s and 4 GB; 2**40 overflowed
    # the pool's semaphore).
    workers = min(resolve_workers(workers), available_cores())
    taken = stamp(src)
    size = taken.size
    path = os.fspath(src)
    parallel = workers > 1 and size >= PARALLEL_MIN_BYTES
    context = mp_context()
    if size >= PREPARE_MIN_BYTES:
        kernel_start.prepare(status)
    with ExitStack() as stack:
        stack.enter_context(folder_for(out))
        stack.enter_context(pool_start_explained(context))
        pool = tok = None
        folder = ""
        check = no_check
        if parallel:
            # Entered first, left last: Ctrl-C is raised once the pool is shut down.
            check = stack.enter_context(held_interrupts())
            # Entered before any pool, so removed after the pool's exit has waited for its
            # workers: none writes into it once it is gone.
            remove_stale_beside(out, ".chunks")
            chunks_dir = tempfile.TemporaryDirectory(
                prefix=temp_prefix(out.name), suffix=".chunks", dir=out.parent
            )
            folder = stack.enter_context(chunks_dir)
        if (
            parallel
            and not isinstance(tokenizer, Tokenizer)
            and context.get_start_method() == "fork"
        ):
            pool = stack.enter_context(_pool(workers, context, tokenizer, size))
            plan = pool.submit(_plan_job, path, size, workers).result()
            check()
        else:
            tok, load_seconds = _built(tokenizer)
            setup_start = time.perf_counter()
            _prepare(tok, size)
            setup = time.perf_counter() - setup_start
            plan = _plan(tok, path, size, workers, load_seconds, setup)
            if parallel and len(plan.ranges) > 1:
                # Forked, the workers inherit the tokenizer with its tables; started clean,
                # they are sent it.
                pool = stack.enter_context(_pool(workers, context, tok, size))
        start = time.perf_counter()
        jobs = [(path, a, b, plan.dtype, folder) for a, b in plan.ranges]
        chunks = _in_order(pool, tok, jobs, check)
        unchanged = partial(check_unchanged, path, taken, os.fspath(input_path))
        total = _write(chunks, np.dtype(plan.dtype), out, _Progress(size, progress), unchanged)
        seconds = time.perf_counter() - start
        # subtle: the pool is shut down waiting for its workers (the stack's exit): not
        # waiting let the interpreter's exit race the pool's manager thread, which then wrote
        # "Bad file descriptor" tracebacks after the ids were written.
    return EncodeStats(size, total, seconds, plan.dtype, plan.setup_seconds, plan.load_seconds)


def _check_output(src: Path, out: Path) -> None:
    """ValueError for an output that is the input (the ids would replace the text they are
    of, as they did) or a directory."""
    if out.is_dir():
        raise ValueError(f"{os.fspath(out)}: is a directory; the output names the .npy to write")
    try:
        same = out.exists() and os.path.samefile(src, out)
    except OSError:
        same = False
    if same:
        raise ValueError(
            f"{os.fspath(out)}: is the input {os.fspath(src)}; the ids never replace the text "
            "they are of: name another output"
        )


def _pool(
    workers: int,
    context: BaseContext,
    tokenizer: Tokenizer | Callable[[], Tokenizer],
    size: int,
) -> WorkerPool:
    """A pool of ``workers`` processes, each holding ``tokenizer`` (``_init_worker``)."""
    return WorkerPool(
        workers, mp_context=context, initializer=_init_worker, initargs=(tokenizer, size)
    )


def _encode_whole(
    tokenizer: ForeignTokenizer,
    path: str,
    taken: Stamp,
    out: Path,
    progress: Callable[[int, int], None] | None,
) -> EncodeStats:
    """The ids of the whole file at once (see ``encode_file``)."""
    with open(path, "rb") as f:
        data = f.read()
    advance = _Progress(len(data), progress)
    start = time.perf_counter()
    text = decode_chunk(data, path, 0, with_line=True)
    ids = tokenizer.encode_array(text, ids_dtype(tokenizer).name)
    with atomic_open(out, "wb") as f:
        _write_npy(f, ids.dtype, len(ids), [ids.tobytes()])
        check_unchanged(path, taken, path)
    advance(len(data))
    return EncodeStats(len(data), len(ids), time.perf_counter() - start, ids.dtype.name)


def _in_order(
    pool: WorkerPool | None,
    tokenizer: Tokenizer | None,
    jobs: list[Job],
    check: Callable[[], None],
) -> Iterator[tuple[np.ndarray | _Spilled, int]]:
    """Each job's ids and length, in order: in ``pool`` (``check`` raising a Ctrl-C held
    meanwhile, ``held_interrupts``), or in this process with ``tokenizer`` (no pool; between
    two chunks, a Ctrl-C a finalizer dropped is raised)."""
    if pool is None:
        assert tokenizer is not None
        yield from checked((_encode_chunk(tokenizer, job) for job in jobs), raise_dropped)
        return
    # subtle: every job is submitted up front but results come back in order; each is a few
    # MB, and chunks are written as soon as they arrive.
    try:
        yield from results([pool.submit(_encode_job, job) for job in jobs], check)
    except BaseException as error:
        # Interrupted or failed: drop the queued chunks instead of encoding them all.
        pool.end(error)
        raise


def _built(tokenizer: Tokenizer | Callable[[], Tokenizer]) -> tuple[Tokenizer, float]:
    """The tokenizer (built, if given a function that builds one) and the seconds that took."""
    if isinstance(tokenizer, Tokenizer):
        return tokenizer, 0.0
    start = time.perf_counter()
    return tokenizer(), time.perf_counter() - start


def _prepare(tok: Tokenizer, size: int) -> None:
    """For a file of ``size`` bytes worth it, build ``tok``'s bulk tables now: the compiled
    merger's, its kernels loaded first (at once where this process inherited them, a forked
    worker; ``encode_file`` loads them before starting any, so a compile happens there, once,
    and is announced), else the Python path's."""
    if size >= PREPARE_MIN_BYTES:
        kernel_start.prepare()
        tok.prepare_bulk()


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


def _write(
    chunks: Iterable[tuple[np.ndarray | _Spilled, int]],
    dtype: np.dtype,
    out: Path,
    advance: Callable[[int], None],
    finish: Callable[[], None] = no_check,
) -> int:
    """Write the chunks' ids in order to ``out`` as one ``.npy`` (all or nothing); return
    their count: each chunk's ids (an array, or a worker's file of them) as soon as they are
    next in order. They go to their place after a header of fixed size, which is written
    again with their count at the end: no copy of the whole from a temporary file (once the
    last chunk's ids are in, the rest of the run waits for nothing). ``finish()`` runs last,
    before ``out`` is put in place: what it raises leaves nothing written."""
    total = 0
    with atomic_open(out, "wb") as f:
        f.write(_npy_header(dtype, 0))
        for ids, nbytes in chunks:
            if isinstance(ids, _Spilled):
                _append(f, ids.path)
                total += ids.tokens
            else:
                f.write(np.ascontiguousarray(ids).data)
                total += len(ids)
            advance(nbytes)
        f.seek(0)
        f.write(_npy_header(dtype, total))
        finish()
    return total


def _append(f: IO[bytes], path: str) -> None:
    """Copy the file ``path`` to the end of ``f``, then remove it (so the chunks on disk are
    only those not yet copied)."""
    with open(path, "rb") as src:
        if not _copied_in_kernel(src, f):
            shutil.copyfileobj(src, f)
    os.remove(path)


def _copied_in_kernel(src: IO[bytes], f: IO[bytes]) -> bool:
    """Copy all of ``src`` to the end of ``f`` inside the kernel (``os.copy_file_range``),
    where the system has it; False, with nothing copied, where it does not.

    subtle: the parent appends every worker's ids while both workers encode, on two cores;
    through Python's buffers that was 5% of ``encode --workers 2``'s time under o200k
    (docs/encoding.md, "Appending the workers' ids")."""
    copy = getattr(os, "copy_file_range", None)
    if copy is None:
        return False
    f.flush()
    size = os.fstat(src.fileno()).st_size
    done = 0
    try:
        while done < size:
            n = copy(src.fileno(), f.fileno(), size - done)
            if n == 0:
                break
            done += n
    except OSError:
        if done:
            raise
        return False  # not on this file system or kernel: nothing was copied
    if done < size:
        raise OSError(f"{src.name} ended after {done:,} of its {size:,} bytes")
    return True


def _npy_header(dtype: np.dtype, count: int) -> bytes:
    """The ``.npy`` (format 1.0) header of a 1-D array of ``count`` items of ``dtype``, padded
    to NPY_HEADER_BYTES whatever the count (so the final one replaces a first one in place;
    a multiple of 64, as numpy aligns its own)."""
    text = f"{{'descr': {dtype.str!r}, 'fortran_order': False, 'shape': ({count},), }}"
    prefix = np.lib.format.magic(1, 0) + struct.pack("<H", NPY_HEADER_BYTES - 10)
    return prefix + text.ljust(NPY_HEADER_BYTES - 11).encode("latin1") + b"\n"
