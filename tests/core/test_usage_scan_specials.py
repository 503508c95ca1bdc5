"""The under-trained scan leaves a special token's text out only where the tokenizer takes
it: text that merely spells one is text a model sees. Before, every spelling was left out:
"x<m>y" where ``<m>`` is ``single_word`` (not taken inside a word), ``<x|y>`` where ``<x|`` is
taken and ``y>`` stays text, "<MASK>" lowercased into a non-normalized ``<mask>`` (taken only
where the corpus writes it so). The oracle is ``tokenizers``' own encoding: the offsets of the
added tokens it takes in each document, the stretches between them normalized by the file's
own normalizer, less what its own pre-tokenizer drops; a token is absent where its bytes are
in none of them."""

from __future__ import annotations

import json
import random

import pytest
import tokenizers
from core_helpers import byte_level_chars, write_text
from foreign_files import kept_runs
from tokenizers import AddedToken, decoders, models, normalizers, pre_tokenizers

from bpe_studio.core.corpus.tasks import corpus_files
from bpe_studio.core.encode.foreign import ForeignTokenizer, open_tokenizer
from bpe_studio.core.explain import corpus_pass
from bpe_studio.core.explain.usage import corpus_usage


def _seen(hf: tokenizers.Tokenizer, docs: list[str]) -> list[bytes]:
    """The stretches of ``docs`` ``hf``'s model is given as text (see the module docstring)."""
    added = {i: t.content for i, t in hf.get_added_tokens_decoder().items()}
    normalize = hf.normalizer.normalize_str if hf.normalizer is not None else str
    out = []
    for doc in docs:
        found = hf.encode(doc, add_special_tokens=False)
        at = 0
        for i, (a, b) in zip(found.ids, found.offsets):
            # (An unknown word's "[UNK]" is no added token taken: its text is not the token's.
            # A token's offsets hold the whitespace its lstrip and rstrip take.)
            if i in added and doc[a:b].strip() == added[i]:
                out.append(doc[at:a])
                at = b
        out.append(doc[at:])
    # (What its pre-tokenizer drops, BERT's spaces, is no text either: each side apart.)
    return [run for s in out for run in kept_runs(hf, normalize(s))]


def _strings(chars: str, longest: int) -> list[str]:
    """Every string of 2 to ``longest`` of ``chars``."""
    out = [""]
    found = []
    for _ in range(longest):
        out = [s + c for s in out for c in chars]
        found += [s for s in out if len(s) > 1]
    return found


def _docs(seed: int, parts: list[str], n: int = 60) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(parts) for _ in range(rng.randint(1, 6))) for _ in range(n)]


# Added tokens, and the parts the documents are made of.
BYTE_LEVEL = {
    "single_word": (
        [AddedToken("<m>", special=True, single_word=True)],
        ["<m>", " <m> ", "x", "y", " ", "m", ">"],
    ),
    "overlapping": (
        [AddedToken("<x|", special=True), AddedToken("|y>", special=True)],
        ["<x|", "|y>", "<x|y>", "x", "y", "z", "|"],
    ),
    "lstrip_rstrip": (
        [AddedToken("<m>", special=True, lstrip=True, rstrip=True)],
        ["<m>", "  ", " ", "x", "m", ">"],
    ),
    # Lowercase gives the model "<x>" for the text "<X>", where "<X>" is not taken.
    "lowercase": (
        [AddedToken("<x>", special=True, normalized=False)],
        ["<x>", "<X>", " ", "X", "y", ">"],
    ),
}
# The single_word and lstrip tokens' files are cut into tasks nowhere: text beside such a
# token may be taken with it.
CUT = ["overlapping", "lowercase"]


def _byte_level_file(path, added, chars, normalize=False):
    """A byte-level BPE file with no merges (only bytes and the added tokens are ever
    emitted) that holds every string of two or three of ``chars``: each one unused, and
    found across tokens wherever its bytes occur as text."""
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    for s in _strings(chars, 3):
        vocab.setdefault(byte_level_chars(s.encode()), len(vocab))
    hf = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    if normalize:
        hf.normalizer = normalizers.Lowercase()
    hf.add_special_tokens(added)
    hf.save(str(path))
    return hf


