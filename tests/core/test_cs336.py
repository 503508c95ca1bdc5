"""CS336 assignment 1 semantics: the reference merges for corpus.en, id layout, special tokens,
and the edge cases (empty corpus, running out of pairs)."""

from __future__ import annotations

import json

import pytest
from core_helpers import EOT, FIXTURES, write_text
from gpt2_bytes import BYTE_TO_CHAR, read_gpt2_merges, token_from_gpt2, token_to_gpt2

from bpe_studio.core import train_bpe
from bpe_studio.core.formats.gpt2 import bytes_to_unicode


def test_own_gpt2_alphabet_has_gpt2s_known_characters():
    # Values known from GPT-2's published files: space is "Ġ", newline "Ċ", tab "ĉ",
    # byte 0 "Ā", soft hyphen 0xAD "Ń", byte 0x7F "ġ".
    assert BYTE_TO_CHAR[0x20] == "Ġ"
    assert BYTE_TO_CHAR[0x0A] == "Ċ"
    assert BYTE_TO_CHAR[0x09] == "ĉ"
    assert BYTE_TO_CHAR[0x00] == "Ā"
    assert BYTE_TO_CHAR[0xAD] == "Ń"
    assert BYTE_TO_CHAR[0x7F] == "ġ"
    assert BYTE_TO_CHAR[ord("a")] == "a"
    assert len(set(BYTE_TO_CHAR.values())) == 256
    assert token_from_gpt2(token_to_gpt2(bytes(range(256)))) == bytes(range(256))


def test_library_alphabet_equals_own():
    assert bytes_to_unicode() == BYTE_TO_CHAR


@pytest.fixture(scope="module")
def corpus_en_result():
    return train_bpe(FIXTURES / "corpus.en", 500, [EOT])


def test_corpus_en_merges_equal_reference(corpus_en_result):
    _, merges = corpus_en_result
    reference = read_gpt2_merges(FIXTURES / "train-bpe-reference-merges.txt")
    assert len(reference) == 500 - 257
    assert merges == reference


def test_corpus_en_vocab_equals_reference_as_a_set(corpus_en_result):
    vocab, _ = corpus_en_result
    raw = json.loads((FIXTURES / "train-bpe-reference-vocab.json").read_text(encoding="utf-8"))
    reference = {token_from_gpt2(tok) for tok in raw}
    assert len(reference) == len(raw) == 500
    assert len(vocab) == 500
    assert set(vocab.values()) == reference
    # Our ids: bytes first, then the special token (the reference puts it at 0).
    assert vocab[256] == EOT.encode()
    assert raw[EOT] == 0


def test_id_layout_bytes_then_specials_then_merges(tmp_path):
    path = write_text(tmp_path / "c.txt", "hello hello world<|sep|>hello<|endoftext|>")
    specials = [EOT, "<|sep|>", EOT, "<|pad|>", "<|sep|>"]
    vocab, merges = train_bpe(path, 266, specials)
    for i in range(256):
        assert vocab[i] == bytes([i])
    # Duplicates appear once, in the order of first appearance.
    assert [vocab[256], vocab[257], vocab[258]] == [b"<|endoftext|>", b"<|sep|>", b"<|pad|>"]
    assert len(merges) == 266 - 259
    for k, (left, right) in enumerate(merges):
        assert vocab[259 + k] == left + right
    assert sorted(vocab) == list(range(266))


def test_first_merges_of_a_small_text(tmp_path):
    # " hello" x2 and "hello" x1 (the special tokens split it off), " world" x1.
    # Pair counts: (h,e) (e,l) (l,l) (l,o) 3 each; (" ",h) 2 ... Top tie of four at 3:
    # ("l","o") > ("l","l") > ("h","e") > ("e","l"). Then ("l","lo") ties with ("h","e") and
    # ("e","l") at 3 and wins; then ("h","e") beats ("e","llo").
    path = write_text(tmp_path / "c.txt", "hello hello world<|sep|>hello<|endoftext|>")
    _, merges = train_bpe(path, 258 + 3, [EOT, "<|sep|>"])
    assert merges == [(b"l", b"o"), (b"l", b"lo"), (b"h", b"e")]


def test_special_token_never_inside_a_merged_token(tmp_path):
    # Without special-token handling "<|endoftext|>" would be by far the most frequent
    # string here and its pieces would be merged first.
    docs = ["a cat", "dogs run", "the sun", "blue sky"] * 50
    text = EOT.join(docs) + EOT
    path = write_text(tmp_path / "c.txt", text)
    vocab, merges = train_bpe(path, 400, [EOT])
    for tok in list(vocab.values())[257:]:
        assert b"<|" not in tok and b"|>" not in tok and b"endoftext" not in tok
    for left, right in merges:
        assert b"|" not in left + right and b"<" not in left + right
    # Control: without the special token, its pieces are merged first.
    vocab2, merges2 = train_bpe(path, 300, [])
    assert any(b"endoftext" in a + b for a, b in merges2)


def test_empty_corpus_gives_bytes_and_specials_only(tmp_path):
    path = write_text(tmp_path / "empty.txt", "")
    vocab, merges = train_bpe(path, 1000, [EOT, "<pad>"])
    assert merges == []
    assert vocab == {**{i: bytes([i]) for i in range(256)}, 256: EOT.encode(), 257: b"<pad>"}


def test_corpus_of_only_special_tokens_has_no_merges(tmp_path):
    path = write_text(tmp_path / "c.txt", EOT * 100)
    vocab, merges = train_bpe(path, 1000, [EOT])
    assert merges == []
    assert len(vocab) == 257


def test_stops_early_when_no_pair_is_left(tmp_path):
    # "abcd" can be merged three times at most; single characters give no pair at all.
    path = write_text(tmp_path / "c.txt", "abcd\nx\ny\n")
    vocab, merges = train_bpe(path, 10_000, [])
    assert len(merges) == 3
    assert len(vocab) == 259
    assert vocab[258] == b"abcd"
    assert merges[0] == (b"c", b"d")  # all three pairs count 1; ("c","d") is the greatest


def test_vocab_size_exactly_256_plus_specials_means_no_merges(tmp_path):
    path = write_text(tmp_path / "c.txt", "hello hello hello")
    vocab, merges = train_bpe(path, 257, [EOT])
    assert merges == [] and len(vocab) == 257


def test_a_trainer_says_how_far_it_is_in_its_repr(tmp_path):
    """Found by the API audit: a trainer printed as ``<... object at 0x...>``."""
    from bpe_studio.core import trainer_from_file

    path = write_text(tmp_path / "c.txt", "low lower lowest newer wider " * 30)
    trainer = trainer_from_file(path, 270, [EOT], workers=1)
    assert repr(trainer).startswith("<BpeTrainer 0 of 13 merges made, vocabulary size 270")
    for _ in zip(range(3), trainer):
        pass
    trainer.cancel()
    assert repr(trainer).startswith("<BpeTrainer 3 of 13 merges made (cancelled)")
