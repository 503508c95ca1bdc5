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

On a terminal the line is fitted to its width at each draw (``terminal.width``): the bar
shrinks first, then what says least goes (the time elapsed, the rate, the padding that
lines bars up, the bar, the counts); the label and the share stay while they fit. A line
that wrapped left a row behind at each redraw, since erasing clears only the cursor's row.
A log's lines are whole.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from tqdm import tqdm

from ..core.train.remaining import TimeLeft
from . import terminal

# No estimate before this much time has passed since the first progress, nor before this share
# of the work is done: the first seconds and items say little of the rest.
MIN_SECONDS = 3.0
MIN_FRACTION = 0.02
# In a log (stderr not a terminal), the first line waits this long, so short runs stay short.
FIRST_LOG_LINE = 1.0
# The line drawn: the label first, padded, so a reader can tell bars from other output by
# their start; then the bar and the fields (tqdm's format fields), each with the separator
# before it:
#   LABEL          ████████      42.0%  1.2MB / 3.0MB  1.1MB/s  elapsed 00:01  ~00:02 left
LABEL_WIDTH = 14
BAR_WIDTH = 28
MIN_BAR_WIDTH = 10  # narrower, a bar tells little: it goes instead
_SEP = "\x1f"  # between the fields tqdm formats in one call (no field holds it)
KNOWN_FIELDS = (
    ("share", " ", "{percentage:5.1f}%"),
    ("counts", "  ", "{n_fmt}{unit} / {total_fmt}{unit}"),
    ("rate", "  ", "{rate_fmt}"),
    ("elapsed", "  ", "elapsed {elapsed}"),
)
UNKNOWN_FIELDS = (
    ("counts", " ", "{n_fmt}{unit}"),
    ("rate", "  ", "{rate_fmt}"),
    ("elapsed", "  ", "elapsed {elapsed}"),
)
# What a narrow terminal leaves out, first to last ("padding": the label's and the share's,
# which line bars up); what remains then is the label and the share (with no total, the
# count), cut at the width if even they do not fit.
DROPPED_FIRST = ("elapsed", "rate", "padding", "bar", "counts", "left")


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
        self.tty = terminal.is_terminal(self.stream)
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

    def _draws_blocks(self) -> bool:
        """Whether the stream's encoding has tqdm's block characters: in a C locale, or with
        PYTHONIOENCODING=ascii, they came out as ``\u2588`` escapes, six times wider."""
        try:
            "\u2588\u258f".encode(getattr(self.stream, "encoding", None) or "utf-8")
        except (UnicodeEncodeError, LookupError):
            return False
        return True

    def _fields(self) -> list[tuple[str, str, str]]:
        """The line's parts as ``(name, separator before it, text)``, in order; the bar's
        text is empty (drawn at the width that is left: :meth:`_bar`)."""
        elapsed = time.perf_counter() - self.start
        specs = KNOWN_FIELDS if self.known else UNKNOWN_FIELDS
        # types-tqdm types total as float; tqdm documents None (unknown) too.
        texts = tqdm.format_meter(
            self.done,
            self.total if self.known else None,  # type: ignore[arg-type]
            elapsed,
            unit=self.unit,
            unit_scale=self.unit == "B",
            bar_format=_SEP.join(spec for _, _, spec in specs),
        ).split(_SEP)
        fields = [("label", "", self.label)]
        if self.known:
            fields.append(("bar", " ", ""))
        fields += [(name, sep, text) for (name, sep, _), text in zip(specs, texts, strict=True)]
        left = self._left()
        if left is not None:
            fields.append(("left", "  ", f"~{tqdm.format_interval(left)} left"))
        return fields

    def _left(self) -> float | None:
        """The time left, once the estimate means something (see ``MIN_SECONDS``)."""
        origin = self._origin
        if not self.known or self.done >= self.total or origin is None:
            return None
        self._remaining.target = self.total - origin[1]
        return self._remaining.remaining()

    def _bar(self, width: int) -> str:
        return tqdm.format_meter(
            self.done,
            self.total,
            0,
            bar_format=f"{{bar:{width}}}",
            ascii=self._ascii,
        )

    def _line(self, width: int | None = None) -> str:
        """The line to draw: whole (``width`` None: a log), or at most ``width`` characters,
        the bar shrunk and then parts left out in the order of ``DROPPED_FIRST``."""
        fields = self._fields()
        # With no total, the count is what the line says: it stays, as the share does.
        order = DROPPED_FIRST if self.known else tuple(n for n in DROPPED_FIRST if n != "counts")
        for dropped in range(len(order) + 1):
            line = self._joined(fields, order[:dropped], width)
            if line is not None:
                return line
        least = self._joined(fields, order, None) or ""
        return least[:width]

    def _joined(
        self, fields: list[tuple[str, str, str]], dropped: tuple[str, ...], width: int | None
    ) -> str | None:
        """``fields`` but the ``dropped`` ones, as one line; None when it is longer than
        ``width`` or leaves the bar less than ``MIN_BAR_WIDTH``."""
        padded = "padding" not in dropped
        parts = [
            (n, sep, text.ljust(LABEL_WIDTH) if n == "label" else text)
            if padded
            else (n, sep, text.lstrip())
            for n, sep, text in fields
            if n not in dropped
        ]
        bare = "".join(sep + text for _, sep, text in parts)
        bar = BAR_WIDTH if width is None else min(BAR_WIDTH, width - len(bare))
        if any(n == "bar" for n, _, _ in parts):
            if bar < MIN_BAR_WIDTH:
                return None
            parts = [(n, sep, self._bar(bar) if n == "bar" else t) for n, sep, t in parts]
        line = "".join(sep + text for _, sep, text in parts)
        return line if width is None or len(line) <= width else None

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
                # The width is read at each draw, so that a resized terminal is followed.
                line = self._line(terminal.width(self.stream))
                self.stream.write(terminal.erase(self.stream) + line + ("\n" if final else ""))
            else:
                self.stream.write(self._line() + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # closed, or its reader gone: the bar goes quiet
            self.stream = None

    def close(self) -> None:
        """End the bar: its final state, unless a log already has that very line."""
        if self.tty or self._drawn != self.done:
            self._draw(final=True)
