"""``encode`` and ``decode`` with WordPiece, Unigram and SentencePiece-style BPE files: the ids
are ``tokenizers``' own (of the text alone), the decoded text ``tokenizers``' decoding."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
import tokenizers
from cli_run import cli, encode_ids, error_line, ok
from core_helpers import SLICES, fixture_path
from foreign_files import falcon_style, llama3_style, sentencepiece_bpe, unigram, wordpiece

MAKERS = {"wordpiece": wordpiece, "unigram": unigram, "sentencepiece_bpe": sentencepiece_bpe}


@pytest.mark.parametrize("name", list(MAKERS))
def test_encode_then_decode_as_tokenizers_does(tmp_path, name):
    path = MAKERS[name](tmp_path / name)
    text_path = fixture_path(SLICES["chinese"])
    text = text_path.read_text(encoding="utf-8")
    oracle = tokenizers.Tokenizer.from_file(str(path))
    expected = oracle.encode(text, add_special_tokens=False).ids
    # The folder holding the file is the same source as the file.
    ids = encode_ids(tmp_path, text_path, path.parent)
    assert ids == expected
    ids_file = tmp_path / "ids.npy"
    ok(cli(tmp_path, "encode", text_path, "--tokenizer", path, "--out", ids_file))
    out = tmp_path / "back.txt"
    ok(cli(tmp_path, "decode", ids_file, "--tokenizer", path, "--out", out))
    assert out.read_text(encoding="utf-8") == oracle.decode(expected, skip_special_tokens=False)


def test_pattern_with_a_foreign_file_is_one_line(tmp_path):
    path = unigram(tmp_path)
    text = tmp_path / "t.txt"
    text.write_text("hello", encoding="utf-8")
    result = cli(
        tmp_path, "encode", text, "--tokenizer", path, "--pattern", "gpt2", "--out", "x.npy"
    )
    assert "a Unigram tokenizer splits text its own way" in error_line(result)


def test_convert_of_a_foreign_file_says_why_not(tmp_path):
    path = wordpiece(tmp_path / "wp")
    result = cli(tmp_path, "convert", path, "--to", "gpt2", "--out", tmp_path / "out")
    line = error_line(result)
    assert str(path) in line and "a WordPiece tokenizer, not byte-level BPE" in line


def _broken(tmp_path, name, change):
    """A SentencePiece-style file ``change`` breaks, as ``tokenizers`` cannot build it."""
    spec = json.loads(sentencepiece_bpe(tmp_path / "made").read_text(encoding="utf-8"))
    change(spec["model"])
    path = tmp_path / name / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return path


BROKEN = {
    # A merge naming a token the vocabulary lacks.
    "unknown_merge": lambda model: model["merges"].insert(0, ["\u2581", "qqqzz"]),
    "unknown_model": lambda model: model.update(type="Foo"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_convert_of_a_broken_foreign_file_says_what_is_wrong(tmp_path, name):
    """Not that it is a kind only encode, decode and inspect take: they would refuse it too.
    The words are tokenizers' own reason, as encode gives it."""
    path = _broken(tmp_path, name, BROKEN[name])
    with pytest.raises(Exception) as info:  # the oracle: tokenizers itself refuses it
        tokenizers.Tokenizer.from_file(str(path))
    line = error_line(cli(tmp_path, "convert", path, "--to", "hf", "--out", tmp_path / "out"))
    encoding = error_line(cli(tmp_path, "encode", "-", "--tokenizer", path, "--out", "x.npy"))
    assert "not byte-level BPE" not in line
    if name == "unknown_model":
        assert f"{path}: model type 'Foo' is not one tokenizers runs" in line
    else:
        assert f"{path}: tokenizers cannot read it ({info.value})" in line
    assert line == encoding


@pytest.mark.parametrize("name", ["byte_level", "unigram"])
def test_truncation_and_padding_are_not_applied_and_the_summaries_say_so(tmp_path, name):
    made = llama3_style if name == "byte_level" else unigram
    oracle = tokenizers.Tokenizer.from_file(str(made(tmp_path / "made")))
    oracle.enable_truncation(max_length=4)
    oracle.enable_padding(length=16, pad_id=0, pad_token=oracle.id_to_token(0))
    path = tmp_path / "padded" / "tokenizer.json"
    path.parent.mkdir()
    oracle.save(str(path))
    oracle.no_truncation()
    oracle.no_padding()
    text = "the quick brown fox jumps over the lazy dog\n" * 3
    text_path = tmp_path / "t.txt"
    text_path.write_text(text, encoding="utf-8")
    ids_file = tmp_path / "ids.npy"
    said = ok(cli(tmp_path, "encode", text_path, "--tokenizer", path, "--out", ids_file))
    assert np.load(ids_file).tolist() == oracle.encode(text, add_special_tokens=False).ids
    note = f"note: {path}: its truncation and padding are not applied"
    assert said.count(note) == 1
    shown = cli(tmp_path, "inspect", path)
    ok(shown)
    assert shown.stdout.count(note) == 1


