"""How the rank-based encoder encodes one pre-token, step by step, and the pieces it encodes.

What it does: :func:`pretokens` cuts a text into the pieces the encoder works on one at a
time (its pre-tokens, each special token whole; :func:`pipeline_pieces` also says where each
came from for a ``tokenizer.json``'s pipeline); :func:`encode_steps` replays the encoder on
one piece, with every candidate pair it looked at in each step (the app's step-through). Both
read the tokenizer's own tables (its pre-tokenizer, special tokens and its merger's pair
ranks), so they cannot disagree with its encoder, which is the fast way to the same ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..encode.tokenizer import Tokenizer
from ..formats.hf.added_tokens import find_added
from ..formats.hf.normalizers import Normalized
from ..formats.hf.pre_tokenizers import apply_steps
from ..text.surrogates import replace_surrogates
from .byte_level_only import require_byte_level

if TYPE_CHECKING:
    from ..formats.hf.pipeline import HfPipeline
    from ..pretokenization.specials import Specials

PieceAt = tuple[int, int, str]  # start, end in the text; the piece (an added token's content)


@dataclass(frozen=True, slots=True)
class EncodeStep:
    """One step of encoding a pre-token: the token ids before it, every adjacent pair that has
    a merge as ``(position, rank)`` (position ``i`` is the pair ``tokens[i], tokens[i + 1]``),
    and the position merged in this step (None on the last step, where nothing is left).
    ``whole``: the encoder finds the piece whole in the vocabulary and gives this step's one id
    (``ignore_merges``); only on the last step."""

    tokens: tuple[int, ...]
    candidates: tuple[tuple[int, int], ...]
    chosen: int | None
    whole: bool = False


def pretokens(tokenizer: Tokenizer, text: str) -> list[str]:
    """The pieces the tokenizer encodes ``text`` in, in order: its pre-tokens, and each special
    token as one piece. Encoding each piece and joining the ids gives ``encode(text)``.

    >>> tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<|endoftext|>"])
    >>> pretokens(tok, "Hi there<|endoftext|>!")
    ['Hi', ' there', '<|endoftext|>', '!']
    """
    require_byte_level(tokenizer, "Its pre-tokens")
    return [piece for piece, _ in marked_pretokens(tokenizer, text)]


def marked_pretokens(tokenizer: Tokenizer, text: str) -> list[tuple[str, bool]]:
    """:func:`pretokens`, each with whether it is a special or added token cut out of the
    text (an ordinary piece may spell one: ``tio`` in ``tio_tio`` where a single_word added
    token ``tio`` is not found, which encoding merges)."""
    require_byte_level(tokenizer, "Its pre-tokens")
    pieces: list[tuple[str, bool]] = []
    pipeline, specials = tokenizer.hf_pipeline, tokenizer.specials
    if pipeline is not None:
        # subtle: cut as encoding cuts (``Encoder.segments``): a single_word added token is
        # found only between non-word characters, an lstrip one takes the spaces before it.
        for found, token in pipeline.segments(text, specials.tokens, specials.ordinary):
            pieces += ((piece, False) for piece in found)
            if token is not None:
                pieces.append((token, True))
        return pieces
    findall = tokenizer.pre_tokenizer.findall
    for a, b, special in specials.segments(text):
        pieces += ((piece, False) for piece in findall(text[a:b]))
        if special is not None:
            pieces.append((special, True))
    return pieces


def pipeline_pieces(pipeline: HfPipeline, specials: Specials, text: str) -> list[PieceAt]:
    """:func:`pretokens` of a tokenizer that encodes through ``pipeline`` (its
    ``hf_pipeline``, its ``specials``), each with the characters of ``text`` it came from:
    ``(start, end, piece)``, ``piece`` an added or special token's content for one. A piece
    is as the encoder takes it, after the normalizers (a prefix space included)."""
    (raw, raw_map), (normed, normed_map) = pipeline.matchers(specials.tokens, specials.ordinary)
    hidden = specials.ordinary
    out: list[PieceAt] = []
    for a, b, token in find_added(text, raw, raw_map, hidden):
        if token is not None:
            out.append((a, b, token.content))
            continue
        n = Normalized(text[a:b], a).apply(pipeline.normalizers)
        for c, d, inner in find_added(n.text, normed, normed_map, hidden):
            if inner is not None:
                out.append((*n.origin(c, d), inner.content))
            elif d > c:
                for piece, start, lead in apply_steps(pipeline.steps, [(n.text[c:d], c, 0)]):
                    out.append((*n.origin(start, max(start + len(piece) - lead, start + 1)), piece))
    return out


def encode_steps(tokenizer: Tokenizer, piece: str | bytes) -> list[EncodeStep]:
    """Each step of the rank-based encoder on one pre-token: start from its bytes, merge the
    adjacent pair with the lowest rank (the leftmost of equals) until no pair has a merge.

    The last step's ``tokens`` are what the tokenizer encodes ``piece`` to (a ``str`` piece
    that is one pre-token, or one special token). The piece is not pre-tokenized: it is taken
    as one unit. Time and memory grow with the square of its length.

    A tokenizer that looks pre-tokens up whole first (``ignore_merges``) gives a piece that is
    a vocabulary token that token: its last step says so (``whole``). When the merges reach
    that token too they are replayed before it; when they do not, that step is the only one,
    as the encoder merges nothing.

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> vocab.update({256: b"ab", 257: b"abc"})
    >>> tok = Tokenizer(vocab, [(b"a", b"b"), (b"ab", b"c")])
    >>> [(s.tokens, s.candidates, s.chosen) for s in encode_steps(tok, "abc")]
    [((97, 98, 99), ((0, 0),), 0), ((256, 99), ((0, 1),), 0), ((257,), (), None)]
    """
    require_byte_level(tokenizer, "Step-through (the merges, one by one)")
    if isinstance(piece, str):
        if piece in tokenizer.special_tokens:
            return [EncodeStep((tokenizer.special_id(piece),), (), None)]
        if piece in tokenizer.added_tokens:  # a tokenizer.json's, not special: never merged
            return [EncodeStep((tokenizer.added_tokens[piece],), (), None)]
        # A lone surrogate as encode() takes it: U+FFFD (a pair as its character).
        data = replace_surrogates(piece).encode("utf-8")
    elif isinstance(piece, (bytes, bytearray, memoryview)):
        data = bytes(piece)
    else:
        raise TypeError(f"encode_steps: piece must be str or bytes, got {type(piece).__name__}")
    merger = tokenizer.merger
    # subtle: without ignore_merges the whole lookup holds only tokens the merges reach, so
    # the replayed merges already end on its id.
    whole = merger.whole_id(data) if merger.looks_up_whole else None
    pair_rank = merger.pair_rank
    byte_ids = merger.byte_ids
    ids = [byte_ids[b] for b in data]
    steps: list[EncodeStep] = []
    while True:
        found = [(i, pair_rank(a, b)) for i, (a, b) in enumerate(zip(ids, ids[1:]))]
        merges = [(i, rank, made) for i, m in found if m is not None for rank, made in (m,)]
        candidates = tuple((i, rank) for i, rank, _ in merges)
        if not merges:
            if whole is None:
                steps.append(EncodeStep(tuple(ids), (), None))
            elif ids == [whole]:
                steps.append(EncodeStep((whole,), (), None, whole=True))
            else:  # looked up, never merged: the merges' steps are not the encoder's
                steps = [EncodeStep((whole,), (), None, whole=True)]
            return steps
        # Lowest rank first, then leftmost: the encoder's choice.
        i, _, made = min(merges, key=lambda c: (c[1], c[0]))
        steps.append(EncodeStep(tuple(ids), candidates, i))
        ids[i : i + 2] = [made]
