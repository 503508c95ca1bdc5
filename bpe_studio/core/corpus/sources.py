"""Where a corpus's files are: local paths, globs and URLs, read through fsspec when needed.

What it does: :func:`resolve_corpus` turns what a user names (``books.txt``,
``shards/part-*.txt.gz``, ``memory://corpus.jsonl``, ``s3://bucket/web/*.parquet``, several of
them) into :class:`CorpusFile` records, in order: the file, what it holds (plain text, JSON
Lines records or Parquet records, from its name), its compression (gz, bz2, xz, zst, from its
name, or ``records`` for every file: standard input says nothing by its name) and its stored
size. A glob matches as the shell's, locally and through fsspec alike (``globstar``,
:func:`shell_matches`); a member of an archive keeps its chained URL
(``zip://a.txt::file:///b.zip``). :meth:`CorpusFile.open` reads one, decompressed, as a
buffered binary stream; :meth:`CorpusFile.copied_to` writes that stream to a local file, read
from then on as a plain one (cut into byte ranges that workers read at once: ``encode``, the
usage). A local file that is neither compressed nor named by a URL or a glob never imports
fsspec: it keeps the fast path of byte ranges read with ``open`` (``tasks``). Every failure is
one line naming the file or URL: a missing package names it as fsspec's own registry of
implementations does (aiohttp for ``https://``, s3fs for ``s3://``; zstandard for ``.zst``,
pyarrow for Parquet), an unknown protocol or an unreachable host says so.
:func:`check_text_field` is the one rule for a records' text field given for a corpus without
records.
What it leaves out: reading records (``records``), counting (``tasks``, ``counting``).
"""

from __future__ import annotations

import codecs
import errno
import fnmatch
import glob
import io
import os
import re
import shutil
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .compressed import compression_in, decompressed, head_decompressed
from .errors import CorpusError as CorpusError  # where callers have found it
from .errors import CorpusNotFound
from .globstar import local_glob as local_glob  # where callers have found it
from .stamps import Stamp, check_regular, check_sized, check_unchanged, link_loop, stamp
from .wide_script import reads_as_script

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

    from .on_worker import Fingerprint

# One corpus file, or several counted as one corpus (each may be a glob or a URL).
CorpusPaths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
CLUSTER_EXTRA = "pip install 'bpe-studio[cluster]'"
# The field of a record that holds its text, unless told otherwise (``records``).
DEFAULT_TEXT_FIELD = "text"
# fsspec's name for each compression a file name may end in (its ``infer_compression``
# knows only those whose package is installed, so the names are listed here to say which).
_COMPRESSIONS = {"gz": "gzip", "bz2": "bz2", "xz": "xz", "zst": "zstd"}
# Filesystems whose files exist only in this process: a task on another process carries the
# file's bytes instead of its name.
PROCESS_LOCAL = frozenset({"memory"})


class Kind(Enum):
    """What a corpus file holds: plain text, or records whose text field is one document."""

    TEXT = "text"
    JSONL = "jsonl"
    PARQUET = "parquet"


_KINDS = {".jsonl": Kind.JSONL, ".ndjson": Kind.JSONL, ".parquet": Kind.PARQUET}
# What ``records=`` takes, by name ("text": plain text, whatever the names say).
RECORDS = {"jsonl": Kind.JSONL, "parquet": Kind.PARQUET, "text": Kind.TEXT}
# Read from compressed or remote streams this many bytes at a time.
_BUFFER = 1 << 20


def records_kind(records: str | Kind | None) -> Kind | None:
    """The kind ``records`` names ("jsonl", "parquet", "text", a :class:`Kind`, or None)."""
    if records is None or isinstance(records, Kind):
        return records
    if isinstance(records, str) and records.lower() in RECORDS:
        return RECORDS[records.lower()]
    raise ValueError(
        f"records={records!r}: give 'jsonl', 'parquet' or 'text' (or None: by file name)"
    )


