"""The tokenizers shipped with the package: GPT-2, cl100k_base (GPT-4) and o200k_base (GPT-4o).

What it does: :func:`preset_data` reads a preset's files from ``resources/tokenizers`` (through
``importlib.resources``) and pairs them with the pattern and special tokens tiktoken publishes
for that encoding; :func:`preset_name` reads the names people give them, :func:`preset_label`
names one for a menu. What it leaves out: building a ``Tokenizer`` from the data, and the file
formats themselves (``gpt2_format``, ``formats``).
"""

from __future__ import annotations

import gzip
import json
import sys
from dataclasses import replace
from importlib import resources
from typing import TYPE_CHECKING

from .formats.data import TokenizerData
from .formats.tiktoken_file import read_tiktoken
from .gpt2_format import decode_token
from .pattern import ALIASES, alias_key

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

EOT = "<|endoftext|>"
# Each preset's model (the first OpenAI model published with it, as people name it), and its
# pattern name and special tokens as tiktoken_ext/openai_public.py gives them.
_PRESETS: dict[str, tuple[str, str, dict[str, int]]] = {
    "gpt2": ("GPT-2", "gpt2", {EOT: 50256}),
    "cl100k_base": (
        "GPT-4",
        "cl100k",
        {
            EOT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": ("GPT-4o", "o200k", {EOT: 199999, "<|endofprompt|>": 200018}),
}
PRESETS: tuple[str, ...] = tuple(_PRESETS)
_BY_PATTERN = {pattern: name for name, (_, pattern, _) in _PRESETS.items()}


def preset_name(word: str) -> str | None:
    """The preset a user means by ``word``: a preset's name, or another name of its encoding
    or of a model that uses it, spelt as the patterns take them (``pattern.ALIASES``); else
    None. p50k_base splits text as GPT-2 does but holds other tokens, so it names no preset.

    >>> preset_name("GPT-4o"), preset_name("cl100k"), preset_name("r50k_base"), preset_name("p50k")
    ('o200k_base', 'cl100k_base', 'gpt2', None)
    """
    if word in _PRESETS:
        return word
    key = alias_key(word)
    if key.startswith("p50k"):
        return None
    return _BY_PATTERN.get(ALIASES.get(key, ""))


def preset_label(name: str) -> str:
    """The preset ``name`` as a menu offers it: the model it is known by, then the encoding's
    name where that says something more.

    >>> [preset_label(name) for name in PRESETS]
    ['GPT-2', 'GPT-4 (cl100k_base)', 'GPT-4o (o200k_base)']
    """
    name = _checked_name(name)
    model = _PRESETS[name][0]
    return model if alias_key(model) == alias_key(name) else f"{model} ({name})"


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


def _checked_name(name: str) -> str:
    preset = preset_name(name)
    if preset is None:
        raise ValueError(
            f"unknown preset {name!r}; the presets are {', '.join(PRESETS)} (also named "
            "cl100k, gpt-4, o200k, gpt-4o, r50k_base)"
        )
    return preset


def preset_settings(name: str) -> tuple[str, dict[str, int]]:
    """The pattern name and the special tokens (token -> id) of the preset ``name``.

    >>> preset_settings("o200k_base")
    ('o200k', {'<|endoftext|>': 199999, '<|endofprompt|>': 200018})
    """
    _, pattern, special_tokens = _PRESETS[_checked_name(name)]
    return pattern, dict(special_tokens)


def preset_data(name: str) -> TokenizerData:
    """The shipped tokenizer ``name`` (one of :data:`PRESETS`) with its real special tokens.

    >>> data = preset_data("gpt2")
    >>> len(data.vocab), len(data.merges), data.special_tokens, data.pattern
    (50257, 50000, {'<|endoftext|>': 50256}, 'gpt2')
    """
    name = _checked_name(name)
    pattern, special_tokens = preset_settings(name)
    if name == "gpt2":
        data = _gpt2_data(special_tokens)
    else:
        with resources.as_file(_folder() / f"{name}.tiktoken.gz") as path:
            data = read_tiktoken(path, pattern, special_tokens)
    # subtle: checked for each preset, every token against a slow merger, in
    # tests/core/test_whole_tokens.py.
    return replace(data, whole_tokens=True)
