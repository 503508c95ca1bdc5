"""WordPiece, Unigram and SentencePiece-style BPE through ``tokenizers`` (core/encode/foreign.py).

The oracle is ``tokenizers`` itself, run directly on the same file (the text's own tokens:
``add_special_tokens=False``); spans, display bytes and special tokens are checked against
values derived by hand.
"""

from __future__ import annotations

import json
import re

import pytest
import tokenizers
from core_helpers import SLICES, read_fixture
from foreign_files import (
    falcon_style,
    llama3_style,
    offset_cuts,
    sentencepiece_bpe,
    unigram,
    unigram_byte_fallback,
    wordpiece,
)
from hf_shapes import FAMILIES, trained_bpe
from hypothesis import given
from text_strategies import HYPO, TEXTS

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.foreign import ForeignTokenizer, open_tokenizer
from bpe_studio.core.formats.hf.kind import TOKENIZERS_BYTE_LEVEL, ForeignTokenizerFile

KINDS = {
    "wordpiece": (wordpiece, "WordPiece"),
    "unigram": (unigram, "Unigram"),
    "sentencepiece_bpe": (sentencepiece_bpe, "BPE (SentencePiece-style, byte fallback)"),
}
TEXT_SLICES = ["english", "chinese", "code", "mixed_web"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("foreign")
    return {name: make(root / name) for name, (make, _) in KINDS.items()}


@pytest.fixture(scope="module")
def loaded(files):
    return {name: open_tokenizer(path) for name, path in files.items()}


@pytest.mark.parametrize("name", list(KINDS))
def test_each_kind_loads_as_foreign_and_tokenizer_load_names_it(files, loaded, name):
    tok = loaded[name]
    assert isinstance(tok, ForeignTokenizer)
    assert tok.kind == KINDS[name][1]
    with pytest.raises(ForeignTokenizerFile) as refused:
        Tokenizer.load(files[name])
    assert str(refused.value).startswith(f"{files[name]}: a {KINDS[name][1]} tokenizer")
    # The folder holding it is the same source.
    assert isinstance(open_tokenizer(files[name].parent), ForeignTokenizer)


def test_byte_level_file_still_gives_the_exact_tokenizer(tmp_path):
    tok = open_tokenizer(llama3_style(tmp_path, full=False))
    assert isinstance(tok, Tokenizer)


@pytest.mark.parametrize("slice_name", TEXT_SLICES)
@pytest.mark.parametrize("name", list(KINDS))
def test_ids_and_decoding_equal_tokenizers(files, loaded, name, slice_name):
    text = read_fixture(SLICES[slice_name])[:20_000]
    oracle = tokenizers.Tokenizer.from_file(str(files[name]))
    expected = oracle.encode(text, add_special_tokens=False).ids
    tok = loaded[name]
    assert tok.encode(text) == expected
    assert tok.decode(expected) == oracle.decode(expected, skip_special_tokens=False)
    spans = tok.spans(text)
    assert [s.id for s in spans] == expected


def test_a_strict_decode_names_the_id_whose_bytes_are_no_text(loaded, files, tmp_path):
    """The streams audit: ``Tokenizer.decode(..., errors="strict")`` names the id; a
    byte-fallback file's said only Python's byte position."""
    tok = loaded["sentencepiece_bpe"]  # its decoder drops the text's leading space too
    e4 = tok.encode_single_token("<0xE4>")
    ids = [*tok.encode("hello world"), e4]
    last = len(ids) - 1
    with pytest.raises(UnicodeDecodeError, match=rf"in the bytes of id {e4} \(ids\[{last}\]\)$"):
        tok.decode(ids, errors="strict")
    with pytest.raises(UnicodeDecodeError, match=r"\(ids list 2 of 2 in the batch\)$"):
        tok.decode_batch([ids[:1], ids], errors="strict")
    # The byte tokens listed as special tokens as well (what a trainer given them as special
    # tokens writes) stand for their bytes all the same, as tokenizers' decoder makes them.
    data = json.loads(files["sentencepiece_bpe"].read_text(encoding="utf-8"))
    flags = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": False}
    for b in (0xE4, 0xB8, 0xAD):  # 中
        token = f"<0x{b:02X}>"
        data["added_tokens"].append({"id": tok.encode_single_token(token), "content": token,
                                     **flags, "special": True})  # fmt: skip
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    listed = open_tokenizer(path)
    oracle = tokenizers.Tokenizer.from_file(str(path))
    zh = [listed.encode_single_token(f"<0x{b:02X}>") for b in (0xE4, 0xB8, 0xAD)]
    assert listed.decode(zh) == oracle.decode(zh, skip_special_tokens=False) == "中"
    assert [listed.decode_single_token_bytes(i) for i in zh] == [b"\xe4", b"\xb8", b"\xad"]
    assert listed.decode_tokens_bytes(zh) == [listed.decode_bytes([i]) for i in zh]


def test_what_tokenizers_refuses_to_encode_is_a_value_error_naming_the_file(tmp_path):
    """The editor audit: a WordPiece file whose unk_token is not in its vocabulary loads (as
    tokenizers loads it); a text needing it failed with tokenizers' plain Exception, which
    the app said as "Exception: WordPiece error: ..."."""
    from tokenizers import models, pre_tokenizers

    built = tokenizers.Tokenizer(models.WordPiece({"a": 0, "##b": 1}, unk_token="[UNK]"))
    built.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    built.save(str(path))
    tok = open_tokenizer(path)
    assert tok.encode("ab a") == [0, 1, 0]
    said = rf"^{re.escape(str(path))}: tokenizers failed while encoding: WordPiece error: Missing"
    for call in (tok.encode, tok.spans):
        with pytest.raises(ValueError, match=said):
            call("abc")


class _CallsSeen:
    """A backend that notes which of its encoding calls are made."""

    def __init__(self, real: tokenizers.Tokenizer) -> None:
        self.real, self.calls = real, []

    def __getattr__(self, name: str):
        found = getattr(self.real, name)
        if name not in ("encode", "encode_batch"):
            return found

        def call(*args, **kwargs):
            self.calls.append(name)
            return found(*args, **kwargs)

        return call


@pytest.mark.parametrize("name", list(KINDS))
def test_a_long_text_goes_through_the_call_that_lets_go_of_pythons_lock(
    files, loaded, name, monkeypatch
):
    """The Compare/Report audit: a megabyte encoded by a WordPiece file in a view's
    background thread held the window's thread for a second: ``tokenizers``' one-text encode
    holds Python's lock throughout, its batch call lets go of it. The ids and offsets are
    those of the one-text call."""
    from bpe_studio.core.encode.foreign import LOCK_FREE_CHARS

    tok = loaded[name]
    oracle = tokenizers.Tokenizer.from_file(str(files[name]))
    seen = _CallsSeen(tok._backend)
    monkeypatch.setattr(tok, "_backend", seen)
    text = read_fixture(SLICES["mixed_web"])[: 2 * LOCK_FREE_CHARS]
    expected = oracle.encode(text, add_special_tokens=False)
    assert tok.encode(text) == expected.ids
    spans = tok.spans(text)
    assert [(s.start, s.end) for s in spans if not s.partial] == [
        o for o, s in zip(expected.offsets, spans) if not s.partial
    ]
    assert (
        tok.encode(text[: LOCK_FREE_CHARS - 1])
        == oracle.encode(text[: LOCK_FREE_CHARS - 1], add_special_tokens=False).ids
    )
    assert seen.calls == ["encode_batch", "encode_batch", "encode"]


def test_wordpiece_spans_hold_their_tokens(loaded):
    # Each token but [UNK] is its span's characters, lowercased (BertNormalizer), with the
    # "##" of a word's continuation.
    tok = loaded["wordpiece"]
    text = read_fixture("corpus.en")[:5000]
    unk = tok.backend.token_to_id("[UNK]")
    checked = 0
    for span in tok.spans(text):
        if span.id == unk or not text[span.start : span.end].isascii():
            continue
        token = tok.token_text(span.id)
        assert token.removeprefix("##") == text[span.start : span.end].lower()
        checked += 1
    assert checked > 500


def test_byte_fallback_tokens_share_their_character(loaded):
    tok = loaded["sentencepiece_bpe"]
    # "中" is in no merge of an English corpus: three byte tokens, E4 B8 AD (by hand), each
    # spanning the character, partial.
    spans = tok.spans("a中")
    byte_ids = [3 + 0xE4, 3 + 0xB8, 3 + 0xAD]  # <0xNN> is id 3 + NN in this file
    assert [s.id for s in spans[-3:]] == byte_ids
    assert all((s.start, s.end, s.partial) == (1, 2, True) for s in spans[-3:])
    assert [tok.vocab[i] for i in byte_ids] == [b"\xe4", b"\xb8", b"\xad"]
    assert tok.decode([s.id for s in spans]) == "a中"


def test_a_unigram_model_falls_back_to_bytes_as_its_file_says(tmp_path):
    """The inspect audit: tokenizers' Unigram has no ``byte_fallback`` attribute (BPE's
    has), so a converted SentencePiece Unigram model's ``<0xEA>`` was read as the six
    bytes of its name: its bytes, its category, a lone byte's decode (U+FFFD)."""
    from bpe_studio.core.explain.categories import CATEGORIES
    from bpe_studio.core.explain.vocabulary import token_table

    tok = open_tokenizer(unigram_byte_fallback(tmp_path))
    backend = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert tok.kind == "Unigram (byte fallback)"
    text = "a ꙮ中"  # in no piece of an English corpus: byte tokens
    ids = tok.encode(text)
    assert ids == backend.encode(text, add_special_tokens=False).ids
    pieces = [backend.id_to_token(i) for i in ids]
    byte_ids = [i for i, p in zip(ids, pieces) if re.fullmatch(r"<0x[0-9A-F]{2}>", p)]
    assert "".join(p for p in pieces if p.startswith("<0x")) == (
        "".join(f"<0x{b:02X}>" for b in "ꙮ中".encode())
    )
    for i in byte_ids:  # "<0xNN>" is the byte NN (by hand, from its name)
        byte = bytes([int(backend.id_to_token(i)[3:5], 16)])
        assert tok.vocab[i] == tok.decode_single_token_bytes(i) == tok.decode_bytes([i]) == byte
    assert tok.decode(ids) == backend.decode(ids) == " " + text  # Metaspace's prefix, kept
    table = token_table(tok)
    assert {CATEGORIES[table.category[table.row(i)]] for i in byte_ids} == {"byte fallback"}


def test_display_bytes_show_spaces_and_bytes(loaded):
    sp, wp = loaded["sentencepiece_bpe"], loaded["wordpiece"]
    words = [(t, i) for t, i in sp.backend.get_vocab().items() if t.startswith("\u2581")]
    assert len(words) > 20
    for token, idx in words:
        assert sp.vocab[idx] == token.replace("\u2581", " ").encode("utf-8")
    assert sp.vocab[sp.backend.token_to_id("<0x0A>")] == b"\n"
    ing = wp.backend.token_to_id("##ing")
    assert wp.vocab[ing] == b"##ing"  # WordPiece writes no "▁": its tokens as they are


def test_special_tokens_in_text(loaded, files):
    tok = loaded["sentencepiece_bpe"]
    assert tok.special_tokens == ["<unk>", "<s>", "</s>"]
    assert tok.special_id("</s>") == 2
    assert 2 in tok.encode("a</s>b")
    plain = open_tokenizer(files["sentencepiece_bpe"], no_specials=True)
    assert 2 not in plain.encode("a</s>b")
    assert plain.special_tokens == []
    # WordPiece's template adds [CLS] and [SEP]; the text's own tokens leave them out.
    wp = loaded["wordpiece"]
    ids = wp.encode("hello")
    assert wp.special_id("[CLS]") not in ids and wp.special_id("[SEP]") not in ids


def test_bad_input_names_the_value(loaded, files):
    tok = loaded["unigram"]
    with pytest.raises(ValueError, match=r"unknown token id 600\b"):
        tok.decode([1, 600])
    with pytest.raises(TypeError):
        tok.decode([1.0])
    with pytest.raises(ValueError, match=r"tokenizer\.json: a Unigram tokenizer splits"):
        open_tokenizer(files["unigram"], pattern="gpt2")
    with pytest.raises(ValueError, match=r"special token '<nope>' is not in"):
        open_tokenizer(files["unigram"], special_tokens=["<nope>"])


def test_a_batchs_error_names_the_text_it_came_from(loaded):
    tok = loaded["sentencepiece_bpe"]
    with pytest.raises(TypeError, match=r"not bytes.*\(text 3 of 3 in the batch\)$"):
        tok.encode_batch(["a", "b", b"c"])
    with pytest.raises(ValueError, match=r"'</s>'.*\(text 2 of 2 in the batch\)$"):
        tok.encode_batch(["a", "b</s>"], allowed_special=set())
    with pytest.raises(TypeError, match=r"not the str 'nope'") as caught:
        tok.encode_batch(["a"], allowed_special="nope")  # every text's: none named
    assert "batch" not in str(caught.value)
    with pytest.raises(
        ValueError, match=r"unknown token id 1000000\b.*\(ids list 2 of 2 in the batch\)$"
    ):
        tok.decode_batch([[1], [1_000_000]])


@pytest.mark.parametrize("name", list(KINDS))
def test_numpy_integers_are_ids_as_tokenizer_takes_them(files, loaded, name):
    """An audit: list(tok.encode_array(text)) decoded by a WordPiece, Unigram or byte-fallback
    tokenizer raised "token ids must be ints, got np.int64(349)"; Tokenizer and tokenizers
    take NumPy's integers."""
    import numpy as np

    tok = loaded[name]
    text = "hello world, once upon a time"
    ids = tokenizers.Tokenizer.from_file(str(files[name])).encode(text).ids
    items = list(np.asarray(ids, dtype=np.int64))  # NumPy scalars, not ints
    assert tok.decode(items) == tok.decode(ids)
    assert tok.decode_bytes(items) == tok.decode_bytes(ids)
    assert tok.decode_tokens_bytes(items) == tok.decode_tokens_bytes(ids)
    assert tok.decode_single_token_bytes(items[0]) == tok.decode_single_token_bytes(ids[0])
    with pytest.raises(ValueError, match=r"unknown token id 99999\b"):
        tok.decode([np.int32(99_999)])
    with pytest.raises(TypeError, match="token ids must be ints"):
        tok.decode([np.float64(1.0)])


def test_unreadable_file_names_it(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {"type": "WordPiece", "vocab": 3}}', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{bad}: tokenizers cannot read it"):
        open_tokenizer(bad)


def test_a_model_tokenizers_does_not_run_is_named_with_those_it_does(files, tmp_path):
    spec = json.loads(files["sentencepiece_bpe"].read_text(encoding="utf-8"))
    spec["model"]["type"] = "Foo"
    bad = tmp_path / "tokenizer.json"
    bad.write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(Exception, match="ModelUntagged"):  # tokenizers' own words
        tokenizers.Tokenizer.from_file(str(bad))
    # The models tokenizers runs: the classes of its models module.
    runs = sorted(
        name
        for name, cls in vars(tokenizers.models).items()
        if isinstance(cls, type)
        and issubclass(cls, tokenizers.models.Model)
        and cls is not tokenizers.models.Model
    )
    with pytest.raises(ValueError) as info:
        open_tokenizer(bad)
    line = str(info.value)
    assert line == f"{bad}: model type 'Foo' is not one tokenizers runs ({', '.join(runs)})"


def _json_error(text: str) -> json.JSONDecodeError:
    with pytest.raises(json.JSONDecodeError) as info:
        json.loads(text)
    return info.value


@pytest.mark.parametrize("cut", [0.5, 0.9])
def test_a_file_cut_short_says_so(files, tmp_path, cut):
    text = files["sentencepiece_bpe"].read_text(encoding="utf-8")
    short = text[: int(len(text) * cut)].rstrip()
    bad = tmp_path / "tokenizer.json"
    bad.write_text(short, encoding="utf-8")
    _json_error(short)  # json itself refuses it
    lines = short.split("\n")
    where = f"line {len(lines)} column {len(lines[-1]) + 1}"  # just past its last character
    with pytest.raises(ValueError) as info:
        open_tokenizer(bad)
    assert str(info.value) == f"{bad}: not valid JSON: it ends early, at {where} (cut short?)"


def test_a_file_broken_inside_says_where(files, tmp_path):
    text = files["sentencepiece_bpe"].read_text(encoding="utf-8")
    middle = text.index('"vocab"')
    broken = text[:middle] + "," + text[middle:]
    e = _json_error(broken)
    bad = tmp_path / "tokenizer.json"
    bad.write_text(broken, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        open_tokenizer(bad)
    assert str(info.value) == (
        f"{bad}: not valid JSON at line {e.lineno} column {e.colno} ({e.msg})"
    )


def test_cuts_come_from_offsets(loaded):
    tok = loaded["wordpiece"]
    # "hello world": BertPreTokenizer cuts at the space; "world" starts at 6 (by hand).
    assert 6 in tok.cuts("hello world").tolist()
    assert all(0 < c < len("hello world") for c in tok.cuts("hello world").tolist())


def test_a_character_spelled_in_byte_tokens_starts_a_cut(loaded):
    # "ab café 😀 ok": "é" and "😀" are in no merge of an English corpus, so each is spelled
    # in <0xNN> tokens sharing the character; the first of them starts at it (6 and 8),
    # which the tokens before end at: both are cuts (they were left out with every token
    # sharing a character).
    tok = loaded["sentencepiece_bpe"]
    text = "ab café 😀 ok"
    assert {6, 8} <= set(tok.cuts(text).tolist())


@pytest.fixture(scope="module")
def oracles(files):
    return {name: tokenizers.Tokenizer.from_file(str(path)) for name, path in files.items()}


@pytest.mark.parametrize("name", list(KINDS))
def test_cuts_are_the_offsets_definition(oracles, loaded, name):
    oracle = oracles[name]
    texts = ["ab café 😀 ok", "a 😀👍", "中文 x", read_fixture(SLICES["mixed_web"])[:3000]]
    for text in texts:
        assert loaded[name].cuts(text).tolist() == offset_cuts(oracle, text), text[:40]


@HYPO
@given(TEXTS)
def test_cuts_of_generated_text_are_the_offsets_definition(oracles, loaded, text):
    for name, oracle in oracles.items():
        assert loaded[name].cuts(text).tolist() == offset_cuts(oracle, text), name


@HYPO
@given(TEXTS)
def test_spans_are_ordered_and_round_trip(loaded, text):
    tok = loaded["sentencepiece_bpe"]
    spans = tok.spans(text)
    assert [s.id for s in spans] == tok.encode(text)
    starts = [s.start for s in spans]
    assert starts == sorted(starts)
    assert all(0 <= s.start < s.end <= len(text) for s in spans)
    # Byte fallback loses nothing: every character comes back (Llama 2's decoder strips the
    # space its normalizer put first).
    if "\r" not in text:
        assert tok.decode(tok.encode(text)) == text


def test_surrogates_are_taken_as_encode_takes_them(loaded):
    tok = loaded["sentencepiece_bpe"]
    # A surrogate pair is the character it stands for (😀, F0 9F 98 80 by byte fallback) and
    # its spans cover both surrogates; a lone one is U+FFFD.
    text = "a\ud83d\ude00b\ud800"
    assert tok.encode(text) == tok.encode("a\U0001f600b\ufffd")
    spans = tok.spans(text)
    emoji = [s for s in spans if s.id in {3 + 0xF0, 3 + 0x9F, 3 + 0x98, 3 + 0x80}]
    assert [(s.start, s.end, s.partial) for s in emoji] == [(1, 3, True)] * 4
    assert spans[-1].end == len(text)


@pytest.mark.parametrize(
    ("obj", "kind"),
    [
        # GPT-2 / RoBERTa, and Llama 3 / Qwen2 (Split then ByteLevel): byte-level BPE.
        ({"model": {"type": "BPE"}, "pre_tokenizer": {"type": "ByteLevel"}}, None),
        (
            {
                "model": {"type": "BPE", "byte_fallback": False},
                "pre_tokenizer": {
                    "type": "Sequence",
                    "pretokenizers": [{"type": "Split"}, {"type": "ByteLevel"}],
                },
            },
            None,
        ),
        # Llama 2 (no pre-tokenizer), Mistral 7B v0.3 and Gemma (Metaspace): byte fallback.
        ({"model": {"type": "BPE", "byte_fallback": True}, "pre_tokenizer": None},
         "BPE (SentencePiece-style, byte fallback)"),
        ({"model": {"type": "BPE", "byte_fallback": True},
          "pre_tokenizer": {"type": "Metaspace"}}, "BPE (SentencePiece-style, byte fallback)"),
        ({"model": {"type": "BPE"}, "pre_tokenizer": {"type": "Whitespace"}},
         "BPE (SentencePiece-style)"),
        ({"model": {"type": "WordLevel"}}, "WordLevel"),
        ({"model": {"type": "Unigram", "vocab": []}}, "Unigram"),
        ({"model": {"type": "Unigram", "byte_fallback": True}}, "Unigram (byte fallback)"),
        ({"model": {"vocab": {}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}}, None),
    ],
)  # fmt: skip
def test_kinds_of_files(obj, kind):
    from bpe_studio.core.formats.hf.kind import kind_of

    assert kind_of(obj) == kind


@pytest.mark.parametrize("name", ["sentencepiece_bpe", "unigram"])
def test_a_file_without_a_decoder_reads_its_spaces_the_same(name, files, tmp_path):
    # "▁" stands for a space by the normalizer (Llama 2's Prepend and Replace) or the
    # pre-tokenizer (Metaspace) alone: a null decoder changes nothing of what a token is.
    spec = json.loads(files[name].read_text(encoding="utf-8"))
    spec["decoder"] = None
    bare = tmp_path / "tokenizer.json"
    bare.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    own = tokenizers.Tokenizer.from_file(str(bare))
    assert own.decoder is None
    byte_token = re.compile(r"<0x([0-9A-F]{2})>")
    expected = {}
    for token, i in own.get_vocab(with_added_tokens=True).items():
        m = byte_token.fullmatch(token) if name == "sentencepiece_bpe" else None
        expected[i] = bytes([int(m[1], 16)]) if m else token.replace("\u2581", " ").encode()
    tok = open_tokenizer(bare)
    assert tok.vocab == expected == open_tokenizer(files[name]).vocab
    assert any(b" " in token for token in tok.vocab.values())


def test_a_config_naming_a_plain_added_token_special_changes_no_ids(files, tmp_path):
    # An added token the file calls not special (Qwen3's <think> shape) stays ordinary when
    # tokenizer_config.json lists it: tokenizers matches it always, so every way of encoding
    # gives tokenizers' ids, and no error names it as a special token not allowed.
    oracle = tokenizers.Tokenizer.from_file(str(files["sentencepiece_bpe"]))
    oracle.add_tokens([tokenizers.AddedToken("<think>", special=False, normalized=False)])
    folder = tmp_path / "think"
    folder.mkdir()
    oracle.save(str(folder / "tokenizer.json"))
    config = {"eos_token": "</s>", "additional_special_tokens": ["<think>"]}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    text = "a<think>b</s>c"
    whole = oracle.encode(text, add_special_tokens=False).ids
    oracle.encode_special_tokens = True
    plain = oracle.encode(text, add_special_tokens=False).ids
    assert oracle.token_to_id("<think>") in plain
    tok = open_tokenizer(folder)
    assert "<think>" not in tok.special_tokens and "</s>" in tok.special_tokens
    assert tok.encode(text) == whole
    assert tok.encode_ordinary(text) == plain
    assert tok.encode(text, allowed_special=set(), disallowed_special=()) == plain
    short = "a<think>b"
    expected = oracle.encode(short, add_special_tokens=False).ids
    assert tok.encode(short, allowed_special=set()) == expected
    assert open_tokenizer(folder, no_specials=True).encode(text) == plain


@pytest.mark.parametrize("more", ["<s>x", 5, {"content": "<s>"}])
def test_a_config_whose_additional_special_tokens_is_no_list_is_read_past(files, tmp_path, more):
    # transformers requires a list there; a string's letters were each taken for a special
    # token ("s" in "this" then refused as a special token not allowed), and a number
    # stopped the load with a bare TypeError (a traceback from bpe-studio encode).
    oracle = tokenizers.Tokenizer.from_file(str(files["sentencepiece_bpe"]))
    folder = tmp_path / "config"
    folder.mkdir()
    oracle.save(str(folder / "tokenizer.json"))
    config = {"eos_token": "</s>", "additional_special_tokens": more}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    own = {t.content for t in oracle.get_added_tokens_decoder().values() if t.special}
    tok = open_tokenizer(folder)
    assert set(tok.special_tokens) == own
    text = "this is x"
    expected = oracle.encode(text, add_special_tokens=False).ids
    assert tok.encode(text, allowed_special=set()) == expected


@pytest.mark.parametrize("name", ["byte_level", "unigram"])
def test_truncation_and_padding_are_read_past_and_said(files, tmp_path, name):
    # Hub files often carry them; both kinds open, encode whole texts unpadded (this tool
    # looks at tokenization) and say so once, naming the file.
    source = llama3_style(tmp_path / "bl", full=False) if name == "byte_level" else files[name]
    oracle = tokenizers.Tokenizer.from_file(str(source))
    oracle.enable_truncation(max_length=4)
    oracle.enable_padding(length=16, pad_id=0, pad_token=oracle.id_to_token(0))
    path = tmp_path / name / "tokenizer.json"
    path.parent.mkdir(exist_ok=True)
    oracle.save(str(path))
    text = "the quick brown fox jumps over the lazy dog"
    assert len(oracle.encode(text, add_special_tokens=False).ids) == 16  # padded, cut
    oracle.no_truncation()
    oracle.no_padding()
    whole = oracle.encode(text, add_special_tokens=False).ids
    assert len(whole) > 4
    tok = open_tokenizer(path)
    assert tok.encode(text) == whole
    assert tok.encode("a") == oracle.encode("a", add_special_tokens=False).ids
    (note,) = tok.notes
    assert note.startswith(f"{path}: its truncation and padding are not applied")
    assert open_tokenizer(source).notes == ()


def _decoder_null(tok):
    obj = json.loads(tok.to_str())
    obj["decoder"] = None
    return tokenizers.Tokenizer.from_str(json.dumps(obj))


def _bert_normalizer(tok):
    tok.normalizer = tokenizers.normalizers.BertNormalizer()
    return tok


def _strip_decoder(tok):
    decoders = tokenizers.decoders
    tok.decoder = decoders.Sequence([decoders.ByteLevel(), decoders.Strip(" ", 1, 0)])
    return tok


# Byte-level files tokenizers runs and this project's reader refuses: Falcon's pre-tokenizer,
# and changes of a file it reads.
CHANGES = {"decoder_null": _decoder_null, "bert": _bert_normalizer, "strip": _strip_decoder}


@pytest.mark.parametrize("shape", ["falcon", *CHANGES])
def test_a_byte_level_file_the_reader_refuses_is_run_by_tokenizers(tmp_path, shape):
    path = falcon_style(tmp_path / "falcon")
    if shape != "falcon":
        base = tokenizers.Tokenizer.from_file(str(llama3_style(tmp_path / "base", full=False)))
        path = tmp_path / shape / "tokenizer.json"
        path.parent.mkdir()
        CHANGES[shape](base).save(str(path))
    oracle = tokenizers.Tokenizer.from_file(str(path))
    with pytest.raises(ValueError) as refused:
        Tokenizer.load(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: ") and "open_tokenizer" in message
    if shape == "decoder_null":  # the file's JSON, not Python's None
        assert f"{path}: decoder: null is not supported" in message
    tok = open_tokenizer(path.parent)
    assert isinstance(tok, ForeignTokenizer) and tok.kind == TOKENIZERS_BYTE_LEVEL
    note, *more = tok.notes
    assert note.startswith(f"{path}: run by tokenizers")
    # Without a decoder, decode is not the text, and a second note says so.
    assert len(more) == (shape == "decoder_null")
    for text in ("Hello, world 123456 don't!", "tabs\tand\nlines  ", "café 中文 ﬁ"):
        expected = oracle.encode(text, add_special_tokens=False).ids
        assert tok.encode(text) == expected
        assert tok.decode(expected) == oracle.decode(expected, skip_special_tokens=False)
    # Its tokens show the bytes they spell, as a byte-level tokenizer's do.
    (the,) = tok.encode(" the")
    assert tok.decode_single_token_bytes(the) == b" the"
    assert "applies to byte-level BPE" in tok.not_explained("The merge tree")


@pytest.mark.parametrize("name", ["byte_level", "sentencepiece_bpe"])
def test_dropout_is_not_applied_and_said(files, tmp_path, name):
    # Review h_rev63: a byte-level file with "dropout": 0.5 (refused by the reader, run by
    # tokenizers) gave other ids for the same text at each call, without a word; so did a
    # SentencePiece-style one. Every merge applies, as with no dropout, and a note says so.
    source = llama3_style(tmp_path / "bl", full=False) if name == "byte_level" else files[name]
    obj = json.loads(source.read_text(encoding="utf-8"))
    obj["model"]["dropout"] = 0.5
    path = tmp_path / name / "tokenizer.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")
    oracle = tokenizers.Tokenizer.from_file(str(source))  # the same file without dropout
    tok = open_tokenizer(path)
    text = "the quick brown fox jumps over the lazy dog " * 3
    expected = oracle.encode(text, add_special_tokens=False).ids
    assert all(tok.encode(text) == expected for _ in range(5))
    assert tok.encode_batch([text, text]) == [expected, expected]
    said = "model.dropout 0.5 is not applied: every merge applies, the ids are deterministic"
    assert f"{path}: its {said}" in tok.notes
    # The kinds audit: a byte-level file whose only oddity was dropout lost the exact reading
    # (merge trees, Step-through, Reach) over a setting that is not applied anyway.
    assert isinstance(tok, Tokenizer) == (name == "byte_level")


def _added(content, special):
    def change(tok):
        token = tokenizers.AddedToken(content, special=special, normalized=False)
        (tok.add_special_tokens if special else tok.add_tokens)([token])
        return tok

    return change


def _template_past_the_vocabulary(tok):
    tok.post_processor = tokenizers.processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", 99_999)]
    )
    return tok


def _merged_word_added(tok):
    # tokenizers gives an added token the model already holds that token's id: here one
    # the merges make.
    vocab = tok.get_vocab()
    word = "the" if "the" in vocab else min(t for t in vocab if t.isalpha() and len(t) >= 3)
    tok.add_tokens([tokenizers.AddedToken(word, special=False, normalized=False)])
    return tok


def _byte_listed_in_the_vocabulary(tok):
    # As Llama 3 lists its added tokens: in model.vocab too, here beside "ĉ", the model's "\t"
    # (found by fuzzing: refused, "ids 197 and ... hold the same bytes", where tokenizers ran it).
    tok = _added("\t", True)(tok)
    obj = json.loads(tok.to_str())
    obj["model"]["vocab"]["\t"] = tok.token_to_id("\t")
    return tokenizers.Tokenizer.from_str(json.dumps(obj))


# Byte-level files the reader refuses for what their added tokens or template give, where
# tokenizers runs them: an added token outside model.vocab spelling other bytes, an id past
# the vocabulary, a token both added and merged, a special token whose byte the model holds.
REFUSED_FOR_TOKENS = {
    "über": _added("über", False),
    "spaces": _added("ĠĠĠ", False),
    "größe": _added("<|größe|>", True),
    "template": _template_past_the_vocabulary,
    "merged": _merged_word_added,
    "byte": _added("\t", True),
    "byte in model.vocab": _byte_listed_in_the_vocabulary,
}


@pytest.mark.parametrize("shape", list(REFUSED_FOR_TOKENS))
def test_a_file_refused_for_its_added_tokens_is_run_by_tokenizers(tmp_path, shape):
    # Review h_rev63: refused inside read_hf after the check that routes files to tokenizers,
    # these files no longer opened at all (open_tokenizer, encode, inspect, the app), where
    # they had with tokenizers' ids. They open through tokenizers, with a note; Tokenizer.load
    # still refuses them.
    base = tokenizers.Tokenizer.from_file(str(llama3_style(tmp_path / "base", full=False)))
    path = tmp_path / shape / "tokenizer.json"
    path.parent.mkdir()
    REFUSED_FOR_TOKENS[shape](base).save(str(path))
    oracle = tokenizers.Tokenizer.from_file(str(path))
    with pytest.raises(ValueError, match="open_tokenizer"):
        Tokenizer.load(path)
    tok = open_tokenizer(path)
    assert isinstance(tok, ForeignTokenizer) and tok.kind == TOKENIZERS_BYTE_LEVEL
    (note,) = tok.notes
    what = "post_processor" if shape == "template" else "added_tokens"
    assert note.startswith(f"{path}: run by tokenizers") and what in note
    text = "x über ĠĠĠ <|größe|> y   z the other\tthen\t\tx"
    for add in (False, True):
        expected = oracle.encode(text, add_special_tokens=add).ids
        assert tok.encode(text, add_special_tokens=add) == expected
    if shape != "template":
        assert tok.decode(expected) == oracle.decode(expected, skip_special_tokens=False)


def _byte_level_bpe(
    text: str,
    vocab_size: int,
    *,
    alphabet: bool = True,
    decoder: bool = True,
    specials: tuple[str, ...] = ("<|endoftext|>",),
) -> tokenizers.Tokenizer:
    """A byte-level BPE trained by ``tokenizers`` on ``text``: with a token for every byte
    (``alphabet``; without, BpeTrainer's default, only the bytes the text holds) and a
    ByteLevel ``decoder`` (without, the file says "decoder": null)."""
    pre = tokenizers.pre_tokenizers
    trained = tokenizers.Tokenizer(tokenizers.models.BPE())
    trained.pre_tokenizer = pre.ByteLevel(add_prefix_space=False)
    if decoder:
        trained.decoder = tokenizers.decoders.ByteLevel()
    extra = {"initial_alphabet": pre.ByteLevel.alphabet()} if alphabet else {}
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=list(specials), **extra
    )
    trained.train_from_iterator([text], trainer)
    return trained


