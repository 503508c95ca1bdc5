"""The pre-tokenizers of a ``tokenizer.json`` that keep byte-level BPE exact, as steps.

What it does: :func:`pre_tokenizer_steps` reads the ``pre_tokenizer`` object (``Split`` with
each ``behavior`` and ``invert``, ``Digits``, ``Whitespace``,
``WhitespaceSplit``, ``ByteLevel`` last, and ``Sequence`` of these) into :class:`Step` objects
that cut a piece of text where ``tokenizers`` cuts it (``tokenizers/src/tokenizer/
normalizer.rs``: ``split``; ``pattern.rs``; ``pre_tokenizers/*.rs``); :func:`apply_steps` runs
them over pieces. A piece is ``(text, start, lead)``: ``start`` is where it begins in the
normalized text, ``lead`` how many characters at its front were added (ByteLevel's prefix
space). What it leaves out: normalizers, added tokens and merging (``pipeline``), and other
pre-tokenizers (Punctuation: its Unicode tables are older than ours; Metaspace,
BertPreTokenizer, ...: refused by the reader).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import regex

from ...pretokenization.names import GPT2_PATTERN
from ...pretokenization.scan_patterns import isolated
from .flags import json_flag
from .onig import find_spans, translate

Piece = tuple[str, int, int]  # text, start in the normalized text, characters added in front
Finder = Callable[[str], Iterable[tuple[int, int]]]
BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
# Rust's char::is_numeric and char::is_whitespace.
_NUMERIC = regex.compile(r"\p{N}")
_SPACE = regex.compile(r"\s")
# tokenizers' Whitespace: Rust regex \w+|[^\w\s]+ (Rust's \w adds Join_Control to regex's).
_WORDS = regex.compile(
    r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}\s]+"
)
_BYTE_LEVEL = regex.compile(GPT2_PATTERN)


def _nothing(text: str) -> Iterable[tuple[int, int]]:
    """A pattern that never matches (ByteLevel without its regex, a Split by "")."""
    return ()


def _char_finder(compiled: regex.Pattern[str]) -> Finder:
    """Each character the class matches is a match of its own (``Fn(char) -> bool``)."""
    return lambda text: (m.span() for m in compiled.finditer(text))


def findall_of(compiled: regex.Pattern[str]) -> Callable[[str], list[str]]:
    """The matches of ``compiled`` in a text, each whole even where the regex has groups (its
    ``findall`` would give the groups' text instead: a file's Split may capture).

    >>> findall_of(regex.compile(r"(a)|b"))("xab")
    ['a', 'b']
    """
    if not compiled.groups:
        return compiled.findall
    return lambda text: [m.group() for m in compiled.finditer(text)]


def find_matches(find: Finder, text: str, invert: bool) -> list[tuple[int, int, bool]]:
    """``Pattern::find_matches``: the text cut into matches and the gaps between them."""
    if not text:
        return [(0, 0, invert)]
    out: list[tuple[int, int, bool]] = []
    prev = 0
    for s, e in find(text):
        if prev != s:
            out.append((prev, s, invert))
        out.append((s, e, not invert))
        prev = e
    if prev != len(text):
        out.append((prev, len(text), invert))
    return out


def split_offsets(matches: list[tuple[int, int, bool]], behavior: str) -> list[tuple[int, int]]:
    """``NormalizedString::split``: the pieces ``behavior`` keeps, empty ones included."""
    if behavior == "Isolated":
        return [(s, e) for s, e, _ in matches]
    if behavior == "Removed":
        return [(s, e) for s, e, is_match in matches if not is_match]
    acc: list[list[int]] = []
    previous = False
    if behavior == "MergedWithNext":
        for s, e, is_match in reversed(matches):
            if is_match and not previous and acc:
                acc[-1][0] = s
            else:
                acc.append([s, e])
            previous = is_match
        acc.reverse()
    else:
        contiguous = behavior == "Contiguous"
        for s, e, is_match in matches:
            joins = is_match == previous if contiguous else is_match and not previous
            if joins and acc:
                acc[-1][1] = e
            else:
                acc.append([s, e])
            previous = is_match
    return [(s, e) for s, e in acc]


@dataclass(frozen=True)
class Step:
    """One pre-tokenizer: cuts each piece where ``find`` matches, as ``behavior`` says;
    ``prefix_space``: first give a piece not starting with a space one (ByteLevel's)."""

    find: Finder
    behavior: str
    invert: bool = False
    prefix_space: bool = False
    # Isolated and not inverted with a pattern that never matches "": the pieces are this
    # regex's findall (matches and the gaps between them), done in C.
    whole: regex.Pattern[str] | None = None
    pattern: str = ""  # the regex it splits with, in the regex module's syntax, if any
    # Removed and inverted with a pattern that never matches "": the pieces are this regex's
    # matches alone (the text between them is dropped), done in C.
    kept: regex.Pattern[str] | None = None

    @property
    def passes_whole(self) -> bool:
        """Whether the step leaves every piece as it is: it never matches and keeps what is
        between matches (ByteLevel without its regex and prefix space, a Split by "")."""
        dropped = self.invert and self.behavior == "Removed"
        return self.find is _nothing and not self.prefix_space and not dropped

    def split(self, piece: Piece) -> list[Piece]:
        text, start, lead = piece
        if self.prefix_space and not text.startswith(" "):
            text, lead = " " + text, lead + 1
        if self.whole is not None:
            parts = findall_of(self.whole)(text)
            out, at = [], 0
            for part in parts:
                out.append((part, start + max(at - lead, 0), max(lead - at, 0)))
                at += len(part)
            return out
        if self.kept is not None:
            offsets: Iterable[tuple[int, int]] = (m.span() for m in self.kept.finditer(text))
        else:
            offsets = split_offsets(find_matches(self.find, text, self.invert), self.behavior)
        pieces = []
        for s, e in offsets:
            if e > s:
                pieces.append((text[s:e], start + max(s - lead, 0), min(max(lead - s, 0), e - s)))
        return pieces


def step_texts(steps: list[Step], text: str) -> list[str]:
    """The pieces of ``text`` after every step, as strings only (what encoding needs; a
    step that splits with one regex is one ``findall`` per piece)."""
    pieces = [text] if text else []
    for step in steps:
        # subtle: every piece is non-empty here (no step keeps an empty one), so a step
        # that never cuts (ByteLevel without its regex) leaves them all as they are.
        if step.passes_whole:
            continue
        one = step.whole if step.whole is not None else step.kept
        if one is not None and not step.prefix_space:
            findall = findall_of(one)
            pieces = [p for piece in pieces for p in findall(piece)]
        else:
            pieces = [p[0] for piece in pieces for p in step.split((piece, 0, 0))]
    return pieces


def apply_steps(steps: list[Step], pieces: list[Piece]) -> list[Piece]:
    """The pieces after every step, in order (empty pieces dropped, as ``tokenizers`` does)."""
    pieces = [p for p in pieces if p[0]]
    for step in steps:
        if not step.passes_whole:  # it would give each (non-empty) piece back as it is
            pieces = [p for piece in pieces for p in step.split(piece)]
    return pieces


def _regex_step(pattern: str, behavior: str, invert: bool, prefix: bool = False) -> Step:
    t = translate(pattern)
    compiled = regex.compile(t.pattern)
    whole = kept = None
    # subtle: written twice in one regex, a backreference's copy would refer to the first
    # copy's group; such a Split cuts with ``find`` instead.
    if behavior == "Isolated" and not invert and not t.nullable and not t.refers_back:
        whole = regex.compile(isolated(t.pattern))
    if behavior == "Removed" and invert and not t.nullable:
        kept = compiled
    find = lambda text: find_spans(compiled, text)  # noqa: E731
    return Step(find, behavior, invert, prefix, whole, t.pattern, kept)


def _byte_level(obj: Mapping[str, Any], where: str) -> Step:
    prefix = json_flag(obj, "add_prefix_space", where)
    json_flag(obj, "trim_offsets", where)  # offsets only, but tokenizers requires it
    if json_flag(obj, "use_regex", where, default=True):
        whole = regex.compile(isolated(GPT2_PATTERN))
        return Step(lambda t: (m.span() for m in _BYTE_LEVEL.finditer(t)), "Isolated",
                    prefix_space=prefix, whole=whole)  # fmt: skip
    return Step(_nothing, "Isolated", prefix_space=prefix)


def _one(obj: Any, where: str, last: bool) -> list[Step]:
    kind = obj.get("type") if isinstance(obj, dict) else None
    behavior = str(obj.get("behavior")) if isinstance(obj, dict) else ""
    if kind in ("Split", "Punctuation") and behavior not in BEHAVIORS:
        raise ValueError(f"{where}: behavior {behavior!r} is not one of {', '.join(BEHAVIORS)}")
    assert isinstance(obj, dict) or kind is None
    if kind == "ByteLevel":
        if not last:
            raise ValueError(f"{where}: ByteLevel must come last (later steps would see bytes)")
        return [_byte_level(obj, where)]
    if kind == "Split":
        pat = obj.get("pattern")
        invert = json_flag(obj, "invert", where)
        if isinstance(pat, dict) and isinstance(pat.get("String"), str):
            literal = regex.compile(regex.escape(pat["String"]))
            find = (
                (lambda t: (m.span() for m in literal.finditer(t))) if pat["String"] else _nothing
            )
            return [Step(find, behavior, invert)]
        if not isinstance(pat, dict) or not isinstance(pat.get("Regex"), str):
            raise ValueError(f"{where}: pattern must be a String or a Regex, got {pat!r}")
        try:
            return [_regex_step(pat["Regex"], behavior, invert)]
        except ValueError as e:
            raise ValueError(f"{where}: pattern {pat['Regex']!r}: {e}") from None
    if kind == "Digits":
        if json_flag(obj, "individual_digits", where):
            # Each digit alone, and the runs between: an Isolated Split by \p{N}, one regex.
            whole = regex.compile(isolated(_NUMERIC.pattern))
            return [Step(_char_finder(_NUMERIC), "Isolated", whole=whole, pattern=_NUMERIC.pattern)]
        return [Step(_char_finder(_NUMERIC), "Contiguous")]
    if kind == "Punctuation":
        # subtle: its punctuation is the unicode_categories crate's (an old Unicode), which
        # differs from this Python's on about a hundred characters (U+061D, U+2E43, ...).
        raise ValueError(
            f"{where}: Punctuation's character tables (an old Unicode version) "
            "cannot be reproduced exactly here"
        )
    if kind == "WhitespaceSplit":
        return [Step(_char_finder(_SPACE), "Removed")]
    if kind == "Whitespace":
        words = lambda t: (m.span() for m in _WORDS.finditer(t))  # noqa: E731
        return [Step(words, "Removed", invert=True, kept=_WORDS)]
    raise ValueError(f"{where}: {kind or obj!r} is not byte-level BPE (it is not supported here)")


def pre_tokenizer_steps(obj: Any, where: str = "pre_tokenizer") -> list[Step]:
    """The steps of a ``pre_tokenizer`` object; it must end in ByteLevel (the bytes are what
    the model merges). Raises ValueError naming the component."""
    kind = obj.get("type") if isinstance(obj, dict) else None
    if kind == "Sequence":
        items = obj.get("pretokenizers")
        if not isinstance(items, list):
            raise ValueError(f"{where}.pretokenizers: expected a list, got {items!r:.80}")
        steps: list[Step] = []
        for i, item in enumerate(items):
            steps += _one(item, f"{where}.pretokenizers[{i}]", i == len(items) - 1)
        last = items[-1].get("type") if items and isinstance(items[-1], dict) else None
    else:
        steps, last = _one(obj, where, True), kind
    if last != "ByteLevel":
        raise ValueError(f"{where}: does not end in ByteLevel, so the model would not see bytes")
    return steps
