"""The pre-tokenization stage: one interface for everything that splits text into pieces.

What it does: :class:`PreTokenizerStage` is what the rest of the core asks of a pre-tokenizer,
as ``tokenizers`` has one interface per pipeline stage: the pieces of a text (``findall``),
where each one lies in the text (``spans``, character offsets) and where a text may be cut
without changing its pieces (``cut_rules``, see ``boundaries``). Three kinds implement it: a
pattern on the regex path (``pretokenizer.Pretokenizer``), a ``tokenizer.json``'s normalizers
and pre-tokenizer steps (``formats.hf.pipeline.PipelinePretokenizer``, which lives in the
layer above and implements this one) and the compiled scanners (``scanner.Scanner``).
:func:`spans_of` gives the spans of any list of pieces that cover their text.
What it leaves out: special tokens (``specials``: split out before a stage sees the text), the
patterns themselves (``names``), merging (``encode``).
"""

from __future__ import annotations

from itertools import accumulate
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .boundaries import CutRules


@runtime_checkable
class PreTokenizerStage(Protocol):
    """Splits a text that holds no special token into pieces, never dropping a character.

    ``name``: a named pattern's name ("gpt2", "cl100k", "o200k"), else None. ``pattern``: the
    regex that describes the stage (for views and messages; a pipeline's is its last regex).
    """

    @property
    def name(self) -> str | None: ...

    @property
    def pattern(self) -> str: ...

    def findall(self, text: str) -> list[str]:
        """The pieces of ``text``, in order; joined, they are ``text``."""
        ...

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of each piece of ``findall(text)`` in ``text`` (for a stage that
        normalizes, the characters of the original text that each piece came from)."""
        ...

    @property
    def cut_rules(self) -> CutRules:
        """Where a text may be cut so that both sides split as the whole does
        (``boundaries.CutRules``; "specials only" when no rule is known)."""
        ...


def spans_of(pieces: list[str]) -> list[tuple[int, int]]:
    """The spans of ``pieces`` that follow each other in their text.

    >>> spans_of(["Hello", " world"])
    [(0, 5), (5, 11)]
    """
    ends = list(accumulate(map(len, pieces)))
    return list(zip([0, *ends[:-1]], ends))
