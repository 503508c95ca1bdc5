"""Fixtures for the core tests (no Qt anywhere in tests/core); helpers live in
``core_helpers.py`` so that test modules never import a ``conftest``. The fixtures every folder
uses (GPT-2's tokenizer, the Chinese one) are in ``tests/conftest.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# Helper modules (core_helpers, reference_encoder, gpt2_bytes, ...) sit next to the tests; make
# them importable whatever pytest import mode is in use.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from core_helpers import EOT, FIXTURES  # noqa: E402


@pytest.fixture(scope="session")
def span_tokenizer(tmp_path_factory):
    """A small tokenizer trained on English, Chinese, emoji and runs of one letter, for the
    tests that move a text's spans between steps (``spans_at_step``)."""
    from bpe_studio.core import Tokenizer, train_bpe

    english = (FIXTURES / "tinystories_slice.txt").read_text(encoding="utf-8")[:20_000]
    chinese = (FIXTURES / "chinese_slice.txt").read_text(encoding="utf-8")[:6_000]
    corpus = tmp_path_factory.mktemp("corpus") / "mixed.txt"
    corpus.write_text(
        english + EOT + chinese + EOT + "aaaa aaaaaaa \U0001f600\U0001f600 ll lll", encoding="utf-8"
    )
    vocab, merges = train_bpe(corpus, 257 + 700, [EOT], workers=1)
    return Tokenizer(vocab, merges, [EOT])


# ------------------------------------------------------------------ the compiled encoder
# Which path a text takes depends on whether the compiled encoder's kernels are loaded in the
# process (``encode.merging.kernel_start``): every test starts as a fresh process would, with them
# not loaded, so a test's path does not depend on the tests that ran before it (a test that
# wants the compiled path loads them, as a long text or ``encode_file`` does).
# ``BPE_STUDIO_ENCODER=compiled`` runs every test on the compiled path instead; the tests of
# the Python path's own tables (its batch merger, its cache, its lookups) are left out then.
PYTHON_PATH_TESTS = (
    "test_batch_bpe.py::test_non_monotone_merges_fall_back_to_one_at_a_time",
    "test_batch_bpe.py::test_fresh_tokenizer_uses_the_batch_and_matches_tiktoken",
    "test_batch_bpe.py::test_batch_of_only_long_pretokens",
    "test_batch_bpe.py::test_short_long_and_very_long_pretokens_together",
    "test_batch_bpe.py::test_many_short_documents_get_the_batch_and_the_fast_split",
    "test_encode_cache.py::test_cache_values_are_untracked_and_hold_each_pre_tokens_ids",
    "test_explain.py::test_truncated_does_not_take_over_a_built_batch_merger",
    "test_explain.py::test_truncated_batch_merger_is_built_from_the_first_k_merges",
    "test_whole_tokens.py::test_whole_token_pieces_skip_merging_and_equal_tiktoken",
)


@pytest.fixture(autouse=True)
def _compiled_encoder_as_in_a_fresh_process():
    from bpe_studio.core.encode.merging import kernel_start

    yield
    kernel_start.forget()


def pytest_collection_modifyitems(config, items):
    from bpe_studio.core.encode.merging import kernel_start

    if not kernel_start.eager():
        return
    keep, skip = [], []
    for item in items:
        where = item.nodeid.split("tests/core/", 1)[-1].split("[", 1)[0]
        (skip if where in PYTHON_PATH_TESTS else keep).append(item)
    if skip:
        config.hook.pytest_deselected(items=skip)
        items[:] = keep
