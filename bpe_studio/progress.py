"""A small terminal progress bar for the headless command line (stderr, throttled).

On a terminal it redraws one line in place; when stderr is not a terminal (CI logs, files) it
prints a plain line at most every few seconds, so logs stay short.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _fmt_duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    m, s = divmod(seconds, 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class ProgressBar:
    """``bar = ProgressBar("merging", total); bar.update(k); ...; bar.close()``."""

    def __init__(
        self, label: str, total: int, *, unit: str = "", stream: TextIO | None = None
    ) -> None:
        self.label = label
        self.total = max(total, 0)
        self.unit = unit
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.start = time.perf_counter()
        self._last_draw = 0.0
        self._interval = 0.1 if self.tty else 5.0
        self.done = 0

    def _count(self, n: int) -> str:
        if self.unit == "B":
            return f"{n / 1e6:.1f} MB"
        return f"{n:,}{self.unit}"

    def _line(self) -> str:
        elapsed = time.perf_counter() - self.start
        frac = self.done / self.total if self.total else 1.0
        width = 28
        filled = int(width * min(frac, 1.0))
        bar = "█" * filled + "░" * (width - filled)
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        rate_s = f"{rate / 1e6:.1f} MB/s" if self.unit == "B" else f"{rate:,.0f}/s"
        return (
            f"{self.label:<14} {bar} {frac:6.1%}  {self._count(self.done)} / "
            f"{self._count(self.total)}  {rate_s}  elapsed {_fmt_duration(elapsed)}"
            f"  eta {_fmt_duration(eta)}"
        )

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        now = time.perf_counter()
        if not self.tty and self._last_draw == 0.0:
            self._last_draw = now  # logs: no line for the empty start, the next in 5 s
        elif now - self._last_draw >= self._interval:
            self._last_draw = now
            self._draw()

    def _draw(self, final: bool = False) -> None:
        if self.tty:
            self.stream.write("\r\x1b[2K" + self._line() + ("\n" if final else ""))
        else:
            self.stream.write(self._line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        self._draw(final=True)
