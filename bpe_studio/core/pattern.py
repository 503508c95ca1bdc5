"""Pre-tokenization patterns: the named ones (gpt2, cl100k, o200k), custom regexes, and a
faster way to apply GPT-2's.

What it does: :data:`PATTERNS` is the one registry of named patterns; :func:`pretokenizer`
turns a name or a regex string into a :class:`Pretokenizer` (compiled once, cached), whose
``findall`` gives the pre-tokens of a text. A regex that does not compile raises ValueError
quoting it. GPT-2's ``findall`` returns exactly ``GPT2_REGEX.findall(text)``, but runs the
standard library's ``re`` (about twice as fast as the ``regex`` module here) wherever it can:
``re`` has no ``\\p{L}``, so the same pattern is written with explicit character classes taken
from the ``regex`` module itself at first use — the Unicode data cannot disagree. The classes
cover the Basic Multilingual Plane only (``re`` tests those against a bitmap; astral ranges
would make it slower than ``regex``); the rare stretches of text around a character above
U+FFFF (an emoji) go to ``regex``, cut out at GPT-2's space cuts (``boundaries``). cl100k's
and o200k's ``findall`` run the same way in ``fast_split``; custom patterns run on ``regex``
as they are. Names are also read in the spellings users bring from tiktoken and the models
(``cl100k_base``, ``GPT-4``, ...: :data:`ALIASES`); a bare word close to one that is none of
them is refused rather than taken as a regex that matches only itself. A pre-tokenizer never
drops text: a custom regex that leaves a character unmatched raises :class:`UncoveredText`
naming it (the named patterns match every character by construction, so they are not
checked). What it leaves out: special tokens (``specials``) and where each pattern may be
cut (``boundaries``).
"""

from __future__ import annotations

import difflib
import re
import shlex
import sys
from dataclasses import dataclass, field
from functools import cache, lru_cache

import regex

from .boundaries import space_cut_after, space_cut_before

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_REGEX = regex.compile(GPT2_PATTERN)
# GPT-2's pattern as tiktoken publishes it (r50k_base): possessive runs and "\s++$|...|\s" for
# the whitespace alternatives. It splits every text as GPT2_PATTERN does (a whitespace run
# ends at the end of the text or before a non-space, and both forms leave its last character
# on its own in the second case; tests/core/test_patterns.py checks it), so it is read as the
# name "gpt2", and written where tiktoken users expect its own spelling.
R50K_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)

# The named patterns: GPT-2's, and the regexes tiktoken publishes for cl100k_base (GPT-4) and
# o200k_base (GPT-4o), verbatim (tiktoken_ext/openai_public.py).
PATTERNS: dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "cl100k": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
        r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}
# The named patterns besides GPT-2's that ``fast_split`` runs on ``re``.
_FAST_NAMED = frozenset({"cl100k", "o200k"})
# Other spellings of named patterns, read as the name.
_SPELLINGS: dict[str, str] = {R50K_PATTERN: "gpt2"} | {v: k for k, v in PATTERNS.items()}

# Other names of the named patterns, keyed as :func:`alias_key` spells them: tiktoken's
# encoding names (r50k_base and p50k_base split text with GPT-2's pattern) and the models
# that use each (cl100k is GPT-4's and GPT-3.5's, o200k GPT-4o's).
ALIASES: dict[str, str] = {
    "gpt2": "gpt2",
    "r50k": "gpt2",
    "r50kbase": "gpt2",
    "p50k": "gpt2",
    "p50kbase": "gpt2",
    "p50kedit": "gpt2",
    "cl100k": "cl100k",
    "cl100kbase": "cl100k",
    "gpt4": "cl100k",
    "gpt35": "cl100k",
    "gpt35turbo": "cl100k",
    "o200k": "o200k",
    "o200kbase": "o200k",
    "gpt4o": "o200k",
}
# A name as a user types one: letters, digits, "_", "-", "." and spaces, no other regex syntax.
_BARE_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_. -]*")
NAMES_HELP = (
    f"{', '.join(PATTERNS)} (also spelt gpt-2, r50k_base, cl100k_base, gpt-4, o200k_base, gpt-4o)"
)

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


def _gpt2_findall(text: str) -> list[str]:
    """``GPT2_REGEX.findall(text)``, on ``re`` wherever it can (see the module docstring)."""
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


def alias_key(word: str) -> str:
    """``word`` with case, "-", "_", "." and spaces ignored ("GPT-4o" -> "gpt4o")."""
    return re.sub(r"[-_. ]", "", word).lower()


def pattern_name(pattern: str) -> str:
    """The name of a named pattern given by name, by one of its regex spellings
    (``R50K_PATTERN`` is "gpt2") or by an alias (:data:`ALIASES`: "cl100k_base" and "GPT-4"
    are "cl100k"), else ``pattern`` unchanged."""
    if pattern in PATTERNS:
        return pattern
    if _BARE_WORD.fullmatch(pattern):
        return ALIASES.get(alias_key(pattern), pattern)
    return _SPELLINGS.get(pattern, pattern)


