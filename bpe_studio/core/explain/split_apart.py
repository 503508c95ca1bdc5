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

# A character of each class the patterns tell apart (letters of each case and none, digits,
# white space, line breaks, punctuation, an apostrophe; "s" ends a contraction too), put
# before and after a token whose text its pre-tokenizer cuts alone: where one context keeps
# it within a piece, the cut was the context's (o200k's "亚洲AV" alone is two pieces, one
# piece in "亚洲AVs"), and the merges decide.
_CONTEXTS = ("", " ", "s", "X", "中", "0", "\n", ".", "'")
# After a token also a space then a letter or punctuation: a run of white space gives all but its
# last space to a piece before something else (GPT-2's \s+(?!\S)), and a normalizer may strip
# the run at the text's end, where the space alone would do.
_AFTER = (*_CONTEXTS, " s", " .")
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
    if pipeline is None:
        match = pre.compiled.match

        def whole(text: str) -> bool:
            m = match(text)
            return m is not None and m.end() == len(text)
    else:
        findall = pre.findall

        def whole(text: str) -> bool:
            return findall(text) == [text]

    # subtle: a pipeline's spans map each piece back through the normalizers, and its steps
    # run one after another, slowly; where it splits with one regex (or has no pipeline) and
    # the normalizers leave the text as it is, that regex's matches are the pieces, and the
    # first few say whether the token lies within one.
    patterns = None if pipeline is None else pipeline.split_patterns()
    if pipeline is None:
        one: regex.Pattern[str] | None = pre.compiled
    else:
        one = regex.compile(patterns[0]) if patterns is not None and len(patterns) == 1 else None

    def within(text: str, k: int, n: int) -> bool:
        """Whether ``text[k:k + n]`` lies within one of ``text``'s pieces."""
        if one is not None and (pipeline is None or normalize(pipeline.normalizers, text) == text):
            for m in one.finditer(text):
                a, b = m.span()
                if b > k and a < b:  # an empty match is no piece (Pretokenizer.findall)
                    return a <= k and k + n <= b
            return False
        return any(a <= k and k + n <= b for a, b in pre.spans(text))

    def within_a_piece(text: str) -> bool:
        # A Unicode form or Lowercase changes a character whatever stands around it; Strip,
        # Prepend or Replace change a text by where it stands: the contexts say.
        if each_character and pipeline and normalize(pipeline.normalizers, text) != text:
            return False
        n = len(text)
        return any(
            within(before + text + after, len(before), n)
            for before in _CONTEXTS
            for after in _AFTER
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
