"""Comparing tokenizers on text: where their token boundaries differ, and bytes per token.

What it does: :func:`cut_offsets` turns a tokenization into the character offsets where a token
starts; :func:`boundary_diff` gives the offsets where exactly one of two tokenizers cuts (the
Compare page marks them). :func:`compute_report` encodes a set of :class:`Sample` texts with up
to a few tokenizers and counts bytes, characters and tokens per pair (the Report page's table
and chart); :func:`report_csv` writes that table. :func:`bundled_samples` reads the short texts
shipped in ``resources/samples`` and :func:`corpus_sample` the head of a corpus file.
What it leaves out: threads, widgets and files written (the app's ``views/compare`` and
``views/report``); a cut *inside* a character (a byte-level token splitting a multi-byte
character) has no character offset, so it is not reported as a boundary.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ..encode.foreign import AnyTokenizer, ForeignTokenizer
from ..encode.tokenizer import Tokenizer
from ..text.surrogates import original_offsets, replace_surrogates

# The samples shipped in resources/samples, in the order the report shows them.
SAMPLE_FILES: tuple[tuple[str, str], ...] = (
    ("English prose", "english_prose.txt"),
    ("Chinese", "chinese.txt"),
    ("Python code", "python_code.txt"),
    ("Web text", "web_text.txt"),
    ("Emoji-heavy", "emoji.txt"),
)
# About how much of the loaded corpus's start the report reads, and the compression plot's
# in-sample curve too: one slice, so that their "first MB" figures agree.
CORPUS_LIMIT = 1_000_000
CSV_COLUMNS = ("sample", "tokenizer", "bytes", "characters", "tokens", "bytes_per_token")


def _utf8_lengths(text: str) -> np.ndarray:
    """The UTF-8 length of each character of ``text`` (which holds no surrogates)."""
    cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    return 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)


def token_byte_lengths(tokenizer: Tokenizer, ids: Sequence[int] | np.ndarray) -> np.ndarray:
    """The number of bytes of each token in ``ids``."""
    arr = np.asarray(ids, dtype=np.int64)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    unique, where = np.unique(arr, return_inverse=True)
    vocab = tokenizer.vocab
    lengths = np.fromiter((len(vocab[int(i)]) for i in unique), dtype=np.int64, count=len(unique))
    return lengths[where]


def cut_offsets(text: str, byte_lengths: np.ndarray) -> np.ndarray:
    """Sorted character offsets ``0 < c < len(text)`` at which one of the tokens starts, given
    the tokens' byte lengths in order (they must add up to the text's UTF-8 length, surrogates
    encoded as ``Tokenizer.encode`` encodes them)."""
    fixed = text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        fixed = replace_surrogates(text)
    char_ends = np.cumsum(_utf8_lengths(fixed))  # byte offset where each character ends
    token_ends = np.cumsum(byte_lengths)
    total = int(char_ends[-1]) if len(char_ends) else 0
    if (int(token_ends[-1]) if len(token_ends) else 0) != total:
        raise ValueError(
            f"the tokens hold {int(token_ends[-1]) if len(token_ends) else 0} bytes, "
            f"the text {total}"
        )
    # Character c (c >= 1) starts at byte char_ends[c - 1]; it is a cut when a token ends there.
    inner = char_ends[:-1]
    hit = np.isin(inner, token_ends[:-1], assume_unique=True)
    offsets = np.nonzero(hit)[0] + 1
    if fixed is not text:
        # subtle: a joined surrogate pair is one character of ``fixed`` but two of ``text``.
        where = np.asarray(original_offsets(text), dtype=np.int64)
        offsets = where[offsets]
    return offsets.astype(np.int64)


def tokenizer_cuts(text: str, tokenizer: AnyTokenizer) -> np.ndarray:
    """:func:`cut_offsets` of ``text`` as ``tokenizer`` encodes it (a foreign tokenizer's
    from its offsets: its tokens' bytes need not add up to the text's)."""
    if isinstance(tokenizer, ForeignTokenizer):
        return tokenizer.cuts(text)
    return cut_offsets(text, token_byte_lengths(tokenizer, tokenizer.encode(text)))


def diff_cuts(cuts_a: np.ndarray, cuts_b: np.ndarray) -> np.ndarray:
    """The offsets in exactly one of two sorted cut arrays, sorted."""
    return np.setxor1d(cuts_a, cuts_b, assume_unique=True).astype(np.int64)


def boundary_diff(text: str, tok_a: AnyTokenizer, tok_b: AnyTokenizer) -> list[int]:
    """Character offsets of ``text`` where exactly one of the two tokenizers starts a token.

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> whole = Tokenizer({**vocab, 256: b"ab"}, [(b"a", b"b")])
    >>> boundary_diff("abc", whole, Tokenizer(vocab, []))
    [1]
    """
    return diff_cuts(tokenizer_cuts(text, tok_a), tokenizer_cuts(text, tok_b)).tolist()


# ---------------------------------------------------------------- the report
@dataclass(frozen=True, slots=True)
class Sample:
    """A named text to measure tokenizers on."""

    name: str
    text: str


@dataclass(frozen=True, slots=True)
class ReportCell:
    """One sample encoded by one tokenizer."""

    sample: str
    tokenizer: str
    bytes: int  # UTF-8 bytes of the sample
    characters: int
    tokens: int

    @property
    def bytes_per_token(self) -> float:
        """Bytes per token (0.0 for an empty sample): higher means the tokenizer compresses
        this kind of text better."""
        return self.bytes / self.tokens if self.tokens else 0.0


@dataclass(frozen=True)
class Report:
    """Cells for every sample (rows) and tokenizer (columns), row by row."""

    samples: tuple[str, ...]
    tokenizers: tuple[str, ...]
    cells: tuple[ReportCell, ...]

    def cell(self, sample: str, tokenizer: str) -> ReportCell:
        for c in self.cells:
            if c.sample == sample and c.tokenizer == tokenizer:
                return c
        raise KeyError(f"no cell for sample {sample!r} and tokenizer {tokenizer!r}")


def _utf8_size(text: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return len(replace_surrogates(text).encode("utf-8"))


def compute_report(
    samples: Sequence[Sample],
    tokenizers: Sequence[tuple[str, AnyTokenizer]],
    is_stale: Callable[[], bool] = lambda: False,
) -> Report | None:
    """Encode every sample with every tokenizer; None if ``is_stale()`` turned true between
    two encodings. Tokenizer names must be distinct (they label the columns)."""
    names = [name for name, _ in tokenizers]
    if len(set(names)) != len(names):
        raise ValueError(f"tokenizer names must be distinct: {names}")
    cells: list[ReportCell] = []
    for sample in samples:
        size = _utf8_size(sample.text)
        for name, tok in tokenizers:
            if is_stale():
                return None
            count = len(tok.encode(sample.text))
            cells.append(ReportCell(sample.name, name, size, len(sample.text), count))
    return Report(tuple(s.name for s in samples), tuple(names), tuple(cells))


def report_csv(report: Report) -> str:
    """The report as CSV, one row per sample and tokenizer (:data:`CSV_COLUMNS`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in report.cells:
        bpt = f"{c.bytes_per_token:.4f}"
        writer.writerow([c.sample, c.tokenizer, c.bytes, c.characters, c.tokens, bpt])
    return out.getvalue()


# ------------------------------------------------------------------- samples
def bundled_samples() -> list[Sample]:
    """The short texts shipped in ``resources/samples`` (see its README for their sources)."""
    folder = resources.files("bpe_studio.resources") / "samples"
    return [
        Sample(name, (folder / file).read_text(encoding="utf-8")) for name, file in SAMPLE_FILES
    ]


def corpus_sample(path: str | os.PathLike[str], limit: int = CORPUS_LIMIT) -> Sample:
    """About the first ``limit`` bytes of a UTF-8 corpus file, cut after a line break (or,
    with none, back to a whole character), named after the file. Invalid UTF-8 raises
    ValueError naming the file, the byte offset and the line (``counting.read_head``)."""
    from ..corpus.counting import read_head  # subtle: lazily; it imports the process pools

    path = Path(path)
    return Sample(f"Corpus: {path.name}", read_head(path, limit, whole_lines=True))
