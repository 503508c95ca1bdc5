"""The texts a pre-tokenizer's own patterns name, tried around a token that the fixed contexts
leave split apart.

What it does: :func:`pattern_contexts` reads the regexes that cut the text and gives the
characters they name (literals in or out of a class, a class's or an escape's first
representative among a few characters, one outside each bracketed class) and their literal
runs of two to four characters ("'s" of ``[ \\t]*'s``), those not among :data:`CONTEXTS` and
:data:`AFTER`, at most :data:`MOST_PATTERN_CONTEXTS` (literals and runs as the patterns name
them, then the classes' representatives); :func:`cutting_patterns` gives a tokenizer's
regexes. A vowel before "bc" is what
``[aeiou][^aeiou]{1,3}`` needs to keep it in one piece; no fixed context is one. What it
leaves out: the normalizers' texts, a literal run in a class or behind a quantifier, texts
that two named characters make together beyond such a run.
"""

from __future__ import annotations

import json
from typing import Any

import regex

from ..encode.tokenizer import Tokenizer
from ..pretokenization.names import GPT2_PATTERN
from .contexts import AFTER, CONTEXTS

MOST_PATTERN_CONTEXTS = 16  # texts derived from the patterns, at most (first named first)
_LONGEST_RUN = 4  # characters of a literal run kept as one context
# Characters tried as a class's representative: the fixed contexts' own first (a class they
# already stand for adds nothing), then the pattern's literals, then a few of other kinds.
# No ASCII letter that no pattern names, and no combining mark: the split test shares one
# answer among texts that differ only there (``alike``).
_OTHERS = ("_", "-", "\t", "\r", "!", "/", "é", "²", "\u00a0", "\u2028")
_ESCAPED = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b"}
_CLASS_ESCAPES = frozenset("sSwWdDhHRXN")  # escapes standing for a class of characters
_ANCHORS = frozenset("AzZbBG")  # escapes that match no character
_QUANTIFIERS = frozenset("*+?{")
_FIXED = frozenset(CONTEXTS + AFTER)


def pattern_contexts(patterns: list[str]) -> tuple[str, ...]:
    """The contexts that ``patterns`` name and the fixed ones lack, first named first.

    >>> pattern_contexts([r"[aeiou][^aeiou]{1,3}|\\S|\\s"])
    ('a', 'e', 'i', 'o', 'u')
    >>> pattern_contexts([r"\\w+[ \\t]*'s|\\w|\\s|."])
    ('\\t', "'s")
    """
    found: dict[str, None] = {}
    classes: list[tuple[regex.Pattern[str], bool]] = []
    for pattern in patterns:
        _read(pattern, found, classes)
    pool = [*(c for c in CONTEXTS if c), *(c for c in found if len(c) == 1), *_OTHERS]
    for compiled, outside in classes:
        # One character the class holds and, for a bracketed one, one it does not: a negated
        # class's own characters are the literals already found.
        for want in (True, False) if outside else (True,):
            pick = next((c for c in pool if bool(compiled.fullmatch(c)) == want), None)
            if pick is not None:
                found.setdefault(pick)
    new = [t for t in found if t not in _FIXED]
    return tuple(new[:MOST_PATTERN_CONTEXTS])


def cutting_patterns(tokenizer: Tokenizer) -> list[str]:
    """The regexes that cut ``tokenizer``'s text: its pattern, or those of its file's Splits
    (a String one escaped) and ByteLevel's own (WhitespaceSplit, Digits name nothing)."""
    pipeline = tokenizer.hf_pipeline
    if pipeline is None:
        return [tokenizer.pre_tokenizer.pattern]
    found: list[str] = []

    def walk(obj: Any) -> None:
        if not isinstance(obj, dict):
            return
        kind = obj.get("type")
        if kind == "Sequence":
            for item in obj.get("pretokenizers") or []:
                walk(item)
        elif kind == "ByteLevel" and obj.get("use_regex", True):
            found.append(GPT2_PATTERN)
        elif kind == "Split" and isinstance(obj.get("pattern"), dict):
            pattern = obj["pattern"]
            if isinstance(pattern.get("Regex"), str):
                found.append(pattern["Regex"])
            elif isinstance(pattern.get("String"), str):
                found.append(regex.escape(pattern["String"]))

    walk(json.loads(pipeline.spec)[1])
    return found


