"""The headless command line's progress bars (stderr, throttled), and the remaining-time
estimate they show.

The line is tqdm's (``tqdm.format_meter``: the bar, the share, the counts and the rate in
units). On a terminal the bar redraws one line in place; when stderr is not a terminal (CI
logs, files) it prints a plain line once work has gone on for a second, then at most every
few seconds, so logs stay short and each line can be read as it comes. The time left is the
core's estimate (``core.train.remaining.TimeLeft``, the app's too), not tqdm's average rate:
merges get cheaper as a run goes on. A stream that cannot be written (closed, or its reader
gone) silences the bar; it never raises, so losing stderr never costs the work it reports on
(``cli.streams`` guards the command's stderr as a whole).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from tqdm import tqdm

from ..core.train.remaining import TimeLeft

# No estimate before this much time has passed since the first progress, nor before this share
# of the work is done: the first seconds and items say little of the rest.
MIN_SECONDS = 3.0
MIN_FRACTION = 0.02
# In a log (stderr not a terminal), the first line waits this long, so short runs stay short.
FIRST_LOG_LINE = 1.0
# The line drawn (tqdm's format fields); the label first, padded, so a reader can tell bars
# from other output by their start.
KNOWN_TOTAL = (
    "{desc:<14} {bar:28} {percentage:5.1f}%  {n_fmt}{unit} / {total_fmt}{unit}  {rate_fmt}"
    "  elapsed {elapsed}"
)
UNKNOWN_TOTAL = "{desc:<14} {n_fmt}{unit}  {rate_fmt}  elapsed {elapsed}"


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
        self._ascii = not self._draws_blocks()
        self.start = time.perf_counter()
        self._last_draw = 0.0
        self._interval = 0.1 if self.tty else 5.0
        self._remaining = TimeLeft(
            self.total, credible_fraction=MIN_FRACTION, credible_seconds=MIN_SECONDS
        )
        # subtle: the estimate's clock starts at the first progress: the time before it is
        # start-up (workers starting, indexes built), not the rate of the work.
        self._origin: tuple[float, int] | None = None
        self.done = 0
        self._drawn = -1  # ``done`` when the last line was drawn

    def _isatty(self) -> bool:
        try:
            return self.stream is not None and self.stream.isatty()
        except (OSError, ValueError):
            return False

    def _draws_blocks(self) -> bool:
        """Whether the stream's encoding has tqdm's block characters: in a C locale, or with
        PYTHONIOENCODING=ascii, they came out as ``\u2588`` escapes, six times wider."""
        try:
            "\u2588\u258f".encode(getattr(self.stream, "encoding", None) or "utf-8")
        except (UnicodeEncodeError, LookupError):
            return False
        return True

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
            ascii=self._ascii,
        )
        if not self.known or self.done >= self.total:
            return line
        origin = self._origin
        if origin is None:
            return line
        self._remaining.target = self.total - origin[1]
        left = self._remaining.remaining()
        if left is None:
            return line
        return f"{line}  ~{tqdm.format_interval(left)} left"

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
            if self._origin is not None:
                self._remaining.target = total - self._origin[1]
        now = time.perf_counter()
        if self._origin is None:
            if done > 0:
                self._origin = (now, done)
        else:
            self._remaining.record(done - self._origin[1], now - self._origin[0])
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
