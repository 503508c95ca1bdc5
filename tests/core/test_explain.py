"""Tokenizer.truncated, merge_tree, encode_steps and unreachable_tokens against slow references
written here: rank-based BPE one pair at a time over the merge list as bytes, GPT-2's published
pattern, special tokens cut out leftmost-longest (``core.reference``, which imports nothing from
bpe_studio)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import regex
from core_helpers import (
    EOT,
    FIXTURES,
    SLICES,
    in_no_text,
    read_fixture,
    slice_head,
    write_text,
)
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import HYPO

from bpe_studio.core import (
    EncodeStep,
    MergeNode,
    Tokenizer,
    encode_steps,
    merge_tree,
    train_bpe,
    unreachable_tokens,
)
from bpe_studio.core.explain import reach
from bpe_studio.core.formats import TokenizerData
from bpe_studio.core.reference import GPT2_SPLIT_PATTERN, reference_encode_piece, split_on_specials

SPLIT = regex.compile(GPT2_SPLIT_PATTERN)
DOUBLE = EOT + EOT

# Assigned characters only: Latin, Chinese, emoji (with a modifier and a joiner sequence),
# digits, punctuation, whitespace.
WORDS = [
    "the", "cat", "sat", "on", "mat", "hello", "world", "don't", "we'll", "HTTP", "42", "3.14",
    "中文", "日本語", "字", "你好", "世界", "😀", "👍🏽", "👩‍👩‍👧", "🇫🇷", "é", "naïve", "!", "?!",
    "...", "(x)", "\n", "\n\n", "  ", "\t", "\u3000",
]  # fmt: skip


def random_text(seed: int, words: int, special_every: int = 40) -> str:
    rng = random.Random(seed)
    parts = []
    for _ in range(words):
        r = rng.random()
        if r < 1 / special_every:
            parts.append(rng.choice([EOT, DOUBLE]))
        elif r < 0.5:
            # Made-up words, so that pairs repeat in many contexts.
            letters = [rng.choice("abcdeé中文😀") for _ in range(rng.randint(1, 7))]
            parts.append(" " + "".join(letters))
        else:
            parts.append(rng.choice(["", " "]) + rng.choice(WORDS))
    return "".join(parts)


# ------------------------------------------------------------------ reference
def first_ranks(merges: list[tuple[bytes, bytes]]) -> dict[tuple[bytes, bytes], int]:
    """Pair -> rank of its first occurrence in the merge list."""
    ranks: dict[tuple[bytes, bytes], int] = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(pair, rank)
    return ranks


def token_ids(vocab: dict[int, bytes]) -> dict[bytes, int]:
    """Bytes -> id; the smallest id when two ids hold the same bytes."""
    ids: dict[bytes, int] = {}
    for i in sorted(vocab):
        ids.setdefault(vocab[i], i)
    return ids


def ref_encode(
    text: str, vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]], specials: list[str]
) -> list[int]:
    ranks, ids = first_ranks(merges), token_ids(vocab)
    out: list[int] = []
    pos = 0
    pieces = split_on_specials(text, specials)
    for i, piece in enumerate(pieces):
        for pre in SPLIT.findall(piece):
            out += [ids[t] for t in reference_encode_piece(pre.encode(), ranks)]
        pos += len(piece)
        if i + 1 < len(pieces):
            # The special token cut out here is the longest one starting at pos.
            special = max((s for s in specials if text.startswith(s, pos)), key=len)
            out.append(ids[special.encode()])
            pos += len(special)
    return out


# ------------------------------------------------------------------ fixtures
def train(tmp_path: Path, text: str, vocab_size: int, specials: list[str]) -> Tokenizer:
    path = write_text(tmp_path / f"corpus_{vocab_size}.txt", text)
    vocab, merges = train_bpe(path, vocab_size, specials)
    return Tokenizer(vocab, merges, specials)


@pytest.fixture(scope="module", params=[1, 2, 3])
def trained_run(request, tmp_path_factory):
    """A random corpus and the tokenizer trained on it, with two special tokens."""
    seed = request.param
    text = random_text(seed, 3000)
    specials = [EOT, DOUBLE]
    tmp = tmp_path_factory.mktemp(f"run{seed}")
    tok = train(tmp, text, 600, specials)
    return tmp, text, specials, tok


GPT2_SAMPLE = (
    "Hello world! It's 2024; we'll see. 中文分词测试，日本語のテキスト。 👩‍👩‍👧 👍🏽 🇫🇷 emoji\n\n"
    f"  indented\tcode = x[1:3]{EOT}naïve café   \u3000 end{EOT}{EOT}"
)


# ------------------------------------------------------------------ truncated
def test_truncated_equals_training_stopped_after_k_merges(trained_run):
    tmp, text, specials, tok = trained_run
    held_out = random_text(99, 400)
    n = len(tok.merges)
    assert n == 600 - 256 - 2
    for k in (0, 1, 2, 17, n // 2, n - 1, n):
        short = tok.truncated(k)
        stopped = train(tmp, text, 256 + len(specials) + k, specials)
        assert short.vocab == stopped.vocab
        assert short.merges == stopped.merges == tok.merges[:k]
        assert short.special_tokens == specials
        for sample in (held_out, text[:3000]):
            expected = ref_encode(sample, stopped.vocab, stopped.merges, specials)
            assert short.encode(sample) == expected
            assert stopped.encode(sample) == expected
        assert [short.merge_rank(i) for i in short.vocab] == [
            tok.merge_rank(i) for i in short.vocab
        ]


@pytest.mark.parametrize("k", [0, 1, 300, 25_000, 49_999, 50_000])
def test_truncated_gpt2(gpt2_tokenizer, k):
    tok = gpt2_tokenizer
    short = tok.truncated(k)
    ids = token_ids(tok.vocab)
    kept = set(range(256)) | {tok.special_id(EOT)} | {ids[a + b] for a, b in tok.merges[:k]}
    assert {ids[bytes([b])] for b in range(256)} == set(range(256))  # GPT-2's byte ids
    assert set(short.vocab) == kept
    assert all(short.vocab[i] == tok.vocab[i] for i in kept)
    assert short.encode(GPT2_SAMPLE) == ref_encode(GPT2_SAMPLE, tok.vocab, tok.merges[:k], [EOT])
    assert short.decode(short.encode(GPT2_SAMPLE)) == GPT2_SAMPLE
    assert short.special_id(EOT) == 50256


def test_truncated_full_length_encodes_as_the_parent(gpt2_tokenizer, tiktoken_gpt2):
    text = slice_head("mixed_web", 40_000)
    assert gpt2_tokenizer.truncated(50_000).encode(text) == tiktoken_gpt2.encode(
        text, allowed_special="all"
    )


def test_truncated_shares_no_cache_with_its_parent(gpt2_tokenizer):
    # Every path that caches: encode, encode_array, spans, and the batch merger (a text with
    # more than BATCH_BUILD_MIN distinct pre-tokens). Each tokenizer is used with the other's
    # cache already warm.
    text = slice_head("chinese", 60_000) + slice_head("english", 30_000)
    parent = Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges, [EOT])
    full = parent.encode(text)
    for k in (0, 5_000):
        short = parent.truncated(k)
        stopped = Tokenizer(short.vocab, short.merges, [EOT])  # built from scratch
        expected = stopped.encode(text)
        assert short.encode(text) == expected
        assert short.encode_array(text).tolist() == expected
        assert [s.id for s in short.spans(text[:5000])] == stopped.encode(text[:5000])
        assert parent.encode(text) == full
        assert parent.encode_array(text).tolist() == full
        assert short.encode(text) == expected
        assert short.truncated(k).encode(text) == expected
    assert len(full) < len(expected)


def test_truncated_does_not_take_over_a_built_batch_merger(chinese_code_tokenizer):
    text = slice_head("chinese", 120_000).replace(EOT, "")
    parent = Tokenizer(chinese_code_tokenizer.vocab, chinese_code_tokenizer.merges, [EOT])
    # The Python path's tables only (the public prepare_bulk loads the kernels too).
    parent._encoder.prepare_bulk()
    assert parent.merger._batch_state == "built"
    short = parent.truncated(200)
    assert short.encode(text) == Tokenizer(short.vocab, short.merges, [EOT]).encode(text)
    assert short.merger._batch is not None and short.merger._batch is not parent.merger._batch


def test_truncated_batch_merger_is_built_from_the_first_k_merges(chinese_code_tokenizer):
    text = slice_head("chinese", 120_000).replace(EOT, "")
    assert len(set(SPLIT.findall(text))) > 2000  # the batch merger gets built
    for k in (100, 1500):
        short = chinese_code_tokenizer.truncated(k)
        got = short.encode(text)
        assert short.merger._batch_state == "built"
        sample = text[:4000]
        assert short.encode(sample) == ref_encode(sample, short.vocab, short.merges, [EOT])
        assert got == Tokenizer(short.vocab, short.merges, [EOT]).encode(text)


def test_truncated_rejects_bad_k(gpt2_tokenizer):
    for bad in (-1, 50_001, 10**12):
        with pytest.raises(ValueError, match=rf"k = {bad}\b.*0 <= k <= 50000"):
            gpt2_tokenizer.truncated(bad)
    for bad in (True, 1.0, "3", None):
        with pytest.raises(TypeError, match="k must be an int"):
            gpt2_tokenizer.truncated(bad)
    assert gpt2_tokenizer.truncated(np.int64(3)).merges == gpt2_tokenizer.merges[:3]


def test_truncated_keeps_duplicate_merges_and_their_tokens():
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b"ab", 257: b"abc", 258: b"bc", 259: b"zz", 260: b"<s>"})
    # "abc" made twice, by two different pairs; "zz" made by no merge. (A repeated pair is
    # refused by the constructor.)
    merges = [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b"a", b"bc")]
    tok = Tokenizer(vocab, merges, ["<s>"])
    for k in range(len(merges) + 1):
        short = tok.truncated(k)
        made = {token_ids(vocab)[a + b] for a, b in merges[:k]}
        assert set(short.vocab) == set(range(256)) | made | {260}
        for text in ("abc", "abcbc", "xbcab", "aabbcc", "zz<s>ab"):
            assert short.encode(text) == ref_encode(text, vocab, merges[:k], ["<s>"])


@pytest.mark.parametrize("source", ["gpt2", "cl100k_base", "llama3"])
def test_truncated_without_special_tokens_keeps_their_entries(source, tmp_path):
    """A review: a truncation of a tokenizer opened with ``no_specials`` dropped the special
    tokens' entries (GPT-2's 50256, Llama 3's ``<|begin_of_text|>``), which the tokenizer it
    came from holds as vocabulary entries: its own template's id would not decode. It keeps
    them, with their ids, and reads them as text as its parent does."""
    from foreign_files import llama3_style

    from bpe_studio.core.encode.foreign import open_tokenizer

    named = str(llama3_style(tmp_path)) if source == "llama3" else source
    bare, marked = open_tokenizer(named, no_specials=True), open_tokenizer(named)
    assert isinstance(bare, Tokenizer) and not bare.special_tokens
    entries = {marked.special_id(t): t.encode() for t in marked.special_tokens}
    text = f"a{EOT}b {EOT}{EOT} <|fim_prefix|><|begin_of_text|>x"
    n = len(bare.merges)
    assert bare.truncated(n).vocab == bare.vocab
    for k in (0, 1000, n // 2, n):
        short = bare.truncated(k)
        assert not short.special_tokens
        assert {i: short.vocab.get(i) for i in entries} == entries
        assert short.encode(text) == marked.truncated(k).encode_ordinary(text)
        assert short.decode(short.encode(text, add_special_tokens=True)).endswith(text)
        assert short.max_token_value == bare.max_token_value


def test_merge_tree_of_a_token_made_twice():
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b"ab", 257: b"abc", 258: b"bc"})
    merges = [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b"a", b"bc")]
    tok = Tokenizer(vocab, merges)
    for token_id in vocab:
        check_tree(tok, token_id, set())
    node = merge_tree(tok, 257)  # the first merge making "abc" is (ab, c)
    assert (node.rank, node.left.token, node.right.token) == (1, b"ab", b"c")


# ------------------------------------------------------------------ merge_tree
def ref_rank(tok: Tokenizer, token: bytes) -> int | None:
    """The first merge whose two parts join to ``token``."""
    return next((r for r, (a, b) in enumerate(tok.merges) if a + b == token), None)


def check_tree(tok: Tokenizer, token_id: int, specials: set[int]) -> None:
    node = merge_tree(tok, token_id)
    assert isinstance(node, MergeNode)
    assert (node.id, node.token) == (token_id, tok.vocab[token_id])
    leaves: list[bytes] = []
    stack = [node]
    while stack:
        n = stack.pop()
        assert n.token == tok.vocab[n.id]
        if n.rank is None:
            assert n.left is None and n.right is None
            assert len(n.token) == 1 or n.id in specials
            leaves.append(n.token)
        else:
            assert n.left is not None and n.right is not None
            assert tok.merges[n.rank] == (n.left.token, n.right.token)
            stack += [n.right, n.left]  # left popped first: leaves come out in order
    assert b"".join(leaves) == tok.vocab[token_id]


def test_merge_tree_every_token_of_a_trained_tokenizer(trained_run):
    _, _, _, tok = trained_run
    specials = {tok.special_id(s) for s in tok.special_tokens}
    for token_id in tok.vocab:
        check_tree(tok, token_id, specials)
        node = merge_tree(tok, token_id)
        expected = ref_rank(tok, tok.vocab[token_id]) if token_id not in specials else None
        assert node.rank == expected


def test_merge_tree_every_gpt2_token(gpt2_tokenizer):
    tok = gpt2_tokenizer
    specials = {tok.special_id(EOT)}
    for token_id in tok.vocab:
        check_tree(tok, token_id, specials)
    # Ranks against a slow search of the merge list, for a sample (GPT-2's ids are not in
    # merge order).
    by_token = {a + b: r for r, (a, b) in reversed(list(enumerate(tok.merges)))}
    rng = random.Random(5)
    for token_id in rng.sample(sorted(tok.vocab), 2000):
        token = tok.vocab[token_id]
        expected = None if token_id in specials or len(token) == 1 else by_token[token]
        assert merge_tree(tok, token_id).rank == expected
    tree = merge_tree(tok, tok.encode(" unbelievable")[0])
    assert tree.token == b" unbelievable" and tree.rank is not None


def test_merge_tree_special_tokens_are_leaves(gpt2_tokenizer):
    node = merge_tree(gpt2_tokenizer, 50256)
    assert node == MergeNode(50256, EOT.encode(), None, None, None)


def test_merge_tree_unknown_id(gpt2_tokenizer):
    for bad in (-1, 50257, 10**9):
        with pytest.raises(ValueError, match=rf"unknown token id {bad}\b"):
            merge_tree(gpt2_tokenizer, bad)
    with pytest.raises(TypeError):
        merge_tree(gpt2_tokenizer, True)
    a = gpt2_tokenizer.encode("a")[0]
    assert merge_tree(gpt2_tokenizer, np.int64(a)) == MergeNode(a, b"a", None, None, None)


def test_merge_tree_deeper_than_the_recursion_limit():
    depth = 3000
    vocab = {i: bytes([i]) for i in range(256)}
    merges = []
    for n in range(2, depth + 2):
        vocab[254 + n] = b"a" * n
        merges.append((b"a" * (n - 1), b"a"))
    tok = Tokenizer(vocab, merges)
    node = merge_tree(tok, 254 + depth + 1)
    for _ in range(depth):
        assert node.right.token == b"a"
        node = node.left
    assert node.token == b"a" and node.rank is None


# ------------------------------------------------------------------ encode_steps
def check_steps(tok: Tokenizer, piece: str | bytes) -> list[EncodeStep]:
    data = piece.encode() if isinstance(piece, str) else piece
    ranks, ids = first_ranks(tok.merges), token_ids(tok.vocab)
    steps = encode_steps(tok, piece)
    # The reference: a list of byte strings, every pair looked up by its bytes.
    word = [bytes([b]) for b in data]
    for n, step in enumerate(steps):
        assert step.tokens == tuple(ids[t] for t in word)
        found = [(i, ranks[p]) for i, p in enumerate(zip(word, word[1:])) if p in ranks]
        assert list(step.candidates) == found
        if not found:
            assert step.chosen is None and n == len(steps) - 1
            break
        low = min(r for _, r in found)
        i = min(i for i, r in found if r == low)  # leftmost of the lowest rank
        assert step.chosen == i
        word[i : i + 2] = [word[i] + word[i + 1]]
    assert list(steps[-1].tokens) == [ids[t] for t in reference_encode_piece(data, ranks)]
    if isinstance(piece, str) and SPLIT.findall(piece) == [piece]:
        assert list(steps[-1].tokens) == tok.encode(piece)
    return steps


PIECES = st.lists(
    st.sampled_from(["a", "b", "c", "e", "é", "中", "文", "😀", "🏽", "\u200d", " ", "'"]),
    min_size=0,
    max_size=24,
).map("".join)


@HYPO
@given(piece=PIECES)
def test_encode_steps_trained(trained_run, piece):
    check_steps(trained_run[3], piece)


@HYPO
@given(piece=PIECES)
def test_encode_steps_gpt2(gpt2_tokenizer, piece):
    check_steps(gpt2_tokenizer, piece)


@pytest.mark.parametrize(
    "piece",
    [" unbelievable", "中文分词", "日本語", " 👩‍👩‍👧", "👍🏽", "🇫🇷", " " + "a" * 24, "\n\n", "'ll"],
)
def test_encode_steps_gpt2_pieces(gpt2_tokenizer, piece):
    steps = check_steps(gpt2_tokenizer, piece)
    assert len(steps) == len(piece.encode()) - len(steps[-1].tokens) + 1


def test_encode_steps_bytes_special_and_empty(gpt2_tokenizer):
    check_steps(gpt2_tokenizer, "中".encode()[:2])  # a partial character
    check_steps(gpt2_tokenizer, b"\xff\xfe")
    assert encode_steps(gpt2_tokenizer, EOT) == [EncodeStep((50256,), (), None)]
    assert encode_steps(gpt2_tokenizer, "") == [EncodeStep((), (), None)]
    with pytest.raises(TypeError, match="str or bytes"):
        encode_steps(gpt2_tokenizer, 5)


def ignore_merges_tokenizer(ignore_merges: bool) -> Tokenizer:
    """``abc`` is a token its bytes never merge into (``b c`` ranks first, then ``a`` and
    ``bc`` have no merge); ``ab`` is one they do."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"bc", 257: b"ab", 258: b"abc"}
    merges = [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]
    data = TokenizerData(vocab, merges, {}, "gpt2", ignore_merges=ignore_merges)
    return Tokenizer.from_data(data)