def failure(error: BaseException) -> str:
    """An error from fsspec or a remote store, as a few words: its message's first line,
    with its class named where the message alone would not say what failed."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    name = type(error).__name__
    return f"{name}: {text}" if text and not isinstance(error, OSError) else text or name


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
    # A local file's size and modification time when it was found (``check_unchanged``).
    stamp: Stamp | None = None
    # Taken for a cluster's workers, which check that their copy is this one (``on_worker``).
    fingerprint: Fingerprint | None = None

    @property
    def plain_local(self) -> bool:
        """Read with ``open`` and cut into byte ranges (the fast path of ``tasks``)."""
        return self.local and self.compression is None and self.data is None

    @property
    def text_name(self) -> str:
        """The name an error about a place in its text gives: a compressed file's offsets
        are of its decompressed text, and say so, as ``encode``'s always did."""
        return self.name if self.compression is None else f"{self.name} (decompressed)"

    @property
    def process_local(self) -> bool:
        # Any link of a chain: a zip:// member of a memory:// archive is this process's too.
        return any(
            link.split("://", 1)[0] in PROCESS_LOCAL
            for link in self.url.split("::")
            if "://" in link
        )

    def carried(self) -> CorpusFile:
        """This file with its stored bytes inside, for a worker in another process."""
        if self.data is not None or not self.process_local:
            return self
        import fsspec

        with fsspec.open(self.url, "rb") as f:
            return replace(self, data=f.read())

    @contextmanager
    def open(self, counted: Callable[[int], None] | None = None) -> Iterator[BinaryIO]:
        """The file's bytes, decompressed, as a buffered stream (lines can be iterated).
        ``counted(n)`` is told the bytes as stored as they are read (progress through a
        compressed file)."""
        if self.plain_local and counted is None:
            with open(self.url, "rb") as f:
                yield f
            return
        import fsspec

        with ExitStack() as held:
            if self.data is not None:
                raw: BinaryIO = held.enter_context(io.BytesIO(self.data))
            else:
                try:
                    # subtle: entered, not ``.open()``ed: the open file holds the filesystem
                    # then, and a zip:// member's filesystem closes its archive when collected.
                    raw = held.enter_context(fsspec.open(self.url, "rb"))
                except FileNotFoundError:
                    raise CorpusNotFound(f"corpus not found: {self.name}") from None
                except Exception as e:  # an unreachable host, a refused connection: one line
                    raise CorpusError(f"{self.name}: cannot read it: {failure(e)}") from None
            stored = raw if counted is None else _Counted(raw, counted)
            if self.compression is None:
                yield _buffered(stored)
                return
            with decompressed(stored, self.compression, self.name) as f:
                yield _buffered(f)

    def copied_to(self, path: str, counted: Callable[[int], None] | None = None) -> CorpusFile:
        """This file's bytes, decompressed (and fetched), written to the local file ``path``:
        the same file, now plain and local (its ranges can be cut and read by several
        workers), named as before (a compressed one's name saying "decompressed":
        ``text_name``). ``counted(n)`` is told the bytes as stored as they are read (it
        may raise to stop the copy); a block at a time, so memory stays bounded."""
        try:
            with self.open(counted) as source, open(path, "wb") as target:
                shutil.copyfileobj(source, target, _BUFFER)
        except OSError as e:
            if e.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            raise CorpusError(
                f"{self.name}: no room to decompress it into {os.path.dirname(path)} "
                f"({e.strerror}); set TMPDIR to a folder with room for its text"
            ) from None
        return replace(
            self,
            url=path,
            name=self.text_name,  # errors give offsets of the text, not of the stored bytes
            compression=None,
            size=os.path.getsize(path),
            local=True,
            data=None,
            stamp=None,
            fingerprint=None,
        )


class _Counted(io.RawIOBase):
    """A stream that tells ``counted(n)`` the bytes read from ``stream``."""

    def __init__(self, stream: BinaryIO, counted: Callable[[int], None]) -> None:
        self._stream, self._counted = stream, counted

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        self._counted(len(data))
        return len(data)


def _buffered(stream: Any) -> BinaryIO:
    """``stream`` as an ``io`` buffered reader when it is not one of ``io``'s buffered
    streams: zstandard's reader, say, has ``read`` and ``readinto`` but no ``readline``, so
    its lines cannot be iterated, and a raw stream would read a line a byte at a time."""
    if isinstance(stream, io.IOBase) and not isinstance(stream, io.RawIOBase):
        return stream  # type: ignore[return-value]
    return io.BufferedReader(stream, _BUFFER)


def split_name(name: str) -> tuple[Kind, str | None]:
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
    if kind is Kind.PARQUET and compression is not None:
        # pyarrow reads a Parquet file by seeking to its footer and row groups, which a
        # decompressing stream cannot do: it failed with a bare "(seek)".
        raise CorpusError(
            f"{name}: Parquet compressed with {compression}, which pyarrow cannot read (it "
            "seeks in the file): decompress it first (Parquet compresses its own pages)"
        )
    if compression is not None and compression != "gzip":
        from fsspec.compression import compr

        # compressed.py reads zstd with zstandard itself, which fsspec may do without (it
        # takes Python 3.14's compression.zstd where there is one).
        no_zstandard = compression == "zstd" and importlib.util.find_spec("zstandard") is None
        if compression not in compr or no_zstandard:
            package = "zstandard" if compression == "zstd" else compression
            raise CorpusError(f"{name}: reading it needs the {package} package: {CLUSTER_EXTRA}")


