"""The cyclic garbage collector paused for a block of work that makes many objects and no
reference cycles.

What it does: :func:`gc_paused` turns the collector off for a ``with`` block and back on after
the last block under way in the process (if it was on before the first: blocks overlap on
threads), or, for a command whose process ends after the block, freezes what is alive instead
(``freeze=True``). Why: loading a tokenizer, indexing its vocabulary or encoding makes
hundreds of thousands of tuples and bytes; each allocation counts towards the collector's
thresholds, and the passes they set off walk every tracked object (all of o200k's tables)
while finding nothing to free. What it leaves out: the app's own collection schedule
(``gui.responsiveness.collector``), which runs the collections on the GUI thread.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# The blocks under way in this process, by thread, and whether the collector was on before
# the first. subtle: counted, not each block's own look at the collector: two threads' blocks
# overlapping (encode_batch's threads) had one read "off" while the other held it off, then
# leave it off for good after the other had turned it back on.
_state_lock = threading.Lock()
_blocks: dict[int, int] = {}
_was_on = False


@contextmanager
def gc_paused(freeze: bool = False) -> Iterator[None]:
    """The cyclic collector off for the block; after the last block under way in the process
    (they may overlap, on several threads), back on if it was on before the first, or, with
    ``freeze``, left off with every object alive moved out of its reach (``gc.freeze``: the
    process is about to end, and a collection at exit would walk them all)."""
    global _was_on
    me = threading.get_ident()
    with _state_lock:
        if not _blocks:
            _was_on = gc.isenabled()
        _blocks[me] = _blocks.get(me, 0) + 1
        gc.disable()
    try:
        yield
    finally:
        with _state_lock:
            if _blocks[me] > 1:
                _blocks[me] -= 1
            else:
                del _blocks[me]
            if freeze:
                gc.freeze()
            elif not _blocks and _was_on:
                gc.enable()


def _after_fork_in_child() -> None:
    # Only the forking thread lives on in the child: a lock another thread held at the fork
    # would stay held, and its blocks would never end (the collector off for good).
    global _state_lock
    _state_lock = threading.Lock()
    me = threading.get_ident()
    mine = _blocks.get(me, 0)
    _blocks.clear()
    if mine:
        _blocks[me] = mine
    elif _was_on:
        gc.enable()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