@pytest.mark.parametrize("to", ["hf", "gpt2"])
def test_convert_says_truncation_and_padding_are_not_written(tmp_path, to):
    # Review h_rev63: convert of a tokenizer.json with truncation and padding wrote a file
    # with both null and said nothing, where the README says a note says so.
    oracle = tokenizers.Tokenizer.from_file(str(llama3_style(tmp_path / "made", full=False)))
    oracle.enable_truncation(max_length=4)
    oracle.enable_padding(length=16, pad_id=0, pad_token=oracle.id_to_token(0))
    path = tmp_path / "padded" / "tokenizer.json"
    path.parent.mkdir()
    oracle.save(str(path))
    out = tmp_path / "out"
    said = ok(cli(tmp_path, "convert", path, "--to", to, "--out", out))
    assert said.count(f"note: {path}: its truncation and padding are not applied") == 1
    assert said.count("note: the files written hold no truncation, padding or dropout") == 1
    if to == "hf":
        written = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
        assert written["truncation"] is None and written["padding"] is None
    plain = ok(cli(tmp_path, "convert", out, "--to", to, "--out", tmp_path / "again"))
    assert "note:" not in plain


def test_convert_says_nothing_of_truncation_a_file_never_had(tmp_path):
    """An audit: converting a tokenizer.json whose pre-tokenizer drops text (a Split that
    keeps its matches only) said "the files written hold no truncation, padding or
    dropout", of a file that had none: it followed any note. The oracle: tokenizers reads
    the file with neither truncation nor padding."""
    from tokenizers import Regex
    from tokenizers import pre_tokenizers as pt

    oracle = tokenizers.Tokenizer.from_file(str(llama3_style(tmp_path / "made", full=False)))
    split = pt.Split(Regex(r"\w+"), "removed", invert=True)
    oracle.pre_tokenizer = pt.Sequence(
        [split, pt.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    path = tmp_path / "drops" / "tokenizer.json"
    path.parent.mkdir()
    oracle.save(str(path))
    again = tokenizers.Tokenizer.from_file(str(path))
    assert again.truncation is None and again.padding is None
    said = ok(cli(tmp_path, "convert", path, "--to", "hf", "--out", tmp_path / "out"))
    assert f"note: {path}: its pre-tokenizer drops text" in said
    assert "truncation" not in said


def test_decoding_with_a_file_without_a_decoder_says_it_is_not_the_text(tmp_path):
    """An audit: a byte-level file with "decoder": null decodes (as tokenizers does) to the
    tokens' spellings joined by spaces, and decode said nothing of it."""
    base = tokenizers.Tokenizer.from_file(str(llama3_style(tmp_path / "base", full=False)))
    base.decoder = None
    path = tmp_path / "tokenizer.json"
    base.save(str(path))
    (tmp_path / "t.txt").write_text("Hello wörld", encoding="utf-8")
    ok(cli(tmp_path, "encode", "t.txt", "--tokenizer", path, "--out", "ids.npy"))
    said = ok(cli(tmp_path, "decode", "ids.npy", "--tokenizer", path, "--out", "back.txt"))
    ids = np.load(tmp_path / "ids.npy").tolist()
    assert (tmp_path / "back.txt").read_text(encoding="utf-8") == base.decode(ids)
    assert said.count(f"note: {path}: its decoder (null) has no ByteLevel step") == 1


def test_a_byte_level_file_the_reader_refuses_is_run_by_tokenizers(tmp_path):
    path = falcon_style(tmp_path / "falcon")
    oracle = tokenizers.Tokenizer.from_file(str(path))
    text = "Hello, world 123456 don't!\n" * 3
    text_path = tmp_path / "t.txt"
    text_path.write_text(text, encoding="utf-8")
    ids_file = tmp_path / "ids.npy"
    said = ok(cli(tmp_path, "encode", text_path, "--tokenizer", path, "--out", ids_file))
    assert np.load(ids_file).tolist() == oracle.encode(text, add_special_tokens=False).ids
    note = f"note: {path}: run by tokenizers"
    assert said.count(note) == 1
    back = tmp_path / "back.txt"
    decoded = ok(cli(tmp_path, "decode", ids_file, "--tokenizer", path, "--out", back))
    assert back.read_text(encoding="utf-8") == text
    assert decoded.count(note) == 1  # an audit: decode said none of its notes
    shown = cli(tmp_path, "inspect", path)
    ok(shown)
    assert shown.stdout.count(note) == 1
    # An audit: "unreachable: the Reach rule applies to byte-level BPE only" contradicted the
    # kind above it; the token list spelled a space "Ġ" (the file's), not "␣" (ours).
    assert "unreachable: Reach needs a file this project reads itself; this one is run" in (
        shown.stdout
    )
    as_json = cli(tmp_path, "inspect", path, "--json")
    ok(as_json)
    tokens = json.loads(as_json.stdout)["tokens"]
    (space,) = [t for t in tokens if t["bytes"] == "20"]
    assert space["token"] == space["text"] == "␣"
    # convert needs the project's own reading: refused, saying where it runs.
    line = error_line(cli(tmp_path, "convert", path, "--to", "gpt2", "--out", tmp_path / "o"))
    assert "Punctuation" in line and "tokenizers runs this file" in line


@pytest.mark.parametrize("kind", ["wordpiece", "unigram", "sentencepiece", "byte-level"])
def test_encode_says_the_text_a_foreign_file_drops_is_not_counted(tmp_path, kind):
    """An audit: encode with a BERT-style file (which drops every space) gave its ratio as
    if nothing were dropped, without a word; a Unigram with WhitespaceSplit, a
    SentencePiece-style BPE with CharDelimiterSplit and a byte-level file with the
    BertPreTokenizer the same. What they drop is not counted (their ids are not the text's
    bytes): said, and the ratio said to be of the whole input. The oracle: tokenizers' own
    pre-tokenizer leaves bytes out, and its ids."""
    from core_helpers import write_text
    from foreign_files import dropping_files, pre_tokenizer_dropped

    path = dropping_files(tmp_path)[kind]
    text = "The cat sat on the mat|again, and again.\n" * 40
    write_text(tmp_path / "t.txt", text)
    assert pre_tokenizer_dropped(path, text) > 0
    result = cli(tmp_path, "encode", "t.txt", "--tokenizer", path, "--out", "ids.npy")
    ok(result)
    ids = tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids
    assert np.load(tmp_path / "ids.npy").tolist() == ids
    lines = result.stderr.splitlines()
    said = "note: the tokenizer.json's pre-tokenizer drops text, as tokenizers does (no id "
    assert f"{said}stands for it): not counted, as the ids' bytes cannot tell how much" in lines
    ratio = f"compression ratio: {len(text.encode()) / len(ids):.2f} bytes/token"
    assert f"{ratio} (of the whole input, the text dropped not counted out)" in lines, lines


@pytest.mark.parametrize("command", ["encode", "inspect"])
def test_a_compressed_corpus_not_in_utf8_is_said_to_be_decompressed(tmp_path, command):
    """The inspect audit: under another kind of tokenizer, inspect said "t.txt.gz: not valid
    UTF-8 at byte offset 120003" of a 298-byte file, where a byte-level one said
    "(decompressed)", as the offset is into the decompressed text."""
    (tmp_path / "t.txt.gz").write_bytes(gzip.compress(b"hello world\n" * 1000 + b"caf\xe9\n"))
    path = wordpiece(tmp_path / "wp")
    args = {
        "encode": ("encode", "t.txt.gz", "--tokenizer", path, "--out", "ids.npy"),
        "inspect": ("inspect", path, "--corpus", "t.txt.gz"),
    }[command]
    assert error_line(cli(tmp_path, *args)).startswith(
        "bpe-studio: error: t.txt.gz (decompressed): not valid UTF-8 at byte offset 12003 "
    )


@pytest.mark.parametrize(
    ("named", "workers"),
    [("StripAccents", 1), ("Replace", 1), ("Replace", 2), ("Precompiled", 1)],
)
def test_encode_says_what_a_normalizer_deletes_is_not_counted(tmp_path, named, workers):
    """An audit: encode with a file whose normalizer deletes characters (NFD + StripAccents,
    which tokenizers runs; a Replace by "", read here, in this process or in the workers; a
    SentencePiece charsmap with a deleting rule) gave its ratio as if nothing were dropped,
    without a word, where inspect names the step. The oracle: tokenizers' own normalize_str
    leaves characters out, and its ids."""
    from foreign_files import precompiled_charsmap
    from tokenizers import decoders, models, normalizers, pre_tokenizers

    steps = {
        "StripAccents": normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents()]),
        "Replace": normalizers.Replace("x", ""),
        "Precompiled": normalizers.Precompiled(precompiled_charsmap("x", "")),
    }
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    hf = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.normalizer = steps[named]
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.save(str(tmp_path / "tokenizer.json"))
    text = "café naïve xxx résumé\n" * 40
    assert len(hf.normalizer.normalize_str(text).encode()) < len(text.encode())  # the oracle
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    result = cli(tmp_path, "encode", "t.txt", "--tokenizer", "tokenizer.json", "--out", "ids.npy",
                 "--workers", str(workers))  # fmt: skip
    ok(result)
    ids = hf.encode(text, add_special_tokens=False).ids
    assert np.load(tmp_path / "ids.npy").tolist() == ids
    lines = result.stderr.splitlines()
    said = f"note: the tokenizer.json's normalizer ({named}) deletes characters (no id stands "
    assert f"{said}for them): not counted, as the ids' bytes cannot tell how much" in lines
    ratio = f"compression ratio: {len(text.encode()) / len(ids):.2f} bytes/token"
    assert f"{ratio} (of the whole input, the text dropped not counted out)" in lines, lines
