"""The headless command line's progress bars (stderr, throttled), and the remaining-time
estimate they show.

The line is tqdm's (``tqdm.format_meter``: the bar, the share, the counts and the rate in
units). On a terminal the bar redraws one line in place; when stderr is not a terminal (CI
logs, files) it prints a plain line once work has gone on for a second, then at most every
few seconds, so logs stay short and each line can be read as it comes. The time left is
:class:`RemainingTime`'s, not tqdm's average rate: merges get cheaper as a run goes on.
:class:`RemainingTime` is pure (it is given the times), so it is tested with synthetic
timings. A stream that cannot be written (closed, or its reader gone) silences the bar; it
never raises, so losing stderr never costs the work it reports on (``cli.streams`` guards
the command's stderr as a whole). What it leaves out: what is being measured (``cli``).
"""

from __future__ import annotations

import math
import sys
import time
from typing import TextIO

from tqdm import tqdm

# No estimate before this much time has passed since the first progress, nor before this share
# of the work is done: the first merges cost the most (the most frequent pairs touch the most
# words) and the first seconds hold start-up costs, so an early rate says little.
MIN_SECONDS = 3.0
MIN_FRACTION = 0.02
# The rate is measured over the most recent part of the run: this share of the elapsed time,
# but at least RECENT_MIN_SECONDS.
RECENT_SHARE = 0.25
RECENT_MIN_SECONDS = 1.0
# Samples are kept at most this often (a merge loop calls update thousands of times a second).
SAMPLE_EVERY = 0.05
# In a log (stderr not a terminal), the first line waits this long, so short runs stay short.
FIRST_LOG_LINE = 1.0
# The cost of an item is modelled as falling like position ** -decay; measured decays are
# clamped to this range (0: a steady rate, as for bytes read).
MAX_DECAY = 1.5
# The line drawn (tqdm's format fields); the label first, padded, so a reader can tell bars
# from other output by their start.
KNOWN_TOTAL = (
    "{desc:<14} {bar:28} {percentage:5.1f}%  {n_fmt}{unit} / {total_fmt}{unit}  {rate_fmt}"
    "  elapsed {elapsed}"
)
UNKNOWN_TOTAL = "{desc:<14} {n_fmt}{unit}  {rate_fmt}  elapsed {elapsed}"


def _remaining_seconds(rate: float, at: float, decay: float, done: float, total: float) -> float:
    """Time to go from ``done`` to ``total`` when the rate at position ``x`` is
    ``rate * (x / at) ** decay`` (the integral of its inverse)."""
    if decay == 0.0:
        return (total - done) / rate
    if abs(decay - 1.0) < 1e-9:
        return at * math.log(total / done) / rate
    e = 1.0 - decay
    return at**decay * (total**e - done**e) / (e * rate)


class RemainingTime:
    """Estimates the time left from ``(seconds, done)`` samples.

    The rate is measured over two recent windows of equal length; how much it rose between
    them gives the decay of the per-item cost (merges get cheaper as the pairs they merge get
    rarer), which carries the recent rate forward to the end. ``estimate`` is None until the
    samples say something (see MIN_SECONDS, MIN_FRACTION).

    >>> est = RemainingTime()
    >>> for t in range(11):
    ...     est.add(float(t), 10 * t)
    >>> round(est.estimate(200))
    10
    """

    def __init__(self) -> None:
        self._times: list[float] = []
        self._done: list[float] = []

    def add(self, seconds: float, done: float) -> None:
        times = self._times
        if len(times) >= 2 and seconds - times[-2] < SAMPLE_EVERY:
            # subtle: the newest sample is moved, not appended, so the last one is always
            # current while the others stay at least SAMPLE_EVERY apart.
            times[-1], self._done[-1] = seconds, done
            return
        times.append(seconds)
        self._done.append(done)

    def _done_at(self, t: float) -> float:
        """Progress at time ``t``, interpolated between samples."""
        times, done = self._times, self._done
        lo, hi = 0, len(times) - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if times[mid] <= t:
                lo = mid
            else:
                hi = mid
        t0, t1 = times[lo], times[hi]
        if t1 <= t0:
            return done[hi]
        share = min(max((t - t0) / (t1 - t0), 0.0), 1.0)
        return done[lo] + share * (done[hi] - done[lo])

    def estimate(self, total: float) -> float | None:
        """Seconds left until ``total``; None while no meaningful estimate exists."""
        if len(self._times) < 3:
            return None
        # subtle: time before the first item is done is start-up (building indexes, starting
        # workers), not the rate of the work: the clock starts at the first sample with
        # progress.
        first = next(i for i, d in enumerate(self._done) if d > 0 or i == len(self._done) - 1)
        start, now = self._times[first], self._times[-1]
        done = self._done[-1]
        elapsed = now - start
        if elapsed < MIN_SECONDS or total <= 0 or done < MIN_FRACTION * total:
            return None
        if done >= total:
            return 0.0
        window = max(RECENT_MIN_SECONDS, RECENT_SHARE * elapsed)
        if 2 * window > elapsed:
            return None
        mid = self._done_at(now - window)
        old = self._done_at(now - 2 * window)
        recent_rate, old_rate = (done - mid) / window, (mid - old) / window
        if recent_rate <= 0:
            return None
        # Where each window's rate holds: the middle of its progress.
        at_recent, at_old = (mid + done) / 2, (old + mid) / 2
        decay = 0.0
        if old_rate > 0 and at_old > 0 and at_recent > at_old:
            decay = math.log(recent_rate / old_rate) / math.log(at_recent / at_old)
            # A rise steeper than merge costs fall is a stall ending, not a trend: then the
            # recent rate alone (an overestimate of the time left, as costs only fall).
            decay = 0.0 if decay > MAX_DECAY else max(decay, 0.0)
        return _remaining_seconds(recent_rate, at_recent, decay, done, total)


