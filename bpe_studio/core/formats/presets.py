"""The tokenizers shipped with the package: GPT-2, cl100k_base (GPT-4) and o200k_base (GPT-4o).

What it does: :func:`preset_data` reads a preset's files from ``resources/tokenizers`` (through
``importlib.resources``) and pairs them with the pattern and special tokens tiktoken publishes
for that encoding (``preset_table``). What it leaves out: building a ``Tokenizer`` from the
data, and the file formats themselves (``gpt2``, ``tiktoken``).
"""

from __future__ import annotations

import gzip
import json
import sys
from dataclasses import replace
from importlib import resources
from typing import TYPE_CHECKING

from .base.byte_chars import decode_token
from .base.data import TokenizerData
from .base.preset_table import checked_preset_name, preset_settings
from .tiktoken import read_tiktoken

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable


def _folder() -> Traversable:
    return resources.files("bpe_studio.resources") / "tokenizers"


def _gpt2_data(special_tokens: dict[str, int]) -> TokenizerData:
    folder = _folder()
    vocab_file, merges_file = folder / "gpt2_vocab.json.gz", folder / "gpt2_merges.txt.gz"
    raw = json.loads(gzip.decompress(vocab_file.read_bytes()))
    vocab = {
        idx: decode_token(tok, f"{vocab_file.name}: entry {tok!r}") for tok, idx in raw.items()
    }
    merges: list[tuple[bytes, bytes]] = []
    text = gzip.decompress(merges_file.read_bytes()).decode("utf-8")
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#version"):
            continue
        left, right = line.split(" ")
        where = f"{merges_file.name}: line {lineno}"
        merges.append((decode_token(left, where), decode_token(right, where)))
    return TokenizerData(vocab, merges, dict(special_tokens), "gpt2")


def preset_data(name: str) -> TokenizerData:
    """The shipped tokenizer ``name`` (one of :data:`PRESETS`) with its real special tokens.

    >>> data = preset_data("gpt2")
    >>> len(data.vocab), len(data.merges), data.special_tokens, data.pattern
    (50257, 50000, {'<|endoftext|>': 50256}, 'gpt2')
    """
    name = checked_preset_name(name)
    pattern, special_tokens = preset_settings(name)
    if name == "gpt2":
        data = _gpt2_data(special_tokens)
    else:
        with resources.as_file(_folder() / f"{name}.tiktoken.gz") as path:
            data = read_tiktoken(path, pattern, special_tokens)
    # subtle: checked for each preset, every token against a slow merger, in
    # tests/core/test_whole_tokens.py.
    return replace(data, whole_tokens=True)
