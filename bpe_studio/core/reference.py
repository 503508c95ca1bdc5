"""Byte-level BPE, the slow and obviously correct way: the spec to read first, and the oracle
the tests hold the fast trainer and tokenizer to (minbpe's ``basic.py`` is the model).

What it does: :func:`reference_train` is CS336's ``train_bpe`` on a string;
:func:`reference_steps` the merges one by one (with the best pairs before each);
:func:`reference_encode_piece` rank-based BPE of one pre-token. It imports nothing else of
``bpe_studio`` (``tests/core/test_reference_trainer.py`` checks), so a test that compares the
package with it compares two independent implementations. Pre-tokens are found with GPT-2's
pattern (written below in its original form), or any regex string given as ``pattern``, after
special tokens are cut out, leftmost and longest first. Each pre-token is a tuple of one-byte
``bytes`` tokens with its count. Every merge then

1. counts ALL adjacent pairs from scratch, weighting each word by its count,
2. picks the pair with the largest ``(count, (left_bytes, right_bytes))``,
3. rewrites every word, replacing the pair left to right without overlaps.

No incremental bookkeeping, no heaps, no caches: each step is a few lines to check by eye.
What it leaves out: speed (``train.trainer``, ``encode.tokenizer``), files and corpora.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import regex

# GPT-2's split pattern as published in openai/gpt-2 ``src/encoder.py``.
GPT2_SPLIT_PATTERN = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)
_GPT2_SPLIT = regex.compile(GPT2_SPLIT_PATTERN)

Word = tuple[bytes, ...]
Pair = tuple[bytes, bytes]


def split_on_specials(text: str, special_tokens: Sequence[str]) -> list[str]:
    """The text between special tokens. At each point the earliest occurrence of any special
    token is cut out; when several start there, the longest one. An empty special token is
    refused, as ``train_bpe`` refuses it (it would be found everywhere, cutting out nothing)."""
    if "" in special_tokens:
        raise ValueError("a special token must not be empty")
    pieces: list[str] = []
    pos = 0
    while True:
        best_at, best_len = -1, 0
        for tok in special_tokens:
            at = text.find(tok, pos)
            if at < 0:
                continue
            if best_at < 0 or at < best_at or (at == best_at and len(tok) > best_len):
                best_at, best_len = at, len(tok)
        if best_at < 0:
            pieces.append(text[pos:])
            return pieces
        pieces.append(text[pos:best_at])
        pos = best_at + best_len


def pretokens(
    text: str, special_tokens: Sequence[str] = (), pattern: str = GPT2_SPLIT_PATTERN
) -> list[str]:
    """Pre-tokens of ``text`` in order (GPT-2's pattern unless a regex is given), special
    tokens removed."""
    split = _GPT2_SPLIT if pattern == GPT2_SPLIT_PATTERN else regex.compile(pattern)
    out: list[str] = []
    for piece in split_on_specials(text, special_tokens):
        # A whole match each: findall would give a capturing pattern's groups.
        out.extend(m.group() for m in split.finditer(piece))
    return out


def pretoken_counts(
    text: str, special_tokens: Sequence[str] = (), pattern: str = GPT2_SPLIT_PATTERN
) -> Counter[bytes]:
    """``{pre-token as UTF-8 bytes: count}``."""
    return Counter(p.encode("utf-8") for p in pretokens(text, special_tokens, pattern))


def count_pairs(words: dict[Word, int]) -> Counter[Pair]:
    pairs: Counter[Pair] = Counter()
    for word, count in words.items():
        for i in range(len(word) - 1):
            pairs[(word[i], word[i + 1])] += count
    return pairs


def best_pair(pairs: Counter[Pair]) -> Pair:
    """Most frequent pair; among equal counts the greatest (left, right) as bytes."""
    return max(pairs, key=lambda p: (pairs[p], p))


def top_pairs(pairs: Counter[Pair], k: int) -> list[tuple[bytes, bytes, int]]:
    ranked = sorted(pairs, key=lambda p: (pairs[p], p), reverse=True)[:k]
    return [(a, b, pairs[(a, b)]) for a, b in ranked]


def merge_word(word: Word, pair: Pair) -> Word:
    """``word`` with every occurrence of ``pair`` joined, scanning left to right."""
    out: list[bytes] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == pair[0] and word[i + 1] == pair[1]:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def top_pairs_after(
    counts: dict[bytes, int], merges: Sequence[Pair], n: int
) -> list[tuple[bytes, bytes, int]]:
    """The ``n`` best pairs once ``merges`` are applied, each everywhere and left to right before
    the next, to every pre-token of ``counts`` (as ``(left, right, count)``, best first)."""
    words: Counter[Word] = Counter()
    for token, c in counts.items():
        word: Word = tuple(bytes([b]) for b in token)
        for pair in merges:
            word = merge_word(word, pair)
        words[word] += c
    return top_pairs(count_pairs(words), n)


@dataclass(frozen=True)
class RefStep:
    """One reference merge: the pair, its count, and the ``k`` best pairs before it."""

    rank: int
    left: bytes
    right: bytes
    count: int
    top: list[tuple[bytes, bytes, int]]
    ties: int  # how many other pairs had the same (maximal) count


def reference_steps(counts: dict[bytes, int], num_merges: int, top_k: int = 0) -> Iterator[RefStep]:
    """Merge ``num_merges`` times (fewer if pairs run out) over pre-token ``counts``."""
    words: dict[Word, int] = {}
    for token, c in counts.items():
        word = tuple(bytes([b]) for b in token)
        words[word] = words.get(word, 0) + c
    for rank in range(num_merges):
        pairs = count_pairs(words)
        if not pairs:
            return
        pair = best_pair(pairs)
        ties = sum(1 for c in pairs.values() if c == pairs[pair]) - 1
        yield RefStep(rank, pair[0], pair[1], pairs[pair], top_pairs(pairs, top_k), ties)
        merged: dict[Word, int] = {}
        for word, c in words.items():
            new = merge_word(word, pair)
            merged[new] = merged.get(new, 0) + c
        words = merged


def reference_train(
    text: str,
    vocab_size: int,
    special_tokens: Iterable[str] = (),
    pattern: str = GPT2_SPLIT_PATTERN,
) -> tuple[dict[int, bytes], list[Pair]]:
    """CS336 ``train_bpe`` semantics on a string: ids 0..255 are the bytes, then the special
    tokens in order (each once), then one id per merge."""
    specials = list(dict.fromkeys(special_tokens))
    vocab = {i: bytes([i]) for i in range(256)}
    for tok in specials:
        vocab[len(vocab)] = tok.encode("utf-8")
    merges: list[Pair] = []
    counts = pretoken_counts(text, specials, pattern)
    for step in reference_steps(counts, vocab_size - len(vocab)):
        vocab[len(vocab)] = step.left + step.right
        merges.append((step.left, step.right))
    return vocab, merges


def reference_encode_piece(piece: bytes, ranks: dict[Pair, int]) -> Word:
    """Rank-based BPE of one pre-token, the slow way: look at every adjacent pair, merge the
    leftmost occurrence of the one with the lowest rank, and start again."""
    word: Word = tuple(bytes([b]) for b in piece)
    while True:
        ranked = [(ranks[p], i) for i, p in enumerate(zip(word, word[1:])) if p in ranks]
        if not ranked:
            return word
        _, i = min(ranked)
        word = word[:i] + (word[i] + word[i + 1],) + word[i + 2 :]
