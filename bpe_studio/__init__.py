"""BPE Studio: train, inspect and watch byte-level BPE tokenizers learn.

``from bpe_studio import train_bpe, Tokenizer`` is the library; ``bpe-studio`` the app and
command line. Importing this package never loads Qt."""

from __future__ import annotations

# subtle: not typing's: importing typing is the longest part of this package's import, and an
# interrupt that lands during it, before the command has started, would be a traceback.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .core import MergeStep, Tokenizer, train_bpe

__all__ = ["MergeStep", "Tokenizer", "train_bpe"]
__version__ = "0.1.0"

# subtle: hidden from type checkers, which would otherwise type any name imported from here
# (a typo such as "Tokeniser" included) as this function's return type, with no error.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        # Imported on first use, as in ``core`` (its docstring says why).
        if name not in __all__:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from . import core

        value = getattr(core, name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        # help(), tab completion: the lazy names too.
        return sorted(set(globals()) | set(__all__))