def _filesystem(url: str) -> tuple[AbstractFileSystem, str]:
    """fsspec's filesystem for ``url`` and the path in it. A protocol whose package is
    missing names it, in the words of fsspec's registry of known implementations (which
    says what each protocol needs); an unknown protocol or a host that cannot be reached is
    one line naming the URL."""
    import fsspec
    from fsspec.registry import known_implementations

    protocol = url.split("://", 1)[0]
    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as e:
        missing = getattr(e.__cause__, "name", None) or getattr(e, "name", None)
        needs = known_implementations.get(protocol, {}).get("err") or str(e)
        without = f" without the {missing} module" if missing else ""
        raise CorpusError(
            f"{url}: cannot read {protocol}:// URLs{without} (fsspec says: {needs})"
        ) from None
    except ValueError as e:
        if protocol not in known_implementations and "protocol" in str(e).lower():
            raise CorpusError(
                f"{url}: {protocol}:// is not a protocol fsspec knows (file, memory, s3, "
                "gs, hf, http, https, ftp, sftp, ...)"
            ) from None
        raise CorpusError(f"{url}: cannot read it: {failure(e)}") from None
    except Exception as e:  # an unknown or unreachable host, a refused connection
        raise CorpusError(f"{url}: cannot read it: {failure(e)}") from None


def check_corpus_path(path: str | os.PathLike) -> Path:
    """Raise a clear error for a missing, unreadable or non-regular corpus path (a device, a
    named pipe, a file that reports 0 bytes but holds some)."""
    p = Path(path)
    if not p.exists():
        loop = link_loop(p)
        if loop is not None:
            raise CorpusError(f"{os.fspath(path)}: {loop}")
        raise CorpusNotFound(f"corpus not found: {os.fspath(path)}")
    if p.is_dir():
        raise CorpusError(f"{os.fspath(path)}: is a directory, not a text file")
    if not os.access(p, os.R_OK):
        raise CorpusError(f"{os.fspath(path)}: permission denied")
    check_regular(p, os.fspath(path))
    check_sized(p, os.fspath(path))
    return p


def _kind_of(name: str, records: Kind | None) -> tuple[Kind, str | None]:
    """The kind and compression of the file ``name``: ``records`` when given, whatever the
    name says (as ``--records`` promises: Parquet saved as ``.jsonl`` is read as Parquet,
    and a file that is not what was asked fails when read, naming it), else what the name
    says."""
    kind, compression = split_name(name)
    return (kind if records is None else records), compression


def _local_file(name: str, records: Kind | None = None) -> CorpusFile:
    p = check_corpus_path(name)
    kind, compression = _kind_of(name, records)
    _check_packages(name, kind, compression)
    taken = stamp(p)
    return CorpusFile(os.path.abspath(p), name, kind, compression, taken.size, True, stamp=taken)


def _remote_files(given: str, records: Kind | None = None) -> list[CorpusFile]:
    fs, path = _filesystem(given)
    local = "file" in (fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,))
    try:
        if glob.has_magic(path) and local:
            # As a path's glob matches (an audit: fsspec's local glob walks no link to a
            # folder, so a file:// glob and the same glob as a path read other files).
            found = sorted(p for p in local_glob(path) if not os.path.isdir(p))
            if not found:
                raise CorpusError(f"{given}: no file matches")
        elif glob.has_magic(path):
            found = [p for p, info in sorted(fs.glob(path, detail=True).items())]
            found = [p for p in found if shell_matches(path, p) and not fs.isdir(p)]
            if not found:
                raise CorpusError(f"{given}: no file matches")
        else:
            if not fs.exists(path):
                if _hub_offline(fs):
                    raise CorpusError(
                        f"{given}: HF_HUB_OFFLINE is set, and hf:// files are read from the "
                        "Hugging Face Hub (unset it, or download the files and name them)"
                    )
                raise CorpusNotFound(f"corpus not found: {given}")
            if fs.isdir(path):
                raise CorpusError(f"{given}: is a directory, not a text file")
            found = [path]
        sizes = [int(fs.size(p)) for p in found]
    except (CorpusError, FileNotFoundError):
        raise
    except Exception as e:  # an unreachable store, refused credentials: one line
        raise CorpusError(f"{given}: cannot read it: {failure(e)}") from None
    files = []
    for p, size in zip(found, sizes):
        url = p if local else _chained(given, fs.unstrip_protocol(p))
        name = given if len(found) == 1 and not glob.has_magic(path) else url
        kind, compression = _kind_of(p, records)
        _check_packages(name, kind, compression)
        # A file:// file is a local file: known by its device and inode (``repeated_file``:
        # the same file as a path and as a URL is one file) and checked unchanged as one.
        taken = stamp(p) if local else None
        files.append(CorpusFile(url, name, kind, compression, size, local, stamp=taken))
    return files


