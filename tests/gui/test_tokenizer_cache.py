"""The one tokenizer cache of the GUI (gui/model/tokenizer_cache.py): one build per key, builds
of other keys meanwhile, the least recently used dropped first. Plain Python: no Qt here."""

from __future__ import annotations

import threading

import pytest

from bpe_studio.core import Tokenizer
from bpe_studio.gui.model.tokenizer_cache import TokenizerCache

WAIT = 30.0  # s: the longest a test waits for another thread (a failure, not a timing)


def tiny(n: int = 0) -> Tokenizer:
    """A tokenizer with ``n`` merges of "a" runs, distinct for each call."""
    vocab = {i: bytes([i]) for i in range(256)}
    merges = []
    for k in range(n):
        left = b"a" * (k + 1)
        merges.append((left, b"a"))
        vocab[256 + k] = left + b"a"
    return Tokenizer(vocab, merges)


def test_two_threads_asking_for_one_key_wait_for_one_build():
    builds: list[int] = []
    release = threading.Event()

    def build() -> Tokenizer:
        builds.append(1)
        assert release.wait(WAIT)
        return tiny()

    cache = TokenizerCache()
    got: list[Tokenizer] = []
    first = threading.Thread(target=lambda: got.append(cache.get("k", build)))
    first.start()
    second_done = threading.Event()

    def second() -> None:
        got.append(cache.get("k", build))
        second_done.set()

    other = threading.Thread(target=second)
    other.start()
    # subtle: a negative check can only be bounded; were builds not shared, the second
    # thread would have started its own build (and waited for the same event).
    assert not second_done.wait(0.2)
    release.set()
    first.join(WAIT)
    other.join(WAIT)
    assert len(builds) == 1 and len(got) == 2 and got[0] is got[1]


def test_a_build_may_ask_for_another_key_while_another_thread_builds():
    cache = TokenizerCache()
    inner_built = threading.Event()
    results: dict[str, Tokenizer] = {}

    def slow_outer() -> Tokenizer:
        # Another thread builds "other" meanwhile: a cache that held one lock through every
        # build would keep it waiting until this one ends, and this one waits for it.
        assert inner_built.wait(WAIT), "a build for another key was held up"
        return cache.get("inner", tiny).truncated(0)  # asks the cache again, from a build

    outer = threading.Thread(target=lambda: results.update(outer=cache.get("outer", slow_outer)))
    outer.start()
    other = threading.Thread(
        target=lambda: (results.update(other=cache.get("other", tiny)), inner_built.set())
    )
    other.start()
    outer.join(WAIT)
    other.join(WAIT)
    assert set(results) == {"outer", "other"}
    assert cache.built("inner") is not None and cache.built("outer") is results["outer"]


def test_a_failed_build_keeps_nothing_and_the_next_caller_builds_again():
    cache = TokenizerCache()

    def failing() -> Tokenizer:
        raise ValueError("bad file")

    with pytest.raises(ValueError, match="bad file"):
        cache.get("k", failing)
    assert cache.built("k") is None
    tok = tiny()
    assert cache.get("k", lambda: tok) is tok


def test_a_bounded_cache_drops_the_least_recently_used_and_put_replaces():
    cache = TokenizerCache(size=2)
    a, b, c = tiny(1), tiny(2), tiny(3)
    cache.get("a", lambda: a)
    cache.get("b", lambda: b)
    assert cache.get("a", tiny) is a  # used again: "b" is now the least recent
    cache.get("c", lambda: c)
    assert cache.built("b") is None and cache.built("a") is a and cache.built("c") is c
    again = tiny(1)
    cache.put("a", again)  # a file loaded again replaces the one kept
    assert cache.get("a", tiny) is again
    unbounded = TokenizerCache()
    for k in range(10):
        unbounded.put(k, a)
    assert all(unbounded.built(k) is a for k in range(10))
