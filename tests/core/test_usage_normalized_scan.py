"""The under-trained scan of a ``tokenizer.json`` whose normalizer changes the text looks at
the text the tokenizer encodes (``explain.encoded_text``), not the corpus's raw bytes: under
Lowercase, " Fun" is encoded as " fun", so an unused " fu" occurs across tokens there, and
under NFKC "ﬁ" is encoded as "fi". The oracle is Hugging Face's own normalizer's output."""

from __future__ import annotations

import json

import pytest
import tokenizers
from core_helpers import byte_level_chars, write_text
from tokenizers import decoders, models, normalizers, pre_tokenizers

from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain import corpus_pass
from bpe_studio.core.explain.usage import corpus_usage

EOT = "<|endoftext|>"


def _build(path, normalizer, merged):
    """A byte-level BPE file: the 256 byte tokens, then each of ``merged`` (bytes, merged
    left to right in this order of rank), and the special token."""
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    merges = []
    for a, b in merged:
        left, right = byte_level_chars(a), byte_level_chars(b)
        merges.append((left, right))
        vocab.setdefault(left + right, len(vocab))
    hf = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges))
    hf.normalizer = normalizer
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([EOT])
    hf.save(str(path))
    return tokenizers.Tokenizer.from_file(str(path))


# (normalizer, merges by rank, documents, the token found only across tokens after
# normalization, the tokens whose bytes occur only before it)
CASES = {
    # " Fun" -> " fun": "un" merges before " f" + "u", so " fu" is never emitted.
    "lowercase": (
        normalizers.Lowercase(),
        [(b"u", b"n"), (b" ", b"f"), (b" f", b"u"), (b"F", b"u"), (b"q", b"z")],
        ["Big Fun", "No Fun here"],
        " fu",
        ["Fu"],
    ),
    # "ﬁnal" -> "final": "in" merges before "f" + "i".
    "nfkc": (
        normalizers.NFKC(),
        [(b"i", b"n"), (b"f", b"i"), (b"\xef", b"\xac"), (b"\xef\xac", b"\x81"), (b"q", b"z")],
        ["the ﬁnal word", "ﬁnally"],
        "fi",
        ["ﬁ"],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("form", ["text", "jsonl"])
def test_the_scan_reads_the_text_as_normalized(tmp_path, monkeypatch, name, form):
    normalizer, merged, docs, across, raw_only = CASES[name]
    hf = _build(tmp_path / "tokenizer.json", normalizer, merged)
    docs = docs * 40  # several tasks (below): cut where the tokenizer's rules allow
    if form == "text":
        corpus = write_text(tmp_path / "c.txt", EOT.join(docs))
    else:
        lines = "".join(json.dumps({"text": d}) + "\n" for d in docs)
        corpus = write_text(tmp_path / "c.jsonl", lines)
    monkeypatch.setattr(corpus_pass, "MIN_TASK_BYTES", 64)
    tok = open_tokenizer(tmp_path / "tokenizer.json")
    assert tok.hf_pipeline is not None  # read here, its normalizer run by this library
    usage = corpus_usage(tok, [str(corpus)], workers=1)
    assert usage.across is not None and usage.absent is not None

    seen = [hf.normalizer.normalize_str(d).encode("utf-8") for d in docs]
    vocab = {i: bytes(tok.decode_single_token_bytes(i)) for i in range(len(hf.get_vocab()) - 1)}

    def occurs(i):
        return any(vocab[i] in s for s in seen)

    by_bytes = {b: i for i, b in vocab.items()}
    assert by_bytes[across.encode()] in usage.across
    assert occurs(by_bytes[across.encode()])
    for token in raw_only + ["qz"]:
        i = by_bytes[token.encode()]
        assert not occurs(i) and i in usage.absent, token
    # Every unused token the scan classified, against the normalized text.
    assert all(occurs(i) for i in usage.across)
    assert not any(occurs(i) for i in usage.absent)