def _chained(given: str, found: str) -> str:
    """The URL of ``found`` (one file fsspec found for ``given``, as its filesystem names
    it) with the rest of ``given``'s chain: ``zip://inner.txt::file:///a.zip`` names its
    member ``zip://inner.txt``, which opens only with the archive after the ``::``. The
    links before the one that holds the path (``simplecache::``) are kept as well."""
    links = given.split("::")
    at = next((i for i, link in enumerate(links) if "://" in link), 0)
    return "::".join([*links[:at], found, *links[at + 1 :]])


def _hub_offline(fs: AbstractFileSystem) -> bool:
    """Whether ``fs`` reads the Hugging Face Hub while huggingface_hub is told to stay
    offline (it then answers that no file exists)."""
    if "hf" not in (fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)):
        return False
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def shell_matches(pattern: str, path: str) -> bool:
    """Whether a match fsspec's glob found for ``pattern``, ``path``, is one the shell's glob
    (:func:`local_glob`) finds too: fsspec's wildcards match names that begin with a dot, so
    the same glob named other files locally and as a ``file://`` URL."""
    parts = pattern.split("/")
    first = next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))
    root, wild = "/".join(parts[:first]), parts[first:]
    prefix = f"{root}/" if first else ""
    if path.startswith(prefix):
        return _parts_match(wild, path[len(prefix) :].split("/"))
    # subtle: a filesystem may spell the folder before the wildcards otherwise (hf:// writes
    # a revision its own way): the names they matched are then the path's last ones, as
    # many as the pattern has after it, or past a ``**`` the file's own name alone.
    names = path.split("/")
    if "**" in wild:
        return _parts_match(wild[-1:], names[-1:])
    return len(names) >= len(wild) and _parts_match(wild, names[-len(wild) :])