def test_encode_steps_a_piece_found_whole_under_ignore_merges():
    """A real-display audit: with Llama 3's ignore_merges the editor showed one id for a
    pre-token that is a vocabulary token, and the step-through merged its bytes into others,
    calling them what the encoder gives."""
    tok = ignore_merges_tokenizer(True)
    assert tok.encode("abc") == [258]
    for piece in ("abc", b"abc"):
        assert encode_steps(tok, piece) == [EncodeStep((258,), (), None, whole=True)]
    # The merges reach the token looked up: they are replayed, the last step says found whole.
    steps = encode_steps(tok, "ab")
    assert [s.tokens for s in steps] == [(97, 98), (257,)] == [(97, 98), tuple(tok.encode("ab"))]
    assert [s.whole for s in steps] == [False, True]
    assert encode_steps(tok, "abca")[-1] == EncodeStep((97, 256, 97), (), None)  # no token
    plain = ignore_merges_tokenizer(False)
    assert encode_steps(plain, "abc")[-1] == EncodeStep((97, 256), (), None)
    assert not any(s.whole for s in encode_steps(plain, "ab"))


# ------------------------------------------------------------------ unreachable
def ref_unreachable(tok: Tokenizer) -> list[int]:
    # A token no UTF-8 holds is in no text; the rest as their bytes merge.
    ranks, ids = first_ranks(tok.merges), token_ids(tok.vocab)
    specials = {tok.special_id(s) for s in tok.special_tokens}
    return sorted(
        i
        for i, token in tok.vocab.items()
        if i not in specials
        and (in_no_text(token) or [ids[t] for t in reference_encode_piece(token, ranks)] != [i])
    )


