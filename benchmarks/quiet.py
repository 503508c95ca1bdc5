"""How busy the rest of the machine is: wait until it is quiet before a measured run, and tell
afterwards how many cores other processes used while it ran.

On a shared machine other people's jobs make a run slower than it should be; the benchmarks
wait (bounded) for quiet, then report what they could not avoid. Machine-wide CPU time comes
from psutil; this module neither starts nor times the measured run (``child.py`` does).
"""

from __future__ import annotations

import os
import time

import psutil

# Before each measured child, wait (at most this many seconds) until the rest of the machine is
# quiet; 0 turns it off. run_all.py's --wait-quiet sets it.
QUIET_MAX_WAIT_S = 20.0
QUIET_BELOW_CORES = 0.3
# ... and in all at most this long per process, so a machine that never quiets down costs a
# few minutes, not one wait per run.
QUIET_TOTAL_BUDGET_S = 180.0
_quiet_waited = 0.0

# Not busy: idle and waiting for I/O; guest time is already counted in user time (Linux).
_NOT_BUSY = {"idle", "iowait", "guest", "guest_nice"}


def busy_cpu_s() -> float:
    """Machine-wide busy CPU seconds so far, summed over all cores."""
    times = psutil.cpu_times()
    return sum(v for k, v in times._asdict().items() if k not in _NOT_BUSY)


def self_cpu_s() -> float:
    """CPU seconds of this process alone (its children are counted where they are reaped)."""
    t = os.times()
    return t.user + t.system


def wait_for_quiet(max_wait: float, below: float = QUIET_BELOW_CORES) -> float:
    """Sample machine-wide CPU use in 0.3 s windows until other processes use fewer than
    ``below`` cores or ``max_wait`` seconds have passed; return the last sample."""
    deadline = time.monotonic() + max_wait
    while True:
        busy0, self0 = busy_cpu_s(), self_cpu_s()
        t0 = time.perf_counter()
        time.sleep(0.3)
        busy1, self1 = busy_cpu_s(), self_cpu_s()
        load = max((busy1 - busy0) - (self1 - self0), 0.0) / (time.perf_counter() - t0)
        if load < below or time.monotonic() >= deadline:
            return load


def wait_within_budget() -> None:
    """:func:`wait_for_quiet` for at most :data:`QUIET_MAX_WAIT_S`, and for no more than
    :data:`QUIET_TOTAL_BUDGET_S` summed over this process."""
    global _quiet_waited
    allowed = min(QUIET_MAX_WAIT_S, QUIET_TOTAL_BUDGET_S - _quiet_waited)
    if allowed > 0:
        t0 = time.monotonic()
        wait_for_quiet(allowed)
        _quiet_waited += time.monotonic() - t0
