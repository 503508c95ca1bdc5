"""The under-trained scan of a file ``tokenizers`` runs (WordPiece, SentencePiece-style BPE)
reads the text as its normalizer gives it to the model, as the scan of a file read here does
(``test_usage_normalized_scan``): under BERT's lowercasing " Fun" is seen as " fun", and
Llama 2's ``Prepend("▁")`` puts a space-standing ``▁`` before each text. The oracle is
Hugging Face's own ``normalize_str`` of each stretch between special tokens, less what its own
pre-tokenizer drops (BERT's spaces), with ``▁`` read as the space it stands for (as the
vocabulary table spells such a file's tokens)."""

from __future__ import annotations

import json

import pytest
import tokenizers
from core_helpers import write_text
from foreign_files import kept_runs, wordpiece_keeping_spaces
from tokenizers import AddedToken, models, normalizers, pre_tokenizers

from bpe_studio.core.encode.foreign import ForeignTokenizer, open_tokenizer
from bpe_studio.core.explain.usage import absent_words, corpus_usage

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _wordpiece(path):
    """BERT's shape, by hand: lowercasing normalizer, whitespace-and-punctuation pieces.
    "n!" spans two pieces ("fun", "!"): never emitted, its bytes only across. "g f" holds a
    space, which the pre-tokenizer drops: its bytes are in no text the model is given."""
    specials = ["[UNK]", "[SEP]"]
    words = ["big", "fun", "no", "here"]
    entries = specials + list(LETTERS) + [f"##{c}" for c in LETTERS] + words + ["!", "n!"]
    entries += ["g f", "qz"]
    hf = tokenizers.Tokenizer(
        models.WordPiece({t: i for i, t in enumerate(entries)}, unk_token="[UNK]")
    )
    hf.normalizer = normalizers.BertNormalizer(lowercase=True)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.add_special_tokens(specials)
    hf.save(str(path))
    return hf, "[SEP]", ["n!"]


