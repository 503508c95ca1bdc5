"""The cyclic garbage collector paused for a block of work that makes many objects and no
reference cycles.

What it does: :func:`gc_paused` turns the collector off for a ``with`` block and back on after
(if it was on), or, for a command whose process ends after the block, freezes what is alive
instead (``freeze=True``). Why: loading a tokenizer, indexing its vocabulary or encoding makes
hundreds of thousands of tuples and bytes; each allocation counts towards the collector's
thresholds, and the passes they set off walk every tracked object (all of o200k's tables)
while finding nothing to free. What it leaves out: the app's own collection schedule
(``gui.responsiveness.collector``), which runs the collections on the GUI thread.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused(freeze: bool = False) -> Iterator[None]:
    """The cyclic collector off for the block; after it, back on if it was on, or, with
    ``freeze``, left off with every object alive moved out of its reach (``gc.freeze``: the
    process is about to end, and a collection at exit would walk them all)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        elif was_on:
            gc.enable()
