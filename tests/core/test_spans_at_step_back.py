"""core.explain.spans_at_step, backward: a text's spans at step ``k`` split back from its spans at a
later step equal a fresh encode with the truncated tokenizer
(``compute_spans(tokenizer.truncated(k), text)``), span for span (ids, characters, partial flags),
at every step of a small run and at random steps from random later ones; on English, Chinese split
into bytes, emoji, runs of one letter and special tokens. Merges that make one token twice, and
texts that are not valid UTF-8, get no splitter."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from core_helpers import SLICES, SPAN_TEXT_IDS, SPAN_TEXTS, read_fixture
from hf_shapes import DEEPSEEK_V3, LLAMA3, splits_then_bytes, trained_bpe
from tokenizers import normalizers, pre_tokenizers

from bpe_studio.core import Tokenizer
from bpe_studio.core.explain.merge_tree import MergeTree
from bpe_studio.core.explain.span_arrays import compute_spans
from bpe_studio.core.explain.spans_at_step import (
    MergeIds,
    SpanSplitter,
    pretoken_starts,
    split_back,
    step_forward,
    token_sizes,
)


@pytest.fixture
def tokenizer(span_tokenizer):
    return span_tokenizer


def _same(a, b, where) -> None:
    for name in ("ids", "starts", "ends", "partial"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), (where, name)


@pytest.mark.slow
@pytest.mark.parametrize("text", SPAN_TEXTS, ids=SPAN_TEXT_IDS)
def test_every_step_split_back_from_the_whole_tokenizer_equals_a_fresh_encode(tokenizer, text):
    assert MergeTree.of(tokenizer).one_way
    n = len(tokenizer.merges)
    top = compute_spans(tokenizer, text)
    splitter = SpanSplitter.of(tokenizer, top, n)
    assert splitter is not None
    for k in range(n + 1):
        truncated = tokenizer.truncated(k)
        got = splitter.at(k, truncated)
        _same(got, compute_spans(truncated, text), k)
        assert got.tokenizer is truncated
        assert got.text == text


@pytest.mark.parametrize("text", SPAN_TEXTS, ids=SPAN_TEXT_IDS)
def test_split_back_from_any_later_step(tokenizer, text):
    tree = MergeTree.of(tokenizer)
    sizes = token_sizes(tokenizer)
    rng = random.Random(len(text))
    n = len(tokenizer.merges)
    for _ in range(25):
        k0, k1 = sorted(rng.randrange(n + 1) for _ in range(2))
        later = compute_spans(tokenizer.truncated(k1), text)
        earlier = tokenizer.truncated(k0)
        _same(split_back(later, tree, k0, earlier, sizes), compute_spans(earlier, text), (k0, k1))


def test_merges_making_one_token_twice_or_text_not_utf8_get_no_splitter(tokenizer):
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b"ab", 257: b"bc", 258: b"abc"})
    # "abc" is made by (ab, c) and by (a, bc): in an encoding it could be either's.
    twice = Tokenizer(vocab, [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")])
    assert not MergeTree.of(twice).one_way
    assert SpanSplitter.of(twice, compute_spans(twice, "abc"), 4) is None
    lone = compute_spans(tokenizer, "a\ud800b")
    assert SpanSplitter.of(tokenizer, lone, len(tokenizer.merges)) is None
    splitter = SpanSplitter.of(tokenizer, compute_spans(tokenizer, "abc"), len(tokenizer.merges))
    with pytest.raises(ValueError, match="k = -1"):
        splitter.at(-1, tokenizer)


def test_spans_of_another_text_are_refused(tokenizer):
    tree = MergeTree.of(tokenizer)
    spans = compute_spans(tokenizer, "hello there")
    wrong = compute_spans(tokenizer, "hello there, and more")
    # The tokens of one text with the other's characters: caught, not mapped wrongly.
    mixed = dataclasses.replace(spans, text=wrong.text)
    with pytest.raises(ValueError, match="not the text's"):
        split_back(mixed, tree, 3, tokenizer.truncated(3), token_sizes(tokenizer))


# tokenizer.json pipelines that change the text before splitting it, and one that does not.
PIPELINES = {
    "nfkc_lowercase": (
        lambda: normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]),
        lambda: pre_tokenizers.ByteLevel(add_prefix_space=False),
    ),
    "prefix_space": (lambda: None, lambda: pre_tokenizers.ByteLevel(add_prefix_space=True)),
    "nfc": (normalizers.NFC, lambda: splits_then_bytes(LLAMA3)),
    "three_splits": (lambda: None, lambda: splits_then_bytes(*DEEPSEEK_V3)),
}
# "ﬁ" loses a byte under NFKC and "İ" gains one when lowercased: the lengths agree.
PIPELINE_TEXTS = ["the ﬁle İs here", "Hello world", "cafe\u0301 café 12345 don't"]


@pytest.fixture(scope="module", params=sorted(PIPELINES))
def pipeline_tokenizer(request, tmp_path_factory):
    normalizer, pre_tokenizer = (make() for make in PIPELINES[request.param])
    texts = [read_fixture(SLICES[k])[:20_000] for k in ("english", "chinese", "code")]
    hf = trained_bpe(normalizer, pre_tokenizer, [*texts, *PIPELINE_TEXTS], 600)
    path = tmp_path_factory.mktemp(request.param) / "tokenizer.json"
    hf.save(str(path))
    return Tokenizer.from_hf(path), hf


@pytest.mark.parametrize("text", PIPELINE_TEXTS)
def test_a_pipeline_that_changes_the_text_is_never_moved_by_the_texts_bytes(
    pipeline_tokenizer, text
):
    """An audit: the editor drew "the ﬁle İs" under an NFKC + Lowercase file as 'the', ' ﬁl',
    'e ', ... (split back by byte lengths the normalized text does not have), and showed no
    tokens at all ("split_back: the tokens' bytes are not the text's") for a prefix space,
    NFC of decomposed text or stripping added tokens. Whatever moves a text's spans between
    steps must give a fresh encode's spans at that step, or decline (a fresh encode then)."""
    tok, hf = pipeline_tokenizer
    top = compute_spans(tok, text)
    assert top.ids.tolist() == hf.encode(text, add_special_tokens=False).ids
    n = len(tok.merges)
    splitter = SpanSplitter.of(tok, top, n)
    starts = pretoken_starts(tok, text)
    merges = MergeIds.of(tok)
    for k in range(0, n + 1, 7):
        fresh = compute_spans(tok.truncated(k), text)
        if splitter is not None:
            _same(splitter.at(k, tok.truncated(k)), fresh, k)
        if starts is not None and merges is not None and k:
            before = compute_spans(tok.truncated(k - 7), text)
            moved = step_forward(before, merges, k - 7, k, tok.truncated(k), starts)
            _same(moved, fresh, (k - 7, k))


