"""Tokenizers kept by key, each built once, shared by the GUI's background jobs.

What it does: :class:`TokenizerCache` maps a key (a preset's or a file's, an inspector recipe's)
to the tokenizer built for it. :meth:`~TokenizerCache.get` builds a missing one in the calling
thread (a background job's); two threads asking for the same key wait for one build rather
than make two, while builds for other keys go on meanwhile (a build may itself ask the cache
for another key). A key's tokenizer may be of a ``version`` (a file's, ``file_versions``):
asked for another version, it is built again and replaces the one kept. With a ``size``,
only that many are kept, the least recently used going first.
What it leaves out: what the keys mean and how each tokenizer is built (the callers' ``build``).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Hashable

from cachetools import LRUCache

from ...core.encode.foreign import AnyTokenizer


class TokenizerCache:
    """Tokenizers by key, built once each; the last ``size`` used kept (all for None).
    Safe to call from several threads."""

    def __init__(self, size: int | None = None) -> None:
        self._lock = threading.Lock()  # guards the two dicts, never held during a build
        self._built: LRUCache[Hashable, tuple[Hashable, AnyTokenizer]] = LRUCache(
            math.inf if size is None else size
        )  # key -> (version, tokenizer)
        self._building: dict[Hashable, threading.Lock] = {}  # one lock per key being built

    def get(
        self, key: Hashable, build: Callable[[], AnyTokenizer], version: Hashable = None
    ) -> AnyTokenizer:
        """The tokenizer kept for ``key`` at ``version``, else ``build()``'s, kept from now on
        (in place of another version's)."""
        with self._lock:
            tok = self._take(key, version)
            if tok is not None:
                return tok
            building = self._building.setdefault(key, threading.Lock())
        with building:  # a second caller for this key waits here for the first one's build
            with self._lock:
                tok = self._take(key, version)
            if tok is not None:
                return tok
            try:
                tok = build()
            except BaseException:
                with self._lock:
                    self._building.pop(key, None)
                raise
            with self._lock:  # kept before the key's lock goes: a newcomer finds it built
                self._keep(key, tok, version)
                self._building.pop(key, None)
            return tok

    def built(self, key: Hashable, version: Hashable = None) -> AnyTokenizer | None:
        """The tokenizer kept for ``key`` at ``version``, or None (nothing is built)."""
        with self._lock:
            return self._take(key, version)

    def put(self, key: Hashable, tok: AnyTokenizer, version: Hashable = None) -> None:
        """Keep ``tok`` for ``key`` at ``version`` (replacing one kept before: a file loaded
        again)."""
        with self._lock:
            self._keep(key, tok, version)

    def _keep(self, key: Hashable, tok: AnyTokenizer, version: Hashable) -> None:
        self._built[key] = (version, tok)  # the least recently used goes when too many

    def _take(self, key: Hashable, version: Hashable) -> AnyTokenizer | None:
        kept = self._built.get(key)  # a hit counts as a use
        return kept[1] if kept is not None and kept[0] == version else None
