"""Where a corpus's files are: local paths, globs and URLs, read through fsspec when needed.

What it does: :func:`resolve_corpus` turns what a user names (``books.txt``,
``shards/part-*.txt.gz``, ``memory://corpus.jsonl``, ``s3://bucket/web/*.parquet``, several of
them) into :class:`CorpusFile` records, in order: the file, what it holds (plain text, JSON
Lines records or Parquet records, from its name), its compression (gz, bz2, xz, zst, from its
name) and its stored size. :meth:`CorpusFile.open` reads one, decompressed. A local file that
is neither compressed nor named by a URL or a glob never imports fsspec: it keeps the fast path
of byte ranges read with ``open`` (``tasks``). A missing package is one line naming what to
install (s3fs for ``s3://``, gcsfs for ``gs://``, huggingface_hub for ``hf://``, zstandard
for ``.zst``, pyarrow for Parquet).
What it leaves out: reading records (``records``), counting (``tasks``, ``counting``).
"""

from __future__ import annotations

import glob
import io
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

# One corpus file, or several counted as one corpus (each may be a glob or a URL).
CorpusPaths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
CLUSTER_EXTRA = "pip install 'bpe-studio[cluster]'"
# fsspec's name for each compression a file name may end in (its ``infer_compression``
# knows only those whose package is installed, so the names are listed here to say which).
_COMPRESSIONS = {"gz": "gzip", "bz2": "bz2", "xz": "xz", "zst": "zstd"}
# Filesystems whose files exist only in this process: a task on another process carries the
# file's bytes instead of its name.
PROCESS_LOCAL = frozenset({"memory"})


class CorpusError(ValueError):
    """A corpus that cannot be used for training; the message names the file and the reason."""


class Kind(Enum):
    """What a corpus file holds: plain text, or records whose text field is one document."""

    TEXT = "text"
    JSONL = "jsonl"
    PARQUET = "parquet"


_KINDS = {".jsonl": Kind.JSONL, ".ndjson": Kind.JSONL, ".parquet": Kind.PARQUET}


@dataclass(frozen=True)
class CorpusFile:
    """One file of a corpus. ``url`` is an absolute local path or an fsspec URL; ``name`` is
    how messages call it (as the user wrote it, or the file a glob matched)."""

    url: str
    name: str
    kind: Kind
    compression: str | None  # fsspec's name ("gzip", "zstd"), None when stored plain
    size: int  # bytes as stored
    local: bool  # on this machine's file system
    # The stored bytes, carried along when the file exists only in this process (memory://).
    data: bytes | None = None

    @property
    def plain_local(self) -> bool:
        """Read with ``open`` and cut into byte ranges (the fast path of ``tasks``)."""
        return self.local and self.compression is None and self.data is None

    @property
    def process_local(self) -> bool:
        return self.url.split("://", 1)[0] in PROCESS_LOCAL if "://" in self.url else False

    def carried(self) -> CorpusFile:
        """This file with its stored bytes inside, for a worker in another process."""
        if self.data is not None or not self.process_local:
            return self
        import fsspec

        with fsspec.open(self.url, "rb") as f:
            return replace(self, data=f.read())

    @contextmanager
    def open(self) -> Iterator[BinaryIO]:
        """The file's bytes, decompressed."""
        if self.plain_local:
            with open(self.url, "rb") as f:
                yield f
            return
        import fsspec
        from fsspec.compression import compr

        if self.data is not None:
            raw: BinaryIO = io.BytesIO(self.data)
            with raw if self.compression is None else compr[self.compression](raw, mode="r") as f:
                yield f
            return
        with fsspec.open(self.url, "rb", compression=self.compression) as f:
            yield f


def _split_name(name: str) -> tuple[Kind, str | None]:
    """The kind and the compression a file's name says (``a.jsonl.zst``: JSONL, zstd)."""
    base, ext = os.path.splitext(name.lower())
    compression = _COMPRESSIONS.get(ext.lstrip("."))
    if compression is not None:
        base, ext = os.path.splitext(base)
    return _KINDS.get(ext, Kind.TEXT), compression


