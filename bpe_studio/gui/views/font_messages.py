"""Qt's font messages in terms a user can act on: one line per script no installed font shapes.

Why: a vocabulary holds tokens of many scripts (o200k_base ends in Malayalam and Telugu). The
first time Qt lays out a character of a script that needs OpenType shaping (the Indic
scripts, Khmer, N'Ko...) in a font lacking it, it walks the system's fallback families for
one that has it, loading each, and logs "OpenType support missing for "FAMILY", script N" for
every family that has not: with no installed font for the script, once per family, for each
font the app lays text out in (the tables, the editor, the glyph warm-up): 355 lines on
stderr that say nothing a user can use. The characters show as boxes either way: that is
what a user should read, once, with what to install.
What it does: :func:`install` puts a Qt message handler in place that turns those messages
into one line per script ("no installed font shapes Malayalam text: ...") and passes every
other message on exactly as Qt's own handler would have printed it (``qFormatLogMessage``,
which honours ``QT_MESSAGE_PATTERN``). ``BPE_STUDIO_DEBUG`` set: nothing is changed.
What it leaves out: Qt's fallback walk itself (Qt's own, per font and script), which font to
install (the user's system's).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from typing import TextIO

from PySide6.QtCore import QMessageLogContext, QtMsgType, qFormatLogMessage, qInstallMessageHandler

DEBUG_VARIABLE = "BPE_STUDIO_DEBUG"
FONT_CATEGORY = "qt.text.font.db"
_MISSING = re.compile(r'OpenType support missing for "(?P<family>[^"]*)", script (?P<script>\d+)')


# The scripts Qt shapes only with OpenType (QFontEngine's scriptRequiresOpenType), by their
# QChar::Script numbers, which the message gives (PySide6 has no QChar to name them).
_OPENTYPE_SCRIPTS = {
    9: "Syriac",
    10: "Thaana",
    11: "Devanagari",
    12: "Bengali",
    13: "Gurmukhi",
    14: "Gujarati",
    15: "Oriya",
    16: "Tamil",
    17: "Telugu",
    18: "Kannada",
    19: "Malayalam",
    20: "Sinhala",
    32: "Khmer",
    66: "NKo",
}


def script_name(number: int) -> str:
    """Qt's script number as a name ("Malayalam" for 19); "script N" for one not known."""
    return _OPENTYPE_SCRIPTS.get(number, f"script {number}")


def missing_font_line(script: str) -> str:
    return (
        f"bpe-studio: no installed font shapes {script} text: its characters show as boxes "
        f"(install a font for it, such as Noto Sans {script}, to read them)"
    )


class FontMessages:
    """The handler: Qt's messages to ``stream``, "OpenType support missing" summed up as
    one line per script."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self.scripts_told: set[str] = set()

    def __call__(self, kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
        stream = self._stream or sys.stderr
        found = _MISSING.search(message) if context.category == FONT_CATEGORY else None
        if found is not None:
            script = script_name(int(found["script"]))
            if script not in self.scripts_told:
                self.scripts_told.add(script)
                print(missing_font_line(script), file=stream, flush=True)
            return
        print(qFormatLogMessage(kind, context, message), file=stream, flush=True)


def install(stream: TextIO | None = None) -> FontMessages | None:
    """Put the handler in place for the whole app (None, and Qt's own kept, under
    ``BPE_STUDIO_DEBUG``)."""
    if os.environ.get(DEBUG_VARIABLE):
        return None
    handler = FontMessages(stream)
    _installed.append(handler)  # subtle: PySide keeps no reference of its own to a callable
    qInstallMessageHandler(handler)
    return handler


_installed: list[Callable[..., None]] = []
