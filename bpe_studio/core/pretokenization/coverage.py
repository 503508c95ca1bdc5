"""Which text a pre-tokenizer leaves out of its pieces.

A custom pattern need not match every character. This project refuses text it leaves
unmatched (``UncoveredText``); a ``tokenizer.json`` that keeps a Split's matches only (as
``train --format hf`` writes a custom pattern), or a WhitespaceSplit, drops it, as
``tokenizers`` does, and no id stands for it. :func:`first_left_out` finds such text among a
probe of every common kind of character (ASCII, whitespace, letters of several scripts,
digits, symbols, an emoji, a combining mark), each alone, then of a few whole texts (a
pattern may remove only longer text, such as a word), for the notes and warnings that say so
before text is lost. What it leaves out: counting what a given text lost (``explain.usage``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

# Each probed alone: a pattern that looks around sees no neighbours, as at a text's edges.
PROBE = (
    "".join(map(chr, range(0x20, 0x7F))) + "\t\n\r" + "éßЖ中あ한ع١½€—“😀\u00a0\u3000\u0301\u200d"
)
# Probed whole, after every character kept alone: words, numbers, code and several scripts.
SAMPLES = (
    "The quick brown fox jumps over the lazy dog; it's 12,345.67 (or 89%)!",
    "def f(x):\n    return x  # done\r\n\t",
    "Größe: Жизнь, 中文字符 あいう 한국어 العربية ١٢٣ — “½ €” 😀👍",
)


def first_dropped(dropped: Callable[[str], str | None], extra: Iterable[str] = ()) -> str | None:
    """The first text that ``dropped`` (a pre-tokenizer's: the first stretch of a text it
    leaves out of its pieces, or None) finds, probing each character of :data:`PROBE`, then
    each of :data:`SAMPLES`, then the ``extra`` texts (the strings a step removes, which
    no probe need hold); None when it keeps all of them."""
    for text in (*PROBE, *SAMPLES, *extra):
        found = dropped(text)
        if found:
            return found
    return None


def unheld(text: str, spans: Iterable[tuple[int, int]]) -> str | None:
    """The first stretch of ``text`` that none of ``spans`` (start, end) holds, or None."""
    held = bytearray(len(text))
    for start, end in spans:
        held[start:end] = b"\x01" * max(end - start, 0)
    first = held.find(0)
    if first < 0:
        return None
    end = held.find(1, first)
    return text[first : len(text) if end < 0 else end]


def left_out_of(text: str, pieces: list[str]) -> str | None:
    """The first stretch of ``text`` that ``pieces`` (its pre-tokens, in order, each a
    stretch of it) leave out, or None."""
    at = 0
    for piece in pieces:
        found = text.find(piece, at)
        if found < 0:
            break  # not a stretch of it (changed by a step): said from here
        if found > at:
            return text[at:found]
        at = found + len(piece)
    return text[at:] or None


def first_left_out(findall: Callable[[str], list[str]]) -> str | None:
    """The first text :func:`first_dropped` finds that ``findall`` (a pre-tokenizer's: the
    pieces of a text) leaves out of its pieces, or None when it keeps every one.

    >>> import regex
    >>> first_left_out(regex.compile(r"[a-z]+|\\s+").findall)
    '!'
    >>> first_left_out(regex.compile(r"\\b(?!the\\b)\\w+|\\W+").findall)  # words but "the"
    'the'
    >>> first_left_out(regex.compile(r"\\S+|\\s+").findall) is None
    True
    """
    return first_dropped(lambda text: left_out_of(text, findall(text)))
