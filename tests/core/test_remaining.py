"""The one time-left estimate (``core.train.remaining``; issue 23 item 2, issue 11 item 10), on
made-up progress: the times are handed in, so nothing here depends on a clock.

The second half models a run as items whose costs are known, so the true time left at any
moment is the sum of the remaining costs, computed here independently of the estimator; it is
fed as the command line's bars feed it (from the first progress on, their thresholds)."""

from __future__ import annotations

import itertools
import random

import pytest

from bpe_studio.cli.progress import MIN_FRACTION, MIN_SECONDS
from bpe_studio.core.train.remaining import CREDIBLE_FRACTION, CREDIBLE_SECONDS, TimeLeft

TARGET = 10_000


def feed(estimate: TimeLeft, seconds, upto: int, every: int = 25) -> None:
    """Report progress as a session's drains would: every ``every`` merges up to ``upto``."""
    for n in range(every, upto + 1, every):
        estimate.record(n, seconds(n))


@pytest.mark.parametrize("power", [0.15, 0.4, 0.7, 1.0])
def test_a_run_whose_time_grows_as_a_power_of_its_merges_is_extrapolated_exactly(power):
    # T(n) = 2 * n**p seconds: the merges left take T(TARGET) - T(n), worked out by hand.
    def seconds(n: int) -> float:
        return 2.0 * n**power

    for done in (2_000, 5_000, 9_000):
        estimate = TimeLeft(TARGET)
        feed(estimate, seconds, done)
        truth = seconds(TARGET) - seconds(done)
        assert estimate.remaining() == pytest.approx(truth, rel=1e-6)
        assert estimate.power() == pytest.approx(power, rel=1e-6)


def test_merges_that_get_faster_are_not_taken_at_their_mean_speed():
    # The first tenth of the merges took as long as the other nine tenths will.
    def seconds(n: int) -> float:
        return 10.0 * (n / 1_000) ** 0.3

    estimate = TimeLeft(TARGET)
    feed(estimate, seconds, 2_000)
    truth = seconds(TARGET) - seconds(2_000)
    mean_speed = (TARGET - 2_000) * seconds(2_000) / 2_000  # what merges / rate said
    assert mean_speed > 3 * truth
    assert estimate.remaining() == pytest.approx(truth, rel=1e-6)


