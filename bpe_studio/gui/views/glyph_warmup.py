"""Loading the fallback fonts a vocabulary's scripts need before the user scrolls or sorts to them.

What it does: the first time Qt lays out a character of a script the table's font lacks, it
walks the system's fallback families and loads each one until a font has the glyph; for a
script no installed font covers, it loads every family, a long stretch of the GUI thread
(docs/responsiveness.md). o200k_base's last ids are Malayalam and Telugu tokens, so the first
"sort by ID descending" would pay for two such walks inside one repaint.
:func:`script_samples` (plain Python, any thread) picks one character per script-like group
of characters from a vocabulary's tokens; :class:`GlyphWarmer` lays them out with a widget's
font on the GUI thread, a few per turn of the event loop, so each walk happens once, in a
turn of its own, before a click needs it.
What it leaves out: which vocabulary (the caller's) and running off the GUI thread: Qt keeps
its loaded fonts per thread, so fonts loaded by another thread would not serve the GUI's.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QWidget

from ...core.text.display import readable_token

TURN_BUDGET_S = (
    0.005  # layouts per turn stop after this long (one new script's walk may overrun it)
)
MAX_PAUSE_MS = 100  # the longest wait between two turns
_TOKEN_BYTES = 1024  # of each token, looked at for its characters
_SLICE = 4096  # tokens decoded per C call


def _group(ch: str) -> str:
    # Characters of one script share the first words of their Unicode names ("MALAYALAM
    # LETTER KA", "MALAYALAM VOWEL SIGN AA"); two words keep apart scripts whose names share a
    # first word ("OLD ITALIC", "OLD PERSIAN"). A few more groups than scripts costs little:
    # laying out a character whose fonts are loaded already takes microseconds.
    name = unicodedata.name(ch, "")
    return " ".join(name.split()[:2]) if name else f"U+{ord(ch):04X}"


def script_samples(
    tokens: Iterable[bytes], between_slices: Callable[[], object] | None = None
) -> list[str]:
    """One character (as the tables show it) per group of characters the tokens hold, in
    code point order; the tables' substitutes for bytes and invisible characters included.
    ``between_slices`` is called between two slices of the tokens (a background caller may
    wait there while the GUI thread repaints)."""
    # subtle: decoding the tokens joined (C-speed passes) may pair up the halves of characters
    # split between neighbouring tokens; such characters are extra samples, harmless here.
    # Slices of tokens, not all at once: joining o200k's tokens in one call, or taking the set
    # of its characters, holds the GIL in one long stretch, and the GUI thread waits meanwhile.
    chars: set[str] = set()
    # A token's first bytes only: one of megabytes (a corpus of one letter) held the GIL for
    # a second in one decode, and its characters beyond those are samples no font misses.
    tokens = [t[:_TOKEN_BYTES] for t in tokens]
    for start in range(0, len(tokens), _SLICE):
        if between_slices is not None:
            between_slices()
        chars.update(b"".join(tokens[start : start + _SLICE]).decode("utf-8", "replace"))
    shown = {readable_token(bytes([b])) for b in range(256)}  # "␣", "↵", "<e6>", ...
    shown.update(readable_token(ch.encode("utf-8")) for ch in chars if ch >= "\x80")
    samples: dict[str, str] = {}
    for sample in sorted(shown):
        samples.setdefault(_group(sample[0]), sample)
    return list(samples.values())


class GlyphWarmer(QObject):
    """Lays out samples with ``widget``'s font on the GUI thread, a few per event-loop turn,
    turns spaced by what they cost."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self._widget = widget
        self._queue: list[str] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)  # each turn schedules the next (see _turn)
        self._timer.timeout.connect(self._turn)

    def start(self, samples: list[str]) -> None:
        """Warm ``samples`` (replacing any still queued)."""
        self._queue = list(reversed(samples))  # popped from the end: code point order
        if self._queue:
            self._timer.start(1)

    def stop(self) -> None:
        self._queue = []
        self._timer.stop()

    @property
    def pending(self) -> int:
        """Samples not laid out yet."""
        return len(self._queue)

    @Slot()
    def _turn(self) -> None:
        # The widget itself as the paint device: the fonts loaded are those of its screen's
        # resolution, the ones its repaints use.
        metrics = QFontMetrics(self._widget.font(), self._widget)
        start = time.perf_counter()
        queue = self._queue
        # subtle: a script no installed font covers costs one long layout (Qt's walk through
        # every fallback family), which cannot be split. So a turn stops after its
        # budget or after any such walk, and the next turn waits as long as this one took:
        # between two walks the event loop serves whatever came meanwhile (input, repaints,
        # timers), instead of running walk after walk (docs/responsiveness.md).
        while queue:
            metrics.horizontalAdvance(queue.pop())
            if time.perf_counter() - start >= TURN_BUDGET_S:
                break
        if queue:
            spent_ms = (time.perf_counter() - start) * 1000
            self._timer.start(max(1, min(round(spent_ms), MAX_PAUSE_MS)))
