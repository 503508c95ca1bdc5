"""The named patterns on the standard library's ``re``: the same pre-tokens as the ``regex``
module gives, faster.

What it does: :func:`findall` gives ``named_regex(name).findall(text)`` for "gpt2", "cl100k"
and "o200k" exactly, but runs ``re`` wherever it can (faster than the ``regex`` module on
these patterns: docs/patterns.md, "Measured"). ``re`` has no ``\\p{..}``, so each Unicode class
is spelt out as ranges, and cl100k's case-insensitive contractions (``'s``, ``'LL``, ...) as
the characters that fold to each letter, all taken from the ``regex`` module itself at first
use (the Unicode data cannot disagree).

- GPT-2: one pattern whose classes cover the Basic Multilingual Plane (``re`` tests those
  against a bitmap; astral ranges would make it slower than ``regex``); the rare stretches of
  text around a character above U+FFFF (an emoji) go to ``regex``, cut out at GPT-2's space
  cuts (``boundaries``). Pure-ASCII text uses ASCII classes.
- cl100k and o200k: only the characters a text holds matter, so the classes are built over the
  text's own alphabet (ASCII plus its other characters, a range per run of alphabet characters
  in the class; code points between two that the text does not hold fall inside the range
  either way). The last pattern built is kept and serves every text whose alphabet it covers.
  Short non-ASCII texts that the kept pattern does not cover run on ``regex``.

:func:`findall_function` gives a module-level function per name (it pickles by name),
:func:`splitter` one built for a long text and every stretch of it, :func:`prepare` builds a
name's patterns ahead (worker processes forked afterwards start with them). What it leaves out:
custom regexes (they run on ``regex`` as they are, in ``pretokenizer``), special tokens
(``specials``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from functools import cache

import regex

from .boundaries import space_cut_after, space_cut_before
from .names import CAPITALS, named_regex

# GPT-2's pattern

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
# Shorter non-ASCII texts use `regex` until the fast pattern has been built: building it once
# costs what `re` wins back over about this many characters (docs/patterns.md, "Thresholds
# and the figures behind them").
_GPT2_FAST_MIN = 300_000
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


def findall_gpt2(text: str) -> list[str]:
    """GPT-2's pre-tokens of ``text``, on ``re`` wherever it can (see the module docstring)."""
    if text.isascii():
        return _ASCII_REGEX.findall(text)
    if len(text) < _GPT2_FAST_MIN and _bmp_regex.cache_info().currsize == 0:
        return named_regex("gpt2").findall(text)  # building the fast pattern would cost more
    fast = _bmp_regex()
    m = _ASTRAL.search(text)
    if m is None:
        return fast.findall(text)
    if len(_ASTRAL.findall(text, m.start())) * _ASTRAL_SPARSE > len(text):
        return named_regex("gpt2").findall(text)  # emoji everywhere: nothing left to win
    pieces: list[str] = []
    pos = 0
    while m is not None:
        a = space_cut_before(text, m.start(), pos)
        b = space_cut_after(text, m.start())
        pieces += fast.findall(text, pos, a)
        pieces += named_regex("gpt2").findall(text, a, b)
        pos = b
        m = _ASTRAL.search(text, b)
    pieces += fast.findall(text, pos)
    return pieces


# cl100k's and o200k's patterns

# Shorter non-ASCII texts that the kept pattern does not cover use `regex`: building a
# pattern would cost more than it wins.
_ALPHABET_FAST_MIN = 200_000
# A new pattern covers the kept one's alphabet too while the two together have at most this
# many characters (so that the chunks of one corpus soon share one pattern); past it, only
# its own text's.
_UNION_MAX = 20_000
_ASCII = "".join(map(chr, range(0x80)))
_BMP = "".join(map(chr, range(0x10000)))

# The Unicode classes the two patterns use, as `regex` spells them.
_CLASSES = {
    "L": r"\p{L}",
    "N": r"\p{N}",
    "S": r"\s",
    "UP": CAPITALS,  # o200k: a word's leading capitals
    "LO": r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",  # o200k: a word's lower-case rest
    "M": r"\p{M}",  # o200k: whether the alphabet has marks (see _o200k)
}
_FOLDED = "sdmtlver"  # the letters of the case-insensitive contractions