def test_a_byte_level_file_without_every_byte_is_run_by_tokenizers(tmp_path):
    """BpeTrainer without the byte-level alphabet (its default) trains a model with tokens
    for the bytes its corpus holds only. tokenizers runs the file; open_tokenizer refused
    it ("byte 0x00 has no token"), though the README says such a file is run by tokenizers."""
    text = read_fixture(SLICES["tinystories"])[:50_000]
    trained = _byte_level_bpe(text, 600, alphabet=False)
    path = tmp_path / "tokenizer.json"
    trained.save(str(path))
    oracle = tokenizers.Tokenizer.from_file(str(path))
    with pytest.raises(ValueError, match=r"model\.vocab: byte 0x00 and \d+ more have no token"):
        Tokenizer.load(path)
    tok = open_tokenizer(path)
    assert isinstance(tok, ForeignTokenizer) and tok.kind == TOKENIZERS_BYTE_LEVEL
    (note,) = tok.notes
    assert note.startswith(f"{path}: run by tokenizers")
    # And the API audit: the note did not say what such a file does to text with such a
    # byte (a NUL, an emoji the corpus lacked): tokenizers leaves it out, silently.
    missing = 256 - len(set(text.encode("utf-8")))
    said = f"byte 0x00 and {missing - 1} more have no token: tokenizers leaves such bytes out"
    assert said in note and note.endswith("(byte-level needs all 256))")
    dropped = oracle.encode("a\x00b", add_special_tokens=False).ids
    assert oracle.decode(dropped) == "ab" and tok.encode("a\x00b") == dropped
    for sample in (text[:2000], "Once upon a time<|endoftext|> ~ 中文 \t\n"):
        expected = oracle.encode(sample, add_special_tokens=False).ids
        assert tok.encode(sample) == expected
        assert tok.decode(expected) == oracle.decode(expected, skip_special_tokens=False)


