"""One API, both kinds (issue 32): every member of ``TokenizerLike`` on every kind of
tokenizer ``open_tokenizer`` gives, with the same signature and meaning.

Kinds: a byte-level BPE trained here, the GPT-2 preset, a byte-level ``tokenizer.json`` of
Llama 3's shape (all run by ``Tokenizer``); SentencePiece-style BPE files of Llama 2's and
Gemma 3's shapes (byte fallback), a T5-shape Unigram and a BERT-shape WordPiece (run by
``ForeignTokenizer``), built with ``tokenizers``' own trainers (``foreign_files``,
``model_shapes``).

Oracles: tiktoken for GPT-2 (built offline from the fixture vocabulary), ``tokenizers`` itself
for every ``tokenizer.json`` (the trained tokenizer through its own export, which
``test_formats_hf`` proves exact); for truncation of a SentencePiece-style BPE, the same
trainer stopped earlier. Errors are checked for what they name.
"""

from __future__ import annotations

import inspect
import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tokenizers
from core_helpers import EOT, SLICES, read_fixture, write_text
from foreign_files import llama3_style
from model_shapes import gemma3_style, llama2_style, t5_style, wordpiece

from bpe_studio.core import ForeignTokenizer, Tokenizer, TokenizerLike, train_bpe
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.encode.interface import TokenNotFound
from bpe_studio.core.formats.files import LossyFormatWarning

TEXTS = [
    read_fixture(SLICES["english"])[:3000],
    read_fixture(SLICES["chinese"])[:800],
    read_fixture(SLICES["code"])[:2000],
    "",
    "x",
]
BYTE_LEVEL = ["trained", "gpt2", "llama3"]
FALLBACK = ["llama2", "gemma3"]  # SentencePiece-style BPE with byte fallback
NO_MERGES = ["t5", "bert"]
KINDS = BYTE_LEVEL + FALLBACK + NO_MERGES
# The end-of-text token of each kind, as its model spells it (None: it has none).
EOT_OF = {
    "trained": EOT,
    "gpt2": EOT,
    "llama3": EOT,
    "llama2": "</s>",
    "gemma3": "<eos>",
    "t5": "</s>",
    "bert": None,
}


class Oracle:
    """What an independent implementation gives: ``tokenizers`` on a file, or tiktoken."""

    def __init__(self, hf: tokenizers.Tokenizer | None = None, tt=None) -> None:
        self.hf, self.tt = hf, tt

    def encode(self, text: str, add: bool = False) -> list[int]:
        if self.tt is not None:
            return self.tt.encode(text, allowed_special="all")
        return self.hf.encode(text, add_special_tokens=add).ids

    def ordinary(self, text: str) -> list[int]:
        if self.tt is not None:
            return self.tt.encode_ordinary(text)
        plain = tokenizers.Tokenizer.from_str(self.hf.to_str())
        plain.encode_special_tokens = True
        return plain.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        if self.tt is not None:
            return self.tt.decode(ids)
        return self.hf.decode(ids, skip_special_tokens=False)

    def token_id(self, token: str) -> int | None:
        if self.tt is not None:
            return self.tt.encode_single_token(token)
        return self.hf.token_to_id(token)


@dataclass
class Kind:
    name: str
    tok: TokenizerLike
    oracle: Oracle
    path: Path | None  # its tokenizer.json, if it has one


def _hf(path: Path) -> tokenizers.Tokenizer:
    return tokenizers.Tokenizer.from_file(str(path))


@pytest.fixture(scope="module")
def kinds(tmp_path_factory, tiktoken_gpt2) -> dict[str, Kind]:
    root = tmp_path_factory.mktemp("kinds")
    corpus = write_text(root / "corpus.txt", read_fixture(SLICES["tinystories"])[:60_000])
    vocab, merges = train_bpe(corpus, 257 + 300, [EOT], workers=1)
    trained = Tokenizer(vocab, merges, [EOT])
    exported = trained.save(root / "trained", format="hf")[0]
    out = {
        "trained": Kind("trained", trained, Oracle(_hf(exported)), None),
        "gpt2": Kind("gpt2", Tokenizer.preset("gpt2"), Oracle(tt=tiktoken_gpt2), None),
    }
    makers = {
        "llama3": llama3_style,
        "llama2": llama2_style,
        "gemma3": gemma3_style,
        "t5": t5_style,
        "bert": wordpiece,
    }
    for name, make in makers.items():
        path = make(root / name)
        out[name] = Kind(name, open_tokenizer(path), Oracle(_hf(path)), path)
    return out


