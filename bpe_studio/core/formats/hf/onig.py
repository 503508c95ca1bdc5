"""Oniguruma regexes (Ruby syntax, as ``tokenizers`` compiles them) in the ``regex`` module's terms.

What it does: :func:`translate` rewrites a pattern from a ``tokenizer.json`` into one the
``regex`` module reads with the same meaning, and says whether it can match the empty string;
:func:`find_spans` finds matches the way ``tokenizers`` iterates them. Rewritten: ``^``/``$``
(Ruby: any line), ``\\Z``, ``X{m,n}+`` (Ruby: ``X{m,n}`` repeated, not possessive),
inline flags (Ruby's ``m`` is Python's ``s``; a flag group without a colon lasts to the end of
its group; under ``x`` ASCII white space and ``#`` comments are left out, before a quantifier
too), ``\\h``, ``\\w`` and the POSIX brackets whose Unicode sets differ, and nested
classes (``[^(\\s|[.,])]``, BLOOM's). What it leaves out: constructs whose meaning differs and
that tokenizer files do not use (``\\b``, ``\\G``, ``\\K``, ``\\R``, ``\\X``, absent groups,
classes inside case-insensitive groups, case folds to several characters): they raise
ValueError naming the construct, so nothing is encoded differently.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import regex

from ..base.case_folds import FOLDS_THERE, folds_apart

# Oniguruma's Unicode \w: the regex module's \w differs on U+200C/U+200D and six Latin-1 numbers.
_WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\xb2\xb3\xb9\xbc-\xbe"
_ESCAPE_CLASS = {
    "h": "0-9a-fA-F",
    "w": _WORD,
    "d": r"\p{Nd}",
    "s": r"\s",
    "D": r"\P{Nd}",
    "S": r"\S",
}
_ESCAPE_ATOM = {
    "h": "[0-9a-fA-F]",
    "H": "[^0-9a-fA-F]",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "d": r"\p{Nd}",
    "D": r"\P{Nd}",
    "z": r"\z",
    "Z": r"(?=\n?\Z)",
}
_POSIX = {"alpha": r"\p{Alphabetic}", "space": r"\s", "digit": r"\p{Nd}", "upper": r"\p{Uppercase}",
          "lower": r"\p{Lowercase}"}  # fmt: skip
_REFUSED_ESCAPES = set("bBGKRXyYONgkU")
# Escapes for a set of characters in a class, which Oniguruma takes at neither end of a range.
_SET_ESCAPES = set("dDwWsShH")
# A property name as Oniguruma has it, with what the regex module also takes: an "Is" prefix
# ("IsHan": Han) and a trailing "&" ("L&": L, there).
_ONIGURUMA_NAME = regex.compile(r"((?i:is)[_ -]?(?=\w))?([\w -]+?)(&?)")
# Group openers read alike, and whether the group is zero-width (a lookaround).
_GROUPS = (("(?:", False), ("(?=", True), ("(?!", True), ("(?<=", True), ("(?<!", True),
           ("(?>", False))  # fmt: skip
_META = frozenset(".^$*+?{}[]\\|()#")
_FLAGS = {"i": "i", "m": "s", "x": "x"}
_END_THE_GROUP = "end the group before it, spelling out both cases where needed ([a-zA-Z])"


@cache
def _multi_fold_targets() -> frozenset[str]:
    """What characters whose case fold is several characters fold to ("ss" for "ß"):
    Oniguruma folds them fully, the regex module not (built on first use)."""
    chars = (chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    return frozenset(f for c in chars if len(f := c.casefold()) > 1)


def _spelt_char(s: str, i: int) -> tuple[str, int, str] | None:
    r"""The character the escape at ``s[i]`` spells as Oniguruma reads it (``\x69``,
    ``\x{131}``, ``\u0131``, ``\0151``, ``\.``), where the escape ends and the character in
    the regex module's syntax; None for any other escape."""
    nxt = s[i + 1 : i + 2]
    if nxt == "x" and s.startswith("{", i + 2):
        end = s.find("}", i)
        code, end = int(s[i + 3 : end], 16), end + 1
    elif nxt in ("x", "u", "0"):
        digits = regex.match(
            {"x": "[0-9a-fA-F]{1,2}", "u": "[0-9a-fA-F]{1,4}", "0": "[0-7]{0,2}"}[nxt], s[i + 2 :]
        )
        text = digits.group() if digits else ""
        code = int("0" + text, 8) if nxt == "0" else int(text or "0", 16)
        end = i + 2 + len(text)
    elif nxt and not (nxt.isascii() and nxt.isalnum()):
        return nxt, i + 2, "\\" + nxt
    else:
        return None
    return chr(code), end, f"\\U{code:08x}"


