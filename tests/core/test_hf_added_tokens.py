"""A ``tokenizer.json``'s added tokens that are not special (``"special": false``, as Qwen3's
``<think>``) are matched wherever they occur, as ``tokenizers`` matches them: with the special
tokens on, off (``encode_ordinary``, ``no_specials``: ``tokenizers``' encode_special_tokens,
which skips a special token's match without searching it again) or some of them allowed, on
every path (Python, compiled, streams, files in chunks, batches), and they are no special
tokens (``special_tokens``, errors for special tokens not allowed).

Oracle: ``tokenizers`` itself, on files it trains here with such tokens, among them ones that
overlap the special tokens (``ab|>`` inside ``<|ab|>``, ``<|endoftext`` a prefix of
``<|endoftext|>``), and, in the last shape, with every flag (lstrip, rstrip, single_word,
normalized), and in phi-2's, with added runs of spaces whose bytes a model token holds.
"""

from __future__ import annotations

import json
import re
import warnings
from unittest import mock

import numpy as np
import pytest
import tokenizers
from core_helpers import SLICES, read_fixture
from hf_shapes import FAMILIES, flagged_file, trained_bpe
from hypothesis import given
from hypothesis import strategies as st
from reference_encoder import ASSIGNED_TEXTS
from text_strategies import HYPO
from tokenizers import AddedToken, pre_tokenizers

from bpe_studio.core import Tokenizer, unreachable_tokens
from bpe_studio.core.encode import streaming
from bpe_studio.core.encode.encode_file import encode_file
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.encode.merging import kernel_start
from bpe_studio.core.explain.span_arrays import compute_spans
from bpe_studio.core.formats.files import LossyFormatWarning

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|ab|>"]
PLAIN = ["<think>", "</think>", "ab|>", "<|endoftext"]
FLAGGED = [
    AddedToken("<tool>", lstrip=True, special=False, normalized=False),
    AddedToken("</tool>", rstrip=True, special=False, normalized=False),
    AddedToken("word", single_word=True, special=False, normalized=True),
    AddedToken("THINK", special=False, normalized=True),
]
# phi-2's and CodeGen's runs of spaces: bytes a model token ("ĠĠ") holds too.
SPACE_RUNS = [AddedToken(" " * n, normalized=True, special=False) for n in (2, 3, 4)]
# name -> (normalizer, pre-tokenizer, the added tokens that are not special)
SHAPES = {
    "gpt2": (*FAMILIES["gpt2"], PLAIN),  # GPT-2's pattern, with its cut rules
    "llama3": (*FAMILIES["llama3"], PLAIN),  # one regex: the tokenizer's own pre-tokenizer
    "qwen2": (*FAMILIES["qwen2"], PLAIN),  # NFC: the pipeline
    "flagged": (
        tokenizers.normalizers.Lowercase(),
        pre_tokenizers.ByteLevel(add_prefix_space=False),
        [*PLAIN, *FLAGGED],
    ),
    "phi": (None, pre_tokenizers.ByteLevel(add_prefix_space=False), [*PLAIN, *SPACE_RUNS]),
}
EVERY_CONTENT = SPECIAL + PLAIN + [t.content for t in FLAGGED] + ["think"]
PIECES = st.sampled_from(
    EVERY_CONTENT + [t[:k] for t in EVERY_CONTENT for k in (1, 2, len(t) - 1)] + [" ", "\n", "x"]
)
TEXTS = st.lists(st.one_of(ASSIGNED_TEXTS, PIECES), max_size=12).map("".join)
FIXED = [
    "a<think>b</think> <|endoftext|>x<|im_start|><|ab|>ab|> <|endoftext <|endoftext|>",
    "x<|ab|>ab|>ab|><|a<|ab|> <|endoftext|><|endoftext<think>",
    "  <tool>  word sword </tool>   THINK think <|ab|>word",
    read_fixture(SLICES["english"])[:3000] + "<think>" + read_fixture(SLICES["chinese"])[:500],
]


def _build(name: str, folder) -> str:
    normalizer, pre_tokenizer, plain = SHAPES[name]
    texts = [read_fixture(SLICES[k])[:30_000] for k in SLICES]
    tok = trained_bpe(normalizer, pre_tokenizer, texts, 700)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    tok.add_tokens(
        [t if isinstance(t, AddedToken) else AddedToken(t, special=False, normalized=False)
         for t in plain]
    )  # fmt: skip
    path = folder / name / "tokenizer.json"
    path.parent.mkdir()
    tok.save(str(path))
    return str(path)