def test_no_estimate_until_it_is_credible():
    def seconds(n: int) -> float:
        return 0.5 * n**0.5

    estimate = TimeLeft(TARGET)
    assert estimate.remaining() is None  # nothing recorded
    early = int(CREDIBLE_FRACTION * TARGET) - 25
    feed(estimate, seconds, early)
    assert seconds(early) > CREDIBLE_SECONDS
    assert estimate.remaining() is None  # too few of the merges made yet
    estimate.record(int(CREDIBLE_FRACTION * TARGET), seconds(int(CREDIBLE_FRACTION * TARGET)))
    assert estimate.remaining() is not None
    # A run that merges fast enough never shows one before a second of merging.
    quick = TimeLeft(TARGET)
    feed(quick, lambda n: 1e-5 * n, TARGET // 2)
    assert quick.remaining() is None
    # Nor once the target is reached.
    done = TimeLeft(TARGET)
    feed(done, seconds, TARGET)
    assert done.remaining() is None


def test_noise_in_the_timings_moves_the_estimate_little():
    rng = random.Random(23)

    def seconds(n: int) -> float:
        return 0.2 * n**0.35 * (1 + rng.uniform(-0.05, 0.05))

    estimate = TimeLeft(TARGET)
    feed(estimate, seconds, 3_000)
    truth = 0.2 * (TARGET**0.35 - 3_000**0.35)
    assert 0.7 * truth < estimate.remaining() < 1.4 * truth


def test_samples_are_thinned_however_often_progress_is_reported():
    estimate = TimeLeft(TARGET)
    feed(estimate, lambda n: 0.01 * n**0.5, TARGET - 1, every=1)
    # One point per half percent of the target (50 merges) at most, plus the newest.
    assert len(estimate._done) <= TARGET // 50 + 2
    assert estimate._done[-1] == TARGET - 1


def run_of(costs: list[float], start_delay: float = 0.0) -> list[tuple[float, int]]:
    """(time, items done) after each item; the first item also pays ``start_delay``."""
    times = itertools.accumulate([start_delay + costs[0], *costs[1:]])
    return [(0.0, 0), *((t, k) for k, t in enumerate(times, 1))]


class BarFeed:
    """An estimate fed as ``bpe_studio.cli.progress.ProgressBar`` feeds it: its clock starts at
    the first progress, with the bar's thresholds."""

    def __init__(self, total: int) -> None:
        self.est = TimeLeft(total, credible_fraction=MIN_FRACTION, credible_seconds=MIN_SECONDS)
        self.total = total
        self.origin: tuple[float, int] | None = None

    def add(self, t: float, done: int) -> None:
        if self.origin is None:
            if done > 0:
                self.origin = (t, done)
                self.est.target = self.total - done
        else:
            self.est.record(done - self.origin[1], t - self.origin[0])

    def estimate(self) -> float | None:
        return self.est.remaining() if self.origin is not None else None


def feed_bar(samples: list[tuple[float, int]], until: float, total: int) -> BarFeed:
    est = BarFeed(total)
    for t, done in samples:
        if t > until:
            break
        est.add(t, done)
    return est


def true_left(samples: list[tuple[float, int]], until: float) -> float:
    return samples[-1][0] - until


def naive_left(samples: list[tuple[float, int]], until: float, total: int) -> float:
    """The old estimate: items left at the average rate since the start."""
    done = max(k for t, k in samples if t <= until)
    return (total - done) * until / done


def test_steady_rate_is_exact():
    total = 10_000
    samples = run_of([0.002] * total)  # 20 s
    for until in (4.0, 10.0, 15.0):
        left = feed_bar(samples, until, total).estimate()
        assert left == pytest.approx(true_left(samples, until), rel=0.02, abs=0.05)


def test_nothing_is_shown_before_it_means_something():
    total = 10_000
    samples = run_of([0.002] * total)
    est = feed_bar(samples, MIN_SECONDS * 0.9, total)
    assert est.estimate() is None
    assert BarFeed(total).estimate() is None


@pytest.mark.parametrize("decay", [0.5, 0.8, 1.0, 1.2])
def test_merges_getting_cheaper(decay):
    """Merge k costs about k ** -decay: the most frequent pairs, merged first, touch the most
    words. The estimate stays within a factor of 1.6 of the truth once a tenth is done, where
    the average rate since the start overestimates."""
    total = 32_000
    costs = [0.05 * k**-decay for k in range(1, total + 1)]
    samples = run_of(costs)
    tenth = next(t for t, k in samples if k >= total // 10)
    for until in (tenth, (tenth + samples[-1][0]) / 2):
        if until < MIN_SECONDS:
            continue
        left = feed_bar(samples, until, total).estimate()
        truth = true_left(samples, until)
        assert left is not None
        assert truth / 1.6 <= left <= truth * 1.6, (left, truth)
        assert abs(left - truth) <= abs(naive_left(samples, until, total) - truth)


def test_a_slow_start_does_not_inflate_the_estimate():
    """As reported: Chinese at 32k showed "~1:56:19 left" and finished in a minute. Here the
    first merge carries 20 s of start-up, the rest take 60 s between them."""
    total = 32_000
    costs = [60.0 / total] * total
    samples = run_of(costs, start_delay=20.0)
    for until in (25.0, 40.0, 70.0):
        left = feed_bar(samples, until, total).estimate()
        truth = true_left(samples, until)
        assert left is not None
        assert left == pytest.approx(truth, rel=0.1, abs=0.5)
