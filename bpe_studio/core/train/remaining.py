"""How long work has left: the one time-left estimate of the app and the command line.

What it does: :class:`TimeLeft` is told, now and then, how much was done after how many
seconds of work (:meth:`~TimeLeft.record`) and answers the seconds left until ``total``
(:meth:`~TimeLeft.remaining`), or None while no estimate is credible. The app's status line
estimates a run's merging with it (``gui.training.session``), the command line's progress bars
their merging, pre-tokenizing and encoding (``bpe_studio.cli.progress``).

Merges get cheaper as the run goes: each one touches the places its pair occurs, and the
counts of the pairs merged fall by orders of magnitude over a run. So the merges left are not
the merges so far at their mean (or recent) speed. The time after ``n`` merges grows close to a
power of ``n`` (``T(n) ~ n**p``, ``p`` well below 1): the estimate fits ``p`` to the last
three quarters of the samples (``log T`` against ``log n`` from ``n/4`` to ``n``, least
squares), and extrapolates ``T`` to the target. ``benchmarks/bench_remaining.py`` checks it on
English, Chinese and code against the truth.

Work at a steady rate (bytes read) is the power 1, which the fit finds too. Time before the
first item was done is start-up, not the rate of the work: the caller measures from there (the
command line's bars do).

It is shown from ``credible_fraction`` of the total and ``credible_seconds`` of work on
(by default the app's: a tenth and a second); before, it says nothing. Times are handed in (no
clock here), so tests give it made-up progress.
What it leaves out: the clock and showing the estimate (the app's session and status line, the
command line's bars).
"""

from __future__ import annotations

import math

CREDIBLE_FRACTION = 0.10  # of the target's merges made before an estimate is shown
CREDIBLE_SECONDS = 1.0  # of merging before an estimate is shown
FIT_FROM = 0.25  # the fit uses the samples from this fraction of the merges so far on
SAMPLE_STEP = 0.005  # of the target: samples closer than this to the last one are skipped
# The exponent is kept within these bounds: a burst of noise (a pause of the GUI thread, a
# collection) must not make the run end in an instant or never.
LOWEST_POWER, HIGHEST_POWER = 0.05, 1.5


class TimeLeft:
    """The seconds of work left until ``target``, from samples of (done, seconds)."""

    def __init__(
        self,
        target: int,
        *,
        credible_fraction: float = CREDIBLE_FRACTION,
        credible_seconds: float = CREDIBLE_SECONDS,
    ) -> None:
        self.target = target  # may be raised as the work turns out larger (a bar's total)
        self.credible_fraction = credible_fraction
        self.credible_seconds = credible_seconds
        self._done: list[int] = []
        self._seconds: list[float] = []

    def record(self, merges: int, seconds: float) -> None:
        """``merges`` (items) were done after ``seconds`` of work (pauses left out)."""
        if merges <= 0 or seconds <= 0:
            return
        # The newest sample always ends the lists; it is replaced by the next one until it
        # is SAMPLE_STEP past the one before it, and then stays as one more point of the fit
        # (a long run keeps a few hundred points however often it reports).
        done_at = self._done
        if len(done_at) > 1 and done_at[-1] - done_at[-2] < SAMPLE_STEP * self.target:
            done_at[-1], self._seconds[-1] = merges, seconds
            return
        done_at.append(merges)
        self._seconds.append(seconds)

    def power(self) -> float | None:
        """The fitted exponent ``p`` of ``T(n) ~ n**p`` over the recent samples (None: too
        few of them)."""
        if not self._done:
            return None
        newest = self._done[-1]
        points = [
            (math.log(n), math.log(t))
            for n, t in zip(self._done, self._seconds)
            if n >= FIT_FROM * newest
        ]
        if len(points) < 3:
            return None
        mean_x = sum(x for x, _ in points) / len(points)
        mean_y = sum(y for _, y in points) / len(points)
        spread = sum((x - mean_x) ** 2 for x, _ in points)
        if spread <= 0:
            return None
        slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / spread
        return min(max(slope, LOWEST_POWER), HIGHEST_POWER)

    def remaining(self) -> float | None:
        """Seconds of work left until the target, or None while not credible (too early, too
        few samples, or nothing left)."""
        if not self._done:
            return None
        n, t = self._done[-1], self._seconds[-1]
        if n >= self.target or n < self.credible_fraction * self.target:
            return None
        if t < self.credible_seconds:
            return None
        p = self.power()
        if p is None:
            return None
        return t * ((self.target / n) ** p - 1.0)