def _check_packages(name: str, kind: Kind, compression: str | None) -> None:
    """A clear line when reading this file needs a package that is not installed."""
    import importlib.util

    if kind is Kind.PARQUET and importlib.util.find_spec("pyarrow") is None:
        raise CorpusError(f"{name}: reading Parquet needs pyarrow: {CLUSTER_EXTRA}")
    if compression is not None and compression != "gzip":
        from fsspec.compression import compr

        if compression not in compr:
            package = "zstandard" if compression == "zstd" else compression
            raise CorpusError(f"{name}: reading it needs the {package} package: {CLUSTER_EXTRA}")


def _filesystem(url: str) -> tuple[AbstractFileSystem, str]:
    """fsspec's filesystem for ``url`` and the path in it; a missing package is named."""
    import fsspec
    from fsspec.registry import known_implementations

    try:
        return fsspec.core.url_to_fs(url)
    except ImportError:
        protocol = url.split("://", 1)[0]
        package = known_implementations.get(protocol, {}).get("class", protocol).split(".")[0]
        raise CorpusError(
            f"{url}: reading {protocol}:// needs the {package} package: pip install {package}"
        ) from None


def check_corpus_path(path: str | os.PathLike) -> Path:
    """Raise a clear error for a missing, unreadable or non-regular corpus path."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"corpus not found: {os.fspath(path)}")
    if p.is_dir():
        raise CorpusError(f"{os.fspath(path)}: is a directory, not a text file")
    if not os.access(p, os.R_OK):
        raise CorpusError(f"{os.fspath(path)}: permission denied")
    return p


def _local_file(name: str) -> CorpusFile:
    p = check_corpus_path(name)
    kind, compression = _split_name(name)
    _check_packages(name, kind, compression)
    return CorpusFile(os.path.abspath(p), name, kind, compression, p.stat().st_size, True)


def _remote_files(given: str) -> list[CorpusFile]:
    fs, path = _filesystem(given)
    local = "file" in (fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,))
    if glob.has_magic(path):
        found = [p for p, info in sorted(fs.glob(path, detail=True).items())]
        found = [p for p in found if not fs.isdir(p)]
        if not found:
            raise CorpusError(f"{given}: no file matches")
    else:
        if not fs.exists(path):
            raise FileNotFoundError(f"corpus not found: {given}")
        if fs.isdir(path):
            raise CorpusError(f"{given}: is a directory, not a text file")
        found = [path]
    files = []
    for p in found:
        url = p if local else fs.unstrip_protocol(p)
        name = given if len(found) == 1 and not glob.has_magic(path) else url
        kind, compression = _split_name(p)
        _check_packages(name, kind, compression)
        files.append(CorpusFile(url, name, kind, compression, int(fs.size(p)), local))
    return files


def is_glob_or_url(name: str) -> bool:
    """Whether ``name`` is resolved through a glob or fsspec rather than read as a path (an
    existing file whose name holds ``*`` is that file)."""
    return "://" in name or (glob.has_magic(name) and not os.path.exists(name))


def resolve_corpus(paths: CorpusPaths) -> list[CorpusFile]:
    """The files ``paths`` names, in order (a glob's matches sorted); an empty sequence, a
    missing file, a glob that matches nothing and a directory are errors naming the path."""
    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not given:
        raise CorpusError("no corpus file given")
    files: list[CorpusFile] = []
    for item in given:
        name = os.fspath(item)
        if "://" in name:
            files += _remote_files(name)
        elif is_glob_or_url(name):
            matches = sorted(m for m in glob.glob(name) if not os.path.isdir(m))
            if not matches:
                raise CorpusError(f"{name}: no file matches")
            files += [_local_file(m) for m in matches]
        else:
            files.append(_local_file(name))
    return files
