"""What ``bpe-studio encode`` reads: what ``train`` reads, every document encoded alone.

What it does: :func:`encode_inputs` encodes the corpus files the inputs name (``core.corpus``:
several files, globs, compressed files, URLs, JSON Lines and Parquet records) into one
``.npy``, their ids in order. One plain local text file keeps the fast path
(``encode_file``: byte ranges encoded in parallel, workers forked before the tokenizer is
built). Otherwise each document is encoded on its own, as ``train`` counts it, so no token
crosses two files or two records: a plain text file (decompressed into a temporary file
first, when it is compressed or remote, then encoded in parallel like any file), each
record's text field. With ``template`` (``--add-special-tokens``), its tokens go around
every document, as a model sees each one. Several record files are encoded in worker
processes, a file each at a time (forked, so each inherits the tokenizer), their ids kept in
order. Progress is in bytes as stored; the stats count the text's bytes (decompressed), as
for one file.
What it leaves out: loading the tokenizer (``sources``), the summary and ``--out``
(``encode``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from itertools import islice

import numpy as np

from ..core.corpus.counting import mp_context, resolve_workers, start_worker
from ..core.corpus.records import Place, file_documents
from ..core.corpus.sources import (
    DEFAULT_TEXT_FIELD,
    CorpusFile,
    Kind,
    changes_first,
    check_unchanged_files,
)
from ..core.encode.encode_file import PREPARE_MIN_BYTES, EncodeStats, encode_file, ids_dtype
from ..core.encode.foreign import AnyTokenizer, ForeignTokenizer
from ..core.encode.merging import kernel_start
from ..core.encode.tokenizer import Tokenizer
from ..core.io.atomic import atomic_open
from ..core.io.worker_pool import WorkerPool
from ..core.pretokenization.pretokenizer import UncoveredText

ProgressFn = Callable[[int, int], None]
Builder = Callable[[], Tokenizer]
# Ids are written out this many at a time.
_BLOCK = 1 << 20
# Records longer than this many characters are encoded in pieces (``_Job._encoded``).
_LONG_RECORD = 1 << 20


def is_fast_path(files: Sequence[CorpusFile]) -> bool:
    """One plain local text file: encoded by byte ranges in parallel (``encode_file``)."""
    return len(files) == 1 and files[0].plain_local and files[0].kind is Kind.TEXT


def encode_inputs(
    load: Builder | ForeignTokenizer,
    files: Sequence[CorpusFile],
    out: str,
    *,
    workers: int | None,
    progress: ProgressFn,
    text_field: str | None = None,
    template: Callable[[AnyTokenizer], tuple[tuple[int, ...], tuple[int, ...]] | None]
    | None = None,
    status: Callable[[str], None] | None = None,
) -> tuple[EncodeStats, int]:
    """Encode ``files`` into the ``.npy`` at ``out``; the stats, and around how many
    documents ``template``'s tokens (``template(tokenizer)``: before and after, or None) were
    put: 0 for none (always on the fast path, where the caller puts them around the file's
    ids). ``status(message)`` hears of a phase such as the encoder's first compile."""
    if is_fast_path(files):
        path = _path(files[0])
        with _named_as(path, files[0].name):
            stats = encode_file(load, path, out, workers=workers, progress=progress, status=status)
        return stats, 0
    start = time.perf_counter()
    tok = load if isinstance(load, ForeignTokenizer) else load()
    load_seconds = time.perf_counter() - start
    if sum(f.size for f in files) >= PREPARE_MIN_BYTES:
        # As encode_file does: the first compile is announced, not a silent stall.
        kernel_start.prepare(status)
    around = template(tok) if template is not None else None
    job = _Job(tok, text_field or DEFAULT_TEXT_FIELD, *(around or ((), ())))
    total = sum(f.size for f in files)
    done = [0]

    def counted(n: int) -> None:
        done[0] += n
        progress(done[0], total)

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bpe-studio-") as folder:
        progress(0, total)
        parts = [os.path.join(folder, f"part-{i}.raw") for i in range(len(files))]
        sizes = [0] * len(files)
        records = [i for i, f in enumerate(files) if f.kind is not Kind.TEXT]
        pooled = len(records) > 1 and resolve_workers(workers) > 1
        with changes_first(files):
            for i, f in enumerate(files):
                if f.kind is Kind.TEXT:
                    sizes[i] = _text_file(job, f, parts[i], folder, workers, counted)
                elif not pooled:
                    sizes[i] = job.records(f, parts[i], counted)
            if pooled:
                _records_in_processes(job, files, records, parts, sizes, workers, counted)
        # The ids of a file changed while it was read are of no version of it (an audit:
        # records cut halfway through gave half the ids, exit 0).
        check_unchanged_files(files)
        tokens = _write_npy(parts, job.dtype, out)
    seconds = time.perf_counter() - start
    stats = EncodeStats(sum(sizes), tokens, seconds, job.dtype.name, load_seconds=load_seconds)
    return stats, job.documents if around is not None else 0


