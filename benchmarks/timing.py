"""In-process timing for the benchmarks that time a call in their own process (not through
``runner.py``'s fresh processes): :func:`median_seconds`, :func:`median_and_result`."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def median_seconds(fn: Callable[[], object], reps: int) -> float:
    """The median wall time of ``reps`` calls of ``fn``."""
    return median_and_result(fn, reps)[0]


def median_and_result(fn: Callable[[], T], reps: int) -> tuple[float, T]:
    """The median wall time of ``reps`` calls of ``fn``, and what the last call returned (to
    check it against a peer's, outside the timing)."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result
