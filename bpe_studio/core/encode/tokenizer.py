"""The rank-based byte-level BPE tokenizer: encode, stream, decode, and character spans.

What it does: splits out special tokens (longest first, ``specials``), pre-tokenizes the rest
with the tokenizer's pattern (GPT-2's unless told otherwise, ``pattern``), and within each
pre-token repeatedly merges the adjacent pair with the lowest merge rank (results cached per
pre-token). With GPT-2's own files, or cl100k_base's and o200k_base's rank files, the ids equal
tiktoken's, also for text holding surrogates (``surrogates``). What it leaves out: training
(``trainer``), reading and writing files (``tokenizer_files``, ``gpt2_format``, ``formats``)
and where text may be cut (``boundaries``, which streaming asks).
"""

from __future__ import annotations

import gc
import heapq
import operator
import os
import struct
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from functools import cached_property
from itertools import compress, repeat
from numbers import Integral
from typing import TYPE_CHECKING, Literal, NamedTuple, cast

from ..formats import gpt2
from ..io.surrogates import original_offsets, replace_surrogates
from ..pretokenization import re_split
from ..pretokenization.boundaries import CutRules, cut_rules
from ..pretokenization.pretokenizer import findall_for, pretokenizer
from ..pretokenization.specials import Specials, validate_special_tokens
from ..train.vocab import missing_id

if TYPE_CHECKING:
    from pathlib import Path

    import numpy

    from ..formats.data import TokenizerData
    from .batch_bpe import BatchBpe
    from .char_bpe import CharBpe
    from .char_cuts import CharCuts

# Pre-token results are cached; past this many entries the cache starts afresh, so streaming
# an endless corpus cannot grow it without bound.
CACHE_LIMIT = 500_000
# Pre-tokens longer than this many bytes are merged with a heap instead of list scans.
LONG_PIECE = 64
# In a batch, pre-tokens longer than LONG_PIECE bytes and up to this many are merged in a
# second batch of their own (a batch's rounds go on while any of its pre-tokens still merges,
# so long ones would keep the short ones' rounds going); longer ones one by one.
BATCH_LONG_MAX = 1024
# The second batch needs this many long pre-tokens; fewer are merged one by one.
BATCH_LONG_MIN = 32
# In a batch, pre-tokens of at least this many bytes with multi-byte characters (a run of Han
# characters) are merged from their characters' tokens (``char_bpe``) when there are at least
# BATCH_LONG_MIN of them: far fewer rounds than from bytes.
CHAR_MIN_BYTES = 10
# The tables for cutting such pre-tokens into parts (``char_cuts``) take a while to build, so
# they are built for this many of them at once (or when a preset is loaded).
CUTS_BUILD_MIN = 1000
# This many uncached pre-tokens at once are merged together with NumPy (``batch_bpe``): faster
# per pre-token than one by one, past a fixed cost of a few rounds of array operations.
# Building the batch merger's tables waits for a larger batch (the figures:
# docs/patterns.md, "Thresholds and the figures behind them").
BATCH_MIN = 200
BATCH_BUILD_MIN = 2000
# Encoding a text this long (in characters) builds the fast split patterns first, however
# short the stretches between its special tokens.
BULK_TEXT = 200_000
# A shorter text of several stretches between special tokens (a file chunk of many documents)
# is split with a pattern chosen once for the whole text from this many characters on.
SPLIT_WHOLE_MIN = 1 << 14
# encode_iterable works on buffers of at least this many characters.
STREAM_BLOCK = 1 << 16
_ID_MASK = (1 << 32) - 1
_NO_MERGE = 1 << 63
# The cache holds each pre-token's ids packed as native unsigned 32-bit integers (the array
# module's typecode "I"): bytes are never tracked by the cyclic garbage collector, where tens of
# thousands of new tuples made its next pass walk every one of them after a long encode, and a
# text's ids are one ``bytes.join`` of its pre-tokens' values.
_PACKED = "I"
_WIDTH = 4
if array(_PACKED).itemsize != _WIDTH:  # pragma: no cover - no supported platform
    raise ImportError("array typecode 'I' is not 32 bits wide on this platform")
_ONE_ID = struct.Struct(f"={_PACKED}")  # one id, packed as the cache holds it


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (and back on after, if it was on).
    For blocks that make hundreds of thousands of tuples and no reference cycles: the
    collector, set off again and again by those allocations, would walk every one of them."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _replace_all_but_last_high(buf: str) -> str:
    """``replace_surrogates(buf)``, except that a high surrogate at the very end is kept as it
    is: the low surrogate completing it may come with the next chunk of a stream."""
    if buf and "\ud800" <= buf[-1] <= "\udbff":
        return replace_surrogates(buf[:-1]) + buf[-1]
    return replace_surrogates(buf)


def _inverse(vocab: Mapping[int, bytes]) -> dict[bytes, int]:
    """token -> id; where ids share a token, the lowest id."""
    inverse = dict(zip(vocab.values(), vocab.keys()))
    if len(inverse) != len(vocab):
        inverse = {}
        for idx, tok in sorted(vocab.items()):
            inverse.setdefault(tok, idx)
    return inverse


def _merge_list(
    merges: Sequence[tuple[bytes, bytes]],
) -> tuple[list[tuple[bytes, bytes]], Sequence[bytes], Sequence[bytes]]:
    """The merges as a list of ``(bytes, bytes)`` tuples, and their left and right parts.
    The usual input (such tuples already) is copied as a list of the same tuples; all the
    work is in C loops."""
    merges = list(merges)
    if not merges:
        return [], (), ()
    if set(map(len, merges)) != {2}:
        bad = next(i for i, n in enumerate(map(len, merges)) if n != 2)
        raise ValueError(f"merge {bad} ({merges[bad]!r}) is not a pair of tokens")
    lefts: Sequence[bytes] = list(map(operator.itemgetter(0), merges))
    rights: Sequence[bytes] = list(map(operator.itemgetter(1), merges))
    if set(map(type, merges)) == {tuple} and set(map(type, lefts)) | set(map(type, rights)) == {
        bytes
    }:
        return merges, lefts, rights
    lefts, rights = tuple(map(bytes, lefts)), tuple(map(bytes, rights))
    return list(zip(lefts, rights)), lefts, rights


def _split_ids(flat: numpy.ndarray, ends: list[int]) -> Iterator[bytes]:
    """Each pre-token's ids packed (see ``_PACKED``), from a batch's one array of ids and
    where each pre-token's ids end in it."""
    data = flat.astype(f"={_PACKED}").tobytes()
    cuts = [e * _WIDTH for e in ends]
    return map(data.__getitem__, map(slice, [0, *cuts], cuts))


def _pack(ids: Iterable[int]) -> bytes:
    """``ids`` packed as the cache holds them (see ``_PACKED``)."""
    return array(_PACKED, ids).tobytes()


