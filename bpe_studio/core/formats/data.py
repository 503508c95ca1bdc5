"""The record every format reader returns and every writer takes, and the named patterns.

What it does: :class:`TokenizerData` holds a byte-level BPE tokenizer as plain data (ids kept
as the file gave them); :data:`PATTERNS` holds the three pre-tokenization regexes tiktoken
publishes, by the names this project uses. What it leaves out: compiling or applying patterns
(``pattern``), and checking that a record is consistent (each writer checks what it needs).
"""

from __future__ import annotations

from dataclasses import dataclass

# The regex strings as tiktoken publishes them (tiktoken_ext/openai_public.py): r50k_base's
# (GPT-2's pattern, written with possessive quantifiers), cl100k_base's and o200k_base's.
PATTERNS: dict[str, str] = {
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "cl100k": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
        r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}


def pattern_name(pattern: str) -> str:
    """``pattern`` itself when it is a name, the name when it is one of the named regexes
    verbatim, else the regex unchanged."""
    for name, regex in PATTERNS.items():
        if pattern == regex:
            return name
    return pattern


def pattern_regex(pattern: str) -> str:
    """The regex string for a name in :data:`PATTERNS`, else ``pattern`` unchanged."""
    return PATTERNS.get(pattern, pattern)


@dataclass(frozen=True)
class TokenizerData:
    """A byte-level BPE tokenizer as a file describes it.

    - ``vocab``: id -> token bytes, every id the tokenizer can emit, special tokens included
      (as their UTF-8 bytes), so ``vocab[special_tokens[s]] == s.encode()``.
    - ``merges``: ``(left, right)`` in priority order (the first applies first); each joins two
      vocabulary tokens into a third. Special tokens take part in none.
    - ``special_tokens``: special token string -> its id.
    - ``pattern``: a name in :data:`PATTERNS` (``"gpt2"``, ``"cl100k"``, ``"o200k"``) or a
      regex string, applied with ``findall`` semantics (text no match covers is dropped).

    >>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    >>> TokenizerData(vocab, [(b"a", b"b")], {}, "gpt2").merges
    [(b'a', b'b')]
    """

    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    special_tokens: dict[str, int]
    pattern: str