class ProgressBar:
    """``bar = ProgressBar("merging", total); bar.update(k); ...; bar.close()``.

    ``unit`` "B": counts are bytes, shown scaled (kB, MB, GB).
    ``eager``: in a log, the first line comes as soon as some of the work is done (for stages
    run by worker processes, so a log shows they have started), not after a second.
    ``total`` None: the amount of work is unknown (a pipe being read): the bar shows what is
    done and the rate, no share and no time left."""

    def __init__(
        self,
        label: str,
        total: int | None,
        *,
        unit: str = "",
        stream: TextIO | None = None,
        eager: bool = False,
    ) -> None:
        self.label = label
        self.eager = eager
        self.known = total is not None
        self.total = max(total or 0, 0)
        self.unit = unit
        self.stream: TextIO | None = stream or sys.stderr
        self.tty = self._isatty()
        self.start = time.perf_counter()
        self._last_draw = 0.0
        self._interval = 0.1 if self.tty else 5.0
        self._remaining = RemainingTime()
        self.done = 0
        self._drawn = -1  # ``done`` when the last line was drawn

    def _isatty(self) -> bool:
        try:
            return self.stream is not None and self.stream.isatty()
        except (OSError, ValueError):
            return False

    def _line(self) -> str:
        elapsed = time.perf_counter() - self.start
        # types-tqdm types total as float; tqdm documents None (unknown) too.
        line = tqdm.format_meter(
            self.done,
            self.total if self.known else None,  # type: ignore[arg-type]
            elapsed,
            prefix=self.label,
            unit=self.unit,
            unit_scale=self.unit == "B",
            bar_format=KNOWN_TOTAL if self.known else UNKNOWN_TOTAL,
        )
        if not self.known or self.done >= self.total:
            return line
        left = self._remaining.estimate(self.total)
        if left is None:
            return line
        return f"{line}  ~{tqdm.format_interval(left)} left"

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        now = time.perf_counter()
        self._remaining.add(now, done)
        if not self.tty and self._last_draw == 0.0:
            # Logs: the first line once work has gone on for a second (a short run logs only
            # its final line), or for an eager bar as soon as some work is done while most
            # remains, which tells a log reader that the workers are under way; then one
            # line every 5 s.
            early = self.eager and 0 < 2 * done < self.total
            if done > 0 and (early or now - self.start >= FIRST_LOG_LINE):
                self._last_draw = now
                self._draw()
        elif now - self._last_draw >= self._interval:
            self._last_draw = now
            self._draw()

    def _draw(self, final: bool = False) -> None:
        self._drawn = self.done
        if self.stream is None:
            return
        try:
            if self.tty:
                self.stream.write("\r\x1b[2K" + self._line() + ("\n" if final else ""))
            else:
                self.stream.write(self._line() + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # closed, or its reader gone: the bar goes quiet
            self.stream = None

    def close(self) -> None:
        """End the bar: its final state, unless a log already has that very line."""
        if self.tty or self._drawn != self.done:
            self._draw(final=True)
