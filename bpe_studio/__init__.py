"""BPE Studio: train, inspect and watch byte-level BPE tokenizers learn.

``from bpe_studio import train_bpe, Tokenizer`` is the library; ``bpe-studio`` the app and
command line. Importing this package never loads Qt."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .core import MergeStep, Tokenizer, train_bpe

__all__ = ["MergeStep", "Tokenizer", "train_bpe"]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # Imported on first use, as in ``core`` (its docstring says why).
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import core

    value = getattr(core, name)
    globals()[name] = value
    return value
