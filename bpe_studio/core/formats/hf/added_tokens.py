"""Added tokens of a ``tokenizer.json`` with their flags, and where a text holds them.

What it does: :class:`AddedToken` is one entry of ``added_tokens`` (``special``, ``lstrip``,
``rstrip``, ``single_word``, ``normalized``); :func:`find_added` cuts a text into stretches and
added-token matches as ``tokenizers`` does (``tokenizer/added_vocabulary.rs``, ``find_matches``):
leftmost-longest matches, a ``single_word`` token dropped (not retried) where a word character
touches it, ``lstrip``/``rstrip`` taking the whitespace beside the match into the token.
:func:`read_added` reads the ``added_tokens`` list. What it leaves out: normalizing
(``normalizers``; the pipeline matches ``normalized`` tokens in normalized text) and reading
the rest of the JSON (``components``, ``tokenizer_json``).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import regex

from .normalizers import EditsOf, normalize

# The Rust regex crate's \w and \s (tokenizers matches these with it, not with Oniguruma).
_WORD_START = regex.compile(r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]")
_SPACE = regex.compile(r"\s")
_SPACES_AFTER = regex.compile(r"\s*")
_FLAGS = ("special", "lstrip", "rstrip", "single_word", "normalized")
# The largest id tokenizers reads (a u32).
_MAX_ID = 2**32 - 1


class EmptyAddedToken(ValueError):
    """A ``normalized`` added token its normalizer makes nothing of: refused everywhere,
    as ``foreign`` refuses it for a file ``tokenizers`` runs (tokenizers hangs on texts
    around it), so no file holding one is handed to ``tokenizers``."""


@dataclass(frozen=True)
class AddedToken:
    """One added token as the file gives it; ``match`` is the text it is found as (its
    content, normalized when ``normalized`` is true and the file has a normalizer)."""

    content: str
    id: int
    special: bool = True
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False
    normalized: bool = False
    match: str = ""

    @property
    def plain(self) -> bool:
        """Matched as its content alone, as this project's special tokens are."""
        return not (self.lstrip or self.rstrip or self.single_word)


def matcher(
    tokens: Iterable[AddedToken],
) -> tuple[regex.Pattern[str] | None, dict[str, AddedToken]]:
    """A leftmost-longest pattern over the tokens' match strings, and the token of each."""
    by_match = {t.match or t.content: t for t in tokens}
    if not by_match:
        return None, by_match
    ordered = sorted(by_match, key=len, reverse=True)
    return regex.compile("|".join(map(regex.escape, ordered))), by_match


def find_added(
    text: str,
    pattern: regex.Pattern[str] | None,
    by_match: dict[str, AddedToken],
    hidden: Collection[str] = (),
) -> Iterator[tuple[int, int, AddedToken | None]]:
    """``(start, end, token)`` covering ``text`` in order; ``token`` None for ordinary text.
    A match of a token of ``hidden`` (contents) is skipped, as ``tokenizers`` skips a
    special token's with encode_special_tokens: its text stays ordinary text and is not
    searched again.

    subtle: as in ``tokenizers``, a match stretched by ``rstrip`` does not move where the
    search goes on, so a later match may begin inside the taken whitespace."""
    if pattern is None:
        yield 0, len(text), None
        return
    offset = 0
    for m in pattern.finditer(text):
        start, stop = m.span()
        token = by_match[m.group()]
        if token.content in hidden:
            continue
        if token.single_word:
            before = start > 0 and _WORD_START.match(text, start - 1) is not None
            after = stop < len(text) and _WORD_START.match(text, stop) is not None
            if before or after:
                continue
        if token.lstrip:
            j = start
            while j > 0 and _SPACE.match(text, j - 1):
                j -= 1
            start = max(j, offset)
        if token.rstrip:
            stop = _SPACES_AFTER.match(text, stop).end()  # type: ignore[union-attr]
        if stop <= start:
            # A whitespace token's match inside the run an earlier one's rstrip took, pulled
            # by its lstrip to that run's end: tokenizers drops the empty split it makes.
            continue
        if offset < start:
            yield offset, start, None
        yield start, stop, token
        offset = stop
    if offset != len(text):
        yield offset, len(text), None


def read_added(raw: Any, normalizers: list[EditsOf], name: str) -> tuple[AddedToken, ...]:
    """The ``added_tokens`` of a file (``name``, for messages), each matched as the file
    says (normalized by ``normalizers`` when its flag asks). Raises ValueError naming the
    entry."""
    tokens = []
    for i, added in enumerate(raw or []):
        where = f"{name}: added_tokens[{i}]"
        if not isinstance(added, dict):
            raise ValueError(f"{where}: expected an object, got {added!r:.80}")
        content, idx = added.get("content"), added.get("id")
        if not isinstance(content, str) or not content:
            raise ValueError(f"{where}: content must be a non-empty string, got {content!r:.80}")
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx <= _MAX_ID:
            # subtle: past that, tokenizers refuses the file, and a colliding id here would
            # be renumbered as tokenizers renumbers one it reads, as if the file were fine.
            raise ValueError(
                f"{where}: {content!r}: id must be an integer from 0 to {_MAX_ID:,} (as "
                f"tokenizers reads one), got {idx!r}"
            )
        flags = {f: _flag(added, f, f"{where}.{f}", content) for f in _FLAGS}
        match = normalize(normalizers, content) if flags["normalized"] else content
        if not match:
            raise EmptyAddedToken(
                f"{name}: added token {content!r} is normalized and its normalizer makes "
                "nothing of it: tokenizers panics, or hangs until memory runs out, on texts "
                'around such a token; set its "normalized" to false in the file, or remove it'
            )
        tokens.append(AddedToken(content, idx, match=match, **flags))
    return tuple(tokens)


def _flag(added: dict[str, Any], flag: str, where: str, content: str) -> bool:
    """The ``flag`` of an added token (``added``; ``where``, the entry's key, for messages):
    tokenizers requires each of the five, a JSON boolean ("false" as a string would be true
    to ``bool``, a missing ``special`` would need a default tokenizers has not)."""
    value = added.get(flag)
    if not isinstance(value, bool):
        if flag not in added:
            raise ValueError(
                f"{where}: {content!r}: missing; tokenizers requires it (true or false)"
            )
        got = json.dumps(value, ensure_ascii=False)
        raise ValueError(
            f"{where}: {content!r}: must be true or false, as tokenizers requires; got {got}"
        )
    return value