def _unpack(packed: bytes) -> list[int]:
    """The ids of a packed cache value."""
    return array(_PACKED, packed).tolist()


_INT = frozenset({int})


def _check_ids(ids: Iterable[object], types: set[type]) -> None:
    """TypeError naming the first id that is not an int (``1.0``, ``"7"``, ``True``);
    ``types`` are the ids' types (each is looked at once)."""
    wrong = {t for t in types if issubclass(t, bool) or not issubclass(t, Integral)}
    if wrong:
        bad = next(i for i in ids if type(i) in wrong)
        raise TypeError(f"token ids must be ints, got {bad!r} ({type(bad).__name__})")


def _check_text(text: object, where: str) -> None:
    """TypeError unless ``text`` is a str (bytes are not decoded on a guess)."""
    if not isinstance(text, str):
        hint = ""
        if isinstance(text, (bytes, bytearray, memoryview)):
            hint = " (decode the bytes first, e.g. data.decode('utf-8'))"
        raise TypeError(f"{where} takes a str, not {type(text).__name__}{hint}")


def _check_batch(texts: object, where: str) -> None:
    """TypeError for one text given where a list of texts is expected."""
    if isinstance(texts, (str, bytes, bytearray)):
        raise TypeError(f"{where} takes a list of texts, not one {type(texts).__name__}")


class TokenSpan(NamedTuple):
    """One token of a text: its id and the characters ``text[start:end]`` that hold its
    bytes. ``partial`` is true when the token starts or ends inside a multi-byte character;
    such a span covers the whole character, so neighbouring spans may overlap."""

    id: int
    start: int
    end: int
    partial: bool


