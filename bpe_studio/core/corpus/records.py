"""Records as documents: the text field of each JSON Lines record or Parquet row.

What it does: :func:`jsonl_documents` reads JSON Lines (one JSON object per line; blank lines
are skipped) and :func:`parquet_documents` one row group of a Parquet file, with ``pyarrow``,
a batch of rows at a time, so memory stays bounded by a row group's column whatever the file's
size. Each yields the text of ``field`` of every record, one document each. A record without
the field, or whose field is not text, is an error naming the field, the file and the line
(JSON Lines) or the row group and row (Parquet). :func:`parquet_row_groups` lists a Parquet
file's row groups and their sizes (one counting task each); :func:`file_documents` reads a
whole file of either kind, in order (what encoding records reads); :func:`holds_text` whether
a corpus holds any text at all; :func:`unsaid_records` finds a file whose name does not say
it holds records (a ``.json``) but whose first line is one, which read as text would be
trained on its braces and field names (the command line and the app ask how to read it).
What it leaves out: where the files are (``sources``), counting (``tasks``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Container, Generator, Iterable, Iterator, Sequence
from contextlib import closing
from typing import TYPE_CHECKING, Any, BinaryIO

from .sources import CLUSTER_EXTRA, CorpusError, CorpusFile, Kind, failure
from .sources import DEFAULT_TEXT_FIELD as DEFAULT_TEXT_FIELD  # where callers have found it

if TYPE_CHECKING:
    import pyarrow.parquet as pq

# Rows converted to Python strings at a time within a row group.
PARQUET_BATCH = 1024
# Where a JSON Lines record is looked for: the first line, within this many bytes.
_SNIFF_BYTES = 1 << 16
# A JSON object's first key, for a first line longer than the bytes looked at.
_OBJECT_START = re.compile(rb'\{\s*"(?:[^"\\]|\\.)*"\s*:')
# Names that say JSON but not JSON Lines: a .json file may hold either, so its name is no
# reason to read it as records, nor as text.
JSON_SUFFIXES = (".json", ".json.gz", ".json.bz2", ".json.xz", ".json.zst")


def _fields(names: Iterable[str]) -> str:
    shown = [repr(n) for n in list(names)[:8]]
    return ", ".join(shown) or "none"


class Place:
    """Where in its file the record a reader yielded last lies (``now``), for an error
    about its text found by whoever reads it (the pattern leaving some of it out). The
    readers set numbers only, per record: the words are made when an error asks."""

    def __init__(self) -> None:
        # A JSON Lines record's line: ``line_of(index)``, worked out when asked (a byte
        # range's first line is counted from the file's start: per record, that was the
        # whole file read again for each).
        self._line_of: Callable[[int], int] | None = None
        self._index = 0
        self.group: tuple[int, int, int] | None = None  # a row group: its number, of, rows before
        self.row = 0  # the row in it (from 1)

    def at_line(self, line_of: Callable[[int], int], index: int) -> None:
        """The record read last is on line ``line_of(index)`` of its file."""
        self._line_of, self._index = line_of, index

    @property
    def line(self) -> int:
        """The line (from 1) of the JSON Lines record read last, or 0."""
        return 0 if self._line_of is None else self._line_of(self._index)

    @property
    def now(self) -> str:
        if self.group is not None:
            group, groups, before = self.group
            row = self.row
            in_file = f"row {before + row:,} of the file"
            return f"row group {group} of {groups}, its row {row} ({in_file})"
        return f"the record on line {self.line:,}" if self.line else "a record"


def jsonl_documents(
    lines: Iterable[bytes],
    name: str,
    field: str,
    line_of: Callable[[int], int] = lambda i: i + 1,
    place: Place | None = None,
) -> Iterator[str]:
    """The ``field`` text of each record of JSON Lines ``lines`` (an open file, say).
    ``line_of(i)`` is the line number (from 1) in the file of the ``i``-th line (0-based);
    ``place`` is told each record's."""
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            # Decoded here (a byte order mark let through, as json.loads does): json.loads
            # would also take UTF-16 and UTF-32 bytes, and UTF-8 encoding surrogates.
            # Without its line end: json's own position in its message would say "line 2".
            record = json.loads(line.rstrip(b"\r\n").decode("utf-8-sig"))
        except UnicodeDecodeError as e:
            if i == 0 and line.startswith(b"PAR1"):  # records asked as JSONL, whatever the name
                raise CorpusError(
                    f"{name}: not JSON Lines but Parquet (it begins with Parquet's magic "
                    "bytes): read it as Parquet records"
                ) from None
            raise CorpusError(f"{name}: line {line_of(i)}: not valid UTF-8 ({e.reason})") from None
        except RecursionError:
            raise CorpusError(
                f"{name}: line {line_of(i)}: nested deeper than Python's JSON parser goes, "
                "which no record is (a damaged line?)"
            ) from None
        except ValueError as e:
            if b"\x00" in line:
                raise CorpusError(
                    f"{name}: line {line_of(i)}: not UTF-8 text (it holds NUL bytes: UTF-16?)"
                ) from None
            raise CorpusError(
                f"{name}: line {line_of(i)}: not a JSON record ({e}): {_near(line, e)}"
            ) from None
        if not isinstance(record, dict):
            raise CorpusError(
                f"{name}: line {line_of(i)}: a JSON {type(record).__name__}, not a record "
                "(an object with a text field)"
            )
        text = record.get(field)
        if not isinstance(text, str):
            raise CorpusError(f"{name}: line {line_of(i)}: {_field_problem(field, record)}")
        if place is not None:
            place.at_line(line_of, i)
        yield text


