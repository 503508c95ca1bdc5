"""Which tokens pre-tokenization never gives whole: the Reach rule's first test.

What it does: :func:`split_apart` lists the tokens whose text the tokenizer's pre-tokenizer
never leaves within one piece, whatever stands around it, or whose characters its normalizers
change (a GPT-2 vocabulary read with cl100k's pattern: " 2016"; a WhitespaceSplit file's
" the"; a lowercasing file's "The"). Such a token never reaches the merges whole, so the
encoder never gives it. "Whatever stands around it" is the texts tried: every pair of
:data:`CONTEXTS` before and :data:`AFTER` after; then, for a token none of those keeps whole,
each text its pre-tokenizer's patterns name (``pattern_contexts``: a vowel before "bc" for
``[aeiou][^aeiou]{1,3}``, "'s" after "ab" for ``\\w+[ \\t]*'s``) before it with nothing after,
or after it with nothing before, taken only where encoding that text gives the token (the
piece holding it may merge it into another: cl100k's "'l" in "'ll"). What it leaves out: the
merges (``reach``), tokens whose bytes are no text; a token kept whole only by contexts not
tried: a pattern's text paired with a fixed context or another pattern text (a vowel before
and a line break after), a text of several characters that no pattern spells as a literal
run, the texts a normalizer writes, the pattern texts beyond the first few
(``MOST_PATTERN_CONTEXTS``).
"""

from __future__ import annotations

from collections.abc import Callable

import regex

from ..encode.tokenizer import Tokenizer
from ..formats.hf.normalizers import normalize
from ..formats.hf.pre_tokenizers import step_texts
from .alike import alike_key
from .contexts import AFTER, CONTEXTS, never_normalized_to, originals, writes_capitals_again
from .pattern_contexts import cutting_patterns, pattern_contexts

_CHECKS_BETWEEN_CALLS = 256  # tokens tested between two calls of ``between_slices``


def split_apart(
    tokenizer: Tokenizer, ids: list[int], between_slices: Callable[[], object] | None = None
) -> set[int]:
    """The tokens of ``ids`` that the pre-tokenizer never leaves within one piece, or whose
    text the normalizers change; ``between_slices`` is called every few hundred tokens (a
    viewer's background thread lets its GUI thread run there)."""
    pre = tokenizer.pre_tokenizer
    pipeline = tokenizer.hf_pipeline
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
    # Several steps, each one regex: each cuts the piece the one before left around the token.
    chain = None
    if pipeline is not None and patterns is not None and one is None:
        chain = [regex.compile(p) for p in patterns]

    def within(text: str, before: str, original: str, after: str) -> bool:
        """Whether a piece of ``before + original + after``, normalized, holds ``text``."""
        whole_text = before + original + after
        normalized = whole_text
        if pipeline is not None:
            normalized = normalize(pipeline.normalizers, whole_text)
            if one is None:
                k = len(before)
                if (
                    chain is not None
                    and normalized == whole_text
                    and original == text
                    and normalized.find(text) == k
                    and normalized.find(text, k + 1) < 0
                ):
                    # subtle: the token's text stands nowhere else, so only the pieces that
                    # reach into it there can hold it; the rest need not be found.
                    return _held(chain, normalized, k, len(text))
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

    fixed = [(before, after) for before in CONTEXTS for after in AFTER]
    # The pattern's own characters, tried only where the fixed contexts leave a token split
    # apart, and each on one side alone: a token's tries grow with each pair of contexts, and
    # on a split-heavy pipeline most tokens are split apart (GPT-2's " the" behind a Split by
    # \w+), so every extra pair is paid thousands of times.
    extra = pattern_contexts(cutting_patterns(tokenizer))
    more = [(before, "") for before in extra] + [("", after) for after in extra]

    def within_a_piece(text: str, contexts: list[tuple[str, str]]) -> bool:
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
            for before, after in contexts
        )

    def given_around(token_id: int, text: str) -> bool:
        """Whether encoding the token's text with a pattern's text beside it gives its id."""
        # subtle: a piece holding the token may be merged otherwise than the token alone
        # (cl100k's "'l" inside GPT-2's piece "'ll" becomes "'ll"), so a pattern's text is
        # taken only where the encoder gives the token there: the fixed contexts alone stay
        # the rule's, the merges test then deciding.
        return any(
            within(text, before, original, after)
            and token_id in tokenizer.encode(before + original + after)
            for original in originals(pipeline, text)
            for before, after in more
        )

    # Texts that nothing in the pipeline tells apart ("2016" and "1999" where no pattern
    # names a digit) are cut alike in every context: one answer serves them all, where each
    # would try every context.
    key_of = alike_key(tokenizer)
    answers: dict[str, bool] = {}
    kept_by_more: dict[str, bool] = {}
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
        key = key_of(text)
        apart = answers.get(key)
        if apart is None:
            apart = answers[key] = not within_a_piece(text, fixed)
        if apart and more:
            kept = kept_by_more.get(key)
            if kept is None:
                kept = kept_by_more[key] = within_a_piece(text, more)
            # The pieces are alike for alike texts; the merges are each token's own.
            apart = not (kept and given_around(i, text))
        if apart:
            split.add(i)
    return split


def _held(chain: list[regex.Pattern[str]], text: str, k: int, n: int) -> bool:
    """Whether ``text[k : k + n]`` lies within one piece when each regex of ``chain`` in turn
    cuts the piece the one before it left there (each regex's matches and the gaps between
    them, as an Isolated Split cuts: every character is in one of them)."""
    start, end = 0, len(text)
    for compiled in chain:
        for m in compiled.finditer(text[start:end]):
            s, e = m.span()
            if e > k - start and s < e:  # the first piece reaching into the token
                if not (s <= k - start and k + n <= start + e):
                    return False
                start, end = start + s, start + e
                break
        else:
            return False
    return True
