"""A large JSON text parsed a slice at a time, so that a thread reading it lets others run.

What it does: :func:`loads_in_slices` gives what ``json.loads`` gives, but parses the flat
containers that make up most of a tokenizer file (a ``tokenizer.json``'s ``vocab`` and
``merges``; a ``vocab.json`` whole) in slices of about :data:`SLICE` characters.
``json.loads`` is C that holds Python's lock throughout: an 8 MB ``tokenizer.json`` of o200k's
size held it for 0.17-0.4 s, and the app's window, whose thread waits for the lock, froze as
long while a tokenizer loaded in the background.

Why the result is the same: a slice is cut only at a comma between two members of the
container (as the text around it looks: a digit or a ``]`` before, the next key or pair
after, JSON's own whitespace between), and the container taken to end at a closing bracket
that a slice ends on. A cut or an end that falls inside a string leaves a slice whose string
never closes, which ``json.loads`` refuses: a JSON string holds no unescaped quote, so a slice
ending within one has an odd number of them. A cut or an end among the members of a container
nested deeper leaves brackets unbalanced, refused too. Slices that all parse are therefore
the container's members, in order. The rest of the text, with each container replaced by a
string made for this call, must parse and hold each such string exactly once, where the
container stood. Anything else (a slice refused for any reason, a text not so shaped) is
parsed whole, as ``json.loads`` parses it, so every error is ``json.loads``' own, the first
in the text. With an ``object_pairs_hook``, whose calls a caller may count on, only a text
that is one flat object (a ``vocab.json``) is sliced, and the hook is called once, on all its
pairs, as ``json.loads`` calls it.
What it leaves out: the errors' words (``json_errors``).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

Hook = Callable[[list[tuple[str, Any]]], Any] | None

SLICE = 1 << 18  # characters a json.loads call parses at one go: 5-10 ms
LARGE = 1 << 20  # a text shorter than this is parsed whole (a few tens of ms at most)
_WS = r"[ \t\n\r]*"  # JSON's whitespace (not \s: a cut's text is dropped, never parsed)
_KEY = re.compile(rf'"(?:vocab|merges)"{_WS}:{_WS}(?=[\[{{])')
_KEYS_TRIED = 4  # "vocab"/"merges" keys looked at: a text of many small ones is parsed whole
_STRING = r'"(?:[^"\\]|\\.)*"'
# Where a flat container's members part (the comma is the cut), by what it holds: an object
# of numbers (a vocabulary), an array of arrays of strings first (merges as pairs; Unigram's
# [piece, score]) or an array of strings (merges as "a b").
_CUTS = {
    "{": re.compile(rf"(?<=\d){_WS},{_WS}(?={_STRING}{_WS}:)"),
    "[[": re.compile(rf"(?<=\]){_WS},{_WS}(?=\[{_WS}{_STRING}{_WS},)"),
    '["': re.compile(rf'(?<="){_WS},{_WS}(?={_STRING}{_WS}[,\]])'),
}
# Its closing bracket, followed by what may follow a value.
_AFTER = rf"(?={_WS}(?:[,}}\]]|$))"
_ENDS = {
    "{": re.compile(rf"\d{_WS}\}}{_AFTER}"),
    "[[": re.compile(rf"\]{_WS}\]{_AFTER}"),
    '["': re.compile(rf'"{_WS}\]{_AFTER}'),
}
_TRIES = 8  # closing brackets tried for a last slice (the others were in strings)
_FIRST = re.compile(r"[^ \t\n\r]")
_NOT_SLICED = object()


def loads_in_slices(text: str, object_pairs_hook: Hook = None) -> Any:
    """``json.loads(text, object_pairs_hook=...)``, parsed in slices where it can be (see
    the module docstring); raises as ``json.loads`` does."""
    if len(text) >= LARGE:
        parsed = _containers(text, object_pairs_hook)
        if parsed:
            value = _assembled(text, parsed, object_pairs_hook)
            if value is not _NOT_SLICED:
                return value
    return json.loads(text, object_pairs_hook=object_pairs_hook)


def _containers(text: str, hook: Hook) -> list[tuple[int, int, Any]]:
    """(start, end, value) of each flat container found and parsed in slices, in order: a
    "vocab" or "merges" value (without a hook), else the whole text's."""
    found = []
    if hook is None:
        at = 0
        for _ in range(_KEYS_TRIED):
            key = _KEY.search(text, at)
            if key is None:
                break
            # One not so shaped (small, nested, a slice refused) is left in the rest's text.
            container = _container(text, key.end(), hook)
            if container is not None:
                found.append(container)
            at = key.end() if container is None else container[1]
    if not found:
        first = _FIRST.search(text)
        container = None if first is None else _container(text, first.start(), hook)
        found = [] if container is None else [container]
    return found