def test_a_byte_level_file_repeating_a_merge_is_run_by_tokenizers(tmp_path):
    """An audit: a merge listed twice was refused ("repeats merge 10"), though tokenizers
    runs the file (its table of merges keeps the last copy's rank) and the README says such
    a file is run by tokenizers."""
    text = read_fixture(SLICES["tinystories"])[:50_000]
    trained = _byte_level_bpe(text, 600)
    obj = json.loads(trained.to_str())
    merges = obj["model"]["merges"]
    merges.append(merges[0])  # the first merge, now ranked last by tokenizers
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    oracle = tokenizers.Tokenizer.from_file(str(path))
    sample = text[:2000]
    expected = oracle.encode(sample, add_special_tokens=False).ids
    assert expected != trained.encode(sample, add_special_tokens=False).ids  # it matters
    with pytest.raises(ValueError, match=r"model\.merges\[\d+\]: repeats merge 0"):
        Tokenizer.load(path)
    tok = open_tokenizer(path)
    assert isinstance(tok, ForeignTokenizer) and tok.kind == TOKENIZERS_BYTE_LEVEL
    (note,) = tok.notes
    assert note.startswith(f"{path}: run by tokenizers") and "repeats merge 0" in note
    assert tok.encode(sample) == expected
    assert tok.decode(expected) == sample


