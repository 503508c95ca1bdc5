"""The same checks on the full shared corpora (tens of MB). Each test skips, saying so, when
the corpora folder (``<repo root>/../shared/corpora`` or $BPE_STUDIO_CORPORA) is absent.
Long training runs are left to the benchmarks."""

from __future__ import annotations

import pytest
from core_helpers import EOT, full_corpus

from bpe_studio.core import count_file, count_text, train_bpe

BIG = ["tinystories.txt", "english_books.txt", "chinese.txt", "code.txt", "mixed_web.txt"]

pytestmark = pytest.mark.slow  # every test reads or counts tens of MB


def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


@pytest.mark.parametrize("name", BIG)
def test_parallel_count_equals_whole_text(name):
    path = full_corpus(name)
    assert count_file(path, [EOT], workers=2) == count_text(read(path), [EOT])


@pytest.mark.parametrize("name", ["chinese.txt", "mixed_web.txt"])
def test_parallel_count_without_special_tokens(name):
    # These two hold non-ASCII spaces next to line breaks, where a careless cut goes wrong.
    path = full_corpus(name)
    assert count_file(path, [], workers=2) == count_text(read(path), [])


@pytest.mark.parametrize("name", ["tinystories.txt", "chinese.txt", "code.txt", "mixed_web.txt"])
def test_gpt2_encode_equals_tiktoken(gpt2_tokenizer, tiktoken_gpt2, name):
    text = read(full_corpus(name))
    assert gpt2_tokenizer.encode(text) == tiktoken_gpt2.encode(text, allowed_special="all")


def test_encode_iterable_over_file_lines(gpt2_tokenizer):
    path = full_corpus("mixed_web.txt")
    with open(path, encoding="utf-8", newline="") as f:
        streamed = list(gpt2_tokenizer.encode_iterable(f))
    assert streamed == gpt2_tokenizer.encode(read(path))


def test_train_workers_1_equals_workers_2():
    path = full_corpus("mixed_web.txt")
    serial = train_bpe(path, 1000, [EOT], workers=1)
    assert train_bpe(path, 1000, [EOT], workers=2) == serial
    assert len(serial[1]) == 1000 - 257
