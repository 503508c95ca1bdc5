"""BPE Studio's engine: pre-tokenization, the incremental trainer, the rank-based tokenizer and
GPT-2 file exchange. Pure Python (regex, numpy); never imports Qt.

``PATTERNS`` names the pre-tokenization patterns ("gpt2", "cl100k", "o200k"; ``GPT2_PATTERN``
is GPT-2's regex); ``pretokenizer(pattern)`` compiles a name or a regex, ``pretokenize(text,
pattern)`` splits text with it; ``count_text``/``count_file`` count pre-tokens; ``train_bpe``,
``iter_merges``, ``trainer_from_file`` and ``BpeTrainer`` train (each with a ``pattern``);
``Tokenizer`` encodes and decodes, and loads and saves every format (``load``, ``preset``,
``from_hf``, ``from_tiktoken``, ``save``);
``initial_vocab`` and ``merge_budget`` tell the id layout of a trained vocabulary. Modules:
``corpus`` (corpus files), ``specials`` (special tokens), ``boundaries`` (where text may be
cut), ``spans`` (packed spans for viewers; imports NumPy), ``encode_file``, ``gpt2_format``.
"""

from .compression import CompressionCurve
from .corpus import CorpusError, TrainingCancelled, count_file, count_text
from .explain import EncodeStep, MergeNode, encode_steps, merge_tree, unreachable_tokens
from .gpt2_format import TokenizerFileError, infer_special_tokens, load_merges, load_vocab
from .pattern import GPT2_PATTERN, PATTERNS, pretokenize, pretokenizer
from .tokenizer import Tokenizer, TokenSpan
from .trainer import BpeTrainer, MergeStep, iter_merges, train_bpe, trainer_from_file
from .vocab import initial_vocab, merge_budget

__all__ = [
    "GPT2_PATTERN",
    "PATTERNS",
    "BpeTrainer",
    "CorpusError",
    "MergeStep",
    "TokenSpan",
    "Tokenizer",
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
