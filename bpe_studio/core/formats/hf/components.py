"""How a ``tokenizer.json`` treats text, read into what the tokenizer runs.

What it does: :func:`read_components` reads the ``normalizer``, ``pre_tokenizer``,
``added_tokens`` and ``post_processor`` of a byte-level BPE file. When the file only splits
text with one regex (or ByteLevel's own) and has plain added tokens, the result is a pattern
for the tokenizer's usual pre-tokenizer (its fast paths included); otherwise an
:class:`~.pipeline.HfPipeline` as well. Either way the text is cut exactly as ``tokenizers``
cuts it. What it leaves out: the model (vocabulary, merges: ``tokenizer_json``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...pretokenization.scan_patterns import isolated
from .added_tokens import AddedToken, read_added
from .normalizers import normalizer_steps
from .onig import translate
from .pipeline import HfPipeline
from .pre_tokenizers import pre_tokenizer_steps
from .template import Template, read_template


@dataclass(frozen=True)
class Components:
    """``pattern``: what the tokenizer's pre-tokenizer is built from (a name or a regex);
    ``pipeline``: the file's, not ``needed`` when that pattern alone cuts text as it does."""

    pattern: str
    pipeline: HfPipeline | None
    template: Template | None
    added: tuple[AddedToken, ...]


def _byte_level_plain(obj: Any, use_regex: bool) -> bool:
    return (
        isinstance(obj, dict)
        and obj.get("type") == "ByteLevel"
        and not obj.get("add_prefix_space", True)
        and bool(obj.get("use_regex", True)) == use_regex
    )


def _split_then_bytes(pre: Any) -> tuple[str, tuple[Any, bool]] | None:
    """The regex and (behavior, invert) of a pre-tokenizer that is one regex Split then
    ByteLevel without its regex; None for any other."""
    steps = (
        pre.get("pretokenizers")
        if isinstance(pre, dict) and pre.get("type") == "Sequence"
        else None
    )
    if not isinstance(steps, list) or len(steps) != 2 or not _byte_level_plain(steps[1], False):
        return None
    split = steps[0]
    if not isinstance(split, dict) or split.get("type") != "Split":
        return None
    pattern = split.get("pattern")
    regex = pattern.get("Regex") if isinstance(pattern, dict) else None
    if not isinstance(regex, str):
        return None
    return regex, (split.get("behavior"), bool(split.get("invert")))


def single_pattern(pre: Any, named: dict[str, str]) -> str | None:
    """The pattern that splits text as ``pre`` does, when one regex does: ByteLevel's own
    ("gpt2"), or one Isolated Split then ByteLevel without its regex (``named`` maps
    Oniguruma spellings of named patterns to their names). None otherwise."""
    if _byte_level_plain(pre, True):
        return "gpt2"
    steps = (
        pre.get("pretokenizers")
        if isinstance(pre, dict) and pre.get("type") == "Sequence"
        else None
    )
    if isinstance(steps, list) and len(steps) == 1 and _byte_level_plain(steps[0], True):
        return "gpt2"
    split = _split_then_bytes(pre)
    if split is None or split[1] != ("Isolated", False):
        return None
    regex = split[0]
    if regex in named:
        return named[regex]
    translated = translate(regex)
    if translated.nullable or translated.refers_back:
        # Its pipeline cuts such a Split; one regex would hold it twice (``isolated``).
        return None
    # Isolated also keeps the text between matches, one piece per gap.
    return isolated(translated.pattern)


def _kinds(component: Any) -> str:
    """A normalizer's or pre-tokenizer's types, as the file names them ("NFC", "Sequence of
    Split, ByteLevel")."""
    if not isinstance(component, dict):
        return repr(component)
    inner = component.get("normalizers") or component.get("pretokenizers")
    kind = str(component.get("type"))
    if isinstance(inner, list):
        kind += " of " + ", ".join(
            str(c.get("type")) if isinstance(c, dict) else "?" for c in inner
        )
    return kind


# How only_a_file_says ends when the pre-tokenizer is no one regex (which then names none).
SPLITS_OTHERWISE = "splits text otherwise than one regex does"


def only_a_file_says(pipeline: HfPipeline) -> str | None:
    """What ``pipeline`` does to text that only a ``tokenizer.json`` can say, in words; None
    when it cuts text into one regex's matches and drops the rest, as tiktoken's ``findall``
    does: no normalizer, added tokens without flags, all found in one pass (``normalized``
    alike), and one Split that keeps its matches only (Removed and inverted; how ``write_hf``
    spells a custom pattern) of a regex that never matches "" (Oniguruma and Python step past
    an empty match differently), then ByteLevel without its regex. Such a file's pattern
    (``pipeline.pretokenizer().pattern``) says all a tiktoken file needs to; the pipeline
    stays only for encoding here, where that regex would refuse the text it drops."""
    normalizer, pre, _ = json.loads(pipeline.spec)
    if pipeline.normalizers:
        return f"its normalizer ({_kinds(normalizer)}) changes the text first"
    for token in pipeline.added:
        flags = [f for f in ("lstrip", "rstrip", "single_word") if getattr(token, f)]
        if flags:
            return f"added token {token.content!r} has {' and '.join(flags)}"
    by_flag: dict[bool, AddedToken] = {}
    for token in pipeline.added:
        by_flag.setdefault(token.normalized, token)
    if len(by_flag) > 1:
        return (
            f"added tokens {by_flag[False].content!r} (normalized: false) and "
            f"{by_flag[True].content!r} (normalized: true) are looked for in two passes"
        )
    split = _split_then_bytes(pre)
    if split is None or split[1] != ("Removed", True):
        return f"its pre_tokenizer ({_kinds(pre)}) {SPLITS_OTHERWISE}"
    if translate(split[0]).nullable:
        return f"its Split's regex {split[0]!r} can match empty text"
    return None


def read_components(obj: dict[str, Any], name: str, named: dict[str, str]) -> Components:
    """The components of a parsed ``tokenizer.json`` (``name``: the file, for messages).
    Raises ValueError naming the file and the component for anything not reproduced here."""
    try:
        normalizers = normalizer_steps(obj.get("normalizer"))
        steps = pre_tokenizer_steps(obj.get("pre_tokenizer"))
        pattern = single_pattern(obj.get("pre_tokenizer"), named)
        template = read_template(obj.get("post_processor"))
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None
    raw_added = obj.get("added_tokens", [])
    if not isinstance(raw_added, list):
        # subtle: tokenizers refuses the file ("expected a sequence"); read as no added
        # tokens, a null or {} there lost every special token the file has.
        shown = json.dumps(raw_added, ensure_ascii=False)
        raise ValueError(
            f"{name}: added_tokens: expected a list, as tokenizers requires; got {shown:.80}"
        )
    added = read_added(raw_added, normalizers, name)
    plain = all(t.plain for t in added) and len({t.normalized for t in added}) <= 1
    spec = json.dumps([obj.get(k) for k in ("normalizer", "pre_tokenizer", "added_tokens")])
    if pattern is not None and not normalizers and plain:
        fast = HfPipeline(normalizers, steps, added, spec, needed=False)
        return Components(pattern, fast, template, added)
    pipeline = HfPipeline(normalizers, steps, added, spec)
    return Components(pipeline.pretokenizer().pattern, pipeline, template, added)
