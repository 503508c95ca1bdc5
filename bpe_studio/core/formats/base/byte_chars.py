"""GPT-2's byte-to-character notation, in which GPT-2's files and ``tokenizer.json`` write
tokens: each of the 256 bytes drawn as one printable character (:func:`bytes_to_unicode`);
:func:`encode_token` and :func:`decode_token` turn token bytes into that text and back.
What it leaves out: the files themselves (``formats.gpt2``, ``formats.hf``).
"""

from __future__ import annotations

from functools import lru_cache


class TokenizerFileError(ValueError):
    """A vocab.json or merges.txt that cannot be read; the message names the file and line."""


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's alphabet: printable Latin-1 bytes stand for themselves; every other byte is
    drawn as the next unused code point from U+0100 up, so no byte becomes whitespace or a
    control character in the files.

    >>> bytes_to_unicode()[ord("a")], bytes_to_unicode()[ord(" ")]
    ('a', 'Ġ')
    """
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(0x100 + extra)
            extra += 1
    return table


@lru_cache(maxsize=1)
def unicode_to_bytes() -> dict[str, int]:
    return {c: b for b, c in bytes_to_unicode().items()}


def encode_token(token: bytes) -> str:
    """Token bytes -> the string GPT-2's files use for it."""
    # In C: a token of one long run (10 MB of spaces, trained) took 22 s a byte at a time.
    return token.decode("latin-1").translate(_from_latin1())


@lru_cache(maxsize=1)
def _from_latin1() -> dict[int, str]:
    """str.translate table: the character whose code is a byte -> its alphabet character."""
    return {b: c for b, c in bytes_to_unicode().items()}


@lru_cache(maxsize=1)
def _to_latin1() -> dict[int, int]:
    """str.translate table: each alphabet character -> the character whose code is its byte.
    Latin-1 characters outside the alphabet (space, controls) map to U+FFFF, which then fails
    to encode, so they are rejected like any other stranger."""
    table = {c: 0xFFFF for c in range(256)}
    table.update({ord(c): b for c, b in unicode_to_bytes().items()})
    return table


def decode_token(text: str, where: str) -> bytes:
    """The string GPT-2's files use for a token -> its bytes; ``where`` names file and line."""
    try:
        return text.translate(_to_latin1()).encode("latin-1")
    except UnicodeEncodeError as e:
        bad = text[e.start]
        raise TokenizerFileError(
            f"{where}: character {bad!r} (U+{ord(bad):04X}) is not in GPT-2's "
            "byte-to-unicode alphabet"
        ) from None
