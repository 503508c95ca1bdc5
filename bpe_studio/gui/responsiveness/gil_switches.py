"""The GIL switch interval, short while a training run or a background job needs it.

What it does: :func:`short_switches` sets the interpreter's switch interval to
``GIL_SWITCH_INTERVAL`` for the length of a block, from any thread; :func:`shorten_switches` and
:func:`restore_switches` do the same for a span that is not a block (a training run). Uses are
counted, nested or overlapping, and the process's own interval comes back when the last ends.

Why: a thread that wants the GIL gets it only after the holder's switch interval, and every one
of a repaint's many entries into Python (a slot, a model's ``multiData``, a plot item's
``paint``) asks for it anew; with the default interval a busy trainer or job makes each of them
wait that long (docs/responsiveness.md).
What it leaves out: who holds the GIL when (``trainer_hold``, ``busy``).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

GIL_SWITCH_INTERVAL = 0.0001  # s, while training or running a background job

# Who needs the short switch interval now (training runs, background jobs), and the interval
# to restore when none does.
_switch_lock = threading.Lock()
_switch_users = 0
_saved_switch_interval = 0.005


def shorten_switches() -> None:
    """One more user of the short interval (pair it with :func:`restore_switches`)."""
    global _switch_users, _saved_switch_interval
    with _switch_lock:
        if _switch_users == 0:
            _saved_switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(GIL_SWITCH_INTERVAL, _saved_switch_interval))
        _switch_users += 1


def restore_switches() -> None:
    """One user fewer; the last one gone, the process's own interval comes back."""
    global _switch_users
    with _switch_lock:
        _switch_users -= 1
        if _switch_users == 0:
            sys.setswitchinterval(_saved_switch_interval)


@contextmanager
def short_switches() -> Iterator[None]:
    """The GIL switch interval is ``GIL_SWITCH_INTERVAL`` inside (from any thread; nested
    and overlapping uses are counted), as the process had it before once the last use ends.

    subtle: a background job (a tokenizer loading, o200k's reachability check, the glyph
    samples) would hold the GIL for the whole default switch interval at a time, and every
    one of a repaint's entries into Python would wait for it. The jobs run inside this."""
    shorten_switches()
    try:
        yield
    finally:
        restore_switches()
