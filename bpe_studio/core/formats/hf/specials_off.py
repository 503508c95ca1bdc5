"""A ``tokenizer.json`` run by ``tokenizers`` written with its special tokens read as text.

What it does: :func:`special_tokens_as_text` rewrites the parsed file of a tokenizer opened
with ``no_specials`` (``tokenizers``' ``encode_special_tokens``, which no file holds) so that
``tokenizers`` gives the same ids: a special added token whose id the model's vocabulary
holds under its text is left out of ``added_tokens`` (its text then reaches the model, as it
did; its id stays the model's). Marking it not special would not do: ``tokenizers`` matches
every added token, special or not. One the model lacks has no id but the added token's: it
stays, matched, and a LossyFormatWarning names it. What it leaves out: byte-level BPE this
project reads itself (``tokenizer_json.write_hf``).
"""

from __future__ import annotations

import warnings
from typing import Any

from ...text.display import first_few
from ..base.lossy import LossyFormatWarning
from .tokenizer_json import warn_hidden


def _model_id(model: Any, content: str) -> int | None:
    """The id the model's vocabulary gives ``content`` (a Unigram's is a list of
    ``[piece, score]``, its index the id), or None."""
    vocab = model.get("vocab") if isinstance(model, dict) else None
    if isinstance(vocab, dict):
        found = vocab.get(content)
        return found if isinstance(found, int) else None
    if isinstance(vocab, list):
        return next(
            (i for i, e in enumerate(vocab) if isinstance(e, list) and e[:1] == [content]), None
        )
    return None


def special_tokens_as_text(obj: dict[str, Any], where: str) -> dict[str, Any]:
    """``obj`` (a parsed ``tokenizer.json``, changed in place and returned) with the special
    added tokens the model holds under their ids left out, warning (LossyFormatWarning,
    naming ``where``) of the others, and of added tokens that a special token left out hid
    (``tokenizer_json.warn_hidden``)."""
    added = obj.get("added_tokens") or []
    kept, left_out, matched = [], [], []
    for token in added:
        if not token.get("special"):
            kept.append(token)
        elif _model_id(obj.get("model"), token.get("content")) == token.get("id"):
            left_out.append(str(token["content"]))
        else:
            kept.append(token)
            matched.append(str(token["content"]))
    obj["added_tokens"] = kept
    warn_hidden(left_out, [str(t["content"]) for t in kept], where, stacklevel=4)
    if matched:
        shown = first_few(matched, 5)
        warnings.warn(
            f"{where}: special token(s) {shown} are written as special added tokens, which "
            "tokenizers matches in text: this tokenizer reads them as text (no_specials), "
            "which no file can say (the model's vocabulary has no id for them); open it "
            "without no_specials to save it as it is",
            LossyFormatWarning,
            stacklevel=3,
        )
    return obj