def test_a_tokenizer_that_looks_pre_tokens_up_whole_is_not_split_back(tmp_path):
    """A review: under ignore_merges "abc" is looked up whole (258) although merging its
    bytes makes "a" + "bc"; split back by the merge tree it became "ab" + "c" at step 2,
    where a fresh encode with the first two merges gives "a" + "bc"."""
    import json

    vocab = {i: bytes([i]) for i in range(256)} | {256: b"bc", 257: b"ab", 258: b"abc"}
    Tokenizer(vocab, [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]).save(tmp_path, format="hf")
    path = tmp_path / "tokenizer.json"
    obj = json.loads(path.read_text(encoding="utf-8"))
    obj["model"]["ignore_merges"] = True
    path.write_text(json.dumps(obj), encoding="utf-8")
    tok = Tokenizer.from_hf(path)
    text = "abc abc"
    top = compute_spans(tok, text)
    assert top.ids.tolist()[0] == 258
    splitter = SpanSplitter.of(tok, top, 3)
    starts, merges = pretoken_starts(tok, text), MergeIds.of(tok)
    for k in range(4):
        fresh = compute_spans(tok.truncated(k), text)
        if splitter is not None:
            _same(splitter.at(k, tok.truncated(k)), fresh, k)
        if starts is not None and merges is not None and k:
            before = compute_spans(tok.truncated(k - 1), text)
            _same(step_forward(before, merges, k - 1, k, tok.truncated(k), starts), fresh, k)


@pytest.mark.parametrize("family", ["deepseek_v3", "starcoder"])
def test_a_pipeline_that_only_cuts_the_text_gives_its_own_pieces_starts(family, tmp_path):
    """A review: every tokenizer.json pipeline was sent to a fresh encode at each step, the
    ones that only cut the text too (a second for a forward move over 1 MB of code, where
    moving the spans forward takes milliseconds). Their pieces' starts are the pipeline's
    own (oracle: ``tokenizers``' pre-tokenizer), and moving forward gives a fresh encode."""
    from hf_shapes import FAMILIES

    normalizer, pre_tokenizer = FAMILIES[family]
    code = read_fixture(SLICES["code"])[:20_000]
    hf = trained_bpe(normalizer, pre_tokenizer, [code, read_fixture(SLICES["english"])], 700)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = Tokenizer.from_hf(path)
    assert tok.hf_pipeline is not None
    text = code[:3000] + " 1234567 don't\n\n  x"
    starts = pretoken_starts(tok, text)
    assert starts is not None
    pieces = hf.pre_tokenizer.pre_tokenize_str(text)
    assert starts.tolist() == sorted({start for _, (start, _) in pieces})
    merges, n = MergeIds.of(tok), len(tok.merges)
    for k in range(0, n - 40, 97):
        before = compute_spans(tok.truncated(k), text)
        moved = step_forward(before, merges, k, k + 40, tok.truncated(k + 40), starts)
        _same(moved, compute_spans(tok.truncated(k + 40), text), k)


@pytest.mark.parametrize("text", SPAN_TEXTS, ids=SPAN_TEXT_IDS)
def test_a_splitter_counts_the_tokens_at_each_step_without_splitting(tokenizer, text):
    """``tokens_at(k)`` is the length of ``at(k)``, known before the split (the app splits a
    long text back on the GUI thread only when that is little work)."""
    n = len(tokenizer.merges)
    splitter = SpanSplitter.of(tokenizer, compute_spans(tokenizer, text), n)
    assert splitter is not None
    for k in sorted({0, 1, 57, n // 2, n - 1, n}):
        assert splitter.tokens_at(k) == len(splitter.at(k, tokenizer.truncated(k)).ids), k
