"""The remaining-time estimate of the command line's progress bars (#11 item 10), fed
synthetic timings: no wall clock.

A run is modelled as items whose costs are known, so the true time left at any moment is the
sum of the remaining costs, computed here independently of the estimator.
"""

from __future__ import annotations

import io
import itertools

import pytest

from bpe_studio.progress import MIN_SECONDS, ProgressBar, RemainingTime


def run_of(costs: list[float], start_delay: float = 0.0) -> list[tuple[float, int]]:
    """(time, items done) after each item; the first item also pays ``start_delay``."""
    times = itertools.accumulate([start_delay + costs[0], *costs[1:]])
    return [(0.0, 0), *((t, k) for k, t in enumerate(times, 1))]


def feed(samples: list[tuple[float, int]], until: float) -> RemainingTime:
    est = RemainingTime()
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
        left = feed(samples, until).estimate(total)
        assert left == pytest.approx(true_left(samples, until), rel=0.02, abs=0.05)


def test_nothing_is_shown_before_it_means_something():
    total = 10_000
    samples = run_of([0.002] * total)
    est = feed(samples, MIN_SECONDS * 0.9)
    assert est.estimate(total) is None
    assert RemainingTime().estimate(total) is None


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
        left = feed(samples, until).estimate(total)
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
        left = feed(samples, until).estimate(total)
        truth = true_left(samples, until)
        assert left is not None
        assert left == pytest.approx(truth, rel=0.1, abs=0.5)


class LogStream(io.StringIO):
    """stderr redirected to a file: not a terminal."""

    def isatty(self) -> bool:
        return False


def test_in_a_log_an_eager_bar_prints_whole_lines_labelled_in_bytes():
    """In a log each line ends in a newline and starts with the label (readers, the tests
    among them, tell bars from messages so); byte counts are scaled; no line is repeated."""
    log = LogStream()
    bar = ProgressBar("encoding", 8_000_000, unit="B", eager=True, stream=log)
    bar.update(2_000_000)  # eager: a quarter done is under way, logged at once
    lines = log.getvalue().splitlines(keepends=True)
    assert len(lines) == 1 and lines[0].endswith("\n") and "\r" not in lines[0]
    assert lines[0].startswith("encoding ")
    assert "2.00MB / 8.00MB" in lines[0] and "25.0%" in lines[0]
    bar.close()  # the final state is the line already logged
    assert log.getvalue() == lines[0]
    bar.update(8_000_000)
    bar.close()
    last = log.getvalue().splitlines()[-1]
    assert last.startswith("encoding ") and "100.0%" in last and "8.00MB / 8.00MB" in last


def test_a_bar_of_unknown_total_shows_what_is_done():
    log = LogStream()
    bar = ProgressBar("reading", None, unit="B", stream=log)
    bar.update(3_000_000)
    bar.close()
    (line,) = log.getvalue().splitlines()
    assert line.startswith("reading ") and "3.00MB" in line and "%" not in line
