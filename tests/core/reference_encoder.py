"""A slow, obviously correct encoder for the format tests, and the oracles' inputs.

Nothing here is imported from ``bpe_studio``. :func:`reference_encode` cuts out special tokens
(leftmost, longest first), splits the rest with ``regex.findall`` and, within each piece, joins
the adjacent pair listed first in the merge list until none is listed. :func:`published`
gives tiktoken's own settings for an encoding without downloading anything,
:func:`read_rank_file` reads a rank file the way tiktoken's loader does, and
:data:`ASSIGNED_TEXTS` generates text from assigned characters.
"""

from __future__ import annotations

import base64
import gzip
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import regex
from core_helpers import REPO_ROOT
from hypothesis import strategies as st
from text_strategies import PIECES

from bpe_studio.core.formats import PATTERNS, TokenizerData
from bpe_studio.core.reference import reference_steps

# Generated text from characters assigned in this Python's Unicode database only: the regex
# engines compared (the regex module, tiktoken's, Oniguruma in tokenizers) ship different
# Unicode versions and disagree on some recently assigned letters.
ASSIGNED = st.characters(exclude_categories=("Cs", "Cn", "Co"))
ASSIGNED_TEXTS = st.lists(
    st.one_of(st.text(ASSIGNED, max_size=8), st.sampled_from(PIECES)), max_size=30
).map("".join)


def published(name: str) -> dict:
    """tiktoken_ext's constructor result for ``name`` (pat_str, special_tokens), with the
    download replaced by an empty rank table."""
    import tiktoken_ext.openai_public as op

    original = op.load_tiktoken_bpe
    op.load_tiktoken_bpe = lambda *args, **kwargs: {}
    try:
        return op.ENCODING_CONSTRUCTORS[name]()
    finally:
        op.load_tiktoken_bpe = original


def read_rank_file(path: Path) -> dict[bytes, int]:
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    ranks = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def shipped_tiktoken(encoding: str):
    """tiktoken's ``encoding`` (``"cl100k_base"``, ...) built offline from the rank file the
    project ships, with the pattern and special tokens of tiktoken's own constructor."""
    import tiktoken

    settings = published(encoding)
    ranks = REPO_ROOT / "resources" / "tokenizers"
    return tiktoken.Encoding(
        encoding,
        pat_str=settings["pat_str"],
        mergeable_ranks=read_rank_file(ranks / f"{encoding}.tiktoken.gz"),
        special_tokens=settings["special_tokens"],
    )


class ReferenceEncoder:
    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Mapping[str, int],
        pattern: str,
    ) -> None:
        self.ids = {tok: idx for idx, tok in vocab.items()}
        self.rank: dict[tuple[bytes, bytes], int] = {}
        for i, pair in enumerate(merges):
            self.rank.setdefault(tuple(pair), i)
        self.specials = dict(special_tokens)
        self.split = regex.compile(pattern)
        self.cache: dict[str, list[int]] = {}

    def _bpe(self, piece: str) -> list[int]:
        if piece not in self.cache:
            raw = piece.encode("utf-8")
            parts = [raw[i : i + 1] for i in range(len(raw))]
            while len(parts) > 1:
                listed = [
                    (self.rank[(a, b)], i)
                    for i, (a, b) in enumerate(zip(parts, parts[1:]))
                    if (a, b) in self.rank
                ]
                if not listed:
                    break
                _, i = min(listed)
                parts[i : i + 2] = [parts[i] + parts[i + 1]]
            self.cache[piece] = [self.ids[p] for p in parts]
        return self.cache[piece]

    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        pos = 0
        while pos <= len(text):
            # the earliest special token from pos; of those starting there, the longest
            hits = [(text.find(s, pos), -len(s), s) for s in self.specials]
            hits = [h for h in hits if h[0] >= 0]
            end = min(hits)[0] if hits else len(text)
            for piece in (m.group() for m in self.split.finditer(text[pos:end])):
                out += self._bpe(piece)
            if not hits:
                break
            _, neg_len, s = min(hits)
            out.append(self.specials[s])
            pos = end - neg_len
        return out


def trained_data(text: str, pattern: str, specials: list[str], num_merges: int) -> TokenizerData:
    """Our id layout (bytes, then special tokens, then merges) trained on ``text`` by the
    reference trainer; ``pattern`` is a name (looked up in PATTERNS) or a regex."""
    counts = Counter(p.encode() for p in regex.findall(PATTERNS.get(pattern, pattern), text))
    vocab = {i: bytes([i]) for i in range(256)}
    special_tokens = {}
    for s in specials:
        special_tokens[s] = len(vocab)
        vocab[len(vocab)] = s.encode()
    merges = []
    for step in reference_steps(counts, num_merges):
        merges.append((step.left, step.right))
        vocab[len(vocab)] = step.left + step.right
    return TokenizerData(vocab, merges, special_tokens, pattern)
