"""One-line reasons a file is not the JSON it should be: empty, cut short, or where it breaks.

What it does: :func:`not_json` words a ``json.JSONDecodeError`` for a person: a file cut short
(the error at its very end, or a string that never closes) says so and asks whether it was,
any other names the line and column; :func:`not_utf8` names the first byte that is not UTF-8;
:func:`parse_json` parses a file's text with them (a large one in slices, which lets
other threads run: ``json_slices``), a file nested too deep for Python's parser
or holding a number too long for it said as such; :func:`read_json` reads a file so, and
:func:`json_or_none` for a reader that leaves saying what is wrong to the one that follows.
What it leaves out: what the JSON should hold (each format's reader).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .json_slices import loads_in_slices


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


def _too_long_number(name: str, text: str) -> str:
    """Why ``text`` (the file ``name``) cannot be parsed here: it holds an integer longer than
    Python converts (``sys.get_int_max_str_digits``), named by where it is when found."""
    limit = sys.get_int_max_str_digits()
    # subtle: only an integer is limited (a fraction or an exponent makes a float, which is
    # not); a digit run within a string could be taken for one, a token no vocabulary holds.
    found = re.search(rf"(?<![\w.])-?\d{{{limit + 1},}}(?![\d.eE])", text)
    if found is None:
        return f"{name}: holds an integer longer than {limit:,} digits: no tokenizer file does"
    line = text.count("\n", 0, found.start()) + 1
    column = found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1
    digits = len(found.group().lstrip("-"))
    return (
        f"{name}: an integer of {digits:,} digits at line {line} column {column}, longer than "
        f"the {limit:,} read here: no tokenizer file holds one (a damaged file?)"
    )


def parse_json(
    text: str, name: str, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None
) -> Any:
    """The JSON ``text`` (the file ``name``) holds; ValueError in one line naming it otherwise
    (``object_pairs_hook`` as for ``json.loads``)."""
    try:
        return loads_in_slices(text, object_pairs_hook)
    except json.JSONDecodeError as e:
        raise ValueError(not_json(name, text, e)) from None
    except RecursionError:
        # json parses each nested array or object by a recursive call: a file nested past
        # Python's recursion limit is refused so, not with a traceback.
        raise ValueError(
            f"{name}: its arrays or objects nest deeper than Python's JSON parser goes, which "
            "no tokenizer file does (a damaged file, or not a tokenizer?)"
        ) from None
    except ValueError:
        # The one other ValueError json raises: an integer longer than Python converts,
        # whose own words advise raising the limit and name no file.
        raise ValueError(_too_long_number(name, text)) from None


def read_json(path: str | os.PathLike[str]) -> Any:
    """The JSON in the file at ``path``; ValueError in one line naming it otherwise."""
    name = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"{name}: cannot read ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise ValueError(not_utf8(name, e)) from None
    return parse_json(text, name)


def json_or_none(path: str | os.PathLike[str]) -> Any:
    """The JSON in the file at ``path``, or None when :func:`read_json` would refuse it: for
    a reader that only looks, leaving the error to the reader that follows."""
    try:
        return read_json(path)
    except ValueError:
        return None
