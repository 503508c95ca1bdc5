"""Hugging Face ``tokenizer.json``: reading files ``tokenizers`` trains here, refusing what
cannot be reproduced, and writing files ``tokenizers`` encodes with the same ids.

Oracles: Hugging Face ``tokenizers`` itself, against the slow reference encoder
(``reference_encoder``) run on what ``read_hf`` returns or ``write_hf`` was given.
"""

from __future__ import annotations

import ast
import copy
import json
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
import tiktoken
import tokenizers
from core_helpers import EOT, SLICES, read_fixture
from gpt2_bytes import token_to_gpt2
from hypothesis import given, settings
from reference_encoder import ASSIGNED_TEXTS, ReferenceEncoder, read_rank_file, trained_data
from text_strategies import HYPO
from tokenizers import Regex, decoders, models, pre_tokenizers, trainers

from bpe_studio.core import Tokenizer
from bpe_studio.core.formats import PATTERNS, TokenizerData, read_hf, write_hf
from bpe_studio.core.formats.files import LossyFormatWarning
from bpe_studio.core.formats.presets import preset_data

SLICE_CHARS = 8_000
# Llama-3's split pattern, as its tokenizer.json gives it.
LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Every character Python or Oniguruma might call whitespace, in runs and between letters.
SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u180e" + "".join(
    map(chr, [*range(0x2000, 0x200C), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF])
)
SPECIMENS = [
    SPACES,
    "a" + SPACES + "b",
    " ".join(SPACES) + "x",
    "x".join(SPACES),
    "12345678 1 22 333 4444 ١٢٣٤٥",
    "don't WE'LL I'M 'S it's\r\n\r\n  \n x  ",
    "trailing spaces   \n\n",
]


def _sample(corpus: str) -> str:
    return read_fixture(SLICES[corpus])[:SLICE_CHARS]


def _reference(data: TokenizerData) -> ReferenceEncoder:
    return ReferenceEncoder(
        data.vocab, data.merges, data.special_tokens, PATTERNS.get(data.pattern, data.pattern)
    )


def _assert_same_ids(hf: tokenizers.Tokenizer, data: TokenizerData, texts: list[str]) -> None:
    reference = _reference(data)
    for text in texts:
        assert hf.encode(text).ids == reference.encode(text), repr(text[:80])


# ----------------------------------------------------------------- reading trained files
def _train(tmp_path, pre_tokenizer, name: str) -> tokenizers.Tokenizer:
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[EOT, "<|pad|>"],
        show_progress=False,
    )
    tok.train_from_iterator([read_fixture("corpus.en")[:60_000], _sample("mixed_web")], trainer)
    path = tmp_path / name / "tokenizer.json"
    path.parent.mkdir()
    tok.save(str(path))
    return tokenizers.Tokenizer.from_file(str(path))


def _split_then_bytes(pattern: str, behavior: str = "isolated", invert: bool = False):
    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior=behavior, invert=invert),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )


TRAINED = {
    "bytelevel": (pre_tokenizers.ByteLevel(add_prefix_space=False), "gpt2"),
    "llama3": (_split_then_bytes(LLAMA3), None),
    "letters_isolated": (_split_then_bytes(r"\p{L}+"), None),
    "letters_removed": (_split_then_bytes(r"\p{L}+| ?\p{N}", "removed", True), None),
}


@pytest.mark.parametrize("kind", list(TRAINED))
def test_trained_file_reads_and_encodes_the_same(tmp_path, kind):
    pre_tokenizer, pattern = TRAINED[kind]
    hf = _train(tmp_path, pre_tokenizer, kind)
    data = read_hf(tmp_path / kind / "tokenizer.json")
    if pattern:
        assert data.pattern == pattern
    assert data.special_tokens == {EOT: hf.token_to_id(EOT), "<|pad|>": hf.token_to_id("<|pad|>")}
    assert len(data.vocab) == hf.get_vocab_size()
    texts = [_sample(c) for c in SLICES] + SPECIMENS + [f"a{EOT}b <|pad|>{EOT}"]
    _assert_same_ids(hf, data, texts)


def test_merges_as_strings_read_like_lists(tmp_path):
    _train(tmp_path, pre_tokenizers.ByteLevel(add_prefix_space=False), "lists")
    path = tmp_path / "lists" / "tokenizer.json"
    obj = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(obj["model"]["merges"][0], list)
    as_lists = read_hf(path)
    obj["model"]["merges"] = [" ".join(m) for m in obj["model"]["merges"]]
    path.write_text(json.dumps(obj), encoding="utf-8")
    assert read_hf(path) == as_lists


# ----------------------------------------------------------------- refusing
def _base() -> dict:
    """The smallest byte-level BPE file (the 256 bytes and "ab"), as Hugging Face
    ``tokenizers`` itself writes it."""
    vocab = {token_to_gpt2(bytes([b])): b for b in range(256)}
    vocab[token_to_gpt2(b"ab")] = 256
    tok = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[("a", "b")]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return json.loads(tok.to_str())


def _write(tmp_path, obj: dict):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def test_base_file_is_valid(tmp_path):
    path = _write(tmp_path, _base())
    assert tokenizers.Tokenizer.from_file(str(path)).encode("abc").ids == [256, 99]
    data = read_hf(path)
    assert data.merges == [(b"a", b"b")] and data.pattern == "gpt2"


def _split_pre(pattern: str) -> dict:
    return {
        "type": "Sequence",
        "pretokenizers": [
            {
                "type": "Split",
                "pattern": {"Regex": pattern},
                "behavior": "Isolated",
                "invert": False,
            },
            {
                "type": "ByteLevel",
                "add_prefix_space": False,
                "trim_offsets": True,
                "use_regex": False,
            },
        ],
    }