@pytest.mark.parametrize("other_id", [False, True])
def test_a_byte_level_file_listing_an_added_token_twice_is_run_by_tokenizers(tmp_path, other_id):
    """An audit: an added token listed twice in added_tokens (a file edited by hand) was
    refused by open_tokenizer, the app and encode ("'<|eot|>' is given twice"), though
    tokenizers runs the file, keeping one of the copies, and the README says such a file is
    run by tokenizers. The oracle: tokenizers' own ids."""
    text = read_fixture(SLICES["tinystories"])[:50_000]
    trained = _byte_level_bpe(text, 600, specials=())
    trained.add_special_tokens(["<|bos|>", "<|eot|>"])
    obj = json.loads(trained.to_str())
    copy = dict(obj["added_tokens"][1])
    if other_id:
        copy["id"] += 1
    obj["added_tokens"].append(copy)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    oracle = tokenizers.Tokenizer.from_file(str(path))
    with pytest.raises(ValueError, match=r"added_tokens\[2\]: '<\|eot\|>' is given twice"):
        Tokenizer.load(path)
    tok = open_tokenizer(path)
    assert isinstance(tok, ForeignTokenizer) and tok.kind == TOKENIZERS_BYTE_LEVEL
    sample = f"{text[:500]}<|eot|><|bos|>{text[500:900]}<|eot|>"
    expected = oracle.encode(sample, add_special_tokens=False).ids
    assert tok.encode(sample) == expected
    assert tok.decode(expected) == oracle.decode(expected, skip_special_tokens=False)


