"""The id layout of a trained vocabulary: 256 bytes, then the special tokens, then merges.

What it does: the vocabulary before any merge, the merge budget a vocabulary size leaves, and
the check of a requested vocabulary size. Every caller (trainer, command line, app) asks here,
so the layout is written once. What it leaves out: the merges themselves (``trainer``) and
vocabularies loaded from files, which keep their own ids (``gpt2_format``).
"""

from __future__ import annotations

from collections.abc import Sequence

BYTE_TOKENS = 256


def initial_vocab(special_tokens: Sequence[str]) -> dict[int, bytes]:
    """The vocabulary before any merge: 256 bytes, then the special tokens in order.

    >>> v = initial_vocab(["<|endoftext|>"])
    >>> len(v), v[97], v[256]
    (257, b'a', b'<|endoftext|>')
    """
    vocab = {i: bytes([i]) for i in range(BYTE_TOKENS)}
    for tok in special_tokens:
        vocab[len(vocab)] = tok.encode("utf-8")
    return vocab


def first_merge_id(special_tokens: Sequence[str]) -> int:
    """The id of the first merged token."""
    return BYTE_TOKENS + len(special_tokens)


def merge_budget(vocab_size: int, special_tokens: Sequence[str]) -> int:
    """How many merges reaching ``vocab_size`` takes (fewer happen if pairs run out)."""
    return vocab_size - first_merge_id(special_tokens)


def check_vocab_size(vocab_size: int, special_tokens: Sequence[str]) -> None:
    """Raise a one-line error unless ``vocab_size`` is an int with room for the bytes and the
    special tokens."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    floor = first_merge_id(special_tokens)
    if vocab_size < floor:
        raise ValueError(
            f"vocabulary size {vocab_size} is too small: it must be at least {floor} "
            f"({BYTE_TOKENS} byte tokens + {len(special_tokens)} special token(s))"
        )
