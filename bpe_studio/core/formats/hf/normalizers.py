"""The normalizers of a ``tokenizer.json``, with where each output character came from.

What it does: :func:`normalizer_steps` reads the ``normalizer`` object (NFC, NFKC, NFD, NFKD,
Lowercase, Strip, Replace, Prepend, Sequence) into functions that give a text's *edits*:
``(start, end, replacement)`` in order, the rest of the text kept. :class:`Normalized` applies
them to a text and keeps, for each normalized character, the characters of the original text
it came from (for spans); :func:`normalize` applies them to a bare string. A text already in
Unicode normal form gets no edit (NFC of NFC text is the identity). The rules follow
``tokenizers/src/normalizers/*.rs`` and ``tokenizer/normalizer.rs``: per-character lowercasing
(no final-sigma rule), Rust's whitespace for Strip, Oniguruma matches for Replace, and a
replacement's characters pointing at all the characters it replaced (Prepend's at the first).
What it leaves out: other normalizers (BertNormalizer, Precompiled, StripAccents, NFKC with
SentencePiece's tables, ...): the reader refuses them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import cache
from typing import Any, Literal, cast

import regex

from . import unicode_tables
from .flags import json_flag
from .onig import find_spans, translate

Edit = tuple[int, int, str]
Form = Literal["NFC", "NFD", "NFKC", "NFKD"]
EditsOf = Callable[[str], list[Edit]]

_LEADING = regex.compile(r"\A\s+")
_TRAILING = regex.compile(r"\s+\Z")


@cache
def unstable_class(form: Form) -> str:
    """The characters before which a text cannot be cut and normalized in two parts, as a
    regex character class's inside: those that are not normalized alone, have a combining
    class, or compose with what precedes them; the characters tokenizers' tables lack
    (``unicode_tables.lacked``) are cuts: there each is a starter that never decomposes or
    composes."""
    seconds = {0x1161 + i for i in range(21)} | {0x11A8 + i for i in range(27)}
    decomposed, marks, _ = unicode_tables.characters()
    for ch in decomposed:
        decomposition = unicodedata.decomposition(ch)
        if not decomposition.startswith("<"):
            parts = decomposition.split()
            if len(parts) == 2:
                seconds.add(int(parts[1], 16))
    # subtle: a character not normalized alone has a decomposition, given or, for the Hangul
    # syllables, computed (unicodedata.decomposition gives theirs as ""; NFD splits them).
    bad = [ord(ch) for ch in marks]
    bad += [ord(ch) for ch in decomposed if not unicodedata.is_normalized(form, ch)]
    if form in ("NFD", "NFKD"):
        bad += range(0xAC00, 0xD7A4)
    lacked = unicode_tables.lacked()
    runs = unicode_tables.ranges(c for c in {*bad, *seconds} if c not in lacked)
    return "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in runs)


@cache
def _unstable(form: Form) -> regex.Pattern[str]:
    """Runs of characters before which a text cannot be cut and normalized in two parts
    (:func:`unstable_class`), each with the character before it."""
    lacked = unicode_tables.lacked()
    old = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in unicode_tables.ranges(lacked))
    # subtle: each run of such characters is normalized with the character before it, unless
    # that is one the old tables lack (it must stay as it is).
    before = f"[^{old}]?" if old else "(?s:.)?"
    return regex.compile(f"{before}[{unstable_class(form)}]+")


def _parts(form: Form, chunk: str) -> list[tuple[int, int, str]]:
    """``chunk`` cut before each character that starts a new combining sequence, with each
    part normalized, if the parts normalize to what the whole does (so each output character
    points at its own part); else the whole."""
    cuts = [i for i, ch in enumerate(chunk) if i and not unicodedata.combining(ch)]
    whole = unicodedata.normalize(form, chunk)
    if cuts:
        bounds = [0, *cuts, len(chunk)]
        parts = [
            (a, b, unicodedata.normalize(form, chunk[a:b])) for a, b in zip(bounds, bounds[1:])
        ]
        if "".join(p[2] for p in parts) == whole:
            return parts
    return [(0, len(chunk), whole)]


def _unicode(form: Form) -> EditsOf:
    def edits(text: str) -> list[Edit]:
        if unicodedata.is_normalized(form, text):
            return []
        out = []
        for m in _unstable(form).finditer(text):
            at = m.start()
            for a, b, new in _parts(form, m.group()):
                if new != text[at + a : at + b]:
                    out.append((at + a, at + b, new))
        return out

    return edits


# Capital letters Unicode 16 and 17 added (Garay, Beria Erfe, and eight Latin and Cyrillic
# ones), which Rust's char::to_lowercase lowercases in a tokenizers built with a Rust that knows
# them (0.23 does, 0.21 does not) and Python 3.11's str.lower (Unicode 14) leaves: found
# comparing the two on every code point (a Reach audit).
# fmt: off
_NEWER_SINGLE_CAPITALS = (
    (0x1C89, 0x1C8A), (0xA7CB, 0x0264), (0xA7CC, 0xA7CD), (0xA7CE, 0xA7CF),
    (0xA7D2, 0xA7D3), (0xA7D4, 0xA7D5), (0xA7DA, 0xA7DB), (0xA7DC, 0x019B),
)
# fmt: on
_NEWER_CAPITALS = {
    **{chr(c): chr(c + 0x20) for c in range(0x10D50, 0x10D66)},
    **{chr(c): chr(c + 0x1B) for c in range(0x16EA0, 0x16EB9)},
    **{chr(upper): chr(lower) for upper, lower in _NEWER_SINGLE_CAPITALS},
}


@cache
def _newer_lowercase() -> dict[str, str]:
    """Those of :data:`_NEWER_CAPITALS` that the installed tokenizers lowercases, as it does
    (a file's ids are its ids); all of them where it cannot be asked."""
    try:
        from tokenizers.normalizers import Lowercase
    except ImportError:
        return dict(_NEWER_CAPITALS)
    lower = Lowercase()
    return {c: low for c in _NEWER_CAPITALS if (low := lower.normalize_str(c)) != c}


def _lowercase(text: str) -> list[Edit]:
    # Rust's char::to_lowercase, one character at a time: no final-sigma rule.
    newer = _newer_lowercase()
    return [
        (i, i + 1, low) for i, ch in enumerate(text) if (low := newer.get(ch) or ch.lower()) != ch
    ]


def _strip(left: bool, right: bool) -> EditsOf:
    def edits(text: str) -> list[Edit]:
        out = []
        if left and (m := _LEADING.search(text)):
            out.append((0, m.end(), ""))
        if right and (m := _TRAILING.search(text)):
            if not out or m.start() >= out[0][1]:
                out.append((m.start(), len(text), ""))
        return out

    return edits


def _replace(obj: dict[str, Any], where: str) -> EditsOf:
    pattern, content = obj.get("pattern"), obj.get("content")
    if not isinstance(content, str) or not isinstance(pattern, dict):
        raise ValueError(f"{where}: expected a pattern and a content string")
    if isinstance(pattern.get("String"), str):
        compiled = regex.compile(regex.escape(pattern["String"]))
        if not pattern["String"]:
            return lambda text: []
    elif isinstance(pattern.get("Regex"), str):
        try:
            compiled = regex.compile(translate(pattern["Regex"]).pattern)
        except ValueError as e:
            raise ValueError(f"{where}: pattern {pattern['Regex']!r}: {e}") from None
    else:
        raise ValueError(f"{where}: pattern must be a String or a Regex, got {pattern!r}")
    return lambda text: [(s, e, content) for s, e in find_spans(compiled, text)]


def _prepend(prefix: str) -> EditsOf:
    return lambda text: [(0, 0, prefix)] if text else []


def normalizer_steps(obj: Any, where: str = "normalizer") -> list[EditsOf]:
    """The edit functions of a ``normalizer`` object (None: none). Raises ValueError naming
    the component for one that is not reproduced here."""
    if obj is None:
        return []
    kind = obj.get("type") if isinstance(obj, dict) else None
    if kind == "Sequence":
        steps: list[EditsOf] = []
        items = obj.get("normalizers")
        if not isinstance(items, list):
            raise ValueError(f"{where}.normalizers: expected a list, got {items!r:.80}")
        for i, item in enumerate(items):
            steps += normalizer_steps(item, f"{where}.normalizers[{i}]")
        return steps
    if kind in ("NFC", "NFKC", "NFD", "NFKD"):
        return [_unicode(cast("Form", kind))]
    if kind == "Lowercase":
        return [_lowercase]
    if kind == "Strip":
        return [_strip(json_flag(obj, "strip_left", where), json_flag(obj, "strip_right", where))]
    if kind == "Replace":
        return [_replace(obj, where)]
    if kind == "Prepend":
        prefix = obj.get("prepend")
        if not isinstance(prefix, str):  # "'Prepend' is not supported" said of a bad value
            raise ValueError(f"{where}.prepend: expected a string, got {prefix!r:.80}")
        return [_prepend(prefix)]
    raise ValueError(f"{where}: {kind or obj!r} is not supported (NFC, NFKC, NFD, NFKD, "
                     "Lowercase, Strip, Replace, Prepend, Sequence)")  # fmt: skip


def _applied(text: str, edits: list[Edit]) -> str:
    parts, at = [], 0
    for s, e, new in edits:
        parts += [text[at:s], new]
        at = e
    parts.append(text[at:])
    return "".join(parts)


def normalize(steps: list[EditsOf], text: str) -> str:
    """``text`` after every step."""
    for step in steps:
        edits = step(text)
        if edits:
            text = _applied(text, edits)
    return text


class Normalized:
    """A normalized text and, for each of its characters, the ``[start, end)`` characters of
    the original text it came from (``start == end`` for one added in front of nothing).

    >>> n = Normalized("e\\u0301x", 10).apply([_unicode("NFC")])
    >>> n.text, n.origin(0, 1), n.origin(1, 2)
    ('éx', (10, 12), (12, 13))
    """

    def __init__(self, text: str, base: int = 0) -> None:
        self.text = text
        self.base = base
        self.length = len(text)
        self.starts: list[int] | None = None  # None: character i came from base + i
        self.ends: list[int] | None = None

    def _bounds(self) -> tuple[list[int], list[int]]:
        if self.starts is None or self.ends is None:
            b = self.base
            return list(range(b, b + len(self.text))), list(range(b + 1, b + len(self.text) + 1))
        return self.starts, self.ends

    def apply(self, steps: list[EditsOf]) -> Normalized:
        for step in steps:
            edits = step(self.text)
            if not edits:
                continue
            starts, ends = self._bounds()
            new_starts: list[int] = []
            new_ends: list[int] = []
            at = 0
            for s, e, new in edits:
                new_starts += starts[at:s]
                new_ends += ends[at:s]
                if e > s:
                    a, b = starts[s], ends[e - 1]
                elif s < len(starts):
                    a, b = starts[s], ends[s]
                else:
                    a = b = ends[-1] if ends else self.base + self.length
                new_starts += [a] * len(new)
                new_ends += [b] * len(new)
                at = e
            new_starts += starts[at:]
            new_ends += ends[at:]
            self.text = _applied(self.text, edits)
            self.starts, self.ends = new_starts, new_ends
        return self

    def origin(self, start: int, end: int) -> tuple[int, int]:
        """The original characters of normalized characters ``[start, end)`` (not empty)."""
        if self.starts is None or self.ends is None:
            return self.base + start, self.base + end
        return self.starts[start], self.ends[end - 1]