def _check(usage, candidates: dict[bytes, int], seen: list[bytes]) -> None:
    assert usage.across is not None and usage.absent is not None
    across, absent = set(usage.across), set(usage.absent)
    wrong = []
    for spelled, i in candidates.items():
        occurs = any(spelled in s for s in seen)
        if (i in across) != occurs or (i in absent) == occurs:
            wrong.append((spelled, occurs))
    assert not wrong
    assert across and absent  # both kinds are in the test


@pytest.mark.parametrize(
    ("name", "form"),
    [(n, f) for n in sorted(BYTE_LEVEL) for f in ("records", "text")]
    + [(n, "ranges") for n in CUT],
)
def test_only_the_special_tokens_taken_are_left_out(tmp_path, monkeypatch, name, form):
    added, parts = BYTE_LEVEL[name]
    chars = "".join(sorted(set("".join(parts))))
    hf = _byte_level_file(tmp_path / "tokenizer.json", added, chars, name == "lowercase")
    tok = open_tokenizer(tmp_path / "tokenizer.json")
    assert not isinstance(tok, ForeignTokenizer)  # read here
    docs = _docs(7, parts)
    if form == "records":
        lines = "".join(json.dumps({"text": d}) + "\n" for d in docs)
        corpus = write_text(tmp_path / "c.jsonl", lines)
    else:
        # One text; "ranges" cuts it into tasks of a quarter each, scanned past their ends.
        docs = ["\n".join(docs)]
        corpus = write_text(tmp_path / "c.txt", docs[0])
        if form == "ranges":
            monkeypatch.setattr(corpus_pass, "MIN_TASK_BYTES", 1)
            tasks = corpus_pass.usage_tasks(tok, corpus_files([str(corpus)]), 1, "text")
            assert len(tasks) > 1
    usage = corpus_usage(tok, [str(corpus)], workers=1)
    vocab = hf.get_vocab()
    contents = {t.content for t in added}
    candidates = {
        s.encode(): vocab[byte_level_chars(s.encode())]
        for s in _strings(chars, 3)
        if s not in contents
    }
    _check(usage, candidates, _seen(hf, docs))


def test_a_case_lowercased_into_a_special_tokens_spelling_is_text(tmp_path):
    """BERT's shape: "<mask>" is special and not normalized, so tokenizers takes it where
    the corpus writes "<mask>", while "<MASK>", lowercased to "<mask>" after the added
    tokens were looked for, is text: its "k>" is found across tokens."""
    chars = "<>askm x"
    entries = ["[UNK]", *chars, *_strings(chars, 3)]
    hf = tokenizers.Tokenizer(
        models.WordPiece({t: i for i, t in enumerate(entries)}, unk_token="[UNK]")
    )
    hf.normalizer = normalizers.BertNormalizer(lowercase=True)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.add_special_tokens([AddedToken("[UNK]", special=True)])
    hf.add_special_tokens([AddedToken("<mask>", special=True, normalized=False)])
    hf.save(str(tmp_path / "tokenizer.json"))
    docs = _docs(11, ["<mask>", "<MASK>", " <Mask> ", "x", "ask", " ", ">"])
    assert "<MASK>" in "".join(docs) and " <mask>" in "".join(docs)
    lines = "".join(json.dumps({"text": d}) + "\n" for d in docs)
    corpus = write_text(tmp_path / "c.jsonl", lines)
    tok = open_tokenizer(tmp_path / "tokenizer.json")
    assert isinstance(tok, ForeignTokenizer)
    usage = corpus_usage(tok, [str(corpus)], workers=1)
    vocab = hf.get_vocab()
    seen = _seen(hf, docs)
    assert any(b"k>" in s for s in seen)  # "<MASK>" read as text
    # A WordPiece piece may be emitted whole (a word "ax"): only the unused are checked.
    unused = set(usage.across or ()) | set(usage.absent or ())
    candidates = {s.encode(): vocab[s] for s in _strings(chars, 3) if vocab[s] in unused}
    assert vocab["k>"] in candidates.values()
    _check(usage, candidates, seen)
