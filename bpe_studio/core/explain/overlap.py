"""How much two vocabularies share, by the tokens' bytes.

What it does: :func:`overlap` compares the ordinary tokens of two
:class:`~.vocabulary.TokenTable` by their bytes (so ids, and how each file writes a token, do
not matter: Llama 2's "▁the" is GPT-2's " the"): how many byte strings both hold, how many
only one, overall and per category. Two entries of one vocabulary with the same bytes count
once. A byte string's category is the make-up's of its bytes (``categories.classify``), the
same whichever vocabulary comes first; ``byte fallback`` only where each vocabulary holding
it holds it as ``<0xNN>`` tokens alone (Llama 2's ``<0xE4>`` against o200k's byte is
``partial``; its ``<0x41>`` beside its ``A`` is ``Latin``).
What it leaves out: special tokens (each model names its own), anything drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

from .categories import BYTE_FALLBACK, CATEGORIES
from .vocabulary import TokenTable


@dataclass(frozen=True)
class Shares:
    """Distinct byte strings held by both vocabularies, only the first, only the second."""

    shared: int
    only_this: int
    only_other: int


@dataclass(frozen=True)
class Overlap:
    """``total`` and ``categories`` (name -> :class:`Shares`, the largest first), and the
    byte strings themselves: ``shared_tokens``, ``only_this_tokens``, ``only_other_tokens``
    (sorted)."""

    this: str
    other: str
    total: Shares
    categories: dict[str, Shares]
    shared_tokens: tuple[bytes, ...]
    only_this_tokens: tuple[bytes, ...]
    only_other_tokens: tuple[bytes, ...]


def _ordinary(table: TokenTable) -> dict[bytes, int]:
    """Each ordinary token's bytes -> its category code: its bytes' (every entry but a
    ``<0xNN>`` one has its bytes' category), ``byte fallback`` where only such entries hold
    them, whatever the order of the rows."""
    codes: dict[bytes, int] = {}
    for r in range(len(table)):
        if not table.special[r] and codes.get(table.tokens[r], BYTE_FALLBACK) == BYTE_FALLBACK:
            codes[table.tokens[r]] = int(table.category[r])
    return codes


def overlap(this: TokenTable, other: TokenTable) -> Overlap:
    """The ordinary tokens of ``this`` and ``other`` compared by their bytes.

    >>> from bpe_studio.core.encode.tokenizer import Tokenizer
    >>> from bpe_studio.core.explain.vocabulary import token_table
    >>> base = {i: bytes([i]) for i in range(256)}
    >>> a = Tokenizer({**base, 256: b"ab", 257: b" x"}, [(b"a", b"b"), (b" ", b"x")])
    >>> b = Tokenizer({**base, 256: b"ab", 257: b"12"}, [(b"a", b"b"), (b"1", b"2")])
    >>> result = overlap(token_table(a), token_table(b))
    >>> result.total, result.categories["digits"]
    (Shares(shared=257, only_this=1, only_other=1), Shares(shared=10, only_this=0, only_other=1))
    """
    mine, theirs = _ordinary(this), _ordinary(other)
    shared = mine.keys() & theirs.keys()
    only_this = mine.keys() - theirs.keys()
    only_other = theirs.keys() - mine.keys()
    counts: dict[int, list[int]] = {}
    for token in shared:
        # subtle: the two sides differ only where one holds the bytes as <0xNN> alone: the
        # other's is then the bytes' category, and the answer does not depend on the order.
        code = mine[token] if mine[token] != BYTE_FALLBACK else theirs[token]
        counts.setdefault(code, [0, 0, 0])[0] += 1
    for group, where, slot in ((only_this, mine, 1), (only_other, theirs, 2)):
        for token in group:
            counts.setdefault(where[token], [0, 0, 0])[slot] += 1
    categories = {
        CATEGORIES[code]: Shares(*c)
        for code, c in sorted(counts.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    }
    return Overlap(
        this=this.name,
        other=other.name,
        total=Shares(len(shared), len(only_this), len(only_other)),
        categories=categories,
        shared_tokens=tuple(sorted(shared)),
        only_this_tokens=tuple(sorted(only_this)),
        only_other_tokens=tuple(sorted(only_other)),
    )
