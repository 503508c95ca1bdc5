"""``Tokenizer.truncated(k)`` builds its tables on first use: whatever is asked first, it
encodes as the slow reference encoder with the first ``k`` merges does and holds the same
vocabulary and ranks as a tokenizer built from scratch with those merges, at many steps of
tokenizers trained on several fixture corpora, on their text and on generated text."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from reference_encoder import ASSIGNED_TEXTS, ReferenceEncoder

from bpe_studio.core import Tokenizer, train_bpe

FIXTURES = Path(__file__).parent.parent / "fixtures"
EOT = "<|endoftext|>"
CORPORA = ("tinystories_slice.txt", "chinese_slice.txt", "code_slice.txt")


@pytest.fixture(scope="module", params=CORPORA)
def tokenizer_and_text(request, tmp_path_factory):
    text = (FIXTURES / request.param).read_text(encoding="utf-8")[:30_000]
    corpus = tmp_path_factory.mktemp("corpus") / request.param
    corpus.write_text(text, encoding="utf-8")
    vocab, merges = train_bpe(corpus, 257 + 600, [EOT], workers=1)
    return Tokenizer(vocab, merges, [EOT]), text


def _steps(n: int) -> list[int]:
    rng = random.Random(n)
    return sorted({0, 1, n - 1, n} | {rng.randrange(n + 1) for _ in range(10)})


def test_truncations_encode_as_the_reference_and_hold_its_tables(tokenizer_and_text):
    tok, text = tokenizer_and_text
    sample = text[-4_000:] + EOT + text[:500]
    for k in _steps(len(tok.merges)):
        merges = tok.merges[:k]
        made = {a + b for a, b in merges}
        vocab = {i: t for i, t in tok.vocab.items() if i < 256 or t in made or t == EOT.encode()}
        ref = ReferenceEncoder(vocab, merges, {EOT: tok.special_id(EOT)}, tok.pattern)
        first_encode = tok.truncated(k)
        assert first_encode.encode(sample, allowed_special="all") == ref.encode(sample), k
        first_tables = tok.truncated(k)  # its tables asked for before it encodes
        scratch = Tokenizer(vocab, merges, [EOT])
        assert first_tables.vocab == scratch.vocab
        assert all(first_tables.merge_rank(i) == scratch.merge_rank(i) for i in scratch.vocab)
        assert first_tables.encode(sample, allowed_special="all") == ref.encode(sample)
        assert len(first_tables) == len(scratch) and first_tables.merges == merges
        again = first_tables.truncated(k // 2)  # a truncation of a truncation
        assert again.merges == tok.merges[: k // 2]
        assert again.vocab == tok.truncated(k // 2).vocab


@settings(max_examples=60, deadline=None)
@given(text=ASSIGNED_TEXTS)
def test_truncations_encode_generated_text_as_the_reference(tokenizer_and_text, text):
    tok, _ = tokenizer_and_text
    for k in (0, 37, len(tok.merges) // 2):
        merges = tok.merges[:k]
        made = {a + b for a, b in merges}
        vocab = {i: t for i, t in tok.vocab.items() if i < 256 or t in made}
        ref = ReferenceEncoder(vocab, merges, {}, tok.pattern)
        assert tok.truncated(k).encode(text, disallowed_special=()) == ref.encode(text)
