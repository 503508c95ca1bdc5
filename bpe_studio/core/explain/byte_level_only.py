"""The explanations that replay this project's own encoder refuse a tokenizer it does not run.

What it does: :func:`require_byte_level` raises ``TypeError`` in the views' own words
(``ForeignTokenizer.not_explained``) for a tokenizer ``tokenizers`` runs, which
``open_tokenizer`` gives as readily as a byte-level one: merge trees, step-through and Reach
replay merges by rank, which such a tokenizer does not expose. What it leaves out: the views,
which ask ``not_explained`` themselves and show the line.
"""

from __future__ import annotations

from ..encode.foreign import ForeignTokenizer


def require_byte_level(tokenizer: object, what: str) -> None:
    """``TypeError`` saying that ``what`` ("The merge tree") applies to byte-level BPE, for a
    tokenizer run by ``tokenizers``; nothing for any other."""
    if isinstance(tokenizer, ForeignTokenizer):
        raise TypeError(tokenizer.not_explained(what))
