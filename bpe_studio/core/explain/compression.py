"""How many tokens a text takes as a training run's merges are applied one by one.

What it does: :class:`CompressionCurve` splits a text into pre-tokens once (unique pre-tokens
with their counts, indexed by the pairs they hold) and, for each merge it is given, rewrites
only the pre-tokens that hold that merge's pair, keeping the text's token count current.
The pre-tokens are the tokenizer's own: a ``tokenizer.json``'s pipeline (normalizers,
pre-tokenizer steps, added tokens: ``formats.hf.pipeline``) when it encodes through one, as
``encode`` cuts text (:meth:`CompressionCurve.of_tokenizer`); its pattern otherwise. Cutting
never depends on the merges, so the first ``k`` merges applied to those pieces count what
the tokenizer with its first ``k`` merges encodes.
What it leaves out: drawing the curve, and choosing the text (the app takes a slice of the
corpus and a held-out file).

Why it is exact: after the first ``k`` merges of a training run, the count equals
``len(tokenizer.truncated(k).encode(text))``. The encoder merges, within a pre-token, the
lowest-ranked pair, leftmost first. In a trained merge list every merge ranks after the merges
that made its two parts ("monotone", as ``batch_bpe`` checks), so merging rank ``r`` only creates
pairs ranked after ``r``: the encoder's ranks never go down, and it merges every occurrence of
rank ``r``'s pair left to right before any later rank, which is what :meth:`CompressionCurve.apply`
does for each merge in turn. Merges given out of rank order, or a list that is not monotone,
give a count that need not equal the encoder's.
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..corpus.counting import count_text
from ..pretokenization.pretokenizer import pretokenizer
from ..pretokenization.specials import Specials
from ..text.surrogates import replace_surrogates
from ..train.trainer import MergeStep
from .byte_level_only import require_byte_level

if TYPE_CHECKING:
    from ..encode.tokenizer import Tokenizer
    from ..formats.hf.pipeline import HfPipeline


class CompressionCurve:
    """The token count of ``text`` as merges are applied; ``pattern`` is the pre-tokenization
    pattern of the tokenizer whose merges are applied (a name or a regex, as for ``count_text``).
    A tokenizer that encodes through a ``tokenizer.json``'s pipeline gives it as ``pipeline``
    (``pattern`` is then unused), and ``ordinary`` the tokens matched with the special ones
    but read as text (``Specials.ordinary``); :meth:`of_tokenizer` passes all of a
    tokenizer's.

    >>> curve = CompressionCurve("abab ab<|endoftext|>", ["<|endoftext|>"])
    >>> curve.bytes, curve.tokens  # 7 bytes of text, one special token
    (20, 8)
    >>> curve.apply(MergeStep(0, b"a", b"b", 256, 3))
    5
    >>> curve.apply(MergeStep(1, b"ab", b"ab", 257, 1))
    4
    """

    def __init__(
        self,
        text: str,
        special_tokens: Iterable[str] = (),
        *,
        pattern: str = "gpt2",
        pipeline: HfPipeline | None = None,
        ordinary: Iterable[str] = (),
    ) -> None:
        if not isinstance(text, str):
            raise TypeError(f"CompressionCurve takes the text as a str, not {type(text).__name__}")
        specials = Specials.of(special_tokens, ordinary)
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:  # surrogates: encoded as the tokenizer does
            text = replace_surrogates(text)
            size = len(text.encode("utf-8"))
        counts, cut_out = _pieces(text, specials, pattern, pipeline)
        #: UTF-8 length of the text (special tokens included).
        self.bytes: int = size
        #: How many merges have been applied.
        self.applied: int = 0
        # A pre-token is held as a str with one character per token: byte b is chr(b), each
        # new token the next free code point. Merging a pair is then one str.replace, which
        # goes left to right without overlaps, as the encoder does ("aaa" -> "(aa)a"); and
        # strs and arrays are no work for the garbage collector, which the trainer running
        # alongside sets off often.
        self._codes: dict[bytes, str] = {bytes([b]): chr(b) for b in range(256)}
        self._words: list[str] = []
        self._freqs: list[int] = []
        # Two-character pair -> the words that hold (or held) it; a word may be listed twice.
        self._where: dict[str, array[int]] = {}
        # Each special or added token is one token whatever the merges.
        tokens = cut_out
        where = self._where
        for piece, freq in counts.items():
            word = piece.decode("latin-1")
            tokens += freq * len(word)
            if len(word) < 2:
                continue  # no pair: never changes
            w = len(self._words)
            self._words.append(word)
            self._freqs.append(freq)
            for pair in {word[i : i + 2] for i in range(len(word) - 1)}:
                found = where.get(pair)
                if found is None:
                    where[pair] = array("I", (w,))
                else:
                    found.append(w)
        #: The text's token count under the merges applied so far.
        self.tokens: int = tokens

    @classmethod
    def of_tokenizer(cls, text: str, tokenizer: Tokenizer) -> CompressionCurve:
        """The curve of ``text`` cut as ``tokenizer`` cuts it: its special and added tokens,
        its pipeline or its pattern; apply its merges (or a run's) to it in rank order."""
        require_byte_level(tokenizer, "The compression curve")
        specials = tokenizer.specials
        return cls(
            text,
            specials.tokens,
            pattern=tokenizer.pattern,
            pipeline=tokenizer.hf_pipeline,
            ordinary=sorted(specials.ordinary),
        )

    def apply(self, step: MergeStep) -> int:
        """Apply the next merge of the run (merges in rank order); return the new count."""
        codes = self._codes
        a, b = codes.get(step.left), codes.get(step.right)
        if a is None or b is None:
            unknown = step.left if a is None else step.right
            raise ValueError(
                f"merge {step.rank} ({step.left!r}, {step.right!r}): token {unknown!r} is "
                f"made by no merge applied so far; apply the run's merges in order"
            )
        merged = step.left + step.right
        new = codes.get(merged)
        if new is None:
            if len(codes) > sys.maxunicode:
                raise ValueError(f"merge {step.rank}: more tokens than a curve can follow")
            new = codes[merged] = chr(len(codes))
        pair = a + b
        words, freqs, where = self._words, self._freqs, self._where
        saved = 0
        # subtle: each word once, however often it is listed: a replace costs the word's
        # length, and one long pre-token listed once per occurrence made this quadratic.
        for w in dict.fromkeys(where.pop(pair, ())):
            word = words[w]
            out = word.replace(pair, new)
            if len(out) == len(word):
                continue  # subtle: the pair left this word earlier
            words[w] = out
            saved += freqs[w] * (len(word) - len(out))
            # Index the pairs the new token is part of, each once for this word; pairs that
            # went away stay indexed (such an entry costs one replace later, never a wrong
            # count).
            last = len(out) - 1
            fresh = set()
            j = out.find(new)
            while j >= 0:
                if j > 0:
                    fresh.add(out[j - 1 : j + 1])
                if j < last:
                    fresh.add(out[j : j + 2])
                j = out.find(new, j + 1)
            for made in fresh:
                self._index(made, w)
        self.tokens -= saved
        self.applied += 1
        return self.tokens

    def extend(self, steps: Iterable[MergeStep]) -> int:
        """Apply several merges in order; return the count after the last."""
        for step in steps:
            self.apply(step)
        return self.tokens

    def _index(self, pair: str, w: int) -> None:
        found = self._where.get(pair)
        if found is None:
            self._where[pair] = array("I", (w,))
        else:
            found.append(w)


def _pieces(
    text: str, specials: Specials, pattern: str, pipeline: HfPipeline | None
) -> tuple[Mapping[bytes, int], int]:
    """The pre-tokens of ``text`` (UTF-8, with their counts) as the tokenizer cuts it before
    merging, and how many special or added tokens it cut out."""
    if pipeline is not None:
        # subtle: as ``Encoder.segments`` cuts: added tokens found in the original text or
        # in the normalized one (as each is flagged), then the pre-tokenizer steps on what
        # the normalizers made of the rest; a pattern alone would skip the normalizers.
        found: Counter[str] = Counter()
        cut_out = 0
        for pieces, token in pipeline.segments(text, specials.tokens, specials.ordinary):
            found.update(pieces)
            cut_out += token is not None
        return {k.encode("utf-8"): v for k, v in found.items()}, cut_out
    if specials.ordinary:
        findall = pretokenizer(pattern).findall
        found = Counter(p for stretch in specials.split(text) for p in findall(stretch))
        return {k.encode("utf-8"): v for k, v in found.items()}, len(specials.spans(text))
    return count_text(text, specials.tokens, pattern=pattern), len(specials.spans(text))
