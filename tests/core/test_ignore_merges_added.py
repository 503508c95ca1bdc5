"""A ``tokenizer.json`` with ``ignore_merges`` whose ``model.vocab`` also holds added tokens
under their own text: ``tokenizers`` looks every pre-token up there whole (by its byte-level
spelling) before merging, so a pre-token spelt as such a token is that token's id also where
the token is not cut out first: a ``single_word`` token inside a longer word the pattern cuts
off ("word_1"), an ``lstrip`` or ``normalized`` one the matcher skips, a special token read as
text (``encode_special_tokens``: our ``encode_ordinary``, ``allowed_special``, ``no_specials``).
Added tokens the vocabulary does not hold (Llama 3's own) are never looked up so, and a text
that is not its own byte-level spelling (``"<|a b|>"``: a space is spelt ``Ġ``) is found by no
pre-token. Written back as ``hf``, the file encodes in ``tokenizers`` as the one it came from.

Oracle: ``tokenizers`` itself, on files it trains here, every path (Python, compiled,
batches, streams, files in chunks with workers).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import tokenizers
from core_helpers import SLICES, read_fixture
from hf_shapes import FAMILIES, byte_level, trained_bpe
from hypothesis import given
from hypothesis import strategies as st
from reference_encoder import ASSIGNED_TEXTS
from text_strategies import HYPO
from tokenizers import AddedToken, normalizers, pre_tokenizers

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.encode_file import encode_file
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.encode.merging import kernel_start
from bpe_studio.core.formats.files import LossyFormatWarning

# The model's vocabulary holds these under their own text (as BpeTrainer's special tokens and
# BPE Studio's own writer until now put them there) ...
HELD_SPECIAL = ["<pad>", "<|a b|>"]
HELD_PLAIN = [
    AddedToken("word", single_word=True, special=False, normalized=False),
    AddedToken("<tool>", lstrip=True, special=False, normalized=False),
    AddedToken("think", special=False, normalized=True),
]
# ... and not these (Llama 3's special tokens are outside its model's vocabulary).
FREE_SPECIAL = ["<eot>"]
FREE_PLAIN = [AddedToken("<x>", special=False, normalized=False)]
WHITESPACE_THEN_BYTES = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), byte_level()])
# name -> (normalizer, pre-tokenizer): Llama 3's pattern (the tokenizer's own pre-tokenizer),
# whole words (a pipeline: "<pad>" is a pre-token of its own), a normalizer that lowercases.
SHAPES = {
    "llama3": FAMILIES["llama3"],
    "words": (None, WHITESPACE_THEN_BYTES),
    "lower": (normalizers.Lowercase(), WHITESPACE_THEN_BYTES),
}
CONTENTS = [*HELD_SPECIAL, *FREE_SPECIAL] + [t.content for t in HELD_PLAIN + FREE_PLAIN]
FIXED = [
    "word_1 word word2 a word, sword",
    "a <pad> b <pad>c x<pad> <eot> <|a b|>|a b|",
    "  <tool>  x<tool> <x> <eot><pad>",
    "THINK think Think thinking <Pad> <PAD>",
    "<|a b|><pad><eot><x><tool>word think\n" * 3,
]
PIECES = st.sampled_from(
    CONTENTS + ["word_", "Word", "THINK", "a b", "<", ">", " ", "  ", "\n", "_1", "x"]
)
TEXTS = st.lists(st.one_of(ASSIGNED_TEXTS, PIECES), max_size=10).map("".join)


def _build(name: str, folder, ignore_merges: bool = True) -> str:
    normalizer, pre_tokenizer = SHAPES[name]
    texts = [read_fixture(SLICES[k])[:30_000] for k in SLICES]
    tok = trained_bpe(normalizer, pre_tokenizer, texts, 700)
    # subtle: the held ones first, so that tokenizers, counting the others' ids from the
    # size of model.vocab with them, gives every token the id it has here.
    for special, plain in ((HELD_SPECIAL, HELD_PLAIN), (FREE_SPECIAL, FREE_PLAIN)):
        tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in special])
        tok.add_tokens(plain)
    obj = json.loads(tok.to_str())
    held = HELD_SPECIAL + [t.content for t in HELD_PLAIN]
    obj["model"]["vocab"].update({t: tok.token_to_id(t) for t in held})
    obj["model"]["ignore_merges"] = ignore_merges
    path = folder / name / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return str(path)


def _hf(path: str, plain: bool = False, unmarked: tuple[str, ...] = ()) -> tokenizers.Tokenizer:
    """``tokenizers``' tokenizer of ``path``; ``plain``: with encode_special_tokens (special
    tokens as text); ``unmarked``: special tokens made not special."""
    obj = json.loads(open(path, encoding="utf-8").read())
    for token in obj["added_tokens"]:
        if token["content"] in unmarked:
            token["special"] = False
    tok = tokenizers.Tokenizer.from_str(json.dumps(obj))
    tok.encode_special_tokens = plain
    return tok


def _ids(hf: tokenizers.Tokenizer, text: str) -> list[int]:
    return hf.encode(text, add_special_tokens=False).ids


@pytest.fixture(scope="module", params=list(SHAPES))
def shape(request, tmp_path_factory):
    path = _build(request.param, tmp_path_factory.mktemp("held"))
    return path, Tokenizer.from_hf(path)


def _check(path: str, ours: Tokenizer, text: str) -> None:
    assert ours.encode(text) == _ids(_hf(path), text), repr(text)
    plain = _ids(_hf(path, plain=True), text)
    assert ours.encode_ordinary(text) == plain, repr(text)
    assert ours.encode(text, disallowed_special=()) == plain, repr(text)
    assert open_tokenizer(path, no_specials=True).encode(text) == plain, repr(text)
    allowed = _ids(_hf(path, plain=True, unmarked=("<eot>",)), text)
    assert ours.encode(text, allowed_special={"<eot>"}, disallowed_special=()) == allowed


def test_the_fixed_texts_encode_as_tokenizers(shape):
    path, ours = shape
    # The cases the audit found, each where the token is not cut out first.
    hf, plain = _hf(path), _hf(path, plain=True)
    if "llama3" in path:
        assert _ids(hf, "word_1")[0] == hf.token_to_id("word")
    else:
        assert _ids(plain, "a <pad> b")[1] == hf.token_to_id("<pad>")
        assert hf.token_to_id("<eot>") not in _ids(plain, "a <eot> b")
    for text in FIXED:
        _check(path, ours, text)


@HYPO
@given(text=TEXTS)
def test_generated_texts_encode_as_tokenizers(shape, text):
    path, ours = shape
    _check(path, ours, text)


@HYPO
@given(text=TEXTS, data=st.data())
def test_streams_encode_as_tokenizers(shape, text, data):
    path, ours = shape
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    bare = open_tokenizer(path, no_specials=True)
    assert list(bare.encode_iterable(chunks)) == _ids(_hf(path, plain=True), text), chunks
    assert list(ours.encode_iterable(chunks)) == _ids(_hf(path), text), chunks


def test_compiled_path_and_batches(shape):
    path, ours = shape
    if not kernel_start.prepare():
        pytest.skip(f"the compiled encoder is unavailable here: {kernel_start.failure()}")
    hf, plain = _hf(path), _hf(path, plain=True)
    text = "".join(FIXED) * 40
    assert ours.encode_array(text).tolist() == _ids(hf, text)
    assert ours.encode_batch(FIXED) == [_ids(hf, t) for t in FIXED]
    assert ours.encode_ordinary_batch(FIXED) == [_ids(plain, t) for t in FIXED]


@pytest.mark.parametrize("workers", [1, 2])
def test_files_in_chunks(shape, tmp_path, workers):
    path, ours = shape
    text = "".join(FIXED) * 200
    source = tmp_path / "text.txt"
    source.write_text(text, encoding="utf-8", newline="")
    for tok, plain in ((ours, False), (open_tokenizer(path, no_specials=True), True)):
        out = tmp_path / "ids.npy"
        encode_file(tok, source, out, workers=workers)
        assert np.load(out).tolist() == _ids(_hf(path, plain=plain), text)


def test_written_back_tokenizers_encodes_as_the_source(shape, tmp_path):
    """``convert --to hf`` wrote every added token into model.vocab: the file it wrote
    looked "word" up in "word_1" where the source merged it."""
    path, ours = shape
    (written,) = ours.save(tmp_path / "hf", format="hf")
    obj = json.loads(written.read_text(encoding="utf-8"))
    held = HELD_SPECIAL + [t.content for t in HELD_PLAIN]
    assert {t for t in CONTENTS if t in obj["model"]["vocab"]} == set(held)
    again = Tokenizer.from_hf(written)
    for text in FIXED:
        for plain in (False, True):
            expected = _ids(_hf(path, plain=plain), text)
            assert _ids(_hf(str(written), plain=plain), text) == expected, (text, plain)
        assert again.encode(text) == ours.encode(text)
        assert again.encode_ordinary(text) == ours.encode_ordinary(text)


def test_ids_a_count_cannot_give_are_kept_with_a_warning(shape, tmp_path):
    """A truncated tokenizer keeps its added tokens' ids past the vocabulary it lost, which
    tokenizers' count (past model.vocab's entries) cannot give: written there after all, and
    the added tokens tokenizers will now look up whole are named."""
    path, ours = shape
    short = ours.truncated(100)
    with pytest.warns(LossyFormatWarning, match=r"'<eot>', '<x>' are written into model.vocab"):
        (written,) = short.save(tmp_path / "hf", format="hf")
    hf = _hf(str(written))
    assert [hf.token_to_id(t) for t in CONTENTS] == list(map(ours.encode_single_token, CONTENTS))


def test_without_ignore_merges_nothing_is_looked_up(tmp_path):
    path = _build("words", tmp_path, ignore_merges=False)
    ours = Tokenizer.from_hf(path)
    hf = _hf(path, plain=True)
    assert ours.encode_ordinary("a <pad> b") == _ids(hf, "a <pad> b")
    assert hf.token_to_id("<pad>") not in _ids(hf, "a <pad> b")
    for text in FIXED:
        _check(path, ours, text)


def _token_texts(tok: Tokenizer, count: int) -> str:
    """The first ``count`` of the tokenizer's merged tokens that are whole text, each its own
    word: every one a pre-token looked up whole under ignore_merges."""
    texts = []
    for idx in sorted(tok.vocab)[256:]:
        try:
            texts.append(tok.vocab[idx].decode("utf-8").strip())
        except UnicodeDecodeError:
            continue
    return " ".join(t for t in texts[:count] if t)


@pytest.mark.parametrize("step", ["first", "early", "middle", "one back"])
def test_truncations_encode_as_tokenizers_on_the_file_they_write(shape, tmp_path, step):
    """One step back on the timeline, "word_1" lost "word" (looked up whole at the full step
    and by tokenizers in the file the truncation writes) and lowercased "<Pad>" lost "<pad>":
    a truncation looked nothing up whole."""
    path, ours = shape
    k = {"first": 1, "early": 40, "middle": len(ours.merges) // 2, "one back": len(ours.merges) - 1}
    short = ours.truncated(k[step])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossyFormatWarning)  # <eot>, <x>: see the test above
        (written,) = short.save(tmp_path / "hf", format="hf")
    hf = _hf(str(written))
    texts = [*FIXED, "word_1", "<Pad>", _token_texts(short, 400)]
    for text in texts:
        assert short.encode(text) == _ids(hf, text), repr(text)
    assert short.encode_batch(texts) == [_ids(hf, t) for t in texts]
    if kernel_start.prepare():
        text = "".join(texts) * 20
        assert short.encode_array(text).tolist() == _ids(hf, text)


def test_truncations_without_special_tokens_look_the_held_ones_up(shape):
    """A review: a truncation of the file opened with ``no_specials`` lost the special tokens
    model.vocab holds, so "<pad>" read as text was merged where tokenizers (and the tokenizer
    it came from) looks it up whole."""
    path, ours = shape
    bare = open_tokenizer(path, no_specials=True)
    plain = _hf(path, plain=True)
    for text in FIXED:
        assert bare.truncated(len(bare.merges)).encode(text) == _ids(plain, text), repr(text)
        for k in (1, 40, len(bare.merges) // 2):
            assert bare.truncated(k).encode(text) == ours.truncated(k).encode_ordinary(text)


def test_truncations_look_up_in_the_full_table_without_a_copy(shape):
    """A review: a truncation built its vocabulary and a copy of the whole-token table on its
    first encode (each the size of the vocabulary, for every step of the timeline). It looks
    pre-tokens up in the full table, leaving out the tokens it does not keep, as the copy
    did."""
    _, ours = shape
    text = "".join(FIXED) + _token_texts(ours, 400)
    full = ours.merger._whole
    for k in (0, 1, 40, len(ours.merges) // 2, len(ours.merges)):
        short = ours.truncated(k)
        short.encode(text)
        assert "vocab" not in short.merger.__dict__, "built only to encode"
        kept = {token: i for token, i in full.items() if i in short.vocab}
        assert dict(short.merger._whole) == kept and len(short.merger._whole) == len(kept)
        assert [short.merger.whole_id(token) for token in full] == list(map(kept.get, full))


def test_a_truncated_llama3_shape_warns_of_no_token_its_pattern_never_gives_whole(tmp_path):
    """The third review: saving a truncation of a Llama-3-shaped file (its reserved special
    tokens outside model.vocab) warned in 8,920 characters, naming every reserved token,
    of a lookup that cannot happen: its pattern never gives `<|...|>` as one pre-token."""
    from foreign_files import llama3_style

    base = tokenizers.Tokenizer.from_file(str(llama3_style(tmp_path / "base", full=False)))
    base.add_special_tokens([f"<|reserved_special_token_{i}|>" for i in range(40)])
    path = tmp_path / "reserved" / "tokenizer.json"
    path.parent.mkdir()
    base.save(str(path))
    obj = json.loads(path.read_text(encoding="utf-8"))
    obj["model"]["ignore_merges"] = True
    path.write_text(json.dumps(obj), encoding="utf-8")
    ours = Tokenizer.from_hf(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossyFormatWarning)
        (written,) = ours.truncated(100).save(tmp_path / "hf", format="hf")
    hf = _hf(str(written))
    text = "a <|reserved_special_token_3|> b"
    assert _ids(hf, text) == ours.truncated(100).encode(text)
