"""Refuse, at start-up, a PySide6 build known to crash this app.

What it does: :func:`faulty_build` names the problem with an installed PySide6, if it is one
of the builds the project excludes, in one line with the fix. PySide6 6.12.0 wheels for
CPython < 3.12 treat ``None``/``True``/``False`` as immortal, as they are only from CPython
3.12 on (PEP 683): every void call and signal emit drops a reference to them, and within
seconds of plotting the interpreter aborts with "Fatal Python error: none_dealloc".
``pyproject.toml`` excludes that build; this check catches an environment that has it anyway.
:func:`missing_xcb_library` does the same for the one system library Qt's X11 plugin needs
that minimal systems often lack (``libxcb-cursor0``, ``libxcb-icccm4``, ...): without them
Qt aborts the process with a paragraph about platform plugins.
What it leaves out: working around the fault (the app refuses to run instead).
"""

from __future__ import annotations

import ctypes.util
import os
import sys
from collections.abc import Callable, Mapping

# (PySide6 version, first CPython version without the fault)
FAULTY_BUILDS: tuple[tuple[str, tuple[int, int]], ...] = (("6.12.0", (3, 12)),)


def faulty_build(
    pyside_version: str | None = None, python_version: tuple[int, ...] | None = None
) -> str | None:
    """One line naming the faulty PySide6 build and the fix, or None when the build is fine.

    Defaults to the installed PySide6 and the running interpreter."""
    if pyside_version is None:
        import PySide6

        pyside_version = PySide6.__version__
    python = tuple(sys.version_info[:2] if python_version is None else python_version[:2])
    for version, fixed_from in FAULTY_BUILDS:
        if pyside_version == version and python < fixed_from:
            running = ".".join(map(str, python))
            return (
                f"bpe-studio: PySide6 {version} crashes on Python {running} (it drops references "
                f"to None); install another version: pip install 'PySide6!={version}'"
            )
    return None


# The X11 libraries Qt's xcb plugin links (besides libxcb itself), as ``find_library`` names
# them, with the Debian/Ubuntu package that holds each.
XCB_LIBRARIES: tuple[tuple[str, str], ...] = (
    ("xcb-cursor", "libxcb-cursor0"),
    ("xcb-icccm", "libxcb-icccm4"),
    ("xcb-image", "libxcb-image0"),
    ("xcb-keysyms", "libxcb-keysyms1"),
    ("xcb-randr", "libxcb-randr0"),
    ("xcb-render-util", "libxcb-render-util0"),
    ("xcb-shape", "libxcb-shape0"),
    ("xcb-xkb", "libxcb-xkb1"),
    ("xkbcommon-x11", "libxkbcommon-x11-0"),
)


def missing_xcb_library(
    env: Mapping[str, str] | None = None,
    platform: str | None = None,
    find_library: Callable[[str], str | None] = ctypes.util.find_library,
) -> str | None:
    """One line naming the X11 libraries Qt's xcb plugin needs that are not installed, and
    the command that installs them, when Qt will use that plugin (Linux, a DISPLAY, no
    Wayland, no other platform chosen); else None."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux") or not env.get("DISPLAY"):
        return None
    chosen = env.get("QT_QPA_PLATFORM", "")
    if (chosen and not chosen.startswith("xcb")) or (env.get("WAYLAND_DISPLAY") and not chosen):
        return None
    missing = [package for name, package in XCB_LIBRARIES if find_library(name) is None]
    if not missing:
        return None
    return (
        f"bpe-studio: Qt's X11 support needs system libraries that are not installed "
        f"({', '.join(missing)}): sudo apt install {' '.join(missing)}"
    )