def test_unreachable_small_hand_made():
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b"ab", 257: b"bc", 258: b"abc", 259: b"zz", 260: b"a", 261: b"bcd"})
    merges = [(b"a", b"b"), (b"b", b"c"), (b"a", b"bc"), (b"bc", b"d")]
    tok = Tokenizer(vocab, merges, ["<s>"])
    # "abc" becomes "ab" "c"; "zz" is made by no merge; 260 repeats byte "a" (97 wins).
    no_text = [0xC0, 0xC1, *range(0xF5, 0x100)]  # bytes no UTF-8 text holds
    assert unreachable_tokens(tok) == ref_unreachable(tok) == [*no_text, 258, 259, 260]


def test_tokens_of_megabytes_are_reached_through_the_compiled_kernels(monkeypatch):
    """Tokens long in all load the compiled encoder first (Python merges about 3 s a
    megabyte: a run trained on megabytes of one letter took minutes), with the same answer."""
    from bpe_studio.core.encode.merging import kernel_start

    vocab = {i: bytes([i]) for i in range(256)}
    merges, token = [], b"a"
    for k in range(18):  # "aa", "aaaa", ... 256 KB of "a": a doubled run, merged back whole
        merges.append((token, token))
        token += token
        vocab[256 + k] = token
    vocab[274] = b"a" * 12_288  # no merge makes it: 8,192 "a" and 4,096
    tok = Tokenizer(vocab, merges)
    asked = []
    prepare = kernel_start.prepare

    def spy(status=None):
        asked.append(status)
        return prepare(status)

    monkeypatch.setattr(kernel_start, "prepare", spy)
    said = []
    found = reach.unreachable_among(tok, vocab, status=said.append)
    no_text = [0xC0, 0xC1, *range(0xF5, 0x100)]  # bytes no UTF-8 text holds
    assert found == [*no_text, 274]
    assert asked == [said.append]
    assert reach.unreachable_among(tok, range(256, 268)) == []  # 8 KB at most: not asked
    assert len(asked) == 1


