"""Comparing tokenizers on text: where their token boundaries differ, and bytes per token.

What it does: :func:`tokenizer_cuts` gives the character offsets where a tokenizer cuts a text
(a token starts there and none spans across); :func:`boundary_diff` gives the offsets where
exactly one of two tokenizers cuts (the Compare page marks them). :func:`compute_report`
encodes a set of :class:`Sample` texts with up to a few tokenizers and counts bytes,
characters and tokens per pair, and the text a model turns into its unknown token
(:class:`Unknown`; :func:`unknown_note` says it): the Report page's table and chart. A pair
that cannot be encoded (a custom pattern that does not cover the sample) is left out alone
(:class:`LeftOut`; :func:`left_out_note` says which and why).
:func:`report_csv` writes that table, a row for each pair. :func:`bundled_samples` reads the
short texts shipped in ``resources/samples`` and :func:`corpus_sample` the head of a corpus file.
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

from ..corpus.sources import DEFAULT_TEXT_FIELD
from ..encode.foreign import AnyTokenizer, ForeignTokenizer
from ..encode.token_spans import span_cuts
from ..pretokenization.pretokenizer import UncoveredText
from ..text.surrogates import replace_surrogates

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
CSV_COLUMNS = (
    "sample",
    "tokenizer",
    "bytes",
    "characters",
    "tokens",
    "bytes_per_token",
    "left_out",
)


def tokenizer_cuts(text: str, tokenizer: AnyTokenizer) -> np.ndarray:
    """Sorted character offsets ``0 < c < len(text)`` where ``tokenizer`` cuts ``text``: a
    token starts at ``c`` and none holds characters on both sides of it
    (``token_spans.span_cuts`` of its spans). Spans, not the tokens' bytes: a normalizer's
    tokens need not spell the text (``ﬁ`` as ``fi``), nor need a foreign model's."""
    packed = tokenizer.packed_spans(text)
    return span_cuts(packed[:, 1], packed[:, 2], len(text))


def diff_cuts(cuts_a: np.ndarray, cuts_b: np.ndarray) -> np.ndarray:
    """The offsets in exactly one of two sorted cut arrays, sorted."""
    return np.setxor1d(cuts_a, cuts_b, assume_unique=True).astype(np.int64)


def boundary_diff(text: str, tok_a: AnyTokenizer, tok_b: AnyTokenizer) -> list[int]:
    """Character offsets of ``text`` where exactly one of the two tokenizers cuts it
    (:func:`tokenizer_cuts`).

    >>> from bpe_studio.core import Tokenizer
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
class Unknown:
    """A tokenizer's unknown token (``[UNK]``) in a sample: as the file writes it, how many of
    them and how many of the sample's characters they stand for: text the tokenizer does not
    encode, which bytes per token counts as if it did."""

    token: str
    count: int
    characters: int


@dataclass(frozen=True, slots=True)
class ReportCell:
    """One sample encoded by one tokenizer (``unknown``: None where no token is unknown)."""

    sample: str
    tokenizer: str
    bytes: int  # UTF-8 bytes of the sample
    characters: int
    tokens: int
    unknown: Unknown | None = None

    @property
    def bytes_per_token(self) -> float:
        """Bytes per token (0.0 for an empty sample): higher means the tokenizer compresses
        this kind of text better."""
        return self.bytes / self.tokens if self.tokens else 0.0


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A sample a tokenizer cannot encode, and why (its pattern leaves a character out)."""

    sample: str
    tokenizer: str
    reason: str


@dataclass(frozen=True)
class Report:
    """Cells for every sample (rows) and tokenizer (columns), row by row, but those
    ``left_out``, which could not be computed."""

    samples: tuple[str, ...]
    tokenizers: tuple[str, ...]
    cells: tuple[ReportCell, ...]
    left_out: tuple[LeftOut, ...] = ()

    def find(self, sample: str, tokenizer: str) -> ReportCell | None:
        """The cell of ``sample`` and ``tokenizer``, or None when it was left out."""
        for c in self.cells:
            if c.sample == sample and c.tokenizer == tokenizer:
                return c
        return None

    def cell(self, sample: str, tokenizer: str) -> ReportCell:
        found = self.find(sample, tokenizer)
        if found is None:
            raise KeyError(f"no cell for sample {sample!r} and tokenizer {tokenizer!r}")
        return found


