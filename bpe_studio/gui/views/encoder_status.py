"""The compiled encoder's start, and the status bar's word on it while it compiles.

What it does: :class:`EncoderStatus` loads the compiled encoder in a background thread (the
first time on a machine it compiles, in a child process) and is the label at the status bar's
right that says so for as long as the compile lasts: a compile is a state of the window, not
news of an action, so the next action (a tab switch) does not end it as it ends a notice.
When it ends, ``news`` carries one line for the notice ("The encoder is compiled", or why the
editor keeps the slower encoder) and ``ready`` says the kernels are there.
What it leaves out: the kernels themselves (``core.encode.merging.kernel_start``).
"""

from __future__ import annotations

from PySide6.QtCore import Signal, SignalInstance, Slot
from PySide6.QtWidgets import QLabel, QWidget

from ...core.encode.merging import kernel_start
from ...core.io.kernel_loader import FIRST_RUN, NO_CACHE

ENCODER_COMPILING = (
    "Compiling the encoder (first run only); the editor tokenizes with the slower one meanwhile"
)
ENCODER_COMPILED = "The encoder is compiled"


def encoder_compiling(message: str) -> str:
    """The window's words for the core's compiling ``message``: "first run only", or where
    numba has no folder to cache in, that each run compiles (the core's words)."""
    if message.endswith(NO_CACHE):
        return ENCODER_COMPILING.replace(FIRST_RUN, NO_CACHE)
    return ENCODER_COMPILING


def encoder_failed(reason: str | None) -> str:
    """The notice when the compiled encoder could not be made ready."""
    why = f" ({reason})" if reason else ""
    return f"The encoder could not be compiled{why}; the editor tokenizes with the slower one"


class EncoderStatus(QLabel):
    """Shown while the compiled encoder compiles; hidden otherwise."""

    # From the loading thread: the compile began (its words), it ended (ready, compiled).
    _compiling = Signal(str)
    _ended = Signal(bool, bool)
    news = Signal(str)  # one line for the status bar's notice when a compile ends
    ready = Signal()  # the compiled encoder is ready

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("encoder_status")
        self.hide()
        self._compiling.connect(self._show_compiling)
        self._ended.connect(self._show_ended)

    def start(self) -> None:
        """Load (or compile) the encoder in the background; never on the GUI thread."""
        compiled: list[str] = []

        def emitted(signal: SignalInstance, *args: object) -> None:  # in the loading thread
            try:
                signal.emit(*args)
            except RuntimeError:  # the window is gone
                pass

        def status(message: str) -> None:
            compiled.append(message)
            emitted(self._compiling, encoder_compiling(message))

        def done(ready: bool) -> None:
            emitted(self._ended, ready, bool(compiled))

        kernel_start.prepare_in_background(status, done)

    @Slot(str)
    def _show_compiling(self, text: str) -> None:
        self.setText(text)
        self.show()

    @Slot(bool, bool)
    def _show_ended(self, ready: bool, compiled: bool) -> None:
        self.hide()
        if ready:
            self.ready.emit()
            if compiled:
                self.news.emit(ENCODER_COMPILED)
        elif compiled or kernel_start.failure() is not None:  # not turned off by the user
            self.news.emit(encoder_failed(kernel_start.failure()))