def _set(path: str, value):
    def change(obj: dict) -> None:
        *parents, last = path.split(".")
        for key in parents:
            obj = obj[key]
        obj[last] = value

    return change


def _added(**flags):
    token = {"id": 257, "content": "<s>", "single_word": False, "lstrip": False}
    token |= {"rstrip": False, "normalized": False, "special": True, **flags}
    return _set("added_tokens", [token])


def _special_in_merge(obj: dict) -> None:
    _added()(obj)
    obj["model"]["vocab"]["<s>"] = 257
    obj["model"]["vocab"][token_to_gpt2(b"<s>x")] = 258
    obj["model"]["merges"] = ["a b", "<s> x"]


REFUSED = {
    "wordpiece": (_set("model.type", "WordPiece"), "model: type 'WordPiece'"),
    "unigram": (_set("model.type", "Unigram"), "model: type 'Unigram'"),
    "wordlevel": (_set("model.type", "WordLevel"), "model: type 'WordLevel'"),
    "byte_fallback": (_set("model.byte_fallback", True), "model.byte_fallback"),
    "dropout": (_set("model.dropout", "0.1"), "model.dropout: expected a probability"),
    "dropout_past_one": (_set("model.dropout", 1.5), "model.dropout: expected a probability"),
    "prefix": (_set("model.continuing_subword_prefix", "##"), "model.continuing_subword_prefix"),
    "suffix": (_set("model.end_of_word_suffix", "</w>"), "model.end_of_word_suffix"),
    "whitespace": (
        _set("pre_tokenizer", {"type": "Whitespace"}),
        "pre_tokenizer: does not end in ByteLevel",
    ),
    "metaspace": (
        _set("pre_tokenizer", {"type": "Metaspace", "replacement": "▁"}),
        "pre_tokenizer: 'Metaspace' is not byte-level BPE",
    ),
    "normalizer": (
        _set("normalizer", {"type": "BertNormalizer"}),
        "normalizer: 'BertNormalizer' is not supported",
    ),
    "bert": (_set("post_processor", {"type": "BertProcessing"}), "post_processor: expected cls"),
    "pair_only": (
        _set("post_processor", {"type": "TemplateProcessing", "single": [], "pair": []}),
        "post_processor.single: has no $A",
    ),
    "decoder": (_set("decoder", {"type": "WordPiece"}), "decoder"),
    "no_decoder": (_set("decoder", None), "decoder"),
    "missing_byte": (
        lambda obj: obj["model"]["vocab"].pop(token_to_gpt2(b"\xc8")),
        "byte 0xc8",
    ),
    "unknown_merge_part": (_set("model.merges", ["a b", "ab c"]), "model.merges[1]"),
    "special_in_merge": (
        _special_in_merge,
        "added_tokens: '<s>' (id 257) is also used by model.merges[1] (b'<s>' + b'x')",
    ),
    "two_decoders": (
        _set("decoder", {"type": "Sequence", "decoders": [{"type": "ByteLevel"}] * 2}),
        "decoder",
    ),
    "repeated_merge": (_set("model.merges", ["a b", "a b"]), "model.merges[1]: repeats"),
    "foreign_character": (_set("model.merges", ["a b", "a ▁"]), "model.merges[1]"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_what_cannot_be_reproduced_is_refused(tmp_path, case):
    change, expected = REFUSED[case]
    obj = copy.deepcopy(_base())
    change(obj)
    path = _write(tmp_path, obj)
    with pytest.raises(ValueError) as info:
        read_hf(path)
    message = str(info.value)
    assert message.startswith(str(path)) and expected in message, message


def test_allowed_post_processors_and_added_tokens(tmp_path):
    obj = _base()
    obj["post_processor"] = {
        "type": "Sequence",
        "processors": [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False},
            {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}]},
        ],
    }
    _added()(obj)
    data = read_hf(_write(tmp_path, obj))
    assert data.special_tokens == {"<s>": 257} and data.vocab[257] == b"<s>"


def test_a_byte_level_decoder_written_as_a_sequence_of_one_is_read(tmp_path):
    """An audit: ``Sequence[ByteLevel]``, which decodes as ByteLevel does, was refused."""
    obj = _base()
    obj["decoder"] = {"type": "Sequence", "decoders": [{"type": "ByteLevel"}]}
    assert read_hf(_write(tmp_path, obj)).vocab == read_hf(_write(tmp_path, _base())).vocab


def _token(content: str, idx: int) -> dict:
    return {"id": idx, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}  # fmt: skip


ADDED_IDS = {
    # The ids as the file writes them (a vocabulary with a gap: "ab" at 300), which
    # tokenizers does not read: it counts the model's entries (257), then goes on from there.
    "after_a_gap": ({"ab": 300}, [("<|x|>", 301), ("<|y|>", 302)]),
    # One in the model's vocabulary keeps its id there; the next goes on from the largest.
    "held_by_the_model": ({"ab": 256, "<|a|>": 400}, [("<|a|>", 400), ("<|b|>", 999)]),
    # Ids written out of order, and below the model's: given in the file's order.
    "out_of_order": ({"ab": 256}, [("<|p|>", 5), ("<|q|>", 3), ("<|r|>", 260)]),
}


