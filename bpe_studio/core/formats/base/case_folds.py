"""Where case-insensitive matching differs between the regex engines: :func:`folds_apart`.

What it does: says which constructs inside a case-insensitive group Oniguruma (which
``tokenizers`` runs) and Rust's regex (tiktoken's fancy-regex) match otherwise than Python's
``regex`` module; the ``tokenizer.json`` reader and writer (``hf.onig``) and tiktoken's pattern
check read the one rule. What it leaves out: where the groups are (each engine's syntax is
walked by its own check), and Oniguruma's full case folds ("ss" for "ß": ``hf.onig``).
"""

from __future__ import annotations

import regex


def folds_apart(construct: str) -> bool:
    r"""Whether ``construct`` inside a case-insensitive group matches other characters in
    Oniguruma, and in Rust's regex (tiktoken's), than in the regex module: a property
    (``\p{L}`` takes U+0345 there only, ``\p{Lu}`` "ĸ" here only), a class (``[a-z]``,
    brackets included) unless of plain characters other than "i" and "I", and "i" or "I"
    (the regex module also folds "İ" with "i" and "ı" with "I"). One rule for both writers;
    tests/core/test_format_limits.py shows each against tiktoken."""
    if construct.startswith(("\\p", "\\P")):
        return True
    if construct.startswith("[") and construct.endswith("]"):
        body = construct[1:-1]
        body = body[1:] if body.startswith("^") else body
        if not body or "\\" in body or "[" in body:
            return True
        return bool(regex.fullmatch(f"[{body}]", "i") or regex.fullmatch(f"[{body}]", "I"))
    return construct in ("i", "I")
