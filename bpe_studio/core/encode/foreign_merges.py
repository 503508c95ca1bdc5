"""The merges of a BPE model run by ``tokenizers`` (SentencePiece-style BPE: Llama 2, Gemma).

What it does: :class:`BpeMerges` reads the model's merges in rank order, tells the rank of
the merge that made each token (:meth:`BpeMerges.rank_of`), and writes the tokenizer cut to
its first ``k`` merges (:meth:`BpeMerges.truncated`): it encodes as ``tokenizers`` would had
training stopped after ``k`` merges, and the ids of the tokens later merges make are left out
of its vocabulary. What it leaves out: WordPiece and Unigram, which have no merges
(``foreign`` refuses them).

subtle: the model keeps its whole vocabulary, only the merges are cut. A BPE model reaches a
token of two characters or more only by merging (it looks single characters up, then merges),
so a token of a later merge is never made; and removing it would leave gaps in the ids, which
``tokenizers`` fills with the added tokens when it reads the file (moving their ids). A model
that looks whole words up (``ignore_merges``) would find them: it is refused.
"""

from __future__ import annotations

import json
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tokenizers


def is_bpe(backend: tokenizers.Tokenizer) -> bool:
    from tokenizers import models

    return isinstance(backend.model, models.BPE)


class BpeMerges:
    """The merges of ``backend``'s BPE model (as the file writes its tokens: ``▁t``)."""

    def __init__(self, backend: tokenizers.Tokenizer) -> None:
        self._backend = backend
        self.pairs: list[tuple[str, str]] = [_pair(m) for m in _raw_merges(backend)]

    def __len__(self) -> int:
        return len(self.pairs)

    @cached_property
    def _rank_of_id(self) -> dict[int, int]:
        """merged id -> the rank of the first merge that makes it."""
        token_to_id = self._backend.token_to_id
        ranks: dict[int, int] = {}
        for rank, (a, b) in enumerate(self.pairs):
            idx = token_to_id(a + b)
            if idx is not None:
                ranks.setdefault(idx, rank)
        return ranks

    def rank_of(self, token_id: int) -> int | None:
        """The rank of the merge that made ``token_id``; None for a token no merge makes."""
        return self._rank_of_id.get(token_id)

    def truncated(self, k: int) -> tuple[str, frozenset[int]]:
        """The tokenizer's JSON with only the first ``k`` merges, and the ids of the tokens
        only later merges make (see the module docstring)."""
        obj: dict[str, Any] = json.loads(self._backend.to_str())
        model = obj["model"]
        if model.get("ignore_merges"):
            raise ValueError(
                "truncated(k): this BPE model looks whole words up in its vocabulary "
                "(ignore_merges), so leaving merges out does not leave their tokens out"
            )
        made_here = {a + b for a, b in self.pairs[:k]}
        later = {a + b for a, b in self.pairs[k:]} - made_here
        vocab: dict[str, int] = model["vocab"]
        dropped = frozenset(vocab[token] for token in later if token in vocab)
        model["merges"] = [list(pair) for pair in self.pairs[:k]]
        return json.dumps(obj, ensure_ascii=False), dropped


def _raw_merges(backend: tokenizers.Tokenizer) -> list[Any]:
    """The model's ``merges`` as its JSON has them. subtle: only that part is parsed (the
    vocabulary before it is most of the text); ``"merges":`` unquoted can only be that key,
    the last one of the model, and anything else falls back to parsing the whole."""
    state = backend.model.__getstate__().decode("utf-8")
    at = state.rfind('"merges":')
    if at >= 0:
        try:
            found, end = json.JSONDecoder().raw_decode(state, at + len('"merges":'))
        except json.JSONDecodeError:
            found, end = None, -1
        if isinstance(found, list) and state[end:].strip() == "}":
            return found
    merges = json.loads(state).get("merges")
    return merges if isinstance(merges, list) else []


def _pair(merge: Any) -> tuple[str, str]:
    """A merge as the file writes it: ``["a", "b"]``, or the older ``"a b"``."""
    parts = merge.split(" ") if isinstance(merge, str) else merge
    if not isinstance(parts, list) or len(parts) != 2:
        raise ValueError(f"model.merges: expected 'a b' or [a, b], got {merge!r}")
    return str(parts[0]), str(parts[1])
