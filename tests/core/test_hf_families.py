"""Byte-level BPE ``tokenizer.json`` files shaped like the open models' encode exactly as
``tokenizers`` encodes them: GPT-2, Llama 3 (Split + ByteLevel, ignore_merges, a template
adding <|begin_of_text|>), Qwen2 (NFC), DeepSeek-V3 (three Splits), StarCoder (single digits),
BLOOM (a nested class) and a file carrying tiktoken's own cl100k pattern.

Oracle: ``tokenizers`` itself, on files it trains here (BpeTrainer on the fixtures' text) or
builds from GPT-2's own files; compared on the fixtures' English, Chinese, code and web text
and on generated text of assigned characters, and (``test_full_corpora_*``) on the shared
corpora when they are present.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import tokenizers
from core_helpers import EOT, FIXTURES, SLICES, full_corpus, read_fixture
from foreign_files import llama3_style, qwen2_style
from gpt2_bytes import token_to_gpt2
from hf_shapes import FAMILIES, trained_bpe
from hypothesis import given
from hypothesis import strategies as st
from reference_encoder import ASSIGNED_TEXTS
from text_strategies import HYPO
from tokenizers import decoders, models, pre_tokenizers, processors, trainers

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode import encode_file as encode_file_module
from bpe_studio.core.encode import streaming
from bpe_studio.core.encode.encode_file import encode_file
from bpe_studio.core.explain.span_arrays import compute_spans

BOS, EOS = "<|begin_of_text|>", "<|end_of_text|>"
SPECIALS = {
    "gpt2": [EOT],
    "llama3": [BOS, EOS, "<|eot_id|>"],
    "qwen2": [EOT, "<|im_start|>", "<|im_end|>"],
    "deepseek_v3": ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"],
    "starcoder": [EOT, "<fim_prefix>"],
    "bloom": ["<s>", "</s>", "<pad>"],
    "cl100k_in_json": [EOT, "<|fim_prefix|>"],
}
# The template each family's post-processor adds (its first special token before the text).
TEMPLATED = {"llama3", "deepseek_v3", "bloom"}
SAMPLE_CHARS = 20_000
SAMPLES = {
    k: read_fixture(SLICES[k])[:SAMPLE_CHARS] for k in ("english", "chinese", "code", "mixed_web")
}
SPECIMENS = [
    "Hello world 12345 don't WE'LL\r\n\r\n  x  \n",
    "e\u0301\u0323a ﬁ Ａ１ ㌀ Ⅻ ΑΣ İ ß ſ K",
    "(x|y) [a] «b» 1.5, 2!? …。，、।۔، 我们在2024年",
    f"a{EOT}b {BOS}x{EOS} <|im_start|>user\nhi<|im_end|>",
    "    def f(x):\n\treturn x**2  # 123456789\n",
    # Marks and a composition newer than tokenizers' Unicode tables (which Qwen2's NFC uses).
    "\u1df7\u0f74 x\u0301\u1df7 x\u1df7\u0316 a\u0898\u0316 \U00011935\U00011930 \u0c3c\u0301",
]


def _train(name: str, folder) -> str:
    normalizer, pre_tokenizer = FAMILIES[name]
    texts = [t[:60_000] for t in (read_fixture(SLICES[k]) for k in SLICES)]
    tok = trained_bpe(normalizer, pre_tokenizer, texts, 1200, SPECIALS[name])
    if name in TEMPLATED:
        bos = SPECIALS[name][0]
        tok.post_processor = processors.Sequence(
            [
                processors.ByteLevel(trim_offsets=False),
                processors.TemplateProcessing(
                    single=f"{bos} $A",
                    pair=f"{bos} $A {bos} $B",
                    special_tokens=[(bos, tok.token_to_id(bos))],
                ),
            ]
        )
    path = folder / name / "tokenizer.json"
    path.parent.mkdir()
    tok.save(str(path))
    if name == "llama3":
        obj = json.loads(path.read_text(encoding="utf-8"))
        obj["model"]["ignore_merges"] = True
        path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return str(path)


def _gpt2(folder) -> str:
    model = models.BPE.from_file(
        str(FIXTURES / "gpt2_vocab.json"), str(FIXTURES / "gpt2_merges.txt")
    )
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([EOT])
    path = folder / "gpt2" / "tokenizer.json"
    path.parent.mkdir()
    tok.save(str(path))
    return str(path)


_FILES: dict[str, tuple[tokenizers.Tokenizer, Tokenizer]] = {}


def _family_files(name: str, tmp_path_factory) -> tuple[tokenizers.Tokenizer, Tokenizer]:
    """The family's tokenizers (``tokenizers``', ours), built once per process."""
    if name not in _FILES:
        folder = tmp_path_factory.mktemp("families")
        path = _gpt2(folder) if name == "gpt2" else _train(name, folder)
        _FILES[name] = tokenizers.Tokenizer.from_file(path), Tokenizer.from_hf(path)
    return _FILES[name]


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request, tmp_path_factory):
    return (request.param, *_family_files(request.param, tmp_path_factory))


def _same(hf: tokenizers.Tokenizer, ours: Tokenizer, text: str) -> None:
    # encode_batch_fast: tokenizers' own encoding without the offsets, whose bookkeeping is
    # half of its time on the shared corpora (test_hf_offsets_are_left_out_not_the_ids checks
    # that the ids are encode's).
    expected = hf.encode_batch_fast([text], add_special_tokens=False)[0].ids
    assert ours.encode(text) == expected, repr(text[:80])


@pytest.mark.parametrize("corpus", list(SAMPLES))
def test_family_encodes_as_tokenizers_on_fixture_text(family, corpus):
    name, hf, ours = family
    _same(hf, ours, SAMPLES[corpus])


def test_family_encodes_as_tokenizers_on_specimens(family):
    name, hf, ours = family
    for text in SPECIMENS:
        _same(hf, ours, text)


def test_hf_offsets_are_left_out_not_the_ids(family):
    # The oracle of _same is tokenizers' encode_batch_fast; its ids are encode's.
    name, hf, ours = family
    for text in [*SAMPLES.values(), *SPECIMENS]:
        fast = hf.encode_batch_fast([text], add_special_tokens=False)[0].ids
        assert fast == hf.encode(text, add_special_tokens=False).ids, repr(text[:80])


@HYPO
@given(data=st.data())
def test_family_encodes_as_tokenizers_on_generated_text(family, data):
    name, hf, ours = family
    pieces = st.one_of(ASSIGNED_TEXTS, st.sampled_from(SPECIALS[name]))
    text = "".join(data.draw(st.lists(pieces, max_size=4)))
    _same(hf, ours, text)


def test_family_adds_the_template_when_asked(family):
    name, hf, ours = family
    text = SPECIMENS[0]
    assert ours.encode(text, add_special_tokens=True) == hf.encode(text).ids
    assert (ours.template is not None) == (name in TEMPLATED)
    if name in TEMPLATED:
        assert ours.template.text == f"{SPECIALS[name][0]} $A"


def test_family_spans_point_into_the_text(family):
    name, hf, ours = family
    for text in [SAMPLES["mixed_web"][:3000], SAMPLES["chinese"][:1000], *SPECIMENS]:
        spans = ours.spans(text)
        assert [s.id for s in spans] == ours.encode(text)
        # Without trimming, tokenizers' offsets are each token's characters in the text.
        expected = hf.encode(text, add_special_tokens=False).offsets
        got = [(s.start, s.end) for s in spans]
        normalizer = hf.normalizer
        if normalizer is None or normalizer.normalize_str(text) == text:
            assert got == expected, repr(text[:60])
            continue
        # Where normalizing changed characters, a span covers every character its token
        # came from (tokenizers points a composed character at its first one only).
        assert all(a <= c and d <= b for (a, b), (c, d) in zip(got, expected)), repr(text[:60])
        assert [a for a, _ in got] == sorted(a for a, _ in got)


CORPORA = ["english_books.txt", "chinese.txt", "code.txt", "mixed_web.txt"]


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
def test_full_corpora_encode_as_tokenizers(family, corpus):
    # A megabyte of each corpus (Chinese: some 340,000 characters), 10,000 to 29,000 distinct
    # pieces each (GPT-2's pattern). The oracle is most of the time (tokenizers: 1-2.5 MB/s
    # of CPU); two million characters of each (Chinese's six megabytes) took 42 CPU s.
    name, hf, ours = family
    with open(full_corpus(corpus), "rb") as f:
        text = f.read(1_000_000).decode("utf-8", errors="ignore")  # a character cut at the end
    _same(hf, ours, text)


# --------------------------------------------------------------- ignore_merges
def test_ignore_merges_looks_up_tokens_merges_cannot_reach(tmp_path):
    vocab = {token_to_gpt2(bytes([b])): b for b in range(256)}
    vocab |= {"bc": 256, "abc": 257, "ab": 258}
    tok = tokenizers.Tokenizer(models.BPE(vocab, [("b", "c"), ("a", "b")], ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    ours = Tokenizer.from_hf(path)
    # "abc" merges into a, bc; as a whole pre-token it is its own token, also in a batch.
    for text in ["abc", "abc abc", " ".join(["abc", "abcd", "xabc"] * 1000)]:
        assert ours.encode(text) == tok.encode(text).ids
    assert tok.encode("abc").ids == [257]


# --------------------------------------------------------------- added tokens and their flags
FLAGGED = [
    tokenizers.AddedToken("<mask>", lstrip=True, special=True),
    tokenizers.AddedToken("<sep>", rstrip=True, special=True),
    tokenizers.AddedToken("word", single_word=True, special=False, normalized=True),
    tokenizers.AddedToken("HELLO", special=False, normalized=True),
    tokenizers.AddedToken("<raw>", special=True, normalized=False),
]
FLAG_TEXTS = [
    "a  <mask> b<mask>c <sep>   d<sep>e",
    "word words sword word. (word) wordy",
    "Hello HELLO hello <RAW> <raw>",
    "   <mask><sep>  <mask>  \n<sep>\n word",
]


@pytest.fixture(scope="module")
def flagged(tmp_path_factory):
    """A trained file with a Lowercase normalizer and added tokens with every flag."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.normalizer = tokenizers.normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=500, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator([SAMPLES["english"]], trainer)
    tok.add_tokens(FLAGGED)
    path = tmp_path_factory.mktemp("flagged") / "tokenizer.json"
    tok.save(str(path))
    return tokenizers.Tokenizer.from_file(str(path)), Tokenizer.from_hf(path)