@pytest.fixture(params=KINDS)
def kind(request, kinds) -> Kind:
    return kinds[request.param]


def _specials_text(tok: TokenizerLike) -> str:
    """Text holding two of the tokenizer's special tokens (or one, or none)."""
    s = tok.special_tokens[:2]
    return f"Hi {s[0]} there{s[-1]}end." if s else "Hi there end."


# ------------------------------------------------------------------ the interface itself
def _protocol_members() -> list[str]:
    skip = {"__init__", "__subclasshook__", "__parameters__", "__protocol_attrs__"}
    return sorted(
        name
        for name, value in vars(TokenizerLike).items()
        if (not name.startswith("_") or name == "__len__")
        and name not in skip
        and (callable(value) or isinstance(value, property))
    )


# Public members one kind has for its own users, and why; anything else public must be in the
# protocol, on both kinds.
OWN = {
    Tokenizer: {
        # constructors of byte-level BPE from its formats (open_tokenizer serves both kinds)
        "from_files", "from_data", "from_tiktoken", "from_hf", "preset", "load", "to_data",
        # the exact engine's parts, read by the explain views, streaming and file encoding
        "merger", "specials", "cut_specials", "cut_rules", "pre_tokenizer", "hf_pipeline",
        "pattern", "pattern_name",
    },
    ForeignTokenizer: {
        "from_file", "backend", "mark_special", "token_text", "token_decoder",
        # what the app's views ask of tokenizers' offsets, and its labels
        "cuts", "not_explained", "pattern", "pattern_name",
        # the Report's note on text a model turns into its unknown token ([UNK])
        "unknown_id",
    },
}  # fmt: skip


def _public(obj) -> set[str]:
    names = {n for n in dir(type(obj)) if not n.startswith("_")}
    return names | {n for n in vars(obj) if not n.startswith("_")}


def test_the_protocol_lists_what_the_brief_asks():
    members = set(_protocol_members())
    asked = {
        "encode", "encode_ordinary", "encode_batch", "encode_ordinary_batch", "encode_iterable",
        "encode_array", "decode", "decode_bytes", "decode_batch", "decode_single_token_bytes",
        "decode_tokens_bytes", "encode_single_token", "eot_token", "special_tokens_set",
        "template", "save", "spans", "n_vocab", "max_token_value", "truncated", "merge_rank",
        "vocab",
    }  # fmt: skip
    assert asked <= members


def test_every_member_is_on_both_kinds_with_one_signature(kinds):
    for name in _protocol_members():
        expected = getattr(TokenizerLike, name)
        for k in kinds.values():
            # subtle: not hasattr, which would read eot_token (it raises where there is none)
            assert name in _public(k.tok) | {"__len__"} and hasattr(type(k.tok), "__len__"), (
                f"{type(k.tok).__name__} lacks {name}"
            )
        if not callable(expected) or isinstance(expected, property):
            continue
        want = inspect.signature(expected)
        for cls in (Tokenizer, ForeignTokenizer):
            got = inspect.signature(getattr(cls, name))
            shape = [(p.name, p.kind, p.default) for p in got.parameters.values()]
            assert shape == [(p.name, p.kind, p.default) for p in want.parameters.values()], (
                f"{cls.__name__}.{name}{got} is not {want}"
            )


def test_no_public_member_is_on_one_kind_only(kinds):
    members = set(_protocol_members())
    for k in (kinds["trained"], kinds["gemma3"]):
        extra = _public(k.tok) - members - OWN[type(k.tok)]
        assert not extra, f"{type(k.tok).__name__} has {sorted(extra)} outside the protocol"


# ------------------------------------------------------------------------------ encoding
def test_encode_and_the_template_equal_the_oracle(kind):
    tok, oracle = kind.tok, kind.oracle
    for text in [*TEXTS, _specials_text(tok)]:
        assert tok.encode(text) == oracle.encode(text), text[:30]
        assert tok.encode(text, add_special_tokens=True) == oracle.encode(text, True), text[:30]
    assert tok.encode_batch(TEXTS, add_special_tokens=True) == [
        oracle.encode(t, True) for t in TEXTS
    ]