def _sentencepiece_bpe(path):
    """Llama 2's shape, by hand: ``Prepend("▁")`` and ``Replace(" ", "▁")``. "▁The" is in
    the vocabulary but no merge makes it, so it is never emitted; " The" (as the table spells
    it) occurs only after the ``▁`` the normalizer puts before each text: at no place in the
    corpus as written, where each text starts with "The"."""
    specials = ["<unk>", "</s>"]
    chars = sorted(set("Thecatsonmqz\u2581"))
    vocab = {t: i for i, t in enumerate(specials + chars)}
    merges = [("\u2581", "T"), ("h", "e"), ("\u2581", "c"), ("\u2581c", "a"), ("\u2581ca", "t")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    for token in ("\u2581The", "qz"):
        vocab.setdefault(token, len(vocab))
    hf = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token="<unk>"))
    hf.normalizer = normalizers.Sequence(
        [normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")]
    )
    hf.add_special_tokens([AddedToken(t, special=True) for t in specials])
    hf.save(str(path))
    return hf, "</s>", ["\u2581The"]


FILES = {"wordpiece": _wordpiece, "sentencepiece_bpe": _sentencepiece_bpe}
DOCS = {
    "wordpiece": ["Big Fun", "No Fun! here"],
    "sentencepiece_bpe": ["The cat", "The cats on the mat"],
}


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("form", ["text", "jsonl"])
def test_the_scan_reads_the_text_as_the_model_is_given_it(tmp_path, name, form):
    hf, separator, across_only = FILES[name](tmp_path / "tokenizer.json")
    docs = DOCS[name] * 30
    if form == "text":
        corpus = write_text(tmp_path / "c.txt", separator.join(docs))
    else:
        lines = "".join(json.dumps({"text": d}) + "\n" for d in docs)
        corpus = write_text(tmp_path / "c.jsonl", lines)
    tok = open_tokenizer(tmp_path / "tokenizer.json")
    assert isinstance(tok, ForeignTokenizer)  # run by tokenizers, not read here
    usage = corpus_usage(tok, [str(corpus)], workers=1)
    assert usage.across is not None and usage.absent is not None

    # What the model is given: each text (a record, or a stretch between two special
    # tokens) normalized on its own, less what the pre-tokenizer drops; "▁" stands for a
    # space, as in the table's bytes.
    seen = [
        run.replace("\u2581".encode(), b" ")
        for d in docs
        for run in kept_runs(hf, hf.normalizer.normalize_str(d))
    ]
    entries = {i: t for t, i in hf.get_vocab().items()}
    spelled = {i: t.removeprefix("##").replace("\u2581", " ").encode() for i, t in entries.items()}

    def occurs(i):
        return any(spelled[i] in s for s in seen)

    by_token = {t: i for i, t in entries.items()}
    for token in across_only:
        i = by_token[token]
        assert i in usage.across and occurs(i), token
    assert by_token["qz"] in usage.absent
    if name == "wordpiece":
        assert by_token["g f"] in usage.absent  # met only across a space BERT's drops
    assert all(occurs(i) for i in usage.across)
    assert not any(occurs(i) for i in usage.absent)


def _usage_of(tmp_path, hf, docs):
    """The usage of ``docs`` (records) under the file ``hf``, saved and opened here."""
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    tok = open_tokenizer(path)
    assert isinstance(tok, ForeignTokenizer)
    return corpus_usage(tok, [str(corpus)], workers=1)


def test_a_normalized_special_token_is_one_id_not_text(tmp_path):
    """An audit: a special "[MASK]" marked normalized is found by tokenizers in the
    lowercased text, one id; the scan read its text there as "[mask]", which its search for
    special tokens' text did not know, and called the unused "mask" found across tokens."""
    entries = ["[UNK]", "[MASK]", *LETTERS, *(f"##{c}" for c in LETTERS), "[", "]", "hello", "mask"]
    hf = tokenizers.Tokenizer(
        models.WordPiece({t: i for i, t in enumerate(entries)}, unk_token="[UNK]")
    )
    hf.normalizer = normalizers.BertNormalizer(lowercase=True)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.add_special_tokens([AddedToken("[UNK]", special=True)])
    hf.add_special_tokens([AddedToken("[MASK]", special=True, normalized=True)])
    docs = ["Hello [MASK] hello"] * 20
    ids = hf.encode(docs[0], add_special_tokens=False).ids
    assert hf.token_to_id("[MASK]") in ids and hf.token_to_id("mask") not in ids  # the oracle
    usage = _usage_of(tmp_path, hf, docs)
    assert usage.count(hf.token_to_id("[MASK]")) == 20
    assert hf.token_to_id("mask") in usage.absent


def test_the_whitespace_an_lstrip_token_takes_is_not_text_the_model_sees(tmp_path):
    """An audit: "<mask>" with lstrip takes the space before it (tokenizers' pieces are
    "▁word", " <mask>"), yet the scan searched that space and called the unused "d▁"
    (bytes "d ") found across tokens."""
    specials = ["<unk>", "</s>"]
    chars = sorted(set("wordmask<>/\u2581"))
    vocab = {t: i for i, t in enumerate(specials + chars)}
    merges = [("\u2581", "w"), ("o", "r"), ("\u2581w", "or"), ("\u2581wor", "d")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    vocab.setdefault("d\u2581", len(vocab))  # no merge makes it: never emitted
    hf = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token="<unk>"))
    hf.normalizer = normalizers.Sequence(
        [normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")]
    )
    hf.add_special_tokens([AddedToken(t, special=True) for t in specials])
    hf.add_special_tokens([AddedToken("<mask>", special=True, lstrip=True)])
    docs = ["word <mask>"] * 20
    found = hf.encode(docs[0], add_special_tokens=False)
    assert found.tokens == ["\u2581word", " <mask>"]  # the oracle: the space is the mask's
    usage = _usage_of(tmp_path, hf, docs)
    assert vocab["d\u2581"] in usage.absent


def test_a_word_wordpiece_gives_as_unk_is_not_text_the_model_sees(tmp_path):
    """An audit: "xyzw" holds a "w" no WordPiece token holds, so the whole word is one
    [UNK] (tokenizers' ids say so); the scan still searched its text and called the unused
    "xyz", met only there, found across tokens, though the model is given one [UNK] id."""
    entries = ["[UNK]", *"abehklo", *(f"##{c}" for c in "abehklo"), "hello", "ok", "xyz"]
    hf = tokenizers.Tokenizer(
        models.WordPiece({t: i for i, t in enumerate(entries)}, unk_token="[UNK]")
    )
    hf.normalizer = normalizers.BertNormalizer(lowercase=True)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.add_special_tokens(["[UNK]"])
    docs = ["Hello ok xyzw", "ok hello"] * 10
    assert hf.encode(docs[0], add_special_tokens=False).tokens == ["hello", "ok", "[UNK]"]
    usage = _usage_of(tmp_path, hf, docs)
    assert hf.token_to_id("xyz") in usage.absent


def test_a_wordpiece_that_drops_nothing_says_its_unk_words_are_not_text_kept(tmp_path):
    """An audit: under a WordPiece whose pre-tokenizer drops nothing (dropped 0: it keeps
    the spaces as pieces), "xyz", met only inside "xyzw", which the model is given as one
    [UNK] id, was listed among the bytes "not in the text", which holds it: they are not
    in the text kept, as for a file that drops text, and the words are counted."""
    hf = tokenizers.Tokenizer.from_file(str(wordpiece_keeping_spaces(tmp_path / "made")))
    docs = ["Hello ok xyzw", "ok hello"] * 10
    found = hf.encode(docs[0], add_special_tokens=False)
    assert found.tokens == ["hello", " ", "ok", " ", "[UNK]"]  # the oracle
    assert "".join(p for p, _ in hf.pre_tokenizer.pre_tokenize_str(docs[0])) == docs[0]
    usage = _usage_of(tmp_path, hf, docs)
    assert usage.dropped == 0 and hf.token_to_id("xyz") in usage.absent
    assert absent_words(usage) == "not in the text kept"
    assert usage.unknown == 10  # the words left out