def test_added_token_flags_match_as_in_tokenizers(flagged):
    hf, ours = flagged
    for text in FLAG_TEXTS + SPECIMENS:
        _same(hf, ours, text)
        spans = ours.spans(text)
        assert [(s.start, s.end) for s in spans] == hf.encode(text).offsets, repr(text)


@HYPO
@given(data=st.data())
def test_added_token_flags_on_generated_text(flagged, data):
    hf, ours = flagged
    pieces = st.one_of(ASSIGNED_TEXTS, st.sampled_from([t.content for t in FLAGGED] + [" ", "x"]))
    _same(hf, ours, "".join(data.draw(st.lists(pieces, max_size=8))))


def test_files_and_long_texts_are_cut_only_where_tokenizers_would_cut(flagged, tmp_path):
    # Cutting before every "<mask>" (lstrip: it takes the spaces before it) or "word"
    # (single_word: not inside "swords") would change the ids of a file encoded in chunks.
    hf, ours = flagged
    text = "".join(FLAG_TEXTS + [SAMPLES["english"][:2000]]) * 300
    path = tmp_path / "text.txt"
    path.write_text(text, encoding="utf-8", newline="")
    out = tmp_path / "ids.npy"
    encode_file(ours, path, out, workers=2)
    assert np.load(out).tolist() == hf.encode(text).ids
    spans = compute_spans(ours, text[:200_000], piece=4096)
    assert spans is not None and spans.ids.tolist() == hf.encode(text[:200_000]).ids


