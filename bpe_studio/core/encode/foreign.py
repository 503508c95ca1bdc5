"""Tokenizers of other kinds than byte-level BPE, run by the Hugging Face ``tokenizers`` library.

What it does: :class:`ForeignTokenizer` wraps a ``tokenizers.Tokenizer`` read from a
``tokenizer.json`` holding WordPiece, Unigram, SentencePiece-style BPE (``▁`` for spaces,
``<0xNN>`` byte fallback: Llama 2, Mistral 7B, Gemma) or any other model ``tokenizers`` runs,
with the surface the editor, Compare, Report and the command line's ``encode``/``decode`` use
from :class:`~.tokenizer.Tokenizer`: ``encode``, ``decode``, ``spans`` (from ``tokenizers``'
offsets), ``vocab`` (each id's token as bytes, for display), ``special_tokens``, ``name``.
Its ids are ``tokenizers``' own, of the text alone: no template's tokens (``[CLS]``, ``<s>``).
:func:`open_tokenizer` reads any source the project reads and gives this class for such a
file, the exact ``Tokenizer`` for everything else.
What it leaves out: merges and truncation (the explain views need byte-level BPE), saving,
and deciding what a file holds (``formats.files``, ``formats.hf_kind``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..formats.files import load_data
from ..formats.hf_kind import ForeignTokenizerFile
from ..io.hf_hub import TOKENIZER_FILE, HubModel, fetch_tokenizer, named_special_tokens
from ..io.surrogates import original_offsets, replace_surrogates
from ..pretokenization.names import shown_pattern
from ..train.vocab import missing_id
from .token_spans import TokenSpan
from .tokenizer import Tokenizer

if TYPE_CHECKING:
    import tokenizers

_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
METASPACE = "\u2581"  # SentencePiece's "▁", which stands for a space


def _token_bytes(token: str, spaces: bool, byte_fallback: bool) -> bytes:
    """What a token stands for, as bytes for display: ``▁`` as a space where the tokenizer
    writes spaces so, a byte-fallback ``<0xNN>`` as that byte."""
    if byte_fallback and (m := _BYTE_TOKEN.fullmatch(token)):
        return bytes([int(m.group(1), 16)])
    return (token.replace(METASPACE, " ") if spaces else token).encode("utf-8")


class ForeignTokenizer:
    """A tokenizer of another kind than byte-level BPE, run by ``tokenizers``.

    ``kind`` names it ("WordPiece", "Unigram", "BPE (SentencePiece-style, byte fallback)").
    ``special_tokens`` are the file's added tokens marked special; every added token in a text
    is encoded as itself (``tokenizers`` matches them first), unless ``no_specials``.
    """

    merges: Sequence[tuple[bytes, bytes]] = ()  # no merges to step through or explain
    pattern_name: str | None = None

    def __init__(
        self,
        backend: tokenizers.Tokenizer,
        *,
        kind: str,
        name: str,
        extra_specials: Iterable[str] = (),
        no_specials: bool = False,
    ) -> None:
        self._backend = backend
        self.kind = kind
        self.name = name
        added = backend.get_added_tokens_decoder()
        specials = {tok.content: idx for idx, tok in sorted(added.items()) if tok.special}
        for token in extra_specials:
            idx = backend.token_to_id(token)
            if idx is None:
                raise ValueError(f"special token {token!r} is not in {name}")
            specials.setdefault(token, idx)
        if no_specials:
            backend.encode_special_tokens = True
            specials = {}
        self._special_ids = specials
        # As the file says: a decoder that turns "▁" back into spaces; byte fallback. (The
        # decoder's own JSON, not the whole tokenizer's, which holds the vocabulary.)
        decoder = backend.decoder
        state = json.loads(decoder.__getstate__()) if decoder is not None else None
        self._spaces = METASPACE in json.dumps(state, ensure_ascii=False)
        self._byte_fallback = bool(getattr(backend.model, "byte_fallback", False))
        # Built here, in the thread that loads: the views read it on the GUI thread.
        self.vocab = self._vocab()

    def mark_special(self, tokens: Iterable[str]) -> None:
        """Show these tokens as special (a model's ``tokenizer_config.json`` names them),
        those of the vocabulary; the ids do not change (``tokenizers`` matches every added
        token in text anyway, and a plain vocabulary entry stays plain text)."""
        backend = self._backend
        for token in tokens:
            idx = backend.token_to_id(token)
            if idx is not None:
                self._special_ids.setdefault(token, idx)
        self.vocab = self._vocab()

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], kind: str, **options: Any) -> ForeignTokenizer:
        """Read a ``tokenizer.json`` (``kind`` as ``formats.hf_kind`` names it); one line
        naming the file if ``tokenizers`` cannot read it."""
        import tokenizers

        try:
            backend = tokenizers.Tokenizer.from_file(os.fspath(path))
        except Exception as e:  # tokenizers raises its own Exception for every failure
            raise ValueError(f"{os.fspath(path)}: tokenizers cannot read it ({e})") from None
        backend.no_truncation()
        backend.no_padding()
        return cls(backend, kind=kind, name=os.fspath(path), **options)

    # --------------------------------------------------------------- queries
    @property
    def pattern(self) -> str:
        """Not a regex: the pre-tokenization is the file's own (for labels)."""
        return f"{self.kind} (tokenizers)"

    def _vocab(self) -> dict[int, bytes]:
        """id -> the token as bytes, for display (see ``_token_bytes``)."""
        spaces, fallback = self._spaces, self._byte_fallback
        vocab = {
            idx: _token_bytes(token, spaces, fallback)
            for token, idx in self._backend.get_vocab(with_added_tokens=True).items()
        }
        for special, idx in self._special_ids.items():
            vocab[idx] = special.encode("utf-8")
        return vocab

    @property
    def special_tokens(self) -> list[str]:
        return list(self._special_ids)

    def special_id(self, token: str) -> int:
        return self._special_ids[token]

    def token_text(self, token_id: int) -> str | None:
        """The token as the file writes it (``##ing``, ``▁the``, ``<0x0A>``), or None."""
        return self._backend.id_to_token(token_id)

    def merge_rank(self, token_id: int) -> int | None:
        return None

    def truncated(self, k: int) -> ForeignTokenizer:
        """This tokenizer: it has no merges to leave out."""
        return self

    @property
    def n_vocab(self) -> int:
        return max(self.vocab) + 1

    def __len__(self) -> int:
        return len(self.vocab)

    def not_explained(self, what: str) -> str:
        """The line the explain views show for this tokenizer: ``what`` (e.g. "The merge
        tree") applies to byte-level BPE only."""
        return (
            f"{what} applies to byte-level BPE. This is a {self.kind} tokenizer, run by the "
            "tokenizers library: the editor, Compare and Report show it."
        )

    def __repr__(self) -> str:
        return f"<ForeignTokenizer {self.name!r}: {self.kind}, {len(self):,} tokens>"

    # -------------------------------------------------------------- encoding
    def _encoding(self, text: str) -> tokenizers.Encoding:
        if not isinstance(text, str):
            raise TypeError(f"encode: expected a str, got {type(text).__name__}")
        try:
            return self._backend.encode(text, add_special_tokens=False)
        except TypeError:
            # tokenizers refuses a str it cannot make UTF-8 of (surrogates): the callers
            # replace them as Tokenizer.encode does.
            raise UnicodeEncodeError("utf-8", text, 0, len(text), "surrogates") from None

    def encode(self, text: str) -> list[int]:
        """The ids of ``text`` (surrogates as ``Tokenizer.encode`` takes them)."""
        try:
            return list(self._encoding(text).ids)
        except UnicodeEncodeError:
            return list(self._encoding(replace_surrogates(text)).ids)

    def encode_array(self, text: str, dtype: str = "uint32") -> np.ndarray:
        return np.asarray(self.encode(text), dtype=dtype)

    def spans(self, text: str) -> list[TokenSpan]:
        """Each token of ``text`` with the characters it comes from (``tokenizers``' offsets,
        which follow any normalizer back to the text). Tokens sharing a character (byte
        fallback's ``<0xNN>``) are ``partial``; a token from no character of its own (a
        ``▁`` put before the text) spans the character it stands before, as partial."""
        return list(map(TokenSpan._make, self.packed_spans(text).tolist()))

    def packed_spans(self, text: str) -> np.ndarray:
        """:meth:`spans` as an ``(n, 4)`` int64 array: id, start, end, partial."""
        try:
            return self._packed(text)
        except UnicodeEncodeError:
            packed = self._packed(replace_surrogates(text))
            where = np.asarray(original_offsets(text), dtype=np.int64)
            packed[:, 1:3] = where[packed[:, 1:3]]
            return packed

    def _packed(self, text: str) -> np.ndarray:
        enc = self._encoding(text)
        n = len(enc.ids)
        packed = np.zeros((n, 4), dtype=np.int64)
        if not n:
            return packed
        packed[:, 0] = enc.ids
        packed[:, 1:3] = enc.offsets
        starts, ends = packed[:, 1], packed[:, 2]
        shared = np.zeros(n, dtype=bool)
        same = (starts[1:] == starts[:-1]) & (ends[1:] == ends[:-1])
        shared[1:] |= same
        shared[:-1] |= same
        empty = starts == ends
        # subtle: a token from no character spans the one after it (the last at the end).
        past = empty & (starts >= len(text))
        starts[past] = max(len(text) - 1, 0)
        ends[past] = len(text)
        before = empty & ~past
        ends[before] = starts[before] + 1
        packed[:, 3] = (shared | empty) & (ends > starts)
        return packed

    def cuts(self, text: str) -> np.ndarray:
        """Sorted offsets ``0 < c < len(text)`` where a token starts and none holds the
        character before (as ``report.cut_offsets``; a cut inside a character has none)."""
        packed = self.packed_spans(text)
        inner = np.unique(packed[packed[:, 3] == 0, 1])
        return inner[(inner > 0) & (inner < len(text))]

    # -------------------------------------------------------------- decoding
    def _check_ids(self, ids: Iterable[int]) -> list[int]:
        tolist = getattr(ids, "tolist", None)
        listed = tolist() if callable(tolist) else list(ids)
        vocab = self.vocab
        for i in listed:
            if isinstance(i, bool) or not isinstance(i, int):
                raise TypeError(f"token ids must be ints, got {i!r}")
            if i not in vocab:
                raise ValueError(f"unknown token id {i}: {missing_id(i, vocab)}")
        return listed

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids`` as ``tokenizers`` decodes it (its decoder: ``▁`` to spaces,
        byte fallback joined into characters; bytes that make no character become U+FFFD)."""
        return self._backend.decode(self._check_ids(ids), skip_special_tokens=False)

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return self.decode(ids).encode("utf-8")

    def token_decoder(self) -> Any:
        """A fresh ``tokenizers.decoders.DecodeStream``: one id at a time, the text it adds."""
        from tokenizers.decoders import DecodeStream

        return DecodeStream(skip_special_tokens=False)

    @property
    def backend(self) -> tokenizers.Tokenizer:
        """The ``tokenizers.Tokenizer`` itself."""
        return self._backend


AnyTokenizer = Tokenizer | ForeignTokenizer


def open_tokenizer(
    source: str | os.PathLike[str],
    pattern: str | None = None,
    special_tokens: Iterable[str] | None = None,
    *,
    no_specials: bool = False,
) -> AnyTokenizer:
    """The tokenizer ``source`` names (every source ``Tokenizer.load`` reads): the exact
    ``Tokenizer`` for byte-level BPE, a :class:`ForeignTokenizer` for a ``tokenizer.json`` of
    another kind (its own pre-tokenization: ``pattern`` must be None; the special tokens a
    ``tokenizer_config.json`` beside it names are shown as special, its ids unchanged, while
    a byte-level file keeps its own: more would change its ids). ``no_specials``: every
    special token is ordinary text. One-line errors name the source."""
    extra = list(special_tokens or ())
    try:
        data = load_data(source, pattern, extra)
    except ForeignTokenizerFile as foreign:
        if pattern is not None:
            raise ValueError(
                f"{foreign.path}: a {foreign.kind} tokenizer splits text its own way; "
                f"a pattern ({shown_pattern(pattern)}) cannot be applied"
            ) from None
        foreign_tok = ForeignTokenizer.from_file(
            foreign.path, foreign.kind, extra_specials=extra, no_specials=no_specials
        )
        if not no_specials:
            foreign_tok.mark_special(named_special_tokens(foreign.path.parent))
        return foreign_tok
    tok = Tokenizer.from_data(data, {} if no_specials else None)
    tok.name = os.fspath(source)
    return tok


def open_hub(
    model: HubModel, progress: Callable[[int, int | None], None] | None = None
) -> AnyTokenizer:
    """The tokenizer of a Hub model (``hf_hub.fetch_tokenizer``: from the cache, or
    downloaded with ``progress``), named ``ORG/NAME``."""
    tok = open_tokenizer(fetch_tokenizer(model, progress) / TOKENIZER_FILE)
    tok.name = model.name
    return tok
