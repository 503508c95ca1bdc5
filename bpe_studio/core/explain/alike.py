"""Texts the Reach rule's split test may answer once for: those that differ only in characters
that nothing in the tokenizer's pipeline tells apart.

What it does: :func:`alike_key` gives a function from a token's text to a key; texts with the
same key are cut alike in every context ``split_apart`` tries, so one answer serves them all.
Two kinds of characters go together: the ASCII digits, where no pattern names a digit and the
normalizers treat each character alike (thousands of numbers in o200k), and, in a text of
ASCII alone, the ASCII letters of one case that no pattern, normalizer or context names in
either case (a WhitespaceSplit file's " the" and " and"). What it leaves out: every other
character (each is its own), and the letters of a pipeline it cannot read this way (a
backreference, a pattern naming text beyond ASCII, a property or escape not listed here).
"""

from __future__ import annotations

import json
import re
import string
import unicodedata
from collections.abc import Callable
from typing import Any

from ..encode.tokenizer import Tokenizer
from ..pretokenization.names import GPT2_PATTERN
from .contexts import AFTER, CONTEXTS

_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")
_ASCII_DIGITS = str.maketrans("123456789", "000000000")
# Unicode properties that hold for every ASCII letter of a case or for none (general
# categories, scripts, Alphabetic...): Hex_Digit or Soft_Dotted, which split the letters, are
# not here, and a pattern naming one keeps its letters apart.
_SAME_FOR_LETTERS = frozenset(
    "L Lu Ll Lt Lm Lo L& M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp "
    "C Cc Cf Cs Co Cn Letter Mark Number Punctuation Symbol Separator Other Any ASCII "
    "Alphabetic Alpha White_Space WSpace Join_Control Han Hani Hiragana Katakana Hangul "
    "Latin Greek Cyrillic Arabic Hebrew Thai".split()
)
_CLASS_ESCAPES = frozenset("sSwWdDbBAZznrtfv")  # no letter of a case told from another
_FLAGS = frozenset("ims-")  # inline flags that keep the letters of a case alike
_NORMALIZERS = frozenset(("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Strip", "Replace", "Prepend"))
_SPLITTERS = frozenset(("Split", "ByteLevel", "Digits", "WhitespaceSplit", "Whitespace"))


def alike_key(tokenizer: Tokenizer) -> Callable[[str], str]:
    """The key under which ``split_apart`` may keep a text's answer: texts with one key are
    cut alike, whatever stands around them.

    >>> key = alike_key(Tokenizer({i: bytes([i]) for i in range(256)}, []))  # GPT-2's pattern
    >>> key(" cat") == key(" bat"), key("2016") == key("1999"), key(" cat") == key(" Cat")
    (True, True, False)
    >>> key(" the") == key(" tho")  # GPT-2's pattern names "e" ('re, 've)
    False
    """
    pipeline = tokenizer.hf_pipeline
    digits: dict[int, int] = {}
    if (pipeline is None or pipeline.normalizes_each_character()) and not _names_digits(tokenizer):
        digits = _ASCII_DIGITS
    letters = _letters_alike(tokenizer)
    if not letters:
        return (lambda text: text.translate(digits)) if digits else (lambda text: text)
    both = {**digits, **letters}
    # subtle: only in ASCII text: a letter before a combining mark may compose with it
    # (NFC's "e" + U+0301), one letter differently from another.
    return lambda text: text.translate(both) if text.isascii() else text.translate(digits)


def _names_digits(tokenizer: Tokenizer) -> bool:
    """Whether a pattern that cuts the text may name a digit (or cannot be told)."""
    pipeline = tokenizer.hf_pipeline
    patterns = [tokenizer.pre_tokenizer.pattern] if pipeline is None else pipeline.split_patterns()
    if patterns is None:
        return True
    return any(re.search(r"[0-9]", _QUANTIFIER.sub("", p)) for p in patterns)


def _letters_alike(tokenizer: Tokenizer) -> dict[int, int]:
    """A translation of the ASCII letters nothing names (in either case) to one of them per
    case; empty when the pipeline cannot be read this way or no two letters are alike."""
    pipeline = tokenizer.hf_pipeline
    if pipeline is None:
        found: set[str] | None = _named_by(tokenizer.pre_tokenizer.pattern)
    else:
        normalizer, pre_tokenizer, _ = json.loads(pipeline.spec)
        found = _named_in(normalizer, pre_tokenizer)
    if found is None:
        return {}
    named = found | set("".join(CONTEXTS + AFTER))
    free = [c for c in string.ascii_lowercase if c not in named and c.upper() not in named]
    if len(free) < 2:
        return {}
    table = {ord(c): ord(free[0]) for c in free[1:]}
    table.update({ord(c.upper()): ord(free[0].upper()) for c in free[1:]})
    return table


