"""The merger's interface (what ``explain`` and the tokenizer ask of it) against the merge list
read the slow way: ``core.reference.reference_encode_piece`` for merging, the merge list itself
(first occurrence of each pair) for ranks."""

from __future__ import annotations

import pytest
from core_helpers import SLICES, read_fixture

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.merging.merger import BATCH_MIN
from bpe_studio.core.reference import reference_encode_piece


def first_ranks(merges):
    ranks = {}
    for i, pair in enumerate(merges):
        ranks.setdefault(pair, i)
    return ranks


def token_ids(tok: Tokenizer) -> dict[bytes, int]:
    ids: dict[bytes, int] = {}
    for i in sorted(tok.vocab):
        ids.setdefault(tok.vocab[i], i)
    return ids


@pytest.mark.parametrize("count", [BATCH_MIN - 1, 2500])
def test_merge_many_equals_the_reference(gpt2_tokenizer, count):
    """Few pieces (merged one by one) and many (the batch merger) alike."""
    words = read_fixture(SLICES["english"]).split()
    pieces = list(dict.fromkeys(w.encode("utf-8") for w in words))[:count]
    assert len(pieces) == count
    flat, ends = gpt2_tokenizer.merger.merge_many(pieces)
    got = [flat[a:b].tolist() for a, b in zip([0, *ends], ends)]
    ranks, ids = first_ranks(gpt2_tokenizer.merges), token_ids(gpt2_tokenizer)
    expected = [[ids[t] for t in reference_encode_piece(p, ranks)] for p in pieces]
    assert got == expected


def test_pair_rank_and_merges_follow_the_merge_list():
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b"ab", 257: b"abc", 258: b"cab"})
    # (A merge repeating a pair is refused by the constructor: test_tokenizer_merges.)
    merges = [(b"a", b"b"), (b"ab", b"c"), (b"c", b"ab")]
    merger = Tokenizer(vocab, merges).merger
    assert merger.pair_rank(97, 98) == (0, 256)
    assert merger.pair_rank(256, 99) == (1, 257)
    assert merger.pair_rank(99, 256) == (2, 258)
    assert merger.pair_rank(98, 97) is None
    assert list(merger.merges()) == [(0, 97, 98, 256), (1, 256, 99, 257), (2, 99, 256, 258)]
    assert [merger.merge_rank(i) for i in (97, 256, 257, 258)] == [None, 0, 1, 2]
    short = merger.truncated(2)
    assert list(short.merges()) == [(0, 97, 98, 256), (1, 256, 99, 257)]
    assert short.pair_rank(99, 256) is None and 258 not in short.vocab


def test_a_very_long_piece_takes_the_loaded_kernel_and_merges_as_in_python(
    gpt2_tokenizer, monkeypatch
):
    """A pre-token of megabytes (a token whose reach is asked) is merged by the compiled
    kernel once it is loaded: seconds a megabyte in Python, milliseconds there."""
    from bpe_studio.core.encode.merging import kernel_start

    kernels = kernel_start.prepare()
    if not kernels:
        pytest.skip(f"the compiled encoder is unavailable here: {kernel_start.failure()}")
    module = kernel_start.kernels()
    calls = []

    def spy(ids, table, limit):
        calls.append(len(ids))
        return kernel(ids, table, limit)

    kernel = module.merge_ids
    monkeypatch.setattr(module, "merge_ids", spy)
    piece = "".join(read_fixture(SLICES["english"]).split())[:30_000].encode("utf-8")
    full, short = gpt2_tokenizer.merger, gpt2_tokenizer.merger.truncated(3_000)
    got = full.bpe(piece), short.bpe(piece)
    assert calls == [len(piece), len(piece)]
    monkeypatch.setattr(kernel_start, "kernels", lambda: None)
    assert got == (full.bpe(piece), short.bpe(piece))
    assert len(got[1]) > len(got[0])
    assert max(got[1]) < 256 + 3_000 <= max(got[0])