def _hf(
    path: str, unmarked: tuple[str, ...] = (), plain: bool = False, marked: tuple[str, ...] = ()
) -> tokenizers.Tokenizer:
    """``tokenizers``' tokenizer of ``path``; ``unmarked`` special tokens made not special,
    ``marked`` added tokens made special, ``plain``: with encode_special_tokens (the
    special tokens as text)."""
    obj = json.loads(open(path, encoding="utf-8").read())
    for token in obj["added_tokens"]:
        if token["content"] in unmarked + marked:
            token["special"] = token["content"] in marked
    tok = tokenizers.Tokenizer.from_str(json.dumps(obj))
    tok.encode_special_tokens = plain
    return tok


@pytest.fixture(scope="module", params=list(SHAPES))
def shape(request, tmp_path_factory):
    path = _build(request.param, tmp_path_factory.mktemp("added"))
    return path, Tokenizer.from_hf(path), SHAPES[request.param][2]


def _ids(hf: tokenizers.Tokenizer, text: str) -> list[int]:
    return hf.encode(text, add_special_tokens=False).ids


def test_added_tokens_that_are_not_special_are_no_special_tokens(shape):
    path, ours, plain = shape
    assert ours.special_tokens == SPECIAL
    assert ours.special_tokens_set == set(SPECIAL)
    hf = _hf(path)
    contents = [t.content if isinstance(t, AddedToken) else t for t in plain]
    assert ours.added_tokens == {t: hf.token_to_id(t) for t in contents}
    # Never refused as a special token not allowed, and matched all the same.
    text = "a<think>b"
    assert ours.encode(text, allowed_special={"<|ab|>"}) == _ids(hf, text)
    assert ours.encode_ordinary(text) == _ids(hf, text)
    with pytest.raises(ValueError, match=re.escape("'<|ab|>' at character 1, a special token")):
        ours.encode("a<|ab|><think>", allowed_special={"<|im_start|>"})


def _check(path: str, ours: Tokenizer, text: str) -> None:
    assert ours.encode(text) == _ids(_hf(path), text), repr(text)
    plain = _ids(_hf(path, plain=True), text)
    assert ours.encode_ordinary(text) == plain, repr(text)
    assert ours.encode(text, disallowed_special=()) == plain, repr(text)
    # One special token allowed: tokenizers with it unmarked and the others as text.
    allowed = _ids(_hf(path, unmarked=("<|ab|>",), plain=True), text)
    assert ours.encode(text, allowed_special={"<|ab|>"}, disallowed_special=()) == allowed


def test_fixed_texts_encode_as_tokenizers(shape):
    path, ours, _ = shape
    for text in FIXED:
        _check(path, ours, text)


@HYPO
@given(text=TEXTS)
def test_generated_texts_encode_as_tokenizers(shape, text):
    path, ours, _ = shape
    _check(path, ours, text)


@HYPO
@given(text=TEXTS, data=st.data())
def test_without_special_tokens_and_in_a_stream(shape, text, data):
    path, ours, _ = shape
    bare = open_tokenizer(path, no_specials=True)
    assert bare.special_tokens == [] and bare.added_tokens == ours.added_tokens
    expected = _ids(_hf(path, plain=True), text)
    assert bare.encode(text) == expected, repr(text)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    assert list(bare.encode_iterable(chunks)) == expected, (text, cuts)
    assert list(ours.encode_iterable(chunks)) == _ids(_hf(path), text), (text, cuts)


@pytest.mark.parametrize("path_kind", ["python", "compiled"])
def test_a_stream_never_decides_up_to_a_point_inside_a_hidden_special_token(shape, path_kind):
    # With the special tokens off, "<|ab|>" and "<|endoftext|>" are text whose matches hide
    # the added tokens inside them ("ab|>", "<|endoftext"). A stream that decided its buffer
    # up to a point inside such a match ("...<|" + "ab|>...") found "ab|>" in what it
    # carried over, which encode never does.
    path, ours, _ = shape
    if path_kind == "compiled" and not kernel_start.prepare():
        pytest.skip(f"the compiled encoder is unavailable here: {kernel_start.failure()}")
    bare = open_tokenizer(path, no_specials=True)
    text = "word " * 8 + "<|ab|>x <|endoftext|>text|> " + "end " * 8 + "<|ab|>ab|>"
    expected = _ids(_hf(path, plain=True), text)
    assert bare.encode(text) == expected
    wrong = []
    for block in (1, 5, 20, 64):
        with mock.patch.object(streaming, "STREAM_BLOCK", block):
            for k in range(len(text)):
                if list(bare.encode_iterable([text[:k], text[k:]])) != expected:
                    wrong.append((block, k))
    assert not wrong, f"{len(wrong)} streams differ from encode, e.g. (block, cut) {wrong[:3]}"


