"""Token spans for the editor, computed off the GUI thread.

What it does: :class:`SpanService` runs ``core.spans.compute_spans`` (Qt-free: the text piece
by piece, packed into NumPy arrays) on a :class:`~.jobs.LatestJob`
after a short debounce (latest request wins; a superseded job stops between pieces).
:class:`TokenizerSource` builds a tokenizer lazily, in that same thread.
What it leaves out: painting (``views/token_editor``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from ..core import Tokenizer
from ..core.spans import SpanArrays, compute_spans
from .jobs import LatestJob


class TokenizerSource:
    """A tokenizer to highlight with, built on first use (in the span thread), plus a label."""

    def __init__(
        self,
        label: str,
        *,
        tokenizer: Tokenizer | None = None,
        vocab: Mapping[int, bytes] | None = None,
        merges: Sequence[tuple[bytes, bytes]] = (),
        special_tokens: Sequence[str] = (),
        pattern: str = "gpt2",
    ) -> None:
        if tokenizer is None and vocab is None:
            raise ValueError("give a tokenizer, or a vocabulary to build one from")
        self.label = label
        self._tokenizer = tokenizer
        self._recipe = (dict(vocab or {}), list(merges), list(special_tokens), pattern)
        self._lock = threading.Lock()

    def get(self) -> Tokenizer:
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = Tokenizer(*self._recipe)
                self._recipe = ({}, [], [], "gpt2")
            return self._tokenizer


class SpanService(QObject):
    """Debounced, cancellable span computation on a :class:`~.jobs.LatestJob`; ``ready`` fires
    on the GUI thread with the latest result only."""

    ready = Signal(object)  # SpanArrays for the current text and tokenizer
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None, debounce_ms: int = 120) -> None:
        super().__init__(parent)
        self._job = LatestJob("bpe-spans", self)
        self._job.done.connect(self.ready)
        self._job.failed.connect(self.failed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._submit)
        self._pending: tuple[TokenizerSource, Callable[[], str]] | None = None

    def active_threads(self) -> int:
        return self._job.active_threads()

    def request(self, source: TokenizerSource | None, text: Callable[[], str]) -> None:
        """Mark the current result stale and compute anew after the debounce. ``text`` is read
        when the timer fires, so a burst of edits costs one copy of the document."""
        self._job.cancel()
        if source is None:
            self._pending = None
            self._timer.stop()
            return
        self._pending = (source, text)
        self._timer.start()

    @property
    def busy(self) -> bool:
        return self._pending is not None or self._job.busy

    @Slot()
    def _submit(self) -> None:
        if self._pending is None:
            return
        (source, text), self._pending = self._pending, None
        snapshot = text()

        def job(is_stale: Callable[[], bool]) -> SpanArrays | None:
            return compute_spans(source.get(), snapshot, is_stale)

        self._job.submit(job)

    def shutdown(self) -> None:
        """Abandon pending work and wait for the pool thread to finish its current piece."""
        self._pending = None
        self._timer.stop()
        self._job.shutdown()
