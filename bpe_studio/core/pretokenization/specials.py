"""Special tokens: validation, longest-first matching, and splitting text around them.

What it does: :class:`Specials` is the one matcher every caller uses (corpus counting, the
tokenizer's encode/stream/spans, the editor's pieces, file chunking). A special token is
matched wherever it occurs, scanning left to right; where several begin at the same place the
longest wins (with ``<|endoftext|>`` and ``<|endoftext|><|endoftext|>`` both special, the
double one is one token). :func:`first_free_start` tells where in raw file bytes a chunk may
end just before a special token. What it leaves out: pre-tokenizing the text between special
tokens (``pattern``), and the pattern's own cut rules (``boundaries``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import regex

# The special token a new training run gets unless told otherwise, in the app and the CLI.
DEFAULT_SPECIAL_TOKEN = "<|endoftext|>"
# The forms of the special tokens in use: "<|endoftext|>", "<|im_start|>", "<s>", "</s>",
# "<pad>" (angle brackets); "[CLS]", "[SEP]", "[unused0]" (square brackets); no whitespace
# inside. Where a file gives no list, only vocabulary entries of these forms are taken for
# special tokens (``gpt2_format.infer_special_tokens``).
_LOOKS_SPECIAL = regex.compile(r"<[^\s<>]+>|\[[^\s\[\]]+\]")


def looks_special(token: str) -> bool:
    """Whether ``token`` has the form of a special token: ``<...>`` or ``[...]`` with no
    whitespace inside.

    >>> looks_special("<|endoftext|>"), looks_special("[CLS]"), looks_special("ment")
    (True, True, False)
    """
    return _LOOKS_SPECIAL.fullmatch(token) is not None


def validate_special_tokens(special_tokens: Iterable[str] | None) -> list[str]:
    """Return the special tokens in the given order with duplicates dropped; reject empty ones.

    Every entry point that takes special tokens (training, ``Tokenizer``, loading) comes
    through here. A bare string is refused rather than read as one token per character:

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
    seen: dict[str, None] = {}
    for tok in special_tokens or ():
        if not isinstance(tok, str):
            raise TypeError(f"special tokens must be str, got {tok!r}")
        if tok == "":
            raise ValueError("a special token must not be empty")
        seen.setdefault(tok, None)
    return list(seen)


@dataclass(frozen=True)
class Specials:
    """Validated special tokens and their longest-first pattern.

    >>> s = Specials.of(["<s>", "<s><s>"])
    >>> list(s.segments("a<s><s><s>b"))
    [(0, 1, '<s><s>'), (7, 7, '<s>'), (10, 11, None)]
    >>> s.split("a<s><s><s>b")
    ['a', '', 'b']
    """

    tokens: tuple[str, ...]
    # None when there are no special tokens: callers then skip matching altogether.
    regex: regex.Pattern[str] | None
    longest: int  # characters in the longest special token (0 when there are none)

    @classmethod
    def of(cls, special_tokens: Iterable[str] | None) -> Specials:
        tokens = tuple(validate_special_tokens(special_tokens))
        if not tokens:
            return cls((), None, 0)
        # subtle: alternation tries alternatives in order, so longest first makes the longest
        # token win among those starting at the same place.
        ordered = sorted(tokens, key=len, reverse=True)
        pattern = regex.compile("|".join(regex.escape(t) for t in ordered))
        return cls(tokens, pattern, len(ordered[0]))

    def __bool__(self) -> bool:
        return bool(self.tokens)

    def segments(
        self, text: str, start: int = 0, end: int | None = None
    ) -> Iterator[tuple[int, int, str | None]]:
        """``(a, b, special)`` for each stretch ``text[a:b]`` of ordinary text in
        ``text[start:end]`` and the special token that follows it; the last has None."""
        stop = len(text) if end is None else end
        pos = start
        if self.regex is not None:
            for m in self.regex.finditer(text, start, stop):
                yield pos, m.start(), m.group()
                pos = m.end()
        yield pos, stop, None

    def split(self, text: str) -> list[str]:
        """The stretches of ordinary text between special tokens (the tokens dropped)."""
        if self.regex is None:
            return [text]
        return self.regex.split(text)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of each special token matched in ``text``, in order."""
        if self.regex is None:
            return []
        return [m.span() for m in self.regex.finditer(text)]

    def encoded(self) -> list[bytes]:
        """The special tokens as UTF-8 bytes (what file chunking searches for)."""
        return [t.encode("utf-8") for t in self.tokens]


def first_free_start(window: bytes, start: int, end: int, specials: Sequence[bytes]) -> int:
    """The first index in ``[start, end)`` of ``window`` where a special token begins and no
    occurrence of a special token that begins earlier runs across it, or -1.

    Cutting a file just before such an index cannot change how special tokens are matched,
    whatever text lies outside ``window``: no match can straddle it, and matching on the right
    starts there afresh, as it does in the whole text. subtle: with "<|endoftext|>" and
    "<|endoftext|><|endoftext|>" both special, the start of the second half of the double
    token is no place to cut.
    """
    pos = start
    while True:
        hits = [h for h in (window.find(s, pos, end + len(s) - 1) for s in specials) if h >= 0]
        if not hits:
            return -1
        h = min(hits)
        covered = any(
            0 <= window.find(s, max(h - len(s) + 1, 0), h + len(s) - 1) < h for s in specials
        )
        if not covered:
            return h
        pos = h + 1