def test_a_byte_level_file_without_a_decoder_says_decode_is_not_the_text(tmp_path):
    """An audit: with "decoder": null, decode (tokenizers' own) gives the tokens' byte-level
    spellings joined by spaces ("H ell o Ġw Ã¶ r ld"), where decode_tokens_bytes gives the
    text's bytes, and nothing said so."""
    text = read_fixture(SLICES["tinystories"])[:20_000]
    trained = _byte_level_bpe(text, 400, decoder=False, specials=())
    path = tmp_path / "tokenizer.json"
    trained.save(str(path))
    assert json.loads(path.read_text(encoding="utf-8"))["decoder"] is None
    tok = open_tokenizer(path)
    sample = "Hello wörld"
    ids = tok.encode(sample)
    assert tok.decode(ids) == trained.decode(ids) != sample
    assert b"".join(tok.decode_tokens_bytes(ids)) == sample.encode()
    (note,) = [n for n in tok.notes if "decoder (null)" in n]
    assert note == (
        f"{path}: its decoder (null) has no ByteLevel step: decode gives what tokenizers "
        "decodes, the tokens' byte-level spellings joined by spaces, not the text "
        "(decode_tokens_bytes gives each token's bytes)"
    )
    trained.decoder = tokenizers.decoders.ByteLevel()
    trained.save(str(path))
    assert not [n for n in open_tokenizer(path).notes if "decoder" in n]


