"""What viewers ask of packed spans (``core.explain.span_arrays``): document offsets of texts with
CRLF, lone CR and a byte-order mark; the pre-token holding a character; occurrences; and the
spans of decoded ids. Each against a reference written here."""

from __future__ import annotations

import random

import pytest
import tokenizers
from core_helpers import EOT, SLICES, read_fixture
from foreign_files import llama3_style, sentencepiece_bpe, unigram, wordpiece
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import HYPO, TEXTS

from bpe_studio.core.encode.foreign import fallback_ids, open_tokenizer
from bpe_studio.core.explain.span_arrays import compute_spans, decoded_spans, document_hidden
from bpe_studio.core.pretokenization.pretokenizer import pretokenize

BREAKS = st.lists(
    st.one_of(TEXTS, st.sampled_from(["\r\n", "\r", "\n", "\u2029", "😀", "\ufeff", EOT])),
    max_size=12,
).map("".join)


def document_of(text: str) -> tuple[str, list[int | None]]:
    """What a plain-text document holds for ``text`` and, per character, its offset there
    in UTF-16 units (None for a character the document drops), written out character by
    character: "\\r\\n" is one break, a leading BOM is dropped."""
    units: list[int | None] = []
    doc: list[str] = []
    u = 0
    for i, ch in enumerate(text):
        if (ch == "\n" and i > 0 and text[i - 1] == "\r") or (ch == "\ufeff" and i == 0):
            units.append(None)
            continue
        units.append(u)
        doc.append(ch)
        u += 2 if ord(ch) > 0xFFFF else 1
    return "".join(doc), units


@HYPO
@given(BREAKS)
def test_document_offsets(gpt2_tokenizer, text):
    spans = compute_spans(gpt2_tokenizer, text, piece=7)
    _, units = document_of(text)
    assert list(document_hidden(text)) == [i for i, u in enumerate(units) if u is None]
    total = sum(2 if ord(ch) > 0xFFFF else 1 for ch, u in zip(text, units) if u is not None)
    for char in range(len(text) + 1):
        # A dropped character sits where the next kept one does.
        following = [u for u in units[char:] if u is not None]
        expected = following[0] if following else total
        assert spans.to_utf16(char) == expected, char
        if char < len(text) and units[char] is not None:
            assert spans.from_utf16(expected) == char
    assert spans.from_utf16(total) == len(text) or units[-1] is None


def _pieces_by_char(text: str, specials: list[str]) -> list[str]:
    """The piece holding each character (a pre-token, or a special token), the slow way."""
    out: list[str] = []
    i = 0
    while i < len(text):
        j = min((text.find(s, i) for s in specials if text.find(s, i) >= 0), default=-1)
        stop = len(text) if j < 0 else j
        for piece in pretokenize(text[i:stop]):
            out += [piece] * len(piece)
        if j < 0:
            break
        out += [specials[0]] * len(specials[0])
        i = j + len(specials[0])
    return out


@pytest.mark.parametrize("name", ["english", "code", "chinese"])
def test_piece_at(gpt2_tokenizer, name):
    text = read_fixture(SLICES[name])[:6000].replace("\n\n", f"\n{EOT}")
    spans = compute_spans(gpt2_tokenizer, text, piece=300)
    expected = _pieces_by_char(text, [EOT])
    assert [spans.piece_at(c) for c in range(len(text))] == expected
    assert spans.piece_at(len(text)) == ""


def test_occurrences(gpt2_tokenizer):
    text = read_fixture(SLICES["english"])[:5000]
    ids = gpt2_tokenizer.encode(text)
    spans = compute_spans(gpt2_tokenizer, text)
    for token_id in set(ids[:50]) | {50_000}:
        assert spans.occurrences(token_id) == ids.count(token_id)


