"""Which tokenizer the inspector explains, and a cache of them.

What it does: :func:`selection_recipe`, :func:`run_recipe` and :func:`step_recipe` capture, on
the GUI thread, how to get the tokenizer a panel explains (the one the selected token belongs
to; the picked one if the user picked one, else the run's: while training, built from the
merges published so far; else ``state.shown``; the step-through cuts the run's to the
timeline's step). :meth:`TokenizerRecipe.get` builds one in a panel's job thread into a
:class:`~.tokenizer_cache.TokenizerCache` that keeps the last few, so a click on a node, a new
step or a new piece costs no rebuild. Reads the GUI's ``RunState``.
What it leaves out: the panels (``views/why_token``, ``views/step_through``) and the cache.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core import Tokenizer
from ...core.encode.foreign import AnyTokenizer
from .run_tokenizer import run_tokenizer_at
from .state import RunState
from .tokenizer_cache import TokenizerCache

if TYPE_CHECKING:
    from .tokenizer_source import TokenizerSource

CACHED_TOKENIZERS = 4


@dataclass(frozen=True, eq=False)
class TokenizerRecipe:
    """How to get one tokenizer, captured on the GUI thread; :meth:`get` runs ``build`` in a
    job thread. ``run`` is true when the tokenizer is the run's, so that merge rank ``r`` is
    row ``r`` of ``state.merge_rows`` (which has its pair count)."""

    key: Hashable
    build: Callable[[TokenizerCache], AnyTokenizer]
    run: bool

    def get(self, cache: TokenizerCache) -> AnyTokenizer:
        """The tokenizer, from ``cache`` or built into it (a step recipe's build gets its run
        recipe's tokenizer from the same cache first)."""
        return cache.get(self.key, lambda: self.build(cache))


def inspector_cache() -> TokenizerCache:
    """The cache the inspector's panels share: the last few tokenizers they explained."""
    return TokenizerCache(CACHED_TOKENIZERS)


class _Same:
    """An object in a cache key, compared by identity (and kept alive, so its id is not
    reused while the key exists)."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj


def _from_record(state: RunState, k: int) -> Callable[[TokenizerCache], Tokenizer]:
    """The run's tokenizer after its first ``k`` merges, while it trains (no result yet)."""
    build = run_tokenizer_at(state, k)  # captured now; built in the panel's job
    return lambda cache: build()


def _source_recipe(source: TokenizerSource) -> TokenizerRecipe:
    """A tokenizer that is not the run's (a picked one)."""
    return TokenizerRecipe(_Same(source), lambda _: source.get(), False)


def run_recipe(state: RunState) -> TokenizerRecipe | None:
    """The editor's tokenizer in full: the picked one, else the run's with every merge
    published so far. None when there is none."""
    if state.picked is not None:
        return _source_recipe(state.picked)
    return _run_only(state)


def selection_recipe(state: RunState) -> TokenizerRecipe | None:
    """The tokenizer the selected token belongs to ("Why this token" explains it there):
    the one it was selected in (``state.selected_in``), else the run's."""
    if state.selected_in is not None:
        return _source_recipe(state.selected_in)
    return _run_only(state)


def _run_only(state: RunState) -> TokenizerRecipe | None:
    """The run's tokenizer with every merge published so far, whatever the editor shows."""
    if state.phase.training:
        n = state.published
        return TokenizerRecipe((_Same(state.record), n), _from_record(state, n), True)
    shown = state.shown
    if shown is None:
        return None
    return TokenizerRecipe(_Same(shown), lambda _: shown.get(), True)


def step_recipe(state: RunState) -> TokenizerRecipe | None:
    """The tokenizer the step-through replays: the picked one, else the run's cut to the
    timeline's step; the editor's either way. While training live, that is the run's tokenizer
    as last rebuilt (the controller paces it), not every merge published since: the step's
    ids for the piece under the cursor are those the editor paints."""
    full = run_recipe(state)
    if full is None or not full.run:
        return full
    k = state.step
    if state.phase.training:
        k = min(k, state.published)
        if state.live and state.shown is not None and state.loaded is None:
            k = min(k, state.shown.merge_count)
        return TokenizerRecipe((_Same(state.record), k), _from_record(state, k), True)

    def build(cache: TokenizerCache) -> AnyTokenizer:
        tok = full.get(cache)
        return tok.truncated(k) if k < len(tok.merges) else tok

    return TokenizerRecipe((full.key, "step", k), build, True)
