"""The tokenizer's cache of pre-token ids: values the cyclic garbage collector never has to
walk (after a long encode its next pass would otherwise visit every new entry), each the
pre-token's own ids; and ``encode_array``'s dtypes."""

from __future__ import annotations

import gc
from contextlib import nullcontext
from unittest import mock

import pytest
from core_helpers import read_fixture

BATCH_PATHS = {  # every batch path on, however few pre-tokens
    "BATCH_MIN": 1,
    "BATCH_BUILD_MIN": 1,
    "BATCH_LONG_MIN": 1,
    "CUTS_BUILD_MIN": 1,
}


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("fixture", ["english_books_slice.txt", "chinese_slice.txt"])
def test_cache_values_are_untracked_and_hold_each_pre_tokens_ids(gpt2_tokenizer, fixture, batch):
    text = read_fixture(fixture)[:20_000]
    tok = gpt2_tokenizer.truncated(len(gpt2_tokenizer.merges))  # a fresh, empty cache
    if batch:
        with mock.patch.multiple("bpe_studio.core.encode.merging.merger", **BATCH_PATHS):
            tok.encode(text)
    else:
        tok.encode(text)
    assert len(tok.merger._cache) > 100
    assert not any(map(gc.is_tracked, tok.merger._cache.values()))
    unpacked = {piece: list(memoryview(v).cast("I")) for piece, v in tok.merger._cache.items()}
    for piece, ids in list(unpacked.items())[:2000]:
        # Independent of the cache: the ids decode to the piece's bytes, and merging the
        # piece alone, one pair at a time, gives the same ids.
        assert tok.decode_bytes(ids) == piece.encode("utf-8")
        assert ids == tok.merger.bpe(piece.encode("utf-8"))


@pytest.mark.parametrize("dtype", ["uint16", "uint32"])
def test_encode_array_dtypes(gpt2_tokenizer, dtype):
    text = read_fixture("english_books_slice.txt")[:5_000]
    arr = gpt2_tokenizer.encode_array(text, dtype)
    assert arr.dtype.name == dtype
    assert arr.tolist() == gpt2_tokenizer.encode(text)


def test_encode_array_rejects_dtypes_too_small_for_its_ids(gpt2_tokenizer):
    with pytest.raises(ValueError, match=r"dtype int8 holds ids up to 127, but .* 50,256"):
        gpt2_tokenizer.encode_array("hello", "int8")


@pytest.mark.parametrize("batch", [False, True])
def test_another_thread_starting_a_new_cache_mid_encode_loses_nothing(gpt2_tokenizer, batch):
    """Threads share one tokenizer (as tiktoken's users share theirs). A thread that found
    the cache full cleared it while another, between filling it and reading it back, still
    needed entries: ``KeyError`` (8 threads over 800 texts of made-up words raised 3-7). Here
    that other thread's turn comes deterministically, inside this one's merging."""
    import bpe_studio.core.encode.merging.merger as merger_module

    tok = gpt2_tokenizer.truncated(len(gpt2_tokenizer.merges))  # a fresh, empty cache
    merger = tok.merger
    cached = [" hello", " world", " again"]
    merger.ids(cached)  # already cached when the encode below starts
    fresh = [f" zq{n}x" for n in range(40)]
    other = [f" vk{n}w" for n in range(40)]
    original = merger._merge_batch
    turns = []

    def merge_batch_then_another_thread(*args):
        if not turns:
            turns.append(1)
            # The other thread: it finds the cache over its limit and starts afresh.
            with mock.patch.object(merger_module, "CACHE_LIMIT", 1):
                merger.ids(other)
        return original(*args)

    paths = mock.patch.multiple(merger_module, **BATCH_PATHS) if batch else nullcontext()
    with (
        paths,
        mock.patch.object(merger, "_merge_batch", merge_batch_then_another_thread),
    ):
        ids = merger.ids(cached + fresh)
    assert turns == [1]
    expected = [i for piece in cached + fresh for i in merger.bpe(piece.encode("utf-8"))]
    assert ids == expected