class Tokenizer:
    """Byte-level BPE tokenizer.

    ``special_tokens`` is either a list of strings (each takes the id of its bytes in the
    vocabulary, or, missing there, a new id after the largest) or a dict of explicit ids (as
    loaded tokenizers have: cl100k_base's ``<|endoftext|>`` is 100257). ``pattern`` is a name
    ("gpt2", "cl100k", "o200k") or a regex string (see ``pattern.pretokenizer``).

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> vocab[256] = b"ab"
    >>> tok = Tokenizer(vocab, [(b"a", b"b")])
    >>> tok.encode("abc")
    [256, 99]
    >>> tok.decode([256, 99])
    'abc'
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Iterable[str] | Mapping[str, int] | None = None,
        pattern: str = "gpt2",
    ) -> None:
        # subtle: construction makes a few hundred thousand tuples and no reference cycles;
        # the cyclic collector, triggered again and again by those allocations, would walk
        # every one of them (a third of the time for o200k's 200,000 merges).
        with _cyclic_gc_paused():
            self._build(vocab, merges, special_tokens, pattern)

    def _build(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Iterable[str] | Mapping[str, int] | None,
        pattern: str,
        merge_ids: tuple[list[int], list[int], list[int]] | None = None,
        whole_except: Iterable[int] | None = None,
    ) -> None:
        """``merge_ids``: the merges' (left, right, made) ids when the caller knows them
        (``TokenizerData.merge_ids``); they spare looking every merge's tokens up.
        ``whole_except``: given when the caller knows that every vocabulary token's bytes
        merge into that one token, except the tokens of these ids (``TokenizerData.
        whole_tokens``); see ``_whole``."""
        self._pre = pretokenizer(pattern)
        # pre.findall, on the standard library's `re` for cl100k and o200k (``re_split``).
        self._findall = findall_for(self._pre)
        # Where text may be cut without changing its tokens (streaming, file chunks, spans).
        self.cut_rules: CutRules = cut_rules(self._pre.pattern)
        self.vocab: dict[int, bytes] = dict(vocab)
        self.merges: list[tuple[bytes, bytes]]
        lefts: Sequence[bytes]
        rights: Sequence[bytes]
        known = merge_ids is not None and all(len(part) == len(merges) for part in merge_ids)
        if known:
            self.merges, lefts, rights = list(merges), (), ()
        else:
            self.merges, lefts, rights = _merge_list(merges)
        explicit = special_tokens if isinstance(special_tokens, Mapping) else None
        self.specials = Specials.of(special_tokens if explicit is None else list(explicit))
        self.special_tokens: list[str] = list(self.specials.tokens)

        inverse = _inverse(self.vocab)
        missing = [b for b in range(256) if bytes([b]) not in inverse]
        if missing:
            raise ValueError(
                f"the vocabulary lacks {len(missing)} single-byte token(s), e.g. byte "
                f"0x{missing[0]:02x}: a byte-level vocabulary needs all 256"
            )
        self._byte_ids = [inverse[bytes([b])] for b in range(256)]
        # When the byte tokens have ids 0..255 in some order (GPT-2's and ours do), a piece's
        # byte ids are one bytes.translate away.
        self._byte_table = bytes(self._byte_ids) if max(self._byte_ids) < 256 else None

        if explicit is None:
            self._special_ids = self._append_specials(inverse)
        else:
            self._special_ids = self._place_specials(explicit, inverse)
        # (left ids, right ids, made ids) of the merges in rank order, when no pair repeats.
        self._merge_lists: tuple[list[int], list[int], list[int]] | None = None
        if known:
            assert merge_ids is not None
            self._ranks = self._pack_ids(*merge_ids)
        else:
            self._ranks = self._pack_ranks(inverse, lefts, rights)
        # token bytes -> id, special tokens left out, when every token's own bytes merge into
        # that one token: a pre-token that is a whole token is then looked up, not merged (as
        # tiktoken's encoder does first). Without that knowledge, None: a token that merging
        # cannot reach (its bytes merge into other tokens) would be looked up wrongly.
        self._whole: dict[bytes, int] | None = None
        if whole_except is not None:
            for idx in {*whole_except, *self._special_ids.values()}:
                if inverse.get(self.vocab[idx]) == idx:
                    del inverse[self.vocab[idx]]
            self._whole = inverse
        self._cache: dict[str, bytes] = {}  # pre-token -> its ids, packed (see _PACKED)
        self._batch: BatchBpe | None = None
        self._batch_state = "unbuilt"  # then "built", or "unusable" (merges not monotone)
        self._char: CharBpe | None = None  # built with the batch merger, on first use
        self._cuts: CharCuts | None = None  # built on first use
        # The special tokens matched for each set that ``encode(allowed_special=...)`` allows.
        self._allowed: dict[frozenset[str], Specials] = {}
        # What the tokenizer was loaded from (a preset's name, a file), for ``repr``.
        self.name: str | None = None

    def _append_specials(self, inverse: dict[bytes, int]) -> dict[str, int]:
        """Ids of listed special tokens: their token's id, or for one missing from the
        vocabulary a new id after the largest."""
        ids: dict[str, int] = {}
        for s in self.special_tokens:
            sb = s.encode("utf-8")
            if sb not in inverse:
                new_id = max(self.vocab) + 1
                self.vocab[new_id] = sb
                inverse[sb] = new_id
            ids[s] = inverse[sb]
        return ids

    def _place_specials(
        self, explicit: Mapping[str, int], inverse: dict[bytes, int]
    ) -> dict[str, int]:
        """Ids of special tokens given with their ids: each id holds its token's bytes (it is
        entered in the vocabulary when absent there)."""
        ids: dict[str, int] = {}
        owner: dict[int, str] = {}
        for s in self.special_tokens:
            idx = explicit[s]
            if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
                raise ValueError(f"special token {s!r}: id {idx!r} is not a non-negative integer")
            if idx in owner:
                raise ValueError(f"special tokens {owner[idx]!r} and {s!r} share id {idx}")
            sb = s.encode("utf-8")
            held = self.vocab.setdefault(idx, sb)
            if held != sb:
                raise ValueError(f"special token {s!r}: id {idx} already holds {held!r}")
            inverse.setdefault(sb, idx)
            owner[idx] = s
            ids[s] = idx
        return ids

    def _pack_ranks(
        self, inverse: dict[bytes, int], lefts_b: Sequence[bytes], rights_b: Sequence[bytes]
    ) -> dict[tuple[int, int], int]:
        """(left id, right id) -> rank << 32 | merged id: one int, so min() finds the lowest
        rank and the mask gives the merged id. A repeated pair keeps its first (lowest) rank.
        Built with C-level maps: for o200k's 200,000 merges a Python loop was most of the
        construction time."""
        if not self.merges:
            return {}
        get = inverse.get
        lefts = list(map(get, lefts_b))
        rights = list(map(get, rights_b))
        made = list(map(get, map(bytes.__add__, lefts_b, rights_b)))
        if None in lefts or None in rights or None in made:
            rank = next(i for i, t in enumerate(zip(lefts, rights, made)) if None in t)
            a, b = self.merges[rank]
            absent = a if lefts[rank] is None else b if rights[rank] is None else a + b
            raise ValueError(
                f"merge {rank} ({a!r}, {b!r}): token {absent!r} is not in the vocabulary"
            )
        # no None, see above
        return self._pack_ids(
            *cast("tuple[list[int], list[int], list[int]]", (lefts, rights, made))
        )

    def _pack_ids(
        self, lefts: list[int], rights: list[int], made: list[int]
    ) -> dict[tuple[int, int], int]:
        """The packed rank table (``_pack_ranks``) of the merges' ids, in rank order."""
        packed = map(operator.or_, map(operator.lshift, range(len(made)), repeat(32)), made)
        # subtle: reversed, so that the first occurrence of a repeated pair is written last
        # and wins.
        pairs = list(zip(lefts, rights))
        ranks = dict(zip(reversed(pairs), reversed(list(packed))))
        if len(ranks) == len(made):
            # No pair repeats: the lists, in rank order, are the table too, and the batch
            # merger reads them several times faster than the dict's keys.
            self._merge_lists = (lefts, rights, made)
        return ranks

    # ----------------------------------------------------------------- files
    @classmethod
    def from_files(
        cls,
        vocab_path: str | os.PathLike,
        merges_path: str | os.PathLike,
        special_tokens: Iterable[str] | Mapping[str, int] | None = None,
        pattern: str = "gpt2",
    ) -> Tokenizer:
        """Load GPT-2-format ``vocab.json`` and ``merges.txt`` (GPT-2's own files included).

        ``special_tokens``: the tokenizer's special tokens; when None, the vocabulary entries
        no merge makes, which must look like special tokens (``<...>``, ``[...]``): GPT-2's
        files give ``["<|endoftext|>"]``. Either way an entry no merge makes that is neither
        given nor of that form is an error naming both files (a merges file cut short).
        """
        vocab, merges = gpt2.load_files(vocab_path, merges_path)
        given = list(special_tokens) if isinstance(special_tokens, Mapping) else special_tokens
        inferred = gpt2.infer_special_tokens(
            vocab, merges, also=given or (), files=(vocab_path, merges_path)
        )
        specials = inferred if special_tokens is None else special_tokens
        return cls(vocab, merges, specials, pattern)._named(vocab_path)

    @classmethod
    def from_data(
        cls, data: TokenizerData, special_tokens: Mapping[str, int] | None = None
    ) -> Tokenizer:
        """The tokenizer a :class:`~bpe_studio.core.formats.TokenizerData` record describes;
        ``special_tokens``, if given, instead of the record's (vocabulary entries)."""
        tok = cls.__new__(cls)
        specials = data.special_tokens if special_tokens is None else special_tokens
        whole_except = data.special_tokens.values() if data.whole_tokens else None
        with _cyclic_gc_paused():  # as in __init__
            tok._build(
                data.vocab, data.merges, specials, data.pattern, data.merge_ids, whole_except
            )
        return tok

    @classmethod
    def from_tiktoken(
        cls,
        path: str | os.PathLike,
        pattern: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
    ) -> Tokenizer:
        """Load a tiktoken rank file (plain or ``.gz``): ids are its ranks, merges derived.
        ``pattern`` and ``special_tokens`` default to the ``NAME.tiktoken.json`` beside the
        file (as :meth:`save` writes it), or for OpenAI's own rank files to tiktoken's; without
        either, a missing pattern is an error."""
        from ..formats import read_tiktoken

        return cls.from_data(read_tiktoken(path, pattern, special_tokens))._named(path)

    @classmethod
    def from_hf(cls, path: str | os.PathLike) -> Tokenizer:
        """Load a Hugging Face ``tokenizer.json`` holding a byte-level BPE tokenizer."""
        from ..formats import read_hf

        return cls.from_data(read_hf(path))._named(path)

    @classmethod
    def preset(cls, name: str) -> Tokenizer:
        """A tokenizer shipped with the package: "gpt2", "cl100k_base" or "o200k_base"
        (``presets.PRESETS``; also named as ``presets.preset_name`` reads names: "GPT-4o"),
        with its real special tokens. Unknown names: ValueError."""
        from ..formats.preset_table import preset_name
        from ..formats.presets import preset_data

        data = preset_data(name)
        tok = cls.from_data(data)._named(preset_name(name) or name)
        # Like tiktoken's Encoding, a preset builds its tables for merging many pre-tokens
        # at once when it is loaded rather than at its first long text.
        tok._prepare_merging()
        return tok

    @classmethod
    def load(
        cls,
        source: str | os.PathLike,
        pattern: str | None = None,
        special_tokens: Iterable[str] | None = None,
    ) -> Tokenizer:
        """A tokenizer from any source the app and the command line accept: a GPT-2 directory
        (``vocab.json`` + ``merges.txt``, or GPT-2's ``gpt2_vocab.json`` +
        ``gpt2_merges.txt``), a ``tokenizer.json``, a ``.tiktoken`` file (plain or ``.gz``;
        ``pattern`` needed unless its ``NAME.tiktoken.json`` is beside it or it is one of
        OpenAI's), a directory holding one of these, or a preset name. ``special_tokens``:
        vocabulary entries to treat as special tokens besides the source's own (see
        ``tokenizer_files.load_data``). Raises ValueError or FileNotFoundError with one line
        naming the source."""
        from ..formats.files import load_data

        return cls.from_data(load_data(source, pattern, special_tokens))._named(source)

    def _named(self, source: str | os.PathLike) -> Tokenizer:
        """This tokenizer, named for what it was loaded from (``name``, shown by ``repr``)."""
        self.name = os.fspath(source)
        return self

    def to_data(self) -> TokenizerData:
        """This tokenizer as a :class:`~bpe_studio.core.formats.TokenizerData` record."""
        from ..formats.data import TokenizerData

        name = self.pattern_name
        return TokenizerData(
            dict(self.vocab), list(self.merges), dict(self._special_ids), name or self.pattern
        )

    def save(
        self, directory: str | os.PathLike, format: str = "gpt2", name: str | None = None
    ) -> list[Path]:
        """Write the tokenizer into ``directory`` (created if needed), each file atomically:
        ``format="gpt2"``: ``vocab.json`` + ``merges.txt``; ``"hf"``: ``tokenizer.json``;
        ``"tiktoken"``: ``NAME.tiktoken`` + ``NAME.tiktoken.json`` (``name`` defaults to
        "tokenizer"). Returns the paths written. A format that cannot hold this tokenizer
        exactly raises ValueError naming the file."""
        from ..formats.files import save_data

        return save_data(directory, self.to_data(), format, name)

    # --------------------------------------------------------------- queries
    @property
    def pattern(self) -> str:
        """The pre-tokenization regex string."""
        return self._pre.pattern

    @property
    def pattern_name(self) -> str | None:
        """The pattern's name ("gpt2", "cl100k", "o200k"), or None for a custom regex."""
        return self._pre.name

    @cached_property
    def _rank_of_id(self) -> dict[int, int]:
        """merged id -> the rank of the first merge that makes it (built on first use)."""
        ranks: dict[int, int] = {}
        for packed in sorted(self._ranks.values()):
            ranks.setdefault(packed & _ID_MASK, packed >> 32)
        return ranks

    def merge_rank(self, token_id: int) -> int | None:
        """The rank of the merge that made ``token_id``; None for bytes and special tokens."""
        return self._rank_of_id.get(token_id)

    def truncated(self, k: int) -> Tokenizer:
        """The tokenizer with only the first ``k`` merges: the byte tokens, the special tokens
        and the tokens of merges ``0..k-1``, with their ids; the same special tokens. It
        encodes as training stopped after ``k`` merges would.

        Built from this tokenizer's tables, not from scratch: the merge list at once, the
        vocabulary and the rank table (this one's filtered by rank) on first use, so a
        truncation that is only asked for its merges costs a list slice. It shares no cache
        with this one.

        >>> vocab = {i: bytes([i]) for i in range(256)}
        >>> vocab.update({256: b"ab", 257: b"abc"})
        >>> tok = Tokenizer(vocab, [(b"a", b"b"), (b"ab", b"c")])
        >>> tok.truncated(1).encode("abc"), tok.encode("abc")
        ([256, 99], [257])
        """
        if isinstance(k, bool) or not isinstance(k, Integral):
            raise TypeError(f"truncated(k): k must be an int, got {k!r}")
        k = int(k)
        if not 0 <= k <= len(self.merges):
            raise ValueError(
                f"truncated(k): k = {k} is out of range; this tokenizer has "
                f"{len(self.merges)} merges, so 0 <= k <= {len(self.merges)}"
            )
        return _Truncation.of(self, k)

    def special_id(self, token: str) -> int:
        return self._special_ids[token]

    # -------------------------------------------------------------- encoding
    def _piece_ids(self, piece: str) -> bytes:
        """Ids of one pre-token (uncached), packed."""
        data = piece.encode("utf-8")
        if self._whole is not None and (idx := self._whole.get(data)) is not None:
            return _ONE_ID.pack(idx)
        return _pack(self._bpe(data))

    def _ensure_cached(self, pieces: set[str]) -> None:
        """Make sure the cache holds the ids of each of these pre-tokens."""
        cache = self._cache
        if len(cache) > CACHE_LIMIT:
            cache.clear()
        missing = list(pieces.difference(cache))
        merged = self._merge_batch(missing)
        if merged is None:
            piece_ids = self._piece_ids
            for piece in missing:
                cache[piece] = piece_ids(piece)
            return
        short, flat, ends = merged
        cache.update(zip(short, _split_ids(flat, ends)))

    def _cache_whole(
        self, pieces: list[str], encoded: list[bytes], ascii_: numpy.ndarray
    ) -> numpy.ndarray:
        """Cache the ids of the ASCII ``pieces`` (where ``ascii_``) that are whole vocabulary
        tokens (see ``_whole``); return where those are. Only ASCII ones are looked up: a run
        of Han characters is seldom one token, and looking the runs of a Chinese text up cost
        more than the few found saved (merging gives the same ids)."""
        import numpy as np  # subtle: lazily (loaded already: the batch merger uses it)

        assert self._whole is not None
        looked = np.flatnonzero(ascii_)
        ids = list(map(self._whole.get, map(encoded.__getitem__, looked.tolist())))
        found = list(map(operator.is_not, ids, repeat(None)))
        hits = looked[np.array(found, dtype=bool)]
        self._cache.update(
            zip(map(pieces.__getitem__, hits.tolist()), map(_ONE_ID.pack, compress(ids, found)))
        )
        whole = np.zeros(len(pieces), dtype=bool)
        whole[hits] = True
        return whole

    def _merge_batch(self, pieces: list[str]) -> tuple[list[str], numpy.ndarray, list[int]] | None:
        """Merge many distinct pre-tokens together, if there are enough of them; None when
        one by one is faster. Pre-tokens that are whole tokens (where ``_whole`` knows) and
        those longer than ``LONG_PIECE`` bytes go straight into the cache (the latter merged
        in a batch of their own, see ``BATCH_LONG_MAX``); for the others, returns them, all
        their ids in one array, and where in it each one's ids end."""
        batch = self._batch_for(len(pieces))
        if batch is None:
            return None
        import numpy as np  # subtle: lazily (loaded already: the batch merger uses it)

        cache = self._cache
        encoded = list(map(str.encode, pieces))
        count = len(pieces)
        nbytes = np.fromiter(map(len, encoded), dtype=np.int64, count=count)
        nchars = np.fromiter(map(len, pieces), dtype=np.int64, count=count)
        rest = np.ones(count, dtype=bool)
        if self._whole is not None:
            rest = ~self._cache_whole(pieces, encoded, nbytes == nchars)
        # subtle: more bytes than characters means some character takes several bytes.
        char_mask = (nbytes >= CHAR_MIN_BYTES) & (nbytes <= BATCH_LONG_MAX) & (nbytes > nchars)
        short_mask = ~char_mask & (nbytes <= LONG_PIECE) & rest
        long_mask = ~char_mask & (nbytes > LONG_PIECE) & (nbytes <= BATCH_LONG_MAX) & rest
        by_char = list(compress(pieces, char_mask.tolist()))
        short_flags, long_flags = short_mask.tolist(), long_mask.tolist()
        short = list(compress(pieces, short_flags))
        short_bytes = list(compress(encoded, short_flags))
        long = list(compress(pieces, long_flags))
        long_bytes = list(compress(encoded, long_flags))
        huge = ((nbytes > BATCH_LONG_MAX) & rest).tolist()
        for piece, data in compress(zip(pieces, encoded), huge):
            cache[piece] = _pack(self._bpe(data))
        if len(by_char) >= BATCH_LONG_MIN:
            by_char = self._merge_by_char(batch, by_char)
        for piece in by_char:
            data = piece.encode("utf-8")
            if len(data) <= LONG_PIECE:
                short.append(piece)
                short_bytes.append(data)
            else:
                long.append(piece)
                long_bytes.append(data)
        if len(long) >= BATCH_LONG_MIN:
            cache.update(zip(long, _split_ids(*batch.merge(long_bytes, self._merge_ids))))
        else:
            for piece, data in zip(long, long_bytes):
                cache[piece] = _pack(self._bpe(data))
        flat, ends = batch.merge(short_bytes, self._merge_ids)
        return short, flat, ends

    def _merge_by_char(self, batch: BatchBpe, pieces: list[str]) -> list[str]:
        """Cache the ids of ``pieces``, merged from their characters' tokens (``char_bpe``);
        return those to be merged from their bytes instead. With the tables of ``char_cuts``
        (built for ``CUTS_BUILD_MIN`` pieces at once) each piece is first cut where no merge
        can cross, and its parts' ids are joined: a part of one character has that
        character's own ids (cached per character); longer parts are cached once per
        distinct part, merged from their bytes when short, else from their characters'
        tokens, those the check rejects from their bytes."""
        import numpy as np  # subtle: lazily (loaded already: the batch merger uses it)

        char = self._char_bpe(batch)
        if self._cuts is None and len(pieces) < CUTS_BUILD_MIN:
            flat, ends, ok = char.merge(pieces, self._merge_ids)
            good = ok.tolist()
            self._cache.update(compress(zip(pieces, _split_ids(flat, ends)), good))
            return list(compress(pieces, map(operator.not_, good)))
        cut = self._char_cuts().parts(pieces)
        # Parts of one character (a BMP one: the per-character tables hold no others).
        single = (cut.stops - cut.starts == 1) & (cut.points[cut.starts] < 0x10000)
        multi = ~single
        text, cache = cut.text, self._cache
        parts = list(map(text.__getitem__, map(slice, cut.starts[multi].tolist(),
                                                 cut.stops[multi].tolist())))  # fmt: skip
        self._cache_parts(batch, char, list(set(parts).difference(cache)))
        held = list(map(cache.__getitem__, parts))
        single_counts, single_ids = char.char_tokens(
            cut.points[cut.starts[single]], self._merge_ids
        )
        sizes = np.empty(len(single), dtype=np.int64)
        sizes[single] = single_counts
        sizes[multi] = np.fromiter(map(len, held), dtype=np.int64, count=len(held)) // _WIDTH
        from_single = np.repeat(single, sizes)
        flat = np.empty(len(from_single), dtype=np.int64)
        flat[from_single] = single_ids
        flat[~from_single] = np.frombuffer(b"".join(held), dtype=f"={_PACKED}")
        first_part = np.cumsum(cut.per_piece) - cut.per_piece
        ends = np.cumsum(np.add.reduceat(sizes, first_part)).tolist()
        cache.update(zip(pieces, _split_ids(flat, ends)))
        return []

    def _cache_parts(self, batch: BatchBpe, char: CharBpe, parts: list[str]) -> None:
        """Cache the ids of ``parts`` (see ``_merge_by_char``)."""
        cache = self._cache
        encoded = list(map(str.encode, parts))
        long_flags = [len(data) >= CHAR_MIN_BYTES for data in encoded]
        short_flags = list(map(operator.not_, long_flags))
        short = list(compress(parts, short_flags))
        if short:
            merged = batch.merge(list(compress(encoded, short_flags)), self._merge_ids)
            cache.update(zip(short, _split_ids(*merged)))
        long = list(compress(parts, long_flags))
        if not long:
            return
        flat, ends, ok = char.merge(long, self._merge_ids)
        good = ok.tolist()
        cache.update(compress(zip(long, _split_ids(flat, ends)), good))
        failed = list(compress(long, map(operator.not_, good)))
        if len(failed) >= BATCH_LONG_MIN:
            merged = batch.merge(list(map(str.encode, failed)), self._merge_ids)
            cache.update(zip(failed, _split_ids(*merged)))
        else:
            for part in failed:
                cache[part] = _pack(self._bpe(part.encode("utf-8")))

    def _char_bpe(self, batch: BatchBpe) -> CharBpe:
        if self._char is None:
            from .char_bpe import CharBpe  # subtle: lazily; it imports NumPy

            self._char = CharBpe(batch, self.vocab.__getitem__)
        return self._char

    def _char_cuts(self) -> CharCuts:
        if self._cuts is None:
            from .char_cuts import CharCuts  # subtle: lazily; it imports NumPy

            # subtle: built from every vocabulary token (special tokens included), a
            # superset of the tokens merges make: it can only find fewer safe cuts.
            self._cuts = CharCuts(self.vocab.values())
        return self._cuts

    def prepare_bulk(self) -> None:
        """Build now what encoding a lot of text builds on first use (the fast pre-tokenizer
        pattern, the batch merger's tables, ``char_bpe``'s), so that
        worker processes forked afterwards start with them."""
        self._prepare_split()
        self._prepare_merging()

    def _prepare_merging(self) -> None:
        """Build the batch merger's, ``char_bpe``'s and ``char_cuts``' tables now."""
        batch = self._batch_for(BATCH_BUILD_MIN)
        if batch is not None:
            self._char_bpe(batch)
            self._char_cuts()

    def _batch_for(self, count: int) -> BatchBpe | None:
        """The batch merger if ``count`` pre-tokens are worth merging together, else None."""
        if count < BATCH_MIN or self._batch_state == "unusable":
            return None
        if self._batch_state == "unbuilt":
            if count < BATCH_BUILD_MIN:
                return None
            from .batch_bpe import BatchBpe  # subtle: lazily; it imports NumPy

            self._batch = BatchBpe.build(self._ranks, self._byte_ids, self.vocab, self._merge_lists)
            self._batch_state = "unusable" if self._batch is None else "built"
        return self._batch

    def _bpe(self, data: bytes) -> list[int]:
        """Ids of one pre-token's bytes: merge the lowest-ranked adjacent pair (leftmost
        first) until no pair of the merge list is left."""
        table = self._byte_table
        if table is not None:
            ids = list(data.translate(table))
        else:
            byte_ids = self._byte_ids
            ids = [byte_ids[b] for b in data]
        return self._merge_ids(ids)

    def _merge_ids(self, ids: list[int]) -> list[int]:
        """``ids`` with the lowest-ranked adjacent pair merged (leftmost first) until no pair
        of the merge list is left; ``ids`` may already be partly merged."""
        n = len(ids)
        if n < 2:
            return ids
        if n > LONG_PIECE:
            return self._bpe_long(ids)
        get = self._ranks.get
        # ranks[i] is the packed (rank, merged id) of the pair ids[i], ids[i + 1]; after a
        # merge only the two neighbouring entries change.
        ranks = [get(pair, _NO_MERGE) for pair in zip(ids, ids[1:])]
        while True:
            best = min(ranks)
            if best == _NO_MERGE:
                return ids
            i = ranks.index(best)
            ids[i : i + 2] = [best & _ID_MASK]
            del ranks[i]
            if i > 0:
                ranks[i - 1] = get((ids[i - 1], ids[i]), _NO_MERGE)
            if i < len(ranks):
                ranks[i] = get((ids[i], ids[i + 1]), _NO_MERGE)
            elif not ranks:
                return ids

    def _bpe_long(self, ids: list[int]) -> list[int]:
        """``_bpe`` for long pre-tokens (a run of 100,000 spaces) in O(n log n): a linked list
        of tokens and a heap of (rank, position) with stale entries skipped on the way out."""
        get = self._ranks.get
        n = len(ids)
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        alive = [True] * n
        heap = [
            (packed >> 32, i, packed)
            for i in range(n - 1)
            if (packed := get((ids[i], ids[i + 1]))) is not None
        ]
        heapq.heapify(heap)
        while heap:
            rank, i, packed = heapq.heappop(heap)
            j = nxt[i] if alive[i] else n
            # Stale unless i and its right neighbour still form the pair this entry was for.
            if j >= n or get((ids[i], ids[j])) != packed:
                continue
            ids[i] = packed & _ID_MASK
            alive[j] = False
            nxt[i] = k = nxt[j]
            if k < n:
                prv[k] = i
                if (p := get((ids[i], ids[k]))) is not None:
                    heapq.heappush(heap, (p >> 32, i, p))
            h = prv[i]
            if h >= 0 and (p := get((ids[h], ids[i]))) is not None:
                heapq.heappush(heap, (p >> 32, h, p))
        return [t for t, a in zip(ids, alive) if a]

    def _encode_ordinary(self, text: str, out: list[int]) -> None:
        """Append the ids of ``text`` (no special tokens in it) to ``out``."""
        self._encode_pieces(self._findall(text), out)

    def _encode_pieces(self, pieces: list[str], out: list[int]) -> None:
        """Append the ids of these pre-tokens to ``out``."""
        cache = self._cache
        self._ensure_cached(set(pieces))
        out += _unpack(b"".join(map(cache.__getitem__, pieces)))

    def _specials_for(
        self,
        text: str,
        allowed_special: AbstractSet[str] | Literal["all"] | None,
        disallowed_special: Collection[str] | Literal["all"] | None,
    ) -> Specials:
        """The special tokens ``encode`` matches in ``text``: all of this tokenizer's when
        neither argument is given. Else tiktoken's rules: those in ``allowed_special`` ("all",
        or a set; default none; others than this tokenizer's are ignored, as tiktoken does);
        and a string of ``disallowed_special`` ("all", the default: every special token not
        allowed; or a collection of strings) found in ``text`` raises ValueError naming it."""
        if allowed_special is None and disallowed_special is None:
            return self.specials
        ours = self.specials.tokens
        allowed = set(
            ours if allowed_special == "all" else validate_special_tokens(allowed_special)
        )
        if disallowed_special is None or disallowed_special == "all":
            disallowed = [t for t in ours if t not in allowed]
        else:
            disallowed = validate_special_tokens(disallowed_special)
        found = Specials.of(disallowed).regex
        hit = found.search(text) if found is not None else None
        if hit is not None:
            raise ValueError(
                f"text holds {hit.group()!r} at character {hit.start()}, a special token not "
                f'allowed here: pass allowed_special={{{hit.group()!r}}} (or "all") to encode '
                "it as a special token, or disallowed_special=() to encode it as ordinary text"
            )
        key = frozenset(allowed.intersection(ours))
        specials = self._allowed.get(key)
        if specials is None:
            specials = self._allowed[key] = Specials.of([t for t in ours if t in key])
        return specials

    def encode(
        self,
        text: str,
        *,
        allowed_special: AbstractSet[str] | Literal["all"] | None = None,
        disallowed_special: Collection[str] | Literal["all"] | None = None,
    ) -> list[int]:
        """Token ids of ``text``; special tokens in it map to their own ids.

        With neither keyword, every special token of this tokenizer found in ``text`` is
        encoded as that special token (CS336's ``encode``). Given either, ``encode`` follows
        tiktoken's ``Encoding.encode`` (see ``_specials_for``): only ``allowed_special`` are
        encoded as special tokens, and one of ``disallowed_special`` in the text (by default
        every special token not allowed) raises ValueError.

        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<s>"])
        >>> tok.encode("a<s>"), tok.encode("a<s>", disallowed_special=())
        ([97, 256], [97, 60, 115, 62])

        Surrogates are encoded as tiktoken encodes them: a surrogate pair as the character
        it stands for, a lone surrogate as U+FFFD (see ``surrogates``)."""
        _check_text(text, "encode")
        specials = self._specials_for(text, allowed_special, disallowed_special)
        # subtle: only surrogates make UTF-8 encoding fail; trying the text as it is first
        # keeps ordinary text free of a scan for them.
        if len(text) < BULK_TEXT:
            return self._encode_checked(text, specials)
        # subtle: a long text's merging makes many lists (of pre-tokens, of ids) whose
        # allocations would set the collector off again and again over the new objects.
        with _cyclic_gc_paused():
            return self._encode_checked(text, specials)

    def _encode_checked(self, text: str, specials: Specials) -> list[int]:
        try:
            return self._encode(text, specials)
        except UnicodeEncodeError:
            return self._encode(replace_surrogates(text), specials)

    def _segments(self, text: str, specials: Specials) -> list[tuple[list[str], str | None]]:
        """The pre-tokens of each stretch of ``text`` between the special tokens ``specials``
        matches, each with the special token after it (None at the end)."""
        findall = self._findall
        stretches = list(specials.segments(text))
        bulk = len(text) >= BULK_TEXT
        if bulk and self._pre.name == "gpt2":
            # subtle: the fast split patterns are otherwise built only for one long stretch;
            # a text of many short documents between special tokens needs them as much.
            re_split.prepare("gpt2")
        if bulk or (len(stretches) > 1 and len(text) >= SPLIT_WHOLE_MIN):
            # One look at the whole text's characters rather than one per stretch.
            findall = re_split.splitter(self._pre.name, text) or findall
        return [(findall(text[a:b]), special) for a, b, special in stretches]

    def _prepare_split(self) -> None:
        re_split.prepare(self._pre.name)

    def _encode(self, text: str, specials: Specials) -> list[int]:
        return _unpack(self._encode_packed(text, specials))

    def _encode_packed(self, text: str, specials: Specials) -> bytes:
        """The ids of ``text``, packed (see ``_PACKED``), the special tokens ``specials``
        matches encoded as such."""
        # The pre-tokens of every segment are merged together: a corpus of short documents
        # between special tokens then still gets the batch merger (``BATCH_BUILD_MIN``).
        segments = self._segments(text, specials)
        self._ensure_cached(set().union(*(pieces for pieces, _ in segments)))
        cache = self._cache
        if len(segments) == 1:
            return b"".join(map(cache.__getitem__, segments[0][0]))
        parts: list[bytes] = []
        for pieces, special in segments:
            parts.append(b"".join(map(cache.__getitem__, pieces)))
            if special is not None:
                parts.append(_pack([self._special_ids[special]]))
        return b"".join(parts)

    def encode_array(self, text: str, dtype: str = "uint32") -> numpy.ndarray:
        """``encode(text)`` as a NumPy array (``"uint16"`` or ``"uint32"``), built without a
        Python list of ids: the pre-tokens' cached ids (packed bytes) are joined.
        Surrogates are encoded as ``encode`` does."""
        _check_text(text, "encode_array")
        with _cyclic_gc_paused():  # as in encode
            try:
                return self._encode_array(text, dtype)
            except UnicodeEncodeError:
                return self._encode_array(replace_surrogates(text), dtype)

    def _encode_array(self, text: str, dtype: str) -> numpy.ndarray:
        import numpy as np  # subtle: lazily, so importing the core starts no BLAS threads

        if np.dtype(dtype).name not in ("uint16", "uint32"):
            raise ValueError(f"encode_array: dtype {dtype!r} is not uint16 or uint32")
        ids = np.frombuffer(self._encode_packed(text, self.specials), dtype=f"={_PACKED}")
        return ids if np.dtype(dtype) == ids.dtype else ids.astype(dtype)

    def _encode_decided(self, buf: str, out: list[int]) -> int:
        """Encode the part of ``buf`` that more text cannot change; return its length.

        A special token starting at ``p`` is decided once ``p + longest special`` characters
        are in; a pre-token is decided once the characters the pattern looks at past its end
        are in, and none of them could still turn out to begin a special token (the limit
        ``cut_rules.stream_limit`` gives).
        """
        n = len(buf)
        longest = self.specials.longest
        pos = 0
        for a, b, special in self.specials.segments(buf):
            if special is None or b + longest > n:
                break
            self._encode_ordinary(buf[a:b], out)
            out.append(self._special_ids[special])
            pos = b + len(special)
        limit = self.cut_rules.stream_limit(buf, self.specials)
        done = pos
        if limit > pos:
            # subtle: encode the decided matches themselves. Pre-tokenizing buf[pos:done]
            # afresh would be wrong: "\n\nWord" gives "\n", "\n", but "\n\n" alone is one.
            pieces = []
            for m in self._pre.compiled.finditer(buf, pos):
                if m.end() > limit:
                    break
                pieces.append(m.group())
                done = m.end()
            self._encode_pieces(pieces, out)
        return done

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        """Lazily yield the ids of ``"".join(iterable)``, holding only a bounded tail of text.

        The result equals ``encode("".join(iterable))`` however the text is cut into chunks
        (a special token, a run of spaces or a surrogate pair split across chunks included).
        """
        pending: list[str] = []
        pending_len = 0
        tail = ""
        block = STREAM_BLOCK
        for chunk in iterable:
            if not isinstance(chunk, str):
                raise TypeError(f"encode_iterable expects str chunks, got {type(chunk).__name__}")
            pending.append(chunk)
            pending_len += len(chunk)
            if pending_len >= block:
                buf = tail + "".join(pending)
                pending.clear()
                pending_len = 0
                out: list[int] = []
                try:
                    done = self._encode_decided(buf, out)
                except UnicodeEncodeError:
                    buf = _replace_all_but_last_high(buf)
                    out = []
                    done = self._encode_decided(buf, out)
                tail = buf[done:]
                yield from out
                # subtle: a pre-token longer than a block (a huge run of spaces) stays in the
                # tail; growing the block keeps re-scanning it from turning quadratic.
                block = max(STREAM_BLOCK, 2 * len(tail))
        yield from self.encode(tail + "".join(pending))

    # ----------------------------------------------------------------- spans
    def spans(self, text: str) -> list[TokenSpan]:
        """Each token of ``text`` with the characters that hold it (see :class:`TokenSpan`).

        Surrogates are encoded as ``encode`` does; the span of a surrogate pair's character
        covers both of its surrogates in ``text``."""
        _check_text(text, "spans")
        try:
            return self._spans(text)
        except UnicodeEncodeError:
            fixed = replace_surrogates(text)
            spans = self._spans(fixed)
            if len(fixed) == len(text):
                return spans
            where = original_offsets(text)
            return [TokenSpan(i, where[a], where[b], p) for i, a, b, p in spans]

    def _spans(self, text: str) -> list[TokenSpan]:
        result: list[TokenSpan] = []
        for a, b, special in self.specials.segments(text):
            self._spans_ordinary(text, a, b, result)
            if special is not None:
                result.append(TokenSpan(self._special_ids[special], b, b + len(special), False))
        return result

    def _spans_ordinary(self, text: str, start: int, end: int, result: list[TokenSpan]) -> None:
        cache, piece_ids, vocab = self._cache, self._piece_ids, self.vocab
        for m in self._pre.compiled.finditer(text, start, end):
            piece = m.group()
            packed = cache.get(piece)
            if packed is None:
                packed = cache[piece] = piece_ids(piece)
            ids = _unpack(packed)
            base = m.start()
            if piece.isascii():
                for tid in ids:
                    n = len(vocab[tid])
                    result.append(TokenSpan(tid, base, base + n, False))
                    base += n
                continue
            # Map each byte of the piece to the character holding it.
            char_of_byte: list[int] = []
            starts: set[int] = set()
            for ci, ch in enumerate(piece):
                starts.add(len(char_of_byte))
                char_of_byte.extend([ci] * len(ch.encode("utf-8")))
            starts.add(len(char_of_byte))
            b = 0
            for tid in ids:
                e = b + len(vocab[tid])
                partial = b not in starts or e not in starts
                result.append(
                    TokenSpan(tid, base + char_of_byte[b], base + char_of_byte[e - 1] + 1, partial)
                )
                b = e

    # -------------------------------------------------------------- decoding
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids``, concatenated. An id that is not an int (``1.0``, ``"7"``)
        raises TypeError, one not in the vocabulary ValueError naming the ids it has."""
        vocab = self.vocab
        if not isinstance(ids, (list, tuple)):
            # A NumPy array's tolist() gives Python ints (or floats, refused below).
            tolist = getattr(ids, "tolist", None)
            ids = tolist() if callable(tolist) else list(ids)
        # subtle: checked before the lookup, which 1.0 would pass (it hashes as 1).
        types = set(map(type, ids))
        if not _INT.issuperset(types):
            _check_ids(ids, types)
        try:
            return b"".join([vocab[i] for i in ids])
        except KeyError:
            bad = int(next(i for i in ids if i not in vocab))
            raise ValueError(f"unknown token id {bad}: {missing_id(bad, vocab)}") from None

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ``ids``; byte sequences that are not valid UTF-8 become U+FFFD."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    # ------------------------------------------ tiktoken's and Hugging Face's names
    # For code written against tiktoken's Encoding or a Hugging Face tokenizer: thin names
    # over encode and decode. subtle: ``encode(text)`` alone keeps CS336's meaning (every
    # special token of the tokenizer is one); tiktoken's needs a keyword (see ``encode``).
    @property
    def n_vocab(self) -> int:
        """The largest id + 1, as tiktoken's ``n_vocab`` (cl100k_base: 100277, though ids
        100256 and 100261..100275 hold no token; ``len(tok)`` counts tokens)."""
        return self.max_token_value + 1

    @property
    def max_token_value(self) -> int:
        """The largest id (tiktoken's ``max_token_value``)."""
        return max(self.vocab)

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens as a set (tiktoken's ``special_tokens_set``)."""
        return set(self.special_tokens)

    def __len__(self) -> int:
        """The number of tokens, special tokens included (Hugging Face's ``len(tokenizer)``)."""
        return len(self.vocab)

    def __repr__(self) -> str:
        specials = self.special_tokens
        shown = ", ".join(map(repr, specials[:4]))
        if len(specials) > 4:
            shown += f", ... ({len(specials)} in all)"
        named = f" {self.name!r}:" if self.name else ""
        return (
            f"<Tokenizer{named} {len(self.vocab):,} tokens, {len(self.merges):,} merges, "
            f"pattern {self.pattern_name or 'custom'}, special tokens [{shown}]>"
        )

    def encode_ordinary(self, text: str) -> list[int]:
        """The ids of ``text`` with any special token in it encoded as ordinary text
        (tiktoken's ``encode_ordinary``)."""
        return self.encode(text, disallowed_special=())

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        allowed_special: AbstractSet[str] | Literal["all"] | None = None,
        disallowed_special: Collection[str] | Literal["all"] | None = None,
    ) -> list[list[int]]:
        """``encode`` of each text, in this thread (tiktoken's ``encode_batch``)."""
        _check_batch(texts, "encode_batch")
        return [
            self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special)
            for t in texts
        ]

    def encode_ordinary_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """``encode_ordinary`` of each text (tiktoken's ``encode_ordinary_batch``)."""
        _check_batch(texts, "encode_ordinary_batch")
        return [self.encode_ordinary(t) for t in texts]

    def decode_batch(self, batch: Iterable[Iterable[int]]) -> list[str]:
        """``decode`` of each list of ids (tiktoken's ``decode_batch``)."""
        return [self.decode(ids) for ids in batch]

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (tiktoken's ``decode_single_token_bytes``; an unknown id
        raises ValueError, as ``decode`` does, where tiktoken raises KeyError)."""
        return self.decode_bytes([token])

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """The bytes of each token (tiktoken's ``decode_tokens_bytes``)."""
        return [self.decode_single_token_bytes(t) for t in tokens]


class _Truncation(Tokenizer):
    """What :meth:`Tokenizer.truncated` returns: the first ``k`` merges of a full tokenizer.
    The merge list is cut at once; the tables that depend on the merges (the vocabulary, the
    packed rank table, the rank of each id) are cut from the full tokenizer's on first use.
    So a view that only shows a step's tokens (ids moved forward by ``span_steps``) costs a
    list slice, and the tables are built where they are needed (encoding, a tooltip)."""

    _full: Tokenizer
    _k: int

    @classmethod
    def of(cls, tokenizer: Tokenizer, k: int) -> Tokenizer:
        full = tokenizer._full if isinstance(tokenizer, _Truncation) else tokenizer
        out = object.__new__(cls)
        # subtle: every attribute is taken over as it is (pattern, special-token tables, byte
        # tables: all read-only after construction) except those that depend on the merges,
        # and the caches, which must be fresh: a cache shared with this tokenizer would hand
        # out its pre-tokens' ids under more merges.
        out.__dict__.update(full.__dict__)
        for lazy in ("vocab", "_ranks", "_rank_of_id"):
            out.__dict__.pop(lazy, None)
        out._full, out._k = full, k
        out.merges = full.merges[:k]
        out.special_tokens = list(full.special_tokens)
        out._special_ids = dict(full._special_ids)
        if full._merge_lists is not None:
            out._merge_lists = cast(
                "tuple[list[int], list[int], list[int]]",
                tuple(part[:k] for part in full._merge_lists),
            )
        out._cache = {}
        # subtle: that every token's bytes merge into it is known of the full merge list only.
        out._whole = None
        out._batch = None
        out._batch_state = "unbuilt"
        out._char = None
        # subtle: ``_cuts`` is kept: the cuts it allows were found over the full vocabulary, a
        # superset of the truncated one's, so no merge of fewer crosses them either.
        return out

    @cached_property
    def _ranks(self) -> dict[tuple[int, int], int]:  # type: ignore[override]
        # The packed rank table holds rank << 32 | id, so one comparison keeps the first k
        # merges whatever order the table was filled in. A merge repeating an earlier pair is
        # in neither table; its token is that earlier merge's, so the ids kept are complete.
        limit = self._k << 32
        return {pair: packed for pair, packed in self._full._ranks.items() if packed < limit}

    @cached_property
    def _rank_of_id(self) -> dict[int, int]:
        k = self._k
        return {i: r for i, r in self._full._rank_of_id.items() if r < k}

    @cached_property
    def vocab(self) -> dict[int, bytes]:  # type: ignore[override]
        # The vocabulary loses the tokens of merges k.. and any entry no merge makes.
        full = self._full
        base = set(self._byte_ids).union(self._special_ids.values())
        drop = full.vocab.keys() - base - self._rank_of_id.keys()
        if 2 * len(drop) < len(full.vocab):
            vocab = dict(full.vocab)
            for i in drop:
                del vocab[i]
            return vocab
        return {i: t for i, t in full.vocab.items() if i not in drop}
