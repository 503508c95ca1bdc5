"""BPE Studio's engine: pre-tokenization, the incremental trainer, the rank-based tokenizer and
GPT-2 file exchange. Pure Python (regex, numpy); never imports Qt.

``PATTERNS`` names the pre-tokenization patterns ("gpt2", "cl100k", "o200k"; ``GPT2_PATTERN``
is GPT-2's regex); ``pretokenizer(pattern)`` compiles a name or a regex, ``pretokenize(text,
pattern)`` splits text with it; ``count_text``/``count_file`` count pre-tokens; ``train_bpe``,
``iter_merges``, ``trainer_from_file`` and ``BpeTrainer`` train (each with a ``pattern``);
``Tokenizer`` encodes and decodes, and loads and saves every format (``load``, ``preset``,
``from_hf``, ``from_tiktoken``, ``save``); ``open_tokenizer`` opens any source, a
``tokenizer.json`` of another kind as a ``ForeignTokenizer`` (run by ``tokenizers``); both
satisfy ``TokenizerLike``, the one interface (``TokenNotFound``: no such token);
``initial_vocab`` and ``merge_budget`` tell the id layout of a trained vocabulary. Modules:
``corpus`` (corpus files), ``specials`` (special tokens), ``boundaries`` (where text may be
cut), ``spans`` (packed spans for viewers; imports NumPy), ``encode_file``, ``gpt2``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .corpus.counting import TrainingCancelled, count_text
    from .corpus.sources import CorpusError
    from .corpus.tasks import count_file
    from .encode.foreign import ForeignTokenizer, open_tokenizer
    from .encode.interface import TokenizerLike, TokenNotFound
    from .encode.token_spans import TokenSpan
    from .encode.tokenizer import Tokenizer
    from .explain.compression import CompressionCurve
    from .explain.steps import EncodeStep, MergeNode, encode_steps, merge_tree, unreachable_tokens
    from .formats.gpt2 import TokenizerFileError, infer_special_tokens, load_merges, load_vocab
    from .pretokenization.names import GPT2_PATTERN, PATTERNS
    from .pretokenization.pretokenizer import pretokenize, pretokenizer
    from .train.trainer import BpeTrainer, MergeStep, iter_merges, train_bpe, trainer_from_file
    from .train.vocab import initial_vocab, merge_budget

# subtle: the names are imported on first use (PEP 562), so that training from a small corpus
# never loads NumPy (which ``tokenizer`` and ``explain`` import), a large share of such a
# process's memory (docs/training.md, "Memory").
_WHERE = {
    "CompressionCurve": "explain.compression",
    "CorpusError": "corpus.sources",
    "TrainingCancelled": "corpus.counting",
    "count_file": "corpus.tasks",
    "count_text": "corpus.counting",
    "EncodeStep": "explain.steps",
    "MergeNode": "explain.steps",
    "encode_steps": "explain.steps",
    "merge_tree": "explain.steps",
    "unreachable_tokens": "explain.steps",
    "TokenizerFileError": "formats.gpt2",
    "infer_special_tokens": "formats.gpt2",
    "load_merges": "formats.gpt2",
    "load_vocab": "formats.gpt2",
    "GPT2_PATTERN": "pretokenization.names",
    "PATTERNS": "pretokenization.names",
    "pretokenize": "pretokenization.pretokenizer",
    "pretokenizer": "pretokenization.pretokenizer",
    "Tokenizer": "encode.tokenizer",
    "TokenizerLike": "encode.interface",
    "TokenNotFound": "encode.interface",
    "ForeignTokenizer": "encode.foreign",
    "open_tokenizer": "encode.foreign",
    "TokenSpan": "encode.token_spans",
    "BpeTrainer": "train.trainer",
    "MergeStep": "train.trainer",
    "iter_merges": "train.trainer",
    "train_bpe": "train.trainer",
    "trainer_from_file": "train.trainer",
    "initial_vocab": "train.vocab",
    "merge_budget": "train.vocab",
}


__all__ = [
    "GPT2_PATTERN",
    "PATTERNS",
    "BpeTrainer",
    "CorpusError",
    "MergeStep",
    "TokenSpan",
    "Tokenizer",
    "TokenizerLike",
    "TokenNotFound",
    "ForeignTokenizer",
    "open_tokenizer",
    "TokenizerFileError",
    "TrainingCancelled",
    "count_file",
    "count_text",
    "infer_special_tokens",
    "initial_vocab",
    "iter_merges",
    "load_merges",
    "load_vocab",
    "merge_budget",
    "pretokenize",
    "pretokenizer",
    "train_bpe",
    "trainer_from_file",
    "CompressionCurve",
    "EncodeStep",
    "MergeNode",
    "encode_steps",
    "merge_tree",
    "unreachable_tokens",
]


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
