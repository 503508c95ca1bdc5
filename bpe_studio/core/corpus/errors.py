"""The corpus's one error: :class:`CorpusError`, raised wherever a corpus is found, read or
decompressed (``sources``, ``compressed``, ``records``, ``counting``)."""

from __future__ import annotations


class CorpusError(ValueError):
    """A corpus that cannot be used for training; the message names the file and the reason."""
