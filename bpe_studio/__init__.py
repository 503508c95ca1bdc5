"""BPE Studio: train, inspect and watch byte-level BPE tokenizers learn.

``from bpe_studio import train_bpe, Tokenizer`` is the library; ``bpe-studio`` the app and
command line. Importing this package never loads Qt."""

from .core import MergeStep, Tokenizer, train_bpe

__all__ = ["MergeStep", "Tokenizer", "train_bpe"]
__version__ = "0.1.0"
