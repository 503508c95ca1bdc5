"""Whether tiktoken splits text with a custom pattern as this project does: :func:`pattern_problem`.

What it does: tiktoken runs its ``pat_str`` with Rust's ``fancy-regex`` (over the ``regex``
crate), this project with Python's ``regex`` module. Where the two read a construct apart, a
rank file would encode other ids in tiktoken with no error, or make tiktoken fail; such a
pattern is refused before anything is written (and, by ``train --format tiktoken``, before
training). Measured against tiktoken (tests/core/test_format_limits.py):

- read apart, silently: ``\\h``/``\\H`` (a hex digit there, horizontal space here), ``\\<`` and
  ``\\>`` (word boundaries there, characters here), ``\\N{NAME}`` (any character but a line
  break and the text "{NAME}" there, the named character here), three octal digits
  (``\\101``: a back reference there, which tiktoken fails on, "A" here); in a class,
  ``&&``, ``--`` and ``~~`` (set operations there, characters here) and a ``[`` (a nested
  class or a POSIX ``[:alpha:]``, ASCII only there); ``$`` outside multi-line mode (there only
  the end of the text, here also before a final line break) and ``\\Z`` (the reverse);
  inside a case-insensitive group, a property, a class but one of plain characters, and
  "i", "I", "ı" or "İ", also spelt as an escape (``(?i)[a-z]`` also takes "İ" here, ``(?i:ı)``
  "I"; ``base.case_folds``, the rule the ``tokenizer.json`` writer follows too);
- a pattern that can match empty text: tiktoken's encoder panics on the empty piece, or
  drops the character after it (``(?=\\p{Sc})|...`` lost every "€"); decided on the
  pattern's structure (``empty_match``), as no set of sample texts holds every context;
- fuzzy matching (``{e<=1}`` after an item: ``base.fuzzy``), text there; ``\\g`` (a
  subroutine call there, ``\\g<1>``, a back reference here);
- inline flags other than ``i``, ``m``, ``s``, ``x``, ``u``, and ``\\X``: tiktoken cannot
  compile them. Where tiktoken is installed, it is asked to compile the pattern too, which
  also finds the property names and escapes it lacks.

The named patterns are tiktoken's own, and never refused. What it leaves out: writing
(``writing``).
"""

from __future__ import annotations

import re

from ...pretokenization.names import PATTERNS, pattern_name, property_key, shown_pattern
from ..base.case_folds import folds_apart, spelt_char
from ..base.fuzzy import FUZZY_REASON, fuzzy_at
from .empty_match import can_match_empty

_FLAGS_TIKTOKEN_READS = set("imsxu")
# Escapes tiktoken reads otherwise: \h a hex digit there, \< and \> word boundaries there
# (characters here), \Z also before a final line break there, \N any character but a line
# break there (so \N{NAME} is that and the text "{NAME}", a named character here); \X is not
# in it. \g is a subroutine call there (\g<1> matches what group 1 may match), a back
# reference here, or not compiled there (\g{1}).
_ESCAPE_TRAPS = ("h", "H", "Z", "X", "<", ">", "N", "g")
# Properties tiktoken's engine reads otherwise (a review: 66 and 68 characters apart).
_PROPERTY_TRAPS = frozenset({"graph", "print"})
_FLAGS = re.compile(r"\(\?([a-zA-Z0-9^-]*)[:)]")
# Three octal digits not led by 0: a character in the regex module's syntax (\101 is "A"), a
# back reference to group 101 in fancy-regex's, which tiktoken then cannot compile.
_OCTAL_ESCAPE = re.compile(r"\\[1-7][0-7]{2}")
_GROUP_NAME = re.compile(r"\(\?(?:P?<\w+>|'\w+'|P[=>]\w+|&\w+)")
# Escapes followed by a name or number in braces (\p{L}, \x{263A}, \g{1}).
_ESCAPES_WITH_BRACES = set("pPxuUgk")


# What to write instead of a refused escape, where both engines read one alike.
_INSTEAD = {
    "$": "; \\z is the end of the text in both",
    "\\Z": "; \\z is the end of the text in both",
    "\\N": "; write the character itself or its code (\\x{65} for 'e'), read alike in both",
    "\\g": "; write \\1 or (?P=name) for a back reference, read alike in both",
}


def _class_trap(pattern: str, start: int) -> tuple[str | None, int]:
    """The first construct tiktoken reads otherwise in the class opening at ``start``, and
    where the class ends."""
    j, n = start + 1, len(pattern)
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":
        j += 1
    while j < n and pattern[j] != "]":
        c = pattern[j]
        if c == "\\":
            # \N in a class: not compiled there, a named character here.
            if pattern[j + 1 : j + 2] in ("h", "H", "N"):
                return pattern[j : j + 2], j
            if _OCTAL_ESCAPE.match(pattern, j):
                return pattern[j : j + 4], j
            j += 2
            continue
        if c == "[":
            return ("[:" if pattern.startswith("[:", j) else "["), j
        pair = pattern[j : j + 2]
        if pair in ("&&", "--", "~~"):
            return pair, j
        j += 1
    return None, j + 1