def test_unreachable_trained(trained_run, chinese_code_tokenizer):
    for tok in (trained_run[3], chinese_code_tokenizer):
        assert unreachable_tokens(tok) == ref_unreachable(tok)


def test_unreachable_gpt2_against_reference_and_tiktoken(gpt2_tokenizer, tiktoken_gpt2):
    found = unreachable_tokens(gpt2_tokenizer)
    assert found == ref_unreachable(gpt2_tokenizer)
    by_tiktoken = sorted(
        i
        for i, token in gpt2_tokenizer.vocab.items()
        if i != 50256 and (in_no_text(token) or tiktoken_gpt2._encode_single_piece(token) != [i])
    )
    assert found == by_tiktoken


def test_byte_tokens_no_text_holds_are_unreachable(gpt2_tokenizer, tiktoken_gpt2):
    # Audit h_reach65: the byte tokens C0, C1 and F5 to FF were called reachable, though no
    # text holds them: tiktoken gives none of them for a text of every code point.
    every = "".join(chr(c) for c in range(0x20, 0x110000) if not 0xD800 <= c < 0xE000)
    emitted = set(tiktoken_gpt2.encode_ordinary(every))
    no_text = {i for i, t in gpt2_tokenizer.vocab.items() if in_no_text(t)}
    assert len(no_text) == 13 and not no_text & emitted
    assert no_text <= set(unreachable_tokens(gpt2_tokenizer))


