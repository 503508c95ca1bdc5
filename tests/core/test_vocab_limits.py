"""One vocabulary-size rule (#32), in the core: from 256 + the special tokens (no merge: a
byte-level tokenizer) to 2**31 (ids are 32-bit signed integers in the compiled engine), the
same for ``train_bpe``, the trainer and the command line; a size far beyond what the corpus
allows trains until the pairs run out, on either engine, without tables sized by it (the
Python engine refused 10**9 naming its own limit; the compiled one allocated by it)."""

from __future__ import annotations

import pytest
from core_helpers import EOT, slice_head, write_text
from engines import ENGINES

from bpe_studio.core import BpeTrainer, count_text, train_bpe
from bpe_studio.core.train.engine_start import EngineStart
from bpe_studio.core.train.vocab import (
    MAX_VOCAB_SIZE,
    check_vocab_size,
    initial_vocab,
    vocab_size_problem,
    vocab_size_range,
)


def test_the_range_and_its_words():
    assert vocab_size_range([EOT]) == (257, 2**31) and MAX_VOCAB_SIZE == 2**31
    assert vocab_size_problem(257, [EOT]) is None and vocab_size_problem(2**31, []) is None
    assert vocab_size_problem(2**31 + 1, []) == (
        "is too large: it must be at most 2,147,483,648 (the compiled merge engine holds ids "
        "as 32-bit signed integers)"
    )
    with pytest.raises(ValueError) as info:
        check_vocab_size(10**20, [EOT])
    assert str(info.value) == (
        "vocabulary size 100,000,000,000,000,000,000 is too large: it must be at most "
        "2,147,483,648 (the compiled merge engine holds ids as 32-bit signed integers)"
    )
    with pytest.raises(ValueError, match=r"^vocabulary size 10 is too small: it must be at least"):
        check_vocab_size(10, [])


@pytest.mark.parametrize("engine", ENGINES)
def test_a_size_beyond_the_corpus_trains_until_the_pairs_run_out(tmp_path, engine):
    path = write_text(tmp_path / "c.txt", slice_head("english", 3_000))
    vocab, merges = train_bpe(path, 10**9, [EOT], engine=engine, workers=1)
    # The same merges as a size that just fits them: the run ended when the pairs did.
    assert (vocab, merges) == train_bpe(path, 257 + len(merges), [EOT], engine=engine, workers=1)
    recorded = BpeTrainer(count_text(slice_head("english", 3_000), [EOT]), MAX_VOCAB_SIZE, [EOT],
                          engine=engine, record_pairs=3)  # fmt: skip
    assert [(s.left, s.right) for s in recorded] == merges


def test_engine_tables_are_sized_by_the_corpus_not_the_size_asked():
    counts = count_text("hello world, hello there", [EOT])
    tokens = list(initial_vocab([EOT]).values())
    sites = sum(len(t) - 1 for t in counts if len(t) > 1)
    assert EngineStart.of(counts, tokens, MAX_VOCAB_SIZE).max_tokens == len(tokens) + sites
    assert EngineStart.of(counts, tokens, 260).max_tokens == 260


def test_no_merge_asked_for_is_a_byte_level_tokenizer(tmp_path):
    path = write_text(tmp_path / "c.txt", slice_head("english", 3_000))
    vocab, merges = train_bpe(path, 258, [EOT, "<pad>"])
    assert merges == [] and vocab == initial_vocab([EOT, "<pad>"])
