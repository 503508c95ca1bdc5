"""Token spans for the editor, computed off the GUI thread.

What it does: :class:`SpanService` runs ``core.spans.compute_spans`` (Qt-free: the text piece
by piece, packed into NumPy arrays) in a one-thread pool after a short debounce, numbers every
request, drops stale results, and lets a superseded job stop between pieces.
:class:`TokenizerSource` builds a tokenizer lazily, in that same thread.
What it leaves out: painting (``views/token_editor``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping, Sequence

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, QTimer, Signal, Slot

from ..core import Tokenizer
from ..core.spans import SpanArrays, compute_spans


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
    ) -> None:
        if tokenizer is None and vocab is None:
            raise ValueError("give a tokenizer, or a vocabulary to build one from")
        self.label = label
        self._tokenizer = tokenizer
        self._recipe = (dict(vocab or {}), list(merges), list(special_tokens))
        self._lock = threading.Lock()

    def get(self) -> Tokenizer:
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = Tokenizer(*self._recipe)
                self._recipe = ({}, [], [])
            return self._tokenizer


class _SpanJob(QRunnable):
    def __init__(self, service: SpanService, generation: int, source: TokenizerSource, text: str):
        super().__init__()
        self.setAutoDelete(True)
        self._service, self._generation = service, generation
        self._source, self._text = source, text

    def run(self) -> None:
        service, generation = self._service, self._generation

        def stale() -> bool:
            return service.generation != generation

        if stale():
            return
        try:
            result: SpanArrays | str | None = compute_spans(self._source.get(), self._text, stale)
        except Exception as error:  # a broken tokenizer must not kill the pool thread
            result = f"{type(error).__name__}: {error}"
        if result is not None:
            service.computed.emit(generation, result)


_SERVICES: weakref.WeakSet[SpanService] = weakref.WeakSet()


def busy_span_threads() -> int:
    """Pool threads of live span services still running a job (tests assert 0 afterwards)."""
    return sum(service.active_threads() for service in list(_SERVICES))


class SpanService(QObject):
    """Debounced, cancellable span computation; ``ready`` fires on the GUI thread with the
    latest result only."""

    computed = Signal(int, object)  # from the pool thread: generation, SpanArrays | error text
    ready = Signal(object)  # SpanArrays for the current text and tokenizer
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None, debounce_ms: int = 120) -> None:
        super().__init__(parent)
        self.generation = 0  # read by the pool thread: an int swap is atomic under the GIL
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._pool.setObjectName("bpe-spans")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._submit)
        self._pending: tuple[TokenizerSource, Callable[[], str]] | None = None
        self.computed.connect(self._on_computed, Qt.ConnectionType.QueuedConnection)
        _SERVICES.add(self)

    def active_threads(self) -> int:
        try:
            return self._pool.activeThreadCount()
        except RuntimeError:  # the C++ pool is already gone with its owner
            return 0

    def request(self, source: TokenizerSource | None, text: Callable[[], str]) -> None:
        """Mark the current result stale and compute anew after the debounce. ``text`` is read
        when the timer fires, so a burst of edits costs one copy of the document."""
        self.generation += 1
        if source is None:
            self._pending = None
            self._timer.stop()
            return
        self._pending = (source, text)
        self._timer.start()

    @property
    def busy(self) -> bool:
        return self._pending is not None or self._pool.activeThreadCount() > 0

    @Slot()
    def _submit(self) -> None:
        if self._pending is None:
            return
        source, text = self._pending
        self._pool.start(_SpanJob(self, self.generation, source, text()))

    @Slot(int, object)
    def _on_computed(self, generation: int, result: SpanArrays | str) -> None:
        if generation != self.generation:
            return
        self._pending = None
        if isinstance(result, str):
            self.failed.emit(result)
        else:
            self.ready.emit(result)

    def shutdown(self) -> None:
        """Abandon pending work and wait for the pool thread to finish its current piece."""
        self.generation += 1
        self._pending = None
        self._timer.stop()
        self._pool.clear()
        self._pool.waitForDone()