def _class_body(alphabet: str, regex_class: str) -> str:
    """An ``re`` character-class body matching, among the characters of ``alphabet`` (in
    code point order), exactly those that ``regex_class`` matches: one range per run of
    consecutive alphabet characters in the class."""
    body: list[str] = []
    for m in regex.finditer(f"{regex_class}+", alphabet):
        run = m.group()
        # subtle: the range also spans the code points between the run's characters that
        # are not in the alphabet; a text of this alphabet holds none of them.
        first, last = re.escape(run[0]), re.escape(run[-1])
        body.append(first if len(run) == 1 else f"{first}-{last}")
    return "".join(body)


def _classes(alphabet: str) -> dict[str, str]:
    bodies = {key: _class_body(alphabet, cls) for key, cls in _CLASSES.items()}
    for letter in _FOLDED:
        bodies[letter] = _class_body(alphabet, f"(?i:{letter})")
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
    """o200k's pattern over the classes ``c``, written so that ``re`` backtracks less: the
    same matches, by the reasoning in the comments."""
    s, n, letters = c["S"], c["N"], c["L"]
    # The contractions all start with "'" and differ in the letter after it, so at most one
    # can match: testing the "'" once first changes nothing.
    contraction = (
        rf"(?:'(?:[{c['s']}]|[{c['t']}]|[{c['r']}][{c['e']}]|[{c['v']}][{c['e']}]|[{c['m']}]"
        rf"|[{c['l']}][{c['l']}]|[{c['d']}]))?"
    )
    # subtle: a run made possessive ("++", "*+", "{1,3}+") gives nothing back; that changes
    # no match where only optional parts follow it inside its alternative (they cannot fail,
    # so a match never needs a shorter run). The one run that must give back is the leading
    # capitals of the first word form: a character in both classes (Lm, Lo) may be taken as a
    # capital and then be needed as the lower-case rest.
    words = [rf"[{c['UP']}]*[{c['LO']}]++", rf"[{c['UP']}]++[{c['LO']}]*+"]
    if c["M"]:
        # A mark is neither a letter nor a number, so it can be the optional first character,
        # and it is in both word classes: a word form may have to start on it instead.
        first = rf"[^\r\n{letters}{n}]?"
        word_forms = [f"{first}{word}{contraction}" for word in words]
    else:
        # Without marks the optional first character can never begin a word form, so it is
        # taken possessively, and the two forms share it (the order in which `re` then tries
        # "first character or not" and "which form" cannot change the match).
        first = rf"[^\r\n{letters}{n}]?+"
        word_forms = [f"{first}(?:{words[0]}|{words[1]}){contraction}"]
    return "|".join(
        [
            *word_forms,
            rf"[{n}]{{1,3}}+",
            rf" ?[^{s}{letters}{n}]++[\r\n/]*+",
            rf"[{s}]*[\r\n]+",
            rf"[{s}]+(?![^{s}])",
            rf"[{s}]+",
        ]
    )


_BUILDERS: dict[str, Callable[[dict[str, str]], str]] = {"cl100k": _cl100k, "o200k": _o200k}


def _build(name: str, alphabet: str) -> re.Pattern[str]:
    """``name``'s pattern for texts of the characters of ``alphabet`` (in code point
    order)."""
    return re.compile(_BUILDERS[name](_classes(alphabet)))


@cache
def _ascii_regex(name: str) -> re.Pattern[str]:
    return _build(name, _ASCII)


# name -> (the characters other than ASCII that the kept pattern covers, the pattern).
_kept: dict[str, tuple[frozenset[str], re.Pattern[str]]] = {}
# name -> the same for all of the Basic Multilingual Plane, where ``prepare`` kept a narrower
# pattern first (o200k: the plane without its combining marks, see ``prepare``).
_plane: dict[str, tuple[frozenset[str], re.Pattern[str]]] = {}


def _non_ascii(text: str) -> frozenset[str]:
    """The distinct characters of ``text`` above U+007F."""
    import numpy as np  # subtle: lazily, so importing the core starts no BLAS threads

    # subtle: "surrogatepass" lets a lone surrogate through as its own code point; the
    # patterns treat it as `regex` does, as a character in none of the classes.
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    high = points[points >= 0x80]
    if len(high) <= 4096:
        return frozenset(map(chr, high.tolist()))
    seen = np.zeros(0x110000, dtype=bool)
    seen[high] = True
    return frozenset(map(chr, np.flatnonzero(seen).tolist()))


