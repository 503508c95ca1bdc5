"""Which tokens pre-tokenization never gives whole: the Reach rule's first test.

What it does: :func:`split_apart` lists the tokens whose text the tokenizer's pre-tokenizer
never leaves within one piece, whatever stands around it, or whose characters its normalizers
change (a GPT-2 vocabulary read with cl100k's pattern: " 2016"; a WhitespaceSplit file's
" the"; a lowercasing file's "The"). Such a token never reaches the merges whole, so the
encoder never gives it. What it leaves out: the merges (``reach``), tokens whose bytes are no
text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import regex

from ..encode.tokenizer import Tokenizer
from ..formats.hf.normalizers import normalize
from ..formats.hf.pre_tokenizers import step_texts
from .contexts import AFTER, CONTEXTS, never_normalized_to, originals, writes_capitals_again

_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")
_ASCII_DIGITS = str.maketrans("123456789", "000000000")
_CHECKS_BETWEEN_CALLS = 256  # tokens tested between two calls of ``between_slices``


def split_apart(
    tokenizer: Tokenizer, ids: list[int], between_slices: Callable[[], object] | None = None
) -> set[int]:
    """The tokens of ``ids`` that the pre-tokenizer never leaves within one piece, or whose
    text the normalizers change; ``between_slices`` is called every few hundred tokens (a
    viewer's background thread lets its GUI thread run there)."""
    pre = tokenizer.pre_tokenizer
    pipeline = tokenizer.hf_pipeline
    each_character = pipeline is None or pipeline.normalizes_each_character()
    never = never_normalized_to(pipeline)
    unsure = writes_capitals_again(pipeline)
    if pipeline is None:
        match = pre.compiled.match

        def whole(text: str) -> bool:
            m = match(text)
            return m is not None and m.end() == len(text)
    else:
        findall = pre.findall

        def whole(text: str) -> bool:
            return findall(text) == [text]

    # subtle: a pipeline's steps run one after another, slowly; where it splits with one
    # regex (or has no pipeline), that regex's matches in the normalized text are the pieces.
    patterns = None if pipeline is None else pipeline.split_patterns()
    if pipeline is None:
        one: regex.Pattern[str] | None = pre.compiled
    else:
        one = regex.compile(patterns[0]) if patterns is not None and len(patterns) == 1 else None

    def within(text: str, before: str, original: str, after: str) -> bool:
        """Whether a piece of ``before + original + after``, normalized, holds ``text``."""
        whole_text = before + original + after
        normalized = whole_text
        if pipeline is not None:
            normalized = normalize(pipeline.normalizers, whole_text)
            if one is None:
                return any(text in piece for piece in step_texts(pipeline.steps, normalized))
        assert one is not None
        if normalized != whole_text or original != text:
            return any(text in m.group() for m in one.finditer(normalized))
        # subtle: the text as it stands is cut by the one regex: the first piece that reaches
        # into the token says whether it holds the token, and the rest need not be found.
        k, n = len(before), len(text)
        for m in one.finditer(normalized):
            start, end = m.span()
            if end > k and start < end:  # an empty match is no piece (Pretokenizer.findall)
                return start <= k and k + n <= end
        return False

    def within_a_piece(text: str) -> bool:
        # The token must be one piece's text or inside it, as the normalizers leave it: a
        # context's normalized piece holds it (a Replace rewrites a line break wherever it
        # stands, a Lowercase in a Sequence with a Strip still lowercases "The").
        if never is not None and never(text):
            return False
        tried = originals(pipeline, text)
        if unsure and pipeline is not None:
            made = [normalize(pipeline.normalizers, original) for original in tried]
            if not any(text in m for m in made):
                return True  # none becomes it, though one not tried may: left to the merges
        return any(
            within(text, before, original, after)
            for original in tried
            for before in CONTEXTS
            for after in AFTER
        )

    # subtle: where no pattern names a digit and the normalizers treat every digit alike,
    # "2016" and "1999" are cut alike in every context: one answer serves all the numbers
    # of a vocabulary (thousands in o200k's) where each would try every context.
    digits_alike = each_character and not _names_digits(tokenizer)
    answers: dict[str, bool] = {}
    split = set()
    for checked, i in enumerate(ids):
        if between_slices is not None and checked % _CHECKS_BETWEEN_CALLS == 0:
            between_slices()
        try:
            text = tokenizer.vocab[i].decode("utf-8")
        except UnicodeDecodeError:
            continue
        if not text or whole(text):
            continue
        key = text.translate(_ASCII_DIGITS) if digits_alike else text
        apart = answers.get(key)
        if apart is None:
            apart = answers[key] = not within_a_piece(text)
        if apart:
            split.add(i)
    return split


def _names_digits(tokenizer: Tokenizer) -> bool:
    """Whether a pattern that cuts the text may name a digit (or cannot be told)."""
    pipeline = tokenizer.hf_pipeline
    patterns = [tokenizer.pre_tokenizer.pattern] if pipeline is None else pipeline.split_patterns()
    if patterns is None:
        return True
    return any(re.search(r"[0-9]", _QUANTIFIER.sub("", p)) for p in patterns)
