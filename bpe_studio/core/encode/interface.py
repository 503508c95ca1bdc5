"""The one interface both kinds of tokenizer offer, and the rules they share.

What it does: :class:`TokenizerLike` is the protocol that :class:`~.tokenizer.Tokenizer`
(byte-level BPE, exact) and :class:`~.foreign.ForeignTokenizer` (WordPiece, Unigram,
SentencePiece-style BPE, run by ``tokenizers``) both satisfy, checked by mypy at the bottom of
this module; ``open_tokenizer`` gives one or the other. Its names follow tiktoken's
``Encoding`` (``encode_ordinary``, ``decode_single_token_bytes``, ``eot_token``, ...) with
Hugging Face's ``add_special_tokens``. :class:`TokenNotFound` is what asking for a token that
is not there raises; :func:`end_of_text` picks the end-of-text token of a set of special
tokens. What it leaves out: the implementations, and what one kind has for its own use
(``Tokenizer.merger``, ``ForeignTokenizer.backend``, the constructors).

What cannot apply to a kind raises ValueError saying why: ``truncated(k)`` and
``merge_rank`` of a WordPiece or Unigram model (they have no merges).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence, Sized
from collections.abc import Set as AbstractSet
from numbers import Integral
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from ..train.vocab import missing_id

if TYPE_CHECKING:
    from pathlib import Path

    import numpy
    from numpy.typing import DTypeLike

    from ..formats.hf.template import Template
    from .token_spans import TokenSpan

T = TypeVar("T")
R = TypeVar("R")

# The spellings of the end-of-text token, most common first: tiktoken's and GPT-2's, Llama 3's,
# SentencePiece's (Llama 2, Mistral, T5), Gemma's, DeepSeek's.
END_OF_TEXT_TOKENS = (
    "<|endoftext|>",
    "<|end_of_text|>",
    "</s>",
    "<eos>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
)


class TokenNotFound(KeyError, ValueError):
    """No token is what was asked for (``encode_single_token``, ``eot_token``). Both a
    KeyError, as tiktoken raises there, and a ValueError, as this project raises for what
    is not in a tokenizer; its message is one plain line."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def special_id_of(special_ids: Mapping[str, int], token: str) -> int:
    """The id of the special token ``token``; :class:`TokenNotFound` naming the special
    tokens there are if it is not one."""
    try:
        return special_ids[token]
    except (KeyError, TypeError):
        there = ", ".join(map(repr, special_ids)) or "none"
        raise TokenNotFound(
            f"{token!r} is not a special token of this tokenizer (its special tokens: {there})"
        ) from None


def end_of_text(special_ids: Mapping[str, int], name: str | None) -> int:
    """The id of the end-of-text token among ``special_ids``: the first of
    :data:`END_OF_TEXT_TOKENS` there. :class:`TokenNotFound` names the tokenizer otherwise.

    >>> end_of_text({"<s>": 1, "</s>": 2}, "llama2")
    2
    """
    for token in END_OF_TEXT_TOKENS:
        if token in special_ids:
            return special_ids[token]
    shown = ", ".join(map(repr, list(special_ids)[:6])) or "none"
    raise TokenNotFound(
        f"{name or 'this tokenizer'} has no end-of-text token: none of its special tokens "
        f"({shown}) is one of {', '.join(END_OF_TEXT_TOKENS)}; "
        "use special_id(token) with the one its model ends texts with"
    )


def single_token(inverse: Mapping[bytes, int], text_or_bytes: object, name: str | None) -> int:
    """The id ``inverse`` gives the bytes of ``text_or_bytes`` (a str is taken as its UTF-8
    bytes): ``encode_single_token``'s rule. TypeError for another type;
    :class:`TokenNotFound` naming the tokenizer when no token holds them."""
    if isinstance(text_or_bytes, str):
        key = text_or_bytes.encode("utf-8", "surrogatepass")
    elif isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
        key = bytes(text_or_bytes)
    else:
        raise TypeError(
            f"encode_single_token takes a str or bytes, not {type(text_or_bytes).__name__}"
        )
    found = inverse.get(key)
    if found is None:
        raise TokenNotFound(
            f"{text_or_bytes!r} is not a single token of {name or 'this tokenizer'} "
            "(encode() gives the tokens of any text)"
        )
    return found


def known_id(vocab: Mapping[int, bytes], token_id: object, caller: str) -> int:
    """``token_id`` as an int: TypeError unless it is one, ValueError naming it (and the ids
    there are) unless ``vocab`` holds it, as decoding one id would raise."""
    if isinstance(token_id, bool) or not isinstance(token_id, Integral):
        raise TypeError(f"{caller}: token_id must be an int, got {token_id!r}")
    token_id = int(token_id)  # a NumPy integer as the int it is
    if token_id not in vocab:
        raise ValueError(f"{caller}: unknown token id {token_id}: {missing_id(token_id, vocab)}")
    return token_id


