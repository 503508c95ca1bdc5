"""A panic in ``tokenizers``' Rust code, raised as the ValueError any other failure is.

``tokenizers`` reports a bug of its own it meets while encoding ("AddedVocabulary bad
split", on some texts with whitespace added tokens that strip) as pyo3's ``PanicException``,
a BaseException: ``except Exception`` lets it through, so the command line printed its Rust
backtrace and the app's jobs never said they had ended. :func:`panics_as_errors` turns it
into a ValueError naming the tokenizer and what failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


def is_panic(error: BaseException) -> bool:
    """Whether ``error`` is pyo3's PanicException (its module is not importable by name)."""
    return type(error).__name__ == "PanicException"


@contextmanager
def panics_as_errors(name: str, doing: str) -> Iterator[None]:
    """Within it, a panic in ``tokenizers`` is a ValueError: "``name``: tokenizers failed
    while ``doing`` (its own error: …)"; so is a plain Exception, how it refuses what a file
    cannot do (a WordPiece file's unk_token missing from its vocabulary)."""
    try:
        yield
    except BaseException as error:
        if type(error) is Exception:
            # tokenizers' own refusals come as a plain Exception, told by the app as a bug's
            # ("Exception: WordPiece error: Missing [UNK] token from the vocabulary", from a
            # file whose unk_token is not in its vocabulary): the file's problem, said so.
            raise ValueError(f"{name}: tokenizers failed while {doing}: {error}") from None
        if not is_panic(error):
            raise
        raise ValueError(
            f"{name}: tokenizers failed while {doing} ({str(error).strip() or 'a panic'}): "
            "a bug of tokenizers' own on this text; report it to them with the file and text"
        ) from None
