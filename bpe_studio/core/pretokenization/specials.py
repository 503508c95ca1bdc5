"""Special tokens: validation, longest-first matching, and splitting text around them.

What it does: :class:`Specials` is the one matcher every caller uses (corpus counting, the
tokenizer's encode/stream/spans, the editor's pieces, file chunking). A special token is
matched wherever it occurs, scanning left to right; where several begin at the same place the
longest wins (with ``<|endoftext|>`` and ``<|endoftext|><|endoftext|>`` both special, the
double one is one token). :func:`first_free_start` tells where in raw file bytes a chunk may
end just before a special token. What it leaves out: pre-tokenizing the text between special
tokens (``pretokenizer``), and the pattern's own cut rules (``boundaries``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import accumulate
from typing import Literal

import regex

# The special token a new training run gets unless told otherwise, in the app and the CLI.
DEFAULT_SPECIAL_TOKEN = "<|endoftext|>"
# The forms of the special tokens in use: "<|endoftext|>", "<|im_start|>", "<s>", "</s>",
# "<pad>" (angle brackets); "[CLS]", "[SEP]", "[unused0]" (square brackets); no whitespace
# inside. Where a file gives no list, only vocabulary entries of these forms are taken for
# special tokens (``gpt2.infer_special_tokens``).
_LOOKS_SPECIAL = regex.compile(r"<[^\s<>]+>|\[[^\s\[\]]+\]")


def looks_special(token: str) -> bool:
    """Whether ``token`` has the form of a special token: ``<...>`` or ``[...]`` with no
    whitespace nor bracket of the kind inside (``"<|a|><|b|>"`` is two such tokens).

    >>> looks_special("<|endoftext|>"), looks_special("[CLS]"), looks_special("ment")
    (True, True, False)
    """
    return _LOOKS_SPECIAL.fullmatch(token) is not None


def validate_special_tokens(
    special_tokens: Iterable[str] | None, *, ordered: bool = True
) -> list[str]:
    """Return the special tokens in the given order with duplicates dropped; reject empty ones.

    Every entry point that takes special tokens (training, ``Tokenizer``, loading) comes
    through here. A bare string is refused rather than read as one token per character, and,
    unless ``ordered`` is False (a set of tokens to allow or refuse, where no id follows the
    order), a set, whose order (so the ids) would change from one run to the next:

    >>> validate_special_tokens("<s>")
    Traceback (most recent call last):
    ...
    TypeError: special tokens must be a list of strings, not the str '<s>' (write ['<s>'])
    """
    if isinstance(special_tokens, (str, bytes, bytearray)):
        shown = repr(special_tokens)[:60]
        hint = f" (write [{shown}])" if isinstance(special_tokens, str) else ""
        raise TypeError(
            f"special tokens must be a list of strings, not the {type(special_tokens).__name__} "
            f"{shown}{hint}"
        )
    if ordered and isinstance(special_tokens, (set, frozenset)):
        # Their ids follow their order, and a set's changes from run to run (hash seeds).
        shown = repr(sorted(special_tokens, key=str))[:80]
        raise TypeError(
            "special tokens must be given in an order (a list or tuple): their ids follow it, "
            f"and a set's order changes from one run to the next (write {shown})"
        )
    seen: dict[str, None] = {}
    for tok in special_tokens or ():
        if not isinstance(tok, str):
            raise TypeError(f"special tokens must be str, got {tok!r}")
        if tok == "":
            raise ValueError("a special token must not be empty")
        try:
            tok.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(_surrogate_in(tok, e.start)) from None
        seen.setdefault(tok, None)
    return list(seen)


def _surrogate_in(token: str, at: int) -> str:
    """Why ``token``, holding a surrogate at ``at``, cannot be a special token: a pair is
    the character it stands for written in two halves; a lone one, bytes of a name that are
    not UTF-8 (a C locale's)."""
    try:
        joined = token.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        joined = None  # a lone one
    if joined is not None:
        return (
            f"special token {token!r}: holds a surrogate pair (U+{ord(token[at]):04X} at "
            f"character {at}), which no UTF-8 text holds: write the character itself, "
            f"{joined!r}"
        )
    return (
        f"special token {token!r}: holds a lone surrogate (U+{ord(token[at]):04X} at character "
        f"{at}), which no UTF-8 text holds (given as bytes that are not UTF-8, from a C locale?)"
    )


def refuse_single_bytes(special_tokens: Iterable[str]) -> None:
    """ValueError naming the first special token that is a single byte (``"a"``, ``"\\n"``).

    Byte-level BPE holds every byte as a token of its own (ids 0..255 in a trained
    vocabulary), so such a special token would either take that byte's id (every occurrence
    of the byte in text would then be cut out and never merged, with the same id as before)
    or hold the same bytes as the byte token under a second id, which neither ``vocab.json``
    nor ``tokenizer.json`` can store (``tokenizers`` gives an added token the id of the
    vocabulary entry with its text). Training and ``Tokenizer(..., special_tokens=[...])``
    refuse it before any work; explicit ids (``special_tokens={"a": 256}``, as tiktoken
    takes them, or a ``tokenizer.json``'s own added tokens) are kept as given.

    >>> refuse_single_bytes(["<|endoftext|>", "\u00e9"])  # two bytes in UTF-8: fine
    >>> refuse_single_bytes(["a"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: special token 'a' is a single byte (0x61), which byte-level BPE ... such as '<a>'
    """
    for token in special_tokens:
        data = token.encode("utf-8", "surrogatepass")
        if len(data) == 1:
            example = f"<{token}>" if token.isalnum() else "<|sep|>"
            raise ValueError(
                f"special token {token!r} is a single byte (0x{data[0]:02x}), which byte-level "
                "BPE already holds as a token of its own (a byte's id, 0..255 in a trained "
                "vocabulary): it cannot have an id of its own; use a longer token such as "
                f"{example!r}"
            )


def tiktoken_allowed(
    ours: Sequence[str],
    text: str,
    allowed_special: AbstractSet[str] | Literal["all"] | None,
    disallowed_special: Collection[str] | Literal["all"] | None,
) -> frozenset[str] | None:
    """Which of the special tokens ``ours`` an ``encode`` of ``text`` matches as special:
    None (all of them, CS336's rule) when neither argument is given. Else tiktoken's rules:
    those in ``allowed_special`` ("all", or a set; default none; strings that are not among
    ``ours`` are ignored, as tiktoken does); and a string of ``disallowed_special`` ("all",
    the default: every special token not allowed; or a collection of strings) found in
    ``text`` raises ValueError naming it and where."""
    if allowed_special is None and disallowed_special is None:
        return None
    if allowed_special == "all":
        allowed = set(ours)
    elif isinstance(allowed_special, (str, bytes, bytearray)):
        allowed = set(validate_special_tokens(allowed_special, ordered=False))  # str: refused
    else:
        # "" is one more string that is none of ours, which tiktoken ignores.
        given = [t for t in allowed_special or () if t != ""]
        allowed = set(validate_special_tokens(given, ordered=False))
    if disallowed_special is None or disallowed_special == "all":
        disallowed = [t for t in ours if t not in allowed]
    else:
        disallowed = validate_special_tokens(disallowed_special, ordered=False)
    found = Specials.of(disallowed).regex
    hit = found.search(text) if found is not None else None
    if hit is not None:
        where = f"text holds {hit.group()!r} at character {hit.start()}, a special token"
        if hit.group() in allowed:
            # tiktoken raises too; its advice (allow it) would be what the caller did already.
            raise ValueError(
                f"{where} both allowed_special and disallowed_special name: leave it out of "
                "disallowed_special to encode it as a special token"
            )
        raise ValueError(
            f'{where} not allowed here: pass allowed_special={{{hit.group()!r}}} (or "all") to '
            "encode it as a special token, or disallowed_special=() to encode it as ordinary text"
        )
    return frozenset(allowed.intersection(ours))


@dataclass(frozen=True)
class Specials:
    """Validated special tokens and their longest-first pattern.

    ``ordinary``: tokens matched with the others but read as ordinary text, as ``tokenizers``
    reads a special token with encode_special_tokens on: its match is skipped, not searched
    again, so a token inside it is not found (``<|a|>`` in ``x<|a|>`` with ``x<|a`` ordinary).

    >>> s = Specials.of(["<s>", "<s><s>"])
    >>> list(s.segments("a<s><s><s>b"))
    [(0, 1, '<s><s>'), (7, 7, '<s>'), (10, 11, None)]
    >>> s.split("a<s><s><s>b")
    ['a', '', 'b']
    >>> Specials.of(["<t>"], ordinary=["<|x<t>"]).cut("<|x<t><t>")
    ['<|x<t>', '<t>', '']
    """

    tokens: tuple[str, ...]
    # None when there are no tokens to match: callers then skip matching altogether.
    regex: regex.Pattern[str] | None
    longest: int  # characters in the longest token, ordinary ones too (0 when there are none)
    # The same alternation in a group: its split keeps the tokens it matched.
    kept: re.Pattern[str] | None = None
    ordinary: frozenset[str] = frozenset()

    @classmethod
    def of(cls, special_tokens: Iterable[str] | None, ordinary: Iterable[str] = ()) -> Specials:
        tokens = tuple(validate_special_tokens(special_tokens))
        skipped = frozenset(validate_special_tokens(list(ordinary))) - set(tokens)
        if not tokens:
            return cls((), None, 0)
        # subtle: alternation tries alternatives in order, so longest first makes the longest
        # token win among those starting at the same place.
        ordered = sorted([*tokens, *sorted(skipped)], key=len, reverse=True)
        alternation = "|".join(regex.escape(t) for t in ordered)
        pattern = regex.compile(alternation)
        # subtle: the standard library's re splits a text dense with special tokens in two
        # thirds of regex's time; for an alternation of literals both match alike.
        kept = re.compile("(" + "|".join(map(re.escape, ordered)) + ")")
        return cls(tokens, pattern, len(ordered[0]), kept, skipped)

    def __bool__(self) -> bool:
        return bool(self.tokens)

    @property
    def every(self) -> tuple[str, ...]:
        """The tokens matched, ordinary ones included (what a cut must not fall inside)."""
        return self.tokens + tuple(sorted(self.ordinary))

    def cut(self, text: str, start: int = 0, end: int | None = None) -> list[str]:
        """``text[start:end]`` cut at its special tokens: the stretches of ordinary text and the
        tokens in turn, ``[text, token, text, ..., text]`` (always an odd number of parts)."""
        part = text if start == 0 and end in (None, len(text)) else text[start:end]
        if self.kept is None:
            return [part]
        # subtle: one split in C, not a match object per token: texts with a special token
        # every few characters (chat transcripts, packed documents) spent most of their
        # encoding time in match objects.
        parts = self.kept.split(part)
        if not self.ordinary or len(parts) == 1:
            return parts
        # An ordinary token's match joins the text around it.
        out = [parts[0]]
        for i in range(1, len(parts), 2):
            if parts[i] in self.ordinary:
                out[-1] += parts[i] + parts[i + 1]
            else:
                out += parts[i : i + 2]
        return out

    def segments(
        self, text: str, start: int = 0, end: int | None = None
    ) -> Iterator[tuple[int, int, str | None]]:
        """``(a, b, special)`` for each stretch ``text[a:b]`` of ordinary text in
        ``text[start:end]`` and the special token that follows it; the last has None."""
        stop = len(text) if end is None else end
        parts = self.cut(text, start, stop)
        if len(parts) == 1:
            yield start, stop, None
            return
        # Where each part begins: a stretch of text at every even place, a token at every odd.
        at = list(accumulate(map(len, parts), initial=start))
        specials: list[str | None] = [*parts[1::2], None]
        yield from zip(at[0::2], at[1::2], specials)

    def split(self, text: str) -> list[str]:
        """The stretches of ordinary text between special tokens (the tokens dropped)."""
        return self.cut(text)[0::2]

    def spans(self, text: str, every: bool = False) -> list[tuple[int, int]]:
        """``(start, end)`` of each special token matched in ``text``, in order; ``every``:
        the matches of ordinary tokens too."""
        if self.regex is None:
            return []
        if every or not self.ordinary:
            return [m.span() for m in self.regex.finditer(text)]
        return [m.span() for m in self.regex.finditer(text) if m.group() not in self.ordinary]

    def encoded(self, every: bool = False) -> list[bytes]:
        """The special tokens as UTF-8 bytes (what file chunking cuts before); ``every``: the
        ordinary ones too (what a cut must not fall inside)."""
        return [t.encode("utf-8") for t in (self.every if every else self.tokens)]


def matcher(added: Sequence[str], allowed: Sequence[str], specials: Sequence[str]) -> Specials:
    """What an encode matches: the special tokens ``allowed`` and the added tokens that are
    not special, ``added``. With such tokens the other ``specials`` are matched too, as
    ordinary text: ``tokenizers`` looks for all its added tokens in one pass and skips the
    match of a special token it is told to encode as text (encode_special_tokens), so a
    token inside that match is not found. Without them, tiktoken's rule: only the allowed."""
    if not added:
        return Specials.of(allowed)
    return Specials.of([*added, *allowed], [t for t in specials if t not in allowed])


def first_free_start(
    window: bytes,
    start: int,
    end: int,
    specials: Sequence[bytes],
    covering: Sequence[bytes] | None = None,
) -> int:
    """The first index in ``[start, end)`` of ``window`` where a special token begins and no
    occurrence of a special token (or of one of ``covering``, when given: the ordinary tokens
    matched too, ``Specials.ordinary``) that begins earlier runs across it, or -1.

    Cutting a file just before such an index cannot change how special tokens are matched,
    whatever text lies outside ``window``: no match can straddle it, and matching on the right
    starts there afresh, as it does in the whole text. subtle: with "<|endoftext|>" and
    "<|endoftext|><|endoftext|>" both special, the start of the second half of the double
    token is no place to cut.
    """
    pos = start
    cover = specials if covering is None else covering
    while True:
        hits = [h for h in (window.find(s, pos, end + len(s) - 1) for s in specials) if h >= 0]
        if not hits:
            return -1
        h = min(hits)
        covered = any(
            0 <= window.find(s, max(h - len(s) + 1, 0), h + len(s) - 1) < h for s in cover
        )
        if not covered:
            return h
        pos = h + 1