@pytest.mark.parametrize("case", list(ADDED_IDS))
def test_added_tokens_get_the_ids_tokenizers_gives_them(tmp_path, case):
    model_tokens, added = ADDED_IDS[case]
    obj = _base()
    vocab = obj["model"]["vocab"]
    del vocab[token_to_gpt2(b"ab")]
    for text, idx in model_tokens.items():
        vocab[text if text.startswith("<|") else token_to_gpt2(text.encode())] = idx
    obj["added_tokens"] = [_token(c, i) for c, i in added]
    path = _write(tmp_path, obj)
    hf = tokenizers.Tokenizer.from_file(str(path))
    data = read_hf(path)
    assert data.special_tokens == {c: hf.token_to_id(c) for c, _ in added}
    text = "ab " + " ab".join(c for c, _ in added) + "abc"
    ours = Tokenizer.from_hf(path)
    assert ours.encode(text) == hf.encode(text, add_special_tokens=False).ids
    assert ours.decode(ours.encode(text)) == text


@pytest.mark.parametrize("idx", [10**20, 2**32, -1, 1.0, "5", True])
def test_an_added_token_id_tokenizers_cannot_read_is_refused_naming_it(tmp_path, idx):
    """The hostile-inputs audit: an added token with id 10**20 loaded as the next free id
    (renumbered as a colliding one is), where tokenizers refuses the file: ids are u32."""
    from bpe_studio.core.encode.foreign import open_tokenizer

    obj = _base()
    obj["added_tokens"] = [_token("<|x|>", idx)]
    path = _write(tmp_path, obj)
    with pytest.raises(Exception, match="u32"):
        tokenizers.Tokenizer.from_file(str(path))
    said = (
        f"{path}: added_tokens[0]: '<|x|>': id must be an integer from 0 to 4,294,967,295 "
        f"(as tokenizers reads one), got {idx!r}"
    )
    for load in (read_hf, Tokenizer.load, open_tokenizer):
        with pytest.raises(ValueError) as info:
            load(path)
        assert str(info.value) == said, load
    # The largest id it reads is renumbered as tokenizers renumbers it.
    obj["added_tokens"] = [_token("<|x|>", 2**32 - 1)]
    path = _write(tmp_path, obj)
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert read_hf(path).special_tokens == {"<|x|>": hf.token_to_id("<|x|>")}


def test_added_token_ids_before_tokenizers_0_23(tmp_path, monkeypatch):
    # Before 0.23 each new added token got one past the largest added id so far, those the
    # model holds included: the ids tokenizers 0.21.0 gave this file (run once by hand).
    from bpe_studio.core.formats.hf import tokenizer_json

    monkeypatch.setattr(tokenizer_json, "_ids_counted_once", lambda: False)
    obj = _base()
    obj["model"]["vocab"]["<|a|>"] = 400
    obj["added_tokens"] = [_token("<|a|>", 400), _token("<|b|>", 999), _token("<|c|>", 3)]
    assert read_hf(_write(tmp_path, obj)).special_tokens == {
        "<|a|>": 400, "<|b|>": 401, "<|c|>": 402,
    }  # fmt: skip


# ----------------------------------------------------------------- writing
_HF_CACHE: dict[str, tuple[TokenizerData, tokenizers.Tokenizer]] = {}


