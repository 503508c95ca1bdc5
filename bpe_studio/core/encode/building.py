"""From a vocabulary, merges and special tokens to the tables a ``Tokenizer`` encodes with.

What it does: :func:`build` makes all of them (:class:`Tables`): it checks the merges' form
(:func:`merge_list`), that none repeats (:func:`refuse_repeats`) and the byte tokens
(:func:`byte_ids`), gives special tokens their ids (:func:`append_specials`,
:func:`place_specials`), finds the whole tokens a pre-token may be looked up as
(:func:`whole_tokens`, :func:`file_whole_tokens`), and makes the merger and the encoder.
What it leaves out: the rank table (``packed``) and reading files (``formats``).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import TYPE_CHECKING

from ..formats.base.byte_chars import encode_token
from ..formats.base.data import id_limit, sparse_id
from ..io.read_only import ReadOnlyDict, ReadOnlyList
from ..pretokenization.boundaries import SPECIALS_ONLY, CutRules
from ..pretokenization.pretokenizer import Pretokenizer, pretokenizer
from ..pretokenization.specials import Specials, matcher, refuse_single_bytes
from .encoder import Encoder
from .merging.merger import Merger
from .merging.packed import rank_table, rank_table_of_ids

if TYPE_CHECKING:
    from ..formats.base.data import TokenizerData
    from ..formats.hf.pipeline import HfPipeline
    from ..formats.hf.template import Template


@dataclass(frozen=True)
class Tables:
    """What :func:`build` makes; ``Tokenizer`` keeps each under the same name."""

    hf_pipeline: HfPipeline | None
    pipeline: HfPipeline | None
    pre: Pretokenizer
    cut_rules: CutRules
    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    specials: Specials
    special_tokens: list[str]
    cut_specials: Specials
    special_ids: dict[str, int]
    added_ids: dict[str, int]
    lookup_all: bool
    added_in_model: dict[str, int]
    merger: Merger
    encoder: Encoder
    template: Template | None


def build(
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[bytes, bytes]],
    special_tokens: Iterable[str] | Mapping[str, int] | None,
    pattern: str,
    merge_ids: tuple[list[int], list[int], list[int]] | None = None,
    whole_except: Iterable[int] | None = None,
    data: TokenizerData | None = None,
) -> Tables:
    """The tables of a tokenizer (``Tokenizer``'s arguments, and what a record adds).

    ``merge_ids``: the merges' (left, right, made) ids when the caller knows them
    (``TokenizerData.merge_ids``); they spare looking every merge's tokens up.
    ``whole_except``: given when the caller knows that every vocabulary token's bytes merge
    into that one token, except the tokens of these ids (``TokenizerData.whole_tokens``); see
    :func:`whole_tokens`. ``data``: the record, for what a ``tokenizer.json`` adds (its
    pipeline, template, ``ignore_merges``: ``formats.hf``)."""
    # What a tokenizer.json does to text (formats.hf.pipeline), kept to write it back;
    # pipeline: the same when the tokenizer must pre-tokenize with it, else None.
    hf_pipeline = data.pipeline if data is not None else None
    pipeline = hf_pipeline if hf_pipeline is not None and hf_pipeline.needed else None
    pre = pretokenizer(pattern) if pipeline is None else pipeline.pretokenizer()
    # Where text may be cut without changing its tokens (streaming, file chunks, spans).
    rules = pre.cut_rules
    check_vocab(vocab)
    own_vocab = dict(vocab)
    lefts: Sequence[bytes]
    rights: Sequence[bytes]
    known = merge_ids is not None and all(len(part) == len(merges) for part in merge_ids)
    if known:
        merge_tuples, lefts, rights = list(merges), (), ()
    else:
        merge_tuples, lefts, rights = merge_list(merges)
    explicit = special_tokens if isinstance(special_tokens, Mapping) else None
    tokens = list(Specials.of(special_tokens if explicit is None else list(explicit)).tokens)
    if explicit is None:
        refuse_single_bytes(tokens)
    # A tokenizer.json's added tokens that are not special: matched wherever they occur
    # (a special token given for one makes it special); the file's special tokens this
    # tokenizer leaves ordinary (``no_specials``) still hide what their matches cover.
    added = {} if data is None else {t: i for t, i in data.added_tokens.items() if t not in tokens}
    idle = [] if data is None else [t for t in data.special_tokens if t not in tokens]
    specials = matcher(list(added), tokens, tokens + idle)
    # The special tokens before which text may be cut (file chunks, long texts' spans): a
    # tokenizer.json's added tokens with flags or normalization may match elsewhere.
    cut_specials = specials
    if pipeline is not None and not (rules.letter and pipeline.finds_as_text(specials.every)):
        # A pipeline's pattern rules hold only where the added tokens are found in the
        # original text as ``specials`` finds them; they never cut inside one then.
        rules = SPECIALS_ONLY
        raw = pipeline.cut_tokens()
        hiding = [t for t in raw if t in specials.ordinary]
        cut_specials = Specials.of([t for t in raw if t in specials.tokens], hiding)

    inv = inverse(own_vocab)
    bytes_ids = byte_ids(inv)
    if explicit is None:
        special_ids = append_specials(own_vocab, tokens, inv)
    else:
        special_ids = place_specials(own_vocab, tokens, explicit, inv)
    added_ids = place_specials(own_vocab, list(added), added, inv, special_ids, as_held=True)
    # Handed out as the tokenizer's (and read by the merger): a change in place would not
    # reach the tables built below.
    own_vocab = ReadOnlyDict(own_vocab)
    if known:
        assert merge_ids is not None
        ranks, lists = rank_table_of_ids(*merge_ids)
    else:
        ranks, lists = rank_table(inv, merge_tuples, lefts, rights)
    if lists is None and merge_tuples:  # a pair repeats (the table kept its first rank)
        refuse_repeats(merge_tuples)
    # ignore_merges: every pre-token is looked up whole first, not only ASCII ones, since
    # tokens merging cannot reach are found so too.
    lookup_all = data is not None and data.ignore_merges
    # Added tokens, special or not, are cut out of the text before merging: never merged,
    # never looked up whole (but under ignore_merges, see ``file_whole_tokens``).
    cut_ids = special_ids | added_ids
    whole: dict[bytes, int] | None
    if lookup_all:
        assert data is not None
        # The file's own added tokens too: those this tokenizer leaves ordinary (``no_specials``)
        # are looked up as tokenizers looks them up with ``encode_special_tokens``.
        hidden = [*cut_ids.values(), *data.special_tokens.values(), *data.added_tokens.values()]
        whole = file_whole_tokens(own_vocab, inv, hidden, data.added_in_model)
    else:
        whole = whole_tokens(own_vocab, inv, whole_except, cut_ids.values())
    # The merge strategies, the rank table and the per-pre-token cache. The file's special
    # tokens this tokenizer reads as text stay entries of every truncation, as of this one
    # (their ids are the template's, and ignore_merges looks up those model.vocab holds).
    idle_ids = [] if data is None else [data.special_tokens[t] for t in idle]
    merger = Merger(
        own_vocab, bytes_ids, cut_ids.values(), ranks, lists, whole, lookup_all=lookup_all,
        kept_ids=[i for i in idle_ids if i in own_vocab],
    )  # fmt: skip
    # What turns text into ids, on the compiled path or the Python one (``encoder``).
    encoder = Encoder(
        pre, pipeline, specials, cut_ids, merger, rules, cut_specials, tuple(tokens),
        tuple(tokens + idle),
    )  # fmt: skip
    template = data.template if data is not None else None
    return Tables(
        hf_pipeline,
        pipeline,
        pre,
        rules,
        own_vocab,
        ReadOnlyList(merge_tuples),
        specials,
        ReadOnlyList(tokens),
        cut_specials,
        special_ids,
        ReadOnlyDict(added_ids),
        lookup_all,
        ReadOnlyDict(data.added_in_model if lookup_all and data is not None else {}),
        merger,
        encoder,
        template,
    )


# Ids are stored as 32-bit unsigned integers (the packed ids, the kernels, uint32 arrays).
MAX_ID = (1 << 32) - 1


def check_vocab(vocab: object) -> None:
    """TypeError or ValueError naming what is wrong with a vocabulary: not a mapping, an id
    that is not an integer or out of 0..MAX_ID, a token that is not bytes. (An id of -1 was
    kept and decoded; one of 2**40 made every id array uint64; str tokens were reported as
    missing single bytes.)"""
    if not isinstance(vocab, Mapping):
        raise TypeError(f"vocab must be a mapping of id -> token bytes, not {type(vocab).__name__}")
    # subtle: the types are gathered first (C loops: 2 ms for o200k); the ABC check per id,
    # which NumPy's integers need, only runs when some id is not an int (75 ms).
    if set(map(type, vocab)) - {int}:
        bad = next((k for k in vocab if isinstance(k, bool) or not isinstance(k, Integral)), None)
        if bad is not None:
            raise TypeError(f"vocab: id {bad!r} is not an integer")
    if vocab and (min(vocab) < 0 or max(vocab) > MAX_ID):
        worst = min(vocab) if min(vocab) < 0 else max(vocab)
        raise ValueError(f"vocab: id {worst} is out of range (ids are 0 to {MAX_ID:,})")
    if vocab and max(vocab) > id_limit(len(vocab)):
        raise ValueError(f"vocab: {sparse_id(max(vocab), len(vocab))}")
    if set(map(type, vocab.values())) - {bytes}:
        wrong = next(k for k, v in vocab.items() if not isinstance(v, bytes))
        got = type(vocab[wrong]).__name__
        raise TypeError(f"vocab: the token of id {wrong} is a {got}, not bytes")


def inverse(vocab: Mapping[int, bytes]) -> dict[bytes, int]:
    """token -> id; where ids share a token, the lowest id."""
    inv = dict(zip(vocab.values(), vocab.keys()))
    if len(inv) != len(vocab):
        inv = {}
        for idx, tok in sorted(vocab.items()):
            inv.setdefault(tok, idx)
    return inv


def merge_list(
    merges: Sequence[tuple[bytes, bytes]],
) -> tuple[list[tuple[bytes, bytes]], Sequence[bytes], Sequence[bytes]]:
    """The merges as a list of ``(bytes, bytes)`` tuples, and their left and right parts.
    The usual input (such tuples already) is copied as a list of the same tuples; all the
    work is in C loops."""
    merges = list(merges)
    if not merges:
        return [], (), ()
    if not all(isinstance(m, (tuple, list)) for m in merges):
        bad = next(i for i, m in enumerate(merges) if not isinstance(m, (tuple, list)))
        raise TypeError(f"merge {bad} ({merges[bad]!r}) is not a pair of token bytes")
    if set(map(len, merges)) != {2}:
        bad = next(i for i, n in enumerate(map(len, merges)) if n != 2)
        raise ValueError(f"merge {bad} ({merges[bad]!r}) is not a pair of tokens")
    lefts: Sequence[bytes] = list(map(operator.itemgetter(0), merges))
    rights: Sequence[bytes] = list(map(operator.itemgetter(1), merges))
    if set(map(type, merges)) == {tuple} and set(map(type, lefts)) | set(map(type, rights)) == {
        bytes
    }:
        return merges, lefts, rights
    odd = next(
        (i for i, (a, b) in enumerate(merges) if not _bytes_like(a) or not _bytes_like(b)), None
    )
    if odd is not None:
        raise TypeError(f"merge {odd} ({merges[odd]!r}): tokens must be bytes")
    lefts, rights = tuple(map(bytes, lefts)), tuple(map(bytes, rights))
    return list(zip(lefts, rights)), lefts, rights


def refuse_repeats(merges: Sequence[tuple[bytes, bytes]]) -> None:
    """ValueError naming a merge that repeats an earlier one, and both places. Which copy
    ranks is not agreed on (``tokenizers`` ranks the last, this project's encoder the first),
    so no file could hold it: the readers refuse such files (``gpt2.load_files``)."""
    first: dict[tuple[bytes, bytes], int] = {}
    for i, pair in enumerate(merges):
        if first.setdefault(pair, i) != i:
            raise ValueError(
                f"merge {i} ({pair[0]!r} + {pair[1]!r}) repeats merge {first[pair]}: a merge "
                "list holds each pair once (which copy ranks is not agreed on), so no file "
                "could hold it"
            )


def _bytes_like(token: object) -> bool:
    return isinstance(token, (bytes, bytearray, memoryview))


def byte_ids(inv: Mapping[bytes, int]) -> list[int]:
    """The id of each byte's token; ValueError when the vocabulary lacks one."""
    missing = [b for b in range(256) if bytes([b]) not in inv]
    if missing:
        raise ValueError(
            f"the vocabulary lacks {len(missing)} single-byte token(s), e.g. byte "
            f"0x{missing[0]:02x}: a byte-level vocabulary needs all 256"
        )
    return [inv[bytes([b])] for b in range(256)]


def append_specials(
    vocab: dict[int, bytes], tokens: Iterable[str], inv: dict[bytes, int]
) -> dict[str, int]:
    """Ids of listed special tokens: their token's id, or for one missing from the vocabulary a
    new id after the largest (entered in ``vocab`` and ``inv``)."""
    ids: dict[str, int] = {}
    # (the largest kept as it grows: max(vocab) for each new token made 1,000 reserved
    # tokens on o200k's vocabulary cost 3-4 s)
    largest = max(vocab, default=-1)
    for s in tokens:
        sb = s.encode("utf-8")
        if sb not in inv:
            largest += 1
            vocab[largest] = sb
            inv[sb] = largest
        ids[s] = inv[sb]
    return ids


def place_specials(
    vocab: dict[int, bytes],
    tokens: Iterable[str],
    explicit: Mapping[str, int],
    inv: dict[bytes, int],
    placed: Mapping[str, int] | None = None,
    as_held: bool = False,
) -> dict[str, int]:
    """Ids of special tokens given with their ids: each id holds its token's bytes (it is
    entered in ``vocab`` when absent there); none may share an id with those ``placed``
    before them (the special tokens, for a tokenizer.json's other added tokens).
    ``as_held``: an id ``vocab`` has keeps its bytes (a tokenizer.json's added token that is
    not special decodes as ``TokenizerData.added_tokens`` says, not always as its text)."""
    ids: dict[str, int] = {}
    owner: dict[int, str] = {i: s for s, i in (placed or {}).items()}
    for s in tokens:
        given = explicit[s]
        if isinstance(given, bool) or not isinstance(given, Integral):
            raise ValueError(f"special token {s!r}: id {given!r} is not an integer")
        idx = int(given)  # a NumPy integer as the int it is
        if not 0 <= idx <= MAX_ID:
            raise ValueError(f"special token {s!r}: id {idx} is out of range (0 to {MAX_ID:,})")
        if idx > id_limit(len(vocab) + len(explicit)):
            raise ValueError(f"special token {s!r}: {sparse_id(idx, len(vocab) + len(explicit))}")
        if idx in owner:
            raise ValueError(f"special tokens {owner[idx]!r} and {s!r} share id {idx}")
        sb = s.encode("utf-8")
        held = vocab.setdefault(idx, sb)
        if held != sb and not as_held:
            raise ValueError(f"special token {s!r}: id {idx} already holds {held!r}")
        inv.setdefault(held, idx)
        owner[idx] = s
        ids[s] = idx
    return ids


def whole_tokens(
    vocab: Mapping[int, bytes],
    inv: dict[bytes, int],
    whole_except: Iterable[int] | None,
    special_ids: Iterable[int],
) -> dict[bytes, int] | None:
    """token bytes -> id, special tokens left out, when the caller knows that every token's own
    bytes merge into that one token except the tokens of ``whole_except``
    (``TokenizerData.whole_tokens``); else None: a token that merging cannot reach (its bytes
    merge into other tokens) would be looked up wrongly. ``inv`` is consumed."""
    if whole_except is None:
        return None
    for idx in {*whole_except, *special_ids}:
        if inv.get(vocab[idx]) == idx:
            del inv[vocab[idx]]
    return inv


def file_whole_tokens(
    vocab: Mapping[int, bytes],
    inv: dict[bytes, int],
    hidden: Iterable[int],
    added_in_model: Mapping[str, int],
) -> dict[bytes, int]:
    """token bytes -> id, as a ``tokenizer.json`` with ``ignore_merges`` looks a pre-token up
    (``TokenizerData.added_in_model``): every model token, those merging cannot reach
    included; no added token (the ``hidden`` ids) but those its model.vocab holds under
    their own text. tokenizers looks a pre-token up by its byte-level spelling, so only a
    text that spells its own bytes is found (``"<pad>"``; ``"<|a b|>"`` by no one: a space
    is spelt ``Ġ``), whether or not the token is cut out of the text first. ``inv`` is
    consumed."""
    hidden = set(hidden)
    shared = len(inv) != len(vocab)
    for idx in hidden:
        if inv.get(vocab[idx]) == idx:
            del inv[vocab[idx]]
    if shared:
        # subtle: an added token may hold the bytes of a model token (phi-2's "  "); with
        # the lower id it hid that token from ``inv``.
        for idx, tok in sorted(vocab.items()):
            if idx not in hidden:
                inv.setdefault(tok, idx)
    for text, idx in added_in_model.items():
        if encode_token(text.encode("utf-8")) == text:
            inv[text.encode("utf-8")] = idx
    return inv