def _named_in(normalizer: Any, pre_tokenizer: Any) -> set[str] | None:
    """The characters that the normalizer and pre-tokenizer objects name, or None when one of
    them may tell letters apart otherwise (a type not listed, a backreference, ...)."""
    named: set[str] = set()
    for obj in _flat(normalizer, "normalizers") + _flat(pre_tokenizer, "pretokenizers"):
        kind = obj.get("type")
        if kind not in _NORMALIZERS | _SPLITTERS:
            return None
        texts: list[Any] = [obj.get("content"), obj.get("prepend")]
        pattern = obj.get("pattern")
        if kind == "ByteLevel" and obj.get("use_regex", True):
            pattern = {"Regex": GPT2_PATTERN}
        if isinstance(pattern, dict):
            texts.append(pattern.get("String"))
            regex_text = pattern.get("Regex")
            if isinstance(regex_text, str):
                found = _named_by(regex_text)
                if found is None:
                    return None
                named |= found
        if kind == "Replace" and "$" in str(obj.get("content")):
            return None  # subtle: a group written back copies a letter elsewhere
        named |= {c for t in texts if isinstance(t, str) for c in _written(t)}
    return named


def _written(text: str) -> str:
    """The characters ``text`` may stand for once normalized: itself, its compatibility forms
    and its cases (a Prepend of a full-width "ｂ" writes "b" under NFKC, the Kelvin sign "K"
    under Lowercase "k")."""
    forms = (unicodedata.normalize(form, text) for form in ("NFC", "NFD", "NFKC", "NFKD"))
    return "".join((text, *forms, text.lower(), text.upper(), text.casefold()))


def _flat(obj: Any, key: str) -> list[dict[str, Any]]:
    """The objects of a Sequence (nested ones opened), or the one object; none for null."""
    if obj is None:
        return []
    if isinstance(obj, dict) and obj.get("type") == "Sequence":
        return [inner for item in obj.get(key) or [] for inner in _flat(item, key)]
    return [obj] if isinstance(obj, dict) else [{"type": None}]


def _named_by(pattern: str) -> set[str] | None:
    """The characters ``pattern`` names as literals (a range all it spans), or None when it may
    tell ASCII letters of a case apart otherwise: a backreference, a named group, a
    character beyond ASCII, an escape, flag or property not known to keep them alike."""
    named: set[str] = set()
    if "[:" in pattern:  # a POSIX class ([:xdigit:] splits the letters)
        return None
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if not c.isascii():
            return None
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt in ("p", "P"):
                end = pattern.find("}", i) if pattern[i + 2 : i + 3] == "{" else i + 2
                name = pattern[i + 3 : end] if pattern[i + 2 : i + 3] == "{" else pattern[i + 2]
                if end < 0 or name.lstrip("^") not in _SAME_FOR_LETTERS:
                    return None
                if pattern[i + 2 : i + 3] != "{":
                    # subtle: Oniguruma (a file's Split, read raw here) takes an unbraced
                    # "\pL" for the letters "pL" (formats.hf.onig); named, both readings
                    # are safe.
                    named |= {nxt, name}
                i = end + 1
                continue
            if not nxt or (nxt.isalnum() and nxt not in _CLASS_ESCAPES):
                return None  # \x41, \u0061, \1, \g<1>, \h, \N{...}: letters named otherwise
            if nxt not in _CLASS_ESCAPES:
                named.add(nxt)  # an escaped literal: "\." names "."
            i += 2
            continue
        if pattern.startswith("(?", i):
            j = i + 2
            while j < len(pattern) and (pattern[j].isalpha() or pattern[j] == "-"):
                if pattern[j] not in _FLAGS:
                    return None  # (?P<name>...), (?x), (?f): a name, comments, full case folds
                j += 1
            if pattern[j : j + 1] == "<" and pattern[j + 1 : j + 2] not in ("=", "!"):
                return None
            i = j
            continue
        if c == "-" and 0 < i < len(pattern) - 1:
            low, high = pattern[i - 1], pattern[i + 1]
            if high == "\\" or (i > 1 and pattern[i - 2] == "\\"):
                return None  # a range from or to an escape: where it ends is not read here
            named |= {chr(k) for k in range(ord(low), ord(high) + 1)}
        named.add(c)
        i += 1
    return named