def check_text(text: object, where: str) -> None:
    """TypeError unless ``text`` is a str (bytes are not decoded on a guess)."""
    if not isinstance(text, str):
        hint = ""
        if isinstance(text, (bytes, bytearray, memoryview)):
            hint = " (decode the bytes first, e.g. data.decode('utf-8'))"
        raise TypeError(f"{where} takes a str, not {type(text).__name__}{hint}")


def check_batch(texts: Iterable[str], where: str, num_threads: object) -> list[str]:
    """The texts as a list (any iterable of them is taken, as tiktoken's thread pool takes
    one); TypeError for one text given where a list of texts is expected, ValueError for a
    ``num_threads`` that is not None or a positive int (tiktoken's pool refuses 0 too)."""
    if isinstance(texts, (str, bytes, bytearray)):
        raise TypeError(f"{where} takes a list of texts, not one {type(texts).__name__}")
    check_threads(num_threads, where)
    return texts if isinstance(texts, list) else list(texts)


def in_batch(error: Exception, k: int, count: int | None, what: str) -> Exception:
    """``error``, raised for the item ``k`` (from 0) of a batch of ``count`` (None: not
    known), saying which (``what``: "text", "ids list"): in its message for a plain ValueError
    or TypeError and a codec's error (in its reason), else (a subclass may take other
    arguments, and keeps its type) in a note its traceback shows (from Python 3.11)."""
    where = f"{what} {k + 1:,}" + (f" of {count:,}" if count is not None else "") + " in the batch"
    args = error.args
    if type(error) in (ValueError, TypeError) and len(args) == 1 and isinstance(args[0], str):
        return type(error)(f"{args[0]} ({where})").with_traceback(error.__traceback__)
    if isinstance(error, (UnicodeDecodeError, UnicodeEncodeError)):
        error.reason += f" ({where})"  # (decode's "strict": its message is made of it)
        return error
    add_note = getattr(error, "add_note", None)  # (Python 3.11 and later)
    if add_note is not None:
        add_note(where)
    return error


def each_named(call: Callable[[T], R], items: Iterable[T], what: str) -> list[R]:
    """``[call(item) for item in items]``, an error saying which item raised it
    (:func:`in_batch`)."""
    count = len(items) if isinstance(items, Sized) else None
    out: list[R] = []
    try:
        for item in items:
            out.append(call(item))
    except Exception as error:
        raise in_batch(error, len(out), count, what) from None
    return out


def check_threads(num_threads: object, where: str) -> None:
    """ValueError unless ``num_threads`` is None or a positive int."""
    if num_threads is None:
        return
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
        raise ValueError(
            f"{where}: num_threads must be a positive integer or None, not {num_threads!r}"
        )


