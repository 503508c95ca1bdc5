"""Where case-insensitive matching differs between the regex engines: :func:`folds_apart`.

What it does: says which constructs inside a case-insensitive group Oniguruma (which
``tokenizers`` runs) and Rust's regex (tiktoken's fancy-regex) match otherwise than Python's
``regex`` module; the ``tokenizer.json`` reader and writer (``hf.onig``) and tiktoken's pattern
check read the one rule, and :func:`spelt_char` reads a character spelt as an escape in the
regex module's syntax. What it leaves out: where the groups are (each engine's syntax is
walked by its own check), and Oniguruma's full case folds ("ss" for "ß": ``hf.onig``).
"""

from __future__ import annotations

import unicodedata

import regex

# The letters the regex module folds with one more partner than the other engines do (it
# also folds "İ" with "i" and "ı" with "I"), and what Oniguruma and Rust's regex match for
# each, case-insensitive: their simple case folds.
FOLDS_THERE = {"i": "iI", "I": "iI", "ı": "ı", "İ": "İ"}
# One character spelt as an escape, as the regex module reads it: hex, octal (the three-digit
# form, as a backreference otherwise), a name, or any character but an ASCII letter or digit.
_SPELT = regex.compile(
    r"\\(?:x(?<hex>[0-9a-fA-F]{2})|u(?<hex>[0-9a-fA-F]{4})|U(?<hex>[0-9a-fA-F]{8})"
    r"|(?<oct>0[0-7]{0,2}|[0-3][0-7]{2})|N\{(?<name>[^}]*)\}|(?<char>[^0-9A-Za-z]))"
)


def spelt_char(pattern: str, i: int) -> tuple[str, int] | None:
    r"""The character the escape at ``pattern[i]`` spells in the regex module's syntax
    (``\x69``, ``\u0131``, ``\0151``, ``\N{...}``, ``\ı``) and where the escape ends; None
    where it spells none (``\w``, ``\p{L}``, a backreference).

    >>> spelt_char(r"(?i:\x69)", 4)
    ('i', 8)
    """
    m = _SPELT.match(pattern, i)
    if m is None:
        return None
    if m["hex"]:
        code = int(m["hex"], 16)
    elif m["oct"]:
        code = int(m["oct"], 8)
    elif m["name"] is not None:
        try:
            return unicodedata.lookup(m["name"]), m.end()
        except KeyError:
            return None
    else:
        return m["char"], m.end()
    return (chr(code), m.end()) if code < 0x110000 else None


def folds_apart(construct: str) -> bool:
    r"""Whether ``construct`` inside a case-insensitive group matches other characters in
    Oniguruma, and in Rust's regex (tiktoken's), than in the regex module: a property
    (``\p{L}`` takes U+0345 there only, ``\p{Lu}`` "ĸ" here only), a class (``[a-z]``,
    brackets included) unless of plain characters none of which folds with "i", "I", "ı" or
    "İ" here, and one of those four letters (spelt as an escape: decoded first, by the
    caller). One rule for both writers; tests/core/test_format_limits.py shows each against
    tiktoken, tests/core/test_hf_pretokenize.py against tokenizers."""
    if construct.startswith(("\\p", "\\P")):
        return True
    if construct.startswith("[") and construct.endswith("]"):
        body = construct[1:-1]
        body = body[1:] if body.startswith("^") else body
        if not body or "\\" in body or "[" in body:
            return True
        # subtle: case-insensitive, as the group reads it: "[ı]" also takes "I" here.
        return any(regex.fullmatch(f"(?i)[{body}]", c) for c in FOLDS_THERE)
    return construct in FOLDS_THERE