def test_template_names_what_is_added(kind):
    tok, hf = kind.tok, kind.oracle.hf
    template = tok.template
    if hf is None or hf.post_processor is None:
        assert template is None
        return
    bare = hf.encode("x", add_special_tokens=False).ids
    full = hf.encode("x").ids
    assert (*template.before, *bare, *template.after) == tuple(full)


def test_encode_ordinary_and_the_tiktoken_keywords(kind):
    tok, oracle = kind.tok, kind.oracle
    text = _specials_text(tok)
    assert tok.encode_ordinary(text) == oracle.ordinary(text)
    for plain in TEXTS:  # no special token in them: the file's own matching serves
        assert tok.encode_ordinary(plain) == oracle.ordinary(plain)
    assert tok.encode_ordinary_batch([text, TEXTS[0]]) == [
        oracle.ordinary(text),
        oracle.ordinary(TEXTS[0]),
    ]
    assert tok.encode(text, allowed_special="all") == oracle.encode(text)
    assert tok.encode(text, allowed_special=set(), disallowed_special=()) == oracle.ordinary(text)
    first, last = tok.special_tokens[0], tok.special_tokens[:2][-1]
    with pytest.raises(ValueError, match=rf"holds {re.escape(repr(first))} at character 3, a"):
        tok.encode(text, allowed_special=set())
    if first == last:
        return
    with pytest.raises(ValueError, match=rf"holds {re.escape(repr(last))} at"):
        tok.encode_batch(["ok", text], allowed_special={first})
    # Only the allowed one is a special token; the other is text.
    ids = tok.encode(text, allowed_special={first}, disallowed_special=())
    assert ids.count(tok.special_id(first)) == 1
    assert tok.special_id(last) not in ids or kind.name in NO_MERGES  # a piece of Unigram's


def test_encode_iterable_is_encode_of_the_joined_text(kind):
    text = TEXTS[0] + _specials_text(kind.tok) + TEXTS[1]
    chunks = [text[i : i + 97] for i in range(0, len(text), 97)]
    assert list(kind.tok.encode_iterable(iter(chunks))) == kind.tok.encode(text)


def test_encode_iterable_names_what_is_not_text_on_every_kind(kind):
    """A file opened in binary mode, or a chunk that is no str: a tokenizer run by
    tokenizers said "sequence item 0: expected str instance, bytes found", where the
    byte-level one names the type and how to open the file."""
    with pytest.raises(TypeError, match=r"got bytes from BytesIO\.read\(\): open the file in text"):
        list(kind.tok.encode_iterable(io.BytesIO(b"hello")))
    with pytest.raises(TypeError, match=r"^encode_iterable expects str chunks, got NoneType$"):
        list(kind.tok.encode_iterable(["a", None]))
    # A text file is read, not iterated by lines, on every kind.
    assert list(kind.tok.encode_iterable(io.StringIO(TEXTS[0]))) == kind.tok.encode(TEXTS[0])


def test_encode_array_takes_the_dtypes_that_hold_every_id(kind):
    tok = kind.tok
    text = TEXTS[0] + _specials_text(tok)
    ids = tok.encode(text)
    largest = max(tok.vocab)
    auto = tok.encode_array(text, None)
    assert auto.dtype == (np.uint16 if largest < 65536 else np.uint32)
    for dtype in ("uint32", "int64", "int32", np.uint16, "auto"):
        array = tok.encode_array(text, dtype)
        assert array.tolist() == ids and array.dtype == (auto.dtype if dtype == "auto" else dtype)
    with pytest.raises(ValueError, match=rf"dtype uint8 holds ids up to 255, but .* {largest:,}"):
        tok.encode_array(text, "uint8")
    with pytest.raises(ValueError, match=r"dtype float32 is not an integer dtype"):
        tok.encode_array(text, "float32")
    with pytest.raises(ValueError, match=r"dtype U5 is not an integer dtype"):
        tok.encode_array(text, "U5")  # as given: NumPy calls it str160


def test_batches_take_any_iterable_and_refuse_a_thread_count_below_one(kind):
    tok = kind.tok
    expected = [tok.encode(t) for t in TEXTS]
    assert tok.encode_batch(iter(TEXTS)) == expected  # tiktoken's pool takes an iterator
    assert tok.encode_batch(t for t in TEXTS) == expected
    assert tok.encode_ordinary_batch(iter(TEXTS)) == [tok.encode_ordinary(t) for t in TEXTS]
    for bad in (0, -1, 1.5, True, "2"):
        refused = rf"num_threads must be a positive integer or None, not {re.escape(repr(bad))}"
        for call in (tok.encode_batch, tok.encode_ordinary_batch):
            with pytest.raises(ValueError, match=refused):
                call(TEXTS, num_threads=bad)
        with pytest.raises(ValueError, match="num_threads"):
            tok.decode_batch([[1]], num_threads=bad)


