"""cl100k's and o200k's pre-tokenization, on the standard library's ``re`` where it can.

What it does: :func:`findall_for` gives, for a :class:`~bpe_studio.core.pattern.Pretokenizer`,
a function returning exactly its ``findall(text)``. For cl100k and o200k that function runs
the same pattern written for ``re`` (two to three times faster than the ``regex`` module on
these patterns): ``re`` has no ``\\p{..}``, so each Unicode class is spelt out as ranges taken
from the ``regex`` module itself at first use (the Unicode data cannot disagree), and the
case-insensitive contractions (``'s``, ``'LL``, ...) as the characters ``regex`` folds to each
letter. As for GPT-2's fast pattern (``pattern``), the classes cover the Basic Multilingual
Plane only; stretches of text around a character above U+FFFF go to ``regex``, cut out at the
pattern's line cuts (``boundaries``). Pure-ASCII text uses a pattern with ASCII classes, built
in microseconds. What it leaves out: GPT-2's pattern (``pattern``), custom regexes (they run
on ``regex`` as they are), special tokens (``specials``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from functools import cache

import regex

from .boundaries import cut_rules
from .pattern import Pretokenizer, pretokenizer

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
# Shorter non-ASCII texts use `regex` until the BMP pattern has been built (tens of ms once).
_FAST_MIN = 200_000
# Texts with more than one character above U+FFFF in this many go to `regex` whole.
_ASTRAL_SPARSE = 1000

# The Unicode classes the two patterns use, as `regex` spells them.
_CLASSES = {
    "L": r"\p{L}",
    "N": r"\p{N}",
    "S": r"\s",
    "UP": r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",  # o200k: a word's leading capitals
    "LO": r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",  # o200k: a word's lower-case rest
}
_FOLDED = "sdmtlver"  # the letters of the case-insensitive contractions


def _class_body(chars: str, regex_class: str) -> str:
    """An ``re`` character-class body listing the characters of ``chars`` that
    ``regex_class`` matches: one range per run of consecutive code points."""
    body: list[str] = []
    for m in regex.finditer(f"{regex_class}+", chars):
        run = m.group()
        # ``chars`` is a contiguous range of code points, so each run is one range.
        first, last = re.escape(run[0]), re.escape(run[-1])
        body.append(first if len(run) == 1 else f"{first}-{last}")
    return "".join(body)


def _classes(chars: str) -> dict[str, str]:
    bodies = {key: _class_body(chars, cls) for key, cls in _CLASSES.items()}
    for letter in _FOLDED:
        bodies[letter] = _class_body(chars, f"(?i:{letter})")
    return bodies


def _cl100k(c: dict[str, str]) -> str:
    s, n, letters = c["S"], c["N"], c["L"]
    return (
        rf"'(?:[{c['s']}{c['d']}{c['m']}{c['t']}]|[{c['l']}][{c['l']}]|[{c['v']}][{c['e']}]"
        rf"|[{c['r']}][{c['e']}])"
        rf"|[^\r\n{letters}{n}]?+[{letters}]++|[{n}]{{1,3}}+| ?[^{s}{letters}{n}]++[\r\n]*+"
        rf"|[{s}]++$|[{s}]*[\r\n]|[{s}]+(?![^{s}])|[{s}]"
    )


def _o200k(c: dict[str, str]) -> str:
    s, n, letters = c["S"], c["N"], c["L"]
    contraction = (
        rf"(?:'[{c['s']}]|'[{c['t']}]|'[{c['r']}][{c['e']}]|'[{c['v']}][{c['e']}]|'[{c['m']}]"
        rf"|'[{c['l']}][{c['l']}]|'[{c['d']}])?"
    )
    first = rf"[^\r\n{letters}{n}]?"
    return "|".join(
        [
            rf"{first}[{c['UP']}]*[{c['LO']}]+{contraction}",
            rf"{first}[{c['UP']}]+[{c['LO']}]*{contraction}",
            rf"[{n}]{{1,3}}",
            rf" ?[^{s}{letters}{n}]+[\r\n/]*",
            rf"[{s}]*[\r\n]+",
            rf"[{s}]+(?![^{s}])",
            rf"[{s}]+",
        ]
    )


_BUILDERS: dict[str, Callable[[dict[str, str]], str]] = {"cl100k": _cl100k, "o200k": _o200k}


@cache
def _ascii_regex(name: str) -> re.Pattern[str]:
    return re.compile(_BUILDERS[name](_classes("".join(map(chr, range(0x80))))))


@cache
def _bmp_regex(name: str) -> re.Pattern[str]:
    return re.compile(_BUILDERS[name](_classes("".join(map(chr, range(0x10000))))))


@cache
def _line_cut(name: str) -> re.Pattern[str]:
    """A line cut of the pattern (``boundaries``): a line break between two ASCII
    characters of the rule's set; the cut is just after the break."""
    allowed = "".join(re.escape(chr(b)) for b in sorted(cut_rules(name).line_next))
    return re.compile(rf"(?<=[{allowed}])\n(?=[{allowed}])")


