"""Tokenizers of other kinds than byte-level BPE, run by the Hugging Face ``tokenizers`` library.

What it does: :class:`ForeignTokenizer` wraps a ``tokenizers.Tokenizer`` read from a
``tokenizer.json`` holding WordPiece, Unigram, SentencePiece-style BPE (``▁`` for spaces,
``<0xNN>`` byte fallback: Llama 2, Mistral 7B, Gemma) or any other model ``tokenizers`` runs,
with the whole interface of :class:`~.tokenizer.Tokenizer` (``interface.TokenizerLike``): its
ids are ``tokenizers``' own; ``encode(..., add_special_tokens=True)`` adds the template's
tokens as ``tokenizers`` does; ``decode_bytes`` gives byte-fallback tokens as their bytes
(``foreign_bytes``); a BPE model has merges, ranks and truncations (``foreign_merges``), a
WordPiece or Unigram model refuses them, saying why; ``save`` writes its ``tokenizer.json``.
:func:`open_tokenizer` reads any source the project reads and gives this class for such a
file, the exact ``Tokenizer`` for everything else.
What it leaves out: deciding what a file holds (``formats.files``, ``formats.hf.kind``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from functools import cached_property
from numbers import Integral
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..formats.base.byte_chars import decode_token
from ..formats.files import load_data
from ..formats.hf.kind import (
    TOKENIZERS_BYTE_LEVEL,
    ForeignTokenizerFile,
    RefusedByteLevelFile,
    backend_dropped_note,
    dropout_note,
    has_byte_level,
    read_backend,
    undecoded_note,
    whole_text_note,
)
from ..formats.hf.specials_off import special_tokens_as_text
from ..formats.hf.template import Template, read_template
from ..io.atomic import atomic_write_bytes, output_folder
from ..io.hf_hub import (
    TOKENIZER_FILE,
    HubModel,
    fetch_tokenizer,
    named_special_tokens,
    parse_hub_source,
    said_of_model,
)
from ..io.read_only import ReadOnlyDict
from ..pretokenization.names import shown_pattern
from ..pretokenization.specials import Specials, tiktoken_allowed, validate_special_tokens
from ..text.surrogates import original_offsets, replace_surrogates
from ..train.vocab import missing_id
from .backend_panics import panics_as_errors
from .decoding import naming_the_id, refuse_unordered
from .foreign_bytes import BYTE_TOKEN, ExactDecoder, falls_back_to_bytes
from .foreign_merges import BpeMerges, is_bpe
from .id_arrays import array_dtype
from .interface import (
    check_batch,
    check_text,
    check_threads,
    each_named,
    end_of_text,
    known_id,
    single_token,
)
from .streaming import text_chunks
from .token_spans import TokenSpan, span_cuts
from .tokenizer import Tokenizer

if TYPE_CHECKING:
    import tokenizers
    from numpy.typing import DTypeLike

METASPACE = "\u2581"  # SentencePiece's "▁", which stands for a space
# Texts of this many characters or more go through tokenizers' batch call, which lets go of
# Python's lock while it encodes; its one-text call holds it throughout (a megabyte held a
# window's thread for a second while a view encoded it in the background).
LOCK_FREE_CHARS = 1 << 14


def _token_bytes(token: str, spaces: bool, byte_fallback: bool, byte_level: bool) -> bytes:
    """What a token stands for, as bytes for display: ``▁`` as a space where the tokenizer
    writes spaces so, a byte-fallback ``<0xNN>`` as that byte, a byte-level model's token
    (``Ġthe``) as the bytes it spells (`` the``)."""
    if byte_fallback and (m := BYTE_TOKEN.fullmatch(token)):
        return bytes([int(m.group(1), 16)])
    if byte_level:
        try:
            return decode_token(token, "")
        except ValueError:
            pass  # an added token outside that alphabet: its text is its bytes
    return (token.replace(METASPACE, " ") if spaces else token).encode("utf-8")


def _encoded(
    backend: tokenizers.Tokenizer, text: str, add_special_tokens: bool
) -> tokenizers.Encoding:
    """``backend.encode(text)``, the same, without holding Python's lock for a long text."""
    if len(text) >= LOCK_FREE_CHARS:
        return backend.encode_batch([text], add_special_tokens=add_special_tokens)[0]
    return backend.encode(text, add_special_tokens=add_special_tokens)