def _field_problem(field: str, record: dict[str, Any]) -> str:
    if field not in record:
        return f"no field {field!r} (the record's fields: {_fields(record)})"
    value = record[field]
    name = type(value).__name__
    if value is None:
        return f"field {field!r} is null, not text"
    shown = _cut(json.dumps(value, ensure_ascii=False), _QUOTED)
    return f"field {field!r} is {'an' if name[0] in 'aeiou' else 'a'} {name} ({shown}), not text"


_QUOTED = 60  # characters of a record quoted in an error


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _near(line: bytes, error: ValueError) -> str:
    """The part of a JSON line that failed to parse, around where the parser stopped."""
    text = line.rstrip(b"\r\n").decode("utf-8", "replace")
    at = getattr(error, "pos", None)
    start = 0 if not isinstance(at, int) else max(at - _QUOTED // 2, 0)
    return ("…" if start else "") + _cut(text[start:], _QUOTED)


def _parquet_file(stream: BinaryIO) -> pq.ParquetFile:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CorpusError(f"reading Parquet needs pyarrow: {CLUSTER_EXTRA}") from None
    return pq.ParquetFile(stream)


def parquet_row_groups(stream: BinaryIO, name: str) -> list[int]:
    """The compressed size of each row group of a Parquet file, in order."""
    try:
        meta = _parquet_file(stream).metadata
    except CorpusError:
        raise
    except Exception as e:  # pyarrow's ArrowInvalid and kin: not a Parquet file
        raise CorpusError(f"{name}: not a readable Parquet file ({failure(e)})") from None
    return [
        sum(group.column(c).total_compressed_size for c in range(group.num_columns))
        for group in map(meta.row_group, range(meta.num_row_groups))
    ]


def _is_text(pa: Any, kind: Any) -> bool:
    """Whether a column of Arrow type ``kind`` holds text: strings, large strings, string
    views, or any of them dictionary-encoded (as writers store columns of repeated values);
    ``to_pylist`` gives ``str`` for each."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    view = getattr(pa.types, "is_string_view", lambda _: False)
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or view(kind))


def parquet_documents(
    stream: BinaryIO, name: str, group: int, field: str, place: Place | None = None
) -> Iterator[str]:
    """The ``field`` text of each row of row group ``group`` (0-based) of a Parquet file;
    messages count groups and rows from 1; ``place`` is told each row's."""
    pf = _parquet_file(stream)
    import pyarrow as pa  # subtle: after _parquet_file, which says how to install it

    # Counted from 1, as JSON Lines' lines are, and with the row's place in the file: "row
    # group 2, row 500" was read as the 500th row, where it was the 2,501st.
    meta = pf.metadata
    where = f"{name}: row group {group + 1} of {meta.num_row_groups}"
    before = sum(meta.row_group(g).num_rows for g in range(group))
    schema = pf.schema_arrow
    if field not in schema.names:
        raise CorpusError(f"{where}: no field {field!r} (the columns: {_fields(schema.names)})")
    kind = schema.field(field).type
    if not _is_text(pa, kind):
        raise CorpusError(f"{where}: field {field!r} holds {kind}, not text")
    row = 0
    if place is not None:
        place.group = (group + 1, meta.num_row_groups, before)
    for batch in _batches(pf, group, field, where):
        for text in batch.column(0).to_pylist():
            if text is None:
                raise CorpusError(
                    f"{where}, its row {row + 1} (row {before + row + 1:,} of the file): "
                    f"field {field!r} is null, not text"
                )
            row += 1
            if place is not None:
                place.row = row
            yield text


def _batches(pf: pq.ParquetFile, group: int, field: str, where: str) -> Iterator[Any]:
    """The batches of ``field`` in row group ``group``; a page pyarrow cannot read (damaged
    data, a codec it lacks) is an error naming the file and the row group."""
    batches = pf.iter_batches(PARQUET_BATCH, row_groups=[group], columns=[field])
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except Exception as e:  # pyarrow's ArrowInvalid, OSError and kin
            raise CorpusError(f"{where}: cannot read it ({failure(e)})") from None
        yield batch


def file_documents(
    f: CorpusFile,
    field: str,
    counted: Callable[[int], None] | None = None,
    place: Place | None = None,
) -> Generator[str, None, None]:
    """The ``field`` text of every record of a JSON Lines or Parquet file, in order;
    ``counted(n)`` is told the bytes as stored as they are read (a row group's at a time),
    ``place`` where each record lies."""
    if f.kind is Kind.PARQUET:
        with f.open() as stream:
            for group, size in enumerate(parquet_row_groups(stream, f.name)):
                yield from parquet_documents(stream, f.name, group, field, place)
                if counted is not None:
                    counted(size)
        return
    with f.open(counted) as stream:
        yield from jsonl_documents(stream, f.name, field, place=place)


def holds_text(files: Sequence[CorpusFile], field: str = DEFAULT_TEXT_FIELD) -> bool:
    """Whether any of ``files`` holds a character of text (of a record's ``field``, for
    records), read up to the first: what tells a corpus that holds nothing (an empty
    compressed file, blank JSON Lines, a Parquet file of no rows) from one of special
    tokens or single characters, once counting found nothing to merge."""
    for f in files:
        if f.kind is Kind.TEXT:
            with f.open() as stream:
                if stream.read(1):
                    return True
            continue
        with closing(file_documents(f, field)) as documents:
            if any(documents):
                return True
    return False


# Why nothing was learned from a corpus with text: what it holds, not only what it lacks.
NO_PAIR = (
    "it holds no two bytes side by side within a pre-token (only single characters, spaces "
    "or special tokens), so there is no pair to merge"
)


def nothing_to_merge(
    files: Sequence[CorpusFile], field: str | None = None, counted: bool = False
) -> str:
    """Why counting ``files`` left no pair to merge, in words (the one rule the command line
    and the app say it by): the files are empty, hold no text (of the records' ``field``;
    read only when ``counted`` is False, no pre-token having been counted), or hold no pair
    within a pre-token."""
    one = len(files) == 1
    if sum(f.size for f in files) == 0:
        return "the file is empty" if one else "the files are empty"
    if not counted and not holds_text(files, field or DEFAULT_TEXT_FIELD):
        return "the file holds no text" if one else "the files hold no text"
    return NO_PAIR


def first_line_is_a_record(f: CorpusFile) -> bool:
    """Whether the first non-blank line of ``f`` (decompressed) is a JSON object: parsed
    when it ends within the bytes looked at, else begun as one (``{"key":``)."""
    try:
        with f.open() as stream:
            head = stream.read(_SNIFF_BYTES)
    except (OSError, ValueError, EOFError):
        return False  # counting will say what is wrong with it, naming it
    text = head.lstrip()
    end = text.find(b"\n")
    line = text if end < 0 else text[:end]
    if not line.startswith(b"{"):
        return False
    if end < 0 and len(head) == _SNIFF_BYTES:
        return _OBJECT_START.match(line) is not None
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


def unsaid_records(files: Sequence[CorpusFile], vague: Container[str] = ()) -> CorpusFile | None:
    """The first file of ``files`` read as plain text whose name says nothing of what it
    holds (a ``.json`` name, or its ``url`` in ``vague``: a stream's copy, say) while its
    first line is a JSON object; None when there is none. Read as text, such a file would be
    trained on braces and field names included: a caller asks how to read it (``records=``
    "jsonl" or "text") rather than guess."""
    for f in files:
        named_vaguely = f.url in vague or f.name.lower().endswith(JSON_SUFFIXES)
        if f.kind is Kind.TEXT and named_vaguely and first_line_is_a_record(f):
            return f
    return None