def _class_end(s: str, start: int) -> int:
    """Where the class opening at ``s[start]`` ends (past its "]"; the text's end where it
    does not), over escapes, POSIX brackets ("[:alpha:]") and nested classes, for messages
    that show the whole class."""
    j = start + 1
    j += s[j : j + 1] == "^"
    j += s[j : j + 1] == "]"  # a "]" first is the character
    while j < len(s):
        if s[j] == "\\":
            j += 2
        elif s[j] == "]":
            return j + 1
        elif (posix := regex.match(r"\[:\^?\w+:\]", s[j:])) is not None:
            j += posix.end()
        elif s[j] == "[":
            j = _class_end(s, j)
        else:
            j += 1
    return len(s)


@dataclass(frozen=True)
class Translated:
    """A pattern in the ``regex`` module's syntax; ``nullable``: it may match "";
    ``respelled``: the first case-insensitive "i", "I", "ı" or "İ" (as written: maybe an
    escape) given its Oniguruma meaning (none else), which the same pattern written for
    Oniguruma would lose; ``refers_back``: it holds a backreference (``\\1``; a named one,
    ``\\k<name>``, is refused), so that written twice in one regex (``isolated``) its copy
    would refer to the first copy's group."""

    pattern: str
    nullable: bool
    respelled: str | None = None
    refers_back: bool = False


def _digit(c: str) -> bool:
    """``c`` is one of 0-9: "²" and "٣" pass ``str.isdigit`` but are no group number."""
    return len(c) == 1 and "0" <= c <= "9"


