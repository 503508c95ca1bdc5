"""The id layout of a trained vocabulary: 256 bytes, then the special tokens, then merges.

What it does: the vocabulary before any merge, the merge budget a vocabulary size leaves, the
one rule for a requested vocabulary size (:func:`vocab_size_problem`, :func:`check_vocab_size`:
from 256 + the special tokens, which trains no merge and gives a byte-level tokenizer, to
:data:`MAX_VOCAB_SIZE`), and what to say of an id a vocabulary lacks. Every caller (trainer,
tokenizer, command line, app) asks here, so the layout is written once. What it
leaves out: the merges themselves (``trainer``) and vocabularies loaded from files, which keep
their own ids (``gpt2``).
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Iterable, Sequence

from ..pretokenization.specials import validate_special_tokens

BYTE_TOKENS = 256
# The most ids a trained vocabulary may have: the compiled merge engine holds ids as 32-bit
# signed integers (the tokenizer's packed ids and an .npy of uint32 hold more). Nothing is
# sized by the vocabulary size asked for, only by the merges the corpus allows.
MAX_VOCAB_SIZE = 2**31
# Messages name at most this many runs of ids.
_RUNS_SHOWN = 6


def initial_vocab(special_tokens: Sequence[str]) -> dict[int, bytes]:
    """The vocabulary before any merge: 256 bytes, then the special tokens in order.

    >>> v = initial_vocab(["<|endoftext|>"])
    >>> len(v), v[97], v[256]
    (257, b'a', b'<|endoftext|>')
    """
    vocab = {i: bytes([i]) for i in range(BYTE_TOKENS)}
    for tok in validate_special_tokens(special_tokens):
        vocab[len(vocab)] = tok.encode("utf-8")
    return vocab


def first_merge_id(special_tokens: Sequence[str]) -> int:
    """The id of the first merged token."""
    return BYTE_TOKENS + len(special_tokens)


def merge_budget(vocab_size: int, special_tokens: Sequence[str]) -> int:
    """How many merges reaching ``vocab_size`` takes (fewer happen if pairs run out); the
    special tokens counted as training counts them (a bare string is refused, duplicates
    are one)."""
    return vocab_size - first_merge_id(validate_special_tokens(special_tokens))


def vocab_size_range(special_tokens: Sequence[str]) -> tuple[int, int]:
    """The smallest and the largest vocabulary size that can be trained with
    ``special_tokens``: the smallest is the bytes and the special tokens (no merge), counted
    as training counts them (duplicates are one).

    >>> vocab_size_range(["<x>", "<x>"])[0]
    257
    """
    return first_merge_id(validate_special_tokens(special_tokens)), MAX_VOCAB_SIZE


def vocab_size_problem(vocab_size: int, special_tokens: Sequence[str]) -> str | None:
    """Why ``vocab_size`` cannot be trained with ``special_tokens``, as the rest of a
    sentence that starts with the size ("vocabulary size 200 " + this), or None if it can.

    >>> vocab_size_problem(200, ["<|endoftext|>"])
    'is too small: it must be at least 257 (256 byte tokens + 1 special token)'
    >>> vocab_size_problem(257, ["<|endoftext|>"]) is None  # a byte-level tokenizer, no merge
    True
    """
    low, high = vocab_size_range(special_tokens)
    if vocab_size < low:
        n = low - BYTE_TOKENS
        return (
            f"is too small: it must be at least {low:,} ({BYTE_TOKENS} byte tokens + {n:,} "
            f"special token{'' if n == 1 else 's'})"
        )
    if vocab_size > high:
        return (
            f"is too large: it must be at most {high:,} (the compiled merge engine holds ids "
            "as 32-bit signed integers)"
        )
    return None


def check_vocab_size(vocab_size: int, special_tokens: Sequence[str]) -> int:
    """``vocab_size`` as an int, if it is a whole number in :func:`vocab_size_range`; else a
    one-line error (TypeError for what is not an integer, ValueError naming the size and the
    limit otherwise). NumPy's integers are integers (a size read from an array or a config);
    a bool, a float or a string is not."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, numbers.Integral):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    size = operator.index(vocab_size)
    problem = vocab_size_problem(size, special_tokens)
    if problem is not None:
        raise ValueError(f"vocabulary size {size:,} {problem}")
    return size


def missing_id(token_id: int, ids: Iterable[int]) -> str:
    """What to say of ``token_id``, which is not among a vocabulary's ``ids``: whether it falls
    in a gap or outside, and the runs of ids the vocabulary has (cl100k_base leaves 100256 and
    100261..100275 unassigned).

    >>> missing_id(100256, [*range(100256), *range(100257, 100261), 100276])
    "it is unassigned (the vocabulary's ids are 0..100255, 100257..100260, 100276)"
    >>> missing_id(-1, range(300))
    "it is out of range (the vocabulary's ids are 0..299)"
    """
    runs: list[list[int]] = []
    for i in sorted(ids):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    where = "unassigned" if runs and runs[0][0] < token_id < runs[-1][1] else "out of range"
    shown = [f"{a}..{b}" if b > a else f"{a}" for a, b in runs[:_RUNS_SHOWN]]
    if len(runs) > _RUNS_SHOWN:
        shown.append(f"... ({len(runs) - _RUNS_SHOWN} more runs, up to {runs[-1][1]})")
    return f"it is {where} (the vocabulary's ids are {', '.join(shown) or 'none'})"