def test_family_written_back_encodes_the_same_in_tokenizers(family, tmp_path):
    name, hf, ours = family
    (path,) = ours.save(tmp_path, format="hf")
    again = tokenizers.Tokenizer.from_file(str(path))
    for text in [SAMPLES["mixed_web"][:3000], *SPECIMENS]:
        assert again.encode(text).ids == hf.encode(text).ids
    if ours.to_data().pipeline.needed:
        with pytest.raises(ValueError, match="format 'gpt2' cannot hold this tokenizer"):
            ours.save(tmp_path / "gpt2", format="gpt2")


def test_special_tokens_given_besides_the_files_are_matched(family, tmp_path):
    name, hf, ours = family
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    hf = tokenizers.Tokenizer.from_file(str(path))  # a copy, to add a special token to
    extra = next(t for t in ours.vocab.values() if len(t) > 3 and t.isalpha()).decode()
    tok = Tokenizer.load(path, special_tokens=[extra])
    text = f"x{extra}y {extra}"
    hf.add_special_tokens([extra])
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_family_streams_as_it_encodes(family):
    name, hf, ours = family
    specials = SPECIALS[name]
    text = (SAMPLES["mixed_web"] + specials[0] + SPECIMENS[1]) * 8 + specials[-1]
    chunks = [text[i : i + 7001] for i in range(0, len(text), 7001)]
    assert list(ours.encode_iterable(chunks)) == hf.encode(text, add_special_tokens=False).ids


