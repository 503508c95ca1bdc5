"""The text a tokenizer actually encodes, where its normalizers change the corpus's: what the
under-trained scan and its byte filter look at.

What it does: :func:`normalizer_of` gives, for a ``tokenizer.json`` whose pipeline has
normalizers (Lowercase, NFKC, NFD + StripAccents, BERT's, SentencePiece's Replace and
Prepend), a function from a text to the text its model is given: each stretch between the
added tokens found in the original text normalized, as ``HfPipeline.segments`` does (or, for
a file ``tokenizers`` runs, as its own normalizer does), those tokens and the ones found in the
normalized stretches as their content, without the whitespace an ``lstrip``/``rstrip`` takes
(the scan leaves a special token's text out itself). Any other tokenizer gets None: its scan reads
the corpus's bytes as they are, at no cost. :func:`normalized_range` is a task's range and
what follows it, each normalized.
What it leaves out: the text a pre-tokenizer step adds (ByteLevel's prefix space before a
stretch that does not start with one, Metaspace's ``▁``): a token whose bytes only that space
completes stays absent. Adding it would mean pre-tokenizing the text in the scan, and would
change the scan of files without a normalizer too (RoBERTa's), which read the corpus as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import regex

from ..encode.foreign import METASPACE, AnyTokenizer, ForeignTokenizer, spells_spaces
from ..formats.hf.added_tokens import AddedToken, find_added, matcher
from ..formats.hf.normalizers import normalize

# The most UTF-8 bytes one character of the corpus is read as, and so the most a normalizer
# of Unicode forms or Lowercase shrinks a stretch by ("𝐀", four bytes, is "A" after NFKC).
SHRINK = 4


def normalizer_of(tok: AnyTokenizer) -> Callable[[str], str] | None:
    """The text ``tok`` encodes for a text (see the module docstring), or None where that is
    the text itself: a tokenizer with no pipeline, or one without normalizers."""
    if isinstance(tok, ForeignTokenizer):
        return _foreign_normalizer(tok)
    pipeline = tok.hf_pipeline
    if pipeline is None or not pipeline.normalizers:
        return None
    steps = pipeline.normalizers
    specials = tok.specials
    raw, normed = pipeline.matchers(specials.tokens, specials.ordinary)
    hidden = specials.ordinary

    def encoded(text: str) -> str:
        return _given(text, raw, normed, hidden, lambda part: normalize(steps, part))

    return encoded


def _foreign_normalizer(tok: ForeignTokenizer) -> Callable[[str], str] | None:
    """The text ``tokenizers`` gives ``tok``'s model (:func:`_given`), as its vocabulary
    table spells it: through the file's own normalizer, and ``▁`` read as the space it stands
    for where the file writes spaces so (``foreign.spells_spaces``, as the table's
    bytes do). None for a file without a normalizer."""
    backend = tok.backend
    steps = backend.normalizer
    if steps is None:
        return None
    added = sorted(backend.get_added_tokens_decoder().items())
    raw = matcher(
        AddedToken(t.content, i, t.special, t.lstrip, t.rstrip, t.single_word)
        for i, t in added
        if not t.normalized
    )
    normed = matcher(
        AddedToken(t.content, i, t.special, t.lstrip, t.rstrip, t.single_word, True, match)
        for i, t in added
        if t.normalized and (match := steps.normalize_str(t.content))
    )
    # With encode_special_tokens (``no_specials``) tokenizers reads the special ones as text.
    plain = backend.encode_special_tokens
    hidden = {t.content for _, t in added if t.special} if plain else set()
    spaces = spells_spaces(tok)

    def encoded(text: str) -> str:
        out = _given(text, raw, normed, hidden, steps.normalize_str)
        return out.replace(METASPACE, " ") if spaces else out

    return encoded


def _given(
    text: str,
    raw: tuple[regex.Pattern[str] | None, dict[str, AddedToken]],
    normed: tuple[regex.Pattern[str] | None, dict[str, AddedToken]],
    hidden: Collection[str],
    normalized: Callable[[str], str],
) -> str:
    """``text`` as a model is given it: the added tokens found in it (``raw``), then those
    found in each stretch between them once ``normalized`` (``normed``), as ``tokenizers``
    finds them; a special one as its content, which the scan leaves out (and so not in the
    normalized spelling where it was found in that), any other as the text it was found as;
    neither with the whitespace an ``lstrip`` or ``rstrip`` takes, which no model sees."""
    parts = []
    for a, b, token in find_added(text, raw[0], raw[1], hidden):
        if token is not None:
            parts.append(token.content)
            continue
        stretch = normalized(text[a:b])
        for c, d, found in find_added(stretch, normed[0], normed[1], hidden):
            if found is None:
                parts.append(stretch[c:d])
            else:
                parts.append(found.content if found.special else found.match or found.content)
    return "".join(parts)


def normalized_range(
    normalized: Callable[[str], str], data: bytes, size: int
) -> tuple[bytes, bytes]:
    """The first ``size`` bytes of ``data`` (a task's range: it starts and ends where the
    tokenizer's cut rules allow a cut) normalized, and the rest normalized on its own, less a
    character the read cut in two. Where the rules cut is where normalizing each side apart
    gives the whole's normalization: before a special token (any normalizer), or between
    characters NFC or NFKC leaves alone (``boundaries.stable_cuts``)."""
    # The range is UTF-8 (counting it has checked); the rest may end inside a character.
    head = normalized(data[:size].decode("utf-8"))
    tail = normalized(data[size:].decode("utf-8", "ignore"))
    return head.encode("utf-8"), tail.encode("utf-8")