def _assembled(text: str, parsed: list[tuple[int, int, Any]], hook: Hook) -> Any:
    """The text's value with the ``parsed`` containers in their places, or ``_NOT_SLICED``
    where the text is not so shaped."""
    # A string no text can hold in advance: this call's own.
    nonce = secrets.token_hex(16)
    marks = [f"\u0000bpe-studio {nonce} {k}" for k in range(len(parsed))]
    rest, at = [], 0
    for mark, (start, end, _) in zip(marks, parsed):
        rest += [text[at:start], json.dumps(mark)]
        at = end
    rest.append(text[at:])
    try:
        holder = json.loads("".join(rest), object_pairs_hook=hook)
    except (ValueError, RecursionError):
        return _NOT_SLICED  # the whole parse says what is wrong, where it is first
    values = {mark: value for mark, (_, _, value) in zip(marks, parsed)}
    if isinstance(holder, str):
        return values[holder] if len(values) == 1 and holder in values else _NOT_SLICED
    try:
        places = list(_places(holder, values))
    except RecursionError:
        return _NOT_SLICED
    if sorted(mark for _, _, mark in places) != sorted(values):
        return _NOT_SLICED
    for node, key, mark in places:
        node[key] = values[mark]
    return holder


def _places(node: Any, values: dict[str, Any]) -> Iterator[tuple[Any, Any, str]]:
    """(container, key or index, mark) of each value of ``node`` that is a mark."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, item in items:
        if isinstance(item, str):
            if item in values:
                yield node, key, item
        elif isinstance(item, dict | list):
            yield from _places(item, values)


def _container(text: str, start: int, hook: Hook) -> tuple[int, int, Any] | None:
    """The flat container at ``start``: (start, end, its value), parsed in slices; None
    where it is not one, is shorter than a slice, or a slice is refused."""
    opening = text[start : start + 1]
    if opening == "[" and hook is None:
        first = _FIRST.search(text, start + 1)
        if first is None or first.group() not in '["':
            return None
        opening += first.group()
    elif opening != "{":
        return None
    cuts, ends = _CUTS[opening], _ENDS[opening]
    value: Any = {} if opening == "{" and hook is None else []
    add = value.update if isinstance(value, dict) else value.extend
    at = start + 1  # after the opening bracket: where the next slice starts
    sliced = False
    while True:
        # (Looked for within a slice's length: past the container's end, the text may be
        # long, and a search to its end holds the lock as long.)
        cut = cuts.search(text, at + SLICE, at + 2 * SLICE)
        if cut is None and not sliced:
            return None  # one slice holds it: parsed with the rest
        # None: the last slice, the container ending before the cut (or the cut in a string).
        part = None if cut is None else _members(opening, text[at : cut.start()], hook)
        if cut is None or part is None:
            break
        add(part)
        sliced = True
        at = cut.end()
    limit = cut.start() if cut is not None else min(len(text), at + 2 * SLICE)
    for end in islice(ends.finditer(text, at, limit + 1), _TRIES):
        part = _members(opening, text[at : end.end() - 1], hook)
        if part is not None:
            add(part)
            return start, end.end(), hook(value) if hook is not None else value
    return None


def _members(opening: str, body: str, hook: Hook) -> Any:
    """The members in ``body`` (a dict; with ``hook``, a list of pairs whose values hold no
    object or array, which the hook would have seen; or a list of values), or None if it is
    not a container's members alone."""
    try:
        if opening != "{":
            return json.loads("[" + body + "]")
        if hook is None:
            return json.loads("{" + body + "}")
        pairs = json.loads("{" + body + "}", object_pairs_hook=list)
    except (ValueError, RecursionError):
        return None  # (an integer too long too: the whole parse says which error is first)
    if any(isinstance(value, list | dict) for _, value in pairs):
        return None  # a nested object: its own call of the hook, which only json.loads makes
    return pairs