def _read(
    pattern: str, found: dict[str, None], classes: list[tuple[regex.Pattern[str], bool]]
) -> None:
    """Adds the literals and literal runs of ``pattern`` to ``found`` (in order) and its
    classes to ``classes`` (each with whether one outside it is wanted too)."""
    run: list[str] = []
    # subtle: in verbose mode white space and comments are no part of the pattern: read as
    # literals they would take the places of the texts that matter.
    verbose = _verbose(pattern)

    def end_run(quantified: bool = False) -> None:
        # A quantifier applies to the run's last character alone: the run without it is literal.
        text = "".join(run[:-1] if quantified else run)
        if len(text) >= 2:
            found.setdefault(text[:_LONGEST_RUN])
        run.clear()

    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if verbose and (c.isspace() or c == "#"):
            if c == "#":
                i = pattern.find("\n", i) + 1 or n
            else:
                i += 1
            continue
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt in "pP":
                end = pattern.find("}", i) + 1 if pattern[i + 2 : i + 3] == "{" else i + 3
                _add_class(pattern[i : end or n], False, classes)
                end_run()
                i = end or n
                continue
            if nxt in _CLASS_ESCAPES:
                _add_class(pattern[i : i + 2], False, classes)
                end_run()
            elif nxt in _ANCHORS:
                end_run()
            else:
                literal, end = _escape(pattern, i)
                if literal is None:
                    end_run()  # a backreference, a named character: no literal read here
                else:
                    found.setdefault(literal)
                    run.append(literal)
                i = end
                continue
            i += 2
            continue
        if c == "[":
            end = _class_end(pattern, i)
            text = pattern[i:end]
            _add_class(text, True, classes)
            for literal in _class_literals(text):
                found.setdefault(literal)
            end_run()
            i = end
            continue
        if c == "(":
            end_run()
            i = _group_body(pattern, i)
            continue
        if c in _QUANTIFIERS:
            end_run(quantified=True)
            i = pattern.find("}", i) + 1 or n if c == "{" else i + 1
            continue
        if c in ")|^$":
            end_run()
        elif c == ".":
            _add_class(".", False, classes)
            end_run()
        else:
            found.setdefault(c)
            run.append(c)
        i += 1
    end_run()


def _verbose(pattern: str) -> bool:
    """Whether ``pattern`` is written in verbose mode (``(?x)``)."""
    try:
        return bool(regex.compile(pattern).flags & regex.VERBOSE)
    except (regex.error, ValueError):  # regex raises ValueError for some fuzzy counts
        return False


def _add_class(text: str, bracketed: bool, classes: list[tuple[regex.Pattern[str], bool]]) -> None:
    """Adds the class ``text`` names, compiled, to ``classes``."""
    try:
        classes.append((regex.compile(text), bracketed))
    except (regex.error, ValueError):
        pass  # subtle: a piece this reading cut wrongly names no class to try


def _class_end(pattern: str, start: int) -> int:
    """The index just past the bracketed class opening at ``start`` (nested sets and POSIX
    classes inside it, a "]" first in it, escapes)."""
    i = start + 1
    if pattern[i : i + 1] == "^":
        i += 1
    if pattern[i : i + 1] == "]":
        i += 1
    depth = 1
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(pattern)


def _class_literals(text: str) -> list[str]:
    """The characters a bracketed class names one by one (a range's two ends)."""
    out: list[str] = []
    i = 1 + (text[1:2] == "^")
    while i < len(text) - 1:
        c = text[i]
        if c == "\\" and i + 1 < len(text) - 1:
            nxt = text[i + 1]
            if nxt in "pP" and text[i + 2 : i + 3] == "{":
                i = text.find("}", i) + 1 or len(text)
                continue
            literal, i = _escape(text, i)
            if literal is not None:
                out.append(literal)
            continue
        if c == "[" and text.find(":]", i) > i:
            i = text.find(":]", i) + 2  # a POSIX class ("[:alpha:]"): no one character
            continue
        if c not in "[]&~|" and not (c == "-" and 1 < i < len(text) - 2):
            out.append(c)
        i += 1
    return out


def _escape(pattern: str, i: int) -> tuple[str | None, int]:
    """The character the escape at ``i`` stands for (None when it stands for none read
    here: a class, a backreference, a named character), and the index just past it."""
    nxt = pattern[i + 1 : i + 2]
    if nxt in ("x", "u", "U"):
        if pattern[i + 2 : i + 3] == "{":
            end = pattern.find("}", i)
            digits, after = (pattern[i + 3 : end], end + 1) if end >= 0 else ("", len(pattern))
        else:
            width = {"x": 2, "u": 4, "U": 8}[nxt]
            digits, after = pattern[i + 2 : i + 2 + width], i + 2 + width
        try:
            return chr(int(digits, 16)), after
        except ValueError:
            return None, after
    if nxt in _ESCAPED:
        return _ESCAPED[nxt], i + 2
    if nxt in ("k", "g", "N") and pattern[i + 2 : i + 3] in ("<", "{", "'"):
        close = {"<": ">", "{": "}", "'": "'"}[pattern[i + 2]]
        end = pattern.find(close, i + 3)
        return None, end + 1 if end >= 0 else len(pattern)
    if nxt.isascii() and nxt.isdigit():
        end = i + 1
        while pattern[end : end + 1].isascii() and pattern[end : end + 1].isdigit():
            end += 1
        return None, end
    if nxt.isascii() and nxt.isalnum():
        return None, i + 2  # a class, an anchor or a name's head: no literal
    return nxt or None, i + 2


def _group_body(pattern: str, start: int) -> int:
    """The index of the first character inside the group opening at ``start`` (past "(?:",
    "(?i:", a lookaround's or a name's head), or just past the group when it holds none
    (a flag group, a reference "(?P=x)")."""
    i = start + 1
    if pattern[i : i + 1] != "?":
        return i
    i += 1
    if pattern[i : i + 2] in ("<=", "<!"):
        return i + 2
    if pattern[i : i + 2] in ("P<", "P=") or pattern[i : i + 1] in ("<", "'", "P"):
        close = ">" if pattern[i : i + 2] != "P=" else ")"
        end = pattern.find(close, i)
        return end + 1 if end >= 0 else len(pattern)
    while i < len(pattern) and (pattern[i].isalpha() or pattern[i] == "-"):
        i += 1
    return i + 1 if pattern[i : i + 1] in (":", "=", "!", ">", ")") else i
