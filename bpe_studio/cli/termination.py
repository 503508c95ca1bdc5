"""SIGTERM ends a headless command as Ctrl-C does.

What it does: :func:`terminate_as_interrupt` installs the handler; :data:`terminated` says
whether SIGTERM came (the exit code is then 143, not 130); :func:`came` names what
interrupted the command, as its messages say it. What it leaves out: what each command
removes or saves when interrupted (the commands), and the exit codes' meaning (``cli``).
"""

from __future__ import annotations

import signal
import threading

# Whether SIGTERM came (a list, so that the handler appends rather than rebinds).
terminated: list[bool] = []


def terminate_as_interrupt() -> None:
    """SIGTERM (``timeout``, ``kill``, a job scheduler's limit) ends a headless command as
    Ctrl-C does: what it was writing is removed (a copy of standard input, the workers'
    chunks beside --out), a training's merges so far are saved, and the exit code is 143.
    Without it, the default action left those files behind."""
    # Imported now, not in the handler: every command imports the core anyway.
    from ..core.io.interrupts import interrupt

    def handler(signum: int, frame: object) -> None:
        terminated.append(True)
        if callable(signal.getsignal(signal.SIGINT)):
            signal.raise_signal(signal.SIGINT)  # to whatever handles Ctrl-C just now
        else:
            # subtle: a script's background job (``cmd &``) starts with SIGINT ignored, which
            # would swallow the SIGINT raised above, and the SIGTERM with it. Raised where
            # Ctrl-C would be: held while a tokenizer's files are written or a pool runs.
            interrupt()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def came() -> str:
    """What interrupted the command, as its messages name it."""
    return "SIGTERM" if terminated else "Ctrl-C"