def test_encode_single_token_finds_each_token(kind):
    tok, oracle = kind.tok, kind.oracle
    for idx in sorted(tok.vocab)[:: max(1, len(tok.vocab) // 300)]:
        data = tok.decode_single_token_bytes(idx)
        found = tok.encode_single_token(data)
        assert tok.vocab[found] == data
    for special in tok.special_tokens:
        assert tok.encode_single_token(special) == tok.special_id(special)
        assert tok.encode_single_token(special) == oracle.token_id(special)
    with pytest.raises(TokenNotFound, match=r"'no such token here' is not a single token"):
        tok.encode_single_token("no such token here")
    with pytest.raises(KeyError):  # tiktoken's error, and this project's
        tok.encode_single_token(b"\xff\xfe no")
    with pytest.raises(TypeError):
        tok.encode_single_token(5)


def test_spans_hold_the_ids_with_bool_partial(kind):
    tok = kind.tok
    for text in (TEXTS[1][:200], TEXTS[0][:500]):
        spans = tok.spans(text)
        assert [s.id for s in spans] == tok.encode(text)
        assert all(type(s.partial) is bool for s in spans)
        assert all(0 <= s.start < s.end <= len(text) for s in spans)


# ------------------------------------------------------------------------------ decoding
def test_decode_equals_the_oracle_and_decode_bytes_is_its_bytes(kind):
    tok, oracle = kind.tok, kind.oracle
    batch = [oracle.encode(t) for t in TEXTS]
    for ids in batch:
        assert tok.decode(ids) == oracle.decode(ids)
        assert tok.decode(ids, errors="strict") == oracle.decode(ids)
        assert tok.decode_bytes(ids) == oracle.decode(ids).encode("utf-8")
    assert tok.decode_batch(batch) == [oracle.decode(ids) for ids in batch]
    ids = batch[0][:40]
    assert tok.decode_tokens_bytes(ids) == [tok.vocab[i] for i in ids]
    assert [tok.decode_single_token_bytes(i) for i in ids] == [tok.vocab[i] for i in ids]
    if kind.name in BYTE_LEVEL:
        assert tok.decode_bytes(ids) == b"".join(tok.vocab[i] for i in ids)
    with pytest.raises(ValueError, match=rf"unknown token id {tok.n_vocab}\b"):
        tok.decode([tok.n_vocab])
    with pytest.raises(ValueError, match=rf"unknown token id {tok.n_vocab}\b"):
        tok.decode_single_token_bytes(tok.n_vocab)
    with pytest.raises(TypeError, match=r"token ids must be ints, got 1\.0"):
        tok.decode([1.0])


def _byte_token(kind: Kind, value: int) -> int:
    """The id of the token that is the one byte ``value``: a byte-fallback ``<0xNN>`` (as
    ``tokenizers`` names it) or a byte-level token."""
    if kind.name in FALLBACK:
        return kind.oracle.hf.token_to_id(f"<0x{value:02X}>")
    return next(i for i, t in kind.tok.vocab.items() if t == bytes([value]))


@pytest.mark.parametrize("name", BYTE_LEVEL + FALLBACK)
def test_bytes_that_make_no_character_are_kept_exactly(kinds, name):
    kind = kinds[name]
    tok = kind.tok
    # E4 B8 AD is "中"; cut short, or with a stray continuation byte, it is no character.
    middle = tok.encode("a")
    for raw in (b"\xe4\xb8", b"\xb8", b"\xe4\xb8\xad"):
        ids = [_byte_token(kind, b) for b in raw]
        assert tok.decode_bytes(ids) == raw
        both = tok.decode_bytes(ids + middle + ids)
        if name in FALLBACK:
            # tokenizers' text, where its ByteFallback wrote one U+FFFD per byte, the bytes.
            lost = ("\ufffd" * len(raw)).encode()
            assert both == kind.oracle.decode(ids + middle + ids).encode().replace(lost, raw)
        else:
            assert both == raw + b"a" + raw
        assert tok.decode(ids) == raw.decode("utf-8", errors="replace")
        assert tok.decode_batch([ids], errors="ignore") == [raw.decode("utf-8", "ignore")]
        if raw != b"\xe4\xb8\xad":
            with pytest.raises(UnicodeDecodeError):
                tok.decode(ids, errors="strict")
    if name in FALLBACK:
        assert tok.decode_single_token_bytes(_byte_token(kind, 0xE4)) == b"\xe4"


# ------------------------------------------------------------------------- its tokens
def test_sizes_and_special_tokens(kind):
    tok, hf = kind.tok, kind.oracle.hf
    largest = max(tok.vocab)
    assert (
        tok.max_token_value == largest and tok.n_vocab == largest + 1 and len(tok) == len(tok.vocab)
    )
    if hf is not None:
        assert tok.n_vocab == max(hf.get_vocab(with_added_tokens=True).values()) + 1
    else:
        assert tok.n_vocab == kind.oracle.tt.n_vocab
    assert tok.special_tokens_set == set(tok.special_tokens)
    for special in tok.special_tokens:
        assert tok.special_id(special) == kind.oracle.token_id(special)


def test_eot_token(kind):
    spelled = EOT_OF[kind.name]
    if spelled is None:
        with pytest.raises(TokenNotFound, match=r"has no end-of-text token: none of its special"):
            _ = kind.tok.eot_token
        with pytest.raises(KeyError):  # as tiktoken's
            _ = kind.tok.eot_token
        return
    assert kind.tok.eot_token == kind.oracle.token_id(spelled)
    if kind.oracle.tt is not None:
        assert kind.tok.eot_token == kind.oracle.tt.eot_token


# ----------------------------------------------------------------------------- files
def test_save_writes_what_reloads_with_the_same_ids(kind, tmp_path):
    tok = kind.tok
    written = tok.save(tmp_path / "hf", format="hf")
    assert [p.name for p in written] == ["tokenizer.json"]
    again = open_tokenizer(tmp_path / "hf")
    assert type(again) is type(tok)
    text = TEXTS[0] + _specials_text(tok) + TEXTS[1]
    assert again.encode(text) == tok.encode(text)
    assert again.encode(text, add_special_tokens=True) == tok.encode(text, add_special_tokens=True)
    is_foreign = isinstance(tok, ForeignTokenizer)
    if kind.name == "llama3":
        # ignore_merges, which merges.txt cannot say, changes no id of this file: GPT-2 files
        # hold it (test_ignore_merges_unreachable has a file they refuse).
        with pytest.warns(LossyFormatWarning):  # no pattern, no template
            written = tok.save(tmp_path / "default")
        specials = tok.to_data().special_tokens
        back = Tokenizer.from_files(*sorted(written, reverse=True), specials, pattern=tok.pattern)
        assert back.encode(text) == tok.encode(text)
        return
    default = sorted(p.name for p in tok.save(tmp_path / "default"))
    assert default == (["tokenizer.json"] if is_foreign else ["merges.txt", "vocab.json"])
    if is_foreign:
        kind_shown = re.escape(tok.kind)
        with pytest.raises(ValueError, match=rf"format 'gpt2' cannot hold a {kind_shown} token"):
            tok.save(tmp_path / "gpt2", format="gpt2")
        # An audit: the refusal named no file, as the byte-level class's does.
        for fmt, first in [("gpt2", "vocab.json"), ("tiktoken", "tokenizer.tiktoken")]:
            with pytest.raises(ValueError) as refused:
                tok.save(tmp_path / "o", format=fmt)
            assert str(refused.value).startswith(f"{tmp_path / 'o' / first}: format '{fmt}'")
        assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------- merges
def test_merge_rank_is_the_first_merge_making_the_token(kind):
    tok = kind.tok
    if kind.name in NO_MERGES:
        assert tok.merges == ()
        with pytest.raises(ValueError, match=rf"merge_rank: a {tok.kind} tokenizer has no merges"):
            tok.merge_rank(5)
        return
    first: dict[bytes, int] = {}
    for rank, (a, b) in enumerate(tok.merges):
        first.setdefault(a + b, rank)
    assert len(first) > 50
    for made, rank in list(first.items())[:: max(1, len(first) // 200)]:
        assert tok.merge_rank(tok.encode_single_token(made)) == rank
    for special in tok.special_tokens:
        assert tok.merge_rank(tok.special_id(special)) is None


def test_merge_rank_of_an_id_not_in_the_vocabulary_is_an_error_naming_it(kind):
    """An API audit: merge_rank(10**9) and merge_rank(-1) gave None, as for a byte, where
    decode_single_token_bytes of the same id raises ValueError naming it."""
    tok = kind.tok
    if kind.name in NO_MERGES:
        return  # no merges to rank: the error above says so whatever the id
    for bad in (10**9, -1, tok.max_token_value + 1):
        with pytest.raises(ValueError, match=rf"merge_rank: unknown token id {bad}\b"):
            tok.merge_rank(bad)
    with pytest.raises(TypeError, match="merge_rank: token_id must be an int"):
        tok.merge_rank(1.0)  # type: ignore[arg-type]
    if kind.name in BYTE_LEVEL:
        assert tok.merge_rank(tok.encode_single_token(b"a")) is None  # a byte: no merge


def test_truncated_keeps_the_first_merges(kind):
    tok = kind.tok
    if kind.name in NO_MERGES:
        with pytest.raises(ValueError, match=rf"truncated\(k\): a {tok.kind} tokenizer has no"):
            tok.truncated(0)
        return
    n = len(tok.merges)
    whole = tok.truncated(n)
    for text in TEXTS[:3]:
        assert whole.encode(text) == tok.encode(text)
    none = tok.truncated(0)
    assert none.merges == [] and len(none.vocab) < len(tok.vocab)
    assert none.special_tokens == tok.special_tokens
    with pytest.raises(ValueError, match=rf"k = {n + 1} is out of range; .* {n} merges"):
        tok.truncated(n + 1)
    with pytest.raises(TypeError):
        tok.truncated(1.5)


@pytest.mark.parametrize("make", [llama2_style, gemma3_style], ids=["llama2", "gemma3"])
def test_truncating_a_sentencepiece_bpe_is_training_stopped_early(tmp_path, make):
    """tokenizers' trainer stopped at a smaller vocabulary learns the first merges of the
    larger run: the larger one truncated to as many merges encodes as the smaller one. (By
    token: Gemma's shape puts the byte tokens after the trained ones, so their ids move.)"""
    big = open_tokenizer(make(tmp_path / "big", vocab_size=700))
    small_path = make(tmp_path / "small", vocab_size=500)
    small = _hf(small_path)
    k = len(open_tokenizer(small_path).merges)
    assert 0 < k < len(big.merges)
    cut = big.truncated(k)
    assert cut.merges == open_tokenizer(small_path).merges
    assert {cut.token_text(i) for i in cut.vocab} == set(small.get_vocab(with_added_tokens=True))
    for text in TEXTS:
        for add in (False, True):
            ours = [cut.token_text(i) for i in cut.encode(text, add_special_tokens=add)]
            assert ours == small.encode(text, add_special_tokens=add).tokens
    assert all(cut.token_text(i) == big.token_text(i) for i in cut.vocab)  # ids kept


# ------------------------------------------------------------------------ added tokens
@pytest.mark.parametrize("make", [llama3_style, gemma3_style], ids=["byte-level", "gemma3"])
def test_added_tokens_are_the_files_plain_added_tokens_on_both_kinds(tmp_path, make):
    """An audit: ``added_tokens`` (and ``prepare_bulk``) were the byte-level class's only,
    so code over ``open_tokenizer``'s result failed on a SentencePiece-style file, whose
    plain added tokens were nowhere (not special tokens either)."""
    base = _hf(make(tmp_path / "base"))
    base.add_tokens([tokenizers.AddedToken("<mask>", special=False, normalized=False)])
    base.add_special_tokens([tokenizers.AddedToken("<sep>", special=True)])
    path = tmp_path / "tokenizer.json"
    base.save(str(path))
    oracle = _hf(path)
    tok = open_tokenizer(path)
    plain = {t.content: i for i, t in oracle.get_added_tokens_decoder().items() if not t.special}
    assert dict(tok.added_tokens) == plain and "<mask>" in plain
    assert "<sep>" in tok.special_tokens and "<sep>" not in tok.added_tokens
    with pytest.raises(TypeError):
        tok.added_tokens["<x>"] = 1  # type: ignore[index]
    text = "a<mask>b <sep> c"
    assert tok.prepare_bulk() is None
    assert tok.encode(text) == oracle.encode(text, add_special_tokens=False).ids
    assert tok.encode_ordinary("<mask>") == [plain["<mask>"]]
