"""The compiled scanner of a ``tokenizer.json`` pipeline, where one cuts its text exactly.

What it does: :func:`pipeline_scanner` reads a pipeline's pre-tokenizer (the JSON it was read
from, ``HfPipeline.spec``) as a list of Isolated splits and asks ``pretokenization.scanner``
for a compiled scanner of them: a ``Split`` by a regex, Isolated and not inverted;
``Digits`` with ``individual_digits``; ``ByteLevel`` last without a prefix space (its regex,
GPT-2's, as a last step when ``use_regex``). The normalizers run in Python before it (each
stretch between special tokens, as the pipeline does). Anything else, and added tokens with
flags (``lstrip``, ``rstrip``, ``single_word``) or ``normalized`` (found in normalized text,
so not before normalizing), keeps the Python path: None. What it leaves out: the kernels
and the Python path (``formats.hf.pipeline``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...formats.hf.onig import translate
from ...pretokenization.scan_patterns import DIGIT_PATTERN, isolated
from ...pretokenization.scanner import compiled_steps

if TYPE_CHECKING:
    from ...formats.hf.pipeline import HfPipeline
    from ...pretokenization.scanner import Scanner


def step_patterns(pre_tokenizer: Any) -> list[str] | None:
    """The patterns of the Isolated splits that cut text as ``pre_tokenizer`` (a parsed
    ``pre_tokenizer`` object) does, in order, or None when it is not such a list."""
    items = pre_tokenizer.get("pretokenizers") if isinstance(pre_tokenizer, dict) else None
    if not (isinstance(pre_tokenizer, dict) and pre_tokenizer.get("type") == "Sequence"):
        items = [pre_tokenizer]
    if not isinstance(items, list) or not items:
        return None
    patterns: list[str] = []
    for i, item in enumerate(items):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "ByteLevel":
            if i != len(items) - 1 or item.get("add_prefix_space", True):
                return None
            if item.get("use_regex", True):
                patterns.append("gpt2")
        elif kind == "Split":
            pattern = item.get("pattern")
            source = pattern.get("Regex") if isinstance(pattern, dict) else None
            if item.get("behavior") != "Isolated" or item.get("invert") or not source:
                return None
            try:
                patterns.append(isolated(translate(source).pattern))
            except ValueError:
                return None
        elif kind == "Digits" and item.get("individual_digits"):
            patterns.append(isolated(DIGIT_PATTERN))
        else:
            return None
    return patterns or None


def pipeline_scanner(pipeline: HfPipeline) -> Scanner | None:
    """The compiled scanner that cuts each normalized stretch of text as ``pipeline`` does,
    or None (see the module docstring)."""
    if any(not t.plain or t.normalized for t in pipeline.added):
        return None
    try:
        _, pre_tokenizer, _ = json.loads(pipeline.spec)
    except (ValueError, TypeError):
        return None
    patterns = step_patterns(pre_tokenizer)
    return None if patterns is None else compiled_steps(patterns)