class _Parser:
    def __init__(self, source: str) -> None:
        self.s = source
        self.i = 0
        self.ci = False  # inside a case-insensitive scope
        self.x = False  # inside an extended scope ("x"): white space and comments are no part
        self.respelled: str | None = None
        self.refers_back = False

    def fail(self, what: str, instead: str = "") -> ValueError:
        """``what`` refused, and ``instead`` what to write in its place, where one exists."""
        said = f"{what} (at character {self.i}) has no exact equivalent here"
        return ValueError(f"{said}; {instead}" if instead else said)

    def peek(self, k: int = 1) -> str:
        return self.s[self.i : self.i + k]

    # alternation := sequence ("|" sequence)*
    def alternation(self) -> tuple[str, bool]:
        parts, nullable = [], False
        while True:
            text, null = self.sequence()
            parts.append(text)
            nullable = nullable or null
            if self.peek() != "|":
                return "|".join(parts), nullable
            self.i += 1

    def sequence(self) -> tuple[str, bool]:
        out: list[str] = []
        nullable = True
        while self._skip_layout() < len(self.s) and self.peek() not in "|)":
            # subtle: the flags apply at once, the rest of the group inside their scope: a
            # second flag group ("(?i)(?x)") then opens a scope within the first, where
            # waiting for the next atom let it take the first one's place.
            flags = self._flag_group_without_colon()
            if flags is not None:
                text, null = self.alternation_scoped(flags, self.ci, self.x)
                out.append(text)
                nullable = nullable and null
                break
            atom, null = self.atom()
            atom, null = self.quantified(atom, null)
            out.append(atom)
            nullable = nullable and null
        return "".join(out), nullable

    def _skip_layout(self) -> int:
        """In an extended scope, moves past ASCII white space and "#" comments (to the line's
        end), as Oniguruma does before each token, a quantifier too; returns the position."""
        while self.x and self.i < len(self.s):
            c = self.s[self.i]
            if c == "#":
                end = self.s.find("\n", self.i)
                self.i = len(self.s) if end < 0 else end + 1
            elif c in " \t\n\f\r":  # not a vertical tab: Oniguruma matches it
                self.i += 1
            else:
                break
        return self.i

    def _skip_comment_groups(self) -> None:
        """Moves past comment groups ("(?#...)"), and the layout after each."""
        while self.s.startswith("(?#", self.i):
            end = self.s.find(")", self.i)
            if end < 0:
                raise ValueError(f"unclosed comment group at character {self.i}")
            self.i = end + 1
            self._skip_layout()

    def _flag_group_without_colon(self) -> str | None:
        """``(?imx-imx)``, which applies to the rest of the enclosing group: its flags, read
        past; None where none stands here."""
        if not self.s.startswith("(?", self.i):
            return None
        m = regex.match(r"\(\?([imx]*)(?:-([imx]*))?\)", self.s[self.i :])
        if not m:
            return None
        self.i += m.end()
        return self._flag_text(m.group(1), m.group(2) or "")

    def alternation_scoped(self, flags: str, saved: bool, saved_x: bool) -> tuple[str, bool]:
        self.ci = self._ci_after(flags, saved)
        self.x = self._x_after(flags, saved_x)
        text, null = self.alternation()
        self.ci, self.x = saved, saved_x
        return f"(?{flags}:{text})", null

    def _flag_text(self, on: str, off: str) -> str:
        flags = "".join(_FLAGS[f] for f in on)
        if off:
            flags += "-" + "".join(_FLAGS[f] for f in off)
        return flags

    @staticmethod
    def _ci_after(flags: str, ci: bool) -> bool:
        on, _, off = flags.partition("-")
        return (ci or "i" in on) and "i" not in off

    @staticmethod
    def _x_after(flags: str, x: bool) -> bool:
        on, _, off = flags.partition("-")
        return (x or "x" in on) and "x" not in off

    def quantified(self, atom: str, nullable: bool) -> tuple[str, bool]:
        repeated = False  # a quantifier already applies to ``atom``
        while True:
            self._skip_layout()
            # subtle: a quantifier after a comment group repeats the atom before it
            # ("a(?#c){2}" is "a{2}"), as Oniguruma reads it.
            self._skip_comment_groups()
            c = self.peek()
            if c in ("*", "+", "?"):
                self.i += 1
                # subtle: a lazy or possessive mark stands right after its quantifier; under
                # "x" one after white space ("a+ ?") is a quantifier of its own, of the whole.
                mod = self.peek() if self.peek() in ("?", "+") else ""
                self.i += len(mod)
                atom = f"{f'(?:{atom})' if repeated else atom}{c}{mod}"
                nullable = nullable or c in "*?"
                repeated = True
                continue
            m = regex.match(r"\{(\d*)(?:(,)(\d*))?\}", self.s[self.i :]) if c == "{" else None
            if m is None or (m.group(1) == "" and (m.group(3) or "") == ""):
                return atom, nullable
            self.i += m.end()
            low = int(m.group(1) or 0)
            interval = m.group(0) if m.group(1) else "{0" + m.group(0)[1:]
            # An atom is one regex atom already, as for "*" above; only a quantified one (or
            # an empty comment group's) needs a group: one added around every interval grew
            # at each trip through a tiktoken sidecar and back ("(?:(?:\p{N})){1,3}").
            atom = f"(?:{atom}){interval}" if repeated or not atom else f"{atom}{interval}"
            nullable = nullable or low == 0
            repeated = True
            if self.peek() == "?" and m.group(2) is None:
                # subtle: in Ruby syntax "{n}?" is "{n}" made optional, not lazy (Oniguruma
                # reads it lazily in its Perl and Java syntaxes only).
                self.i += 1
                mod = self.peek() if self.peek() in ("?", "+") else ""  # lazy or possessive
                self.i += len(mod)
                atom, nullable = f"(?:{atom})?{mod}", True
            elif self.peek() == "?":
                self.i += 1
                atom += "?"
            elif self.peek() == "+":
                # subtle: in Ruby syntax "{m,n}+" repeats the interval; it is not possessive.
                # The group is the atom the "+" (read next) repeats.
                atom, repeated = f"(?:{atom})", False
            # A further quantifier applies to the whole, as the loop does.

    def atom(self) -> tuple[str, bool]:
        self._atom_start = self.i
        c = self.peek()
        if c == "(":
            return self.group()
        if c == "[":
            return self.char_class(), False
        if c == "\\":
            return self.escape()
        self.i += 1
        if c == "^":
            return "(?m:^)", True
        if c == "$":
            return "(?m:$)", True
        if c == ".":
            return ".", False
        if c in "*+?{":
            if c == "{":
                return "\\{", False
            raise self.fail(f"a quantifier {c!r} with nothing to repeat")
        if self.x and c.isspace():
            # subtle: under "x" the regex module leaves out all white space, Oniguruma only
            # ASCII's (skipped before here); written as a code point, it stays a character.
            return self._literal(c, f"\\u{ord(c):04x}"), False
        return self._literal(c, "\\" + c if c in _META else c), False

    def _literal(self, c: str, text: str) -> str:
        """The character ``c``, written ``text``, as Oniguruma reads it in this scope."""
        if not self.ci:
            return text
        self._check_fold(c)
        if folds_apart(c):
            # subtle: Oniguruma's case-insensitive "i" matches "i" and "I", not "\u0130", and
            # its "\u0131" only itself; the regex module also folds them across.
            self.respelled = self.respelled or self.s[self._atom_start : self.i]
            return f"(?-i:[{FOLDS_THERE[c]}])"
        return text

    def _check_fold(self, c: str) -> None:
        # subtle: a case-insensitive run such as "ss" (or "s\x73") also matches "ß" in
        # Oniguruma only.
        run = (c + self._next_chars(2)).casefold()
        for target in _multi_fold_targets():
            if len(target) > 1 and run.startswith(target):
                raise self.fail(
                    f"case-insensitive {target!r} (Oniguruma also matches its ligature)"
                )

    def _next_chars(self, k: int) -> str:
        """Up to ``k`` characters from the cursor on, each plain or spelt as an escape, up
        to anything else."""
        out, j = "", self.i
        while len(out) < k and j < len(self.s):
            spelt = _spelt_char(self.s, j) if self.s[j] == "\\" else None
            if spelt is not None:
                c, j = spelt[0], spelt[1]
            elif self.s[j] in _META:
                break
            else:
                c, j = self.s[j], j + 1
            out += c
        return out

    def _refuse_numbered(self, nxt: str) -> None:
        """Refuse an escape of two digits or more not starting with 0 ("\\151"): Oniguruma
        reads it as a group's number or as octal by how many groups the pattern has, the
        regex module as octal (its letter then folds otherwise)."""
        after = self.s[self.i + 2 : self.i + 3]
        if _digit(nxt) and nxt != "0" and _digit(after):
            digits = regex.match(r"\d+", self.s[self.i + 1 :])
            assert digits is not None
            raise self.fail(f"\\{digits.group()}", r"write the character itself or \x{..}")

    def escape(self) -> tuple[str, bool]:
        nxt = self.s[self.i + 1 : self.i + 2]
        if not nxt:
            raise self.fail("a pattern ending in a backslash")
        if nxt in _REFUSED_ESCAPES:
            raise self.fail(f"\\{nxt}")
        if nxt in "pP" and self.s[self.i + 2 : self.i + 3] == "{":
            text = self._property()
            if self.ci and folds_apart(text):
                raise self.fail(f"{text} inside a case-insensitive group", _END_THE_GROUP)
            return text, False
        self._refuse_numbered(nxt)
        spelt = _spelt_char(self.s, self.i)
        if spelt is not None:
            # A letter spelt as an escape (\x69) folds as the letter does.
            c, self.i, text = spelt
            return self._literal(c, text), False
        self.i += 2
        if nxt in "pP":
            return nxt, False  # subtle: without braces, Ruby syntax reads "\\pL" as "pL"
        if nxt in _ESCAPE_ATOM:
            return _ESCAPE_ATOM[nxt], nxt in "zZ"
        if nxt == "A":
            return r"\A", True
        if _digit(nxt) and nxt != "0":
            self.refers_back = True
            return "\\" + nxt, True
        return "\\" + nxt, False

    def group(self) -> tuple[str, bool]:
        s, i = self.s, self.i
        saved, saved_x = self.ci, self.x
        if s.startswith("(?#", i):
            self._skip_comment_groups()
            return "", True
        m = regex.match(r"\(\?([imx]*)(?:-([imx]*))?:", s[i:])
        if m:
            self.i += m.end()
            flags = self._flag_text(m.group(1), m.group(2) or "")
            self.ci = self._ci_after(flags, saved)
            self.x = self._x_after(flags, saved_x)
            opener, zero = f"(?{flags}:", False
        else:
            for prefix, is_zero in _GROUPS:
                if s.startswith(prefix, i):
                    self.i += len(prefix)
                    opener, zero = prefix, is_zero
                    break
            else:
                named = regex.match(r"\(\?<([A-Za-z_]\w*)>", s[i:])
                if named:
                    self.i += named.end()
                    opener, zero = f"(?P<{named.group(1)}>", False
                elif s.startswith("(?", i):
                    named_p = (
                        "write (?<name>...) for a named group" if s.startswith("(?P<", i) else ""
                    )
                    raise self.fail(f"the group {s[i : i + 4]!r}", named_p)
                else:
                    self.i += 1
                    opener, zero = "(", False
        text, nullable = self.alternation()
        if self.peek() != ")":
            raise ValueError(f"unbalanced parenthesis at character {i}")
        self.i += 1
        self.ci, self.x = saved, saved_x
        return f"{opener}{text})", nullable or zero

    # ----------------------------------------------------------- classes
    def char_class(self) -> str:
        """One character class as a ``regex`` expression matching one character."""
        start = self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        operands = [self._class_operand(start)]
        while self.s[self.i - 2 : self.i] == "&&":
            operands.append(self._class_operand(start))
        if self.ci and (len(operands) > 1 or operands[0][1] or folds_apart(f"[{operands[0][0]}]")):
            raise self.fail(
                f"the class {self.s[start : self.i]!r} inside a case-insensitive group",
                _END_THE_GROUP,
            )
        if len(operands) > 1:
            exprs = [self._union(body, nested) for body, nested in operands]
            both = "".join(f"(?={x})" for x in exprs[1:]) + exprs[0]
            return f"(?:(?!{both})(?s:.))" if negated else f"(?:{both})"
        body, nested = operands[0]
        plain = [n[1:-1] for n in nested if n.startswith("[") and not n.startswith("[^")]
        others = [n for n in nested if not (n.startswith("[") and not n.startswith("[^"))]
        body += "".join(plain)
        if not others:
            return f"[^{body}]" if negated else f"[{body}]"
        if negated:
            guard = "".join(f"(?!{n})" for n in others)
            return f"(?:{guard}[^{body}])" if body else f"(?:{guard}(?s:.))"
        return self._union(body, others)

    def _class_operand(self, start: int) -> tuple[str, list[str]]:
        """A class's items up to "&&" or its closing bracket (consumed): the flat body, and
        the nested classes, each an expression for one character."""
        items: list[str] = []
        nested: list[str] = []
        first = True
        # The last item: "char", "set" (\d, \p{L}, [:alpha:]) or "range" (a range's end,
        # after which "-" is a character); and whether a range awaits its end.
        last, ranging = "", False
        while True:
            if self.i >= len(self.s):
                raise ValueError(f"unclosed character class at character {start}")
            c = self.peek()
            if c == "]" and not first:
                self.i += 1
                return "".join(items), nested
            first = False
            if self.peek(2) == "&&":
                self.i += 2
                return "".join(items), nested
            is_set = self.peek(2) == "[:" or (c == "\\" and self._at_set_escape())
            if (is_set and ranging) or (c == "-" and last == "set" and self.peek(2) != "-]"):
                # subtle: the regex module takes such a "-" as the character; Oniguruma
                # refuses the pattern (tokenizers could not load the file).
                whole = self.s[start : _class_end(self.s, start)]
                raise self.fail(
                    f"a '-' beside a set (\\d, \\p{{..}}) in the class '{whole}'",
                    "put the '-' last in the class to mean the character",
                )
            if c == "-" and last == "char" and not ranging and self.peek(2) != "-]":
                ranging = True
                items.append(c)
                self.i += 1
                continue
            if self.peek(2) == "[:":
                m = regex.match(r"\[:(\^?)(\w+):\]", self.s[self.i :])
                if not m or m.group(2) not in _POSIX or m.group(1):
                    end = self.s.find("]", self.i + 2)  # the bracket's own "]", not a later ":]"
                    shown = m.group() if m else self.s[self.i : end + 1 if end >= 0 else None]
                    raise self.fail(f"the POSIX bracket {shown!r}")
                items.append(_POSIX[m.group(2)])
                self.i += m.end()
            elif c == "[":
                nested.append(self.char_class())
            elif c == "\\":
                items.append(self._class_escape())
            else:
                items.append("\\" + c if c in "[]\\^" else c)
                self.i += 1
            last, ranging = "set" if is_set else "range" if ranging else "char", False

    def _at_set_escape(self) -> bool:
        r"""Whether the escape at the cursor stands for a set of characters (\d, \p{L})."""
        nxt = self.s[self.i + 1 : self.i + 2]
        return nxt in _SET_ESCAPES or (nxt in "pP" and self.s[self.i + 2 : self.i + 3] == "{")

    @staticmethod
    def _union(body: str, nested: list[str]) -> str:
        alts = ([f"[{body}]"] if body else []) + nested
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    def _property(self) -> str:
        """The ``\\p{...}`` at the cursor, passed; refused where Oniguruma has no such name
        (tokenizers could not load the file) though the regex module reads it."""
        end = self.s.find("}", self.i)
        if end < 0:
            raise self.fail("an unclosed \\p{")
        text = self.s[self.i : end + 1]
        negated, name = ("^", text[4:-1]) if text.startswith("^", 3) else ("", text[3:-1])
        known = _ONIGURUMA_NAME.fullmatch(name)
        if not known:
            raise self.fail(f"the property {text}", "Oniguruma lacks the name")
        if known[1] or known[3]:
            raise self.fail(
                f"the property {text}",
                f"Oniguruma lacks the name: write \\{text[1]}{{{negated}{known[2]}}}, as the "
                "regex module reads it",
            )
        self.i = end + 1
        return text

    def _class_escape(self) -> str:
        nxt = self.s[self.i + 1 : self.i + 2]
        if nxt in "pP" and self.s[self.i + 2 : self.i + 3] == "{":
            return self._property()
        if nxt in _ESCAPE_CLASS:
            self.i += 2
            return _ESCAPE_CLASS[nxt]
        if nxt in "HWb" or nxt in _REFUSED_ESCAPES:
            raise self.fail(f"\\{nxt} inside a character class")
        self._refuse_numbered(nxt)
        spelt = _spelt_char(self.s, self.i)
        if spelt is not None:
            # A class inside a case-insensitive group is refused whole (``char_class``).
            _, self.i, text = spelt
            return text
        text, _ = self.escape()
        return text


