"""BPE Studio's engine: pre-tokenization, the incremental trainer, the rank-based tokenizer and
GPT-2 file exchange. Pure Python (regex, numpy); never imports Qt."""

from .gpt2_format import TokenizerFileError, infer_special_tokens, load_merges, load_vocab
from .pattern import GPT2_PATTERN, pretokenize
from .pretokenize import CorpusError, TrainingCancelled, count_file, count_text
from .tokenizer import Tokenizer, TokenSpan
from .trainer import BpeTrainer, MergeStep, iter_merges, train_bpe, trainer_from_file

# isort: split
# subtle: these come after the imports above, which end with the submodule ``pretokenize``
# bound as this package's attribute ``pretokenize`` (over the function of that name, which
# tests/core/test_parallel.py relies on); importing them first would leave the function.
from .compression import CompressionCurve
from .explain import EncodeStep, MergeNode, encode_steps, merge_tree, unreachable_tokens

__all__ = [
    "GPT2_PATTERN",
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
    "iter_merges",
    "pretokenize",
    "load_merges",
    "load_vocab",
    "train_bpe",
    "trainer_from_file",
    "CompressionCurve",
    "EncodeStep",
    "MergeNode",
    "encode_steps",
    "merge_tree",
    "unreachable_tokens",
]