def _covering(name: str, chars: frozenset[str], build: bool) -> re.Pattern[str] | None:
    """A pattern for texts whose characters above ASCII are among ``chars``: the kept one
    if it covers them, else (when ``build``) a new one, kept from then on."""
    kept = _kept.get(name)
    if kept is not None and chars <= kept[0]:
        return kept[1]
    plane = _plane.get(name)
    if plane is not None and chars <= plane[0]:
        return plane[1]
    if not build:
        return None
    if kept is not None and len(kept[0]) + len(chars) <= _UNION_MAX:
        chars = chars | kept[0]
    compiled = _build(name, _ASCII + "".join(sorted(chars)))
    _kept[name] = (chars, compiled)
    return compiled


def _findall(name: str, slow: regex.Pattern[str], text: str) -> list[str]:
    if text.isascii():
        return _ascii_regex(name).findall(text)
    fast = _covering(name, _non_ascii(text), len(text) >= _ALPHABET_FAST_MIN)
    return slow.findall(text) if fast is None else fast.findall(text)


def splitter(name: str | None, text: str) -> Callable[[str], list[str]] | None:
    """For ``name`` "cl100k" or "o200k": a function giving ``pretokenizer(name).findall``
    of ``text`` and of every stretch of it, built for ``text``'s characters (however short
    it is); None for other names."""
    if not _FAST or name not in _BUILDERS:
        return None
    if text.isascii():
        return _ascii_regex(name).findall
    pattern = _covering(name, _non_ascii(text), True)
    assert pattern is not None  # built when not kept
    return pattern.findall


def fast_findall(name: str, text: str) -> list[str]:
    """``pretokenizer(name).findall(text)`` for ``name`` "cl100k" or "o200k"."""
    if not _FAST:
        return named_regex(name).findall(text)
    return _findall(name, named_regex(name), text)


def findall_cl100k(text: str) -> list[str]:
    """``pretokenizer("cl100k").findall(text)``, faster."""
    return _findall("cl100k", named_regex("cl100k"), text)


def findall_o200k(text: str) -> list[str]:
    """``pretokenizer("o200k").findall(text)``, faster."""
    return _findall("o200k", named_regex("o200k"), text)


# Possessive quantifiers, which cl100k's pattern uses, came to `re` in Python 3.11.
_FAST = sys.version_info >= (3, 11)
_FAST_FINDALL: dict[str, Callable[[str], list[str]]] = {
    "cl100k": findall_cl100k,
    "o200k": findall_o200k,
}


def findall(name: str, text: str) -> list[str]:
    """``named_regex(name).findall(text)`` for a name in ``PATTERNS``."""
    if name == "gpt2":
        return findall_gpt2(text)
    return fast_findall(name, text)


def findall_function(name: str | None) -> Callable[[str], list[str]] | None:
    """A module-level function giving ``findall(name, text)`` for a named pattern, else None."""
    if name == "gpt2":
        return findall_gpt2
    if _FAST and name in _FAST_FINDALL:
        return _FAST_FINDALL[name]
    return None


def prepare(name: str | None) -> None:
    """Build ``name``'s patterns for all of the Basic Multilingual Plane now rather than at
    the first long non-ASCII text (worker processes forked afterwards start with them)."""
    if name == "gpt2":
        _bmp_regex()
    elif name is not None:
        _prepare_plane(name)


def _prepare_plane(name: str) -> None:
    """Build and keep the pattern of ``name`` for all of the Basic Multilingual Plane now
    (worker processes forked afterwards start with it), unless one is kept already.

    subtle: o200k's pattern takes a slower form when its alphabet holds combining marks
    (``_o200k``), and every text would meet the plane's. So for o200k the plane without its
    marks is kept as well and tried first: most texts hold no mark and get the faster form;
    a text with one gets the whole plane's."""
    if name not in _BUILDERS or not _FAST or name in _kept:
        return
    plane = (frozenset(_BMP[0x80:]), _build(name, _BMP))
    if name != "o200k":
        _kept[name] = plane
        return
    unmarked = regex.sub(r"\p{M}", "", _BMP)
    _plane[name] = plane
    _kept[name] = (frozenset(unmarked[0x80:]), _build(name, unmarked))
