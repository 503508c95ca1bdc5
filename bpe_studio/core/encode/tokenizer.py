"""The rank-based byte-level BPE tokenizer: encode, stream, decode, and character spans.

What it does: splits out special tokens (longest first, ``specials``), pre-tokenizes the rest
with the tokenizer's pre-tokenizer (GPT-2's pattern unless told otherwise, ``pretokenizer``),
and hands the pre-tokens to its :class:`~.merger.Merger`, which merges within each one the
adjacent pair with the lowest merge rank (results cached per pre-token). With GPT-2's own
files, or cl100k_base's and o200k_base's rank files, the ids equal tiktoken's, also for text
holding surrogates (``surrogates``). What it leaves out: the
engine (``encoder``, ``merging``) and building its tables (``building``); the methods it hands
on are ``streaming``'s, ``token_spans``', ``decoding``'s and ``tiktoken_names``'; training
(``train``) and files (``formats``).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from functools import cached_property
from numbers import Integral
from typing import TYPE_CHECKING, Literal

from ..formats import gpt2
from ..io.gc_pause import gc_paused
from ..io.read_only import ReadOnlyList
from ..pretokenization.boundaries import CutRules
from ..pretokenization.pretokenizer import Pretokenizer
from . import building, decoding, streaming, token_spans
from .interface import check_text, end_of_text, known_id, single_token, special_id_of
from .tiktoken_names import TiktokenNames
from .token_spans import TokenSpan

if TYPE_CHECKING:
    from pathlib import Path

    import numpy
    from numpy.typing import DTypeLike

    from ..formats.base.data import TokenizerData
    from ..formats.hf.pipeline import HfPipeline
    from ..formats.hf.template import Template


class Tokenizer(TiktokenNames):
    """Byte-level BPE tokenizer.

    ``special_tokens`` is either a list of strings (each takes the id of its bytes in the
    vocabulary, or, missing there, a new id after the largest) or a dict of explicit ids (as
    loaded tokenizers have: cl100k_base's ``<|endoftext|>`` is 100257). A special token of a
    single byte (``"a"``) is refused in a list, naming it: the byte is a token already
    (``specials.refuse_single_bytes`` says why). ``pattern`` is a name ("gpt2", "cl100k",
    "o200k") or a regex string (see ``pattern.pretokenizer``).

    It satisfies :class:`~.interface.TokenizerLike`, as ``ForeignTokenizer`` does.

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
        self._build(vocab, merges, special_tokens, pattern)

    def _build(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Iterable[str] | Mapping[str, int] | None,
        pattern: str,
        merge_ids: tuple[list[int], list[int], list[int]] | None = None,
        whole_except: Iterable[int] | None = None,
        data: TokenizerData | None = None,
    ) -> None:
        """Make the tables (``building.build``, which says what the arguments are)."""
        # subtle: construction makes a few hundred thousand tuples and no reference cycles;
        # the cyclic collector, triggered again and again by those allocations, would walk
        # every one of them (a third of the time for o200k's 200,000 merges).
        with gc_paused():
            t = building.build(
                vocab, merges, special_tokens, pattern, merge_ids, whole_except, data
            )
        # What a tokenizer.json does to text (formats.hf.pipeline), kept to write it back;
        # _pipeline: the same when the tokenizer must pre-tokenize with it, else None.
        self._hf_pipeline, self._pipeline, self._pre = t.hf_pipeline, t.pipeline, t.pre
        # Where text may be cut without changing its tokens (streaming, file chunks, spans).
        self.cut_rules: CutRules = t.cut_rules
        self.vocab: dict[int, bytes] = t.vocab
        self.merges: list[tuple[bytes, bytes]] = t.merges
        self.specials, self.special_tokens = t.specials, t.special_tokens
        # added_tokens: a tokenizer.json's non-special ones (``TokenizerData.added_tokens``).
        self._special_ids, self.added_tokens = t.special_ids, t.added_ids
        self.cut_specials = t.cut_specials  # those before which text may be cut (building)
        # ignore_merges: every pre-token looked up whole; the added tokens model.vocab holds.
        self._lookup_all, self._added_in_model = t.lookup_all, t.added_in_model
        # The merge strategies, the rank table and the per-pre-token cache; what turns text
        # into ids, on the compiled path or the Python one (``encoder``).
        self.merger, self._encoder = t.merger, t.encoder
        self._findall = self._encoder.findall  # pre.findall, on `re` for named patterns
        self.name: str | None = None  # what it was loaded from (a preset, a file): repr
        # The ids a tokenizer.json's post-processor puts around every text (``encode(text,
        # add_special_tokens=True)``) or None, and what is done otherwise than the file says.
        self.template: Template | None = t.template
        self.notes: tuple[str, ...] = () if data is None else data.notes

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

        ``special_tokens``: the tokenizer's special tokens; when None (unlike the constructor's
        None, CS336's "none"), the vocabulary entries no merge makes, which must look like
        special tokens (``<...>``, ``[...]``): GPT-2's files give ``["<|endoftext|>"]``. Either
        way an entry no merge makes that is neither given nor of that form is an error naming
        both files (a merges file cut short)."""
        vocab, merges = gpt2.load_files(vocab_path, merges_path)
        specials = gpt2.special_tokens_of(vocab, merges, special_tokens, (vocab_path, merges_path))
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
        tok._build(
            data.vocab, data.merges, specials, data.pattern, data.merge_ids, whole_except, data
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
        """Load a Hugging Face ``tokenizer.json`` holding a byte-level BPE tokenizer: it
        encodes as ``tokenizers`` does (its normalizers, pre-tokenizers, added tokens and
        ``ignore_merges``; its template's tokens with ``encode(..., add_special_tokens=True)``).
        What could not be reproduced exactly is refused (ValueError naming the component)."""
        from ..formats import read_hf

        return cls.from_data(read_hf(path))._named(path)

    @classmethod
    def preset(cls, name: str) -> Tokenizer:
        """A tokenizer shipped with the package: "gpt2", "cl100k_base" or "o200k_base"
        (``preset_table.PRESETS``; also named as ``preset_table.preset_name`` reads names:
        "GPT-4o"), with its real special tokens. Unknown names: ValueError."""
        from ..formats.base.preset_table import preset_name
        from ..formats.presets import preset_data

        data = preset_data(name)
        tok = cls.from_data(data)._named(preset_name(name) or name)
        # Like tiktoken's Encoding, a preset builds its tables for merging many pre-tokens
        # at once when it is loaded rather than at its first long text (the compiled
        # merger's when its kernels are loaded, else the Python path's).
        tok._encoder.prepare_bulk()
        return tok

    @classmethod
    def load(
        cls,
        source: str | os.PathLike,
        pattern: str | None = None,
        special_tokens: Iterable[str] | Mapping[str, int] | None = None,
    ) -> Tokenizer:
        """A tokenizer from any source the app and the command line accept: a GPT-2 directory
        (``vocab.json`` + ``merges.txt``, or GPT-2's ``gpt2_vocab.json`` +
        ``gpt2_merges.txt``), a ``tokenizer.json``, a ``.tiktoken`` file (plain or ``.gz``;
        ``pattern`` needed unless its ``NAME.tiktoken.json`` is beside it or it is one of
        OpenAI's), a directory holding one of these, or a preset name. ``special_tokens``:
        vocabulary entries to treat as special tokens besides the source's own, or a dict of
        ids checked as :meth:`from_files` checks it (``files.load_data``). Raises ValueError or
        FileNotFoundError with one line naming the source."""
        from ..formats.files import load_data

        return cls.from_data(load_data(source, pattern, special_tokens))._named(source)

    def _named(self, source: str | os.PathLike) -> Tokenizer:
        """This tokenizer, named for what it was loaded from (``name``, shown by ``repr``)."""
        self.name = os.fspath(source)
        return self

    def to_data(self) -> TokenizerData:
        """This tokenizer as a :class:`~bpe_studio.core.formats.TokenizerData` record."""
        from ..formats.base.data import TokenizerData

        return TokenizerData(
            dict(self.vocab),
            list(self.merges),
            dict(self._special_ids),
            self.pattern_name or self.pattern,
            ignore_merges=self._lookup_all,
            pipeline=self._hf_pipeline,
            template=self.template,
            added_tokens=dict(self.added_tokens),
            added_in_model=dict(self._added_in_model),
        )

    def save(
        self, directory: str | os.PathLike, format: str | None = None, name: str | None = None
    ) -> list[Path]:
        """Write the tokenizer into ``directory`` (created if needed), each file atomically:
        ``format="gpt2"`` (or None, the default): ``vocab.json`` + ``merges.txt``; ``"hf"``:
        ``tokenizer.json``; ``"tiktoken"``: ``NAME.tiktoken`` + ``NAME.tiktoken.json``
        (``name`` defaults to "tokenizer"). Returns the paths written. A format that cannot
        hold this tokenizer exactly raises ValueError naming the file (GPT-2 files cannot say
        ``ignore_merges``: ``whole_lookup``). What GPT-2 files lose (no pattern, no special token
        marked) a LossyFormatWarning names, with the formats that hold it."""
        from ..formats.files import save_data
        from .whole_lookup import data_to_save

        return save_data(directory, data_to_save(self, format), format or "gpt2", name)

    # --------------------------------------------------------------- queries
    kind = "byte-level BPE"  # what ForeignTokenizer.kind names for the other kinds

    @property
    def pre_tokenizer(self) -> Pretokenizer:
        """What cuts text into pre-tokens (``findall``, ``name``, ``pattern``)."""
        return self._pre

    @property
    def hf_pipeline(self) -> HfPipeline | None:
        """The ``tokenizer.json`` pipeline (normalizers, pre-tokenizer steps, added-token
        flags: ``formats.hf``) this tokenizer encodes through, or None when its pattern alone
        splits text exactly as the file does."""
        return self._pipeline

    @property
    def pattern(self) -> str:
        """The pre-tokenization regex string."""
        return self._pre.pattern

    @property
    def pattern_name(self) -> str | None:
        """The pattern's name ("gpt2", "cl100k", "o200k"), or None for a custom regex."""
        return self._pre.name

    def merge_rank(self, token_id: int) -> int | None:
        """The rank of the merge making ``token_id``: None for a byte or special token."""
        return self.merger.merge_rank(known_id(self.vocab, token_id, "merge_rank"))

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
        return _Truncation.of(self, k)

    def special_id(self, token: str) -> int:
        """The id of the special token ``token`` (:class:`~.interface.TokenNotFound`, a
        KeyError, naming the special tokens there are if it is not one)."""
        return special_id_of(self._special_ids, token)

    @property
    def eot_token(self) -> int:
        """The id of the end-of-text token (tiktoken's ``eot_token``): ``<|endoftext|>``, else
        the first special token spelt as models spell it (``<|end_of_text|>``, ``</s>``,
        ``<eos>``: ``interface.END_OF_TEXT_TOKENS``). A tokenizer with none raises
        :class:`~.interface.TokenNotFound` (a KeyError, as tiktoken's, and a ValueError)."""
        return end_of_text(self._special_ids, self.name)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the one token whose bytes are ``text_or_bytes`` (a str is taken as its
        UTF-8 bytes), a special token included (tiktoken's ``encode_single_token``); where
        several hold them, the added token encode gives, else the lowest. None raises
        :class:`~.interface.TokenNotFound` naming them (a KeyError, as tiktoken's).

        >>> Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")]
        ...           ).encode_single_token("ab")
        256
        """
        return single_token(self._inverse, text_or_bytes, self.name)

    @cached_property
    def _inverse(self) -> dict[bytes, int]:
        """token bytes -> id (an added token's, else the lowest), built on first use."""
        return building.inverse(self.vocab) | {t.encode(): i for t, i in self.added_tokens.items()}

    # -------------------------------------------------------------- encoding
    def prepare_bulk(self) -> None:
        """Build now what encoding a lot of text builds on first use, so that the next texts
        (and worker processes forked afterwards) start with it: where this tokenizer can take
        the compiled path, its kernels loaded (about 0.3 s a process; compiled the first time
        on a machine, logged) and the compiled merger's tables; else the Python path's (the fast
        pre-tokenizer pattern, the merger's tables for many pre-tokens at once)."""
        self._encoder.prepare_bulk(load_kernels=True)

    def encode(
        self,
        text: str,
        *,
        allowed_special: AbstractSet[str] | Literal["all"] | None = None,
        disallowed_special: Collection[str] | Literal["all"] | None = None,
        add_special_tokens: bool = False,
    ) -> list[int]:
        """Token ids of ``text``; special tokens in it map to their own ids.

        ``add_special_tokens``: the ids as the model sees them, with those the tokenizer's
        ``template`` puts around the text (a ``tokenizer.json``'s post-processor, e.g. Llama
        3's ``<|begin_of_text|>``); without a template nothing is added. Hugging Face's name,
        but off by default: the text's own tokens are what this project shows.

        With neither keyword, every special token of this tokenizer found in ``text`` is
        encoded as that special token (CS336's ``encode``). Given either, ``encode`` follows
        tiktoken's ``Encoding.encode`` (see ``Encoder.specials_for``): only ``allowed_special`` are
        encoded as special tokens, and one of ``disallowed_special`` in the text (by default
        every special token not allowed) raises ValueError.

        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<s>"])
        >>> tok.encode("a<s>"), tok.encode("a<s>", disallowed_special=())
        ([97, 256], [97, 60, 115, 62])

        Surrogates are encoded as tiktoken encodes them: a surrogate pair as the character
        it stands for, a lone surrogate as U+FFFD (see ``surrogates``)."""
        check_text(text, "encode")
        specials = self._encoder.specials_for(text, allowed_special, disallowed_special)
        ids = self._encoder.ids(text, specials)
        if add_special_tokens and self.template is not None:
            return self.template.apply(ids)
        return ids

    def encode_array(self, text: str, dtype: DTypeLike | None = "uint32") -> numpy.ndarray:
        """``encode(text)`` as a NumPy array of ``dtype``, built without a Python list of ids.
        Surrogates are encoded as ``encode`` does.

        ``dtype``: any integer dtype that holds this tokenizer's largest id (``"uint32"``,
        ``"int64"``, ``"uint16"`` for a vocabulary below 65,536 ids); one that does not raises
        ValueError naming it, the largest id and the dtype that would do, before any work
        (ids never wrap around). None or ``"auto"``: the smallest that holds them all, as
        ``encode_file`` and ``bpe-studio encode`` choose (``id_arrays.ids_dtype``)."""
        check_text(text, "encode_array")
        import numpy as np  # subtle: lazily, so importing the core starts no BLAS threads

        from .id_arrays import array_dtype  # subtle: lazily, as NumPy

        chosen = array_dtype(dtype, self.max_token_value)
        ids = self._encoder.any_array(text, self.specials, pause_gc=True)
        return ids if np.dtype(chosen) == ids.dtype else ids.astype(chosen)

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        """Lazily yield the ids of ``"".join(iterable)``, holding only a bounded tail of text.

        The result equals ``encode("".join(iterable))`` however the text is cut into chunks
        (a special token, a run of spaces or a surrogate pair split across chunks included).
        A file is read, and a long chunk encoded, in blocks of ``streaming.STREAM_BLOCK``
        characters (a file may be one long line). The tail is bounded by the longest
        pre-token: one pre-token (a run of one character, of letters, an emoji sequence) is
        held whole until it ends, as exact BPE needs.
        """
        return streaming.encode_iterable(self._encoder, iterable)

    def spans(self, text: str) -> list[TokenSpan]:
        """Each token of ``text`` with the characters that hold it (see :class:`TokenSpan`).

        Surrogates are encoded as ``encode`` does; the span of a surrogate pair's character
        covers both of its surrogates in ``text``."""
        check_text(text, "spans")
        return token_spans.spans(self._encoder, text)

    def packed_spans(self, text: str) -> numpy.ndarray:
        """:meth:`spans` as an ``(n, 4)`` int64 array: id, start, end, partial (0 or 1), as
        ``ForeignTokenizer.packed_spans`` gives them; built without a Python object per
        token on the compiled path."""
        check_text(text, "packed_spans")
        return token_spans.packed_spans(self._encoder, text)

    # -------------------------------------------------------------- decoding
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids``, concatenated. An id that is not an int (``1.0``, ``"7"``)
        raises TypeError, one not in the vocabulary ValueError naming the ids it has."""
        return decoding.decode_bytes(self.vocab, ids, self.__dict__)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Text of ``ids``: their bytes decoded as UTF-8 with ``errors`` as ``bytes.decode``
        takes it (tiktoken's ``decode``): "replace" (the default) makes bytes that are not
        valid UTF-8 U+FFFD, "strict" raises UnicodeDecodeError naming the id."""
        return decoding.decode_text(self.vocab, ids, errors, self.__dict__)

    # ------------------------------------------------- tiktoken's other names
    # (the rest, over encode and decode, come from ``tiktoken_names``)
    @property
    def max_token_value(self) -> int:
        """The largest id (tiktoken's ``max_token_value``)."""
        return self._largest_id

    @cached_property
    def _largest_id(self) -> int:
        # subtle: cached (encode_array asks it for every text); a truncation drops it.
        return max(self.vocab)

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


class _Truncation(Tokenizer):
    """What :meth:`Tokenizer.truncated` returns: the first ``k`` merges of a full tokenizer.
    The merge list is cut at once; the tables that depend on the merges (the vocabulary, the
    rank table, the rank of each id) are the merger's, cut from the full one's on first use
    (``Merger.truncated``). So a view that only shows a step's tokens (ids moved forward by
    ``spans_at_step``) costs a list slice, and the tables are built where they are needed
    (encoding, a tooltip)."""

    @classmethod
    def of(cls, tokenizer: Tokenizer, k: int) -> Tokenizer:
        if isinstance(k, bool) or not isinstance(k, Integral):
            raise TypeError(f"truncated(k): k must be an int, got {k!r}")
        k = int(k)
        if not 0 <= k <= len(tokenizer.merges):
            raise ValueError(
                f"truncated(k): k = {k} is out of range; this tokenizer has "
                f"{len(tokenizer.merges)} merges, so 0 <= k <= {len(tokenizer.merges)}"
            )
        out = object.__new__(cls)
        # subtle: every attribute is taken over as it is (pattern, special-token tables: all
        # read-only after construction) except those that depend on the merges.
        out.__dict__.update(tokenizer.__dict__)
        for cached in ("vocab", "_inverse", "_largest_id"):
            out.__dict__.pop(cached, None)
        out.merges = ReadOnlyList(tokenizer.merges[:k])
        out._special_ids = dict(tokenizer._special_ids)
        out.merger = tokenizer.merger.truncated(k)
        out._encoder = tokenizer._encoder.with_merger(out.merger)
        return out

    @cached_property
    def vocab(self) -> dict[int, bytes]:  # type: ignore[override]
        return self.merger.vocab