def _preset_in_hf(name: str, tmp_path_factory) -> tuple[TokenizerData, tokenizers.Tokenizer]:
    if name not in _HF_CACHE:
        data = preset_data(name)
        path = write_hf(tmp_path_factory.mktemp(name), data)
        _HF_CACHE[name] = data, tokenizers.Tokenizer.from_file(str(path))
    return _HF_CACHE[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_written_presets_encode_the_same_in_tokenizers(tmp_path_factory, name):
    data, hf = _preset_in_hf(name, tmp_path_factory)
    texts = [_sample(c) for c in SLICES] + SPECIMENS + [f"x{EOT}y<|endofprompt|>"]
    _assert_same_ids(hf, data, texts)


@settings(HYPO, max_examples=100, derandomize=True)
@given(text=ASSIGNED_TEXTS)
def test_written_presets_encode_the_same_on_generated_text(tmp_path_factory, text):
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        data, hf = _preset_in_hf(name, tmp_path_factory)
        assert hf.encode(text).ids == _reference_cached(name, data).encode(text)


_REF_CACHE: dict[str, ReferenceEncoder] = {}


def _reference_cached(name: str, data: TokenizerData) -> ReferenceEncoder:
    if name not in _REF_CACHE:
        _REF_CACHE[name] = _reference(data)
    return _REF_CACHE[name]


def test_gpt2_preset_round_trips_through_hf(tmp_path):
    data = preset_data("gpt2")
    assert read_hf(write_hf(tmp_path, data)) == data


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", r"\p{L}+| ?\p{N}", r"[a-z]+"])
def test_written_trained_tokenizer_encodes_the_same(tmp_path, pattern):
    data = trained_data(read_fixture("corpus.en")[:10_000], pattern, [EOT, "<|pad|>"], 120)
    path = write_hf(tmp_path, data)
    hf = tokenizers.Tokenizer.from_file(str(path))
    texts = [_sample("english"), _sample("code"), "Ünïcödé 123 + x" + SPACES, f"a{EOT}<|pad|>"]
    _assert_same_ids(hf, data, texts)
    again = read_hf(path)
    assert again == data
    # The file it reads back converts to tiktoken's format, and tiktoken itself encodes that
    # as tokenizers does the file (found by fuzzing: a custom pattern's could not convert).
    rank_path, sidecar = Tokenizer.from_data(again).save(tmp_path / "tt", format="tiktoken")
    settings = json.loads(sidecar.read_text(encoding="utf-8"))
    encoding = tiktoken.Encoding(
        "written",
        pat_str=settings["pat_str"],
        mergeable_ranks=read_rank_file(rank_path),
        special_tokens=settings["special_tokens"],
    )
    for text in texts:
        assert encoding.encode(text, allowed_special="all") == hf.encode(text).ids


def test_a_pattern_that_leaves_text_out_is_said_when_written_and_when_read(tmp_path):
    """An audit: trained with a pattern that covers its corpus but not all text, the
    tokenizer refuses ", " (UncoveredText) while the tokenizer.json written for it drops it,
    as tokenizers does, with no word of it, written or read back."""
    data = trained_data("aab aab ab abc\n" * 50, r"[a-z]+|\s+", [EOT], 6)
    with pytest.warns(LossyFormatWarning, match=r"leaves text such as '!' unmatched"):
        path = write_hf(tmp_path / "drops", data)
    text = "aab, ab!"
    with pytest.raises(ValueError, match="does not match ','"):
        Tokenizer.from_data(data).encode(text)
    again = Tokenizer.load(path)
    expected = tokenizers.Tokenizer.from_file(str(path)).encode(text).ids
    assert again.encode(text) == expected and again.decode(expected) == "aab ab"
    (note,) = again.notes
    assert note.startswith(f"{path}: its pre-tokenizer drops text such as '!'")
    # A pattern that keeps every character: neither a warning nor a note.
    covering = trained_data("aab aab ab abc\n" * 50, r"[a-z]+|\s+|[^a-z\s]+", [EOT], 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossyFormatWarning)
        kept = write_hf(tmp_path / "keeps", covering)
    assert Tokenizer.load(kept).notes == ()


def test_a_one_letter_property_is_written_as_oniguruma_reads_it(tmp_path):
    """Found by the patterns audit: Oniguruma (Ruby syntax) reads "\\pL" as the text "pL",
    and a written ' ?\\pL+| ?\\pN+|...' gave other ids in tokenizers, with no error. It is
    written "\\p{L}", which the regex module reads as it reads "\\pL"."""
    pattern = r" ?\pL+| ?\pN+|\s+|\S"
    data = trained_data(read_fixture("corpus.en")[:10_000], pattern, [EOT], 120)
    path = write_hf(tmp_path, data)
    hf = tokenizers.Tokenizer.from_file(str(path))
    _assert_same_ids(hf, data, [_sample("english"), "Hello World, it is TIME for 42 apples.\n"])
    assert read_hf(path).pattern == r" ?\p{L}+| ?\p{N}+|\s+|\S"


def test_special_tokens_not_in_printable_ascii_are_written_as_themselves(tmp_path):
    # Found by fuzzing: written in byte-level spelling ("<|endĠofĠtext|>"), tokenizers did not
    # find them in the vocabulary and gave them new ids.
    specials = ["<|end of text|>", "<｜begin▁of▁sentence｜>", "<eos>\n", EOT]
    data = trained_data(read_fixture("corpus.en")[:10_000], "gpt2", specials, 60)
    path = write_hf(tmp_path, data)
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert {s: hf.token_to_id(s) for s in specials} == data.special_tokens
    _assert_same_ids(hf, data, ["".join(f"ab {s} the" for s in specials), _sample("english")])
    assert read_hf(path) == data


def test_special_token_spelled_like_a_byte_is_refused(tmp_path):
    # "é" is byte 0xE9's byte-level spelling: tokenizers would take one for the other.
    data = trained_data(read_fixture("corpus.en")[:10_000], "gpt2", ["é"], 5)
    with pytest.raises(ValueError, match=r"'é' is also the byte-level spelling of b'\\xe9'"):
        write_hf(tmp_path, data)


@pytest.mark.parametrize(("added", "spelled"), [("\u0132", b"\x90"), ("\u0120the", b" the")])
def test_an_added_token_that_spells_other_bytes_is_refused_naming_both(tmp_path, added, spelled):
    # Found by fuzzing against tokenizers: it matches the text and decodes the bytes; the
    # refusal named a byte with no token instead (the added token had taken its entry).
    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    hf.train_from_iterator(["the theme of the day"] * 10, trainer)
    hf.add_tokens([tokenizers.AddedToken(added)])
    idx = hf.token_to_id(added)
    assert hf.decode([idx]) == spelled.decode("utf-8", "replace")  # what tokenizers makes of it
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    with pytest.raises(ValueError) as info:
        read_hf(path)
    assert str(info.value) == (
        f"{path}: added_tokens: {added!r} (id {idx}) is also model.vocab's byte-level "
        f"spelling of {spelled!r}: tokenizers matches the text and decodes those bytes, which "
        "an added token cannot do here"
    )


@pytest.mark.parametrize(
    "pattern",
    [r"^\w+|\s+", r"\d{1,3}+|\D+", r"\w+\Z|\W+|\w+", r"\w+|[^\w\s]+|\s+", r"[\w']+|\s+|.",
     r"\bx|.", r"[[:alpha:]]+|."],
)  # fmt: skip
def test_patterns_oniguruma_reads_differently_are_refused(tmp_path, pattern):
    # \w: Oniguruma's takes ² ³ ¹ ¼ ½ ¾ and not U+200C/U+200D (fuzzing found "a\u200db").
    data = trained_data(read_fixture("corpus.en")[:10_000], pattern, [], 5)
    with pytest.raises(ValueError, match="Oniguruma") as info:
        write_hf(tmp_path / "out", data)
    assert str(info.value).startswith(str(tmp_path / "out" / "tokenizer.json"))
    assert not (tmp_path / "out" / "tokenizer.json").exists()


def test_vocabulary_without_every_byte_is_refused(tmp_path):
    data = trained_data(read_fixture("corpus.en")[:10_000], "gpt2", [], 3)
    vocab = {i: tok for i, tok in data.vocab.items() if tok != b"\x00"}
    with pytest.raises(ValueError, match="0x00"):
        write_hf(tmp_path, TokenizerData(vocab, data.merges, {}, "gpt2"))


def test_ignore_merges_is_read_also_where_it_changes_ids(tmp_path):
    obj = _base()
    vocab = obj["model"]["vocab"]
    vocab.update({"bc": 257, "abc": 258})
    obj["model"]["merges"] = ["b c", "a b", "ab c"]  # "abc" never forms from its own bytes
    without = tokenizers.Tokenizer.from_file(str(_write(tmp_path, obj)))
    assert without.encode("abc").ids == [97, 257]
    assert read_hf(tmp_path / "tokenizer.json").merges[2] == (b"ab", b"c")
    obj["model"]["ignore_merges"] = True
    path = _write(tmp_path, obj)
    assert tokenizers.Tokenizer.from_file(str(path)).encode("abc").ids == [258]
    # Encoding it so: tests/core/test_hf_families.py.
    assert read_hf(path).ignore_merges


def test_ignore_merges_is_accepted_when_merges_build_every_token(tmp_path):
    data = preset_data("gpt2")
    path = write_hf(tmp_path, data)
    obj = json.loads(path.read_text(encoding="utf-8"))
    obj["model"]["ignore_merges"] = True
    path.write_text(json.dumps(obj), encoding="utf-8")
    # The special token is in model.vocab under its own text, as written: looked up there.
    held = data.special_tokens
    assert read_hf(path) == replace(data, ignore_merges=True, added_in_model=held)
    hf = tokenizers.Tokenizer.from_file(str(path))
    _assert_same_ids(hf, data, [_sample("english"), _sample("mixed_web")])


def test_writing_into_a_file_path_names_it(tmp_path):
    target = tmp_path / "not_a_dir"
    target.write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match="not a directory") as info:
        write_hf(target, trained_data(read_fixture("corpus.en")[:10_000], "gpt2", [], 2))
    assert str(info.value).startswith(str(target))


