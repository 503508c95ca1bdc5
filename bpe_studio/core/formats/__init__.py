"""Tokenizer exchange formats beyond GPT-2's files: tiktoken rank files and Hugging Face
``tokenizer.json``, read into and written from one plain record, :class:`TokenizerData`.

What it leaves out: encoding (``Tokenizer``) and GPT-2's ``vocab.json``/``merges.txt``
(``gpt2``).
"""

from __future__ import annotations

from .base.data import PATTERNS, TokenizerData, pattern_name, pattern_regex
from .hf.tokenizer_json import read_hf, write_hf
from .tiktoken import derive_merges, read_ranks, read_tiktoken, write_tiktoken

__all__ = [
    "PATTERNS",
    "TokenizerData",
    "derive_merges",
    "pattern_name",
    "pattern_regex",
    "read_hf",
    "read_ranks",
    "read_tiktoken",
    "write_hf",
    "write_tiktoken",
]
