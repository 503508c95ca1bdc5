"""Which characters a pre-tokenizer leaves out of its pieces.

A custom pattern need not match every character. This project refuses text it leaves
unmatched (``UncoveredText``); a ``tokenizer.json`` that keeps a Split's matches only (as
``train --format hf`` writes a custom pattern), or a WhitespaceSplit, drops it, as
``tokenizers`` does, and no id stands for it. :func:`first_left_out` finds such a character
among a probe of every common kind (ASCII, whitespace, letters of several scripts, digits,
symbols, an emoji, a combining mark), for the notes and warnings that say so before text
is lost. What it leaves out: counting what a given text lost (``explain.usage``).
"""

from __future__ import annotations

from collections.abc import Callable

# Each probed alone: a pattern that looks around sees no neighbours, as at a text's edges.
PROBE = (
    "".join(map(chr, range(0x20, 0x7F))) + "\t\n\r" + "éßЖ中あ한ع١½€—“😀\u00a0\u3000\u0301\u200d"
)


def first_left_out(findall: Callable[[str], list[str]]) -> str | None:
    """The first character of :data:`PROBE` that ``findall`` (a pre-tokenizer's: the pieces
    of a text) leaves out of its pieces, or None when it keeps every one.

    >>> import regex
    >>> first_left_out(regex.compile(r"[a-z]+|\\s+").findall)
    '!'
    >>> first_left_out(regex.compile(r"\\S+|\\s+").findall) is None
    True
    """
    for c in PROBE:
        if "".join(findall(c)) != c:
            return c
    return None
