"""A large JSON text written a slice at a time, so that a thread writing it lets others run.

What it does: :func:`dumps_in_slices` gives what ``json.dumps(value, ensure_ascii=False,
indent=indent)`` gives, but encodes the large containers of a tokenizer file (a
``tokenizer.json``'s ``vocab`` and ``merges``; a ``vocab.json`` whole) :data:`SLICE_MEMBERS`
members at a time. ``json.dumps`` is C that holds Python's lock throughout: o200k's
``tokenizer.json`` (7 MB) held it for a quarter of a second, and the app's window, whose
thread waits for the lock, froze as long while a tokenizer was saved in the background. This
is the writing side of ``json_slices``.

Why the text is the same: a container's members are written in order, each by ``json.dumps``
itself, and joined with the separator ``json.dumps`` puts between them (", " compact;
",\\n" and the same indentation when indented, which depends only on the depth, the same for
every slice of one container). Compact, a container is sliced at any depth (its members
written one by one where some are containers, each then written so); indented, only the
outermost one is.
What it leaves out: reading (``json_slices``), writing the file (``io.atomic``).
"""

from __future__ import annotations

import json
from typing import Any

# Members of a container written by one call of json.dumps (a few milliseconds of o200k's
# vocabulary).
SLICE_MEMBERS = 4096


def dumps_in_slices(value: Any, *, indent: int | None = None) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=indent)``, made a slice at a time.

    >>> dumps_in_slices({"model": {"vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]]}})
    '{"model": {"vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]]}}'
    """
    if indent is None:
        return _compact(value)
    if isinstance(value, (dict, list)) and len(value) > SLICE_MEMBERS:
        # Each slice written as the whole would write it: its brackets and the newlines
        # beside them cut off, its members at the same depth.
        opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
        parts = _slices(value)
        bodies = [json.dumps(part, ensure_ascii=False, indent=indent)[2:-2] for part in parts]
        return f"{opening}\n" + ",\n".join(bodies) + f"\n{closing}"
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _compact(value: Any) -> str:
    if isinstance(value, (dict, list)) and len(value) > SLICE_MEMBERS:
        opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
        bodies = [_compact_members(part) for part in _slices(value)]
        return opening + ", ".join(bodies) + closing
    if _holds_containers(value):
        opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
        return opening + _compact_members(value) + closing
    return json.dumps(value, ensure_ascii=False)


def _compact_members(part: dict[Any, Any] | list[Any]) -> str:
    """The members of ``part`` as ``json.dumps`` writes them between its brackets."""
    if not _holds_containers(part):
        return json.dumps(part, ensure_ascii=False)[1:-1]
    if isinstance(part, dict):
        pairs = (f"{json.dumps(k, ensure_ascii=False)}: {_compact(v)}" for k, v in part.items())
        return ", ".join(pairs)
    return ", ".join(_compact(v) for v in part)


def _holds_containers(value: Any) -> bool:
    """A dict with string keys (json.dumps writes other keys as strings, which writing a
    key alone would not) or a list, some of whose members are dicts or lists."""
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return False
        return any(isinstance(v, (dict, list)) for v in value.values())
    return isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)


def _slices(value: dict[Any, Any] | list[Any]) -> list[dict[Any, Any] | list[Any]]:
    """``value`` cut into containers of :data:`SLICE_MEMBERS` members, in order."""
    members: list[Any] = list(value.items()) if isinstance(value, dict) else value
    cut = [members[i : i + SLICE_MEMBERS] for i in range(0, len(members), SLICE_MEMBERS)]
    if isinstance(value, dict):
        return [dict(part) for part in cut]
    return list(cut)