def _syntax_trap(pattern: str) -> tuple[str, bool] | None:
    """The first construct of ``pattern`` that tiktoken reads otherwise or cannot read, and
    whether only being inside a case-insensitive group makes it so (``base.case_folds``)."""
    i, n = 0, len(pattern)
    # Each open group's modes (the outermost: the pattern's): multi-line, where the two
    # engines read "$" alike, and case-insensitive.
    modes = [(False, False)]
    while i < n:
        c = pattern[i]
        multiline, folding = modes[-1]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt in _ESCAPE_TRAPS:
                return "\\" + nxt, False
            if _OCTAL_ESCAPE.match(pattern, i):
                return pattern[i : i + 4], False
            end = i + 2
            spelt = spelt_char(pattern, i)
            if spelt is not None:
                # A letter spelt as an escape (\x69) folds as the letter does.
                end = spelt[1]
                if folding and folds_apart(spelt[0]):
                    return pattern[i:end], True
            elif nxt in _ESCAPES_WITH_BRACES and pattern.startswith("{", i + 2):
                end = pattern.find("}", i) + 1 or n
                if nxt in "pP" and property_key(pattern[i + 3 : end - 1]) in _PROPERTY_TRAPS:
                    return pattern[i:end], False
            elif nxt in "pP":
                end = i + 3  # \pL: a one-letter property name
            if folding and folds_apart(pattern[i:end]):
                return pattern[i:end], True
            i = end
        elif c == "[":
            start = i
            trap, i = _class_trap(pattern, i)
            if trap:
                return trap, False
            if folding and folds_apart(pattern[start:i]):
                return pattern[start:i], True
        elif c == "$":
            if not multiline:
                return c, False
            i += 1
        elif c == "(":
            if pattern.startswith("(?|", i):
                return "(?|", False
            if pattern.startswith("(?#", i):  # a comment: nothing in it is read
                i = pattern.find(")", i) + 1 or n
                continue
            flags = _FLAGS.match(pattern, i)
            if flags:
                letters = flags.group(1)
                if set(letters) - _FLAGS_TIKTOKEN_READS - {"-"}:
                    return flags.group(0), False
                on, _, off = letters.partition("-")
                mode = (
                    False if "m" in off else True if "m" in on else multiline,
                    False if "i" in off else True if "i" in on else folding,
                )
                i = flags.end()
                if flags.group(0).endswith(")"):  # (?m): the rest of this group
                    modes[-1] = mode
                else:
                    modes.append(mode)  # (?m: ... ): this group
                continue
            modes.append(modes[-1])
            # A group's name ("(?P<i>") is no text to match.
            named = _GROUP_NAME.match(pattern, i)
            i = named.end() if named else i + 1
        elif c == ")":
            if len(modes) > 1:
                modes.pop()
            i += 1
        else:
            fuzzy = fuzzy_at(pattern, i) if c == "{" else None
            if fuzzy is not None:
                return fuzzy, False
            if folding and folds_apart(c):
                return c, True
            i += 1
    return None


def _tiktoken_refuses(pattern: str) -> str | None:
    """tiktoken's own error compiling ``pattern``, where tiktoken is installed."""
    try:
        import tiktoken
    except ImportError:
        return None
    ranks = {bytes([b]): b for b in range(256)}
    try:
        tiktoken.Encoding("check", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    except ValueError as e:
        return str(e).splitlines()[0]
    return None


def held_elsewhere(other: str | None) -> str:
    """How a refused pattern's message ends: the files that hold the tokenizer instead, the
    ``other`` format first where one holds the pattern too (GPT-2 files hold any)."""
    if other is not None:
        return f" (save as {other!r}, which holds it; GPT-2 files do too, loaded with this pattern)"
    return " (GPT-2 files hold it, loaded with this pattern)"


def pattern_problem(pattern: str) -> str | None:
    """Why tiktoken would not split text with ``pattern`` (a name or a regex) as this project
    does, in words naming it and the files that hold it; None when it would.

    subtle: a tokenizer.json may hold it too, which this check cannot say: the
    ``tokenizer.json`` check names tiktoken's files, so it cannot be asked back (an import
    cycle)."""
    if pattern_name(pattern) in PATTERNS:
        return None
    why = _why(pattern)
    return None if why is None else why + held_elsewhere(None)


def _why(pattern: str) -> str | None:
    shown = shown_pattern(pattern)
    found = _syntax_trap(pattern)
    if found is not None and found[1]:
        trap = found[0]
        what = f"the class {shown_pattern(trap)}" if trap.startswith("[") else shown_pattern(trap)
        return (
            f"pattern {shown}: {what} inside a case-insensitive group matches other "
            "characters in tiktoken's regex engine (Rust's fancy-regex) than in Python's "
            "regex; end the group before it, spelling out both cases where needed ([a-zA-Z])"
        )
    if found is not None and _OCTAL_ESCAPE.fullmatch(found[0]):
        trap, code = found[0], int(found[0][1:], 8)
        instead = f"\\x{code:02x}" if code < 0x100 else f"\\x{{{code:x}}}"
        return (
            f"pattern {shown}: {shown_pattern(trap)} is the character {chr(code)!r} (an octal "
            f"escape) in Python's regex, a back reference to group {trap[1:]} in tiktoken's "
            f"regex engine (Rust's fancy-regex), which fails on it; write {instead}, read "
            "alike in both"
        )
    if found is not None and found[0].startswith("{"):
        return f"pattern {shown}: {shown_pattern(found[0])} {FUZZY_REASON}"
    if found is not None:
        trap = found[0]
        instead = _INSTEAD.get(trap, "")
        return (
            f"pattern {shown}: {shown_pattern(trap)} means something else in tiktoken's regex "
            f"engine (Rust's fancy-regex) or is not in it{instead}"
        )
    if can_match_empty(pattern):
        return (
            f"pattern {shown} can match empty text, on which tiktoken's encoder fails or "
            "drops the character after it"
        )
    refused = _tiktoken_refuses(pattern)
    if refused is not None:
        return f"pattern {shown}: tiktoken cannot compile it ({refused})"
    return None
