"""Surrogate code points in text: what encoding does with them (what tiktoken does).

A Python ``str`` may hold surrogates (U+D800..U+DFFF): text decoded with ``surrogatepass`` or
``surrogateescape``, or pasted from a UTF-16 source. UTF-8 cannot encode them. Like tiktoken's
``Encoding.encode``, such text is round-tripped through UTF-16 first: a high surrogate followed
by a low one becomes the character the pair stands for, any other surrogate becomes U+FFFD.
Callers try the text as it is and replace only when encoding it fails, so text without
surrogates costs nothing. What it leaves out: decoding (invalid UTF-8 becomes U+FFFD there).
"""

from __future__ import annotations

import re

_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def replace_surrogates(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD.

    >>> replace_surrogates("a\\ud800b\\ud83d\\ude00") == "a\\ufffdb\\U0001f600"
    True
    """
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def original_offsets(text: str) -> list[int]:
    """For each character of ``replace_surrogates(text)`` and its end, the offset in ``text``
    where it starts: a joined pair takes two characters of ``text``, anything else one."""
    offsets: list[int] = []
    pos = 0
    for m in _PAIR.finditer(text):
        offsets += range(pos, m.start() + 1)  # the characters before, then the pair
        pos = m.end()
    offsets += range(pos, len(text) + 1)
    return offsets