@pytest.mark.parametrize("kind", ["template", "roberta"])
def test_a_post_processor_adding_an_id_past_the_vocabulary_is_refused_naming_it(tmp_path, kind):
    """Audit h_hf63: a TemplateProcessing naming id 99999 (the vocabulary 0..399): tokenizers
    gives it; it was read, and decode of the ids it gave raised "unknown token id 99999"."""
    from hf_shapes import FAMILIES, trained_bpe

    normalizer, pre = FAMILIES["gpt2"]
    hf = trained_bpe(normalizer, pre, [read_fixture(SLICES["english"])[:20_000]], 400, ["<s>"])
    if kind == "template":
        hf.post_processor = tokenizers.processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", 99_999)]
        )
    else:
        hf.post_processor = tokenizers.processors.RobertaProcessing(("</s>", 0), ("<s>", 99_999))
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    assert 99_999 in hf.encode("hi").ids  # what tokenizers gives
    with pytest.raises(ValueError) as info:
        read_hf(path)
    assert str(info.value).startswith(
        f"{path}: post_processor: '<s>' is added as id 99,999, which no token of the vocabulary "
        "has: tokenizers would give an id that nothing decodes"
    )
    with pytest.raises(ValueError, match="post_processor: '<s>' is added as id 99,999"):
        Tokenizer.load(path)
    # Its own id is read.
    hf.post_processor = tokenizers.processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", hf.token_to_id("<s>"))]
    )
    hf.save(str(path))
    tok = Tokenizer.load(path)
    ids = tok.encode("hi", add_special_tokens=True)
    assert ids == hf.encode("hi").ids and tok.decode(ids) == "<s>hi"


@pytest.mark.parametrize("special", [True, False])
def test_an_added_token_outside_the_vocabulary_that_spells_other_bytes_is_refused(
    tmp_path, special
):
    """Audit h_hf63: "<|größe|>" added outside model.vocab was read, decoded as its text where
    tokenizers decodes the bytes its Latin-1 letters spell, and save(format="hf") refused it:
    reading took a file writing could not give back. Refused on reading too, as it is where
    model.vocab holds it."""
    from hf_shapes import FAMILIES, trained_bpe

    def added(content: str) -> tuple[tokenizers.Tokenizer, Path]:
        normalizer, pre = FAMILIES["gpt2"]
        hf = trained_bpe(normalizer, pre, [read_fixture(SLICES["english"])[:20_000]], 400)
        token = tokenizers.AddedToken(content, special=special)
        if special:
            hf.add_special_tokens([token])
        else:
            hf.add_tokens([token])
        path = tmp_path / content.strip("<|>") / "tokenizer.json"
        path.parent.mkdir()
        hf.save(str(path))
        return hf, path

    hf, path = added("<|größe|>")
    idx = hf.token_to_id("<|größe|>")
    assert hf.decode([idx], skip_special_tokens=False) != "<|größe|>"  # what tokenizers does
    with pytest.raises(ValueError) as info:
        read_hf(path)
    assert str(info.value) == (
        f"{path}: added_tokens: '<|größe|>' (id {idx}) is the byte-level spelling of "
        f"{'<|größe|>'.encode('latin-1')!r} (each of its letters stands for one byte in the "
        "byte-level alphabet): tokenizers decodes it as those bytes, which an added token "
        "cannot do here (it decodes as its text)"
    )
    # Letters outside the byte-level alphabet spell nothing else: read, and decoded alike.
    hf, path = added("<|中文|>")
    ids = hf.encode("a<|中文|>b").ids
    assert Tokenizer.load(path).decode(ids) == hf.decode(ids, skip_special_tokens=False)


def _dropping_file(folder: Path, name: str, pre_tokenizer, normalizer=None, added=()) -> str:
    """A byte-level tokenizer.json trained by tokenizers with ``pre_tokenizer`` (one that
    drops text) and ``normalizer``, with the ``added`` tokens."""
    tok = tokenizers.Tokenizer(models.BPE())
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=270,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(["the cat sat on the mat, hello world!"], trainer)
    tok.add_tokens(list(added))
    path = folder / f"{name}.json"
    tok.save(str(path))
    return str(path)


