"""Whether a regex can match empty text anywhere: :func:`can_match_empty`.

What it does: decides on the pattern's structure (in the syntax Python's ``regex`` and Rust's
fancy-regex share), with no text, so that a pattern matching empty text only beside some
character (``\\b(?=\\p{Sc})``, ``\\B(?=€)``) is found as surely as ``\\s*``. It
over-approximates: every anchor, word boundary, lookaround, backreference, recursion and
conditional counts as matching empty wherever it stands, and ``\\K`` as leaving nothing of
what matched before it; so it may call a pattern that never matches "" one that can, never
the reverse. What it leaves out: whether the pattern compiles (the callers ask the engines).
"""

from __future__ import annotations

import re

# Escapes that match no character: anchors and word boundaries.
_ZERO_WIDTH = frozenset("bBAzZG<>")
# Escapes whose digits or braces belong to them (\x41, \u0041, \p{L}, \N{...}).
_CODE_DIGITS = {"x": 2, "u": 4, "U": 8}
_OCTAL = re.compile(r"[0-7]{1,2}")
_QUANTIFIER = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_FLAGS = re.compile(r"\(\?([a-zA-Z0-9^-]*)([:)])")
_LOOKAROUND = ("(?=", "(?!", "(?<=", "(?<!")
_NAMED_GROUP = re.compile(r"\(\?(?:P?<\w+>|'\w+')")
# A backreference or a call of a group by name or number, which may match "".
_REFERENCE = re.compile(r"\(\?(?:P=\w+|P>\w+|&\w+|R|[-+]?\d+)\)")
# Three octal digits are a character in the regex module's syntax (\101 is "A"), not one.
_BACKREFERENCE = re.compile(r"\\(?:(?![0-7]{3})[1-9]\d*|[gk](?:<[^>]*>|\{[^}]*\}|'[^']*'))")


def can_match_empty(pattern: str) -> bool:
    """Whether ``pattern`` may match empty text, somewhere in some text (see the module
    docstring: a zero-width construct counts as matching wherever it stands).

    >>> can_match_empty(r"\\b(?=\\p{Sc})|\\S|\\s"), can_match_empty(r" ?\\p{L}+|\\s+(?!\\S)|\\S")
    (True, False)
    """
    walk = _Walk(pattern)
    empty = False
    while True:  # a ")" too many ends no group: read on past it
        found, _ = walk.alternation()
        empty = empty or found
        if walk.i >= len(pattern):
            return empty
        walk.i += 1


def _class_end(s: str, i: int) -> int:
    """Where the class opening at ``i`` ends (past its "]"): a "]" first in it is a character,
    as is a "[" but one opening a POSIX name ("[:alpha:]")."""
    j = i + 1
    if s.startswith("^", j):
        j += 1
    if s.startswith("]", j):
        j += 1
    while j < len(s) and s[j] != "]":
        if s[j] == "\\":
            j += 2
        elif s.startswith("[:", j) and ":]" in s[j + 2 :]:
            j = s.index(":]", j + 2) + 2
        else:
            j += 1
    return j + 1


class _Walk:
    """A reading of the pattern, left to right; each part gives (may match "", holds \\K)."""

    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.i = 0
        self.verbose = False  # (?x): spaces and "#" comments are no text

    def alternation(self) -> tuple[bool, bool]:
        empty = resets = False
        while True:
            found, reset = self.sequence()
            empty, resets = empty or found, resets or reset
            if not self.s.startswith("|", self.i):
                return empty, resets
            self.i += 1

    def sequence(self) -> tuple[bool, bool]:
        empty, resets = True, False
        while self._skip_free() and self.s[self.i] not in "|)":
            found, reset = self.item()
            if reset:
                # subtle: \K drops what matched before it; what follows it decides.
                empty, resets = True, True
            else:
                empty = empty and found
        return empty, resets

    def _skip_free(self) -> bool:
        """Past the spaces and comments of free-spacing mode; whether text is left."""
        s = self.s
        while self.verbose and self.i < len(s) and (s[self.i].isspace() or s[self.i] == "#"):
            if s[self.i] == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end + 1
            else:
                self.i += 1
        return self.i < len(s)

    def item(self) -> tuple[bool, bool]:
        empty, resets = self.atom()
        while self._skip_free():
            c = self.s[self.i]
            if c in "*?":
                empty = True
                self.i += 1
            elif c == "+":
                self.i += 1
            elif c == "{" and (m := _QUANTIFIER.match(self.s, self.i)) and m.group() != "{}":
                empty = empty or not m.group(1) or int(m.group(1)) == 0
                self.i = m.end()
            else:
                return empty, resets
            if self.s.startswith(("?", "+"), self.i):  # lazy or possessive
                self.i += 1
        return empty, resets

    def atom(self) -> tuple[bool, bool]:
        s, i = self.s, self.i
        c = s[i]
        if c == "(":
            return self.group()
        if c == "[":
            self.i = _class_end(s, i)
            return False, False
        if c == "\\":
            return self.escape()
        self.i += 1
        return c in "^$", False

    def escape(self) -> tuple[bool, bool]:
        s, i = self.s, self.i
        nxt = s[i + 1 : i + 2]
        self.i += 2
        if nxt in _ZERO_WIDTH:
            return True, False
        if nxt == "K":
            return True, True
        backreference = _BACKREFERENCE.match(s, i)
        if backreference:
            self.i = backreference.end()
            return True, False
        if s.startswith("{", self.i) and nxt in "pPxuUNgk":
            self.i = s.find("}", self.i) + 1 or len(s)
        elif nxt in "pP":
            self.i += 1  # \pL: a one-letter name
        elif nxt in _CODE_DIGITS:
            self.i += _CODE_DIGITS[nxt]
        elif nxt == "0" and (octal := _OCTAL.match(s, self.i)):
            self.i = octal.end()
        elif nxt in "1234567":
            self.i += 2  # \101: the rest of its three octal digits
        return False, False

    def group(self) -> tuple[bool, bool]:
        s, i = self.s, self.i
        if s.startswith("(?#", i):
            self.i = s.find(")", i) + 1 or len(s)
            return True, False
        reference = _REFERENCE.match(s, i)
        if reference:
            self.i = reference.end()
            return True, False
        saved, zero_width = self.verbose, False
        flags = _FLAGS.match(s, i)
        named = _NAMED_GROUP.match(s, i)
        if flags:
            on, _, off = flags.group(1).partition("-")
            self.i = flags.end()
            verbose = False if "x" in off else True if "x" in on else self.verbose
            if flags.group(2) == ")":  # (?x): the rest of the enclosing group
                self.verbose = verbose
                return True, False
            self.verbose = verbose
        elif s.startswith(_LOOKAROUND, i):
            zero_width = True
            self.i += 3 if s[i + 2] in "=!" else 4
        elif s.startswith("(?(", i):
            # A conditional: its condition (a group's name or number, or a lookaround),
            # then its branches, counted as matching empty.
            zero_width = True
            if s.startswith(_LOOKAROUND, i + 2):
                self.i = i + 2
                self.group()
            else:
                self.i = s.find(")", i + 3) + 1 or len(s)
        elif named:
            self.i = named.end()
        elif s.startswith(("(?:", "(?>", "(?|"), i):
            self.i += 3
        elif s.startswith(("(?", "(*"), i):
            zero_width = True  # another engine's construct: counted as matching empty
            self.i += 2
        else:
            self.i += 1
        empty, resets = self.alternation()
        if s.startswith(")", self.i):
            self.i += 1
        self.verbose = saved
        return empty or zero_width, resets
