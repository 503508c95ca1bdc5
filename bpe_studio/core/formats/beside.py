"""Whether the ``tokenizer.json`` beside a GPT-2 ``vocab.json`` would encode otherwise.

What it does: :func:`tokenizer_json_beside` says, in one line, when a GPT-2 vocabulary was
named (by the command line's ``--tokenizer``, or picked in the app) while the model's
``tokenizer.json`` sits beside it and encodes otherwise: Qwen2's, RoBERTa's and StarCoder's
Hub snapshots hold both, and ``vocab.json`` + ``merges.txt`` carry no pattern, no normalizer
and none of the added tokens, so their ids are not the model's. Its folder loads the
``tokenizer.json`` (``files._load_folder``); naming the ``vocab.json`` is no error, so the
callers warn. It compares only what changes the ids and is read without the vocabulary: the
other kind of tokenizer, the pattern or the pipeline, special and added tokens,
``ignore_merges``, the post-processor's template. What it leaves out: loading either file
(``files``), and whether to say it (``Tokenizer.from_files`` names both files: it says
nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..pretokenization.names import shown_pattern
from ..pretokenization.scan_patterns import unwrapped
from .base.data import PATTERNS, TokenizerData
from .base.json_errors import json_or_none
from .files import patterns_agree, same_pattern
from .hf.components import SPLITS_OTHERWISE, only_a_file_says
from .hf.kind import kind_of
from .hf.tokenizer_json import file_components

_SHOWN_TOKENS = 3  # tokens a reason names; the rest are counted


def tokenizer_json_beside(vocab_file: Path, data: TokenizerData) -> str | None:
    """Why the ``tokenizer.json`` beside ``vocab_file`` (read as GPT-2 files into ``data``)
    gives other ids, and how to load it instead; None when there is none, when it is
    another tokenizer (another number of merges: the choice was between two), when it cannot
    be read here, or when it encodes as ``data`` does."""
    hf = vocab_file.with_name("tokenizer.json")
    if not hf.is_file():
        return None
    obj = json_or_none(hf)
    model = obj.get("model") if isinstance(obj, dict) else None
    if not isinstance(model, dict):
        return None
    kind = kind_of(obj)
    if kind is not None:
        reasons = [f"it is a {kind} tokenizer, of which these files are a part"]
    else:
        merges = model.get("merges")
        if not isinstance(merges, list) or len(merges) != len(data.merges):
            return None
        try:
            reasons = _differences(obj, hf, data)
        except ValueError:
            return None  # a file this project cannot read is no other way to load it here
    if not reasons:
        return None
    return (
        f"{vocab_file}: the model's tokenizer.json beside it encodes otherwise "
        f"({'; '.join(reasons)}), so these GPT-2 files give other ids than the model's: "
        f"to load it, name it ({hf}) or the folder"
    )


def _differences(obj: dict, hf: Path, data: TokenizerData) -> list[str]:
    """What in the parsed ``tokenizer.json`` ``obj`` makes its ids differ from ``data``'s."""
    parts = file_components(obj, str(hf))
    reasons = []
    pipeline = parts.pipeline
    said = only_a_file_says(pipeline) if pipeline is not None and pipeline.needed else None
    if said is not None:
        reasons.append(said)
    # A pre-tokenizer said to split otherwise than one regex has no pattern to name again.
    splits_otherwise = said is not None and said.endswith(SPLITS_OTHERWISE)
    # subtle: a pipeline's one regex is read in its Isolated spelling ("(?:P)|..."), which
    # names no pattern: GPT-2's own regex beside a normalizer was "another pattern".
    theirs_named = same_pattern(unwrapped(parts.pattern) or parts.pattern)
    # A --pattern that is the file's own Split regex reads as its translation: the same.
    if not splits_otherwise and not patterns_agree(data.pattern, parts.pattern, applied=True):
        # A regex that is no named pattern is too long for one line of news.
        name = theirs_named
        theirs = f"pattern {name}" if name in PATTERNS else "another pattern"
        reasons.append(f"{theirs}, not {shown_pattern(data.pattern)}")
    special = [t.content for t in parts.added if t.special]
    added = {t.content for t in parts.added}
    if text := [t for t in special if t not in data.special_tokens]:
        reasons.append(f"special {_tokens(text)}, read as text from these files")
    if extra := [t for t in data.special_tokens if t not in added]:
        reasons.append(f"{_tokens(extra)} ordinary there, special from these files")
    plain = [t.content for t in parts.added if not t.special]
    if plain := [t for t in plain if t not in data.special_tokens]:
        reasons.append(f"added {_tokens(plain)}, matched whole there")
    if obj["model"].get("ignore_merges") and not data.ignore_merges:
        reasons.append("model.ignore_merges")
    if parts.template is not None and data.template is None:
        reasons.append(f"its post-processor adds {parts.template.text!r}")
    return reasons


def _tokens(tokens: Sequence[str]) -> str:
    """``token '<a>'`` or ``tokens '<a>', '<b>' and 5 more``."""
    shown = ", ".join(map(repr, tokens[:_SHOWN_TOKENS]))
    more = len(tokens) - _SHOWN_TOKENS
    if len(tokens) == 1:
        return f"token {shown}"
    return f"tokens {shown}" + (f" and {more} more" if more > 0 else "")
