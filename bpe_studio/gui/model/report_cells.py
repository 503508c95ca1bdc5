"""The Report's cells kept from one report to the next: a paused run's step changes one column.

What it does: :class:`ReportCells` counts a sample's tokens under a tokenizer for
``core.explain.report.compute_report`` (its ``count``). A cell of a tokenizer that is not
the run's step is kept, by the tokenizer's identity and the sample's name and text, from the
last report only: a choice, a corpus or a tokenizer changed since leaves it unused, and it
goes. A cell of the run's tokenizer at a step (``Choice.run``) is counted from the sample's
spans under the run's whole tokenizer, encoded once per sample and run's source
(``RunSpans.tokens_at``), else encoded with the step's tokenizer.
Why: a paused run's replay or a drag of its timeline moves the step every frame, and the
Report encoded every sample with every tokenizer (the corpus's first megabyte four times) at
each, though only the run's column changes.
What it leaves out: the report itself (``core.explain.report``) and its display
(``views/report``). One thread uses it: the page's job (``jobs.latest``, one at a time).
"""

from __future__ import annotations

from collections.abc import Callable

from ...core.encode.foreign import AnyTokenizer
from ...core.explain.report import Sample, Unknown, count_tokens
from ...core.pretokenization.pretokenizer import UncoveredText
from .run_spans import RunSpans
from .tokenizer_source import TokenizerSource

Counted = tuple[int, Unknown | None]


class ReportCells:
    """Cells of the last report, and the run's spans by sample (see the module docstring)."""

    def __init__(self) -> None:
        # (id of the tokenizer, sample name) -> (the tokenizer, the sample's text, what it
        # counted or why it could not), of the last report; the tokenizer is held so that
        # its id is not another's.
        self._kept: dict[tuple[int, str], tuple[AnyTokenizer, str, Counted | UncoveredText]] = {}
        self._used: dict[tuple[int, str], tuple[AnyTokenizer, str, Counted | UncoveredText]] = {}
        self._runs: dict[str, RunSpans] = {}  # by sample name

    def counter(
        self, runs: dict[int, tuple[TokenizerSource, int | None]], is_stale: Callable[[], bool]
    ) -> Callable[[Sample, AnyTokenizer], Counted | None]:
        """A ``count`` for one report: ``runs`` maps the id of each tokenizer that is a run's
        step to the run's source and the step. Call :meth:`done` once the report is made."""
        self._used = {}

        def count(sample: Sample, tokenizer: AnyTokenizer) -> Counted | None:
            run = runs.get(id(tokenizer))
            if run is not None:
                spans = self._runs.setdefault(sample.name, RunSpans())
                tokens = spans.tokens_at(run[0], sample.text, run[1], is_stale)
                if tokens is not None:
                    return tokens, None  # a byte-level BPE has no unknown token
                if is_stale():
                    return None
                return count_tokens(sample.text, tokenizer)
            key = (id(tokenizer), sample.name)
            kept = self._kept.get(key)
            if kept is None or kept[0] is not tokenizer or not _same(kept[1], sample.text):
                try:
                    found: Counted | UncoveredText = count_tokens(sample.text, tokenizer)
                except UncoveredText as e:
                    found = e
                kept = (tokenizer, sample.text, found)
            self._used[key] = kept
            if isinstance(kept[2], UncoveredText):
                raise kept[2]
            return kept[2]

        return count

    def done(self, sample_names: set[str]) -> None:
        """The report is made: only its cells are kept, and the run's spans of its samples."""
        self._kept, self._used = self._used, {}
        self._runs = {n: r for n, r in self._runs.items() if n in sample_names}


def _same(a: str, b: str) -> bool:
    # subtle: by identity first; an equal text read again (the corpus's head) in full.
    return a is b or a == b