def translate(pattern: str) -> Translated:
    """``pattern`` as Oniguruma (Ruby syntax) reads it, in the ``regex`` module's syntax.

    Raises ValueError naming a construct without an exact equivalent, or one the ``regex``
    module then cannot compile.

    >>> translate(r"\\p{N}{1,3}+").pattern
    '(?:\\\\p{N}{1,3})+'
    >>> translate(" ?[^(\\\\s|[.,!?])]+").pattern
    ' ?[^(\\\\s|).,!?]+'
    """
    p = _Parser(pattern)
    text, nullable = p.alternation()
    if p.i != len(pattern):
        raise ValueError(f"unbalanced parenthesis at character {p.i}")
    try:
        regex.compile(text)
    except (regex.error, ValueError, OverflowError) as e:
        raise ValueError(f"not understood ({e})") from None
    return Translated(text, nullable, p.respelled, p.refers_back)


def find_spans(compiled: regex.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each match, as Oniguruma's ``find_iter`` gives them: an empty match
    right where the previous match ended is skipped, and the search goes on one character
    later (the regex module would then look for a longer match at the same place)."""
    pos, last_end, n = 0, -1, len(text)
    search = compiled.search
    while pos <= n:
        m = search(text, pos)
        if m is None:
            return
        s, e = m.span()
        if s == e and e == last_end:
            pos += 1
            continue
        # subtle: after an empty match the next search starts at the same place too; the
        # check above then moves it on.
        pos = last_end = e
        yield s, e