def test_tokens_that_are_part_of_no_utf8_text_are_unreachable():
    # A token may begin or end inside a character; it is unreachable only when no valid
    # UTF-8 holds it (RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF).
    vocab = {i: bytes([i]) for i in range(256)}
    parts = {
        b"\xe4\xb8": True,  # the start of a Han character
        b"\xb8\xad": True,  # its end
        b"\x80\x80\x80": True,  # the end of a four-byte character
        b"\xed\x9f": True,  # the start of U+D7C0..U+D7FF
        b"\xed\xa0": False,  # the start of a surrogate
        b"\xe0\x80": False,  # an overlong form
        b"\xf4\x90": False,  # past U+10FFFF
        b"\x80\x80\x80\x80": False,  # four continuation bytes
        b"a\x80": False,  # a continuation byte after a whole character
    }
    c = b"\x80"
    merges = [(c, c), (c + c, c), (c + c, c + c)]  # the runs of continuation bytes first
    merges += [(t[:1], t[1:]) for t in parts if len(t) == 2]
    for a, b in merges:
        vocab[len(vocab)] = a + b
    ids = {t: i for i, t in vocab.items()}
    tok = Tokenizer(vocab, merges)
    unreachable = set(unreachable_tokens(tok))
    for token, in_text in parts.items():
        assert (ids[token] not in unreachable) == in_text, token