def _utf8_size(text: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return len(replace_surrogates(text).encode("utf-8"))


# How a report counts a sample's tokens under a tokenizer: (tokens, its unknown text), or
# None once stale; raises UncoveredText where the tokenizer's pattern does not cover it.
CellCount = Callable[[Sample, AnyTokenizer], tuple[int, Unknown | None] | None]


def compute_report(
    samples: Sequence[Sample],
    tokenizers: Sequence[tuple[str, AnyTokenizer]],
    is_stale: Callable[[], bool] = lambda: False,
    count: CellCount | None = None,
) -> Report | None:
    """Encode every sample with every tokenizer; None if ``is_stale()`` turned true between
    two encodings. Tokenizer names must be distinct (they label the columns). A sample a
    tokenizer's pattern does not cover is left out of that tokenizer's column alone.
    ``count`` counts a cell's tokens (by default :func:`count_tokens` of its text): a caller
    may keep cells from one report to the next, or derive them otherwise."""
    names = [name for name, _ in tokenizers]
    if len(set(names)) != len(names):
        raise ValueError(f"tokenizer names must be distinct: {names}")
    cells: list[ReportCell] = []
    left_out: list[LeftOut] = []
    for sample in samples:
        size = _utf8_size(sample.text)
        for name, tok in tokenizers:
            if is_stale():
                return None
            try:
                counted = count_tokens(sample.text, tok) if count is None else count(sample, tok)
            except UncoveredText as e:
                left_out.append(LeftOut(sample.name, name, str(e)))
                continue
            if counted is None:
                return None
            tokens, unknown = counted
            cells.append(ReportCell(sample.name, name, size, len(sample.text), tokens, unknown))
    return Report(tuple(s.name for s in samples), tuple(names), tuple(cells), tuple(left_out))


def count_tokens(text: str, tokenizer: AnyTokenizer) -> tuple[int, Unknown | None]:
    """The number of tokens of ``text`` and its text turned into the unknown token, if any
    (a foreign model's, from its spans: they hold the same ids as ``encode``)."""
    if not isinstance(tokenizer, ForeignTokenizer) or tokenizer.unknown_id is None:
        return len(tokenizer.encode(text)), None
    unk = tokenizer.unknown_id
    packed = tokenizer.packed_spans(text)
    held = packed[packed[:, 0] == unk]
    if not len(held):
        return len(packed), None
    # +1 where each unknown span starts, -1 where it ends: a character is held while the
    # running sum is positive (neighbouring spans may share characters).
    size = len(text) + 1
    depth = np.cumsum(
        np.bincount(held[:, 1], minlength=size)[:size]
        - np.bincount(held[:, 2], minlength=size)[:size]
    )
    token = tokenizer.token_text(unk) or ""
    return len(packed), Unknown(token, len(held), int(np.count_nonzero(depth[:-1] > 0)))


def _percent(share: float) -> str:
    return "under 1%" if share < 0.01 else f"{share:.0%}"


def unknown_note(report: Report) -> str:
    """What each tokenizer turns into its unknown token, by sample ("" if nothing), e.g.
    "bert turns 15% of Emoji-heavy's characters into [UNK] (bytes per token counts that
    text as encoded)": its bytes per token alone would read that as compression."""
    parts = []
    for name in report.tokenizers:
        held = [(c, c.unknown) for c in report.cells if c.tokenizer == name and c.unknown]
        if not held:
            continue
        shares = [f"{_percent(u.characters / c.characters)} of {c.sample}'s" for c, u in held]
        shares[0] += " characters"
        parts.append(f"{name} turns {', '.join(shares)} into {held[0][1].token}")
    if not parts:
        return ""
    return "; ".join(parts) + " (bytes per token counts that text as encoded)"


def left_out_note(report: Report) -> str:
    """Which samples each tokenizer could not encode and why ("" if none), e.g. "run cannot
    encode Chinese and Emoji (their cells are left out): in Chinese, the pattern ... does not
    match '好' ...": the first sample's reason, which says what to do, stands for the rest
    (of one sample: "run cannot encode Chinese (its cell is left out): the pattern ...")."""
    parts = []
    for name in report.tokenizers:
        held = [x for x in report.left_out if x.tokenizer == name]
        if not held:
            continue
        first = held[0]
        if len(held) == 1:
            said = f"{first.sample} (its cell is left out): "
        else:
            listed = ", ".join(x.sample for x in held[:-1]) + " and " + held[-1].sample
            said = f"{listed} (their cells are left out): in {first.sample}, "
        parts.append(f"{name} cannot encode {said}{first.reason}")
    return "; ".join(parts)


def report_csv(report: Report) -> str:
    """The report as CSV, one row per sample and tokenizer (:data:`CSV_COLUMNS`), in the
    table's order: a pair left out has empty counts and, under ``left_out``, why (empty for
    the others), so that every pair is accounted for."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    cells = {(c.sample, c.tokenizer): c for c in report.cells}
    why = {(x.sample, x.tokenizer): x.reason for x in report.left_out}
    for sample in report.samples:
        for name in report.tokenizers:
            c = cells.get((sample, name))
            if c is None:
                writer.writerow([sample, name, "", "", "", "", why.get((sample, name), "")])
                continue
            bpt = f"{c.bytes_per_token:.4f}"
            writer.writerow([sample, name, c.bytes, c.characters, c.tokens, bpt, ""])
    return out.getvalue()


# ------------------------------------------------------------------- samples
def bundled_samples() -> list[Sample]:
    """The short texts shipped in ``resources/samples`` (see its README for their sources)."""
    folder = resources.files("bpe_studio.resources") / "samples"
    return [
        Sample(name, (folder / file).read_text(encoding="utf-8")) for name, file in SAMPLE_FILES
    ]


def corpus_sample(
    paths: str | os.PathLike[str] | Sequence[str],
    limit: int = CORPUS_LIMIT,
    *,
    text_field: str = DEFAULT_TEXT_FIELD,
    label: str | None = None,
    records: str | None = None,
) -> Sample:
    """About the first ``limit`` bytes of the corpus ``paths`` names, however it is kept (a
    plain or compressed file, records' ``text_field``, several files: ``corpus.head``), cut
    after a line break (or, with none, back to a whole character), named "Corpus: LABEL"
    (by default, after its first file); ``records`` as for ``train_bpe``. Invalid UTF-8
    raises ValueError naming the file, the byte offset and the line, as training does."""
    from ..corpus.head import corpus_head  # subtle: lazily; it imports the process pools

    given = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else list(paths)
    name = label if label is not None else Path(given[0]).name
    return Sample(f"Corpus: {name}", corpus_head(given, limit, text_field, records))