def test_compiled_path_and_batches(shape):
    path, ours, _ = shape
    if not kernel_start.prepare():
        pytest.skip(f"the compiled encoder is unavailable here: {kernel_start.failure()}")
    hf, plain = _hf(path), _hf(path, plain=True)
    text = "".join(FIXED) * 40
    enc = ours._encoder
    if enc.scanner is not None:
        for specials, oracle in ((enc.specials, hf), (enc.specials_for(text, None, ()), plain)):
            ids = enc.compiled_array(text, specials)
            assert ids is not None and ids.tolist() == _ids(oracle, text)
    assert ours.encode_batch(FIXED) == [_ids(hf, t) for t in FIXED]
    assert ours.encode_ordinary_batch(FIXED) == [_ids(plain, t) for t in FIXED]
    assert ours.encode_array(text).tolist() == _ids(hf, text)
    spans = compute_spans(ours, text, piece=512)
    assert spans is not None and spans.ids.tolist() == _ids(hf, text)


@pytest.mark.parametrize("workers", [1, 2])
def test_files_in_chunks_with_and_without_special_tokens(shape, tmp_path, workers):
    path, ours, _ = shape
    text = "".join(FIXED) * 200
    source = tmp_path / "text.txt"
    source.write_text(text, encoding="utf-8", newline="")
    for tok, oracle in ((ours, _hf(path)), (open_tokenizer(path, no_specials=True), None)):
        out = tmp_path / "ids.npy"
        encode_file(tok, source, out, workers=workers)
        expected = _ids(oracle or _hf(path, plain=True), text)
        assert np.load(out).tolist() == expected


def test_written_back_they_stay_not_special(shape, tmp_path):
    path, ours, _ = shape
    (written,) = ours.save(tmp_path / "hf", format="hf")
    flags = {t["content"]: t["special"] for t in json.loads(written.read_text())["added_tokens"]}
    assert flags == {**{t: True for t in SPECIAL}, **{t: False for t in ours.added_tokens}}
    again = Tokenizer.from_hf(written)
    assert (again.special_tokens, again.added_tokens) == (ours.special_tokens, ours.added_tokens)
    for text in FIXED:
        assert _ids(_hf(str(written), plain=True), text) == _ids(_hf(path, plain=True), text)
    if ours.hf_pipeline is None:  # a file a pattern alone splits (else refused for that)
        with pytest.raises(ValueError, match="tiktoken has no added tokens that are not spec"):
            ours.save(tmp_path / "tt", format="tiktoken")
        with pytest.warns(
            LossyFormatWarning, match="hold no added token that is not special"
        ) as told:
            ours.save(tmp_path / "gpt2", format="gpt2")
        # The advice names the one format that holds them (tiktoken refuses them, above).
        (warning,) = [w for w in told if w.category is LossyFormatWarning]
        assert str(warning.message).endswith("save as 'hf', which holds them")


