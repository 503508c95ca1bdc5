"""In-process timing for the benchmarks that time a call in their own process (not through
``runner.py``'s fresh processes): :func:`median_seconds`."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(fn: Callable[[], object], reps: int) -> float:
    """The median wall time of ``reps`` calls of ``fn``."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