def test_a_file_that_drops_text_is_noted_whatever_its_normalizer_and_whatever_it_drops(tmp_path):
    """A fuzzing audit: the note a file that drops text gets was missing under any
    normalizer (Qwen2's NFC), with a prefix space, for a pattern that drops words only
    ("the"), and for a file run by tokenizers. The oracle: tokenizers gives no id for the
    text each note names."""
    from tokenizers import AddedToken
    from tokenizers import normalizers as nz

    from bpe_studio.core.encode.foreign import open_tokenizer

    words = pre_tokenizers.Split(Regex(r"\w+"), "removed", invert=True)
    plain = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    cases = {
        "nfc": (pre_tokenizers.Sequence([words, plain]), nz.NFC(), ()),
        "lowercase": (pre_tokenizers.Sequence([words, plain]), nz.Lowercase(), ()),
        "prefix_space": (
            pre_tokenizers.Sequence(
                [words, pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False)]
            ),
            None,
            (),
        ),
        "the": (
            pre_tokenizers.Sequence([pre_tokenizers.Split(Regex("the"), "removed"), plain]),
            None,
            (),
        ),
        # An added token that merges also make: run by tokenizers.
        "foreign": (
            pre_tokenizers.Sequence([words, plain]),
            None,
            [AddedToken("the", normalized=False)],
        ),
    }
    for name, (pre, normalizer, added) in cases.items():
        path = _dropping_file(tmp_path, name, pre, normalizer, added)
        tok = open_tokenizer(path)
        assert (type(tok).__name__ == "ForeignTokenizer") == (name == "foreign")
        (note,) = [n for n in tok.notes if "drops text" in n]
        left_out = note.split("drops text such as ", 1)[1].split(", as tokenizers")[0]
        assert left_out == ("'the'" if name == "the" else "' '"), name
        hf = tokenizers.Tokenizer.from_file(path)
        assert hf.encode(ast.literal_eval(left_out)).ids == [], name
    # Files that keep every character, with a normalizer and a prefix space: no note.
    keeps = pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True)
    path = _dropping_file(tmp_path, "keeps", keeps, nz.NFC())
    assert Tokenizer.load(path).notes == ()


def test_the_strings_a_split_removes_are_noted_and_a_normalizers_drops_are_no_pre_tokenizers(
    tmp_path,
):
    """A review: a Split removing the string "zz" (behind a Replace) loaded with no note, as
    no probe text held "zz", and encode's ratio line then counted the dropped text as kept;
    a file run by tokenizers whose StripAccents drops an accent had that accent named as
    what its pre-tokenizer drops, and "zz" not at all. The oracle: tokenizers gives no id
    for "zz", and its pre-tokenizer keeps the accent."""
    from tokenizers import AddedToken
    from tokenizers import normalizers as nz

    from bpe_studio.core.encode.foreign import open_tokenizer

    plain = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    removes = pre_tokenizers.Sequence([pre_tokenizers.Split("zz", "removed"), plain])
    cases = {
        "replace": (nz.Replace("q", ""), ()),
        "accents": (nz.Sequence([nz.NFD(), nz.StripAccents()]), [AddedToken("the")]),
    }
    for name, (normalizer, added) in cases.items():
        path = _dropping_file(tmp_path, name, removes, normalizer, added)
        hf = tokenizers.Tokenizer.from_file(path)
        assert hf.encode("zz").ids == [] and hf.encode("a zz b").ids == hf.encode("a  b").ids
        assert hf.pre_tokenizer.pre_tokenize_str("\u0301") != []  # the accent is kept
        tok = open_tokenizer(path)
        assert (type(tok).__name__ == "ForeignTokenizer") == (name == "accents")
        (note,) = [n for n in tok.notes if "drops text" in n]
        assert "drops text such as 'zz'" in note, name


@pytest.mark.parametrize(
    ("pattern", "example"),
    [
        (r"https?://\S+", "see https://example.com/a?q=1 now"),
        ("[0-9]{5,}", "call 0123456789 now"),
        (r"\p{Greek}+", "say αβγ now"),
    ],
)
def test_a_split_removing_a_regexs_matches_is_noted_naming_the_regex(tmp_path, pattern, example):
    """An audit: a Split removing what a Regex matches (URLs, long numbers, Greek) loaded
    with no note, as no probe text held a match, so encode's ratio line claimed nothing
    dropped; the same with a String was noted. The oracle: tokenizers' ids leave the match
    out, in a file read here and in one it runs (an added token merges also make)."""
    from tokenizers import AddedToken
    from tokenizers import normalizers as nz

    from bpe_studio.core.encode.foreign import open_tokenizer

    plain = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    removes = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), "removed"), plain])
    for name, added in (("read", ()), ("foreign", [AddedToken("the", normalized=False)])):
        path = _dropping_file(tmp_path, name, removes, nz.NFC(), added)
        hf = tokenizers.Tokenizer.from_file(path)
        kept = hf.decode(hf.encode(example).ids)
        assert len(kept) < len(example) and kept.endswith(" now"), kept
        tok = open_tokenizer(path)
        assert (type(tok).__name__ == "ForeignTokenizer") == (name == "foreign")
        (note,) = [n for n in tok.notes if "drops text" in n]
        assert f"Regex {pattern!r}" in note, name


def _without(flag: str):
    def change(obj: dict) -> None:
        _added()(obj)
        del obj["added_tokens"][0][flag]

    return change