def test_family_streams_a_bounded_tail_between_its_added_tokens(family):
    # Documents between added tokens: ids come out before the stream ends.
    name, hf, ours = family
    document = SAMPLES["english"][:30_000] + SPECIALS[name][-1]
    taken = []

    def chunks():
        for i in range(40):
            taken.append(i)
            yield document

    stream = ours.encode_iterable(chunks())
    first = next(stream)
    assert len(taken) < 10
    ids = [first, *stream]
    assert ids == hf.encode(document * 40, add_special_tokens=False).ids


# --------------------------------------------------------------- cut rules, end to end
# Where a family's text may be cut (``boundaries``): its pattern's rules, through the
# pipeline's normalizer (NFC: only between characters it leaves alone) and Splits
# (DeepSeek-V3's three); none for StarCoder's digits or BLOOM's regex. Each is checked end to
# end: a stream in small blocks, a file in chunks encoded by two workers, and the spans of a
# text in pieces give tokenizers' ids.
CUT_RULES = {
    "gpt2": "gpt2",
    "llama3": "llama3",
    "qwen2": "llama3 after NFC",  # hf_shapes' Qwen2 splits with Llama 3's regex
    "deepseek_v3": "deepseek_v3",
    "starcoder": "starcoder",
    "bloom": "specials only",
    # tiktoken's pattern run by Oniguruma is another pattern ("$" ends a line, "{1,3}+"
    # repeats): it is none of those with rules.
    "cl100k_in_json": "specials only",
}


def test_family_has_its_cut_rules(family):
    name, hf, ours = family
    assert ours.cut_rules.name == CUT_RULES[name]


