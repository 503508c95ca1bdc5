"""What the app trains on: a corpus of one or more files, as the user named it.

What it does: :class:`CorpusSource` is the corpus the user opened: paths, a glob or URLs
(``core.corpus.sources`` resolves them: compressed files, JSON Lines and Parquet records),
with a name for the panel, the stored size, how many of its files are compressed (progress
counts stored bytes, so the panel says when they are compressed ones) and whether it holds
records (then a text field is asked for). ``plain`` is the one plain local text file the
sample-reading views (the compression curve's in-sample text, the report) can read, or None.
What it leaves out: where the counting runs (``gui.views.cluster_choice``), training (``worker``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...core.corpus.sources import Kind, resolve_corpus

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

    @property
    def stored_bytes(self) -> str:
        """What a count of stored bytes is of this corpus: "" for plain files, else
        "compressed" (every file) or "as stored" (some)."""
        if not self.compressed:
            return ""
        return "compressed" if self.compressed == self.files else "as stored"


def corpus_source(paths: list[str]) -> CorpusSource:
    """The corpus ``paths`` name, resolved now (a missing file, a glob that matches nothing or a
    missing package raises the core's error, which names it)."""
    files = resolve_corpus(paths)
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
    )