def _path(f: CorpusFile) -> str:
    """Where a plain local file is opened: as the user named it when that is a path
    (messages then say that name), else where its URL (``file:///...``) leads."""
    return f.url if "://" in f.name else f.name


@contextmanager
def _named_as(path: str, name: str) -> Iterator[None]:
    """Errors that name ``path`` (where a file is opened) name it ``name`` instead: as the
    user named it."""
    if path == name:
        yield
        return
    try:
        yield
    except Exception as e:
        if isinstance(e, OSError) and e.filename == path:
            e.filename = name
        if len(e.args) == 1 and isinstance(e.args[0], str):
            e.args = (e.args[0].replace(path, name),)
        raise


class _Job:
    """What encoding a document takes: the tokenizer, the records' field, the template's
    ids before and after each document, the ids' dtype."""

    def __init__(
        self, tok: AnyTokenizer, field: str, before: tuple[int, ...], after: tuple[int, ...]
    ) -> None:
        self.tok, self.field, self.before, self.after = tok, field, before, after
        self.dtype = ids_dtype(tok)
        self.documents = 0  # encoded by this process (a worker's are counted in its copy)

    def records(self, f: CorpusFile, part: str, counted: Callable[[int], None] | None) -> int:
        """Encode each record of ``f`` alone into the raw ids file ``part``; the text's bytes.
        subtle: ``encode`` and a buffer of machine ints, not ``encode_array`` per record,
        whose NumPy array per call costs as much as encoding a short record."""
        code = "H" if self.dtype.itemsize == 2 else "I"
        buffer, text_bytes = array(code), 0
        with open(part, "wb") as raw:
            place = Place()
            for doc in file_documents(f, self.field, counted, place):
                self.documents += 1
                text_bytes += len(doc.encode("utf-8", "surrogatepass"))
                buffer.extend(self.before)
                try:
                    for ids in self._encoded(doc):
                        buffer.extend(ids)
                        if len(buffer) >= _BLOCK:
                            raw.write(buffer.tobytes())
                            del buffer[:]
                except UncoveredText as e:  # where in the corpus, not only in the text
                    raise UncoveredText(f"{f.name}: {place.now}: {e}") from None
                buffer.extend(self.after)
            raw.write(buffer.tobytes())
        return text_bytes

    def _encoded(self, doc: str) -> Iterator[Sequence[int]]:
        """The ids of ``doc``: whole, or for a long one (and a tokenizer that can cut text:
        ``Tokenizer``) in blocks from ``encode_iterable``, the same ids. Encoded whole, a
        record cost about 21 MB of memory a MB (a 100 MB record: 2.3 GB)."""
        tok = self.tok
        if len(doc) <= _LONG_RECORD or not isinstance(tok, Tokenizer):
            yield tok.encode(doc)
            return
        pieces = (doc[i : i + _LONG_RECORD] for i in range(0, len(doc), _LONG_RECORD))
        ids = tok.encode_iterable(pieces)
        while block := list(islice(ids, _BLOCK)):
            yield block


