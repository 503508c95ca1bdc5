"""The under-trained scan of a ``tokenizer.json`` whose pre-tokenizer drops text (a Split that
removes its matches, or keeps only them) reads only the text it keeps, each kept stretch apart
from the next: ``bpe-studio inspect --corpus`` listed the digits a Split removes as "bytes
only across tokens", though the encoder never sees them. The oracle is ``tokenizers`` itself:
its ids of each document, and the characters its own pre-tokenizer's offsets hold."""

from __future__ import annotations

import json

import pytest
import tokenizers
from core_helpers import write_text
from foreign_files import dropping_files, kept_runs, precompiled_charsmap, removing_split
from tokenizers import decoders, models, normalizers, pre_tokenizers

from bpe_studio.core.encode.foreign import ForeignTokenizer, open_tokenizer
from bpe_studio.core.explain import corpus_pass
from bpe_studio.core.explain.categories import BYTE_FALLBACK
from bpe_studio.core.explain.usage import corpus_usage, uncounted_words
from bpe_studio.core.explain.vocabulary import token_table

EOT = "<|endoftext|>"
DOCS = [
    "the cat sat 2024, 1999 and 100 000 on the mat.",
    "A dog 12 34 56 789 ate9on its own.",
    "cat2dog went home",
    "naïve 中文 café 42€\r\nline 2\r\n",
]

# Tokens of the fixture's vocabulary met only in the text each file drops ("td": only
# across the "2" dropped from "cat2dog", which the model is given as "cat" and "dog" apart).
DROPPED = {
    "letters only": [b"1999", b" the", b",", b"td"],
    "digits removed": [b"1999", b"000", b"789", b"td"],
    "digits removed, prefix space": [b"1999", b"000", b"789", b"td"],
    "tokenizers runs it": [b" the", b" cat"],
}
FILES = {
    # Keeps only the letters: the Split's matches are kept, the rest removed.
    "letters only": lambda d: removing_split(d, r"\p{L}+", invert=True, use_regex=False),
    # Removes every run of digits.
    "digits removed": lambda d: removing_split(d, "[0-9]+", invert=False, use_regex=True),
    # The same, each piece given a prefix space after (not text the corpus holds).
    "digits removed, prefix space": lambda d: removing_split(
        d, "[0-9]+", invert=False, use_regex=True, prefix_space=True
    ),
    # BERT's pre-tokenizer before ByteLevel: tokenizers runs it; every space is dropped.
    "tokenizers runs it": lambda d: dropping_files(d)["byte-level"],
}


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("form", ["text", "jsonl"])
def test_tokens_met_only_in_dropped_text_are_not_in_the_text(tmp_path, monkeypatch, name, form):
    path = FILES[name](tmp_path / "made")
    hf = tokenizers.Tokenizer.from_file(str(path))
    docs = DOCS * 20  # several tasks (below), cut where the tokenizer's rules allow
    if form == "text":
        corpus = write_text(tmp_path / "c.txt", EOT.join(docs))
    else:
        lines = "".join(json.dumps({"text": d}) + "\n" for d in docs)
        corpus = write_text(tmp_path / "c.jsonl", lines)
    monkeypatch.setattr(corpus_pass, "MIN_TASK_BYTES", 64)
    tok = open_tokenizer(path)
    assert isinstance(tok, ForeignTokenizer) == (name == "tokenizers runs it")
    table = token_table(tok)
    usage = corpus_usage(tok, [str(corpus)], table=table, workers=1)
    assert usage.across is not None and usage.absent is not None

    used = {i for d in docs for i in hf.encode(d, add_special_tokens=False).ids}
    assert {i for i in range(len(usage.counts)) if usage.counts[i]} - {hf.token_to_id(EOT)} == used
    normalize = hf.normalizer.normalize_str if hf.normalizer is not None else str
    kept = [run for d in DOCS for run in kept_runs(hf, normalize(d))]
    rows = [
        r for r in range(len(table)) if not table.special[r] and table.category[r] != BYTE_FALLBACK
    ]
    spelled = {int(table.ids[r]): table.tokens[r] for r in rows}
    emitted = [spelled[i] for i in used if i in spelled]
    inside, across, absent = [], [], []
    for i, b in sorted(spelled.items()):
        if i in used:
            continue
        if b and any(b in e for e in emitted):
            inside.append(i)
        elif b and any(b in run for run in kept):
            across.append(i)
        else:
            absent.append(i)
    assert list(usage.inside) == inside
    assert list(usage.across) == across
    assert list(usage.absent) == absent
    # What the report got wrong: these are in the corpus, dropped before encoding.
    by_bytes = {b: i for i, b in spelled.items()}
    for token in DROPPED[name]:
        assert by_bytes[token] in usage.absent, token


@pytest.mark.parametrize(
    ("normalizer", "named", "doc"),
    [
        # tokenizers runs it: SentencePiece's charsmap deletes every "x" (nmt_nfkc's
        # control characters, say)
        (normalizers.Precompiled(precompiled_charsmap("x", "")), "Precompiled", "xxxx abc"),
        # read here: a Replace by "" deletes every "x"
        (normalizers.Replace("x", ""), "Replace", "xxxx abc"),
        # tokenizers runs it: the accents NFD splits off are deleted
        (
            normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents()]),
            "StripAccents",
            "café naïve",
        ),
        (normalizers.Strip(), "Strip", "  abc  "),
    ],
)
def test_text_a_normalizer_deletes_is_not_said_to_be_none(tmp_path, normalizer, named, doc):
    """An audit: a normalizer that deletes characters (StripAccents, a Replace by "") left
    dropped at 0, which says nothing was dropped, though no id stands for what it deleted
    (tokenizers' own normalize_str shows it gone): the count is None, "not counted", and the
    step that deletes is named."""
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    hf = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.normalizer = normalizer
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    assert len(hf.normalizer.normalize_str(doc).encode()) < len(doc.encode())  # the oracle
    corpus = write_text(tmp_path / "c.txt", doc)
    usage = corpus_usage(open_tokenizer(path), [str(corpus)], workers=1)
    assert usage.dropped is None
    (said,) = uncounted_words(usage)
    assert said.startswith(f"normalizer ({named}) deletes characters") and "not counted" in said


@pytest.mark.parametrize(
    "normalizer",
    [
        normalizers.Sequence([normalizers.NFC(), normalizers.Replace("x", "y")]),
        normalizers.Precompiled(precompiled_charsmap("x", "y")),  # its one rule deletes nothing
    ],
)
def test_a_file_without_such_a_normalizer_still_drops_nothing(tmp_path, normalizer):
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    hf = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.normalizer = normalizer
    assert hf.normalizer.normalize_str("xxxx abc") == "yyyy abc"  # the oracle
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    corpus = write_text(tmp_path / "c.txt", "xxxx abc")
    usage = corpus_usage(open_tokenizer(path), [str(corpus)], workers=1)
    assert usage.dropped == 0 and uncounted_words(usage) == []