def _count_parses(monkeypatch) -> list[str]:
    """The paths ``tokenizers.Tokenizer.from_file`` parses from now on (it still parses)."""
    real = tokenizers.Tokenizer
    parsed = []

    class Counting:
        def __getattr__(self, name):
            return getattr(real, name)

        def from_file(self, *args, **kwargs):
            parsed.append(args[0])
            return real.from_file(*args, **kwargs)

    monkeypatch.setattr(tokenizers, "Tokenizer", Counting())
    return parsed


def test_a_refused_byte_level_file_is_parsed_by_tokenizers_once(tmp_path, monkeypatch):
    # Review h_rev63: encode parsed such a file with tokenizers three times (foreign_file,
    # then load_data's own look, then the ForeignTokenizer), inspect and decode twice; a large
    # vocabulary took seconds each time. Each command now parses it once; a file changed
    # since is read again.
    from bpe_studio.core.formats.files import foreign_file

    path = falcon_style(tmp_path / "falcon")
    real = tokenizers.Tokenizer
    parsed = _count_parses(monkeypatch)
    assert foreign_file(path.parent) is not None  # as encode asks first
    tok = open_tokenizer(path.parent)
    assert len(parsed) == 1
    text = "Hello, world 123456 don't!"
    assert tok.encode(text) == real.from_file(str(path)).encode(text).ids
    # The same file opened again gets a backend of its own (the first one's is changed).
    again = open_tokenizer(path)
    assert again.backend is not tok.backend
    obj = json.loads(path.read_text(encoding="utf-8"))
    obj["model"]["dropout"] = 0.25
    path.write_text(json.dumps(obj), encoding="utf-8")
    assert any("dropout 0.25" in note for note in open_tokenizer(path).notes)


