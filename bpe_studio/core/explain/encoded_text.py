"""The text a tokenizer actually gives its model as text, where that is not the corpus as it
is: what the under-trained scan and its byte filter look at.

What it does: :func:`given_of` gives, for a ``tokenizer.json`` whose pipeline has normalizers
(Lowercase, NFKC, NFD + StripAccents, BERT's, SentencePiece's Replace and Prepend) or added
tokens found otherwise than by their text alone (``lstrip``, ``rstrip``, ``single_word``, or
in the normalized text) or a pre-tokenizer that drops text, and for a file ``tokenizers``
runs with added tokens, a normalizer, a pre-tokenizer that drops text or a WordPiece model,
a function from a
text to the stretches its model is given as text: each stretch between the added tokens found
in the original text normalized, as ``HfPipeline.segments`` does (or, for a file
``tokenizers`` runs, as its own normalizer does), cut again at the added tokens found in the
normalized stretches, and at the text the pre-tokenizer drops (a Split that removes its
matches, or keeps only them; BERT's spaces), which is left out as an added token is, as is a
word a WordPiece model gives as its unknown token (one id, not the word's text). An added
token taken is one id, never text a model sees: it is left out, with the whitespace an
``lstrip``/``rstrip`` takes, and the stretches on either side of it stay apart. Text that
merely spells one where the tokenizer does not take it (inside a word for ``single_word``,
lowercased into a token's spelling) stays text. Any other tokenizer gets None: its scan
reads the corpus's bytes as they are, at no cost, and finds where its special tokens are
taken itself (leftmost, longest first, as ``Specials`` does).
:func:`given_range` is a task's range and what follows it, each given so.
ByteLevel's prefix space (its add_prefix_space flag) is put before each stretch where ByteLevel is
the first step to cut (:func:`prefixes_stretches`: GPT-2's shape), and, in a file
``tokenizers`` runs whose whole pre-tokenizer is Metaspace or ByteLevel, the ``▁`` or space it
puts first (Metaspace's prepend_scheme "always" or "first"): only such a file pays for reading
its text given so. Where a step cuts before the one that puts that space (a Split, then
ByteLevel with its prefix space; a Sequence with Metaspace), each piece gets one: the text is
pre-tokenized in the scan (``piece_spaces``), as for a file that drops text, and only such a
file pays for it. What it leaves out: the search itself (``corpus_pass``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from functools import lru_cache
from typing import Any

import regex

from ..encode.foreign import METASPACE, AnyTokenizer, ForeignTokenizer, spells_spaces
from ..formats.hf.added_tokens import AddedToken, find_added, matcher
from ..formats.hf.kind import backend_drops_text
from ..formats.hf.normalizers import normalize
from .piece_spaces import Cut, foreign_piece_cut, own_piece_cut

# The most UTF-8 bytes one character of the corpus is read as, and so the most a normalizer
# of Unicode forms or Lowercase shrinks a stretch by ("𝐀", four bytes, is "A" after NFKC).
SHRINK = 4

# A text to the stretches of it a model is given as text, in order (``given_of``).
Given = Callable[[str], list[str]]
# Normalized text to the characters its pre-tokens hold, (start, end) each (``_kept_runs``).
Held = Callable[[str], Sequence[tuple[int, int]]]


def given_of(tok: AnyTokenizer) -> Given | None:
    """The stretches of a text ``tok`` gives its model as text (see the module docstring),
    or None where that is the text itself with its special tokens' matches left out,
    leftmost and longest first: a tokenizer with no pipeline, or one whose pipeline has no
    normalizers and whose added tokens are found as their text alone, and no prefix space."""
    if isinstance(tok, ForeignTokenizer):
        return _foreign_given(tok)
    pipeline = tok.hf_pipeline
    if pipeline is None:
        return None
    steps = pipeline.normalizers
    specials = tok.specials
    raw, normed = pipeline.matchers(specials.tokens, specials.ordinary)
    prefix = prefixes_stretches(tok)
    # A space put before each piece an earlier step cut: the text is pre-tokenized (what
    # it drops left out too); else only what it drops is looked for.
    cut = own_piece_cut(pipeline)
    if cut is None and pipeline.removes_text:
        cut = _held_cut(pipeline.held)
    if not steps and normed[0] is None and all(t.plain for t in raw[1].values()) and not cut:
        if not prefix:
            return None
    hidden = specials.ordinary

    def given(text: str) -> list[str]:
        out = _given(text, raw, normed, hidden, lambda part: normalize(steps, part), cut)
        return [_spaced(part) for part in out] if prefix else out

    return given


def adds_spaces(tok: AnyTokenizer) -> bool:
    """Whether ``tok``'s pre-tokenizer may give its model a space the text does not hold:
    before each stretch (:func:`prefixes_stretches`) or before each piece an earlier step
    cut (``piece_spaces``)."""
    if prefixes_stretches(tok):
        return True
    if isinstance(tok, ForeignTokenizer):
        return foreign_piece_cut(tok.backend.pre_tokenizer) is not None
    return tok.hf_pipeline is not None and own_piece_cut(tok.hf_pipeline) is not None


def prefixes_stretches(tok: AnyTokenizer) -> bool:
    """Whether ``tok``'s pre-tokenizer puts a space before each stretch it is given that
    does not start with one (ByteLevel's add_prefix_space, no step cutting before it,
    as in a GPT-2-shaped file; or, run by ``tokenizers``, Metaspace's or ByteLevel's alone):
    a model is given that space as text. (Where a step cuts first, each piece gets one:
    ``piece_spaces``.)"""
    if isinstance(tok, ForeignTokenizer):
        return _foreign_prefix(tok.backend.pre_tokenizer) is not None
    pipeline = tok.hf_pipeline
    if pipeline is None:
        return False
    cutting = [s for s in pipeline.steps if not s.passes_whole]
    return bool(cutting) and cutting[0].prefix_space


def _spaced(stretch: str, mark: str = " ") -> str:
    """``stretch`` as ByteLevel's prefix space gives it (``mark``: Metaspace's ``▁``, which
    stands for a space there; none before an empty one, which ``tokenizers`` drops)."""
    if not stretch or stretch.startswith((" ", mark)):
        return stretch
    return mark + stretch


def _foreign_prefix(pre: Any) -> tuple[str, str] | None:
    """For a file ``tokenizers`` runs whose whole pre-tokenizer (``pre``) puts a space before
    each text it is given: "always" or "first" (Metaspace's prepend_scheme; ByteLevel's
    add_prefix_space is "always"), and how that space is spelled (Metaspace's ``▁``);
    None for any other (a Sequence too: a step may cut first)."""
    import tokenizers  # (installed wherever a ForeignTokenizer exists; slow to import)

    kinds = tokenizers.pre_tokenizers
    if isinstance(pre, kinds.Metaspace) and pre.prepend_scheme in ("always", "first"):
        return pre.prepend_scheme, pre.replacement
    if isinstance(pre, kinds.ByteLevel) and pre.add_prefix_space:
        return "always", " "
    return None


def normalizes(tok: AnyTokenizer) -> bool:
    """Whether the characters ``tok`` gives its model may differ from the corpus's (a
    normalizer): where they cannot, the bytes and byte pairs of the corpus as it is hold all
    those of the text :func:`given_of` gives."""
    if isinstance(tok, ForeignTokenizer):
        return tok.backend.normalizer is not None
    pipeline = tok.hf_pipeline
    return pipeline is not None and bool(pipeline.normalizers)


def _foreign_given(tok: ForeignTokenizer) -> Given | None:
    """The stretches ``tokenizers`` gives ``tok``'s model as text (:func:`_given`), as its
    vocabulary table spells them: through the file's own normalizer, and ``▁`` read as the
    space it stands for where the file writes spaces so (``foreign.spells_spaces``, as the
    table's bytes do). None for a file with neither a normalizer nor added tokens."""
    backend = tok.backend
    steps = backend.normalizer
    added = sorted(backend.get_added_tokens_decoder().items())
    pre = backend.pre_tokenizer
    cut: Cut | None = None
    unknown = _wordpiece_unknown(backend)
    if unknown is not None:
        cut = _held_cut(_wordpiece_held(pre, unknown))
    elif (cut := foreign_piece_cut(pre)) is not None:
        pass  # its pieces' own texts, what it drops left out
    elif pre is not None and backend_drops_text(backend):
        # (its offsets are of characters, as the Python binding gives them)
        cut = _held_cut(lambda text: [span for _, span in pre.pre_tokenize_str(text)])
    scheme = _foreign_prefix(pre)
    if steps is None and not added and cut is None and scheme is None:
        return None
    raw = matcher(
        AddedToken(t.content, i, t.special, t.lstrip, t.rstrip, t.single_word)
        for i, t in added
        if not t.normalized
    )
    normed = matcher(
        AddedToken(t.content, i, t.special, t.lstrip, t.rstrip, t.single_word, True, match)
        for i, t in added
        if t.normalized and (match := steps.normalize_str(t.content) if steps else t.content)
    )
    # With encode_special_tokens (``no_specials``) tokenizers reads the special ones as text.
    plain = backend.encode_special_tokens
    hidden = {t.content for _, t in added if t.special} if plain else set()
    spaces = spells_spaces(tok)

    def given(text: str) -> list[str]:
        out = _given(text, raw, normed, hidden, steps.normalize_str if steps else _same, cut)
        if scheme is not None:
            # subtle: "first" is the text's first stretch alone, and none where the text
            # starts with an added token (that stretch is empty), as tokenizers prepends
            # only to the split at offset 0.
            mark = scheme[1]
            prefixed = out[:1] if scheme[0] == "first" else out
            out = [_spaced(p, mark) for p in prefixed] + out[len(prefixed) :]
        return [part.replace(METASPACE, " ") for part in out] if spaces else out

    return given


def _wordpiece_unknown(backend: Any) -> Callable[[str], bool] | None:
    """For a WordPiece model, whether it gives a word (a pre-token) as its one unknown
    token (a character no token holds, or a word past ``max_input_chars_per_word``): the
    model is given that id, not the word's text. None for any other model."""
    import tokenizers  # (installed wherever a ForeignTokenizer exists; slow to import)

    model = backend.model
    if not isinstance(model, tokenizers.models.WordPiece):
        return None
    unk = model.unk_token

    # subtle: words repeat, and the model's own answer costs a call into tokenizers each.
    @lru_cache(maxsize=1 << 16)
    def unknown(word: str) -> bool:
        found = model.tokenize(word)
        return len(found) == 1 and found[0].value == unk and word != unk

    return unknown


def _wordpiece_held(pre: Any, unknown: Callable[[str], bool]) -> Held:
    """The characters of normalized text a WordPiece model is given as text: its
    pre-tokens (none where ``pre`` is None: the whole text is one word), less each word it
    gives as the unknown token, which is left out as dropped text is."""

    def held(text: str) -> list[tuple[int, int]]:
        pieces = pre.pre_tokenize_str(text) if pre is not None else [(text, (0, len(text)))]
        return [span for word, span in pieces if not unknown(word)]

    return held


def _same(text: str) -> str:
    return text


def _held_cut(held: Held) -> Cut:
    """The runs of a text that ``held`` says its pre-tokens hold (``_kept_runs``)."""
    return lambda text, start: _kept_runs(text, held(text))


def _given(
    text: str,
    raw: tuple[regex.Pattern[str] | None, dict[str, AddedToken]],
    normed: tuple[regex.Pattern[str] | None, dict[str, AddedToken]],
    hidden: Collection[str],
    normalized: Callable[[str], str],
    cut: Cut | None = None,
) -> list[str]:
    """The stretches of ``text`` a model is given as text: cut at the added tokens found in
    it (``raw``), each stretch between them ``normalized``, and cut again at those found in
    that (``normed``), as ``tokenizers`` finds them; the tokens left out, with the whitespace
    an ``lstrip`` or ``rstrip`` takes, which no model sees either. Always one stretch more
    than the tokens taken, and, with ``cut`` (a pre-tokenizer that drops text, or puts a
    space before each piece: ``piece_spaces``), one more for each stretch of text it drops
    (left out: ``_kept_runs``), each run as ``cut`` gives it.

    >>> raw = matcher([AddedToken("<m>", 5, single_word=True)])
    >>> _given("a <m> b x<m>y", raw, (None, {}), (), str.upper)
    ['A ', ' B X<M>Y']
    """
    stretches: list[str] = []
    parts: list[str] = []
    for a, b, token in find_added(text, raw[0], raw[1], hidden):
        if token is not None:
            stretches.append("".join(parts))
            parts = []
            continue
        stretch = normalized(text[a:b])
        for c, d, found in find_added(stretch, normed[0], normed[1], hidden):
            if found is None:
                part = stretch[c:d]
                runs = [part] if cut is None else cut(part, a == 0 and c == 0)
                parts.append(runs[0])
                for run in runs[1:]:  # apart: the text dropped between them is no text
                    stretches.append("".join(parts))
                    parts = [run]
            else:
                stretches.append("".join(parts))
                parts = []
    stretches.append("".join(parts))
    return stretches


def _kept_runs(text: str, spans: Sequence[tuple[int, int]]) -> list[str]:
    """``text`` cut at each stretch no span holds, those stretches left out (one more run
    than stretches dropped: an empty one where ``text`` starts or ends with one), as a
    pre-tokenizer that removes text drops it: the model never sees it. ``spans`` are in
    order, none overlapping another (a pre-tokenizer's pieces).

    >>> _kept_runs("ab 12 cd", [(0, 2), (2, 3), (6, 8)]), _kept_runs("12", [])
    (['ab ', 'cd'], ['', ''])
    """
    runs = []
    start = end = 0  # the run so far: text[start:end]
    for s, e in spans:
        if e <= s:
            continue
        if s > end:  # text[end:s] is dropped
            runs.append(text[start:end])
            start = s
        end = e
    runs.append(text[start:end])
    return runs if end == len(text) else [*runs, ""]


def given_range(given: Given, data: bytes, size: int) -> tuple[list[bytes], list[bytes]]:
    """The stretches :func:`given_of`'s ``given`` makes of the first ``size`` bytes of
    ``data`` (a task's range: it starts and ends where the tokenizer's cut rules allow a cut),
    and of the rest on its own, less a character the read cut in two, as UTF-8. Where the
    rules cut is where giving each side apart gives the whole's stretches: before a special
    token (any normalizer), or between characters NFC or NFKC leaves alone
    (``boundaries.stable_cuts``)."""
    # The range is UTF-8 (counting it has checked); the rest may end inside a character.
    head = given(data[:size].decode("utf-8"))
    tail = given(data[size:].decode("utf-8", "ignore"))
    return [s.encode("utf-8") for s in head], [s.encode("utf-8") for s in tail]