def _decoded_reference(tok, ids):
    """Each token's characters in the decoded text, from byte offsets: the characters holding
    its first and last byte (valid UTF-8 only, so bytes map to characters one to one)."""
    data = b"".join(tok.vocab[i] for i in ids)
    text = data.decode("utf-8")
    char_of_byte: list[int] = []
    starts = set()
    for ci, ch in enumerate(text):
        starts.add(len(char_of_byte))
        char_of_byte += [ci] * len(ch.encode())
    starts.add(len(char_of_byte))
    out, b = [], 0
    for i in ids:
        e = b + len(tok.vocab[i])
        out.append(
            (i, char_of_byte[b], char_of_byte[e - 1] + 1, b not in starts or e not in starts)
        )
        b = e
    return text, out


@HYPO
@given(TEXTS)
def test_decoded_spans_of_an_encoding(gpt2_tokenizer, text):
    ids = gpt2_tokenizer.encode(text)
    spans = decoded_spans(gpt2_tokenizer, ids)
    expected_text, expected = _decoded_reference(gpt2_tokenizer, ids)
    assert spans.text == expected_text == text
    assert [tuple(s) for s in spans.to_spans()] == expected
    assert spans.utf8_length == len(text.encode())


def test_decoded_spans_of_broken_utf8(gpt2_tokenizer):
    half = gpt2_tokenizer.encode("😀")  # bytes of one character over several tokens
    assert len(half) > 1
    ids = half[:1] + gpt2_tokenizer.encode(" ok")
    spans = decoded_spans(gpt2_tokenizer, ids)
    assert spans.text == gpt2_tokenizer.decode(ids)
    assert all(0 <= s.start < s.end <= len(spans.text) for s in spans.to_spans())


def test_decoded_spans_names_an_unknown_id(gpt2_tokenizer):
    with pytest.raises(ValueError, match=r"unknown token id 60,000 \(item 2 of 3\)"):
        decoded_spans(gpt2_tokenizer, [11, 60_000, 12])


DECODERS = {
    "byte fallback": sentencepiece_bpe,
    "wordpiece": wordpiece,
    "unigram": unigram,
    "byte-level": llama3_style,
}


@pytest.fixture(scope="module")
def decoder_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("decoders")
    return {name: make(root / name.replace(" ", "_")) for name, make in DECODERS.items()}


@pytest.mark.parametrize("name", list(DECODERS))
def test_decoded_text_is_the_tokenizers_own_decode(decoder_files, name):
    """A real-display audit: the Ids pane dropped byte tokens left over at the end (Llama 2's
    <0xA9> alone gave '' where tokenizers gives U+FFFD; "ok" then <0xE4> gave "ok"), and a
    run of byte tokens that is not UTF-8, which tokenizers makes one U+FFFD per byte, was
    decoded piece by piece (or raised "Invalid prefix"). Random ids, byte tokens among them,
    against tokenizers' own decode."""
    path = decoder_files[name]
    tok = open_tokenizer(path)
    oracle = tokenizers.Tokenizer.from_file(str(path))
    size = oracle.get_vocab_size()
    if name == "byte fallback":
        assert isinstance(tok.vocab, dict)
        byte_ids = sorted(fallback_ids(tok))  # type: ignore[arg-type]
        by_byte = {tok.vocab[i][0]: i for i in byte_ids}
        ok = oracle.encode("ok", add_special_tokens=False).ids
        for ids in ([by_byte[0xA9]], ok + [by_byte[0xE4]], [by_byte[0x4F], by_byte[0xCA]]):
            assert decoded_spans(tok, ids).text == oracle.decode(ids, skip_special_tokens=False)
    else:
        byte_ids = list(range(300))  # the first ids: bytes or single characters
    rng = random.Random(name)
    for _ in range(400):
        ids = [
            rng.choice(byte_ids) if rng.random() < 0.6 else rng.randrange(size)
            for _ in range(rng.randint(0, 14))
        ]
        spans = decoded_spans(tok, ids)
        assert spans.text == oracle.decode(ids, skip_special_tokens=False), ids
        assert len(spans) == len(ids)
        assert all(0 <= s.start <= s.end <= len(spans.text) for s in spans.to_spans()), ids
