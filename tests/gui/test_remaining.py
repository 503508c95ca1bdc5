"""The estimate of the merging left (issue 23, item 2), on made-up progress: the times are
handed in, so nothing here depends on a clock."""

from __future__ import annotations

import random

import pytest

from bpe_studio.gui.model.remaining import CREDIBLE_FRACTION, CREDIBLE_SECONDS, MergeTimeEstimate

TARGET = 10_000


def feed(estimate: MergeTimeEstimate, seconds, upto: int, every: int = 25) -> None:
    """Report progress as a session's drains would: every ``every`` merges up to ``upto``."""
    for n in range(every, upto + 1, every):
        estimate.record(n, seconds(n))


@pytest.mark.parametrize("power", [0.15, 0.4, 0.7, 1.0])
def test_a_run_whose_time_grows_as_a_power_of_its_merges_is_extrapolated_exactly(power):
    # T(n) = 2 * n**p seconds: the merges left take T(TARGET) - T(n), worked out by hand.
    def seconds(n: int) -> float:
        return 2.0 * n**power

    for done in (2_000, 5_000, 9_000):
        estimate = MergeTimeEstimate(TARGET)
        feed(estimate, seconds, done)
        truth = seconds(TARGET) - seconds(done)
        assert estimate.remaining() == pytest.approx(truth, rel=1e-6)
        assert estimate.power() == pytest.approx(power, rel=1e-6)


def test_merges_that_get_faster_are_not_taken_at_their_mean_speed():
    # The first tenth of the merges took as long as the other nine tenths will.
    def seconds(n: int) -> float:
        return 10.0 * (n / 1_000) ** 0.3

    estimate = MergeTimeEstimate(TARGET)
    feed(estimate, seconds, 2_000)
    truth = seconds(TARGET) - seconds(2_000)
    mean_speed = (TARGET - 2_000) * seconds(2_000) / 2_000  # what merges / rate said
    assert mean_speed > 3 * truth
    assert estimate.remaining() == pytest.approx(truth, rel=1e-6)


def test_no_estimate_until_it_is_credible():
    def seconds(n: int) -> float:
        return 0.5 * n**0.5

    estimate = MergeTimeEstimate(TARGET)
    assert estimate.remaining() is None  # nothing recorded
    early = int(CREDIBLE_FRACTION * TARGET) - 25
    feed(estimate, seconds, early)
    assert seconds(early) > CREDIBLE_SECONDS
    assert estimate.remaining() is None  # too few of the merges made yet
    estimate.record(int(CREDIBLE_FRACTION * TARGET), seconds(int(CREDIBLE_FRACTION * TARGET)))
    assert estimate.remaining() is not None
    # A run that merges fast enough never shows one before a second of merging.
    quick = MergeTimeEstimate(TARGET)
    feed(quick, lambda n: 1e-5 * n, TARGET // 2)
    assert quick.remaining() is None
    # Nor once the target is reached.
    done = MergeTimeEstimate(TARGET)
    feed(done, seconds, TARGET)
    assert done.remaining() is None


def test_noise_in_the_timings_moves_the_estimate_little():
    rng = random.Random(23)

    def seconds(n: int) -> float:
        return 0.2 * n**0.35 * (1 + rng.uniform(-0.05, 0.05))

    estimate = MergeTimeEstimate(TARGET)
    feed(estimate, seconds, 3_000)
    truth = 0.2 * (TARGET**0.35 - 3_000**0.35)
    assert 0.7 * truth < estimate.remaining() < 1.4 * truth


def test_samples_are_thinned_however_often_progress_is_reported():
    estimate = MergeTimeEstimate(TARGET)
    feed(estimate, lambda n: 0.01 * n**0.5, TARGET - 1, every=1)
    # One point per half percent of the target (50 merges) at most, plus the newest.
    assert len(estimate._merges) <= TARGET // 50 + 2
    assert estimate._merges[-1] == TARGET - 1
