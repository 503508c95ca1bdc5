"""GPT-2's pre-tokenization pattern, and a faster way to apply it.

What it does: :func:`pretokenize` returns exactly ``GPT2_REGEX.findall(text)``, but runs the
standard library's ``re`` (about twice as fast as the ``regex`` module here) wherever it can:
``re`` has no ``\\p{L}``, so the same pattern is written with explicit character classes taken
from the ``regex`` module itself at first use — the Unicode data cannot disagree. The classes
cover the Basic Multilingual Plane only (``re`` tests those against a bitmap; astral ranges
would make it slower than ``regex``); the rare stretches of text around a character above
U+FFFF (an emoji) go to ``regex``, cut out at GPT-2's space cuts (``boundaries``). What it
leaves out: special tokens (``specials``).
"""

from __future__ import annotations

import re
import sys
from functools import cache

import regex

from .boundaries import space_cut_after, space_cut_before

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_REGEX = regex.compile(GPT2_PATTERN)

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
# Shorter non-ASCII texts use `regex` until the fast pattern has been built (~10 ms once,
# which `re` wins back over ~300,000 characters).
_FAST_MIN = 300_000
# Texts with more than one character above U+FFFF in this many go to `regex` whole.
_ASTRAL_SPARSE = 1000


# Possessive runs (Python 3.11+) spare `re` the bookkeeping for backtracking that these
# alternatives never need: nothing follows the run inside them.
_RUN = "++" if sys.version_info >= (3, 11) else "+"


def _pattern_with_classes(letters: str, numbers: str, spaces: str) -> re.Pattern[str]:
    # subtle: letters come first here, before the contractions, because most pre-tokens are
    # words; no text can match both (a contraction starts with "'", a word never does).
    return re.compile(
        rf""" ?[{letters}]{_RUN}|'(?:[sdmt]|ll|ve|re)| ?[{numbers}]{_RUN}"""
        rf"""| ?[^{spaces}{letters}{numbers}]{_RUN}|[{spaces}]+(?![^{spaces}])|[{spaces}]+"""
    )


# On ASCII, \p{L} is A-Za-z, \p{N} is 0-9, and the regex module's \s is these six characters
# (unlike str.isspace, it leaves out \x1c-\x1f).
_ASCII_REGEX = _pattern_with_classes("A-Za-z", "0-9", r"\t\n\x0b\x0c\r ")


def _bmp_classes() -> tuple[str, str, str]:
    """``re`` character class bodies listing the BMP characters that ``regex`` puts in
    \\p{L}, \\p{N} and \\s: one pass over the plane, one range per run of a class."""
    bmp = "".join(map(chr, range(0x10000)))
    runs: dict[str | None, list[str]] = {"L": [], "N": [], "S": []}
    for m in regex.finditer(r"(?P<L>\p{L}+)|(?P<N>\p{N}+)|(?P<S>\s+)", bmp):
        run = m.group()
        first, last = re.escape(run[0]), re.escape(run[-1])
        runs[m.lastgroup].append(first if len(run) == 1 else f"{first}-{last}")
    return "".join(runs["L"]), "".join(runs["N"]), "".join(runs["S"])


@cache
def _bmp_regex() -> re.Pattern[str]:
    return _pattern_with_classes(*_bmp_classes())


def prepare() -> None:
    """Build the fast pattern now rather than at the first long non-ASCII text."""
    _bmp_regex()


def pretokenize(text: str) -> list[str]:
    """The GPT-2 pre-tokens of ``text`` (which holds no special token), in order."""
    if text.isascii():
        return _ASCII_REGEX.findall(text)
    if len(text) < _FAST_MIN and _bmp_regex.cache_info().currsize == 0:
        return GPT2_REGEX.findall(text)  # building the fast pattern would cost more
    fast = _bmp_regex()
    m = _ASTRAL.search(text)
    if m is None:
        return fast.findall(text)
    if len(_ASTRAL.findall(text, m.start())) * _ASTRAL_SPARSE > len(text):
        return GPT2_REGEX.findall(text)  # emoji everywhere: nothing left to win
    pieces: list[str] = []
    pos = 0
    while m is not None:
        a = space_cut_before(text, m.start(), pos)
        b = space_cut_after(text, m.start())
        pieces += fast.findall(text, pos, a)
        pieces += GPT2_REGEX.findall(text, a, b)
        pos = b
        m = _ASTRAL.search(text, b)
    pieces += fast.findall(text, pos)
    return pieces
