"""Which tokens the encoder can produce: a token is reachable when encoding its own bytes gives
it back as that one id.

What it does: :func:`unreachable_tokens` lists the tokens of a vocabulary that encoding never
produces (a merge that an earlier merge always pre-empts, an entry no merge makes); its part
:func:`unreachable_among` checks some ids only (what a view growing with a run asks for its
newest tokens). The tokens are merged together a slice at a time through the tokenizer's own
merger, after the lookup of a whole pre-token it makes first (``ignore_merges``), so the answer
is its encoder's. A token holding an added token that encoding always cuts out is unreachable;
one holding an added token cut out only in some contexts (``single_word``: between non-word
characters alone; one looked for in the original text only, where a normalizer may make its
text) is decided by encoding its text, and texts the normalizers turn into it, in contexts
(``contexts``). A token whose bytes no UTF-8 text holds (the byte C0, say) is unreachable:
every text encoded is valid UTF-8.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterable

from ..encode.merging.merger import COMPILED_LONG
from ..encode.tokenizer import Tokenizer
from .byte_level_only import require_byte_level
from .contexts import given_in_a_context, never_normalized_to
from .split_apart import split_apart

_REACH_SLICE = 16_384  # tokens merged per NumPy pass in unreachable_tokens
# Tokens this long in all (counting those of COMPILED_LONG bytes or more) load the compiled
# encoder's kernels to merge them: merging takes Python about 3 s a megabyte, loading the
# kernels 0.3-0.45 s once a process.
_LOAD_KERNELS_BYTES = 1 << 18
# Ends of a character cut short: the lowest and the highest continuation byte first.
_ENDS = tuple(first + b"\x80" * k for k in range(3) for first in (b"\x80", b"\xbf"))


def unreachable_tokens(
    tokenizer: Tokenizer, between_slices: Callable[[], object] | None = None
) -> list[int]:
    """Ids (ascending) of the tokens that encoding their own bytes does not give back as that
    one id: the encoder never produces them. Special tokens are reachable by definition.
    ``between_slices`` is called between two slices of the work (a caller in a background
    thread may wait there while another thread needs the interpreter).

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> vocab.update({256: b"ab", 257: b"bc", 258: b"abc"})
    >>> tok = Tokenizer(vocab, [(b"a", b"b"), (b"b", b"c"), (b"a", b"bc")])
    >>> unreachable_tokens(tok)[-1]  # "abc" always becomes "ab" "c" first
    258
    >>> unreachable_tokens(tok)[:3]  # bytes no UTF-8 text holds
    [192, 193, 245]
    """
    return unreachable_among(tokenizer, tokenizer.vocab, between_slices)


def unreachable_among(
    tokenizer: Tokenizer,
    ids: Iterable[int],
    between_slices: Callable[[], object] | None = None,
    status: Callable[[str], None] | None = None,
) -> list[int]:
    """:func:`unreachable_tokens` of the vocabulary entries ``ids`` only (ascending; ids not
    in the vocabulary and special tokens are left out): what a view growing with a run
    computes for its newest tokens. Tokens of megabytes load the compiled encoder first
    (``status`` is told when that compiles, on a machine's first run); never call this
    from a thread that draws a window."""
    require_byte_level(tokenizer, "Reach (tokens the encoder never gives)")
    merger = tokenizer.merger
    special = merger.special_ids
    vocab = tokenizer.vocab
    ids = [i for i in ids if i in vocab and i not in special]
    # An empty vocabulary entry (possible in a loaded file) encodes to no token at all.
    settled = [i for i in ids if not vocab[i]]
    # Bytes no UTF-8 text holds anywhere (C0, C1, F5 to FF, a surrogate's) are never
    # encoded: every text is valid UTF-8, so no pre-token holds them.
    no_text = {i for i in ids if vocab[i] and not _in_some_text(vocab[i])}
    settled += sorted(no_text)
    ids = [i for i in ids if i not in no_text]
    blocks, in_context = _added_rules(tokenizer)
    if blocks:
        # A token holding the bytes of an added token that is not special (phi-2's "  " beside
        # the model's "ĠĠ") is never emitted: encoding cuts that one out first, whatever the
        # merges would make of the rest (lstrip and rstrip only take spaces beside it too).
        holds = _holder(blocks)
        blocked = {i for i in ids if vocab[i] and holds(vocab[i])}
        settled += sorted(blocked)
        ids = [i for i in ids if i not in blocked]
    if in_context:
        # A single_word one is cut out only between characters that are no word's (" sword"
        # keeps its "word", so does " word1"); one looked for in the original text only is
        # not cut out of what the normalizers make (" The" lowercased holds " the"). Some
        # context, or a text the normalizers turn into the token's, gives it or none does.
        holds = _holder(in_context)
        never = never_normalized_to(tokenizer.hf_pipeline)
        decided = {i: _given_somewhere(tokenizer, i, never) for i in ids if holds(vocab[i])}
        settled += sorted(i for i, given in decided.items() if given is False)
        ids = [i for i in ids if decided.get(i) is None]
    # A token whose text the pre-tokenizer never leaves within one piece never reaches the
    # merges whole: a GPT-2 vocabulary read with another pattern (" 2016" where digits go one
    # at a time), a WhitespaceSplit file's " the", a lowercasing file's "The".
    split = split_apart(tokenizer, ids, between_slices)
    settled += sorted(split)
    ids = [i for i in ids if i not in split]
    # A pre-token looked up whole before any merge gives that token (``ignore_merges``:
    # Llama 3's tokens that no merge makes), this one or another of the same bytes.
    whole = {i: merger.whole_id(vocab[i]) for i in ids if vocab[i]}
    settled += [i for i, w in whole.items() if w is not None and w != i]
    ids = [i for i, w in whole.items() if w is None]
    pieces = [vocab[i] for i in ids]
    if sum(len(p) for p in pieces if len(p) >= COMPILED_LONG) >= _LOAD_KERNELS_BYTES:
        from ..encode.merging import kernel_start

        kernel_start.prepare(status)  # the merger then takes its kernel (``_bpe_long``)
    if not merger.merges_together(len(pieces)):
        bpe = merger.bpe
        return sorted(settled + [i for i, p in zip(ids, pieces) if bpe(p) != [i]])
    import numpy as np  # subtle: lazily, so importing the core starts no BLAS threads

    # The tokens' bytes merged together, a slice at a time; a token is reachable when its piece
    # ends up as one id and that id is its own. subtle: slices keep each NumPy call short, and
    # a NumPy call holds the interpreter lock throughout: a viewer's GUI thread runs this in
    # the background and must get the lock back within milliseconds.
    unreachable = list(settled)
    for start in range(0, len(pieces), _REACH_SLICE):
        if between_slices is not None:
            between_slices()
        flat, ends = merger.merge_many(pieces[start : start + _REACH_SLICE])
        end = np.asarray(ends, dtype=np.int64)
        own = np.asarray(ids[start : start + _REACH_SLICE], dtype=np.int64)
        reachable = (np.diff(end, prepend=0) == 1) & (flat[end - 1] == own)
        unreachable += own[~reachable].tolist()
    return sorted(unreachable)


def _holder(contents: Iterable[str]) -> Callable[[bytes], object]:
    """A search for any of ``contents``' bytes in a token's bytes."""
    return re.compile(b"|".join(re.escape(t.encode("utf-8")) for t in contents)).search


def _added_rules(tokenizer: Tokenizer) -> tuple[list[str], list[str]]:
    """The texts of the added tokens that are not special which a token holding them is never
    given for (``normalized`` ones as the normalizers write them, since they are looked for in
    normalized text; the others where no normalizer could make them), and those that only
    some contexts cut out (``single_word`` ones; ones looked for in the original text only,
    when a normalizer may make their text from another)."""
    pipeline = tokenizer.hf_pipeline
    flags = {t.content: t for t in pipeline.added} if pipeline is not None else {}
    normalizes = pipeline is not None and bool(pipeline.normalizers)
    blocks, in_context = [], []
    for content in tokenizer.added_tokens:
        token = flags.get(content)
        if token is not None and token.single_word:
            in_context.append(content)
        elif token is not None and token.normalized and normalizes:
            blocks.append(token.match or content)
        elif normalizes:
            in_context.append(content)
        else:
            blocks.append(content)
    return blocks, in_context


def _in_some_text(token: bytes) -> bool:
    """Whether ``token`` is a part of some valid UTF-8: after no byte, or after the lead byte
    of a character it may finish (E1 and F1 take every continuation byte that E0, ED, F0
    and F4 take), with a character it leaves unfinished finished somehow."""
    for lead in (b"", b"\xc2", b"\xe1", b"\xf1"):
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            decoder.decode(lead + token, final=False)
        except UnicodeDecodeError:
            continue
        # subtle: the decoder may keep a few bytes unjudged (ED A0, a surrogate's start):
        # some end of that character must be valid.
        rest = decoder.getstate()[0]
        if not rest or any(_valid(rest + end) for end in _ENDS):
            return True
    return False


def _valid(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _given_somewhere(
    tokenizer: Tokenizer, token_id: int, never: Callable[[str], bool] | None
) -> bool | None:
    """Whether encoding the text of token ``token_id`` in some context gives that id
    (``contexts.given_in_a_context``); None when its bytes are no text (left to the merges).
    A text that no normalized text holds (``never``) is not given: the model's tokens come
    from normalized text alone, so no context need be tried."""
    try:
        text = tokenizer.vocab[token_id].decode("utf-8")
    except UnicodeDecodeError:
        return None
    if never is not None and never(text):
        return False
    return given_in_a_context(tokenizer, token_id, text)
