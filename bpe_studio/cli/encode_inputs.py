"""What ``bpe-studio encode`` reads: what ``train`` reads, every document encoded alone.

What it does: :func:`encode_inputs` encodes the corpus files the inputs name (``core.corpus``:
several files, globs, compressed files, URLs, JSON Lines and Parquet records) into one
``.npy``, their ids in order. One plain local text file keeps the fast path
(``encode_file``: byte ranges encoded in parallel, workers forked before the tokenizer is
built). Otherwise each document is encoded on its own, as ``train`` counts it, so no token
crosses two files or two records: a plain text file (decompressed into a temporary file
first, when it is compressed or remote, then encoded in parallel like any file), each
record's text field. With ``template`` (``--add-special-tokens``), its tokens go around
every document, as a model sees each one. Progress is in bytes as stored; the stats count the
text's bytes (decompressed), as for one file.
What it leaves out: loading the tokenizer (``sources``), the summary and ``--out``
(``encode``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack

import numpy as np

from ..core.corpus.records import file_documents
from ..core.corpus.sources import DEFAULT_TEXT_FIELD, CorpusFile, Kind
from ..core.encode.encode_file import EncodeStats, encode_file, ids_dtype
from ..core.encode.foreign import AnyTokenizer, ForeignTokenizer
from ..core.encode.tokenizer import Tokenizer
from ..core.io.atomic import atomic_open

ProgressFn = Callable[[int, int], None]
Builder = Callable[[], Tokenizer]
# Ids are written out this many at a time.
_BLOCK = 1 << 20


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
) -> tuple[EncodeStats, bool]:
    """Encode ``files`` into the ``.npy`` at ``out``; the stats, and whether ``template``'s
    tokens (``template(tokenizer)``: before and after, or None) were put around each
    document (never on the fast path, where the caller puts them around the file's ids)."""
    if is_fast_path(files):
        # Named as the user named it (messages say that name), a path from here.
        path = files[0].name
        return encode_file(load, path, out, workers=workers, progress=progress), False
    start = time.perf_counter()
    tok = load if isinstance(load, ForeignTokenizer) else load()
    load_seconds = time.perf_counter() - start
    around = template(tok) if template is not None else None
    before, after = around or ((), ())
    dtype = ids_dtype(tok)
    total = sum(f.size for f in files)
    field = text_field or DEFAULT_TEXT_FIELD
    done = [0]

    def counted(n: int) -> None:
        done[0] += n
        progress(done[0], total)

    start = time.perf_counter()
    tokens = text_bytes = 0
    with ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="bpe-studio-"))
        raw = stack.enter_context(open(os.path.join(folder, "ids.raw"), "wb"))

        def write(ids: np.ndarray | Iterable[int]) -> None:
            nonlocal tokens
            array = np.asarray(ids, dtype=dtype)
            array.tofile(raw)
            tokens += array.size

        progress(0, total)
        for f in files:
            if f.kind is Kind.TEXT:
                ids_path, size = _text_file(tok, f, folder, workers, counted)
                text_bytes += size
                ids = np.load(ids_path, mmap_mode="r")
                write(before)
                for at in range(0, ids.size, _BLOCK):
                    write(ids[at : at + _BLOCK])
                write(after)
                del ids
                os.unlink(ids_path)
                continue
            for doc in file_documents(f, field, counted):
                text_bytes += len(doc.encode("utf-8", "surrogatepass"))
                write(before)
                write(tok.encode_array(doc, dtype.name))
                write(after)
        raw.close()
        _write_npy(os.path.join(folder, "ids.raw"), dtype, tokens, out)
    seconds = time.perf_counter() - start
    stats = EncodeStats(text_bytes, tokens, seconds, dtype.name, load_seconds=load_seconds)
    return stats, around is not None


def _text_file(
    tok: AnyTokenizer,
    f: CorpusFile,
    folder: str,
    workers: int | None,
    counted: Callable[[int], None],
) -> tuple[str, int]:
    """The ``.npy`` (in ``folder``) of the ids of a plain text file, and the text's size in
    bytes: read where it is if it is plain and local, else decompressed into ``folder``
    first; encoded by byte ranges in parallel (``encode_file``). ``counted`` hears the bytes
    as stored as they are encoded."""
    path = f.name
    if not f.plain_local:
        path = os.path.join(folder, "text")
        with f.open() as source, open(path, "wb") as target:
            shutil.copyfileobj(source, target, _BLOCK)
    size = os.path.getsize(path)
    told = [0]

    def progress(done: int, total: int) -> None:
        stored = f.size * done // max(size, 1)
        counted(stored - told[0])
        told[0] = stored

    ids_path = os.path.join(folder, "part.npy")
    encode_file(tok, path, ids_path, workers=workers, progress=progress)
    counted(f.size - told[0])
    if not f.plain_local:
        os.unlink(path)
    return ids_path, size


def _write_npy(raw_path: str, dtype: np.dtype, count: int, out: str) -> None:
    """The ``.npy`` of the ``count`` ids in ``raw_path``, written to ``out`` all or nothing."""
    header = np.lib.format.header_data_from_array_1_0(np.empty(0, dtype))
    header["shape"] = (count,)
    with atomic_open(out, "wb") as target, open(raw_path, "rb") as source:
        np.lib.format.write_array_header_1_0(target, header)
        shutil.copyfileobj(source, target, _BLOCK * dtype.itemsize)