def test_written_without_special_tokens_the_file_encodes_as_the_tokenizer_did(shape, tmp_path):
    # Opened with no_specials, the special tokens are text. The file written kept them as
    # special added tokens, under ids tokenizers gives others (past the vocabulary's end).
    path, ours, _ = shape
    bare = open_tokenizer(path, no_specials=True)
    for kept in (bare, bare.truncated(len(bare.merges) // 2)):
        # What no file can say: "<|endoftext" is not found inside "<|endoftext|>" read as
        # text (tokenizers' encode_special_tokens). Said, and left out of the texts.
        with pytest.warns(LossyFormatWarning, match="'<\\|endoftext\\|>' as text with no added"):
            (written,) = kept.save(tmp_path / f"hf{len(kept.merges)}", format="hf")
        added = json.loads(written.read_text())["added_tokens"]
        assert {t["content"] for t in added} == set(ours.added_tokens)
        hf = tokenizers.Tokenizer.from_file(str(written))
        for text in FIXED:
            text = re.sub("|".join(map(re.escape, SPECIAL)), "#", text)
            assert _ids(hf, text) == kept.encode(text), text


def test_made_special_by_name_it_is_special(shape, tmp_path):
    # A special token named for one of them (--special-token <think>) makes it special.
    path, _, _ = shape
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok = Tokenizer.load(path, special_tokens=["<think>"])
    assert "<think>" in tok.special_tokens and "<think>" not in tok.added_tokens
    text = "a<think>b"
    hf = _hf(path)
    assert tok.encode(text) == _ids(hf, text)
    assert tok.encode_ordinary(text) == _ids(_hf(path, marked=("<think>",), plain=True), text)
    assert tok.encode_ordinary(text) != _ids(hf, text)  # now split as text


def test_reach_and_single_tokens_follow_the_added_tokens(shape):
    # Found by an audit: the model's tokens holding an added token's bytes (phi-2's "ĠĠ"
    # beside the added "  ") were called reachable, though encoding always cuts the added
    # one out first; and encode_single_token("  ") gave the model's id, not the one encode
    # gives. The reference is tokenizers: a token is reachable when encoding its own text
    # gives it back alone (tokens whose bytes are not text are left out).
    # The kinds audit: a Lowercase file's capital tokens were called reachable (the rule
    # skipped the normalizers), though its encoder never gives them. Its text now goes
    # through the file's normalizers and pre-tokenizer first, as encoding does.
    path, ours, _ = shape
    hf = _hf(path)
    unreachable = set(unreachable_tokens(ours))
    special = set(ours.special_tokens_set)
    checked = blocked = 0
    for token_id, token in ours.vocab.items():
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if not text or text in special:
            continue
        reachable = _ids(hf, text) == [token_id]
        assert (token_id not in unreachable) == reachable, (token_id, text)
        checked += 1
        blocked += (
            any(a in text for a in ours.added_tokens) and token_id not in ours.added_tokens.values()
        )
    assert checked > 300
    for text, token_id in ours.added_tokens.items():
        assert ours.encode_single_token(text) == token_id == hf.token_to_id(text)
    if any(t.strip(" ") == "" for t in ours.added_tokens):
        assert blocked  # the model holds tokens of the added runs' bytes


# What tokenizers is given around a token's text, to find whether it ever gives the token.
_AROUND = ["", " ", "a", "Z", "0", "7", "\n", ".", "'", "_", "-", "中", "é", " a", "'s", "  "]


def _given_somewhere(hf: tokenizers.Tokenizer, token_id: int, text: str) -> bool:
    """Whether tokenizers gives ``token_id`` for ``text``, or it capitalised, with "_" for
    " " or without its first space, between some of :data:`_AROUND`."""
    variants = {text, text.upper(), text.title(), text.replace(" ", "_"), text[1:] or text}
    batch = [a + v + z for v in variants for a in _AROUND for z in _AROUND]
    return any(token_id in e.ids for e in hf.encode_batch(batch, add_special_tokens=False))


@pytest.mark.parametrize("ignore_merges", [True, False])
def test_reach_of_tokens_holding_a_single_word_added_token(tmp_path, ignore_merges):
    # Found by an audit: " sword", " words" and " swords" were called unreachable for the
    # single_word "word" inside them, which encoding cuts out only between non-word
    # characters: encoding " sword" gives its one id. Audit h_reach65: " word" was too,
    # though " word1" and "a word2" give it (its own text alone cuts "word" out).
    # Reference: tokenizers, each token's text in many contexts.
    path = flagged_file(tmp_path, ignore_merges)
    ours, hf = Tokenizer.from_hf(path), _hf(path)
    unreachable = set(unreachable_tokens(ours))
    holding = {}
    for token_id, token in ours.vocab.items():
        text = token.decode("utf-8", errors="replace")
        if "\ufffd" in text or token_id in ours.added_tokens.values() or text == "<pad>":
            continue
        if "word" in text:
            holding[text] = reachable = _given_somewhere(hf, token_id, text)
        else:
            reachable = _ids(hf, text) == [token_id]
        assert (token_id not in unreachable) == reachable, (token_id, text)
    assert holding == {" word": True, " sword": True, " words": True, " swords": True}
    assert _ids(hf, " word1")[0] == ours.encode(" word1")[0] == hf.token_to_id("Ġword")


@pytest.mark.parametrize(
    ("normalizer", "content", "text"),
    [
        (tokenizers.normalizers.Lowercase(), " the", " The cat"),
        (tokenizers.normalizers.Replace("_", " "), " ing", "_ing"),
        (tokenizers.normalizers.Prepend(" "), " hello", "hello"),
    ],
    ids=["lowercase", "replace", "prepend"],
)
def test_an_added_token_looked_for_in_the_original_text_blocks_no_token_the_normalizer_makes(
    tmp_path, normalizer, content, text
):
    # Audit h_reach65: GPT-2's " the" was called unreachable beside an added " the" that is
    # not normalized, though a Lowercase makes " the" from " The", where tokenizers looks
    # for the added one no more (" The cat" gives [262, 3797]); so for a Replace's "_ing"
    # and a Prepend's "hello". Reference: tokenizers, each token holding the added text in
    # many contexts and variants.
    from foreign_files import _gpt2_model
    from tokenizers import decoders

    hf = tokenizers.Tokenizer(_gpt2_model(False))
    hf.normalizer = normalizer
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    hf.decoder = decoders.ByteLevel()
    hf.add_tokens([AddedToken(content, special=False, normalized=False)])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    ours = Tokenizer.from_hf(path)
    unreachable = set(unreachable_tokens(ours))
    first = _ids(hf, text)[0]
    assert ours.vocab[first] == content.encode() and first not in unreachable
    holding = [
        (i, t.decode("utf-8"))
        for i, t in ours.vocab.items()
        if content.encode() in t and i != hf.token_to_id(content)
    ]
    assert holding
    for token_id, held in holding:
        assert (token_id not in unreachable) == _given_somewhere(hf, token_id, held), held


@pytest.mark.parametrize(
    "normalizer",
    [
        tokenizers.normalizers.NFKC(),
        tokenizers.normalizers.Sequence(
            [tokenizers.normalizers.NFKC(), tokenizers.normalizers.Lowercase()]
        ),
        tokenizers.normalizers.Sequence(
            [tokenizers.normalizers.Lowercase(), tokenizers.normalizers.NFKC()]
        ),
    ],
    ids=["nfkc", "nfkc_lower", "lower_nfkc"],
)
def test_an_added_token_looked_for_in_the_original_text_blocks_no_token_nfkc_makes(
    tmp_path, normalizer
):
    # Stop 66: under NFKC, GPT-2's " native" (and the 278 other tokens holding "tiv") was
    # called unreachable beside an added "tiv" that is not normalized, though NFKC makes
    # " native" from the full-width " ｎａｔｉｖｅ", where tokenizers finds no added "tiv".
    # Reference: tokenizers, each sampled token's text written full-width, in contexts.
    import random

    from foreign_files import _gpt2_model
    from tokenizers import decoders

    hf = tokenizers.Tokenizer(_gpt2_model(False))
    hf.normalizer = normalizer
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    hf.decoder = decoders.ByteLevel()
    hf.add_tokens([AddedToken("tiv", special=False, normalized=False)])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    ours = Tokenizer.from_hf(path)
    unreachable = set(unreachable_tokens(ours))
    holding = sorted(
        (i, t.decode())
        for i, t in ours.vocab.items()
        if b"tiv" in t and t.isascii() and i != hf.token_to_id("tiv")
    )
    wide = {c: c + 0xFEE0 for c in range(0x21, 0x7F)} | {0x20: 0x3000}
    given = []
    for token_id, text in random.Random(3).sample(holding, 40):
        batch = [a + text.translate(wide) + z for a in _AROUND for z in _AROUND]
        if any(token_id in e.ids for e in hf.encode_batch(batch, add_special_tokens=False)):
            given.append(token_id)
    assert len(given) > 20
    assert not set(given) & unreachable


@pytest.mark.parametrize("form", ["NFC", "NFKC"])
def test_a_token_nfc_composes_around_an_added_token_is_reachable(tmp_path, form):
    """A review: under NFC (or NFKC), beside an added "ő" looked for in the original text
    only, the model's "xő" was called unreachable, though tokenizers gives it for the
    decomposed "xo" + U+030B: the normalizer composes it after the added token was not
    found. Reference: tokenizers."""
    from gpt2_bytes import token_to_gpt2
    from tokenizers import decoders, models

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    o, word = token_to_gpt2("ő".encode()), token_to_gpt2("xő".encode())
    vocab[o], vocab[word] = len(vocab), len(vocab) + 1
    hf = tokenizers.Tokenizer(models.BPE(vocab, [(o[0], o[1]), ("x", o)]))
    hf.normalizer = getattr(tokenizers.normalizers, form)()
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    hf.decoder = decoders.ByteLevel()
    hf.add_tokens([AddedToken("ő", special=False, normalized=False)])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    word_id = vocab[word]
    assert hf.encode("xo\u030b", add_special_tokens=False).ids == [word_id]  # the oracle
    assert word_id not in unreachable_tokens(Tokenizer.from_hf(path))


def test_an_added_token_the_merges_also_make_is_refused_naming_it(tmp_path):
    """An audit: "and" listed in added_tokens (not special) at the model's own id for it was
    refused as "model.merges[362]: token b'and' is not an ordinary vocabulary token",
    blaming a merge line the user never touched."""
    texts = [read_fixture(SLICES[k])[:30_000] for k in ("english", "code")]
    tok = trained_bpe(None, pre_tokenizers.ByteLevel(add_prefix_space=False), texts, 400)
    # A merged token whose text is its own bytes (no "Ġ"), as the file lists it.
    word = min(t for t in tok.get_vocab() if t.isascii() and t.isalpha() and len(t) >= 3)
    at = tok.token_to_id(word)
    tok.add_tokens([AddedToken(word, special=False, normalized=False)])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    assert json.loads(path.read_text(encoding="utf-8"))["added_tokens"][-1]["id"] == at
    shown = re.escape(repr(word))
    with pytest.raises(
        ValueError,
        match=rf"added_tokens: {shown} \(id {at}\) is also made by "
        r"model\.merges\[\d+\] \(b'.+' \+ b'.+'\); a token both added and merged",
    ):
        Tokenizer.from_hf(path)  # fmt: skip


@pytest.mark.parametrize("content", ["\t", " "])
def test_a_whitespace_token_stripping_both_sides_is_one_token_per_run(tmp_path, content):
    """Found by fuzzing: a "\\t" added with lstrip and rstrip gave "a\\t\\tb" one id for
    each tab, the second for an empty stretch (the first's rstrip had taken its tab), where
    tokenizers gives one. Reference: tokenizers on the same file."""
    texts = [read_fixture(SLICES[k])[:30_000] for k in ("english", "code")]
    tok = trained_bpe(None, pre_tokenizers.ByteLevel(add_prefix_space=False), texts, 400)
    added = AddedToken(content, lstrip=True, rstrip=True, special=False, normalized=False)
    tok.add_tokens([added])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    ours, hf = Tokenizer.from_hf(path), _hf(str(path))
    added_id = hf.token_to_id(content)
    for text in ["a\t\tb", "a\t\t\tb", "\t \t", "  \t  ", "x \t\t y\t", "\t\t\n\t"]:
        expected = _ids(hf, text)
        assert ours.encode(text) == expected, text
        assert open_tokenizer(path).encode(text) == expected, text
        spans = compute_spans(ours, text)
        assert spans is not None and spans.ids.tolist() == expected, text
        assert (spans.ends > spans.starts).all(), (text, spans.starts, spans.ends)
    assert _ids(hf, f"a{content * 3}b").count(added_id) == 1  # one token for the whole run


def test_a_panic_in_tokenizers_is_an_error_naming_the_file(tmp_path):
    """Found by fuzzing: a file run by tokenizers (a special "\\t", a byte the model holds)
    with whitespace added tokens that strip makes tokenizers panic on "xy\\n\\n"
    ("AddedVocabulary bad split"): a BaseException, past every ``except Exception``, shown
    as a Rust backtrace by the command line. Reference: tokenizers itself, which either
    panics (then ours is a ValueError naming the file) or gives the ids ours must give."""
    tok = trained_bpe(
        None, pre_tokenizers.ByteLevel(add_prefix_space=False), ["a cat and a hat " * 50], 270
    )
    tok.add_tokens([
        AddedToken("xy", rstrip=True, normalized=False),
        AddedToken("\n", lstrip=True, normalized=False),
        AddedToken("\t", special=True, normalized=False),
    ])  # fmt: skip
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    ours = open_tokenizer(path)
    for text in ["xy\n\n", "a xy\n\n\tb", "hat\n"]:
        try:
            expected = _ids(_hf(str(path)), text)
        except BaseException as error:  # noqa: BLE001 - pyo3's PanicException
            assert type(error).__name__ == "PanicException"
            with pytest.raises(
                ValueError, match=r"tokenizer\.json: tokenizers failed while encoding"
            ):
                ours.encode(text)
            with pytest.raises(ValueError, match="tokenizers failed"):
                ours.encode_batch([text])
        else:
            assert ours.encode(text) == expected == ours.encode_batch([text])[0]


def test_turned_off_under_ignore_merges_a_special_token_looked_up_whole_is_warned_of(tmp_path):
    # A fuzzing audit: opened with no_specials, a special token is written into model.vocab
    # as the ordinary token it is; with ignore_merges tokenizers then looks a pre-token up as
    # it ("zzz": one id), where the file read (encode_special_tokens on) merged its bytes.
    # No file can keep its id out of that look-up: said. One the pattern splits into
    # several pieces ("<|a b|>") is found by no look-up: not said.
    tok = trained_bpe(*FAMILIES["gpt2"], ["the cat sat on the mat " * 50], 280)
    tok.add_special_tokens([AddedToken("zzz", special=True), AddedToken("<|a b|>", special=True)])
    obj = json.loads(tok.to_str())
    obj["model"]["ignore_merges"] = True
    source = tmp_path / "source.json"
    source.write_text(json.dumps(obj), encoding="utf-8")
    bare = open_tokenizer(source, no_specials=True)
    with pytest.warns(LossyFormatWarning, match="'zzz', turned off") as told:
        (written,) = bare.save(tmp_path / "out", format="hf")
    assert "<|a b|>" not in str([w.message for w in told if w.category is LossyFormatWarning])
    oracle = _hf(str(source), plain=True)
    hf = tokenizers.Tokenizer.from_file(str(written))
    assert _ids(oracle, "zzz") == bare.encode("zzz") != _ids(hf, "zzz")  # the loss warned of
    for text in ("<|a b|> zzzz the cat", "the <|a b|>"):
        assert _ids(hf, text) == _ids(oracle, text) == bare.encode(text)


@pytest.mark.parametrize(
    "special", [" zzz", "\u3000", "\u0395A"], ids=["space", "ideographic", "greek"]
)
def test_turned_off_a_special_token_not_its_own_spelling_looked_up_whole_is_warned_of(
    tmp_path, special
):
    # A fuzzing audit: a turned-off special token is written into model.vocab under its
    # byte-level spelling (" zzz" as "Ġzzz"), which tokenizers looks a pre-token up by; its
    # text not being its own spelling, no warning was given (" zzz": four ids became one).
    tok = trained_bpe(*FAMILIES["gpt2"], ["the cat sat on the mat " * 50], 280)
    tok.add_special_tokens([AddedToken(special, special=True)])
    obj = json.loads(tok.to_str())
    obj["model"]["ignore_merges"] = True
    source = tmp_path / "source.json"
    source.write_text(json.dumps(obj), encoding="utf-8")
    bare = open_tokenizer(source, no_specials=True)
    with pytest.warns(LossyFormatWarning, match=re.escape(f"{special!r}, turned off")):
        (written,) = bare.save(tmp_path / "out", format="hf")
    oracle = _hf(str(source), plain=True)
    hf = tokenizers.Tokenizer.from_file(str(written))
    text = special + " a"  # the token a pre-token of its own
    assert _ids(oracle, text) == bare.encode(text) != _ids(hf, text)  # the loss warned of


def test_a_special_token_named_is_the_added_token_of_that_text(tmp_path):
    # A fuzzing audit: under Lowercase a normalized added "AB" decodes as "ab" (its
    # vocabulary entry holds b"ab"); naming "ab" special found that entry first: with an
    # added "ab" too, "special tokens 'ab' and 'AB' share id 268"; without, "ab" took the
    # id of "AB".
    for second in (True, False):
        tok = trained_bpe(
            tokenizers.normalizers.Lowercase(),
            pre_tokenizers.ByteLevel(add_prefix_space=False),
            ["the cat"],
            268,
        )
        tok.add_tokens([AddedToken("AB", normalized=True)])
        if second:
            tok.add_tokens([AddedToken("ab", normalized=False)])
        path = tmp_path / f"tokenizer{int(second)}.json"
        tok.save(str(path))
        if not second:
            with pytest.raises(ValueError, match=r"special token 'ab' is not in .*tokenizer0"):
                Tokenizer.load(path, special_tokens=["ab"])
            continue
        special = Tokenizer.load(path, special_tokens=["ab"])
        ab, upper = tok.token_to_id("ab"), tok.token_to_id("AB")
        assert special.special_id("ab") == ab != upper
        assert special.decode([upper]) == tok.decode([upper])
        assert special.decode([ab]) == "ab"


@pytest.mark.parametrize(
    "normalizer",
    [
        tokenizers.normalizers.Lowercase(),
        tokenizers.normalizers.Prepend("x"),
        tokenizers.normalizers.Replace("\n", "b"),
    ],
    ids=["lowercase", "prepend", "replace"],
)
def test_a_normalized_added_token_decodes_as_tokenizers_decodes_it(tmp_path, normalizer):
    # A fuzzing audit: tokenizers (0.23 on) decodes a normalized added token as its
    # normalized form, read by the ByteLevel decoder ("AB\n" under Lowercase: "ab\n"); it
    # decoded here as its content. "ŸZ" lowercases to letters of the byte-level alphabet
    # ("ÿ" spells the byte 0xFF): decoded as those bytes.
    tok = trained_bpe(normalizer, pre_tokenizers.ByteLevel(add_prefix_space=False), ["the"], 262)
    contents = ["AB\n", "ŸZ"]
    tok.add_tokens([AddedToken(c, normalized=True, special=False) for c in contents])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    ours = Tokenizer.load(path)
    for tokenizer, hf in ((ours, tok), (None, None)):
        if tokenizer is None:  # written back: the file tokenizers reads decodes alike
            (written,) = ours.save(tmp_path / "again", format="hf")
            hf = tokenizers.Tokenizer.from_file(str(written))
            tokenizer = Tokenizer.load(written)
        for text in [*contents, "the AB\nŸZ"]:
            ids = tokenizer.encode(text)
            assert ids == _ids(hf, text)
            assert tokenizer.decode(ids) == hf.decode(ids), text
        for content in contents:
            idx = hf.token_to_id(content)
            assert tokenizer.added_tokens[content] == idx
            assert tokenizer.decode([idx]) == hf.decode([idx])
    # Made special by name, it is its text, as every special token here is.
    special = Tokenizer.load(path, special_tokens=["AB\n"])
    idx = tok.token_to_id("AB\n")
    assert special.special_tokens == ["AB\n"] and special.decode([idx]) == "AB\n"
    assert special.encode("the AB\n") == _ids(tok, "the AB\n")


@pytest.mark.parametrize("order", [("nce", "Nce"), ("Nce", "nce"), ("NCE", "nce", "Nce")])
def test_added_tokens_found_alike_once_normalized_are_noted(tmp_path, order):
    """Two audits: with two normalized added tokens that Lowercase makes one text ("nce",
    "Nce"), tokenizers gave "once" either id, varying from one load to the next (a hash
    map), so no id is the file's; the file loaded with no word of it. It is noted, naming
    the id this tokenizer always gives: the one listed last. Reference: tokenizers' ids
    are always one of the group's."""
    tok = trained_bpe(
        tokenizers.normalizers.Lowercase(), FAMILIES["gpt2"][1], ["the cat sat " * 40], 280
    )
    tok.add_tokens([AddedToken(content, normalized=True) for content in order])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    ids = {tok.token_to_id(content) for content in order}
    assert tokenizers.Tokenizer.from_file(str(path)).encode("once").ids[-1] in ids
    ours = open_tokenizer(path)
    last = tok.token_to_id(order[-1])
    assert ours.encode("once")[-1] == last
    [note] = [n for n in ours.notes if "found as 'nce'" in n]
    assert f"here always {order[-1]!r} (id {last})" in note


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_note_of_tokens_found_alike_where_none_are(tmp_path, family):
    tok = trained_bpe(*FAMILIES[family], ["the cat sat " * 40], 300)
    tok.add_tokens([AddedToken("nce", normalized=True), AddedToken("<x>", normalized=False)])
    tok.add_special_tokens(["<|end|>"])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    assert not [n for n in open_tokenizer(path).notes if "once normalized" in n]


@pytest.mark.parametrize(
    "normalizer",
    [tokenizers.normalizers.Lowercase(), tokenizers.normalizers.Prepend("<")],
    ids=["lowercase", "prepend"],
)
def test_a_normalized_added_token_that_is_a_model_byte_token_is_run_by_tokenizers(
    tmp_path, normalizer
):
    """An audit: a normalized added token "X" at the model's own id for the byte "X" (its
    normalizer changes it) failed every load with "the vocabulary lacks 1 single-byte
    token(s), e.g. byte 0x58", naming neither file nor token: the id was given the normalized
    bytes, the byte lost. tokenizers runs the file (decoding that id as "x"): it is handed
    to tokenizers, naming the file and the token. Reference: tokenizers' ids and decoding."""
    tok = trained_bpe(normalizer, pre_tokenizers.ByteLevel(add_prefix_space=False), ["the"], 262)
    at = tok.token_to_id("X")
    tok.add_tokens([AddedToken("X", normalized=True, special=False)])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    assert tok.token_to_id("X") == at
    with pytest.raises(ValueError, match=rf"tokenizer\.json: added_tokens: 'X' \(id {at}\)"):
        Tokenizer.load(path)
    ours = open_tokenizer(path)
    assert type(ours).__name__ == "ForeignTokenizer"
    for text in ("aXb X", "the X", "x"):
        ids = ours.encode(text)
        assert ids == _ids(tok, text)
        assert ours.decode(ids) == tok.decode(ids)


def test_added_tokens_found_alike_are_noted_with_the_ids_loading_gives(tmp_path):
    """An audit: the note of two added tokens found alike once normalized quoted the id
    written beside the last one, where written ids clash and tokenizers renumbers them
    (a file edited by hand): it named an id the text never gets. Reference: tokenizers'
    ids for the file."""
    tok = trained_bpe(
        tokenizers.normalizers.Lowercase(), FAMILIES["gpt2"][1], ["the cat sat " * 40], 280
    )
    tok.add_special_tokens(["<|end|>"])
    tok.add_tokens([AddedToken(content, normalized=True) for content in ("QZX", "Qzx")])
    obj = json.loads(tok.to_str())
    end = tok.token_to_id("<|end|>")
    for token in obj["added_tokens"]:  # each written with the id of the one before it
        token["id"] = {"QZX": end, "Qzx": end + 1}.get(token["content"], token["id"])
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(path))
    last = hf.token_to_id("Qzx")
    assert last != end + 1  # renumbered: the written id is not the one loading gives
    ours = open_tokenizer(path)
    assert ours.encode("qzx") == [last]
    [note] = [n for n in ours.notes if "found as 'qzx'" in n]
    assert f"here always 'Qzx' (id {last})" in note
