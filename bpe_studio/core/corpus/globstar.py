"""A local glob matched as bash's ``globstar`` matches it: ``**`` walks folders without
following symbolic links to folders.

What it does: :func:`local_glob` gives what a local glob matches. A pattern without a ``**``
segment is :func:`glob.glob`'s; with one, each ``**`` is any number of folders below
(none too), a link to a folder among them matched as a folder but never walked into, as
bash (4.3 and later) does: :func:`glob.glob` follows such links, so a link to a folder
above (``s/a/up -> ..``) made it walk without end, and two of them doubled its matches at
every level. The other segments are :func:`glob.glob`'s own, so no wildcard matches a name
that begins with a dot unless the pattern writes the dot, there and in ``**``'s walk alike.
Matches are spelt as :func:`glob.glob` spells them, each once, in the order found.
What it leaves out: globs through fsspec (``sources.shell_matches``), sorting.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator

_STAR = "**"


def local_glob(pattern: str) -> list[str]:
    """What a local glob matches, as the shell's: ``**`` any number of folders (none too),
    a link to a folder matched but not walked into, and no wildcard a name that begins
    with a dot unless the pattern writes the dot (``.*.txt``)."""
    parts = pattern.split("/")
    if _STAR not in parts:
        return glob.glob(pattern)
    at = parts.index(_STAR)
    if at == 0:
        bases = [""]
    else:
        # The folders before the first ``**``, spelt with a trailing slash as glob spells
        # them; a link among them is followed: it is the glob's top, not below it.
        top = "/".join(parts[:at]) + "/"
        bases = glob.glob(top) if glob.has_magic(top) else [top] if os.path.isdir(top) else []
    found = dict.fromkeys(m for base in bases for m in _below(base, parts[at:]))
    return list(found)


def _below(base: str, parts: list[str]) -> Iterator[str]:
    """The matches of ``parts`` (which begin with ``**``) under the folder ``base``."""
    rest = parts[1:]
    while rest and rest[0] == _STAR:
        rest = rest[1:]  # ``**/**`` matches what ``**`` does
    if not rest:
        for sub in _walk(base, folders_only=False):
            yield os.path.join(base, sub)
        return
    more = rest.index(_STAR) if _STAR in rest else len(rest)
    chunk, after = "/".join(rest[:more]), rest[more:]
    for sub in _walk(base, folders_only=True):
        head = glob.escape(os.path.join(base, sub))
        if not after:
            yield from glob.glob(os.path.join(head, chunk))
            continue
        # The segments between two ``**`` name folders to walk on from.
        for folder in glob.glob(os.path.join(head, chunk, "")):
            yield from _below(folder, after)


def _walk(base: str, *, folders_only: bool) -> Iterator[str]:
    """``""`` and the names below ``base`` (relative to it) that ``**`` matches: every
    folder whose name begins with no dot, and with ``folders_only`` False every such file;
    a link to a folder is one of them but is not walked into."""
    yield ""
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            with os.scandir(os.path.join(base, rel) or os.curdir) as entries:
                listed = [(e.name, e.is_dir(), e.is_dir(follow_symlinks=False)) for e in entries]
        except OSError:
            continue  # an unreadable folder matches nothing, as in glob.glob
        below = []
        for name, is_folder, is_real_folder in sorted(listed):
            if name.startswith("."):
                continue
            path = os.path.join(rel, name)
            if is_folder or not folders_only:
                yield path
            if is_real_folder:
                below.append(path)
        pending.extend(reversed(below))
