"""The under-trained scan of a byte-level file whose ByteLevel pre-tokenizer adds a prefix
space (``add_prefix_space``) reads each text as the model is given it, that space included:
" Zq" met only at the start of a document, where the corpus has "Zq", is found across tokens,
not absent. The oracle is ``tokenizers``' own pre-tokenizer: its pieces, joined and read back
as bytes."""

from __future__ import annotations

import json

import pytest
import tokenizers
from core_helpers import byte_level_chars, write_text
from tokenizers import AddedToken, Regex, decoders, models, pre_tokenizers

from bpe_studio.core.encode.foreign import ForeignTokenizer, open_tokenizer
from bpe_studio.core.explain import corpus_pass
from bpe_studio.core.explain.usage import corpus_usage

EOT = "<|endoftext|>"
DOCS = ["Zq went home", "Zq sat at home"]


@pytest.mark.parametrize("form", ["text", "jsonl"])
def test_the_prefix_space_bytelevel_adds_is_text_the_model_sees(tmp_path, monkeypatch, form):
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    for token in (" Zq", " Zqx", "ome"):  # no merge makes any: none is emitted
        vocab.setdefault(byte_level_chars(token.encode()), len(vocab))
    hf = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([AddedToken(EOT, special=True)])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    docs = DOCS * 30
    if form == "text":
        corpus = write_text(tmp_path / "c.txt", EOT.join(docs))
    else:
        corpus = write_text(
            tmp_path / "c.jsonl", "".join(json.dumps({"text": d}) + "\n" for d in docs)
        )
    monkeypatch.setattr(corpus_pass, "MIN_TASK_BYTES", 64)
    tok = open_tokenizer(path)
    assert tok.hf_pipeline is not None  # read here
    usage = corpus_usage(tok, [str(corpus)], workers=1)

    byte_level = decoders.ByteLevel()
    seen = [
        byte_level.decode([p for p, _ in hf.pre_tokenizer.pre_tokenize_str(d)]).encode()
        for d in DOCS
    ]
    assert all(not d.startswith(" ") for d in DOCS) and seen[0].startswith(b" Zq")
    for token, occurs in ((" Zq", True), (" Zqx", False), ("ome", True)):
        i = vocab[byte_level_chars(token.encode())]
        assert occurs == any(token.encode() in s for s in seen)
        assert (i in usage.across) == occurs and (i in usage.absent) != occurs, token


@pytest.mark.parametrize("scheme", ["always", "first"])
def test_the_mark_metaspace_puts_first_is_text_the_model_sees(tmp_path, scheme):
    """The same for a file tokenizers runs: Metaspace puts "▁" (a space, as the table spells
    it) before each text ("always") or the first ("first"). The oracle: the tokens
    tokenizers gives the whole corpus, joined, cut at the special token."""
    specials = ["<unk>", "</s>"]
    vocab = {t: i for i, t in enumerate(specials + sorted(set("Zqwenthomsa\u2581")))}
    for token in ("\u2581Zq", "\u2581Zqx"):  # no merge makes either
        vocab.setdefault(token, len(vocab))
    hf = tokenizers.Tokenizer(models.BPE(vocab, [], unk_token="<unk>"))
    hf.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=scheme)
    hf.add_special_tokens([AddedToken(t, special=True) for t in specials])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    text = "</s>".join(DOCS * 10)
    corpus = write_text(tmp_path / "c.txt", text)
    usage = corpus_usage(open_tokenizer(path), [str(corpus)], workers=1)
    tokens = hf.encode(text, add_special_tokens=False).tokens
    seen = "".join(tokens).replace("\u2581", " ").split("</s>")
    assert seen[0].startswith(" Zq") and seen[1].startswith(" Zq") == (scheme == "always")
    for token, occurs in (("\u2581Zq", True), ("\u2581Zqx", False)):
        assert occurs == any(token.replace("\u2581", " ") in s for s in seen)
        i = vocab[token]
        assert (i in usage.across) == occurs and (i in usage.absent) != occurs, token


def _split_then(prefixing):
    """A Sequence that isolates runs of digits, then ``prefixing`` (a pre-tokenizer that
    puts a space before each piece it is given)."""
    return pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(r"\d+"), behavior="isolated"), prefixing]
    )


# " Zq" is met only where the Split cut "42Zq": the space is the one ByteLevel puts before
# the piece "Zq"; no text starts with "Zq", and " Zq" is nowhere in the corpus.
CUT_DOCS = ["it was 42Zq at home", "we sat by 7Zq"]