@pytest.mark.parametrize("how", ["open_tokenizer", "load"])
def test_a_broken_file_of_another_kind_is_parsed_by_tokenizers_once(
    files, tmp_path, monkeypatch, how
):
    """A review: asked whether tokenizers builds it (to say what is wrong, not where such a
    file is taken), then asked again for the reason: two parses of a file that may take
    seconds each."""
    spec = json.loads(files["sentencepiece_bpe"].read_text(encoding="utf-8"))
    spec["model"]["merges"].append(["\u2581", "qqqzz"])  # a token the vocabulary lacks
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    parsed = _count_parses(monkeypatch)
    with pytest.raises(ValueError, match=rf"{path}: tokenizers cannot read it \(.*qqqzz"):
        open_tokenizer(path) if how == "open_tokenizer" else Tokenizer.load(path)
    assert len(parsed) == 1


def _holds_part_of_a_character(tok, text: str) -> list[bool]:
    """Each token of ``text`` (a byte-level file without a normalizer: its tokens' bytes are
    the text's) that starts or ends inside a character's UTF-8 bytes."""
    data = text.encode("utf-8")
    inside = [(b & 0xC0) == 0x80 for b in data] + [False]  # a continuation byte
    marks, at = [], 0
    for idx in tok.encode(text):
        size = len(tok.decode_single_token_bytes(idx))
        marks.append(inside[at] or inside[at + size])
        at += size
    assert at == len(data)
    return marks


def test_a_byte_level_file_run_by_tokenizers_marks_split_characters(tmp_path):
    """Of "a 😀", 😀 was split into " \\xf0\\x9f\\x98" (offsets 1..3) and "\\x80" (2..3):
    neither was partial, since only tokens with the very same offsets counted as sharing a
    character, and the editor left the split character uncoloured."""
    tok = open_tokenizer(falcon_style(tmp_path / "falcon"))
    assert tok.kind == TOKENIZERS_BYTE_LEVEL
    spans = tok.spans("a 😀")
    assert [(s.start, s.end, s.partial) for s in spans[1:]] == [(1, 3, True), (2, 3, True)]
    for text in ("a 😀😀 b", "café 中文 ﬁ", "x中y", "😀"):
        spans = tok.spans(text)
        assert [s.partial for s in spans] == _holds_part_of_a_character(tok, text), spans


def test_a_file_tokenizers_cannot_build_is_refused_in_one_line(tmp_path, capfd):
    """The docs audit: a subword prefix longer than a merge's part makes tokenizers' Rust code
    panic (pyo3's PanicException, a BaseException), which the probe let through: a hundred
    lines of backtrace where the reader's one-line refusal was said before."""
    base = llama3_style(tmp_path / "base", full=False)
    obj = json.loads(base.read_text(encoding="utf-8"))
    obj["model"]["continuing_subword_prefix"] = "##"
    path = tmp_path / "prefix" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(obj), encoding="utf-8")
    capfd.readouterr()
    for opening in (Tokenizer.load, open_tokenizer):
        with pytest.raises(ValueError) as refused:
            opening(path)
        assert str(refused.value) == (
            f"{path}: model.continuing_subword_prefix: '##' is not supported"
        )
    assert "panicked" not in capfd.readouterr().err


def test_a_file_the_reader_refuses_is_read_once_before_its_error(tmp_path, monkeypatch):
    # Review h_rev64: deciding whether a tokenizer.json runs through tokenizers reads it with
    # the project's reader; a file that reader refused (a merge of unknown parts) was read a
    # second time to say why. The load says the same line from the first reading.
    from bpe_studio.core.formats import files
    from bpe_studio.core.formats.hf import tokenizer_json

    path = llama3_style(tmp_path / "bad", full=False)
    obj = json.loads(path.read_text(encoding="utf-8"))
    obj["model"]["merges"].append("zzzq yyyq")
    path.write_text(json.dumps(obj), encoding="utf-8")
    real = tokenizer_json.read_hf_parsed
    reads: list[str] = []

    def counting(parsed, name):
        reads.append(name)
        return real(parsed, name)

    monkeypatch.setattr(tokenizer_json, "read_hf_parsed", counting)
    monkeypatch.setattr(files, "read_hf_parsed", counting)
    with pytest.raises(ValueError, match=r"model\.merges\[\d+\]") as refused:
        Tokenizer.load(path)
    assert reads == [str(path)]
    with pytest.raises(ValueError) as again:
        tokenizer_json.read_hf(path)
    assert str(refused.value) == str(again.value)


def test_saved_with_special_tokens_off_the_file_gives_the_same_ids(files, tmp_path):
    # A fuzzing audit: opened with no_specials and saved, the file still matched its special
    # tokens. Those the model's vocabulary holds under their ids are left out of
    # added_tokens (marked not special, tokenizers would still match them).
    import warnings

    from hf_shapes import FAMILIES, trained_bpe
    from tokenizers import AddedToken

    from bpe_studio.core.formats.files import LossyFormatWarning

    plain = open_tokenizer(files["sentencepiece_bpe"], no_specials=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossyFormatWarning)
        (written,) = plain.save(tmp_path / "sp", format="hf")
    oracle = tokenizers.Tokenizer.from_file(str(files["sentencepiece_bpe"]))
    oracle.encode_special_tokens = True
    saved = tokenizers.Tokenizer.from_file(str(written))
    for text in ("a</s>b<s>c", "<unk> the </s></s>", read_fixture(SLICES["english"])[:2000]):
        expected = oracle.encode(text, add_special_tokens=False).ids
        assert saved.encode(text, add_special_tokens=False).ids == expected == plain.encode(text)
    # A special token past the model's vocabulary has no id but the added token's: it stays
    # matched, said (run by tokenizers: an added token that merges also make).
    tok = trained_bpe(*FAMILIES["gpt2"], ["the cat sat on the mat\r\n\r\n" * 50], 300)
    tok.add_special_tokens([AddedToken("\r\n", special=True)])
    tok.add_tokens([AddedToken("the", normalized=False)])
    tok.save(str(tmp_path / "crlf.json"))
    bare = open_tokenizer(tmp_path / "crlf.json", no_specials=True)
    assert isinstance(bare, ForeignTokenizer)
    with pytest.warns(LossyFormatWarning, match=r"special token\(s\) '\\r\\n' are written"):
        bare.save(tmp_path / "crlf", format="hf")


