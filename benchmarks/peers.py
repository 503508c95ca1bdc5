"""The peers bpe_studio is measured against, built offline from GPT-2's own files: tiktoken's
and Hugging Face's GPT-2 encoders, Hugging Face's pre-tokenizer for training, tiktoken's
cl100k_base and o200k_base from the genuine rank files, a digest for comparing id lists
across processes, and two more trainers from the package index (``pip install rustbpe
ffbpe``; not project dependencies): :func:`train_rustbpe` and :func:`train_ffbpe`.

How close the two do the same job as ``train_bpe(path, vocab_size, ["<|endoftext|>"])``:
- ffbpe: the same GPT-2 pattern (given explicitly), the special token split out and given an
  id, byte-level units, ties to the greater pair of bytes (``tie_break="largest_content"``).
  It counts records on its own threads; the records are the file read in blocks of about
  4 MB, each cut just before a special token (or, in a file without one, after a line
  break, where a run of blank lines can split differently from the whole file).
- rustbpe: has no special tokens: it is given the documents between them (so no pre-token
  crosses one, as ours) and ``vocab_size - 1`` (an id kept for the special token), with the
  GPT-2 pattern; its tie-break between equal counts is its own.

The GPT-2 pattern is written out here, not imported from bpe_studio, so the peers are
configured independently of the library under test. Nothing is downloaded; training a peer
(the Hugging Face trainer) is left to ``runner.py``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from corpora import REPO_ROOT, corpus

SPECIAL = "<|endoftext|>"
RANK_DIR = REPO_ROOT / "resources" / "tokenizers"
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (encoder.py of openai/gpt-2)."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), 256)]
    cs = list(bs)
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def gpt2_files() -> tuple[Path, Path]:
    vocab, merges = corpus("cs336/gpt2_vocab.json", "cs336/gpt2_merges.txt")
    return vocab, merges


def tiktoken_gpt2():
    """tiktoken's GPT-2 built offline from ``gpt2_vocab.json`` (no download)."""
    import tiktoken

    vocab_path, _ = gpt2_files()
    decoder = {c: b for b, c in _bytes_to_unicode().items()}
    vocab = json.loads(vocab_path.read_text(encoding="utf-8"))
    ranks = {bytes(decoder[c] for c in tok): i for tok, i in vocab.items() if tok != SPECIAL}
    return tiktoken.Encoding(
        name="gpt2_local",
        pat_str=GPT2_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={SPECIAL: vocab[SPECIAL]},
    )


def tiktoken_preset(name: str):
    """tiktoken's ``cl100k_base`` or ``o200k_base`` built offline: tiktoken's own constructor
    (pattern and special tokens as tiktoken publishes them) with the rank file read from the
    repository's ``resources/tokenizers`` (the genuine files) instead of downloaded."""
    import base64
    import gzip

    import tiktoken
    import tiktoken_ext.openai_public as published

    raw = gzip.decompress((RANK_DIR / f"{name}.tiktoken.gz").read_bytes())
    ranks = {
        base64.b64decode(tok): int(rank)
        for tok, rank in (line.split() for line in raw.splitlines() if line)
    }
    original = published.load_tiktoken_bpe
    published.load_tiktoken_bpe = lambda *args, **kwargs: ranks
    try:
        params = published.ENCODING_CONSTRUCTORS[name]()
    finally:
        published.load_tiktoken_bpe = original
    return tiktoken.Encoding(**params)


def hf_pre_tokenizer():
    """The GPT-2 regex (isolated splits), then byte-level mapping without its own regex."""
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(GPT2_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )


def hf_gpt2():
    """Hugging Face ``tokenizers`` BPE loaded from the same GPT-2 files, same pre-tokenizer."""
    from tokenizers import Tokenizer, decoders, models

    vocab_path, merges_path = gpt2_files()
    vocab = json.loads(vocab_path.read_text(encoding="utf-8"))
    merges = []
    for line in merges_path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#version"):
            a, b = line.split(" ")
            merges.append((a, b))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = hf_pre_tokenizer()
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([SPECIAL])
    return tok


def records(path: Path, block: int = 4 << 20, split_special: bool = False):
    """The file's text in records for a peer that takes independent texts: blocks of about
    ``block`` bytes cut before a special token (else after a line break), or with
    ``split_special`` every document between special tokens (the tokens dropped)."""
    tail = ""
    with open(path, encoding="utf-8", newline="") as f:
        while chunk := f.read(block):
            text = tail + chunk
            if split_special:
                *docs, tail = text.split(SPECIAL)
                yield from (d for d in docs if d)
                continue
            cut = text.rfind(SPECIAL)
            if cut <= 0:
                cut = text.rfind("\n") + 1
            if cut <= 0:
                tail = text
                continue
            yield text[:cut]
            tail = text[cut:]
    if tail:
        yield tail


def train_rustbpe(path: Path, vocab_size: int) -> int:
    """rustbpe trained on ``path`` (see the module docstring); returns its vocabulary size
    plus the special token's id."""
    import rustbpe

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(records(path, split_special=True), vocab_size - 1, pattern=GPT2_PATTERN)
    return tok.vocab_size + 1


def train_ffbpe(path: Path, vocab_size: int) -> int:
    """ffbpe trained on ``path`` (see the module docstring); returns its vocabulary size."""
    import ffbpe

    counter = ffbpe.PreTokenizer([SPECIAL], pat_str=GPT2_PATTERN).word_counter()
    counter.add_source(records(path))
    trainer = ffbpe.BpeTrainer(
        [SPECIAL], unit="byte", initial_alphabet="byte_level", tie_break="largest_content"
    )
    trainer.add_word_counter(counter)
    trainer.train(vocab_size)
    return len(trainer.vocab)


def ids_digest(ids: Sequence[int]) -> tuple[int, str]:
    """(count, sha256 of the ids as little-endian uint32): compares id lists across processes
    without shipping them."""
    import numpy as np

    arr = np.asarray(ids, dtype="<u4")
    return int(arr.size), hashlib.sha256(arr.tobytes()).hexdigest()
