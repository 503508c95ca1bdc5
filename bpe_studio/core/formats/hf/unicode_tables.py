"""The characters whose normalization Hugging Face ``tokenizers`` does not know, though this
Python's ``unicodedata`` does.

``tokenizers`` normalizes (NFC, NFD, NFKC, NFKD) with the unicode-normalization-alignments
crate, whose tables are Unicode 9.0's; a Python's are newer, and which characters they add
depends on its version (3.10 has Unicode 13.0, 3.11 14.0, 3.13 15.1). To ``tokenizers`` such
a character is a starter that never decomposes or composes, so ``normalizers`` normalizes the
text around it (``lacked``). The set is read from both libraries at first use rather than
written down, so it holds for any Python and any ``tokenizers`` release.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import cache
from typing import Any

# Marks of combining classes 1, 220 and 230, in every Unicode version: a mark whose class
# tokenizers does not know (a starter there, class 0) is ordered differently beside one of a
# lower or a higher class.
REFERENCE_MARKS = ("\u0334", "\u0316", "\u0301")
# A starter that decomposes and composes with nothing: probes joined by it are normalized as
# if apart, in one call.
_SEPARATOR = "\n"


def _apart(normalizer: Any, probes: list[str]) -> list[str]:
    """Each probe normalized by ``normalizer`` (a ``tokenizers`` normalizer), in one call."""
    out = normalizer.normalize_str(_SEPARATOR.join(probes)).split(_SEPARATOR)
    if len(out) != len(probes):
        raise RuntimeError("tokenizers' normalizer changed the probes' separator")
    return out


@cache
def characters() -> tuple[list[str], list[str], list[str]]:
    """This Python's characters with a decomposition, those with a combining class, and the
    two-character sequences NFC composes into one (a primary composite's decomposition): the
    only characters normalization changes, or that change what is beside them."""
    decomposed: list[str] = []
    marks: list[str] = []
    pairs: list[str] = []
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        ch = chr(c)
        if unicodedata.combining(ch):
            marks.append(ch)
        mapping = unicodedata.decomposition(ch)
        if not mapping:
            continue
        decomposed.append(ch)
        parts = mapping.split()
        if len(parts) == 2 and not mapping.startswith("<"):
            pair = chr(int(parts[0], 16)) + chr(int(parts[1], 16))
            if unicodedata.normalize("NFC", pair) == ch:
                pairs.append(pair)
    return decomposed, marks, pairs


def _differ(normalizer: Any, form: str, probes: list[str]) -> Iterable[int]:
    """The indices of the probes ``normalizer`` gives otherwise than this Python's ``form``."""
    for i, (probe, got) in enumerate(zip(probes, _apart(normalizer, probes))):
        if got != unicodedata.normalize(form, probe):  # type: ignore[arg-type]
            yield i


@cache
def lacked() -> frozenset[int]:
    """The code points ``tokenizers``' tables give no decomposition, no combining class and
    no composition, where this Python's give one: a decomposition or a combining class
    ``tokenizers`` does not know, or a part of a composition it does not make (those of its
    parts that take part in none it makes and have no class there)."""
    import tokenizers.normalizers as nz

    decomposed, marks, pairs = characters()
    unknown: set[str] = set()  # a decomposition tokenizers does not know
    for normalizer, form in ((nz.NFD(), "NFD"), (nz.NFKD(), "NFKD")):
        unknown.update(decomposed[i] for i in _differ(normalizer, form, decomposed))
    sides = [f"a{m}{r}" for m in marks for r in REFERENCE_MARKS]
    half = len(sides)
    sides += [f"a{r}{m}" for m in marks for r in REFERENCE_MARKS]
    classless = {marks[i % half // len(REFERENCE_MARKS)] for i in _differ(nz.NFD(), "NFD", sides)}
    missed = set(_differ(nz.NFC(), "NFC", pairs))
    known = {ch for i, pair in enumerate(pairs) if i not in missed for ch in pair}
    known.update(m for m in marks if m not in classless)
    known.update(d for d in decomposed if d not in unknown)
    out = {ord(ch) for ch in unknown | classless}
    for i in missed:
        # subtle: one of a missed composition's parts is new to tokenizers (Unicode does not
        # add compositions of characters it had: it excludes them); the other may be one
        # tokenizers composes, orders or decomposes, which must stay as it is.
        out.update(ord(ch) for ch in pairs[i] if ch not in known)
    return frozenset(out)


def ranges(code_points: Iterable[int]) -> list[tuple[int, int]]:
    """``code_points`` as sorted runs, inclusive.

    >>> ranges([5, 1, 2, 3, 9])
    [(1, 3), (5, 5), (9, 9)]
    """
    runs: list[list[int]] = []
    for c in sorted(code_points):
        if runs and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return [(a, b) for a, b in runs]