# The job a pool's worker runs, set before the pool forks (``_records_in_processes``).
_worker_job: _Job | None = None


def _record_file(args: tuple[CorpusFile, str]) -> tuple[int, int]:
    """A worker's ``_Job.records``: the text's bytes, and how many documents it held."""
    assert _worker_job is not None
    before = _worker_job.documents
    size = _worker_job.records(args[0], args[1], None)
    return size, _worker_job.documents - before


def _records_in_processes(
    job: _Job,
    files: Sequence[CorpusFile],
    records: list[int],
    parts: list[str],
    sizes: list[int],
    workers: int | None,
    counted: Callable[[int], None],
) -> None:
    """Encode the record files ``records`` (indexes into ``files``), one per process at a
    time, each into its ``parts`` file; ``sizes`` gets their text's bytes. Forked where this
    process may fork (the workers inherit the tokenizer); else here, one after the other."""
    global _worker_job
    context = mp_context()
    if context.get_start_method() != "fork":
        for i in records:
            sizes[i] = job.records(files[i], parts[i], counted)
        return
    _worker_job = job
    try:
        with WorkerPool(
            min(resolve_workers(workers), len(records)),
            mp_context=context,
            initializer=start_worker,
        ) as pool:
            try:
                jobs = [pool.submit(_record_file, (files[i], parts[i])) for i in records]
                for i, future in zip(records, jobs):
                    sizes[i], documents = future.result()
                    job.documents += documents
                    counted(files[i].size)
            except BaseException as error:
                pool.end(error)
                raise
    finally:
        _worker_job = None


def _text_file(
    job: _Job,
    f: CorpusFile,
    part: str,
    folder: str,
    workers: int | None,
    counted: Callable[[int], None],
) -> int:
    """Encode a plain text file into the raw ids file ``part``, the template around it;
    the text's size in bytes. Read where it is if it is plain and local, else decompressed
    into ``folder`` first; encoded by byte ranges in parallel (``encode_file``). ``counted``
    hears the bytes as stored as they are encoded."""
    path = _path(f)
    if not f.plain_local:
        path = f.copied_to(os.path.join(folder, "text")).url
    size = os.path.getsize(path)
    told = [0]

    def progress(done: int, total: int) -> None:
        stored = f.size * done // max(size, 1)
        counted(stored - told[0])
        told[0] = stored

    ids_path = os.path.join(folder, "text.npy")
    try:
        with _named_as(path, f.name) if f.plain_local else nullcontext():
            encode_file(job.tok, path, ids_path, workers=workers, progress=progress)
    except ValueError as e:
        if f.plain_local:
            raise
        # The decompressed copy's errors (invalid UTF-8 at an offset of the text) are the
        # file's the user named.
        raise ValueError(str(e).replace(path, f"{f.name} (decompressed)")) from None
    counted(f.size - told[0])
    job.documents += 1
    if not f.plain_local:
        os.unlink(path)
    ids = np.load(ids_path, mmap_mode="r")
    with open(part, "wb") as raw:
        np.asarray(job.before, job.dtype).tofile(raw)
        for at in range(0, ids.size, _BLOCK):
            ids[at : at + _BLOCK].tofile(raw)
        np.asarray(job.after, job.dtype).tofile(raw)
    del ids
    os.unlink(ids_path)
    return size


def _write_npy(parts: Sequence[str], dtype: np.dtype, out: str) -> int:
    """The ``.npy`` of the raw ids files ``parts``, one after the other, written to ``out``
    all or nothing; how many ids it holds."""
    count = sum(os.path.getsize(p) for p in parts) // dtype.itemsize
    header = np.lib.format.header_data_from_array_1_0(np.empty(0, dtype))
    header["shape"] = (count,)
    with atomic_open(out, "wb") as target:
        np.lib.format.write_array_header_1_0(target, header)
        for part in parts:
            with open(part, "rb") as source:
                shutil.copyfileobj(source, target, _BLOCK * dtype.itemsize)
    return count
