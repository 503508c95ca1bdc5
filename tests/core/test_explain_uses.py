"""merges_using and pretokens against slow references written here: the merge list walked as
bytes (first occurrence of each pair) for what a token grew into, GPT-2's published pattern
after special tokens are cut out leftmost-longest for the pieces (``core.reference``)."""

from __future__ import annotations

import random

import pytest
import regex
from core_helpers import EOT, write_text
from hf_shapes import flagged_file

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.core.explain.encode_steps import encode_steps, pretokens
from bpe_studio.core.explain.merge_tree import MergeUse, merges_using
from bpe_studio.core.reference import GPT2_SPLIT_PATTERN, split_on_specials

SPLIT = regex.compile(GPT2_SPLIT_PATTERN)
WORDS = ["the", " cat", " sat", " on", " mat", " 中文", "你好", " 😀", "👍🏽", " naïve", "!", "\n"]


def ref_uses(tok: Tokenizer, token_id: int) -> list[tuple[int, int, int, int]]:
    """(rank, left id, right id, new id) of each merge using ``token_id``, from the merge
    list as bytes; a pair seen before is skipped (its first merge is the one applied)."""
    ids: dict[bytes, int] = {}
    for i in sorted(tok.vocab):
        ids.setdefault(tok.vocab[i], i)
    seen: set[tuple[bytes, bytes]] = set()
    out = []
    for rank, (a, b) in enumerate(tok.merges):
        if (a, b) in seen:
            continue
        seen.add((a, b))
        if token_id in (ids[a], ids[b]):
            out.append((rank, ids[a], ids[b], ids[a + b]))
    return out


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    rng = random.Random(7)
    text = "".join(rng.choice(WORDS) + (EOT if rng.random() < 0.02 else "") for _ in range(4000))
    path = write_text(tmp_path_factory.mktemp("uses") / "corpus.txt", text)
    vocab, merges = train_bpe(path, 500, [EOT])
    return Tokenizer(vocab, merges, [EOT])


def test_merges_using_every_token_of_a_trained_tokenizer(small):
    for token_id in small.vocab:
        uses = merges_using(small, token_id)
        assert [tuple(u) for u in uses] == ref_uses(small, token_id), token_id
        assert all(isinstance(u, MergeUse) for u in uses)


def test_merges_using_gpt2(gpt2_tokenizer):
    ids = {t: i for i, t in gpt2_tokenizer.vocab.items()}
    for token in [b" the", b"\xc4", b"ing", b" University", b"e", b"<|endoftext|>"]:
        token_id = ids[token]
        assert [tuple(u) for u in merges_using(gpt2_tokenizer, token_id)] == ref_uses(
            gpt2_tokenizer, token_id
        )
    assert merges_using(gpt2_tokenizer, ids[b"<|endoftext|>"]) == []
    assert len(merges_using(gpt2_tokenizer, ids[b"e"])) > 100


def test_merges_using_a_self_pair():
    # (A repeated pair, which this test also had, is refused by the constructor.)
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"aa", 257: b"aaa"}
    tok = Tokenizer(vocab, [(b"a", b"a"), (b"aa", b"a")])
    assert [tuple(u) for u in merges_using(tok, 97)] == [(0, 97, 97, 256), (1, 256, 97, 257)]


def test_merges_using_unknown_id(gpt2_tokenizer):
    with pytest.raises(ValueError, match="99999999"):
        merges_using(gpt2_tokenizer, 99_999_999)
    with pytest.raises(TypeError):
        merges_using(gpt2_tokenizer, "1")  # type: ignore[arg-type]


TEXTS = [
    "Hello world! It's 2024; we'll see.",
    f"中文分词测试，日本語のテキスト。{EOT}👩‍👩‍👧 👍🏽 🇫🇷 emoji\n\n  indented\tx",
    f"{EOT}{EOT}naïve café   \u3000 end{EOT}",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_pretokens_against_the_published_pattern(gpt2_tokenizer, text):
    expected: list[str] = []
    pieces = split_on_specials(text, [EOT])
    for i, piece in enumerate(pieces):
        expected += SPLIT.findall(piece)
        if i + 1 < len(pieces):
            expected.append(EOT)
    got = pretokens(gpt2_tokenizer, text)
    assert got == expected
    assert "".join(got) == text
    joined = [t for p in got for t in gpt2_tokenizer.encode(p)]
    assert joined == gpt2_tokenizer.encode(text)


# (text, its pieces) in a file with the single_word "word" and the lstrip "<tool>".
FLAGGED_PIECES = [
    (" swords", [" swords"]),  # "word" inside a word is no added token
    ("  <tool>", ["<tool>"]),  # the spaces before it are taken with it
    ("a word, <tool>x", ["a", " ", "word", ",", "<tool>", "x"]),
]


@pytest.mark.parametrize(("text", "expected"), FLAGGED_PIECES)
def test_pretokens_cut_flagged_added_tokens_as_encoding_does(tmp_path, text, expected):
    # Found by an audit: Step-through cut " swords" into " s" | "word" | "s" and "  <tool>"
    # into "  " | "<tool>", its steps ending on other ids than encode's.
    import tokenizers

    path = flagged_file(tmp_path)
    tok = Tokenizer.from_hf(path)
    assert pretokens(tok, text) == expected
    joined = [t for p in expected for t in encode_steps(tok, p)[-1].tokens]
    hf = tokenizers.Tokenizer.from_file(path).encode(text, add_special_tokens=False).ids
    assert joined == tok.encode(text) == hf
