"""Tell, before Qt starts, whether the display the environment names answers.

What it does: :func:`display_problem` tries to connect to the X server ``DISPLAY`` names (its
Unix socket, abstract or in ``/tmp/.X11-unix``, or its TCP port, as libxcb does) and to the
Wayland compositor's socket ``WAYLAND_DISPLAY`` names, and says in one line when none that Qt
would use answers. Qt, given a ``DISPLAY`` no server listens on (a stale ssh -X or tmux
session), prints a paragraph advising to reinstall the application and aborts the process.
What it leaves out: whether a display is named at all (``app.has_display``) and Qt's own
libraries (``qt_check``); it imports no Qt.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from collections.abc import Mapping

# X display numbers map to TCP ports from here (the X protocol's convention).
X_TCP_PORT = 6000
X_SOCKET_DIR = "/tmp/.X11-unix"
# A display on another machine may take a moment to answer; one that does not within this
# many seconds would leave the app's window just as unusable.
CONNECT_TIMEOUT = 3.0
# [host]:number[.screen]; "unix" as the host means the local socket, as libxcb reads it.
_X_DISPLAY = re.compile(r"(?P<host>[^:/]*):(?P<number>\d+)(?:\.\d+)?")


def _answers(family: int, address: str | tuple[str, int]) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(CONNECT_TIMEOUT)
            probe.connect(address)
    except OSError:
        return False
    return True


def x_server_answers(display: str, platform: str) -> bool | None:
    """Whether an X server answers on ``display`` (``DISPLAY``'s value); None for a form this
    does not read (Qt is left to try it)."""
    match = _X_DISPLAY.fullmatch(display.strip())
    if match is None:
        return None
    host, number = match["host"], int(match["number"])
    if host not in ("", "unix"):
        return _answers(socket.AF_INET, (host, X_TCP_PORT + number))
    path = f"{X_SOCKET_DIR}/X{number}"
    # subtle: Linux X servers also listen on an abstract socket of that name, which a
    # container sharing the host's network sees without its /tmp.
    if platform.startswith("linux") and _answers(socket.AF_UNIX, "\0" + path):
        return True
    if hasattr(socket, "AF_UNIX") and _answers(socket.AF_UNIX, path):
        return True
    # With no host, libxcb falls back to TCP on this machine.
    return host == "" and _answers(socket.AF_INET, ("localhost", X_TCP_PORT + number))


def wayland_answers(env: Mapping[str, str], name: str | None = None) -> bool:
    """Whether the compositor ``name`` (by default ``WAYLAND_DISPLAY``'s) names (a socket in
    ``XDG_RUNTIME_DIR``, or an absolute path) accepts a connection."""
    name = env.get("WAYLAND_DISPLAY", "") if name is None else name
    path = name if os.path.isabs(name) else os.path.join(env.get("XDG_RUNTIME_DIR", ""), name)
    return _answers(socket.AF_UNIX, path)


def display_problem(
    env: Mapping[str, str] | None = None, platform: str | None = None
) -> str | None:
    """What to say when no display named that Qt would use answers ("cannot connect to
    display :77 (DISPLAY)"); None when one answers, when none is named, when another
    platform plugin is chosen (``QT_QPA_PLATFORM=offscreen``) or off Linux/BSD."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if not (platform.startswith("linux") or "bsd" in platform) or env.get("WAYLAND_SOCKET"):
        return None  # a compositor's socket handed over open: nothing to connect to
    chosen = env.get("QT_QPA_PLATFORM", "")
    x11 = env.get("DISPLAY", "") if not chosen or chosen.startswith("xcb") else ""
    wayland = env.get("WAYLAND_DISPLAY", "") if not chosen or chosen.startswith("wayland") else ""
    if chosen.startswith("xcb") and not x11:
        # subtle: a platform chosen in a shell's profile, reached over ssh without -X: Qt
        # aborts with advice to reinstall.
        return f"QT_QPA_PLATFORM is {chosen}, but DISPLAY names no X display"
    source = "WAYLAND_DISPLAY"
    if chosen.startswith("wayland") and not wayland:
        wayland, source = "wayland-0", "WAYLAND_DISPLAY unset: libwayland's default"
    if chosen and not (x11 or wayland):
        return None  # offscreen, vnc, eglfs...: no display server to reach, or not ours
    tried = []
    if wayland:
        if wayland_answers(env, wayland):
            return None
        tried.append(f"{wayland} ({source})")
    if x11:
        if x_server_answers(x11, platform) is not False:
            return None
        tried.append(f"{x11} (DISPLAY)")
    return f"cannot connect to display {' or '.join(tried)}" if tried else None
