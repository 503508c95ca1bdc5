"""A corpus's usage under a ``tokenizer.json`` pipeline is cut where the tokenizer's own rules
allow (``corpus_pass.usage_tasks`` with ``Tokenizer.cut_rules``, as ``encode_file`` cuts):
the cut-rules change found usage cut by the pattern alone, which gives nothing for a
pipeline's Splits (one task a file: one worker) and would ignore a normalizer. The counts
are those of encoding the whole text with Hugging Face's own library."""

from __future__ import annotations

import collections

import tokenizers
from core_helpers import SLICES, read_fixture, write_text
from foreign_files import llama3_style, qwen2_style

from bpe_studio.core.corpus.tasks import corpus_files
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain import corpus_pass
from bpe_studio.core.explain.usage import corpus_usage


def test_a_pipelines_usage_is_cut_into_tasks_and_counts_as_the_whole(tmp_path):
    text = "".join(read_fixture(SLICES[k]) for k in ("english", "chinese", "code", "mixed_web")) * 3
    text = text.replace("<|endoftext|>", "")  # no special token to cut before: the rules only
    corpus = write_text(tmp_path / "c.txt", text)
    for name, make in (("llama3", llama3_style), ("qwen2", qwen2_style)):
        path = make(tmp_path / name, full=False)
        tok = open_tokenizer(path)
        tasks = corpus_pass.usage_tasks(tok, corpus_files([str(corpus)]), 2, "text")
        assert len(tasks) > 1, name
        ids = tokenizers.Tokenizer.from_file(str(path)).encode(text).ids
        usage = corpus_usage(tok, [str(corpus)], workers=2, scan=False)
        assert usage.tokens == len(ids), name
        expected = collections.Counter(ids)
        got = {i: usage.count(i) for i in expected}
        assert got == dict(expected) and int(usage.counts.sum()) == len(ids), name