def test_unreachable_gpt2_with_appended_merges(gpt2_tokenizer):
    # Join random pairs of GPT-2 tokens with new merges at the end of the list (still
    # monotone, so the batch merger runs): a new token is reachable only when GPT-2 itself
    # encodes its bytes to exactly those two parts.
    tok = gpt2_tokenizer
    rng = random.Random(11)
    vocab, merges = dict(tok.vocab), list(tok.merges)
    ids = token_ids(vocab)
    tokens = sorted(t for t in ids if len(t) > 1 and t != EOT.encode())

    def one_piece(token: bytes) -> bool:
        # A join GPT-2's pattern cuts apart alone is left to the test below; the merges
        # decide the rest (bytes that are no text included).
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            return True
        return SPLIT.findall(text) == [text]

    while len(merges) < len(tok.merges) + 300:
        a, b = rng.choice(tokens), rng.choice(tokens[:3000] if rng.random() < 0.5 else tokens)
        if a + b not in ids and one_piece(a + b):
            vocab[len(vocab)] = a + b
            ids[a + b] = len(vocab) - 1
            merges.append((a, b))
    # Two ids holding the bytes of existing tokens, made by no merge: the encoder gives
    # the smaller id, so these are unreachable though their bytes encode to one token.
    for token in (b" the", b"ing"):
        vocab[len(vocab)] = token
    grown = Tokenizer(vocab, merges, [EOT])
    found = unreachable_tokens(grown)
    assert grown.merger._batch_state == "built"
    assert found == ref_unreachable(grown)
    assert 2 + 13 < len(found) < 302 + 13  # 13 bytes no text holds
    assert found[-2:] == [len(vocab) - 2, len(vocab) - 1]