FLAGS = ("special", "lstrip", "rstrip", "single_word", "normalized")
BAD_FLAGS = {
    **{f"{flag}_false_as_a_string": (_added(**{flag: "false"}), flag, '"false"') for flag in FLAGS},
    **{f"{flag}_missing": (_without(flag), flag, None) for flag in FLAGS},
    "special_as_a_number": (_added(special=0), "special", "0"),
    "ignore_merges_as_a_string": (
        _set("model.ignore_merges", "false"),
        "model.ignore_merges",
        '"false"',
    ),
}


@pytest.mark.parametrize("case", list(BAD_FLAGS))
def test_a_flag_tokenizers_refuses_is_refused_naming_the_file_and_the_key(tmp_path, case):
    """An audit: an added token's "special": "false" was read as true (bool of a string), a
    missing "special" as true, and model.ignore_merges with bool() too, where tokenizers
    refuses each file ('invalid type: string "false", expected a boolean', 'missing field
    `special`'). The oracle: tokenizers refuses the file."""
    change, flag, got = BAD_FLAGS[case]
    obj = copy.deepcopy(_base())
    change(obj)
    path = _write(tmp_path, obj)
    with pytest.raises(Exception, match="expected a boolean|missing field"):
        tokenizers.Tokenizer.from_file(str(path))
    key = flag if flag.startswith("model.") else f"added_tokens[0].{flag}"
    with pytest.raises(ValueError) as info:
        Tokenizer.load(path)
    message = str(info.value)
    end = "missing; tokenizers requires it (true or false)" if got is None else f"got {got}"
    assert message.startswith(f"{path}: {key}: ") and message.endswith(end), message
    assert "\n" not in message


def _component(slot: str, value: dict, flag: str, bad):
    """A change setting ``slot`` (normalizer, pre_tokenizer) to ``value`` with its ``flag``
    set to ``bad`` (removed where ``bad`` is ...)."""

    def change(obj: dict) -> None:
        obj[slot] = copy.deepcopy(value)
        inner = obj[slot]["pretokenizers"][0] if "pretokenizers" in value else obj[slot]
        if bad is ...:
            del inner[flag]
        else:
            inner[flag] = bad

    return change


BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}
STRIP = {"type": "Strip", "strip_left": False, "strip_right": True}
DIGITS = {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}]}
DIGITS["pretokenizers"].append(BYTE_LEVEL | {"use_regex": True})
BAD_COMPONENT_FLAGS = {
    "split_invert_as_a_string": ("pre_tokenizer", _split_pre(r"\w+"), "invert", "false"),
    "split_invert_missing": ("pre_tokenizer", _split_pre(r"\w+"), "invert", ...),
    "prefix_space_as_a_string": ("pre_tokenizer", BYTE_LEVEL, "add_prefix_space", "false"),
    "trim_offsets_missing": ("pre_tokenizer", BYTE_LEVEL, "trim_offsets", ...),
    "use_regex_as_a_number": ("pre_tokenizer", BYTE_LEVEL, "use_regex", 0),
    "individual_digits_missing": ("pre_tokenizer", DIGITS, "individual_digits", ...),
    "strip_left_as_a_string": ("normalizer", STRIP, "strip_left", "false"),
    "strip_right_missing": ("normalizer", STRIP, "strip_right", ...),
}


@pytest.mark.parametrize("case", list(BAD_COMPONENT_FLAGS))
def test_a_component_flag_tokenizers_refuses_is_refused_naming_the_key(tmp_path, case):
    """An audit: a Split's "invert": "false" was read as true (bool of a string, so the
    Split kept the text between matches instead), ByteLevel's "add_prefix_space": "false"
    as true, Strip's flags alike, and a missing flag as a default the file never gave,
    where tokenizers refuses each file ("expected a boolean", "missing field"). The
    oracle: tokenizers refuses the file."""
    from bpe_studio.core.encode.foreign import open_tokenizer

    slot, value, flag, bad = BAD_COMPONENT_FLAGS[case]
    obj = copy.deepcopy(_base())
    _component(slot, value, flag, bad)(obj)
    path = _write(tmp_path, obj)
    with pytest.raises(Exception, match="expected a boolean|missing field"):
        tokenizers.Tokenizer.from_file(str(path))
    key = f"{slot}.pretokenizers[0].{flag}" if "pretokenizers" in value else f"{slot}.{flag}"
    said = "missing; tokenizers requires it" if bad is ... else f"got {json.dumps(bad)}"
    for load in (Tokenizer.load, open_tokenizer):
        with pytest.raises(ValueError) as info:
            load(path)
        message = str(info.value)
        assert message.startswith(f"{path}: {key}: ") and said in message, message


@pytest.mark.parametrize("prefix", [5, None])
def test_a_prepend_that_is_no_string_is_named_as_such(tmp_path, prefix):
    """An audit: a Prepend normalizer whose "prepend" was no string was refused saying
    "'Prepend' is not supported (NFC, ..., Prepend, Sequence)", which lists it. The
    oracle: tokenizers refuses the file ("expected a string")."""
    obj = copy.deepcopy(_base())
    obj["normalizer"] = {"type": "Prepend", "prepend": prefix}
    path = _write(tmp_path, obj)
    with pytest.raises(Exception, match="expected a string"):
        tokenizers.Tokenizer.from_file(str(path))
    with pytest.raises(ValueError) as info:
        Tokenizer.load(path)
    assert str(info.value) == f"{path}: normalizer.prepend: expected a string, got {prefix!r}"


