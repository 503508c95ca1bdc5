"""Which unused tokens a corpus holds the bytes of: the under-trained ("glitch") candidates.

A token a corpus never got from the encoder is, for that corpus, one of three:

- **inside**: its bytes occur inside a token the encoder did emit (" SolidGoldMagikarp" was
  emitted; "Magikarp" never is): a model trained on such text saw these bytes, never this
  token, so its embedding is the likeliest to be untrained;
- **across**: its bytes occur in the text only split across tokens;
- **absent**: its bytes never occur in the text at all.

What it does: :func:`inside_emitted` settles the first from the tokens the encoder emitted
(their substrings, or Aho-Corasick over their bytes, ``ahocorasick_rs``); :func:`might_occur`
rules out, from the bytes and byte pairs that occur in the text, most tokens that cannot
occur, so that only the rest are looked for in the text (``corpus_pass.scan_task``).
What it leaves out: reading the corpus (``corpus_pass``), the report (``usage``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def inside_emitted(unused: Sequence[bytes], emitted: Sequence[bytes]) -> set[bytes]:
    """The byte strings of ``unused`` (none empty) that occur inside one of ``emitted``.

    Those whose bytes and byte pairs do not all occur inside the emitted tokens are ruled
    out first (:func:`might_occur` over the emitted tokens' own masks: on a 100 MB corpus
    that leaves about half); the rest are looked up whichever way is cheaper: every substring
    of the emitted tokens (it grows with their lengths squared: a small corpus emits few
    tokens), or an automaton of the unused ones run over the emitted ones (it grows with the
    unused tokens' bytes).

    >>> sorted(inside_emitted([b"agik", b"karp", b"zz", b"p M"], [b" Magikarp", b" Mag"]))
    [b'agik', b'karp']
    """
    if not unused or not emitted:
        return set()
    singles, pairs = byte_masks(emitted)
    unused = [u for u, ok in zip(unused, might_occur(unused, singles, pairs).tolist()) if ok]
    if not unused:
        return set()
    longest = max(map(len, unused))
    lengths = np.fromiter(map(len, emitted), dtype=np.int64, count=len(emitted))
    substrings = int((np.minimum(lengths, longest) * lengths).sum()) // 2
    # A substring looked up costs about twice what a byte of the automaton does (measured
    # with o200k's 63,000 candidates against 83,000 emitted tokens: 230 ns and 130 ns).
    if 2 * substrings <= sum(map(len, unused)):
        return _by_substrings(unused, emitted)
    return _by_automaton(unused, emitted)


def byte_masks(tokens: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The bytes (256 entries) and the pairs of adjacent bytes (``first << 8 | second``)
    that occur inside one of ``tokens``.

    >>> singles, pairs = byte_masks([b"ab", b"c"])
    >>> bytes(np.flatnonzero(singles).tolist()), np.flatnonzero(pairs).tolist() == [0x6162]
    (b'abc', True)
    """
    singles = np.zeros(256, dtype=bool)
    pairs = np.zeros(1 << 16, dtype=bool)
    flat = np.frombuffer(b"".join(tokens), dtype=np.uint8).astype(np.int64)
    singles[flat] = True
    if len(flat) > 1:
        # A pair counts where its second byte is not the first of the next token.
        inside = np.ones(len(flat) - 1, dtype=bool)
        ends = np.cumsum(np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)))
        # subtle: an empty token first in the list ends at 0, which would mark position -1
        # (the last pair) as a boundary.
        inside[ends[(ends > 0) & (ends < len(flat))] - 1] = False
        pairs[(flat[:-1] << 8 | flat[1:])[inside]] = True
    return singles, pairs


def _by_substrings(unused: Sequence[bytes], emitted: Sequence[bytes]) -> set[bytes]:
    longest = max(map(len, unused))
    pieces = {
        t[i:j]
        for t in emitted
        for i in range(len(t))
        for j in range(i + 1, min(len(t), i + longest) + 1)
    }
    return pieces.intersection(unused)


def _by_automaton(unused: Sequence[bytes], emitted: Sequence[bytes]) -> set[bytes]:
    import ahocorasick_rs

    matcher = ahocorasick_rs.BytesAhoCorasick(list(unused))
    ends = np.cumsum(np.fromiter(map(len, emitted), dtype=np.int64, count=len(emitted)))
    found = np.asarray(
        matcher.find_matches_as_indexes(b"".join(emitted), overlapping=True), dtype=np.int64
    ).reshape(-1, 3)
    # A match counts where it ends within the token it starts in.
    token = np.searchsorted(ends, found[:, 1], side="right")
    within = found[:, 2] <= ends[token]
    return {unused[i] for i in np.unique(found[within, 0]).tolist()}


def might_occur(candidates: Sequence[bytes], singles: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """A mask over ``candidates`` (none empty): those whose every byte (``singles``, 256
    entries) and every pair of adjacent bytes (``pairs``, ``first << 8 | second``) occurs in
    the text. The others cannot occur in it.

    >>> singles = np.zeros(256, dtype=bool); singles[list(b"abc")] = True
    >>> pairs = np.zeros(1 << 16, dtype=bool); pairs[[ord("a") << 8 | ord("b")]] = True
    >>> might_occur([b"ab", b"ba", b"c", b"d"], singles, pairs).tolist()
    [True, False, True, False]
    """
    if not candidates:
        return np.zeros(0, dtype=bool)
    lengths = np.fromiter(map(len, candidates), dtype=np.int64, count=len(candidates))
    flat = np.frombuffer(b"".join(candidates), dtype=np.uint8).astype(np.int64)
    owner = np.repeat(np.arange(len(candidates)), lengths)
    missing = np.bincount(owner[~singles[flat]], minlength=len(candidates))
    # Pairs within one candidate: positions whose next byte belongs to the same one.
    same = owner[1:] == owner[:-1]
    pair = (flat[:-1] << 8 | flat[1:])[same]
    missing += np.bincount(owner[:-1][same][~pairs[pair]], minlength=len(candidates))
    return missing == 0
