"""What a ``tokenizer.json`` that drops text left out of ``encode``'s input, for its summary.

What it does: a pre-tokenizer step that removes text (a Split that keeps its matches only, as
``train --format hf`` writes a custom regex; WhitespaceSplit) drops what it does not keep, as
``tokenizers`` does: no id stands for it. :func:`drops_text` tells such a tokenizer,
:func:`kept_bytes` counts the bytes its ids stand for (from the ids file, not reading the
input again) and :func:`dropped_note` says how much of the input they leave out;
:func:`drops_uncounted` tells one that drops text where that count cannot be made, and
:func:`deleted_notes` says where its normalizer deletes characters (StripAccents, a Replace by
"", a SentencePiece charsmap's deleting rules), which no count can tell either. What it
leaves out: where that text was (``encode`` names no character, only how much).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np

from ..core.encode.foreign import AnyTokenizer, ForeignTokenizer
from ..core.explain.usage import UNCOUNTED_WORDS, deleting_words, dropped_words
from ..core.explain.usage import drops_uncounted as usage_drops_uncounted
from ..core.formats.base.data import TokenizerData
from ..core.formats.hf.kind import noted_dropping
from ..core.pretokenization.names import shown_pattern
from .sources import pipeline_of, split_pattern

# Ids are read from the file this many at a time.
_BLOCK = 1 << 20


def drops_text(tok: AnyTokenizer | TokenizerData) -> bool:
    """Whether ``tok`` drops text and the bytes of its ids tell how much: a pipeline with a
    step that removes text, and neither a normalizer nor a prefix space, which change the
    text's bytes otherwise."""
    if isinstance(tok, ForeignTokenizer):
        return False
    pipeline = pipeline_of(tok)
    return pipeline is not None and pipeline.drops_text


def drops_uncounted(tok: AnyTokenizer | TokenizerData) -> bool:
    """Whether ``tok`` drops text where the bytes of its ids do not tell how much: a
    normalizer or a prefix space changes the text's bytes too, or ``tokenizers`` runs it
    (``usage.drops_uncounted``, which ``inspect`` and the app's lab go by too); for its own
    pipeline only where its loading note says what it drops (a step that removes text may
    remove none)."""
    if not isinstance(tok, TokenizerData):
        return usage_drops_uncounted(tok)
    if not noted_dropping(tok.notes):
        return False
    pipeline = pipeline_of(tok)
    return pipeline is not None and pipeline.removes_text and not pipeline.drops_text


def kept_bytes(vocab: Mapping[int, bytes], ids_path: str) -> int:
    """The bytes the ids in the ``.npy`` at ``ids_path`` stand for, together."""
    lengths = np.zeros(max(vocab, default=0) + 1, np.int64)
    for idx, token in vocab.items():
        lengths[idx] = len(token)
    ids = np.load(ids_path, mmap_mode="r")
    return sum(int(lengths[ids[at : at + _BLOCK]].sum()) for at in range(0, ids.size, _BLOCK))


def dropped_note(tok: AnyTokenizer | TokenizerData, dropped: int | None, total: int) -> str:
    """The summary's note: how many of the input's ``total`` bytes ``tok`` dropped (None:
    it drops text that cannot be counted, :func:`drops_uncounted`)."""
    pattern = split_pattern(tok)
    what = (
        "tokenizer.json's pre-tokenizer" if pattern is None else f"pattern {shown_pattern(pattern)}"
    )
    said = UNCOUNTED_WORDS if dropped is None else dropped_words(dropped, total)
    return f"note: the {what} {said}"


def deleted_notes(tok: AnyTokenizer | TokenizerData) -> list[str]:
    """The summary's notes where ``tok``'s normalizer deletes characters, as ``inspect`` and
    the app's lab say it (``usage.deleting_words``); none where it deletes none."""
    if isinstance(tok, ForeignTokenizer):
        steps = tok.backend.normalizer  # (its JSON alone: the file's may be large)
        normalizer = None if steps is None else json.loads(steps.__getstate__())
    else:
        pipeline = tok.pipeline if isinstance(tok, TokenizerData) else tok.hf_pipeline
        normalizer = None if pipeline is None else json.loads(pipeline.spec)[0]
    return [f"note: the tokenizer.json's {said}" for said in deleting_words(normalizer)]
