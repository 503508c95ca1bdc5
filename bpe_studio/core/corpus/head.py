"""The start of a corpus as text, however it is kept.

What it does: :func:`corpus_head` reads about the first ``limit`` bytes of text of the corpus
that ``paths`` names, in the order training reads it: plain or compressed text files, JSON
Lines or Parquet records (their text field), local files, globs and fsspec URLs. Files follow
one another, and records too, with a line break between two (added where the first has none):
training never counts a pre-token across two of them. The text ends after its last line break
within ``limit`` (with none, after its last whole character); a record that does not fit is
left out, unless it is the first. Text that is not UTF-8 raises the error training gives,
naming the file, the byte offset and the line. It is the app's sample of a corpus (the
Report's corpus row, the compression plot's in-sample curve).
What it leaves out: counting and encoding; reading past what ``limit`` needs (a large
compressed or remote file is read only as far as its first ``limit`` bytes of text).
"""

from __future__ import annotations

from collections.abc import Sequence

from .counting import decode_head
from .records import file_documents
from .sources import DEFAULT_TEXT_FIELD, Kind, resolve_corpus


def corpus_head(
    paths: str | Sequence[str],
    limit: int,
    text_field: str = DEFAULT_TEXT_FIELD,
    records: str | None = None,
) -> str:
    """About the first ``limit`` bytes of the corpus ``paths`` names, as text (see the module);
    ``records`` as for ``train_bpe`` (None: each file's name says what it holds)."""
    head = _Head(limit)
    for f in resolve_corpus(paths, records):
        if f.kind is not Kind.TEXT:
            if not all(head.add(document, f.name) for document in file_documents(f, text_field)):
                break
            continue
        with f.open() as stream:
            data = stream.read(head.left + 1)
        whole = len(data) <= head.left
        text = decode_head(data, f.name, cut=False) if whole else _cut(data[: head.left], f.name)
        if not head.add(text, f.name) or not whole:
            break
    return "".join(head.parts)


class _Head:
    """The texts taken so far, and the bytes left for more."""

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.left = limit

    def add(self, text: str, name: str) -> bool:
        """Take ``text`` (after a line break, where the text before ends in none) if it fits,
        else only the start of the first text; whether there is room for more."""
        if self.parts and not self.parts[-1].endswith("\n"):
            self.parts[-1] += "\n"
            self.left -= 1
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > self.left:
            if not self.parts:
                self.parts.append(_cut(data[: self.left], name))
            self.left = 0
            return False
        self.parts.append(text)
        self.left -= len(data)
        return self.left > 0


def _cut(data: bytes, name: str) -> str:
    """``data``, the start of a longer text, up to its last line break (with none, its last
    whole character), decoded as ``counting.read_head`` decodes a file's start."""
    end = data.rfind(b"\n")
    return decode_head(data[: end + 1] if end > 0 else data, name, cut=True)
