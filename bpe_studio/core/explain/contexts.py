"""The texts the Reach rule tries a token's text in: characters around it, and texts the
normalizers turn into it.

What it does: :data:`CONTEXTS` and :data:`AFTER` stand before and after a token's text;
:func:`originals` gives texts a file's normalizers may turn into it (its capitals under
Lowercase, the pattern a Replace writes its content for, the text without the prefix a Prepend
adds); :func:`never_normalized_to` says which texts no normalized text holds (a capital
under a trailing Lowercase); :func:`given_in_a_context` encodes those texts, as its tokenizer
does, and says whether a token's id comes out. What it leaves out: how a token is cut
(``split_apart``), the merges (``reach``), the compatibility forms' many-to-one mappings
beyond the full-width forms of ASCII and a composed character's decomposed spelling (a
ligature "ﬁ", a circled "ⓐ", a superscript "²" are not tried).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from typing import Any

from ..encode.tokenizer import Tokenizer
from ..formats.hf.normalizers import normalize, normalizer_steps
from ..formats.hf.pipeline import HfPipeline

# A character of each class the patterns tell apart (letters of each case and none, digits,
# white space, line breaks, punctuation, an apostrophe; "s" ends a contraction too), put
# before and after a token whose text its pre-tokenizer cuts alone: where one context keeps
# it within a piece, the cut was the context's (o200k's "亚洲AV" alone is two pieces, one
# piece in "亚洲AVs"), and the merges decide.
CONTEXTS = ("", " ", "s", "X", "中", "0", "\n", ".", "'")
# After a token also a space then a letter or punctuation: a run of white space gives all but its
# last space to a piece before something else (GPT-2's \s+(?!\S)), and a normalizer may strip
# the run at the text's end, where the space alone would do.
AFTER = (*CONTEXTS, " s", " .")
_PER_CHARACTER = ("NFC", "NFD", "NFKC", "NFKD", "Lowercase")
_MOST_ORIGINALS = 8  # texts tried for one token's text, itself included
# The full-width forms of printable ASCII and the ideographic space, which NFKC and NFKD turn
# back into them: a text holding no ASCII that the compatibility forms make ASCII.
_FULL_WIDTH = {c: c + 0xFEE0 for c in range(0x21, 0x7F)} | {0x20: 0x3000}


def _flat(pipeline: HfPipeline) -> list[dict[str, Any]]:
    """The normalizer objects of the file, in the order they run (Sequences opened)."""
    out: list[dict[str, Any]] = []

    def walk(obj: Any) -> None:
        if isinstance(obj, dict) and obj.get("type") == "Sequence":
            for item in obj.get("normalizers") or []:
                walk(item)
        elif isinstance(obj, dict):
            out.append(obj)

    walk(json.loads(pipeline.spec)[0])
    return out


def _capitals(text: str) -> list[str]:
    """``text`` with every letter, and with its first letter only, in the capital that
    lowercases back to it."""

    def up(ch: str) -> str:
        big = ch.upper()
        return big if len(big) == 1 and big.lower() == ch else ch

    every = "".join(map(up, text))
    first = next((i for i, ch in enumerate(text) if up(ch) != ch), None)
    return [every] + ([] if first is None else [text[:first] + every[first] + text[first + 1 :]])


def _undone(obj: dict[str, Any], text: str, spellings: bool) -> list[str]:
    """Texts that the normalizer ``obj`` may turn into ``text``, besides ``text`` itself;
    ``spellings``: the Unicode forms' other spellings too (they normalize to what ``text``
    does, so they matter only where the original text is looked at: added tokens)."""
    kind = obj.get("type")
    if kind == "Lowercase":
        return _capitals(text)
    if kind == "Replace":
        pattern, content = obj.get("pattern") or {}, obj.get("content")
        written = pattern.get("String") if isinstance(pattern, dict) else None
        if isinstance(written, str) and written and isinstance(content, str) and content:
            return [text.replace(content, written)] if content in text else []
    if kind == "Prepend":
        prefix = obj.get("prepend")
        if isinstance(prefix, str) and prefix and text.startswith(prefix):
            return [text[len(prefix) :]]
    undone: list[str] = []
    if not spellings:
        return undone
    if kind in ("NFC", "NFKC"):
        # A composed character is written from its decomposed spelling too ("o" + U+030B
        # to "ő"), which an added token looked for in the original text does not match.
        undone.append(unicodedata.normalize("NFD", text))
    if kind in ("NFKC", "NFKD"):
        undone.append(text.translate(_FULL_WIDTH))
    return [t for t in dict.fromkeys(undone) if t != text]


def originals(pipeline: HfPipeline | None, text: str, spellings: bool = False) -> list[str]:
    """``text`` and texts that the pipeline's normalizers may turn into it (each normalizer
    undone, the last one first), at most a few; ``spellings``: with the Unicode forms'
    other spellings of it (decomposed, full-width)."""
    found = [text]
    if pipeline is None or not pipeline.normalizers:
        return found
    for obj in reversed(_flat(pipeline)):
        for t in list(found):
            for other in _undone(obj, t, spellings):
                if other not in found and len(found) < _MOST_ORIGINALS:
                    found.append(other)
    return found


def writes_capitals_again(pipeline: HfPipeline | None) -> bool:
    """Whether a compatibility form (NFKC, NFKD) follows a Lowercase: it writes capitals
    ("ℌ" to "H", "𝐀" to "A") from characters no undoing of the normalizers tries, so a
    text these normalizers give may be one no tried text becomes."""
    if pipeline is None or not pipeline.normalizers:
        return False
    kinds = [obj.get("type") for obj in _flat(pipeline)]
    lowered = next((i for i, kind in enumerate(kinds) if kind == "Lowercase"), len(kinds))
    return any(kind in ("NFKC", "NFKD") for kind in kinds[lowered + 1 :])


def never_normalized_to(pipeline: HfPipeline | None) -> Callable[[str], bool] | None:
    """A test of texts that no text the normalizers give holds, or None when it cannot be
    told cheaply: what the last Unicode form or Lowercase changes, unless a Replace or
    Prepend after it writes that character (Strip only takes white space away)."""
    if pipeline is None or not pipeline.normalizers:
        return None
    objs = _flat(pipeline)
    kinds = [obj.get("type") for obj in objs]
    if all(kind in _PER_CHARACTER for kind in kinds):
        if writes_capitals_again(pipeline):
            # subtle: the chain run on its own output may change it again (the review: "H"
            # called never output): only the last step's output is sure to be as it leaves it.
            final = normalizer_steps(objs[-1])
            return lambda text: normalize(final, text) != text
        steps = pipeline.normalizers
        return lambda text: normalize(steps, text) != text
    last = max((i for i, kind in enumerate(kinds) if kind in _PER_CHARACTER), default=None)
    if last is None:
        return None
    written: set[str] = set()
    for obj in objs[last + 1 :]:
        added = obj.get("content") if obj.get("type") == "Replace" else obj.get("prepend")
        if obj.get("type") == "Replace" and not added:
            return None  # subtle: a deletion joins characters the form saw apart
        written |= set(added) if isinstance(added, str) else set()
    if kinds[last] == "Lowercase":
        # Rust's lowercasing goes one character at a time: each changed one is never output.
        return lambda text: any(ch not in written and ch.lower() != ch for ch in text)
    form = normalizer_steps(objs[last])
    return lambda text: not written & set(text) and normalize(form, text) != text


def given_in_a_context(tokenizer: Tokenizer, token_id: int, text: str) -> bool:
    """Whether encoding ``text``, or a text the normalizers turn into it, between some of
    :data:`CONTEXTS` and :data:`AFTER` gives ``token_id`` (what tokenizers does around added
    tokens whose match depends on what stands beside them, or that are looked for in the
    original text only while the normalizers may make their text)."""
    for original in originals(tokenizer.hf_pipeline, text, spellings=True):
        for before in CONTEXTS:
            for after in AFTER:
                if token_id in tokenizer.encode(before + original + after):
                    return True
    return False
