"""What a token is made of: its category, and whether it starts with a space.

What it does: :func:`classify` gives each token (its bytes) one of :data:`CATEGORIES`:

- ``partial``: the bytes are not whole UTF-8 characters (a byte of "é", half of "中");
- ``whitespace``: only White_Space characters (spaces, line breaks, tabs, U+3000, ...);
- ``digits``: only numbers (``\\p{N}``: 0-9, "٣", "½", "Ⅻ");
- ``punctuation``: only punctuation and symbols (``\\p{P}``, ``\\p{S}``: ".", "->", "€", emoji);
- ``other``: only control, format, private-use or unassigned characters (``\\p{C}`` but
  not White_Space: a line break is whitespace), or nothing at all (an empty entry of a
  loaded file);
- a script's name (``Latin``, ``Han``, ``Cyrillic``, ...: ``scripts.SCRIPTS``): only letters
  and marks (``\\p{L}``, ``\\p{M}``) of that one script; letters shared by scripts (Common,
  Inherited: "ー", combining accents) go with the others, and alone are ``Common`` or
  ``Inherited``;
- ``mixed``: anything else (letters and digits, two scripts, "'s", ".\\n");
- ``byte fallback``: a byte-fallback model's ``<0xNN>`` tokens (SentencePiece-style BPE:
  Llama 2, Gemma), which stand for one byte each. :func:`classify` never gives it (it reads
  bytes, and ``<0x41>`` stands for the same byte as ``A``); the vocabulary table marks those
  entries (``vocabulary.token_table``).

A token's first space, when what follows it is not whitespace only, is left out of the
category and raises the token's leading-space flag instead: " the" is ``Latin`` with a
leading space, "  the" ``mixed`` with one (the space and the rest are whitespace and letters),
"  " ``whitespace`` without. A ``partial`` token has the flag when its first byte is a space.
What it leaves out: which tokens a vocabulary holds (``vocabulary``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import regex

from .scripts import COMMON, INHERITED, SCRIPTS, scripts_of

PARTIAL, WHITESPACE, DIGITS, PUNCTUATION, OTHER, MIXED, BYTE_FALLBACK = range(7)
KINDS = ("partial", "whitespace", "digits", "punctuation", "other", "mixed", "byte fallback")
# Every category, by code: the kinds, then the scripts.
CATEGORIES: tuple[str, ...] = KINDS + SCRIPTS
_CODE = {name: code for code, name in enumerate(CATEGORIES)}
LATIN = _CODE["Latin"]
# How a category reads in a summary.
LABELS = {
    "partial": "partial UTF-8",
    "whitespace": "whitespace",
    "digits": "digits",
    "punctuation": "punctuation/symbols",
    "other": "control/format",
    "mixed": "mixed",
    "byte fallback": "byte fallback",
}
_SHARED = frozenset({COMMON, INHERITED})

# A token's text without its leading space, as one kind of character throughout.
_BODY = regex.compile(
    r"(?P<whitespace>\p{White_Space}+)|(?P<digits>\p{N}+)"
    # Emoji are symbols with what joins and dresses them: variation selectors (❤️), the
    # zero-width joiner (👨‍👩‍👧), the keycap mark and the tags of subdivision flags.
    r"|(?P<punctuation>[\p{P}\p{S}][\p{P}\p{S}\uFE0E\uFE0F\u200D\u20E3\U000E0020-\U000E007F]*)"
    r"|(?P<letters>[\p{L}\p{M}]+)|(?P<other>(?:(?!\p{White_Space})\p{C})+)"
)
_KIND_CODE = {"whitespace": WHITESPACE, "digits": DIGITS, "punctuation": PUNCTUATION}
_KIND_CODE["other"] = OTHER


def label(category: str) -> str:
    """How ``category`` reads for a person: "punctuation/symbols", "Latin letters"."""
    return LABELS.get(category, f"{category} letters")


def classify(tokens: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Each token's category code (an index into :data:`CATEGORIES`, uint8) and its
    leading-space flag (bool), as two arrays in the order of ``tokens``.

    >>> codes, lead = classify([b" the", b"\\xe4", b"12", b"  ", "中文".encode(), b"a1"])
    >>> [CATEGORIES[c] for c in codes]
    ['Latin', 'partial', 'digits', 'whitespace', 'Han', 'mixed']
    >>> lead.tolist()
    [True, False, False, False, False, False]
    """
    codes: list[int] = []
    lead: list[bool] = []
    # Letters outside ASCII: their scripts are looked up together once all are known.
    deferred: list[tuple[int, str]] = []
    fullmatch = _BODY.fullmatch
    for i, token in enumerate(tokens):
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            codes.append(PARTIAL)
            lead.append(len(token) > 1 and token[0] == 0x20)
            continue
        if text.isascii():
            # The most common tokens, at the cost of two string methods: ASCII words and
            # numbers, with or without a space before.
            body = text[1:] if len(text) > 1 and text[0] == " " else text
            if body.isalpha() or body.isdigit():
                codes.append(LATIN if body.isalpha() else DIGITS)
                lead.append(body is not text)
                continue
        start = 0
        if len(text) > 1 and text[0] == " ":
            m = fullmatch(text, 1)
            if m is not None and m.lastgroup == "whitespace":
                m = None  # spaces and more whitespace: whitespace throughout, below
            else:
                start = 1
        if start == 0:
            m = fullmatch(text)
        lead.append(start == 1)
        if m is None:
            codes.append(MIXED if text else OTHER)
        elif m.lastgroup != "letters":
            codes.append(_KIND_CODE[m.lastgroup or "other"])
        elif text.isascii():
            codes.append(LATIN)
        else:
            codes.append(MIXED)  # settled below
            deferred.append((i, text[start:]))
    if deferred:
        script = scripts_of(ch for _, body in deferred for ch in body)
        for i, body in deferred:
            codes[i] = _script_code({script[ch] for ch in body})
    return np.array(codes, dtype=np.uint8), np.array(lead, dtype=bool)


def _script_code(scripts: set[str]) -> int:
    """The category of letters of these scripts (Common and Inherited join any other)."""
    own = scripts - _SHARED
    if len(own) > 1:
        return MIXED
    if own:
        return _CODE[own.pop()]
    return _CODE[COMMON if COMMON in scripts else INHERITED]