def _cut_before(text: str, i: int, floor: int, name: str) -> int:
    """The last line cut at or before ``i`` (and after ``floor``), else ``floor``."""
    cut = _line_cut(name)
    p = i
    while p > floor:
        p = text.rfind("\n", floor, p)
        if p <= floor:
            return floor
        if cut.match(text, p):
            return p + 1
    return floor


def _cut_after(text: str, i: int, name: str) -> int:
    """The first line cut after ``i``, else the end of the text."""
    m = _line_cut(name).search(text, i + 1)
    return m.end() if m else len(text)


def _findall(name: str, slow: regex.Pattern[str], text: str) -> list[str]:
    if text.isascii():
        return _ascii_regex(name).findall(text)
    if len(text) < _FAST_MIN and _bmp_regex.cache_info().currsize == 0:
        return slow.findall(text)  # building the BMP pattern would cost more
    fast = _bmp_regex(name)
    m = _ASTRAL.search(text)
    if m is None:
        return fast.findall(text)
    if len(_ASTRAL.findall(text, m.start())) * _ASTRAL_SPARSE > len(text):
        return slow.findall(text)  # astral characters everywhere: nothing left to win
    pieces: list[str] = []
    pos = 0
    while m is not None:
        a = _cut_before(text, m.start(), pos, name)
        b = _cut_after(text, m.start(), name)
        pieces += fast.findall(text, pos, a)
        pieces += slow.findall(text, a, b)
        pos = b
        m = _ASTRAL.search(text, b)
    pieces += fast.findall(text, pos)
    return pieces


def fast_findall(name: str, text: str) -> list[str]:
    """``pretokenizer(name).findall(text)`` for ``name`` "cl100k" or "o200k"."""
    if not _FAST:
        return pretokenizer(name).compiled.findall(text)
    return _findall(name, pretokenizer(name).compiled, text)


def findall_cl100k(text: str) -> list[str]:
    """``pretokenizer("cl100k").findall(text)``, faster."""
    return _findall("cl100k", pretokenizer("cl100k").compiled, text)


def findall_o200k(text: str) -> list[str]:
    """``pretokenizer("o200k").findall(text)``, faster."""
    return _findall("o200k", pretokenizer("o200k").compiled, text)


def prepare(name: str | None) -> None:
    """Build the BMP pattern of ``name`` now rather than at the first long non-ASCII text."""
    if name in _BUILDERS and _FAST:
        _bmp_regex(name)


# Possessive quantifiers, which cl100k's pattern uses, came to `re` in Python 3.11.
_FAST = sys.version_info >= (3, 11)
_FAST_FINDALL: dict[str, Callable[[str], list[str]]] = {
    "cl100k": findall_cl100k,
    "o200k": findall_o200k,
}


def findall_for(pre: Pretokenizer) -> Callable[[str], list[str]]:
    """The fastest function giving ``pre.findall(text)``: a module-level function (so that
    it pickles by name) for cl100k and o200k, else ``pre.findall`` itself."""
    if _FAST and pre.name in _FAST_FINDALL:
        return _FAST_FINDALL[pre.name]
    return pre.findall
