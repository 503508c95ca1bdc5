"""The corpus's one error: :class:`CorpusError`, raised wherever a corpus is found, read or
decompressed (``sources``, ``compressed``, ``records``, ``counting``); and
:class:`CorpusNotFound`, a corpus file that is not there."""

from __future__ import annotations


class CorpusError(ValueError):
    """A corpus that cannot be used for training; the message names the file and the reason."""


class CorpusNotFound(FileNotFoundError):
    """A corpus file that is not there: "corpus not found: NAME", NAME as given. A
    ``FileNotFoundError`` still, but one that is known to be an input's (it has no
    ``filename``, which a command reads to tell an input's error from its output's)."""
