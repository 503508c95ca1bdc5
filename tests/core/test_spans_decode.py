"""Tokenizer.spans (the editor's highlighting), decode, and construction checks."""

from __future__ import annotations

import pytest
from core_helpers import EOT, SLICES, is_utf8, read_fixture, slice_head
from hypothesis import given
from text_strategies import HYPO, TEXTS

from bpe_studio.core import Tokenizer

SAMPLES = {
    "ascii": "Hello, world! It's 2024:\n\tdon't   panic.  \n\n",
    "chinese": "中共中央总书记、国家主席江泽民发表１９９８年新年讲话《迈向充满希望的新世纪》。",
    "emoji": "😀👍🏽 👩‍👩‍👧🇫🇷 ok 🙂🙂🙂",
    "mixed": f"naïve café — 東京 👋 e\u0301\u0301 {EOT}𝔘𝔫𝔦 x\u3000y 'll\r\n",
}


def expected_spans(tok, text, ids):
    """Spans computed from scratch: each token's byte range in text.encode(), mapped to the
    characters holding its first and last byte; partial when either end of the range is not a
    character boundary."""
    char_of_byte = []
    boundaries = set()
    for ci, ch in enumerate(text):
        boundaries.add(len(char_of_byte))
        char_of_byte += [ci] * len(ch.encode("utf-8"))
    boundaries.add(len(char_of_byte))
    out, b = [], 0
    for tid in ids:
        e = b + len(tok.vocab[tid])
        partial = b not in boundaries or e not in boundaries
        out.append((tid, char_of_byte[b], char_of_byte[e - 1] + 1, partial))
        b = e
    assert b == len(char_of_byte)
    return out


def check_spans(tok, text):
    spans = tok.spans(text)
    ids = [s.id for s in spans]
    assert ids == tok.encode(text)
    assert b"".join(tok.vocab[i] for i in ids) == text.encode("utf-8")
    assert [tuple(s) for s in spans] == expected_spans(tok, text, ids)
    # They cover the text in order; only partial neighbours may share a character.
    pos = 0
    for s in spans:
        assert s.start <= pos and s.end >= pos and s.start < s.end
        if s.start < pos:
            assert s.partial
        pos = s.end
        if not s.partial:
            assert text[s.start : s.end].encode("utf-8") == tok.vocab[s.id]
    assert pos == len(text)
    return spans


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_spans_gpt2(gpt2_tokenizer, kind):
    check_spans(gpt2_tokenizer, SAMPLES[kind])


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_spans_chinese_trained(chinese_tokenizer, kind):
    check_spans(chinese_tokenizer, SAMPLES[kind])


def test_spans_have_partial_tokens_where_expected(chinese_tokenizer, gpt2_tokenizer):
    spans = check_spans(chinese_tokenizer, slice_head("chinese", 20_000))
    assert any(s.partial for s in spans) and any(not s.partial for s in spans)
    # Emoji are four bytes; GPT-2 splits many of them.
    spans = check_spans(gpt2_tokenizer, SAMPLES["emoji"])
    assert any(s.partial for s in spans)
    # Pure ASCII never gives a partial span.
    assert not any(s.partial for s in check_spans(gpt2_tokenizer, SAMPLES["ascii"]))


def test_special_token_span(gpt2_tokenizer):
    text = f"ab{EOT}cd"
    spans = gpt2_tokenizer.spans(text)
    special = [s for s in spans if s.id == 50256]
    assert [(s.start, s.end, s.partial) for s in special] == [(2, 2 + len(EOT), False)]


@pytest.mark.parametrize("name", list(SLICES.values()))
def test_spans_of_corpus_slices(gpt2_tokenizer, chinese_tokenizer, name):
    text = read_fixture(name)[:30_000]
    check_spans(gpt2_tokenizer, text)
    check_spans(chinese_tokenizer, text)


@HYPO
@given(TEXTS)
def test_spans_of_generated_text(gpt2_tokenizer, text):
    check_spans(gpt2_tokenizer, text)


# --- decode ------------------------------------------------------------------------------


def byte_id(tok, value):
    return next(i for i, t in tok.vocab.items() if t == bytes([value]))


def test_decode_of_a_lone_lead_byte_is_replacement_char(gpt2_tokenizer, chinese_tokenizer):
    for tok in (gpt2_tokenizer, chinese_tokenizer):
        assert tok.decode([byte_id(tok, 0xE4)]) == "\ufffd"
        assert tok.decode_bytes([byte_id(tok, 0xE4)]) == b"\xe4"
        # The three bytes of "中" one by one decode to the character.
        assert tok.decode([byte_id(tok, b) for b in "中".encode()]) == "中"
        assert tok.decode([byte_id(tok, ord("a")), byte_id(tok, 0xFF)]) == "a\ufffd"


def test_decode_of_a_partial_merged_token(chinese_tokenizer):
    partial = [i for i, t in chinese_tokenizer.vocab.items() if i > 256 and not is_utf8(t)]
    assert partial, "training on Chinese should make tokens that split a character"
    for i in partial[:20]:
        assert "\ufffd" in chinese_tokenizer.decode([i])


@pytest.mark.parametrize("bad", [99_999, 50_257, -1, 10**12])
def test_decode_unknown_id_raises_naming_it(gpt2_tokenizer, bad):
    with pytest.raises(ValueError, match=str(bad)):
        gpt2_tokenizer.decode([15496, bad, 995])
    with pytest.raises(ValueError, match=str(bad)):
        gpt2_tokenizer.decode(iter([bad]))


def test_decode_of_a_numpy_array(gpt2_tokenizer):
    """Ids loaded from a .npy file (what ``bpe-studio encode`` writes) decode directly."""
    import numpy as np

    text = SAMPLES["mixed"]
    ids = np.array(gpt2_tokenizer.encode(text), dtype=np.uint16)
    assert gpt2_tokenizer.decode(ids) == text
    with pytest.raises(ValueError, match="60000"):
        gpt2_tokenizer.decode(np.array([15496, 60000], dtype=np.uint16))


def test_decode_round_trips_corpus_slices(chinese_tokenizer):
    for name in SLICES.values():
        text = read_fixture(name)
        assert chinese_tokenizer.decode(chinese_tokenizer.encode(text)) == text


# --- construction ------------------------------------------------------------------------


def test_vocab_without_all_bytes_is_rejected():
    vocab = {i: bytes([i]) for i in range(256) if i != 0x41}
    with pytest.raises(ValueError, match="41"):
        Tokenizer(vocab, [])


def test_merge_with_unknown_token_is_rejected():
    vocab = {i: bytes([i]) for i in range(256)}
    with pytest.raises(ValueError, match="ab"):
        Tokenizer(vocab, [(b"a", b"b")])


def test_special_token_missing_from_vocab_gets_a_new_id():
    vocab = {i: bytes([i]) for i in range(256)}
    vocab[256] = b"ab"
    tok = Tokenizer(vocab, [(b"a", b"b")], ["<s>"])
    ids = tok.encode("ab<s>ab")
    assert len(ids) == 3 and ids[0] == ids[2] == 256
    assert ids[1] not in vocab
    assert tok.decode([ids[1]]) == "<s>"