def test_a_normalized_added_token_shows_as_tokenizers_decodes_it(tmp_path):
    # A fuzzing audit: under Lowercase tokenizers (0.23 on) decodes a normalized added "AB"
    # as "ab"; the file run by tokenizers (an added token that is also a merge) decoded it
    # so, while vocab, decode_single_token_bytes and inspect showed "AB". Made special by
    # name it is shown by that name (a review: a BERT-like file's normalized "[CLS]" was
    # listed as "[cls]", a name --special-token then refused); decode stays tokenizers'.
    tok = trained_bpe(tokenizers.normalizers.Lowercase(), FAMILIES["gpt2"][1], ["the cat"], 270)
    tok.add_tokens([tokenizers.AddedToken("AB", normalized=True)])
    tok.add_tokens([tokenizers.AddedToken("the", normalized=False)])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    idx = tok.token_to_id("AB")
    shown = tok.decode([idx]).encode()
    assert shown == b"ab"
    for options, named in (({}, shown), ({"special_tokens": ["AB"]}, b"AB")):
        ours = open_tokenizer(path, **options)
        assert isinstance(ours, ForeignTokenizer)
        assert ours.decode_bytes([idx]) == shown
        assert ours.vocab[idx] == ours.decode_single_token_bytes(idx) == named
        assert ours.encode("the AB") == tok.encode("the AB", add_special_tokens=False).ids


def test_a_normalized_special_token_is_listed_by_its_name(tmp_path):
    """A review: a BERT-like file (lowercasing, its special tokens "normalized": true), run
    by tokenizers, listed "[cls]" as a special token, as tokenizers decodes it, and
    --special-token "[cls]" was then refused. Listed by name, as tokenizers' added tokens
    name them."""
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hi", "there"])}
    tok = tokenizers.Tokenizer(tokenizers.models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    tok.add_special_tokens(
        [tokenizers.AddedToken(t, normalized=True, special=True) for t in ("[CLS]", "[SEP]")]
    )
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    names = {tok.get_added_tokens_decoder()[i].content: i for i in (2, 3)}  # the oracle
    ours = open_tokenizer(path)
    assert set(names) <= set(ours.special_tokens)
    for name, idx in names.items():
        assert ours.vocab[idx] == name.encode()
    assert open_tokenizer(path, special_tokens=["[CLS]"]).encode("[CLS] hi") == (
        tok.encode("[CLS] hi", add_special_tokens=False).ids
    )


@pytest.mark.parametrize("nothing", ["\u3000", "\n"], ids=["ideographic-space", "newline"])
def test_an_added_token_normalized_to_nothing_is_refused_on_loading(tmp_path, nothing):
    # A fuzzing audit: under Strip a normalized added "\u3000" is nothing; tokenizers, encoding
    # "  the X" beside an added "XTH", allocated memory until the process was killed (with
    # "\n" under Strip(left) it hung). Never encoded here: refused on loading, naming it.
    tok = trained_bpe(tokenizers.normalizers.Strip(), FAMILIES["gpt2"][1], ["the cat"], 270)
    tok.add_tokens([tokenizers.AddedToken(c, normalized=True) for c in (nothing, "XTH")])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    assert tok.normalizer.normalize_str(nothing) == ""  # the oracle: tokenizers' own
    message = (
        re.escape(f"{path}: added token {nothing!r} is normalized") + '.*"normalized" to false'
    )
    with pytest.raises(ValueError, match=message):
        open_tokenizer(path)


def test_added_tokens_found_alike_once_normalized_are_noted_in_a_file_tokenizers_runs(tmp_path):
    """A review: a WordPiece file (lowercasing) with normalized added tokens "qzx" and "Qzx"
    gave "a qzx b" either id from one process to the next, with no note; a file read here
    notes it (formats.hf.kind.found_alike_note). Reference: tokenizers' own normalizer makes
    both one text."""
    vocab = {t: i for i, t in enumerate(["[UNK]", "a", "b", "q", "##z", "##x"])}
    tok = tokenizers.Tokenizer(tokenizers.models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    tok.add_tokens([tokenizers.AddedToken(t, normalized=True) for t in ("qzx", "Qzx")])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    assert tok.normalizer.normalize_str("Qzx") == tok.normalizer.normalize_str("qzx")
    ours = open_tokenizer(path)
    assert isinstance(ours, ForeignTokenizer)
    [note] = [n for n in ours.notes if "once normalized" in n]
    assert "'qzx', 'Qzx'" in note and "varying from one load to the next" in note
    tok.add_tokens([tokenizers.AddedToken("zz", normalized=True)])
    tok.save(str(path))
    assert [n for n in open_tokenizer(path).notes if "once normalized" in n] == [note]


@pytest.mark.parametrize("name", list(KINDS))
def test_the_explanations_refuse_a_foreign_tokenizer_in_the_views_words(loaded, name):
    """An audit: merge_tree, encode_steps, unreachable_tokens and the compression curve,
    given what open_tokenizer gives for such a file, raised a bare AttributeError ("no
    attribute 'merger'"); each says what the views say instead."""
    from bpe_studio.core import CompressionCurve, encode_steps, merge_tree, unreachable_tokens
    from bpe_studio.core.explain.encode_steps import pretokens
    from bpe_studio.core.explain.merge_tree import merges_using

    tok = loaded[name]
    calls = {
        "The merge tree": lambda: merge_tree(tok, 5),
        "What a token grew into": lambda: merges_using(tok, 5),
        "Step-through (the merges, one by one)": lambda: encode_steps(tok, "hello"),
        "Its pre-tokens": lambda: pretokens(tok, "hello"),
        "Reach (tokens the encoder never gives)": lambda: unreachable_tokens(tok),
        "The compression curve": lambda: CompressionCurve.of_tokenizer("hello", tok),
    }
    for what, call in calls.items():
        with pytest.raises(TypeError) as refused:
            call()
        assert str(refused.value) == tok.not_explained(what)
        assert str(refused.value).startswith(f"{what} applies to byte-level BPE")
