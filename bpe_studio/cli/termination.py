"""SIGTERM and SIGHUP end a headless command as Ctrl-C does.

What it does: :func:`terminate_as_interrupt` installs the handler; :data:`terminated` holds
the signal that came (the exit code is then 128 + its number: 143, 129; not 130); :func:`came`
names what interrupted the command, as its messages say it. What it leaves out: what each command
removes or saves when interrupted (the commands), and the exit codes' meaning (``cli``).
"""

from __future__ import annotations

import signal
import threading

# The signals that came (a list, so that the handler appends rather than rebinds).
terminated: list[signal.Signals] = []

# What ends a command as Ctrl-C does: kill's default, and the terminal that started it
# closing (an audit: SIGHUP left the workers' chunks and a copy of standard input behind, and
# lost a training's merges).
_ENDING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def terminate_as_interrupt() -> None:
    """SIGTERM (``timeout``, ``kill``, a job scheduler's limit) and SIGHUP (the terminal
    closing) end a headless command as Ctrl-C does: what it was writing is removed (a copy of
    standard input, the workers' chunks beside --out), a training's merges so far are saved,
    and the exit code is 128 + the signal's number. Without it, the default action left those
    files behind. A signal the command was started to ignore stays ignored (started by nohup)."""
    # Imported now, not in the handler: every command imports the core anyway.
    from ..core.io.interrupts import interrupt

    def handler(signum: int, frame: object) -> None:
        terminated.append(signal.Signals(signum))
        if callable(signal.getsignal(signal.SIGINT)):
            signal.raise_signal(signal.SIGINT)  # to whatever handles Ctrl-C just now
        else:
            # subtle: a script's background job (``cmd &``) starts with SIGINT ignored, which
            # would swallow the SIGINT raised above, and the SIGTERM with it. Raised where
            # Ctrl-C would be: held while a tokenizer's files are written or a pool runs.
            interrupt()

    if threading.current_thread() is not threading.main_thread():
        return
    for ending in _ENDING:
        if signal.getsignal(ending) is not signal.SIG_IGN:
            signal.signal(ending, handler)


def exit_code() -> int | None:
    """128 + the number of the first signal that ended the command (as a shell reports a
    process that signal ended), or None when none came."""
    return 128 + terminated[0].value if terminated else None


def came() -> str:
    """What interrupted the command, as its messages name it."""
    return terminated[0].name if terminated else "Ctrl-C"