@pytest.mark.parametrize("added", [None, {}, {"<s>": 257}, "<s>"])
def test_added_tokens_that_are_no_list_are_refused_naming_the_key(tmp_path, added):
    """An audit: "added_tokens": null or {} was read as no added tokens (a file whose
    special token the model holds loaded with none), and behind a template the error named
    the post_processor's id instead, where tokenizers refuses the file ("invalid type: null,
    expected a sequence"). The oracle: tokenizers refuses the file."""
    from bpe_studio.core.encode.foreign import open_tokenizer

    obj = copy.deepcopy(_base())
    obj["model"]["vocab"]["<s>"] = 257
    obj["added_tokens"] = added
    path = _write(tmp_path, obj)
    with pytest.raises(Exception, match="expected a sequence"):
        tokenizers.Tokenizer.from_file(str(path))
    shown = json.dumps(added)
    for load in (Tokenizer.load, open_tokenizer):
        with pytest.raises(ValueError) as info:
            load(path)
        message = str(info.value)
        assert (
            message == f"{path}: added_tokens: expected a list, as tokenizers requires; got {shown}"
        )
    del obj["added_tokens"]  # missing, it is none, as tokenizers reads it
    path = _write(tmp_path, obj)
    assert Tokenizer.load(path).special_tokens == []
    assert tokenizers.Tokenizer.from_file(str(path)).get_added_tokens_decoder() == {}


@pytest.mark.parametrize(("idx", "said"), [(5, "id 5 is used twice"), (2**32, "id must be an")])
def test_a_bad_model_vocab_id_beside_a_template_is_named_not_the_template(tmp_path, idx, said):
    """An audit: in a file with a template (Llama 3's "<|begin_of_text|> $A"), a model.vocab
    entry whose id another entry holds, or past a u32, was refused naming the
    post_processor ("'<s>' is added as id 257, which no token of the vocabulary has"), from
    the added tokens' ids counted over that vocabulary, where the same file without a
    template named the entry. The oracle: the entry written (tokenizers refuses an id past
    a u32, "expected u32")."""
    from tokenizers import processors

    from bpe_studio.core.encode.foreign import open_tokenizer

    obj = copy.deepcopy(_base())
    _added()(obj)
    template = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 257)])
    obj["post_processor"] = json.loads(template.__getstate__())
    obj["model"]["vocab"]["zz"] = idx
    path = _write(tmp_path, obj)
    if idx >= 2**32:
        with pytest.raises(Exception, match="expected u32"):
            tokenizers.Tokenizer.from_file(str(path))
    for load in (Tokenizer.load, open_tokenizer):
        with pytest.raises(ValueError) as info:
            load(path)
        assert str(info.value).startswith(f"{path}: model.vocab['zz']: {said}"), str(info.value)


def test_an_added_token_its_normalizer_empties_is_refused_alike_everywhere(tmp_path):
    """An audit: Tokenizer.load refused a normalized added token its normalizer makes
    nothing of ("zzzz" under Replace("zz", "")) saying tokenizers runs the file and
    open_tokenizer, the app and encode open it, where each of them refuses it too
    (tokenizers hangs on texts around it). The oracle: tokenizers' normalizer empties it."""
    from tokenizers import normalizers as nz

    from bpe_studio.core.encode.foreign import open_tokenizer

    obj = copy.deepcopy(_base())
    _added(content="zzzz", normalized=True, special=False)(obj)
    obj["normalizer"] = json.loads(nz.Replace("zz", "").__getstate__())
    path = _write(tmp_path, obj)
    assert nz.Replace("zz", "").normalize_str("zzzz") == ""
    for load in (Tokenizer.load, open_tokenizer):
        with pytest.raises(ValueError) as info:
            load(path)
        message = str(info.value)
        assert type(info.value).__name__ != "RefusedByteLevelFile", load
        assert message.startswith(f"{path}: added token 'zzzz' is normalized and its "), message
        assert "tokenizers runs this file" not in message


def test_openais_gpt2_vocabulary_named_encoder_json_is_said_to_be_one(tmp_path):
    """An audit: OpenAI's own GPT-2 files are encoder.json + vocab.bpe (the names tiktoken
    reads them by); Tokenizer.load("encoder.json") said "model: missing", from the
    vocabulary's token "model" (an id, no object). The oracle: the fixture's
    gpt2_vocab.json, GPT-2's own, which maps "model" to an id."""
    from core_helpers import FIXTURES

    from bpe_studio.core.encode.foreign import open_tokenizer

    encoder = tmp_path / "encoder.json"
    encoder.write_bytes((FIXTURES / "gpt2_vocab.json").read_bytes())
    assert isinstance(json.loads(encoder.read_text(encoding="utf-8"))["model"], int)
    for load in (Tokenizer.load, open_tokenizer):
        with pytest.raises(ValueError) as info:
            load(encoder)
        message = str(info.value)
        assert message.startswith(f"{encoder}: a GPT-2 vocabulary (each token's id), not a ")
        assert "vocab.bpe" in message and "model" not in message.split(": ", 1)[1][:40]
    obj = copy.deepcopy(_base())
    obj["model"] = "BPE"
    path = _write(tmp_path, obj)
    with pytest.raises(ValueError, match='model: expected an object, got "BPE"'):
        Tokenizer.load(path)


def test_a_json_file_that_is_no_tokenizer_is_said_to_be_none(tmp_path):
    """A re-audit: `bpe-studio gui corpus.json` (a JSON file of text, or of records) loads it
    as a tokenizer, as dropping it does, and said "model: missing" or "expected a JSON
    object": not that the file is no tokenizer."""
    from bpe_studio.core import Tokenizer

    text = tmp_path / "corpus.json"
    text.write_text('{"text": "hello world"}', encoding="utf-8")
    with pytest.raises(ValueError, match=r'corpus\.json: holds no "model": not a tokenizer\.json'):
        Tokenizer.load(text)
    records = tmp_path / "records.json"
    records.write_text('[{"text": "a"}]', encoding="utf-8")
    with pytest.raises(ValueError, match=r"records\.json: expected a JSON object, got an array"):
        Tokenizer.load(records)
