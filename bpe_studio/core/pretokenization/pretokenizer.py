"""Pre-tokenizers: a pattern (a name or a custom regex) compiled once, splitting text into
pre-tokens without ever dropping a character.

What it does: :func:`pretokenizer` turns a name or a regex string into a :class:`Pretokenizer`
(compiled once, cached), whose ``findall`` gives the pre-tokens of a text. A regex that does
not compile raises ValueError quoting it; a bare word close to a name that is none is refused
rather than taken as a regex that matches only itself. The named patterns run on the standard
library's ``re`` wherever it gives the same pre-tokens (``re_split``); custom patterns run on
``regex`` as they are. A pre-tokenizer never drops text: a custom regex that leaves a character
unmatched raises :class:`UncoveredText` naming it (the named patterns match every character by
construction, so they are not checked). What it leaves out: the names themselves (``names``),
special tokens (``specials``) and where each pattern may be cut (``boundaries``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

import regex

from . import re_split, scan_load
from .boundaries import CutRules, steps_cut_rules
from .names import (
    NAMES_HELP,
    PATTERNS,
    looks_like_a_name,
    named_regex,
    pattern_name,
    shown_pattern,
)
from .scanner import Scanner, compiled_scanner
from .stage import spans_of

# A text of at least this many characters, under a custom regex that a compiled scanner runs
# (Llama 3's, Qwen2's), is split by it when the kernels are loaded (``scan_load.ready``; never
# loaded from here): below it, the call's fixed cost loses to the regex path. The named
# patterns keep their ``re`` forms, which handing back strings does not beat on English
# (docs/patterns.md, "Compiled scanners").
COMPILED_FINDALL_FROM = 1000


class UncoveredText(ValueError):
    """A custom pattern left a character of the text unmatched: the message names it and
    where it is. Encoding or counting the rest would lose it."""


def matches_in(
    compiled: regex.Pattern[str], text: str, start: int, end: int
) -> Iterator[tuple[int, int]]:
    """``(start, end)`` in ``text`` of each match of ``compiled`` in ``text[start:end]``,
    matched as a string of its own, as encoding and training pre-tokenize each stretch
    between special tokens. (``finditer(text, start, end)`` differs for a custom pattern
    that looks around: a lookbehind or ``\b`` would see the special token before ``start``,
    and ``^`` would not match there.)"""
    stretch = text[start:end] if start or end < len(text) else text
    for m in compiled.finditer(stretch):
        if m.end() > m.start():  # an empty match is no pre-token (``Pretokenizer.findall``)
            yield start + m.start(), start + m.end()


def first_uncovered(compiled: regex.Pattern[str], text: str, start: int, end: int) -> int:
    """The offset of the first character of ``text[start:end]`` that no match of
    ``compiled`` covers, or -1."""
    pos = start
    for s, e in matches_in(compiled, text, start, end):
        if s > pos:
            return pos
        pos = e
    return pos if pos < end else -1


def uncovered_message(pattern: str, char: str, where: str) -> str:
    """What :class:`UncoveredText` says: ``pattern`` does not match ``char`` at ``where``
    (or matches only empty text there, as a word boundary or ``x*`` do: said so, since "does
    not match" puzzles whoever sees it match)."""
    try:
        found = regex.match(pattern, char)
    except regex.error:
        found = None
    empty = found is not None and not found.group()
    how = "matches only empty text before" if empty else "does not match"
    return (
        f"the pattern {shown_pattern(pattern)} {how} {char!r} (U+{ord(char):04X}) "
        f"at {where}: text it leaves out would be lost. Use a regex that matches every "
        r"character (for instance ending in |\s+|\S) or a named pattern"
    )


def _uncovered(
    pattern: str, compiled: regex.Pattern[str], text: str, start: int = 0, end: int | None = None
) -> UncoveredText:
    at = first_uncovered(compiled, text, start, len(text) if end is None else end)
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    where = f"character {at} (line {line}, column {column}) of the text"
    return UncoveredText(uncovered_message(pattern, text[at], where))


@dataclass(frozen=True, eq=False)
class Pretokenizer:
    """One pattern, compiled: ``findall(text)`` gives its pre-tokens, in order; ``spans`` where
    they are; ``cut_rules`` where a text may be cut (the stage interface, ``stage``).

    ``name`` is the pattern's name in :data:`PATTERNS`, or None for a custom regex; ``pattern``
    is the regex string; ``compiled`` the ``regex`` pattern (for ``finditer`` with offsets).
    A long text under a custom regex that a compiled scanner runs goes to it when the kernels
    are loaded (:data:`COMPILED_FINDALL_FROM`); the pieces are the same.

    >>> pretokenizer("gpt2").findall("Hello world's end")
    ['Hello', ' world', "'s", ' end']
    >>> pretokenizer("cl100k").findall("Hello 12345")
    ['Hello', ' ', '123', '45']
    """

    name: str | None
    pattern: str
    compiled: regex.Pattern[str] = field(repr=False)

    def findall(self, text: str) -> list[str]:
        if self.name in PATTERNS:
            return re_split.findall(self.name, text)
        if len(text) >= COMPILED_FINDALL_FROM and scan_load.ready():
            scanner = _scanner_of(self.pattern)
            if scanner is not None:
                return scanner.findall(text)
        if self.compiled.groups:
            # findall would give the groups; a pre-token is the whole match.
            pieces = [m.group() for m in self.compiled.finditer(text)]
        else:
            pieces = self.compiled.findall(text)
        # subtle: a custom regex may match empty text (\p{L}*); such a match holds nothing
        # to encode, and the merge engines take only non-empty pieces.
        if "" in pieces:
            pieces = [p for p in pieces if p]
        # subtle: the matches do not overlap, so they cover the text exactly when their
        # lengths add up to its length; a named pattern needs no such check.
        if sum(map(len, pieces)) != len(text):
            raise _uncovered(self.pattern, self.compiled, text)
        return pieces

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of each pre-token of ``findall(text)``."""
        return spans_of(self.findall(text))

    def uncovered(self, text: str, start: int = 0, end: int | None = None) -> UncoveredText:
        """The error for ``text[start:end]``, matched alone, which this pattern's matches
        leave characters of out of: it names the first such character by its place in the
        whole ``text`` (a stretch between special tokens is matched alone, but the user
        knows the text)."""
        return _uncovered(self.pattern, self.compiled, text, start, end)

    @property
    def cut_rules(self) -> CutRules:
        """Where text may be cut (``boundaries.steps_cut_rules`` of the pattern: it splits
        every text alike wrapped as an Isolated Split or not)."""
        return steps_cut_rules([self.pattern])

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # Worker processes get the pattern string and compile (or find) their own.
        return pretokenizer, (self.pattern,)


@lru_cache(maxsize=64)
def _scanner_of(pattern: str) -> Scanner | None:
    return compiled_scanner(pattern)


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
        return Pretokenizer(name, PATTERNS[name], named_regex(name))
    if pattern == "":
        raise ValueError(f"the pattern is empty; give a name ({NAMES_HELP}) or a regex string")
    if looks_like_a_name(pattern):
        raise ValueError(
            f"pattern {shown_pattern(pattern)} is not a pattern name; the names are {NAMES_HELP}, "
            "and a "
            "regex must match every character of the text"
        )
    try:
        compiled = regex.compile(pattern)
    except (regex.error, ValueError, OverflowError) as e:
        raise ValueError(f"pattern {shown_pattern(pattern)} is not a valid regex: {e}") from None
    return Pretokenizer(None, pattern, compiled)


def pretokenize(text: str, pattern: str = "gpt2") -> list[str]:
    """The pre-tokens of ``text`` (which holds no special token) under ``pattern`` (a name in
    :data:`PATTERNS` or a regex string), in order."""
    return pretokenizer(pattern).findall(text)


def findall_for(pre: Pretokenizer) -> Callable[[str], list[str]]:
    """The fastest function giving ``pre.findall(text)``: a module-level function (so that it
    pickles by name) for the named patterns ``re_split`` speeds up, else ``pre.findall``."""
    return re_split.findall_function(pre.name) or pre.findall