def test_unreachable_follows_the_pattern_the_vocabulary_is_read_with(tiktoken_gpt2):
    # The kinds audit: GPT-2's files read with cl100k's pattern (digits three at a time, no
    # space before them) had no unreachable token, though " 2016" or " 1" can never be one
    # pre-token there. Reference: tiktoken with GPT-2's ranks and cl100k's pattern.
    import tiktoken

    from bpe_studio.core.encode.foreign import open_tokenizer
    from bpe_studio.core.pretokenization.names import PATTERNS

    tok = open_tokenizer(FIXTURES / "gpt2_vocab.json", pattern="cl100k")
    enc = tiktoken.Encoding(
        name="gpt2_cl100k_pattern",
        pat_str=PATTERNS["cl100k"],
        mergeable_ranks=tiktoken_gpt2._mergeable_ranks,
        special_tokens={},
    )
    unreachable = set(unreachable_tokens(tok))
    spaced_numbers = {i for i, t in tok.vocab.items() if regex.fullmatch(rb" [0-9]+", t)}
    assert spaced_numbers and spaced_numbers <= unreachable
    for i in unreachable:
        text = tok.vocab[i].decode("utf-8", errors="replace")
        assert enc.encode_ordinary(text) != [i], text  # given alone: reachable
    emitted = set()
    for name in SLICES:
        emitted.update(enc.encode_ordinary(read_fixture(SLICES[name])))
    assert len(emitted) > 10_000 and not emitted & unreachable


