"""Start the app: ``main(argv)`` for ``bpe-studio``, ``bpe-studio gui [CORPUS]`` and
``bpe-studio --demo``.

What it does: parses those arguments, refuses politely (one line, exit code 2) when there is no
display or the one named does not answer (:mod:`.display`) and (one line, exit code 3) when
the installed PySide6 is a build known to crash (:mod:`.qt_check`), creates the
``QApplication`` (or reuses one), puts on the colour scheme (the system's, light or dark,
unless the user chose one: ``views.theme``) with the style sheet and the icon from the
package ``bpe_studio.resources`` (read with ``importlib.resources``), shows the main window
(laid out as when it closed last, ``views.window_layout``; at the first start roomy, or
maximized on a small screen) and, for ``--demo``, starts training on the bundled TinyStories
sample (:data:`DEMO_CORPUS`) and, once it is trained, replays the run over about 20 seconds
(with Skip to jump to the end) so a first-time user watches it learn.
What it leaves out: the headless commands (``bpe_studio.cli``).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

if sys.version_info >= (3, 11):
    from importlib.resources.abc import Traversable
else:  # importlib.resources.abc is new in 3.11
    from importlib.abc import Traversable

from ..commands import headless_commands
from .display import display_problem
from .qt_check import faulty_build, missing_xcb_library

if TYPE_CHECKING:  # Qt is imported only once a display is known
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication, QWidget

    from .main_window import MainWindow

RESOURCES: Traversable = files("bpe_studio.resources")
# A real file: training reads it by path (in worker processes too).
DEMO_CORPUS = Path(str(RESOURCES / "sample" / "tinystories_sample.txt"))
ICON = RESOURCES / "icon.svg"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256)
DEMO_VOCAB_SIZE = 10_000
EXIT_NO_DISPLAY = 2
EXIT_FAULTY_QT = 3

NO_DISPLAY_MESSAGE = (
    "bpe-studio: no display found (DISPLAY / WAYLAND_DISPLAY unset): start the app from a "
    f"desktop session (or over ssh -X), or work headless with {headless_commands()} (see "
    "`bpe-studio --help`)"
)


def unreachable_display_message(problem: str) -> str:
    """The one line for a display that is named but does not answer (``display_problem``)."""
    return (
        f"bpe-studio: {problem}: no display server answers there (a stale ssh -X or tmux "
        "session?): start the app from a desktop session (or a fresh ssh -X), or work headless "
        f"with {headless_commands()} (see `bpe-studio --help`)"
    )


def has_display(environ: dict[str, str] | None = None, platform: str | None = None) -> bool:
    """False on Linux/BSD with neither DISPLAY nor WAYLAND_DISPLAY nor QT_QPA_PLATFORM set."""
    env = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if not (platform.startswith("linux") or "bsd" in platform):
        return True
    return any(env.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bpe-studio", description="BPE Studio desktop app")
    parser.add_argument(
        "--demo", action="store_true", help="train on the bundled TinyStories sample right away"
    )
    parser.add_argument("command", nargs="?", choices=["gui"], help="open the app")
    parser.add_argument(
        "corpus",
        nargs="?",
        help="a UTF-8 text file to train on, or a tokenizer file (.json, .tiktoken) to load",
    )
    return parser.parse_args(argv)


def application(scheme: str | None = None) -> QApplication:
    """The ``QApplication`` (created if there is none yet), styled for the app in the colour
    scheme ``scheme`` (``views.theme``: "system", "light" or "dark"; by default the one the
    user chose last, else the system's)."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    from .views import theme

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "bpe-studio"])
    assert isinstance(app, QApplication)
    app.setApplicationName("BPE Studio")
    app.setStyle("Fusion")
    pg.setConfigOptions(antialias=True)
    theme.apply_scheme(app, scheme or theme.saved_choice())
    theme.follow_system(app)
    app.setWindowIcon(app_icon())
    app.setDesktopFileName("bpe-studio")  # resources/bpe-studio.desktop
    return app


def app_icon() -> QIcon:
    """The app's icon, rendered from ``icon.svg`` at the usual sizes."""
    from PySide6.QtCore import QByteArray, Qt
    from PySide6.QtGui import QIcon, QImage, QPainter, QPixmap
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(QByteArray(ICON.read_bytes()))
    icon = QIcon()
    for size in ICON_SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        icon.addPixmap(QPixmap.fromImage(image))
    return icon


def start_demo(window: MainWindow) -> bool:
    """Train on the bundled sample, then replay the run at the demo's pace; False if training
    did not start."""
    from .training.replay import DEMO_PACE

    if not window.open_corpus(DEMO_CORPUS):
        return False
    window.panel.vocab_spin.setValue(DEMO_VOCAB_SIZE)
    if not window.start_training():
        return False
    session = window.controller.session
    assert session is not None  # start_training made one

    def replay(result: object) -> None:
        if result is not None:  # a failed run has nothing to replay (its error is shown)
            window.timeline.replay.start(DEMO_PACE)

    session.finished.connect(replay)
    return True


def main(argv: list[str] | None = None) -> int:
    """Run the app until its window closes; returns the exit code."""
    try:
        args = parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exit_:
        return int(exit_.code or 0)
    if not has_display():
        print(NO_DISPLAY_MESSAGE, file=sys.stderr)
        return EXIT_NO_DISPLAY
    # Qt given a display that does not answer aborts the process with advice that misleads.
    unreachable = display_problem()
    if unreachable is not None:
        print(unreachable_display_message(unreachable), file=sys.stderr)
        return EXIT_NO_DISPLAY
    problem = faulty_build() or missing_xcb_library()
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_FAULTY_QT

    from .main_window import MainWindow
    from .views import font_messages

    font_messages.install()  # before any text is laid out: Qt's font messages as one line
    app = application()
    window = MainWindow()
    first_start = not window.restore_layout()
    if first_start:
        window.resize(window.sizeHint())
    window.setWindowIcon(app.windowIcon())
    if window.opens_maximized(first_start):
        window.showMaximized()
    else:
        window.show()
    if args.demo:
        start_demo(window)
    elif args.corpus:
        window.open_file(args.corpus)  # as a file dropped on the window opens
    interrupts = close_on_interrupt(window)
    code = app.exec()
    interrupts.stop()
    window.close_without_asking()
    return code


# Signals that ask the app to end: Ctrl-C, kill's default, the terminal that started it
# closing. Each closes the window as its close button does, so unsaved merges are asked
# about (a hostile-machine audit: SIGTERM and SIGHUP ended the app at once, the run lost).
CLOSING_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def close_on_interrupt(window: QWidget) -> QTimer:
    """Ctrl-C in the terminal that started the app, a plain ``kill`` or that terminal closing
    (:data:`CLOSING_SIGNALS`) closes its window as its close button does (asking first about
    merges no file holds; the app ends with its last window). Python handles a signal only
    when it runs, so a timer gives it a turn every 200 ms; the timer is returned, to stop
    when the app ends."""
    from PySide6.QtCore import QTimer

    for closing in CLOSING_SIGNALS:
        # One the app was started to ignore stays ignored (nohup: the terminal's SIGHUP).
        if signal.getsignal(closing) is not signal.SIG_IGN:
            signal.signal(closing, lambda signum, frame: QTimer.singleShot(0, window.close))
    timer = QTimer(window)
    timer.timeout.connect(lambda: None)
    timer.start(200)
    return timer