def _parts_match(pattern: list[str], parts: list[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        # Any number of folders, none of them hidden.
        for i in range(len(parts) + 1):
            if i and parts[i - 1].startswith("."):
                return False
            if _parts_match(rest, parts[i:]):
                return True
        return False
    if not parts:
        return False
    name = parts[0]
    if not glob.has_magic(head):
        return name == head and _parts_match(rest, parts[1:])
    if name.startswith(".") and not head.startswith("."):
        return False
    return fnmatch.fnmatchcase(name, head) and _parts_match(rest, parts[1:])


def is_glob_or_url(name: str) -> bool:
    """Whether ``name`` is resolved through a glob or fsspec rather than read as a path (an
    existing file whose name holds ``*`` is that file)."""
    return "://" in name or (glob.has_magic(name) and not os.path.exists(name))


def resolve_corpus(paths: CorpusPaths, records: str | Kind | None = None) -> list[CorpusFile]:
    """The files ``paths`` names, in order (a glob's matches sorted); an empty sequence, a
    missing file, a glob that matches nothing and a directory are errors naming the path.
    ``records`` ("jsonl" or "parquet"): every file holds such records, whatever its name
    says (a compression suffix still counts); "text": every file is plain text, a ``.jsonl``
    too; None: each file's name says what it holds."""
    kind = records_kind(records)
    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not given:
        raise CorpusError("no corpus file given")
    files: list[CorpusFile] = []
    for item in given:
        name = os.fspath(item)
        if "://" in name:
            files += _remote_files(name, kind)
        elif is_glob_or_url(name):
            matches = sorted(m for m in local_glob(name) if not os.path.isdir(m))
            if not matches:
                raise CorpusError(f"{name}: no file matches")
            files += [_local_file(m, kind) for m in matches]
        else:
            files.append(_local_file(name, kind))
    return files


def named(files: Sequence[CorpusFile]) -> str:
    """How a message names a corpus: its file, or the first and how many more."""
    if len(files) == 1:
        return files[0].name
    return f"{files[0].name} (and {len(files) - 1} more)"


def check_text_field(files: Sequence[CorpusFile], text_field: str | None) -> None:
    """The one rule for a text field: it names the field of records, so naming one other
    than the default for a corpus without records is an error naming its files (the
    default is what callers pass when nothing was chosen, as the app does)."""
    if text_field == "":
        raise CorpusError("the text field given is empty: name the records' field that holds text")
    if text_field is None or text_field == DEFAULT_TEXT_FIELD:
        return
    if files and all(f.kind is Kind.TEXT for f in files):
        raise CorpusError(
            f"{named(files)}: text field {text_field!r} given, but the corpus holds plain "
            "text, not records (a .jsonl, .ndjson or .parquet name says a file holds "
            "records; for standard input or other names, say records='jsonl' or 'parquet')"
        )


_ICONV32 = "(iconv -f UTF-32 -t UTF-8)"
# What each compression ``compression_in`` finds is called.
_COMPRESSION_NAMES = {"gz": "gzip", "bz2": "bzip2", "xz": "xz", "zst": "zstd"}
# What a file's first bytes say it is, when that is no text to train on or encode (a tar's
# headers are ASCII and NUL, valid UTF-8, so nothing else would stop one).
_NOT_TEXT = (
    (b"PK\x03\x04", "a ZIP archive (as a .docx, .xlsx, .odt or .epub is), not text"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office document, not text"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive, not text"),
    (b"Rar!\x1a\x07", "a RAR archive, not text"),
    (
        b"\x93NUMPY",
        "a NumPy array (.npy: token ids, as `bpe-studio encode` writes them), not text: "
        "`bpe-studio decode` reads it back into text",
    ),
    (b"\xff\xfe\x00\x00", "UTF-32 text (little-endian), not UTF-8: convert it " + _ICONV32),
    (b"\x00\x00\xfe\xff", "UTF-32 text (big-endian), not UTF-8: convert it " + _ICONV32),
    (b"\xff\xfe", "UTF-16 text (little-endian), not UTF-8: convert it (iconv -f UTF-16 -t UTF-8)"),
    (b"\xfe\xff", "UTF-16 text (big-endian), not UTF-8: convert it (iconv -f UTF-16 -t UTF-8)"),
)
TAR_BLOCK = 512
# Tab, LF, CR, and ASCII's separators (vertical tab, form feed, FS, GS, RS, US: fields and
# pages of text data), which are also high bytes of scripts' UTF-16 (Telugu's, Greek
# Extended's).
_TEXT_CONTROLS = frozenset(b"\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")


def _is_pdf(head: bytes) -> bool:
    """Whether ``head`` opens a PDF: its header, then bytes that are no UTF-8 (the binary
    comment the format asks for on its second line) or an object ("1 0 obj"). Text that only
    begins with "%PDF-1.7" (a note about the format) is text (an audit)."""
    if not head.startswith((b"%PDF-1.", b"%PDF-2.")):
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head)  # a character cut at the end
    except UnicodeDecodeError:
        return True
    return re.search(rb"\d+ \d+ obj\b", head) is not None


def _is_tar(head: bytes) -> bool:
    """Whether ``head`` opens with a tar header: "ustar" in its place and the header's own
    checksum right (so no text that happens to hold "ustar" there is taken for one)."""
    if len(head) < TAR_BLOCK or head[257:262] != b"ustar":
        return False
    try:
        stored = int(head[148:156].strip(b"\0 "), 8)
    except ValueError:
        return False
    return stored == sum(head[:148]) + 8 * ord(" ") + sum(head[156:TAR_BLOCK])


def _ends(first: bytes, second: bytes, *, utf8: bool = False) -> str | None:
    """ "little" or "big" when the parity whose bytes are ``second`` holds the code points'
    high bytes (little-endian) or ``first`` does (big-endian), else None: one byte value
    below 0x20 in most of one parity's bytes and seldom in the other's. NUL (ASCII's high
    byte) counts from a tenth on; a script block's own (0x0E Thai, 0x10 Myanmar, 0x04
    Cyrillic), from three tenths. Tab, LF and CR are the high bytes of Indic scripts
    (Devanagari, Gujarati, Malayalam), and ASCII's separators those of others, but they are
    also UTF-8 text's own (``_TEXT_CONTROLS``): they count only where the pairs read as
    that script's text does (``_script_like``: spaces between varied letters), which UTF-8
    text, a stray NUL and all, does not.
    ``utf8``: the bytes are valid UTF-8, which holds NULs at a regular odd offset too
    (records of a fixed width, each ended by a NUL: ``printf '%07d\0'``); NUL then counts
    only from six tenths of its parity's bytes (UTF-16 of ASCII-range text has one in
    nearly every high byte; 3-digit records ended by a NUL have one in half) and when the
    pairs decode as UTF-16; bytes that are no UTF-8 count when the pairs read as printable
    text (``_printable``)."""
    pairs = len(first)
    for mine, other, end in ((second, first, "little"), (first, second, "big")):
        nul = mine.count(0)
        least = max(2, 0.6 * pairs) if utf8 else max(2, pairs // 10)
        # subtle: bytes that are no UTF-8 must read as text too (16-bit numbers below 256,
        # byte-level token ids, have NUL high bytes as well); as printable characters, not
        # as words: UTF-16 of a table of numbers is text.
        reads = _decodes if utf8 else _printable
        if nul >= least and nul >= 4 * other.count(0) and reads(first, second, end):
            return end
        if pairs < 4:
            continue
        value, count = Counter(mine).most_common(1)[0]
        if value >= 0x20 or count < max(3, 0.3 * pairs) or count < 4 * other.count(value):
            continue
        if value in _TEXT_CONTROLS and not _script_like(first, second, end, value):
            continue
        if _reads_as_text(first, second, end):
            return end
    return None


def _script_like(first: bytes, second: bytes, end: str, value: int) -> bool:
    """Whether the pairs, read as UTF-16 of that ``end`` with ``value`` for the high byte of
    the script's block, hold what text of that script does: two spaces or line breaks (a
    NUL high byte beside one) and no one letter of the block in half its places. UTF-8's
    line ends are one pair in every line (CR LF: U+0D0A or U+0A0D), and a stray NUL there
    reads as a UTF-16 line break when it stands in for the CR."""
    high, low = (first, second) if end == "big" else (second, first)
    pairs = list(zip(high, low, strict=False))
    spaces = sum(1 for h, b in pairs if h == 0 and b in b" \t\n\r")
    letters = Counter(b for h, b in pairs if h == value)
    return spaces >= 2 and letters.most_common(1)[0][1] < 0.5 * letters.total()


def _as_utf16(first: bytes, second: bytes, end: str) -> str | None:
    """The pairs read as UTF-16 of that ``end``; None when they are not UTF-16 (a lone
    surrogate; a cut pair at the end of the head is left out)."""
    pairs = bytes(b for pair in zip(first, second, strict=False) for b in pair)
    decoder = codecs.getincrementaldecoder(f"utf-16-{'le' if end == 'little' else 'be'}")()
    try:
        return decoder.decode(pairs)
    except UnicodeDecodeError:
        return None


def _decodes(first: bytes, second: bytes, end: str) -> bool:
    return _as_utf16(first, second, end) is not None


def _reads_as_text(first: bytes, second: bytes, end: str) -> bool:
    """Whether the pairs, read as UTF-16 of that ``end``, are mostly letters, marks and
    spaces, as text of a script is (a UTF-8 log whose every other byte is a backspace reads
    as unassigned code points and stray symbols)."""
    text = _as_utf16(first, second, end)
    if text is None:
        return False
    wordy = sum(1 for c in text if unicodedata.category(c)[0] in "LMZ" or c in "\t\n\r")
    return wordy >= 0.6 * len(text)


def _printable(first: bytes, second: bytes, end: str) -> bool:
    """Whether the pairs, read as UTF-16 of that ``end``, are text with hardly a control or
    unassigned character besides tab, line breaks and form feed (binary numbers read as
    such: a quarter of the bytes below 256 are C0 or C1 controls)."""
    text = _as_utf16(first, second, end)
    if text is None:
        return False
    other = sum(1 for c in text if unicodedata.category(c)[0] == "C" and c not in "\t\n\r\x0b\x0c")
    return other <= 0.05 * len(text)


def _is_utf8(head: bytes) -> bool:
    """Whether ``head``, a file's first bytes, is UTF-8 (a character cut at its end too)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head)
    except UnicodeDecodeError:
        return False
    return True


def _unicode_form(head: bytes) -> str | None:
    """ "UTF-32" or "UTF-16" with its end ("UTF-16LE"...) when ``head`` reads as that without a
    byte-order mark (mostly-ASCII text in either is valid UTF-8, NULs and all: it was
    trained on, an audit). UTF-32 of text below U+10000 holds two NULs in every four bytes.
    UTF-16 of Chinese, Japanese or Korean text is no UTF-8, and has no one high byte for
    ``_ends`` to find: it is known by reading as that script's text (``_script_end``)."""
    quads = len(head) // 4
    if quads >= 2:
        lanes = [head[i : 4 * quads : 4] for i in range(4)]
        nuls = [lane.count(0) for lane in lanes]
        if nuls[2] >= 0.9 * quads and nuls[3] >= 0.9 * quads and nuls[0] < 0.5 * quads:
            return "UTF-32LE"
        if nuls[0] >= 0.9 * quads and nuls[1] >= 0.9 * quads and nuls[3] < 0.5 * quads:
            return "UTF-32BE"
    pairs = len(head) // 2
    first, second = head[0 : 2 * pairs : 2], head[1 : 2 * pairs : 2]
    utf8 = _is_utf8(head)
    end = _ends(first, second, utf8=utf8) if pairs >= 2 else None
    if end is None and not utf8:
        end = _script_end(first, second)
    return None if end is None else f"UTF-16{end[0].upper()}E"


def _script_end(first: bytes, second: bytes) -> str | None:
    """The end whose pairs read as text of a script with no one high byte (Han, kana,
    Hangul: ``reads_as_script``), for bytes that are no UTF-8; None when neither end does
    or both do (which is no reading to name)."""
    ends = [
        end
        for end in ("little", "big")
        if (text := _as_utf16(first, second, end)) is not None and reads_as_script(text)
    ]
    return ends[0] if len(ends) == 1 else None


_TAR = "a tar archive, not text: extract it, and give its files (a glob: 'folder/*.txt')"
# A compressed tar's short names: bzip2 gives nothing of a tar's header until its whole
# first block (up to 900 kB) is read, more than a head; the name then says it.
_TAR_SUFFIXES = (".tgz", ".taz", ".tbz", ".tbz2", ".tb2", ".txz", ".tzst")


_PARQUET = b"PAR1"
_PARQUET_NOT_TEXT = (
    "a Parquet file (or the start of one), not text: read its records as Parquet (a name "
    "ending in .parquet, or --records parquet)"
)


def _binary(head: bytes) -> bool:
    """Whether ``head`` (the first bytes of a file) is no UTF-8 text: a byte sequence UTF-8
    does not make, or a control character text does not hold."""
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return True
    return any(c < " " and ord(c) not in _TEXT_CONTROLS for c in text)


def not_text(head: bytes, *, nul: bool = True) -> str | None:
    """What a file whose (decompressed) text begins with ``head`` is, when it is an archive,
    a document, compressed data, a NumPy array, text in another encoding than UTF-8 or
    (``nul``) mostly NUL bytes; None for anything else.

    >>> not_text("plain text".encode("utf-16-le")).split(", not")[0]
    'UTF-16 text (little-endian, no byte-order mark)'
    """
    compression = compression_in(head)
    # A compressed tar named as text (.tgz) is a tar first: decompressing it gives no text.
    inner = head_decompressed(head, compression, TAR_BLOCK) if compression else head
    if _is_tar(inner):
        return _TAR
    what = next((what for magic, what in _NOT_TEXT if head.startswith(magic)), None)
    if what is not None:
        return what
    if _is_pdf(head):
        return "a PDF document, not text"
    if head.startswith(_PARQUET) and _binary(head):
        # subtle: before the UTF-16 guess, which Parquet's page headers set off (an audit);
        # text that only begins with "PAR1" stays text.
        return _PARQUET_NOT_TEXT
    if compression is not None:
        # A compressed file named as text, or compressed twice: its name says how to read it.
        return (
            f"{_COMPRESSION_NAMES[compression]}-compressed data, not text: end its name in "
            f".{compression} (a corpus file so named is read decompressed: bpe-studio train, "
            "encode, inspect), or decompress it"
        )
    form = _unicode_form(head)
    if form is not None:
        end = "little" if form.endswith("LE") else "big"
        return (
            f"{form[:-2]} text ({end}-endian, no byte-order mark), not UTF-8: convert it "
            f"(iconv -f {form} -t UTF-8)"
        )
    if nul and _mostly_nul(head):
        return _MOSTLY_NUL
    return None


# How much of a file's start (and of a plain local file's end) the NUL rule reads: 300 NUL
# bytes before 2 MB of text were "mostly NUL" in 512 bytes (an audit), and a text header of 1
# KB before 10 MB of NULs went by (peak 1 GB: the run is one pre-token).
NUL_WINDOW = 1 << 16
_MOSTLY_NUL = "mostly NUL bytes: binary data, or a sparse or zeroed file, not text"


def _mostly_nul(data: bytes) -> bool:
    nul = data.count(0)
    return bool(nul) and 2 * nul >= len(data)


def check_text_files(files: Sequence[CorpusFile]) -> None:
    """Raise :class:`CorpusError` naming the first local file of plain text (as named, once
    decompressed) that is an archive or a document instead (:func:`not_text`), or mostly
    NUL bytes at its start or (a plain file) its end. Only those ends are read (64 KB each);
    remote files are left to the decoder."""
    for f in files:
        if not f.local or f.kind is not Kind.TEXT or f.size == 0:
            continue
        with f.open() as stream:
            check_text_head(stream.read(NUL_WINDOW), f.name)
            if f.plain_local:
                check_text_end(stream, f.size, f.name)


def check_text_end(stream: BinaryIO, size: int, name: str) -> None:
    """Raise :class:`CorpusError` naming ``name`` when the last 64 KB of the plain file
    ``stream`` (``size`` bytes, its start checked already) are mostly NUL bytes: text that a
    sparse or zeroed file holds only at its start."""
    if size <= NUL_WINDOW:
        return
    stream.seek(size - NUL_WINDOW)
    if _mostly_nul(stream.read(NUL_WINDOW)):
        raise CorpusError(
            f"{name}: ends in NUL bytes (most of its last {NUL_WINDOW:,}): a sparse or zeroed "
            "file with text only at its start, or binary data; not text (a run of NULs is one "
            "pre-token, held whole)"
        )


def check_text_head(head: bytes, name: str) -> None:
    """Raise :class:`CorpusError` naming ``name`` when the text it begins with, ``head`` (its
    first bytes: 512 tell an archive or a document, 64 KB mostly NUL bytes), is not text
    (:func:`not_text`)."""
    window, head = head[:NUL_WINDOW], head[:TAR_BLOCK]
    what = not_text(head, nul=False)
    if what is None and _mostly_nul(window):
        # A run of NULs is one pre-token, held whole: a sparse or zeroed file ran out of
        # memory (a hostile-machine audit).
        what = _MOSTLY_NUL
    compression = compression_in(head)
    if (
        what is not None
        and compression is not None
        and name.lower().endswith(_TAR_SUFFIXES)
        # (gzip and xz give a tar header from the head: its content decided already)
        and len(head_decompressed(head, compression, TAR_BLOCK)) < TAR_BLOCK
    ):
        what = _TAR
    if what is not None:
        raise CorpusError(f"{name}: {what}")


def repeated_file(
    files: Sequence[CorpusFile], *, other_names: bool = False
) -> tuple[CorpusFile, CorpusFile] | None:
    """The first file of ``files`` that is a file met earlier, and that earlier one; None when
    each is there once (with ``other_names``, met earlier under another name). A local file
    (a path or a ``file://`` URL) is known by its device and inode, not its name: a symbolic
    or hard link to a file is that file (a glob matches both); others by URL."""
    seen: dict[object, CorpusFile] = {}
    for f in files:
        key = (f.stamp.device, f.stamp.inode) if f.stamp is not None else f.url
        first = seen.setdefault(key, f)
        if first is not f and not (other_names and first.name == f.name):
            return first, f
    return None


def twice_said(again: str, first: str, what: str = "a corpus file", done: str = "counted") -> str:
    """The one way to say that a file is named twice: ``again`` is ``first`` (its name,
    another spelling of its path, or a link's name), so it would be ``done`` twice."""
    if again == first:
        return f"{again}: given twice as {what} (it would be {done} twice)"
    if _spelt(again) == _spelt(first):
        return (
            f"{again}: another spelling of {first}, given twice as {what} (it would be "
            f"{done} twice); name it once"
        )
    return (
        f"{again}: the same file as {first} (a link), given twice as {what} (it would be "
        f"{done} twice); name it once"
    )


def _spelt(name: str) -> str:
    """The path a local file's name spells (``./a.txt``, ``file:///.../a.txt``), links not
    followed: two names of one file that spell one path are not a link and its file."""
    if name.startswith("file://"):
        name = name[len("file://") :]
    elif "://" in name:
        return name
    return os.path.abspath(name)


def check_counted_once(files: Sequence[CorpusFile]) -> None:
    """Raise :class:`CorpusError` naming both names when a file of a corpus is there twice
    (named twice, or matched by a glob under two names): its pre-tokens would be counted
    twice, and the merges would be other than the files' own."""
    pair = repeated_file(files)
    if pair is not None:
        raise CorpusError(twice_said(pair[1].name, pair[0].name))


def check_unchanged_files(files: Sequence[CorpusFile]) -> None:
    """Raise :class:`CorpusError` naming the first local file whose size or modification
    time moved since it was found (``stamps``): what was read of it is no version of it."""
    for f in files:
        if f.stamp is not None:
            check_unchanged(f.url, f.stamp, f.name)


@contextmanager
def changes_first(files: Sequence[CorpusFile]) -> Iterator[None]:
    """A :class:`CorpusError` met reading ``files`` (a record cut mid-line, say), or a file
    not found (removed while read), is reported as the change of a file where one changed
    meanwhile: that is its cause ("it was removed", not "No such file or directory")."""
    try:
        yield
    except (CorpusError, FileNotFoundError):
        check_unchanged_files(files)
        raise
