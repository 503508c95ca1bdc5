"""What a tokenizer saves as: GPT-2 files cannot say ``ignore_merges`` (a ``tokenizer.json``
looking pre-tokens up whole, as Llama 3's does), and hold such a tokenizer exactly only when the
look-up changes no id.

What it does: :func:`data_to_save` is the tokenizer's record, without ``ignore_merges`` for GPT-2
files when :func:`lookup_changes_ids` says the look-up changes nothing. That takes the tokens the
look-up alone gives (``Merger.found_whole_only``) and keeps those some text can make a
pre-token. Under a single regex whose only zero-width assertions are negative look-aheads
(GPT-2's pattern and the open models'), a token is a pre-token somewhere only if the pattern
applied to the token's own text matches it whole: at the token's end a negative look-ahead that
holds before more text also holds at the end of the text, and a shorter match there would be
found first in any context too. For any other pre-tokenization every such token counts.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import regex

if TYPE_CHECKING:
    from ..formats.base.data import TokenizerData
    from .tokenizer import Tokenizer

# Zero-width assertions whose truth may differ at the end of the text and before more text,
# conditions, and the flags that change how a match is searched (reverse, sets, words).
_CONTEXTUAL = regex.compile(r"\\[bBAZzGKmM]|\(\?<?[=!]|\(\?<|\(\?\(|\(\?[a-zA-Z0-9-]*[rVw]|[$^]")
# What the check above must not look into: an escaped character, a character class.
_INERT = regex.compile(r"\\.|\[\^?\]?(?:\\.|\[:[a-z]+:\]|[^\]])*\]", regex.DOTALL)


def data_to_save(tokenizer: Tokenizer, format: str | None) -> TokenizerData:
    """``tokenizer.to_data()``, for GPT-2 files (``format`` "gpt2" or None) without
    ``ignore_merges`` where the look-up changes no id: merges.txt then holds it (Llama 3's)."""
    data = tokenizer.to_data()
    if format in ("gpt2", None) and data.ignore_merges and not lookup_changes_ids(tokenizer):
        return dataclasses.replace(data, ignore_merges=False)
    return data


def lookup_changes_ids(tokenizer: Tokenizer) -> bool:
    """Whether some text encodes otherwise under the whole look-up than by merging alone."""
    found = tokenizer.merger.found_whole_only()
    if not found:
        return False
    if tokenizer.hf_pipeline is not None or not _context_free(tokenizer.pattern):
        return True
    compiled = tokenizer.pre_tokenizer.compiled
    for tok in found:
        try:
            text = tok.decode("utf-8")
        except UnicodeDecodeError:
            continue  # every pre-token is text
        if compiled.findall(text) == [text]:
            return True
    return False


def _context_free(pattern: str) -> bool:
    """Whether ``pattern``'s matches ending at a token's end are those of the token's text
    alone: no anchor, word boundary, look-behind or positive look-ahead (``(?!`` alone)."""
    outside = _INERT.sub(lambda m: m[0] if _CONTEXTUAL.fullmatch(m[0]) else "", pattern)
    without_negative = outside.replace("(?!", "")
    return _CONTEXTUAL.search(without_negative) is None