def test_unreachable_tokens_calls_back_between_slices_and_finds_the_same(gpt2_tokenizer):
    # A viewer's background thread waits in the callback while its GUI thread repaints.
    calls: list[int] = []
    found = unreachable_tokens(gpt2_tokenizer, lambda: calls.append(1))
    assert found == unreachable_tokens(gpt2_tokenizer)
    special_ids = {gpt2_tokenizer.special_id(s) for s in gpt2_tokenizer.special_tokens}
    ordinary = sum(1 for i, t in gpt2_tokenizer.vocab.items() if t and i not in special_ids)
    # Once a slice of the merges, and every few hundred tokens of the pre-tokenizer's test.
    assert len(calls) > -(-ordinary // reach._REACH_SLICE) > 1


@pytest.mark.parametrize("kind", ["strip", "prepend", "replace"])
def test_a_normalizer_that_changes_a_text_by_where_it_stands_leaves_tokens_reachable(
    tmp_path, kind
):
    # Review h_rev64: a token whose text Strip, Prepend or Replace changes alone (" the"
    # stripped) was called unreachable, though those change it only at the text's ends or
    # beside what it replaces: 3,483 of the ids encoding real text gives. Reference:
    # tokenizers, on real text.
    import tokenizers
    from hf_shapes import trained_bpe
    from tokenizers import normalizers, pre_tokenizers

    normalizer = {
        "strip": normalizers.Strip(),
        "prepend": normalizers.Prepend("_"),
        "replace": normalizers.Replace("  ", " "),
    }[kind]
    texts = [read_fixture(SLICES[k])[:30_000] for k in SLICES]
    hf = trained_bpe(normalizer, pre_tokenizers.ByteLevel(add_prefix_space=False), texts, 600)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    hf = tokenizers.Tokenizer.from_file(str(path))
    unreachable = set(unreachable_tokens(Tokenizer.from_hf(path)))
    emitted = set()
    for text in texts:
        for line in text.splitlines():
            emitted.update(hf.encode(line, add_special_tokens=False).ids)
    assert len(emitted) > 300 and not emitted & unreachable


# What tokenizers is given around a token's text, to find whether it ever gives the token.
_AROUND = ["", " ", "a", "Z", "0", "\n", "\t", ".", "'", "中", "é", "_", "-", " a", "'s", "  "]


def _variants(text: str) -> set[str]:
    return {text, text.upper(), text.lower(), text.title(), text.replace(" ", "_")}


def _ever_given(hf, ids: list[int], texts: dict[int, str]) -> set[int]:
    """The ids of ``ids`` that tokenizers gives for some variant of their text between some
    of :data:`_AROUND`, or for real text."""
    found = set()
    for i in ids:
        batch = [a + v + z for v in _variants(texts[i]) for a in _AROUND for z in _AROUND]
        if any(i in e.ids for e in hf.encode_batch(batch, add_special_tokens=False)):
            found.add(i)
    return found


@pytest.mark.parametrize("kind", ["strip_lower", "nfkc_tab", "newline", "underscore"])
def test_a_character_the_normalizers_always_change_makes_a_token_unreachable(tmp_path, kind):
    # Audit h_reach65: a Lowercase or NFKC in a Sequence with Strip or Replace was not applied
    # to the tokens (Sequence[Strip, Lowercase] called "The" reachable: 1 unreachable where
    # Lowercase alone has 16,864), nor a Replace that rewrites a character wherever it stands
    # (Replace("\n", " "): "\n" alone gives [220]). Reference: tokenizers, on each such
    # token's text in many contexts, and on real text for the tokens called unreachable.
    import unicodedata

    import tokenizers
    from foreign_files import _gpt2_model
    from tokenizers import decoders, normalizers, pre_tokenizers

    normalizer, changes = {
        "strip_lower": (
            normalizers.Sequence([normalizers.Strip(), normalizers.Lowercase()]),
            lambda t: t.lower() != t,
        ),
        "nfkc_tab": (
            normalizers.Sequence([normalizers.NFKC(), normalizers.Replace("\t", " ")]),
            lambda t: unicodedata.normalize("NFKC", t) != t,
        ),
        "newline": (normalizers.Replace("\n", " "), lambda t: "\n" in t),
        "underscore": (normalizers.Replace("_", " "), lambda t: "_" in t),
    }[kind]
    hf = tokenizers.Tokenizer(_gpt2_model(False))
    hf.normalizer = normalizer
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    hf.decoder = decoders.ByteLevel()
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    ours = Tokenizer.from_hf(path)
    texts = {}
    for i, token in ours.vocab.items():
        try:
            texts[i] = token.decode("utf-8")
        except UnicodeDecodeError:
            pass
    changed = sorted(i for i, t in texts.items() if changes(t))
    changed = random.Random(5).sample(changed, min(len(changed), 150))
    unreachable = set(unreachable_tokens(ours))
    assert changed and not _ever_given(hf, changed, texts)
    assert set(changed) <= unreachable
    emitted = set()
    for key in SLICES:
        for line in read_fixture(SLICES[key])[:20_000].splitlines(keepends=True):
            emitted.update(hf.encode(line, add_special_tokens=False).ids)
    assert len(emitted) > 1000 and not emitted & unreachable


def test_capitals_a_compatibility_form_writes_after_lowercase_stay_reachable(tmp_path):
    """The review: under Sequence[Lowercase, NFKC], "ℌ" and "𝐀" have no lowercase and NFKC
    then writes "H" and "A", which tokenizers gives; Reach called those tokens unreachable,
    taking the chain run on its own output ("h") for what it outputs. Reference: tokenizers,
    on mathematical and other compatibility capitals and on real text."""
    import tokenizers
    from foreign_files import _gpt2_model
    from tokenizers import decoders, normalizers, pre_tokenizers

    hf = tokenizers.Tokenizer(_gpt2_model(False))
    hf.normalizer = normalizers.Sequence([normalizers.Lowercase(), normalizers.NFKC()])
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    hf.decoder = decoders.ByteLevel()
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    hf = tokenizers.Tokenizer.from_file(str(path))
    unreachable = set(unreachable_tokens(Tokenizer.from_hf(path)))
    capitals = ",".join("ℌℑℜℭＡＢＣⅫ" + "".join(map(chr, range(0x1D400, 0x1D434))))
    emitted = set(hf.encode(capitals, add_special_tokens=False).ids)
    for key in SLICES:
        for line in read_fixture(SLICES[key])[:20_000].splitlines(keepends=True):
            emitted.update(hf.encode(line, add_special_tokens=False).ids)
    assert {hf.token_to_id("H"), hf.token_to_id("A")} <= emitted
    assert not emitted & unreachable, sorted(hf.id_to_token(i) for i in emitted & unreachable)
