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
    tests that move a text's spans between steps (``span_steps``, ``span_split``)."""
    from bpe_studio.core import Tokenizer, train_bpe

    english = (FIXTURES / "tinystories_slice.txt").read_text(encoding="utf-8")[:20_000]
    chinese = (FIXTURES / "chinese_slice.txt").read_text(encoding="utf-8")[:6_000]
    corpus = tmp_path_factory.mktemp("corpus") / "mixed.txt"
    corpus.write_text(
        english + EOT + chinese + EOT + "aaaa aaaaaaa \U0001f600\U0001f600 ll lll", encoding="utf-8"
    )
    vocab, merges = train_bpe(corpus, 257 + 700, [EOT], workers=1)
    return Tokenizer(vocab, merges, [EOT])