def _cut_three_ways(hf, ours, text, tmp_path, monkeypatch, block=512):
    """The ids of ``text`` streamed in ``block``-character blocks from chunks of random
    sizes, encoded from a file by two workers in small chunks, and as the spans of pieces,
    against tokenizers'; returns the file's chunks."""
    expected = hf.encode_batch_fast([text], add_special_tokens=False)[0].ids
    assert ours.encode(text) == expected
    rng = random.Random(len(text))
    cuts = sorted(rng.randrange(len(text) + 1) for _ in range(len(text) // 300))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    monkeypatch.setattr(streaming, "STREAM_BLOCK", block)
    assert list(ours.encode_iterable(chunks)) == expected
    monkeypatch.setattr(encode_file_module, "MIN_CHUNK_BYTES", 8 * 1024)
    monkeypatch.setattr(encode_file_module, "PARALLEL_MIN_BYTES", 0)
    ranges: list[list[tuple[int, int]]] = []
    original = encode_file_module._ranges
    monkeypatch.setattr(
        encode_file_module, "_ranges", lambda *a: ranges.append(original(*a)) or ranges[-1]
    )
    path = tmp_path / "text.txt"
    path.write_text(text, encoding="utf-8", newline="")
    encode_file(ours, path, tmp_path / "ids.npy", workers=2)
    assert np.load(tmp_path / "ids.npy").tolist() == expected
    part = text[:40_000]
    spans = compute_spans(ours, part, piece=2048)
    assert spans is not None
    assert spans.ids.tolist() == hf.encode_batch_fast([part], add_special_tokens=False)[0].ids
    return ranges[0]


def test_family_streams_and_chunks_as_tokenizers(family, tmp_path, monkeypatch):
    name, hf, ours = family
    # One special token, in the middle: the other cuts come from the rules.
    text = "".join(SAMPLES.values()) + SPECIMENS[1] + SAMPLES["english"]
    for token in SPECIALS[name]:
        text = text.replace(token, " ")
    middle = len(text) // 2
    text = text[:middle] + SPECIALS[name][-1] + text[middle:]
    chunks = _cut_three_ways(hf, ours, text, tmp_path, monkeypatch)
    assert (len(chunks) > 2) == (CUT_RULES[name] != "specials only"), chunks


def test_family_streams_lazily_by_its_rules(family):
    # No added token in the text: a stream yields ids before its end only by the rules.
    name, hf, ours = family
    document = SAMPLES["english"][:20_000] + SAMPLES["chinese"][:5_000]
    for token in SPECIALS[name]:
        document = document.replace(token, " ")
    taken = []

    def chunks():
        for i in range(20):
            taken.append(i)
            yield document

    stream = ours.encode_iterable(chunks())
    first = next(stream)
    assert (len(taken) < 5) == (CUT_RULES[name] != "specials only"), len(taken)
    assert [first, *stream] == hf.encode(document * 20, add_special_tokens=False).ids


@pytest.fixture(scope="module")
def model_shaped(tmp_path_factory):
    """Llama 3's and Qwen2's shapes over GPT-2's vocabulary (``foreign_files``): Llama 3 with
    ignore_merges and its template, Qwen2 with its own regex (single digits) and NFC."""
    folder = tmp_path_factory.mktemp("models")
    out = {}
    for name, make in (("llama3", llama3_style), ("qwen2", qwen2_style)):
        path = make(folder / name)
        out[name] = tokenizers.Tokenizer.from_file(str(path)), Tokenizer.from_hf(path)
    assert out["llama3"][1].cut_rules.name == "llama3"
    assert out["qwen2"][1].cut_rules.name == "qwen2 after NFC"
    return out


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
def test_corpus_slices_stream_and_chunk_as_tokenizers(
    family, model_shaped, corpus, tmp_path, monkeypatch
):
    # 150 KB from the middle of each shared corpus, for every family and the model-shaped
    # files: the cut rules against real English, Chinese, code and web text.
    name, hf, ours = family
    with open(full_corpus(corpus), "rb") as f:
        f.seek(5_000_000 if corpus != "mixed_web.txt" else 2_000_000)
        text = f.read(150_000).decode("utf-8", errors="ignore")  # characters cut at the ends
    _cut_three_ways(hf, ours, text, tmp_path, monkeypatch, block=4096)
    if name in model_shaped:
        hf, ours = model_shaped[name]
        (tmp_path / "model").mkdir()
        _cut_three_ways(hf, ours, text, tmp_path / "model", monkeypatch, block=4096)


def _rewritten(hf: tokenizers.Tokenizer, path, change) -> tuple[tokenizers.Tokenizer, Tokenizer]:
    obj = json.loads(hf.to_str())
    change(obj)
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return tokenizers.Tokenizer.from_file(str(path)), Tokenizer.from_hf(path)


def test_added_tokens_decide_whether_a_pipeline_keeps_its_rules(
    tmp_path, tmp_path_factory, monkeypatch
):
    # Added tokens marked normalized under an empty normalizer (a Sequence of none) are
    # looked for in the text as it is: the rules hold, and text is cut before them too.
    # With NFC, a normalized added token is looked for in normalized text, where no cut in
    # the original text is known to fall outside it: special tokens only.
    def normalized(obj):
        obj["normalizer"] = {"type": "Sequence", "normalizers": []}
        for token in obj["added_tokens"]:
            token["normalized"] = True

    hf, ours = _rewritten(
        _family_files("deepseek_v3", tmp_path_factory)[0], tmp_path / "deepseek.json", normalized
    )
    assert ours.cut_rules.name == "deepseek_v3"
    text = SAMPLES["english"] + SPECIALS["deepseek_v3"][1] + SAMPLES["chinese"]
    assert len(_cut_three_ways(hf, ours, text, tmp_path, monkeypatch)) > 2

    def one_normalized(obj):
        obj["added_tokens"][-1]["normalized"] = True

    _, qwen = _rewritten(
        _family_files("qwen2", tmp_path_factory)[0], tmp_path / "qwen2.json", one_normalized
    )
    assert qwen.cut_rules.name == "specials only"
