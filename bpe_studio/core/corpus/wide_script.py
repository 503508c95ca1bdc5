"""Whether bytes read as UTF-16 are text of a script whose code points' high bytes vary: Han,
kana, Hangul (``sources._unicode_form`` finds the others by one high byte in most pairs).

CJK text in UTF-16 without a byte-order mark has no one high byte (Han's run over 0x4E-0x9F,
Hangul's over 0xAC-0xD7), so it is known by what it reads as: letters of one script with
its punctuation. What else is no UTF-8 and still decodes as UTF-16 must not pass: a legacy
double-byte encoding (GBK, Big5, Shift-JIS, EUC-KR) read in pairs gives Hangul from GB2312's
lead bytes, Yi from its punctuation's, ideographs from Shift-JIS's, private use and
surrogates; Latin-1 text reads as ideographs made of two ASCII letters, with controls and
unassigned code points where a space meets a letter; neither holds a character of CJK
punctuation, an ASCII space or line break (a NUL high byte: no legacy text has one).
"""

from __future__ import annotations

import unicodedata
from collections import Counter

# Families of letters that one text mixes (Japanese: kanji with kana; Chinese: Han with
# bopomofo), by the first word of their Unicode names; other scripts are each their own.
_FAMILIES = {
    "CJK": "Han",
    "IDEOGRAPHIC": "Han",
    "HIRAGANA": "Han",
    "KATAKANA": "Han",
    "KATAKANA-HIRAGANA": "Han",
    "BOPOMOFO": "Han",
    "HANGUL": "Hangul",
}
# Controls other than these, format characters, private use and unassigned code points are
# what a misread legacy text is full of, and real text nearly free of.
_TEXT_CONTROLS = "\t\n\r\x0b\x0c"
_LEAST_CHARACTERS = 16


def _family(char: str) -> str | None:
    """The script family of a letter; None for Latin ones (Chinese and Japanese text holds
    ASCII and full-width words: they belong to no script family of its own)."""
    words = unicodedata.name(char, "").split()
    if words and words[0] in ("HALFWIDTH", "FULLWIDTH"):
        words = words[1:]
    if not words or words[0] == "LATIN" or ord(char) < 0x250:
        return None
    return _FAMILIES.get(words[0], words[0])


def _punctuation(char: str) -> bool:
    """A space, line break or punctuation mark where CJK text has them: ASCII's (NUL high
    byte), CJK Symbols and Punctuation's (、。「」) or full-width forms' (，：？)."""
    code = ord(char)
    if not (code < 0x80 or 0x3000 <= code < 0x3040 or 0xFF00 <= code < 0xFFF0):
        return False
    return char in "\t\n\r" or unicodedata.category(char)[0] in "PZ"


def reads_as_script(text: str) -> bool:
    """Whether ``text``, a file's first bytes read as UTF-16 of one end (strictly: no lone
    surrogate), is text of a script with varied high bytes: at least half of it letters of
    one script family (nine in ten of its non-Latin letters), hardly a control, format,
    private-use or unassigned character (one in fifty), and spaces or punctuation in at
    least one character in fifty. Measured on 256-character windows of the Chinese corpus:
    99 in 100 hold 6 % such punctuation or more (the one without, a list of names, stays
    "not valid UTF-8"), Korean's spaces are a fifth; the legacy encodings' readings in the
    tests hold none, or mix Hangul with Yi."""
    if len(text) < _LEAST_CHARACTERS:
        return False
    categories = [unicodedata.category(c) for c in text]
    other = sum(
        1
        for c, kind in zip(text, categories, strict=True)
        if kind[0] == "C" and c not in _TEXT_CONTROLS
    )
    if other > 0.02 * len(text):
        return False
    if sum(1 for c in text if _punctuation(c)) < max(2, 0.02 * len(text)):
        return False
    families = Counter(
        family
        for c, kind in zip(text, categories, strict=True)
        if kind[0] == "L" and (family := _family(c))
    )
    if not families:
        return False
    most = families.most_common(1)[0][1]
    return most >= 0.5 * len(text) and most >= 0.9 * families.total()