def _looks_like_a_name(pattern: str) -> bool:
    """Whether ``pattern``, a bare word that is no name, was most likely meant as one: close
    to a name or alias, or a GPT model's name."""
    if not _BARE_WORD.fullmatch(pattern):
        return False
    key = alias_key(pattern)
    return key.startswith("gpt") or bool(difflib.get_close_matches(key, ALIASES, cutoff=0.6))


class UncoveredText(ValueError):
    """A custom pattern left a character of the text unmatched: the message names it and
    where it is. Encoding or counting the rest would lose it."""


def first_uncovered(compiled: regex.Pattern[str], text: str, start: int, end: int) -> int:
    """The offset of the first character of ``text[start:end]`` that no match of
    ``compiled`` covers, or -1."""
    pos = start
    for m in compiled.finditer(text, start, end):
        if m.start() > pos:
            return pos
        pos = m.end()
    return pos if pos < end else -1


def uncovered_message(pattern: str, char: str, where: str) -> str:
    """What :class:`UncoveredText` says: ``pattern`` does not match ``char`` at ``where``."""
    return (
        f"the pattern {shlex.quote(pattern)} does not match {char!r} (U+{ord(char):04X}) "
        f"at {where}: text it leaves out would be lost. Use a regex that matches every "
        r"character (for instance ending in |\s+|\S) or a named pattern"
    )


def _uncovered(pattern: str, compiled: regex.Pattern[str], text: str) -> UncoveredText:
    at = first_uncovered(compiled, text, 0, len(text))
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    where = f"character {at} (line {line}, column {column}) of the text"
    return UncoveredText(uncovered_message(pattern, text[at], where))


def pattern_regex(pattern: str) -> str:
    """The regex string of a name in :data:`PATTERNS`, else ``pattern`` unchanged."""
    return PATTERNS.get(pattern, pattern)


@dataclass(frozen=True, eq=False)
class Pretokenizer:
    """One pattern, compiled: ``findall(text)`` gives its pre-tokens, in order.

    ``name`` is the pattern's name in :data:`PATTERNS`, or None for a custom regex; ``pattern``
    is the regex string; ``compiled`` the ``regex`` pattern (for ``finditer`` with offsets).

    >>> pretokenizer("gpt2").findall("Hello world's end")
    ['Hello', ' world', "'s", ' end']
    >>> pretokenizer("cl100k").findall("Hello 12345")
    ['Hello', ' ', '123', '45']
    """

    name: str | None
    pattern: str
    compiled: regex.Pattern[str] = field(repr=False)

    def findall(self, text: str) -> list[str]:
        if self.name == "gpt2":
            return _gpt2_findall(text)
        if self.name in _FAST_NAMED:
            # subtle: imported here, since ``fast_split`` builds on this module.
            from .fast_split import fast_findall

            return fast_findall(self.name, text)
        if self.compiled.groups:
            # findall would give the groups; a pre-token is the whole match.
            pieces = [m.group() for m in self.compiled.finditer(text)]
        else:
            pieces = self.compiled.findall(text)
        # subtle: the matches do not overlap, so they cover the text exactly when their
        # lengths add up to its length; a named pattern needs no such check.
        if sum(map(len, pieces)) != len(text):
            raise _uncovered(self.pattern, self.compiled, text)
        return pieces

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # Worker processes get the pattern string and compile (or find) their own.
        return pretokenizer, (self.pattern,)


def pretokenizer(pattern: str) -> Pretokenizer:
    """The pre-tokenizer for a pattern name ("gpt2", "cl100k", "o200k") or a regex string,
    compiled once per process.

    Raises ValueError quoting the pattern when it is neither a name nor a regex that compiles,
    or is a bare word close to a name (a misspelt name, not a regex anyone means), and
    TypeError when it is not a string. ``findall`` raises :class:`UncoveredText` for a text
    the regex does not cover.

    >>> pretokenizer("cl100k_base").name
    'cl100k'
    """
    if not isinstance(pattern, str):
        raise TypeError(f"a pattern must be a name or a regex string, got {pattern!r}")
    return _pretokenizer(pattern)


@lru_cache(maxsize=64)
def _pretokenizer(pattern: str) -> Pretokenizer:
    name = pattern_name(pattern)
    if name in PATTERNS:
        text = PATTERNS[name]
        return Pretokenizer(name, text, GPT2_REGEX if name == "gpt2" else regex.compile(text))
    if pattern == "":
        raise ValueError(f"the pattern is empty; give a name ({NAMES_HELP}) or a regex string")
    if _looks_like_a_name(pattern):
        raise ValueError(
            f"pattern {pattern!r} is not a pattern name; the names are {NAMES_HELP}, and a "
            "regex must match every character of the text"
        )
    try:
        compiled = regex.compile(pattern)
    except (regex.error, ValueError, OverflowError) as e:
        raise ValueError(f"pattern {pattern!r} is not a valid regex: {e}") from None
    return Pretokenizer(None, pattern, compiled)


def pretokenize(text: str, pattern: str = "gpt2") -> list[str]:
    """The pre-tokens of ``text`` (which holds no special token) under ``pattern`` (a name in
    :data:`PATTERNS` or a regex string), in order."""
    return pretokenizer(pattern).findall(text)
