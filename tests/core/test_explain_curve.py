"""CompressionCurve: after the first k merges of a run its count equals the length of the
slow reference encoding with those k merges, and ``len(tokenizer.truncated(k).encode(text))``."""

from __future__ import annotations

import pytest
from core_helpers import EOT, slice_head
from hypothesis import given
from hypothesis import strategies as st
from test_explain import DOUBLE, GPT2_SAMPLE, random_text, ref_encode
from text_strategies import HYPO

from bpe_studio.core import BpeTrainer, CompressionCurve, MergeStep, Tokenizer, count_text

SPECIALS = [EOT, DOUBLE]


def run(text: str, vocab_size: int, specials: list[str]) -> tuple[list[MergeStep], Tokenizer]:
    trainer = BpeTrainer(count_text(text, specials), vocab_size, specials)
    steps = list(trainer)
    return steps, Tokenizer(trainer.vocab, trainer.merges, specials)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_curve_equals_truncated_encode_at_every_merge(seed):
    text = random_text(seed, 3000)
    steps, tok = run(text, 600, SPECIALS)
    held_out = random_text(seed + 100, 500) + DOUBLE + EOT
    texts = [text, held_out, EOT, ""]
    curves = [CompressionCurve(t, SPECIALS) for t in texts]
    assert [c.bytes for c in curves] == [len(t.encode()) for t in texts]
    checkpoints = {0, 1, 2, 10, len(steps) // 2, len(steps)}
    for k in range(len(steps) + 1):
        if k:
            counts = [c.apply(steps[k - 1]) for c in curves]
            assert counts == [c.tokens for c in curves]
        assert all(c.applied == k for c in curves)
        short = tok.truncated(k)
        assert curves[1].tokens == len(short.encode(held_out))
        assert curves[2].tokens == 1 and curves[3].tokens == 0
        if k in checkpoints:
            assert curves[0].tokens == len(short.encode(text))
            assert curves[0].tokens == len(ref_encode(text, tok.vocab, tok.merges[:k], SPECIALS))
            assert curves[1].tokens == len(
                ref_encode(held_out, tok.vocab, tok.merges[:k], SPECIALS)
            )


@pytest.mark.parametrize("k", [0, 1, 100, 10_000, 25_000, 50_000])
def test_curve_with_gpt2_merges(gpt2_tokenizer, k):
    # GPT-2's merge list is monotone (each merge ranks after those that made its parts), so
    # applying its merges one by one gives the rank-based encoder's counts.
    tok = gpt2_tokenizer
    text = GPT2_SAMPLE + slice_head("mixed_web", 20_000) + slice_head("chinese", 5_000)
    curve = CompressionCurve(text, [EOT])
    steps = (MergeStep(r, a, b, -1, 0) for r, (a, b) in enumerate(tok.merges[:k]))
    assert curve.extend(steps) == curve.tokens == len(tok.truncated(k).encode(text))
    if k <= 1000:
        assert curve.tokens == len(ref_encode(text, tok.vocab, tok.merges[:k], [EOT]))


TEXT = st.lists(
    st.sampled_from(["a", "b", "ab", " a", " b", "aa", "é", "中", "😀", " ", "\n", EOT, DOUBLE]),
    max_size=60,
).map("".join)


@HYPO
@given(text=TEXT, held_out=TEXT)
def test_curve_random_texts(text, held_out):
    steps, tok = run(text, 300, SPECIALS)
    curves = [CompressionCurve(text, SPECIALS), CompressionCurve(held_out, SPECIALS)]
    for k in range(len(steps) + 1):
        if k:
            for c in curves:
                c.apply(steps[k - 1])
        for c, t in zip(curves, (text, held_out)):
            assert c.tokens == len(ref_encode(t, tok.vocab, tok.merges[:k], SPECIALS))


def test_curve_counts_special_tokens_longest_first():
    curve = CompressionCurve(f"x{DOUBLE}{EOT}y{EOT}{EOT}{EOT}", SPECIALS)
    # x, EOT EOT (one token), EOT, y, EOT EOT (one), EOT
    assert curve.tokens == 6
    assert CompressionCurve(f"x{DOUBLE}", [EOT]).tokens == 3


def test_curve_merges_out_of_order():
    curve = CompressionCurve("abc abc")
    with pytest.raises(ValueError, match=r"merge 0 \(b'ab', b'c'\).*b'ab'"):
        curve.apply(MergeStep(0, b"ab", b"c", 257, 2))
    assert curve.tokens == 7 and curve.applied == 0
    assert curve.apply(MergeStep(0, b"a", b"b", 256, 2)) == 5
    assert curve.apply(MergeStep(1, b"x", b"y", 257, 0)) == 5  # a pair the text lacks
    assert curve.apply(MergeStep(2, b"ab", b"c", 258, 2)) == 3


@pytest.mark.parametrize("text", ["a\ud800b", "x\ud83d\ude00y \udfff", "\ud800<|endoftext|>\udc00"])
def test_curve_counts_surrogates_as_the_encoder_does(gpt2_tokenizer, text):
    # A lone surrogate is U+FFFD to the encoder, a surrogate pair the character it encodes.
    for k in (0, 300, len(gpt2_tokenizer.merges)):
        tok = gpt2_tokenizer.truncated(k)
        curve = CompressionCurve(text, [EOT])
        for rank, (left, right) in enumerate(gpt2_tokenizer.merges[:k]):
            curve.apply(MergeStep(rank, left, right, 0, 0))
        assert curve.tokens == len(tok.encode(text))
