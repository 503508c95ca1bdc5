"""The names ``bpe_studio.core`` exports, each written once: its ``__init__.py`` reads this
file (``lazy_loader.attach_stub``) and imports each name from its module on first use; type
checkers read it as the package's interface."""

from .corpus.counting import TrainingCancelled as TrainingCancelled, count_text as count_text
from .corpus.sources import CorpusError as CorpusError
from .corpus.tasks import count_file as count_file
from .encode.encode_file import encode_file as encode_file
from .encode.foreign import ForeignTokenizer as ForeignTokenizer, open_tokenizer as open_tokenizer
from .encode.interface import TokenizerLike as TokenizerLike, TokenNotFound as TokenNotFound
from .encode.token_spans import TokenSpan as TokenSpan
from .encode.tokenizer import Tokenizer as Tokenizer
from .explain.compression import CompressionCurve as CompressionCurve
from .explain.encode_steps import EncodeStep as EncodeStep, encode_steps as encode_steps
from .explain.merge_tree import MergeNode as MergeNode, merge_tree as merge_tree
from .explain.reach import unreachable_tokens as unreachable_tokens
from .formats.gpt2 import (
    TokenizerFileError as TokenizerFileError,
    infer_special_tokens as infer_special_tokens,
    load_merges as load_merges,
    load_vocab as load_vocab,
)
from .pretokenization.names import GPT2_PATTERN as GPT2_PATTERN, PATTERNS as PATTERNS
from .pretokenization.pretokenizer import pretokenize as pretokenize, pretokenizer as pretokenizer
from .train.trainer import (
    BpeTrainer as BpeTrainer,
    MergeStep as MergeStep,
    iter_merges as iter_merges,
    train_bpe as train_bpe,
    trainer_from_file as trainer_from_file,
)
from .train.vocab import initial_vocab as initial_vocab, merge_budget as merge_budget