@pytest.mark.parametrize("use_regex", [False, True])
def test_the_space_bytelevel_puts_before_a_piece_a_split_cut_is_text_the_model_sees(
    tmp_path, monkeypatch, use_regex
):
    """An audit: after a Split, ByteLevel's add_prefix_space puts a space before each piece;
    the scan read the text without those spaces, so " Zq", met only there, was "absent"."""
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    # ("2 Zq": its pair "2 " is nowhere in the corpus either)
    for token in (" Zq", " Zqx", " we", "ome", "2 Zq"):  # no merge makes any: none is emitted
        vocab.setdefault(byte_level_chars(token.encode()), len(vocab))
    hf = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.pre_tokenizer = _split_then(
        pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=use_regex)
    )
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([AddedToken(EOT, special=True)])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    corpus = write_text(tmp_path / "c.txt", EOT.join(CUT_DOCS * 30))
    monkeypatch.setattr(corpus_pass, "MIN_TASK_BYTES", 64)
    tok = open_tokenizer(path)
    assert tok.hf_pipeline is not None  # read here
    usage = corpus_usage(tok, [str(corpus)], workers=1)

    byte_level = decoders.ByteLevel()
    seen = [
        byte_level.decode([p for p, _ in hf.pre_tokenizer.pre_tokenize_str(d)]).encode()
        for d in CUT_DOCS
    ]
    assert b" Zq" in seen[0] and " Zq" not in EOT.join(CUT_DOCS)  # the oracle
    for token in (" Zq", " Zqx", " we", "ome", "2 Zq"):
        i = vocab[byte_level_chars(token.encode())]
        occurs = any(token.encode() in s for s in seen)
        assert (i in usage.across) == occurs and (i in usage.absent) != occurs, token


@pytest.mark.parametrize("scheme", ["always", "first"])
def test_the_mark_metaspace_puts_before_a_piece_a_split_cut_is_text_the_model_sees(
    tmp_path, scheme
):
    """The same for a file tokenizers runs: Metaspace after a Split puts "▁" before each
    piece ("always"), or before the text's first alone ("first"). The oracle: the tokens
    tokenizers gives the whole corpus, joined, cut at the special token."""
    specials = ["<unk>", "</s>"]
    chars = sorted(set("".join(CUT_DOCS)) - {" "} | {"\u2581"})
    vocab = {t: i for i, t in enumerate(specials + chars)}
    for token in ("\u2581Zq", "\u2581Zqx", "\u2581it", "\u2581we"):  # no merge makes any
        vocab.setdefault(token, len(vocab))
    hf = tokenizers.Tokenizer(models.BPE(vocab, [], unk_token="<unk>"))
    hf.pre_tokenizer = _split_then(pre_tokenizers.Metaspace(prepend_scheme=scheme))
    hf.add_special_tokens([AddedToken(t, special=True) for t in specials])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    text = "</s>".join(CUT_DOCS * 10)
    corpus = write_text(tmp_path / "c.txt", text)
    tok = open_tokenizer(path)
    assert isinstance(tok, ForeignTokenizer)
    usage = corpus_usage(tok, [str(corpus)], workers=1)
    tokens = hf.encode(text, add_special_tokens=False).tokens
    assert "<unk>" not in tokens
    seen = "".join(tokens).replace("\u2581", " ").split("</s>")
    assert any(" Zq" in s for s in seen) == (scheme == "always")  # the oracle
    for token in ("\u2581Zq", "\u2581Zqx", "\u2581it", "\u2581we"):
        occurs = any(token.replace("\u2581", " ") in s for s in seen)
        i = vocab[token]
        assert (i in usage.across) == occurs and (i in usage.absent) != occurs, token


def test_the_space_bytelevel_puts_after_punctuation_is_text_the_model_sees(tmp_path):
    """The same where tokenizers runs a byte-level file (its Punctuation is refused here):
    ByteLevel's prefix space before each piece Punctuation cut. The oracle: tokenizers'
    own pieces, ByteLevel-decoded."""
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    for token in (" Zq", " Zqx"):
        vocab.setdefault(byte_level_chars(token.encode()), len(vocab))
    hf = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Punctuation(), pre_tokenizers.ByteLevel(add_prefix_space=True)]
    )
    hf.decoder = decoders.ByteLevel()
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    docs = ["it was (Zq) at home", "we sat"]
    corpus = write_text(
        tmp_path / "c.jsonl", "".join(json.dumps({"text": d}) + "\n" for d in docs * 10)
    )
    tok = open_tokenizer(path)
    assert isinstance(tok, ForeignTokenizer)
    usage = corpus_usage(tok, [str(corpus)], workers=1)
    byte_level = decoders.ByteLevel()
    seen = [byte_level.decode([p for p, _ in hf.pre_tokenizer.pre_tokenize_str(d)]) for d in docs]
    assert " Zq" in seen[0] and " Zq" not in docs[0]  # the oracle
    for token, occurs in ((" Zq", True), (" Zqx", False)):
        i = vocab[byte_level_chars(token.encode())]
        assert (i in usage.across) == occurs and (i in usage.absent) != occurs, token