class TokenizerLike(Protocol):
    """What every tokenizer ``open_tokenizer`` gives can do, whatever its kind.

    Encoding: ``encode`` (special tokens by CS336's rule, or tiktoken's with
    ``allowed_special``/``disallowed_special``; ``add_special_tokens`` adds the ``template``'s
    tokens), ``encode_ordinary``, the batch forms, ``encode_iterable`` (a stream of text),
    ``encode_array`` (a NumPy array whose dtype holds every id, see ``id_arrays``),
    ``encode_single_token``, ``spans`` (each token's characters), ``prepare_bulk``.
    Decoding: ``decode`` (``errors`` as ``bytes.decode``: "replace" by default, "strict"
    raises), ``decode_bytes`` (the exact bytes, byte-fallback tokens as their byte),
    ``decode_batch``, ``decode_single_token_bytes``, ``decode_tokens_bytes``. Its tokens:
    ``vocab`` (id -> bytes), ``special_tokens``, ``special_tokens_set``, ``added_tokens``,
    ``special_id``, ``eot_token``, ``n_vocab``, ``max_token_value``, ``len()``. Merges:
    ``merges``, ``merge_rank``, ``truncated(k)``. Files: ``save``.

    A static protocol (mypy checks both classes against it below), not a runtime one:
    ``eot_token`` raises where a tokenizer has none, as tiktoken's does, which an
    ``isinstance`` check of a runtime protocol would set off.
    """

    # ------------------------------------------------------------ what it is
    @property
    def name(self) -> str | None:
        """What it was loaded from (a preset, a file, a Hub model), for labels."""

    @property
    def kind(self) -> str:
        """ "byte-level BPE", "WordPiece", "Unigram", "BPE (SentencePiece-style, ...)"."""

    @property
    def vocab(self) -> Mapping[int, bytes]:
        """id -> the bytes the token stands for."""

    @property
    def merges(self) -> Sequence[tuple[bytes, bytes]]:
        """The merges in rank order; empty for a model that has none."""

    @property
    def special_tokens(self) -> list[str]:
        """The special tokens, in their order."""

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens as a set (tiktoken's)."""

    @property
    def added_tokens(self) -> Mapping[str, int]:
        """A ``tokenizer.json``'s added tokens that are not special (token -> id), which
        every encode matches as ``tokenizers`` does; empty for other files."""

    @property
    def template(self) -> Template | None:
        """The tokens its post-processor puts around every text, or None."""

    @property
    def notes(self) -> tuple[str, ...]:
        """What is done otherwise than its file says, one line each (empty: nothing)."""

    @property
    def n_vocab(self) -> int:
        """The largest id + 1 (tiktoken's)."""

    @property
    def max_token_value(self) -> int:
        """The largest id (tiktoken's)."""

    @property
    def eot_token(self) -> int:
        """The id of its end-of-text token (tiktoken's); :class:`TokenNotFound` if none."""

    def __len__(self) -> int:
        """The number of ids in the vocabulary (special tokens included)."""

    def special_id(self, token: str) -> int:
        """The id of the special token ``token``; :class:`TokenNotFound` (a KeyError) if none."""

    def merge_rank(self, token_id: int) -> int | None:
        """The rank of the merge that made ``token_id``; None for a byte or a special token.
        An id not in the vocabulary raises ValueError naming it, a model without merges
        ValueError saying so."""

    def truncated(self, k: int) -> TokenizerLike:
        """This tokenizer after its first ``k`` merges: it encodes as training stopped there
        would."""

    # -------------------------------------------------------------- encoding
    def prepare_bulk(self) -> None:
        """Build now what encoding a lot of text builds on first use (nothing, for a
        tokenizer ``tokenizers`` runs)."""

    def encode(
        self,
        text: str,
        *,
        allowed_special: AbstractSet[str] | Literal["all"] | None = None,
        disallowed_special: Collection[str] | Literal["all"] | None = None,
        add_special_tokens: bool = False,
    ) -> list[int]:
        """The ids of ``text``: special tokens by CS336's rule (each found is one id), or
        tiktoken's with ``allowed_special``/``disallowed_special``; ``add_special_tokens``
        adds the template's."""

    def encode_ordinary(self, text: str) -> list[int]:
        """The ids of ``text``, a special token in it encoded as ordinary text (tiktoken's)."""

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        allowed_special: AbstractSet[str] | Literal["all"] | None = None,
        disallowed_special: Collection[str] | Literal["all"] | None = None,
        add_special_tokens: bool = False,
        num_threads: int | None = None,
    ) -> list[list[int]]:
        """``encode`` of each text with the same keywords, on up to ``num_threads`` threads."""

    def encode_ordinary_batch(
        self, texts: Iterable[str], *, num_threads: int | None = None
    ) -> list[list[int]]:
        """``encode_ordinary`` of each text, on up to ``num_threads`` threads."""

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        """The ids of ``"".join(iterable)``, yielded lazily (a file read line by line)."""

    def encode_array(self, text: str, dtype: DTypeLike | None = "uint32") -> numpy.ndarray:
        """``encode(text)`` as a NumPy array of ``dtype`` (None: the smallest that holds every
        id)."""

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the one token whose bytes are ``text_or_bytes``; :class:`TokenNotFound`
        if none."""

    def spans(self, text: str) -> list[TokenSpan]:
        """Each token of ``text`` with the characters it covers (``TokenSpan``)."""

    def packed_spans(self, text: str) -> numpy.ndarray:
        """:meth:`spans` as an ``(n, 4)`` int64 array (id, start, end, partial): what the
        editor, Compare and Report read, without a Python object per token."""
        ...

    # -------------------------------------------------------------- decoding
    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """The text of ``ids``; malformed UTF-8 as ``errors`` says ("replace": U+FFFD)."""

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The exact bytes of ``ids``, a byte-fallback token as its byte."""

    def decode_batch(
        self,
        batch: Iterable[Iterable[int]],
        *,
        errors: str = "replace",
        num_threads: int | None = None,
    ) -> list[str]:
        """``decode`` of each list of ids, on up to ``num_threads`` threads."""

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of the token ``token``."""

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """The bytes of each of ``tokens``."""

    # ----------------------------------------------------------------- files
    def save(
        self, directory: str | os.PathLike, format: str | None = None, name: str | None = None
    ) -> list[Path]:
        """Write the tokenizer into ``directory`` (``format``: "gpt2", "hf", "tiktoken"); the
        files written."""


if TYPE_CHECKING:
    from .foreign import ForeignTokenizer
    from .tokenizer import Tokenizer

    def _both_kinds_satisfy_it(
        exact: Tokenizer, foreign: ForeignTokenizer
    ) -> tuple[TokenizerLike, TokenizerLike, TokenizerLike, TokenizerLike]:
        # mypy checks each class against the protocol here, and their truncations.
        return exact, foreign, exact.truncated(1), foreign.truncated(1)
