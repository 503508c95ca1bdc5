"""The named pre-tokenization patterns (gpt2, cl100k, o200k) and every spelling of their names.

What it does: :data:`PATTERNS` is the one registry of named patterns, with GPT-2's regex as
tiktoken spells it (:data:`R50K_PATTERN`) read as "gpt2"; :func:`pattern_name` reads a name in
the spellings users bring from tiktoken and the models (``cl100k_base``, ``GPT-4``, ...:
:data:`ALIASES`); :func:`looks_like_a_name` tells a misspelt name from a regex. What it leaves
out: compiling and applying patterns (``pretokenizer``, ``re_split``) and where text may be cut
(``boundaries``).
"""

from __future__ import annotations

import difflib
import re
from functools import cache

import regex

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
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
# Characters the installed ``regex`` module files under another general category than the
# engines a named pattern must agree with (tiktoken's Rust regex, Oniguruma in ``tokenizers``,
# Python's ``unicodedata``): U+0295 ʕ became Lo in Unicode 16, and they read it Ll. Only o200k
# asks a letter's case, so these are kept out of its "capitals" class on every path: the
# regex it runs as (:func:`named_regex`), ``re_split``'s classes and the scanners' table, all
# through :data:`CAPITALS`. tests/core/test_unicode_classes.py compares every code point with
# Oniguruma's reading, so a newer ``regex`` cannot add one silently.
NOT_CAPITALS = "\u0295"
# o200k's class of a word's leading capitals, as it runs here.
CAPITALS = rf"(?:(?![{NOT_CAPITALS}])[\p{{Lu}}\p{{Lt}}\p{{Lm}}\p{{Lo}}\p{{M}}])"
_PUBLISHED_CAPITALS = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"

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
    f"{', '.join(PATTERNS)} (also spelt gpt-2, r50k_base, p50k_base, cl100k_base, gpt-4, "
    "o200k_base, gpt-4o)"
)


def alias_key(word: str) -> str:
    """``word`` with case, "-", "_", "." and spaces ignored ("GPT-4o" -> "gpt4o")."""
    return re.sub(r"[-_. ]", "", word).lower()


def property_key(name: str) -> str:
    r"""A Unicode property's name (``\p{...}``'s inside) as the regex module matches it: case,
    spaces, "_" and "-" ignored ("X_Digit" -> "xdigit")."""
    return re.sub(r"[\s_-]", "", name).lower()


def pattern_name(pattern: str) -> str:
    """The name of a named pattern given by name, by one of its regex spellings
    (``R50K_PATTERN`` is "gpt2") or by an alias (:data:`ALIASES`: "cl100k_base" and "GPT-4"
    are "cl100k"), else ``pattern`` unchanged."""
    if pattern in PATTERNS:
        return pattern
    if _BARE_WORD.fullmatch(pattern):
        return ALIASES.get(alias_key(pattern), pattern)
    return _SPELLINGS.get(pattern, pattern)


def shown_pattern(pattern: str) -> str:
    r"""How every message shows a pattern (one rule): a named pattern by its name, anything
    else in single quotes as a POSIX shell reads them, so that it can be pasted back after
    ``--pattern`` as it is (no backslash doubled, as ``repr`` would).

    >>> print(shown_pattern("cl100k_base"), shown_pattern(r"\w+|\s+"), shown_pattern("it's"))
    cl100k '\w+|\s+' 'it'"'"'s'
    """
    name = pattern_name(pattern)
    if name in PATTERNS:
        return name
    return "'" + pattern.replace("'", "'\"'\"'") + "'"


def looks_like_a_name(pattern: str) -> bool:
    """Whether ``pattern``, a bare word that is no name, was most likely meant as one: close
    to a name or alias, or a GPT model's name."""
    if not _BARE_WORD.fullmatch(pattern):
        return False
    key = alias_key(pattern)
    return key.startswith("gpt") or bool(difflib.get_close_matches(key, ALIASES, cutoff=0.6))


def pattern_regex(pattern: str) -> str:
    """The regex string of a name in :data:`PATTERNS`, else ``pattern`` unchanged."""
    return PATTERNS.get(pattern, pattern)


@cache
def named_regex(name: str) -> regex.Pattern[str]:
    """The ``regex`` pattern of a name in :data:`PATTERNS`, compiled once per process; o200k's
    with :data:`CAPITALS` for its capitals' class (the same pieces as tiktoken's)."""
    pattern = PATTERNS[name]
    if name == "o200k":
        pattern = pattern.replace(_PUBLISHED_CAPITALS, CAPITALS)
    return regex.compile(pattern)