def _refuse_empty_added(
    backend: tokenizers.Tokenizer, added: Iterable[tokenizers.AddedToken], name: str
) -> None:
    """Refuse (ValueError naming the file ``name`` and the token) a file with a
    ``normalized`` added token its normalizer makes nothing of ("\u3000" under Strip):
    tokenizers then hangs, or allocates memory until the process is killed, on texts around
    it (a tokenizers bug), which no error here could catch once an encode has begun."""
    normalizer = backend.normalizer
    if normalizer is None:
        return
    for token in added:
        if token.normalized and not normalizer.normalize_str(token.content):
            raise ValueError(
                f"{name}: added token {token.content!r} is normalized and its normalizer makes "
                "nothing of it: tokenizers panics, or hangs until memory runs out, on texts "
                'around such a token; set its "normalized" to false in the file, or remove it'
            )


def _varying_ids_note(name: str, backend: tokenizers.Tokenizer) -> str | None:
    """The note for a file (``name``) tokenizers runs where two ``normalized`` added tokens
    are found as one text once normalized ("qzx" and "Qzx" under a lowercasing normalizer):
    tokenizers keeps them in a hash map, so which id a text holding it gets varies from one
    load to the next (``formats.hf.kind.found_alike_note`` for a file read here)."""
    normalizer = backend.normalizer
    if normalizer is None:
        return None
    found: dict[str, list[str]] = {}
    for _, token in sorted(backend.get_added_tokens_decoder().items()):
        if token.normalized:
            found.setdefault(normalizer.normalize_str(token.content), []).append(token.content)
    alike = [(text, contents) for text, contents in found.items() if len(contents) > 1]
    if not alike:
        return None
    text, contents = alike[0]
    more = f" ({len(alike) - 1} more such group(s))" if len(alike) > 1 else ""
    return (
        f"{name}: its added tokens {', '.join(map(repr, contents))} are each found as "
        f"{text!r} once normalized: tokenizers, which runs this file, gives one of their ids "
        f"or another, varying from one load to the next{more}"
    )


def _metaspace_is_space(backend: tokenizers.Tokenizer) -> bool:
    """Whether the file writes spaces as ``▁``: its normalizer puts ``▁`` for them or before
    the text (Llama 2's ``Prepend``, ``Replace(" ", "▁")``), its pre-tokenizer does
    (a Metaspace step), or its decoder turns ``▁`` back into spaces. Any of them says so: a file
    whose decoder is null still spells " the" as ``▁the``. (The stages' own JSON, not the
    whole tokenizer's, which holds the vocabulary.)"""
    for stage in (backend.normalizer, backend.pre_tokenizer, backend.decoder):
        if stage is not None and METASPACE in json.dumps(
            json.loads(stage.__getstate__()), ensure_ascii=False
        ):
            return True
    return False


def _read_template(backend: tokenizers.Tokenizer) -> Template | None:
    """The tokens the post-processor puts around a text (None: none, or a post-processor
    ``template`` cannot describe; ``encode`` still asks ``tokenizers`` for them)."""
    processor = backend.post_processor
    if processor is None:
        return None
    try:
        return read_template(json.loads(processor.__getstate__()))
    except ValueError:
        return None


