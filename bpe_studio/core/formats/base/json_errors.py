"""One-line reasons a file is not the JSON it should be: empty, cut short, or where it breaks.

What it does: :func:`not_json` words a ``json.JSONDecodeError`` for a person: a file cut short
(the error at its very end, or a string that never closes) says so and asks whether it was,
any other names the line and column; :func:`not_utf8` names the first byte that is not UTF-8;
:func:`read_json` reads a file with them. What it leaves out: what the JSON should hold (each
format's reader).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def not_utf8(name: str, error: UnicodeDecodeError) -> str:
    """``name``: not UTF-8, naming the first bad byte and its offset."""
    bad = error.object[error.start]
    return f"{name}: not UTF-8 (byte 0x{bad:02x} at offset {error.start:,})"


def not_json(name: str, text: str, error: json.JSONDecodeError) -> str:
    """Why ``text`` (the file ``name``, valid UTF-8) is not JSON, in one line.

    >>> e = None
    >>> try:
    ...     json.loads('{"a": [1, 2')
    ... except json.JSONDecodeError as caught:
    ...     e = caught
    >>> not_json("t.json", '{"a": [1, 2', e)
    't.json: not valid JSON: it ends early, at line 1 column 12 (cut short?)'
    """
    if not text.strip():
        return f"{name}: empty, not JSON"
    end = len(text.rstrip())
    # subtle: json reports a string that never closes where it opens, not where the text ends,
    # and a text that ends within six characters of a \u escape's start as a bad escape.
    escape_at_end = error.msg.startswith("Invalid \\uXXXX") and end - error.pos <= 6
    if error.pos >= end or error.msg.startswith("Unterminated string") or escape_at_end:
        line = text.count("\n", 0, end) + 1
        column = end - (text.rfind("\n", 0, end) + 1) + 1
        return f"{name}: not valid JSON: it ends early, at line {line} column {column} (cut short?)"
    return f"{name}: not valid JSON at line {error.lineno} column {error.colno} ({error.msg})"


def read_json(path: str | os.PathLike[str]) -> Any:
    """The JSON in the file at ``path``; ValueError in one line naming it otherwise."""
    name = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"{name}: cannot read ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise ValueError(not_utf8(name, e)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(not_json(name, text, e)) from None
