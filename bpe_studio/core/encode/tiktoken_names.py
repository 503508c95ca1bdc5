"""tiktoken's and Hugging Face's names for what ``Tokenizer`` does, as thin methods over it.

What it does: :class:`TiktokenNames` gives a class that has ``encode``, ``decode``,
``decode_bytes``, ``vocab``, ``special_tokens`` and ``max_token_value`` tiktoken's
``Encoding`` names for encoding and decoding lists of ids (``encode_ordinary``, the batch
forms, ``decode_single_token_bytes``, ``decode_tokens_bytes``, ``n_vocab``, ...) and Hugging
Face's ``len(tokenizer)``, for code written against either. Not here: tiktoken's
``encode_to_numpy`` (``encode_array`` is its counterpart), ``decode_with_offsets``
(``Tokenizer.spans`` gives each token's characters), ``encode_with_unstable`` and
``token_byte_values``.
``Tokenizer`` takes them from it, so that its own class holds what it does and reads in one
sitting. subtle: ``encode(text)`` alone keeps CS336's meaning (every special token of the
tokenizer is one); tiktoken's needs a keyword (see ``Tokenizer.encode``). What it leaves out:
``ForeignTokenizer``'s, which are its own (``tokenizers``' batch, byte-fallback tokens).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Literal

from ..pretokenization.specials import tiktoken_allowed
from .batches import batch_threads, on_threads
from .interface import check_batch, check_threads, each_named

if TYPE_CHECKING:
    from .encoder import Encoder


class TiktokenNames:
    """The names over ``encode`` and ``decode`` (see the module docstring)."""

    if TYPE_CHECKING:
        vocab: Mapping[int, bytes]
        special_tokens: list[str]
        _encoder: Encoder

        @property
        def max_token_value(self) -> int: ...

        def encode(
            self,
            text: str,
            *,
            allowed_special: AbstractSet[str] | Literal["all"] | None = None,
            disallowed_special: Collection[str] | Literal["all"] | None = None,
            add_special_tokens: bool = False,
        ) -> list[int]: ...

        def decode(self, ids: Iterable[int], errors: str = "replace") -> str: ...

        def decode_bytes(self, ids: Iterable[int]) -> bytes: ...

    @property
    def n_vocab(self) -> int:
        """The largest id + 1, as tiktoken's ``n_vocab`` (cl100k_base: 100277, though ids
        100256 and 100261..100275 hold no token; ``len(tok)`` counts tokens)."""
        return self.max_token_value + 1

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens as a set (tiktoken's ``special_tokens_set``)."""
        return set(self.special_tokens)

    def __len__(self) -> int:
        """The number of tokens, special tokens included (Hugging Face's ``len(tokenizer)``)."""
        return len(self.vocab)

    def encode_ordinary(self, text: str) -> list[int]:
        """The ids of ``text`` with any special token in it encoded as ordinary text
        (tiktoken's ``encode_ordinary``)."""
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
        """``encode`` of each text with the same keywords (tiktoken's ``encode_batch``;
        ``add_special_tokens`` as ``encode`` takes it), on up to ``num_threads`` threads
        (None: 8, tiktoken's default) where the texts take the compiled path and are long
        enough to gain from them, else in this thread (``batches.batch_threads``)."""
        texts = check_batch(texts, "encode_batch", num_threads)
        # The keywords checked first, so that an error in them names no text.
        tiktoken_allowed(self.special_tokens, "", allowed_special, disallowed_special)

        def one(text: str) -> list[int]:
            return self.encode(
                text,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
                add_special_tokens=add_special_tokens,
            )

        return on_threads(one, texts, batch_threads(self._encoder, texts, num_threads))

    def encode_ordinary_batch(
        self, texts: Iterable[str], *, num_threads: int | None = None
    ) -> list[list[int]]:
        """``encode_ordinary`` of each text (tiktoken's ``encode_ordinary_batch``;
        ``num_threads`` as for ``encode_batch``)."""
        texts = check_batch(texts, "encode_ordinary_batch", num_threads)
        threads = batch_threads(self._encoder, texts, num_threads)
        return on_threads(self.encode_ordinary, texts, threads)

    def decode_batch(
        self,
        batch: Iterable[Iterable[int]],
        *,
        errors: str = "replace",
        num_threads: int | None = None,
    ) -> list[str]:
        """``decode`` of each list of ids (tiktoken's ``decode_batch``; ``num_threads`` as
        for ``encode_batch``)."""
        check_threads(num_threads, "decode_batch")
        return each_named(lambda ids: self.decode(ids, errors), batch, "ids list")

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (tiktoken's ``decode_single_token_bytes``; an unknown id
        raises ValueError, as ``decode`` does, where tiktoken raises KeyError)."""
        return self.decode_bytes([token])

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """The bytes of each token (tiktoken's ``decode_tokens_bytes``)."""
        return [self.decode_single_token_bytes(t) for t in tokens]