class ForeignTokenizer:
    """A tokenizer of another kind than byte-level BPE, run by ``tokenizers``.

    ``kind`` names it ("WordPiece", "Unigram", "BPE (SentencePiece-style, byte fallback)").
    ``special_tokens`` are the file's added tokens marked special; every added token in a text
    is encoded as itself (``tokenizers`` matches them first), unless ``no_specials``.
    :func:`fallback_ids` gives the ids of a byte-fallback model's ``<0xNN>`` tokens, each
    standing for its byte (empty for other models); ``unknown_id`` its unknown token's. It satisfies
    :class:`~.interface.TokenizerLike`, as ``Tokenizer`` does.
    """

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
        added = backend.get_added_tokens_decoder()
        _refuse_empty_added(backend, added.values(), name)
        self._backend = backend
        self.kind = kind
        self.name: str | None = name
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
        self._spaces = _metaspace_is_space(backend)
        self._byte_fallback = falls_back_to_bytes(backend)
        pre = backend.pre_tokenizer
        self._byte_level = pre is not None and has_byte_level(json.loads(pre.__getstate__()))
        self.template: Template | None = _read_template(backend)
        self._exact = ExactDecoder(backend, self._byte_fallback)
        # What is done otherwise than the file says, one line each (Tokenizer.notes).
        self.notes: tuple[str, ...] = ()
        # Ids of tokens this tokenizer never makes (a truncation's later merges'): not its.
        self._dropped: frozenset[int] = frozenset()
        # The backend matching only some of the special tokens, per set allowed (``encode``).
        self._matching: dict[frozenset[str], tokenizers.Tokenizer] = {}
        # Built here, in the thread that loads: the views read it on the GUI thread.
        self.vocab = self._vocab()

    def mark_special(self, tokens: Iterable[str]) -> None:
        """Show these tokens as special (a model's ``tokenizer_config.json`` names them),
        those of the vocabulary; the ids do not change (``tokenizers`` matches every added
        token in text anyway, and a plain vocabulary entry stays plain text). An added token
        the file calls not special stays ordinary: ``tokenizers`` matches it even with
        ``encode_special_tokens``, so as a special token ``encode_ordinary`` and
        ``allowed_special`` would spell it out where ``tokenizers`` does not."""
        backend = self._backend
        plain = {t.content for t in backend.get_added_tokens_decoder().values() if not t.special}
        for token in tokens:
            idx = backend.token_to_id(token)
            if idx is not None and token not in plain:
                self._special_ids.setdefault(token, idx)
        self._matching.clear()
        self.vocab = self._vocab()

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], kind: str, **options: Any) -> ForeignTokenizer:
        """Read a ``tokenizer.json`` (``kind`` as ``formats.hf.kind`` names it); one line
        naming the file if ``tokenizers`` cannot read it."""
        backend = read_backend(path)
        notes = [whole_text_note(os.fspath(path), backend.truncation, backend.padding)]
        backend.no_truncation()
        backend.no_padding()
        dropout = getattr(backend.model, "dropout", None)
        if dropout:  # not applied (hf.kind.dropout_note)
            backend.model.dropout = None
            notes.append(dropout_note(os.fspath(path), dropout))
        notes.append(_varying_ids_note(os.fspath(path), backend))
        parsed = [
            None if part is None else json.loads(part.__getstate__())
            for part in (backend.pre_tokenizer, backend.decoder)
        ]
        notes.append(undecoded_note(os.fspath(path), *parsed))
        tok = cls(backend, kind=kind, name=os.fspath(path), **options)
        tok.notes = tuple(note for note in notes if note is not None)
        return tok

    # --------------------------------------------------------------- queries
    @property
    def pattern(self) -> str:
        """Not a regex: the pre-tokenization is the file's own (for labels)."""
        return f"{self.kind} (tokenizers)"

    def _vocab(self) -> dict[int, bytes]:
        """id -> the token as bytes, for display (see ``_token_bytes``)."""
        spaces, fallback, byte_level = self._spaces, self._byte_fallback, self._byte_level
        dropped = self._dropped
        entries = self._backend.get_vocab(with_added_tokens=True).items()
        vocab = {
            idx: _token_bytes(token, spaces, fallback, byte_level)
            for token, idx in entries
            if idx not in dropped
        }
        # subtle: get_vocab names a normalized added token by its content, which tokenizers
        # (0.23 on) decodes as its normalized form ("AB" under Lowercase as "ab",
        # ``hf.tokenizer_json.decoded_as``): an ordinary one is shown as decoded, so the
        # table and decode agree. A special one keeps its name (a BERT-like file's "[CLS]",
        # not "[cls]"): the name special_tokens, --special-token and allowed_special take.
        backend = self._backend
        specials = set(self._special_ids.values())
        for idx, added in backend.get_added_tokens_decoder().items():
            if added.normalized and idx in vocab and idx not in specials:
                shown = backend.id_to_token(idx)
                if shown is not None and shown != added.content:
                    vocab[idx] = _token_bytes(shown, spaces, fallback, byte_level)
        for special, idx in self._special_ids.items():
            # subtle: a byte-fallback token listed as special (a trainer given the <0xNN>
            # tokens as special tokens) still stands for its byte: the decoder makes it one.
            if not (fallback and BYTE_TOKEN.fullmatch(special)):
                vocab[idx] = special.encode("utf-8")
        self._fallback_ids: frozenset[int] = frozenset(
            idx
            for token, idx in entries
            if fallback and idx in vocab and idx not in specials and BYTE_TOKEN.fullmatch(token)
        )
        self._largest_id = max(vocab, default=0)
        self.__dict__.pop("_inverse", None)
        # As a Tokenizer's: the added tokens that are not special, matched in every text.
        self.added_tokens = ReadOnlyDict(
            {
                added.content: idx
                for idx, added in sorted(backend.get_added_tokens_decoder().items())
                if not added.special and idx in vocab and idx not in specials
            }
        )
        return ReadOnlyDict(vocab)  # as a Tokenizer's: a change would reach nothing

    @property
    def special_tokens(self) -> list[str]:
        return list(self._special_ids)

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens as a set (tiktoken's ``special_tokens_set``)."""
        return set(self._special_ids)

    def special_id(self, token: str) -> int:
        """The id of the special token ``token`` (KeyError if it is not one)."""
        return self._special_ids[token]

    @property
    def eot_token(self) -> int:
        """The id of the end-of-text token, by ``Tokenizer.eot_token``'s rule (``</s>`` for
        Llama 2 and T5, ``<eos>`` for Gemma); :class:`~.interface.TokenNotFound` if none."""
        return end_of_text(self._special_ids, self.name)

    def token_text(self, token_id: int) -> str | None:
        """The token as the file writes it (``##ing``, ``▁the``, ``<0x0A>``), or None."""
        return self._backend.id_to_token(token_id)

    @cached_property
    def unknown_id(self) -> int | None:
        """The id of the token the model puts for text its vocabulary cannot spell
        (WordPiece's ``[UNK]``, a Unigram's or BPE's ``unk``); None where it has none."""
        model = self._backend.model
        if hasattr(model, "unk_token"):  # BPE and WordPiece name it
            token = model.unk_token
            return None if token is None else self._backend.token_to_id(token)
        found = json.loads(model.__getstate__()).get("unk_id")  # Unigram gives its id
        return found if isinstance(found, int) else None

    @property
    def n_vocab(self) -> int:
        """The largest id + 1, as tiktoken's ``n_vocab``."""
        return self._largest_id + 1

    @property
    def max_token_value(self) -> int:
        """The largest id (tiktoken's ``max_token_value``)."""
        return self._largest_id

    def __len__(self) -> int:
        return len(self.vocab)

    def not_explained(self, what: str) -> str:
        """The line the explain views show for this tokenizer: ``what`` (e.g. "The merge
        tree") applies to byte-level BPE only."""
        if self.kind == TOKENIZERS_BYTE_LEVEL:
            return (
                f"{what} applies to byte-level BPE this project reads itself. This file is "
                "run by the tokenizers library (its note says why): the editor, Compare and "
                "Report show it."
            )
        return (
            f"{what} applies to byte-level BPE. This is a {self.kind} tokenizer, run by the "
            "tokenizers library: the editor, Compare and Report show it."
        )

    def __repr__(self) -> str:
        return f"<ForeignTokenizer {self.name!r}: {self.kind}, {len(self):,} tokens>"

    @property
    def _named(self) -> str:
        return self.name or "this tokenizer.json"

    # ---------------------------------------------------------------- merges
    def _bpe(self, what: str) -> BpeMerges:
        """The BPE model's merges; ValueError naming ``what`` for a model that has none."""
        if not is_bpe(self._backend):
            raise ValueError(
                f"{what}: a {self.kind} tokenizer has no merges (its vocabulary is not built "
                "merge by merge); merge ranks and truncation apply to BPE"
            )
        return self._bpe_merges

    @cached_property
    def _bpe_merges(self) -> BpeMerges:
        return BpeMerges(self._backend)

    @cached_property
    def merges(self) -> Sequence[tuple[bytes, bytes]]:
        """A BPE model's merges in rank order, each as the bytes its tokens stand for
        (``▁`` as a space); empty for WordPiece and Unigram, which have none."""
        if not is_bpe(self._backend):
            return ()
        spaces, fallback, byte_level = self._spaces, self._byte_fallback, self._byte_level
        return [
            (
                _token_bytes(a, spaces, fallback, byte_level),
                _token_bytes(b, spaces, fallback, byte_level),
            )
            for a, b in self._bpe_merges.pairs
        ]

    def merge_rank(self, token_id: int) -> int | None:
        """The rank of the merge that made ``token_id`` (None for a token no merge makes:
        characters, byte-fallback and special tokens). WordPiece and Unigram have no merges:
        ValueError saying so; so does an id not in the vocabulary, naming it."""
        merges = self._bpe("merge_rank")
        return merges.rank_of(known_id(self.vocab, token_id, "merge_rank"))

    def truncated(self, k: int) -> ForeignTokenizer:
        """A BPE model with only its first ``k`` merges: those merges, the tokens they make
        and every token no merge makes, with their ids, run by ``tokenizers`` (as the model
        encodes had its training stopped after ``k`` merges). WordPiece and Unigram have no
        merges to leave out: ValueError saying so."""
        bpe = self._bpe("truncated(k)")
        if isinstance(k, bool) or not isinstance(k, Integral):
            raise TypeError(f"truncated(k): k must be an int, got {k!r}")
        k = int(k)
        if not 0 <= k <= len(bpe):
            raise ValueError(
                f"truncated(k): k = {k} is out of range; this tokenizer has {len(bpe)} "
                f"merges, so 0 <= k <= {len(bpe)}"
            )
        import tokenizers

        spec, dropped = bpe.truncated(k)
        backend = tokenizers.Tokenizer.from_str(spec)
        plain = self._backend.encode_special_tokens  # made with no_specials
        out = ForeignTokenizer(backend, kind=self.kind, name=self.name or "", no_specials=plain)
        out.name = self.name
        out._dropped = dropped
        out.notes = self.notes
        # Its special tokens are this one's, whoever named them (the file, the caller, a
        # tokenizer_config.json); its vocabulary is built again without the dropped ids.
        out._special_ids = dict(self._special_ids)
        out.vocab = out._vocab()
        return out

    # -------------------------------------------------------------- encoding
    def prepare_bulk(self) -> None:
        """Nothing to build: ``tokenizers`` has its tables from loading on (here for code
        that prepares whichever tokenizer ``open_tokenizer`` gave)."""

    def _encoding(self, text: str) -> tokenizers.Encoding:
        if not isinstance(text, str):
            raise TypeError(f"encode: expected a str, got {type(text).__name__}")
        try:
            with panics_as_errors(self._named, "encoding"):
                return _encoded(self._backend, text, False)
        except TypeError:
            # tokenizers refuses a str it cannot make UTF-8 of (surrogates): the callers
            # replace them as Tokenizer.encode does.
            raise UnicodeEncodeError("utf-8", text, 0, len(text), "surrogates") from None

    def _backend_for(
        self, allowed: frozenset[str] | None, texts: Iterable[str]
    ) -> tokenizers.Tokenizer:
        """The backend that matches the special tokens ``allowed`` in ``texts`` (None: all,
        as the file does) and encodes the others as ordinary text."""
        if allowed is None or allowed.issuperset(self._special_ids):
            return self._backend
        # Texts that hold none of the others (the usual case) need no copy: the file's own
        # matching finds only allowed ones in them. Not so where a special token is matched
        # after normalization (its text may then be spelt otherwise).
        others = Specials.of([t for t in self._special_ids if t not in allowed]).regex
        if not self._normalized_specials() and others is not None:
            if not any(others.search(text) for text in texts):
                return self._backend
        backend = self._matching.get(allowed)
        if backend is None:
            import tokenizers

            # subtle: with encode_special_tokens, tokenizers matches only the added tokens not
            # marked special; so in a copy, those allowed are unmarked and the others marked.
            obj = json.loads(self._backend.to_str())
            for added in obj.get("added_tokens") or []:
                if added.get("content") in self._special_ids:
                    added["special"] = added["content"] not in allowed
            backend = tokenizers.Tokenizer.from_str(json.dumps(obj, ensure_ascii=False))
            backend.encode_special_tokens = True
            backend.no_truncation()
            backend.no_padding()
            self._matching[allowed] = backend
        return backend

    def _normalized_specials(self) -> bool:
        """Whether one of the special tokens is an added token matched after normalization."""
        added = self._backend.get_added_tokens_decoder().values()
        return any(t.normalized for t in added if t.content in self._special_ids)

    def encode(
        self,
        text: str,
        *,
        allowed_special: AbstractSet[str] | Literal["all"] | None = None,
        disallowed_special: Collection[str] | Literal["all"] | None = None,
        add_special_tokens: bool = False,
    ) -> list[int]:
        """The ids of ``text`` (surrogates as ``Tokenizer.encode`` takes them). Special tokens
        as ``Tokenizer.encode``: with neither keyword every one in the text is encoded as
        itself, else tiktoken's rules. ``add_special_tokens``: with the tokens the template
        puts around the text, as ``tokenizers`` adds them."""
        check_text(text, "encode")
        allowed = tiktoken_allowed(self.special_tokens, text, allowed_special, disallowed_special)
        backend = self._backend_for(allowed, [text])
        with panics_as_errors(self._named, "encoding"):
            try:
                found = _encoded(backend, text, add_special_tokens)
            except TypeError:  # surrogates (see _encoding)
                found = _encoded(backend, replace_surrogates(text), add_special_tokens)
        return list(found.ids)

    def encode_ordinary(self, text: str) -> list[int]:
        """The ids of ``text`` with any special token in it encoded as ordinary text."""
        return self.encode(text, disallowed_special=())

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        allowed_special: AbstractSet[str] | Literal["all"] | None = None,
        disallowed_special: Collection[str] | Literal["all"] | None = None,
        add_special_tokens: bool = False,
        num_threads: int | None = None,
    ) -> list[list[int]]:
        """``encode`` of each text with the same keywords (``tokenizers``' own batch, on its
        threads; ``num_threads`` is taken for tiktoken's signature and not used)."""
        texts = check_batch(texts, "encode_batch", num_threads)
        ours = self.special_tokens
        # The keywords checked first, so that an error in them names no text; the allowed
        # set depends on them alone.
        allowed = tiktoken_allowed(ours, "", allowed_special, disallowed_special)

        def check(text: str) -> None:
            check_text(text, "encode_batch")
            tiktoken_allowed(ours, text, allowed_special, disallowed_special)

        each_named(check, texts, "text")
        backend = self._backend_for(allowed, texts)
        with panics_as_errors(self._named, "encoding"):
            try:
                found = backend.encode_batch(texts, add_special_tokens=add_special_tokens)
            except TypeError:  # surrogates in one of them (see _encoding)
                fixed = [replace_surrogates(t) for t in texts]
                found = backend.encode_batch(fixed, add_special_tokens=add_special_tokens)
        return [list(e.ids) for e in found]

    def encode_ordinary_batch(
        self, texts: Iterable[str], *, num_threads: int | None = None
    ) -> list[list[int]]:
        """``encode_ordinary`` of each text (``num_threads`` as for ``encode_batch``)."""
        return self.encode_batch(texts, disallowed_special=(), num_threads=num_threads)

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        """The ids of ``"".join(iterable)``, yielded one by one. Unlike ``Tokenizer``'s, it
        holds the whole text: a ``tokenizers`` model tells no place where text may be cut
        without changing its ids (SentencePiece-style BPE merges across lines)."""
        if isinstance(iterable, (bytes, bytearray)):
            raise TypeError("encode_iterable takes texts (str), not bytes")
        # (its chunks checked, and a file read, as Tokenizer's are)
        return iter(self.encode("".join(text_chunks(iterable))))

    def encode_array(self, text: str, dtype: DTypeLike | None = "uint32") -> np.ndarray:
        """``encode(text)`` as a NumPy array; ``dtype`` as ``Tokenizer.encode_array`` takes
        it (one that cannot hold the largest id is a ValueError naming both)."""
        check_text(text, "encode_array")
        chosen = array_dtype(dtype, self.max_token_value)
        return np.asarray(self.encode(text), dtype=chosen)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the one token ``text_or_bytes`` is: a str as the file writes the token
        (``▁the``, ``##ing``, ``<0xE4>``, ``[CLS]``) or as the text it stands for (``" the"``);
        bytes as what a token stands for (``vocab``; where a byte-fallback token and another
        stand for the same bytes, the other). None: :class:`~.interface.TokenNotFound`."""
        if isinstance(text_or_bytes, str):
            idx = self._backend.token_to_id(text_or_bytes)
            if idx is not None and idx not in self._dropped:
                return idx
        return single_token(self._inverse, text_or_bytes, self.name)

    @cached_property
    def _inverse(self) -> dict[bytes, int]:
        """token bytes -> id: the lowest id, byte-fallback tokens only where no other."""
        byte_ids = set(self._exact.byte_ids)
        inverse: dict[bytes, int] = {}
        for idx in sorted(self.vocab, key=lambda i: (i in byte_ids, i)):
            inverse.setdefault(self.vocab[idx], idx)
        return inverse

    def spans(self, text: str) -> list[TokenSpan]:
        """Each token of ``text`` with the characters it comes from (``tokenizers``' offsets,
        which follow any normalizer back to the text). Tokens sharing a character (byte
        fallback's ``<0xNN>``, byte-level tokens splitting one) are ``partial``; a token from
        no character of its own (a ``▁`` put before the text) spans the character it stands
        before, as partial."""
        check_text(text, "spans")
        return [TokenSpan(i, a, b, bool(p)) for i, a, b, p in self.packed_spans(text).tolist()]

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
        # Neighbours whose offsets overlap share a character: byte fallback's <0xNN> tokens
        # (the same offsets), a byte-level token ending inside one (" \xf0\x9f\x98", then
        # "\x80": 1..3 and 2..3), as ``spans_at_step.step_forward`` marks them.
        shared = np.zeros(n, dtype=bool)
        overlap = ends[:-1] > starts[1:]
        shared[1:] |= overlap
        shared[:-1] |= overlap
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
        """Sorted offsets ``0 < c < len(text)`` where a token starts and no token holds
        characters on both sides (``token_spans.span_cuts`` of :meth:`packed_spans`)."""
        packed = self.packed_spans(text)
        return span_cuts(packed[:, 1], packed[:, 2], len(text))

    # -------------------------------------------------------------- decoding
    def _check_ids(self, ids: Iterable[int]) -> list[int]:
        refuse_unordered(ids)
        tolist = getattr(ids, "tolist", None)
        given = tolist() if callable(tolist) else list(ids)
        vocab = self.vocab
        listed = []
        for i in given:
            if type(i) is not int:  # the common case first: an abstract class check is slow
                # NumPy's integers too (a list of an array's items), as Tokenizer and
                # tokenizers take them.
                if isinstance(i, bool) or not isinstance(i, Integral):
                    raise TypeError(f"token ids must be ints, got {i!r} ({type(i).__name__})")
                i = int(i)
            if i not in vocab:
                raise ValueError(f"unknown token id {i}: {missing_id(i, vocab)}")
            listed.append(i)
        return listed

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids``: the text ``tokenizers``' decoder makes of them (``▁`` to
        spaces, byte fallback joined into characters), except that byte-fallback tokens
        that make no character give their very bytes (``foreign_bytes``). An id that is not
        an int raises TypeError, one not in the vocabulary ValueError naming it."""
        return self._exact.decode_bytes(self._check_ids(ids))

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """``decode_bytes(ids)`` as text, with ``errors`` as ``bytes.decode`` takes it
        ("replace", the default, makes bytes that are no character U+FFFD; "strict" raises
        UnicodeDecodeError). Where the ids make whole characters this is ``tokenizers``'
        own ``decode``; its ByteFallback writes one U+FFFD per byte of a run that is not
        valid UTF-8, where "replace" follows Python's rule, as ``Tokenizer.decode`` does.
        Under "strict", the error names the id, as ``Tokenizer.decode``'s does, where the
        tokens' own bytes make the text's, a leading space dropped or not (byte-level and
        byte-fallback tokens do; WordPiece's spaces between words do not)."""
        listed = self._check_ids(ids)
        data = self._exact.decode_bytes(listed)
        try:
            return data.decode("utf-8", errors=errors)
        except UnicodeDecodeError as error:
            pieces = [self.vocab[i] for i in listed]
            skipped = sum(map(len, pieces)) - len(data)
            if skipped < 0 or b"".join(pieces)[skipped:] != data:
                raise
            raise naming_the_id(error, data, listed, list(map(len, pieces)), skipped) from None

    def decode_batch(
        self,
        batch: Iterable[Iterable[int]],
        *,
        errors: str = "replace",
        num_threads: int | None = None,
    ) -> list[str]:
        """``decode`` of each list of ids (``num_threads`` as for ``encode_batch``)."""
        check_threads(num_threads, "decode_batch")
        return each_named(lambda ids: self.decode(ids, errors), batch, "ids list")

    def decode_single_token_bytes(self, token: int) -> bytes:
        """What one token stands for (``vocab``: ``▁the`` as b" the", ``<0xE4>`` as
        b"\\xe4", ``##ing`` as b"##ing"); an unknown id raises ValueError."""
        (checked,) = self._check_ids([token])
        return self.vocab[checked]

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """``decode_single_token_bytes`` of each id."""
        return [self.vocab[i] for i in self._check_ids(tokens)]

    # ----------------------------------------------------------------- files
    def save(
        self, directory: str | os.PathLike, format: str | None = None, name: str | None = None
    ) -> list[Path]:
        """Write ``directory/tokenizer.json`` (created if needed, atomically): the file
        ``tokenizers`` runs this tokenizer from (no truncation or padding, as it encodes
        here). ``format`` may be None or "hf"; the GPT-2 and tiktoken formats hold byte-level
        BPE only, and are a ValueError saying so. Returns the path written."""
        if format not in (None, "hf"):
            # The file it would write first, named as the byte-level writers' refusals do.
            first = "vocab.json" if format == "gpt2" else f"{name or 'tokenizer'}.tiktoken"
            raise ValueError(
                f"{Path(directory) / first}: format {format!r} cannot hold a {self.kind} "
                "tokenizer: GPT-2 and tiktoken files hold byte-level BPE; save it as its "
                "tokenizer.json (format='hf')"
            )
        if name is not None:
            raise ValueError(f"format 'hf' has fixed file names; name={name!r} is for tiktoken")
        text = self._backend.to_str(pretty=True) + "\n"
        if self._backend.encode_special_tokens:  # no_specials: held by no file as such
            where = os.fspath(Path(directory) / TOKENIZER_FILE)
            obj = special_tokens_as_text(json.loads(text), where)
            text = json.dumps(obj, ensure_ascii=False, indent=2) + "\n"
        with output_folder(directory) as out:
            atomic_write_bytes(out / TOKENIZER_FILE, text.encode("utf-8"))
        return [out / TOKENIZER_FILE]

    def token_decoder(self) -> Any:
        """A fresh ``tokenizers.decoders.DecodeStream``: one id at a time, the text it adds."""
        from tokenizers.decoders import DecodeStream

        return DecodeStream(skip_special_tokens=False)

    @property
    def backend(self) -> tokenizers.Tokenizer:
        """The ``tokenizers.Tokenizer`` itself."""
        return self._backend


AnyTokenizer = Tokenizer | ForeignTokenizer


def fallback_ids(tokenizer: ForeignTokenizer) -> frozenset[int]:
    """The ids of ``tokenizer``'s ``<0xNN>`` tokens, each standing for its byte, where its model
    has byte fallback (else none). A function, not a member: ``TokenizerLike`` holds what both
    kinds of tokenizer have."""
    return tokenizer._fallback_ids


def spells_spaces(tokenizer: ForeignTokenizer) -> bool:
    """Whether ``tokenizer``'s file writes spaces as ``▁`` (SentencePiece's), which its
    tokens' bytes (``vocab``) read as spaces. A function, not a member, as
    :func:`fallback_ids`."""
    return tokenizer._spaces


def open_foreign(foreign: ForeignTokenizerFile, **options: Any) -> ForeignTokenizer:
    """The :class:`ForeignTokenizer` of the file ``foreign`` names (``options`` as
    ``ForeignTokenizer.from_file`` takes them); for a byte-level BPE file this project's reader
    refuses, its notes say so first, with why."""
    tok = ForeignTokenizer.from_file(foreign.path, foreign.kind, **options)
    if isinstance(foreign, RefusedByteLevelFile):
        dropped = backend_dropped_note(os.fspath(foreign.path), tok.backend)
        tok.notes = (foreign.note, *tok.notes, *([dropped] if dropped else []))
    return tok


def open_tokenizer(
    source: str | os.PathLike[str],
    pattern: str | None = None,
    special_tokens: Iterable[str] | None = None,
    *,
    no_specials: bool = False,
) -> AnyTokenizer:
    """The tokenizer ``source`` names (every source ``Tokenizer.load`` reads): the exact
    ``Tokenizer`` for byte-level BPE, a :class:`ForeignTokenizer` for a ``tokenizer.json`` of
    another kind, or a byte-level one this project's reader refuses and ``tokenizers`` runs
    (``formats.hf.kind.RefusedByteLevelFile``; its notes say why) (its own pre-tokenization:
    ``pattern`` must be None; the special tokens a
    ``tokenizer_config.json`` beside it names are shown as special, its ids unchanged, while
    a byte-level file keeps its own: more would change its ids). ``no_specials``: every
    special token is ordinary text. One-line errors name the source."""
    extra = validate_special_tokens(special_tokens)
    try:
        data = load_data(source, pattern, extra)
    except ForeignTokenizerFile as foreign:
        if pattern is not None:
            raise ValueError(
                f"{foreign.path}: a {foreign.kind} tokenizer splits text its own way; "
                f"a pattern ({shown_pattern(pattern)}) cannot be applied"
            ) from None
        foreign_tok = open_foreign(foreign, extra_specials=extra, no_specials=no_specials)
        if not no_specials:
            foreign_tok.mark_special(named_special_tokens(foreign.path.parent))
        if parse_hub_source(source) is not None:  # named as asked, as a byte-level one is
            foreign_tok.name = os.fspath(source)
        return foreign_tok
    tok = Tokenizer.from_data(data, {} if no_specials else None)
    tok.name = os.fspath(source)
    return tok


def open_hub(
    model: HubModel,
    progress: Callable[[int, int | None], None] | None = None,
    *,
    cancelled: Callable[[], bool] | None = None,
) -> AnyTokenizer:
    """The tokenizer of a Hub model (``hf_hub.fetch_tokenizer``: from the cache, or
    downloaded with ``progress``, until ``cancelled()``), named ``ORG/NAME``."""
    folder = fetch_tokenizer(model, progress, cancelled=cancelled)
    try:
        tok = open_tokenizer(folder / TOKENIZER_FILE)
    except ValueError as error:
        raise said_of_model(model, error) from None
    tok.name = model.name
    return tok
