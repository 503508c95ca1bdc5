"""Which tokens the Vocabulary lab lists: every token, the never-used ones, the under-trained
candidates, the unreachable ones, those only one vocabulary holds, by category.

What it does: :func:`token_rows` picks, from the lab's results, the rows of a
:class:`~bpe_studio.core.explain.vocabulary.TokenTable` one choice of :class:`Show` lists
(and one category, or all): a NumPy array of row indices, with the columns the list can show
(each row's count in the corpus, whether the other vocabulary holds it). :func:`shows` says
which choices the results at hand allow; :func:`categories` which categories there are. The
run's tokenizer is listed as it stood at the step its make-up is shown at; the usage and the
overlap lists, at the step they were computed for (their own tokenizer's tokens).
What it leaves out: drawing the list (``views/lab_tokens``), sorting it (the table model).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from ...core.explain.categories import CATEGORIES
from ...core.explain.usage import absent_words
from ...core.explain.vocabulary import TokenTable
from .vocab_lab import VocabLab

SPECIAL = "special"  # the category the lists give special tokens (the core gives none)


class Show(enum.Enum):
    """What the list holds; the value is its menu entry ({a}, {b}: the tokenizers' names)."""

    ALL = "All tokens"
    USED = "Used in the corpus, most used first"
    NEVER_USED = "Never used in the corpus"
    INSIDE = "Under-trained candidates: bytes inside used tokens"
    ACROSS = "Never used: bytes only across tokens"
    ABSENT = "Never used: bytes {absent}"  # (``usage.absent_words``)
    UNREACHABLE = "Unreachable (encoding its bytes gives other tokens)"
    SHARED = "Shared with {b}"
    ONLY_THIS = "Only in {a}"
    ONLY_OTHER = "Only in {b}"

    @property
    def needs_usage(self) -> bool:
        return self in _USAGE

    @property
    def needs_overlap(self) -> bool:
        return self in _OVERLAP


_USAGE = frozenset({Show.USED, Show.NEVER_USED, Show.INSIDE, Show.ACROSS, Show.ABSENT})
_OVERLAP = frozenset({Show.SHARED, Show.ONLY_THIS, Show.ONLY_OTHER})


@dataclass(frozen=True, eq=False)
class TokenRows:
    """Rows of ``table`` (indices, in the order listed) and what the list shows of them:
    ``counts`` (per row of the table, or None without a corpus) and ``held`` (per row:
    whether the other vocabulary holds its bytes; None without a second tokenizer);
    ``other`` is true for a list of the second tokenizer's tokens."""

    table: TokenTable
    rows: np.ndarray
    counts: np.ndarray | None
    held: np.ndarray | None
    other: bool = False
    # The run's step the list is of (None: not the run's tokenizer, or all of it): a usage or
    # overlap list is of the step they were worked out for, which may not be the make-up's.
    step: int | None = None
    # The step the corpus's use was worked out at, when its counts were left out of a list of
    # another step (a scale audit: they were shown as that step's, and exported so).
    counts_of: int | None = None

    def __len__(self) -> int:
        return len(self.rows)


def shows(lab: VocabLab) -> list[Show]:
    """The choices the results at hand allow, in menu order."""
    out = [Show.ALL]
    if lab.usage is not None:
        out += [Show.USED, Show.NEVER_USED, Show.INSIDE]
        if lab.usage.usage.across is not None:
            out += [Show.ACROSS, Show.ABSENT]
    makeup = lab.makeup
    if makeup is not None and makeup.table.reachable is not None:
        out.append(Show.UNREACHABLE)
    if lab.overlap is not None:
        out += [Show.SHARED, Show.ONLY_THIS, Show.ONLY_OTHER]
    return out


def show_label(show: Show, lab: VocabLab) -> str:
    a = lab.makeup.ref.label if lab.makeup is not None else "this one"
    b = lab.overlap.other.label if lab.overlap is not None else "the other"
    absent = absent_words(lab.usage.usage if lab.usage is not None else None)
    return show.value.format(a=a, b=b, absent=absent)


def categories(table: TokenTable, rows: np.ndarray) -> list[str]:
    """The categories of ``rows`` (the largest first), special tokens last."""
    ordinary = rows[~table.special[rows]]
    counts = np.bincount(table.category[ordinary], minlength=len(CATEGORIES))
    names = [CATEGORIES[c] for c in np.argsort(-counts, kind="stable").tolist() if counts[c]]
    if np.count_nonzero(table.special[rows]):
        names.append(SPECIAL)
    return names


def _step_mask(table: TokenTable, merges: int | None) -> np.ndarray:
    """The rows present after ``merges`` merges (all when None or the table has no steps)."""
    if merges is None or table.rank is None:
        return np.ones(len(table), dtype=bool)
    return table.present(min(merges, table.merges))


def _ids_mask(table: TokenTable, ids: tuple[int, ...] | None) -> np.ndarray:
    mask = np.zeros(len(table), dtype=bool)
    if ids:
        wanted = np.asarray(ids, dtype=np.int64)
        rows = np.searchsorted(table.ids, wanted)
        inside = rows < len(table)
        rows, wanted = rows[inside], wanted[inside]
        mask[rows[table.ids[rows] == wanted]] = True
    return mask


def _categories_mask(table: TokenTable, names: tuple[str, ...]) -> np.ndarray:
    """The rows of any of the categories ``names`` (SPECIAL: the special tokens)."""
    codes = [CATEGORIES.index(name) for name in names if name != SPECIAL]
    mask = ~table.special & np.isin(table.category, codes)
    return mask | table.special if SPECIAL in names else mask


def token_rows(
    lab: VocabLab, show: Show, category: str | tuple[str, ...] | None = None
) -> TokenRows | None:
    """The rows ``show`` lists (of ``category``, or of each of several: the categories one
    bar of a chart stands for; None: all), or None when the results it needs are not at
    hand."""
    makeup, usage, overlap = lab.makeup, lab.usage, lab.overlap
    if makeup is None or (show.needs_usage and usage is None):
        return None
    if show.needs_overlap and overlap is None:
        return None
    table = makeup.table
    other = False
    held = None
    shown = lab.shown_makeup()
    step = None if shown is None else shown[1]
    counts = usage.usage.row_counts(table) if usage is not None else None
    if overlap is not None:
        held = overlap.shared_rows if len(overlap.shared_rows) == len(table) else None
    if show is Show.ONLY_OTHER:
        assert overlap is not None
        table, other = overlap.other_table, True
        mask = ~table.special & ~overlap.other_shared_rows
        # No "In <other>" column: these are the other's own tokens, none of them held by
        # the first (an audit: the column, headed with the list's own tokenizer, was empty).
        counts, held = None, None
    elif show.needs_overlap:
        assert overlap is not None and held is not None
        step = overlap.ref.merges
        mask = _step_mask(table, step) & ~table.special
        mask &= held if show is Show.SHARED else ~held
    elif show.needs_usage:
        assert usage is not None and counts is not None
        step = usage.ref.merges
        present = _step_mask(table, step) & ~table.special
        u = usage.usage
        if show is Show.USED:
            mask = present & (counts > 0)
        elif show is Show.NEVER_USED:
            mask = present & (counts == 0)
        else:
            ids = {Show.INSIDE: u.inside, Show.ACROSS: u.across, Show.ABSENT: u.absent}[show]
            mask = present & _ids_mask(table, ids)
    else:
        mask = _step_mask(table, step)
        if show is Show.UNREACHABLE:
            assert table.reachable is not None
            mask &= ~table.special & ~table.reachable
    if category is not None:
        mask &= _categories_mask(table, (category,) if isinstance(category, str) else category)
    rows = np.flatnonzero(mask)
    if show is Show.USED and counts is not None:
        rows = rows[np.lexsort((table.ids[rows], -counts[rows]))]
    if table.rank is None or other:
        step = None  # no steps: the whole tokenizer
    counts_of = None
    if counts is not None and usage is not None and step is not None:
        # A loaded tokenizer's use is of all its merges (its ref names no step).
        counted_at = usage.ref.merges if usage.ref.merges is not None else table.merges
        if step != counted_at:
            counts, counts_of = None, counted_at
    return TokenRows(table, rows, counts, held, other, step, counts_of)
