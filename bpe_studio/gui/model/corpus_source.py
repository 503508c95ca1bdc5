"""What the app trains on: a corpus of one or more files, as the user named it.

What it does: :class:`CorpusSource` is the corpus the user opened: paths, a glob or URLs
(``core.corpus.sources`` resolves them: compressed files, JSON Lines and Parquet records),
with a name for the panel, the stored size, how many of its files are compressed (progress
counts stored bytes, so the panel says when they are compressed ones) and whether it holds
records (then a text field is asked for). ``plain`` is the one plain local text file the
sample-reading views (the compression curve's in-sample text, the report) can read, or None;
``read_as`` how the user said to read a file whose name does not say what it holds (a
``.json`` whose first line is a record, :func:`how_to_read`: as JSON Lines or as text;
:func:`how_to_read` asks, for the Train page and the Vocabulary lab alike).
:func:`utf8_problem` reads the start of each plain text file named (and of a glob's first
``GLOB_FILES``), so that a file that is not UTF-8 is refused at Open, before the run on screen
is discarded for it.
What it leaves out: where the counting runs (``gui.views.cluster_choice``), training (``worker``).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...core.corpus.counting import decode_head, read_head
from ...core.corpus.errors import CorpusError
from ...core.corpus.records import unsaid_records
from ...core.corpus.sources import Kind, check_text_files, is_glob_or_url, resolve_corpus

# How much of each plain text file Open reads to check it is UTF-8 (on the GUI thread).
PROBE_BYTES = 64 * 1024
# The files of a glob whose starts Open reads, at most: a glob of thousands of shards would
# hold the window up while each is opened (the run checks them all).
GLOB_FILES = 16

# How to read a file whose name does not say (what :func:`how_to_read`'s ``ask`` answers,
# besides cancelling): the core's ``records`` values.
AS_RECORDS, AS_TEXT = "jsonl", "text"

# What Open corpus offers (a file dialog's filter): text, plain or compressed, and records.
CORPUS_FILTERS = (
    "Corpora (*.txt *.text *.md *.gz *.bz2 *.xz *.zst *.jsonl *.ndjson *.parquet);;"
    "Text files (*.txt *.text *.md);;JSON Lines records (*.jsonl *.jsonl.gz *.jsonl.zst);;"
    "Parquet records (*.parquet);;All files (*)"
)


@dataclass(frozen=True, slots=True)
class CorpusSource:
    """A corpus as the user named it (``paths``: paths, globs or URLs) and what it holds."""

    paths: tuple[str, ...]
    name: str  # for the panel and messages
    size: int  # bytes as stored
    files: int
    records: bool  # JSON Lines or Parquet records: a text field is needed
    plain: Path | None  # the one plain local text file it is, else None
    compressed: int = 0  # files stored compressed (.gz, .bz2, .xz, .zst)
    # The core's ``records`` the user chose for a file its name says nothing of (a .json):
    # "jsonl" or "text"; None: each file's name says what it holds.
    read_as: str | None = None

    @property
    def stored_bytes(self) -> str:
        """What a count of stored bytes is of this corpus: "" for plain files, else
        "compressed" (every file) or "as stored" (some)."""
        if not self.compressed:
            return ""
        return "compressed" if self.compressed == self.files else "as stored"


def corpus_source(paths: list[str], read_as: str | None = None) -> CorpusSource:
    """The corpus ``paths`` name, resolved now (a missing file, a glob that matches nothing or a
    missing package raises the core's error, which names it), its files read as ``read_as``
    says (the core's ``records``)."""
    files = resolve_corpus(paths, read_as)
    first = paths[0] if len(paths) == 1 else f"{paths[0]} (and {len(paths) - 1} more)"
    single = files[0] if len(files) == 1 else None
    plain = (
        Path(single.url)
        if single is not None and single.plain_local and single.kind is Kind.TEXT
        else None
    )
    local_file = len(paths) == 1 and single is not None and single.local
    return CorpusSource(
        tuple(paths),
        os.path.basename(first) if local_file else first,
        sum(f.size for f in files),
        len(files),
        any(f.kind is not Kind.TEXT for f in files),
        plain,
        sum(f.compression is not None for f in files),
        read_as,
    )


def how_to_read(paths: Sequence[str], ask: Callable[[str, str], str]) -> str | None:
    """None when every file's name says what it holds; else, for a file that does not say
    (a .json whose first line is a JSON object, which the command line refuses without
    --records), the answer of ``ask(title, question)``: AS_RECORDS, AS_TEXT, or anything
    else for cancelled. Only local files are read (``records.unsaid_records``, the command
    line's rule): reading remote ones here would hold the window up; the run reads them."""
    try:
        files = resolve_corpus(list(paths))
        found = unsaid_records([f for f in files if f.local])
    except (OSError, ValueError):
        return None  # resolved just before; what changed since is said by the run
    if found is None:
        return None
    # The answer is for every file ``paths`` name (a glob's too), as --records is.
    every = " (and every other file of the corpus)" if len(files) > 1 else ""
    return ask(
        "Read as JSON Lines records?",
        f"{found.name}: its first line is a JSON object, and its name does not say whether it "
        "holds JSON Lines records or text.\n\nRead it" + every + " as records, each "
        "record's text field one document (the field is set beside the corpus), or as "
        "plain text, braces and field names included?",
    )


def utf8_problem(paths: Sequence[str], read_as: str | None = None) -> str | None:
    """Why a local text file among ``paths`` (each an existing file or a glob or URL) is
    not UTF-8 text, in the core's words: an archive or a document (``check_text_files``,
    compressed files too), or the file and the byte offset of a fault in a text file's first
    ``PROBE_BYTES`` (a compressed one's, decompressed); None when none is found. A glob's
    first ``GLOB_FILES`` local matches are read as files named are; URLs, the rest and records
    are left to the run, which reads and checks them all; so is a fault further on.
    ``read_as``: the core's ``records``, as the corpus is read."""
    for path in paths:
        if "://" in path:
            continue
        # subtle: a glob's files were left to the run, so a glob matching a binary file was
        # opened (asking first to discard the run on screen) and the run failed at once.
        glob = is_glob_or_url(path)
        files = resolve_corpus([path], read_as)
        for file in files[:GLOB_FILES] if glob else files:
            if not file.local or file.kind is not Kind.TEXT:
                continue
            name = file.name if glob else path
            try:
                check_text_files([file])
                if file.plain_local:
                    read_head(file.url, PROBE_BYTES, name=name)
                else:  # compressed: the start of its text, as the run decompresses it
                    with file.open() as stream:
                        data = stream.read(PROBE_BYTES + 1)
                    decode_head(data[:PROBE_BYTES], name, cut=len(data) > PROBE_BYTES)
            except (OSError, EOFError) as error:
                return f"{name}: {getattr(error, 'strerror', None) or error}"
            except CorpusError as error:
                return str(error)
    return None


def joined_sources(paths: Sequence[str]) -> str:
    """Corpus sources as one line a person edits: each quoted where a shell would need it
    (a space in a path), as :func:`split_sources` reads them back."""
    return shlex.join(paths)


def split_sources(text: str) -> list[str]:
    """The sources typed in a line: the whole line when it names an existing file (a path
    with spaces, typed as it is), else the words a shell would see ("my corpus.txt" quoted
    stays one), else, with an unbalanced quote, the line cut at spaces."""
    stripped = text.strip()
    if stripped and os.path.exists(stripped):
        return [stripped]
    try:
        return shlex.split(stripped)
    except ValueError:
        return stripped.split()
