"""A per-user cache, on disk, of what reading a tiktoken rank file derives: its tokens and
ranks, and the merges and their ids, so that loading the same file again skips parsing it and
deriving its merges.

What it does: :func:`load` and :func:`store` keep one file per rank file, named by the sha256
of the rank file's bytes (so a changed file is a different entry), the Python version (the
entry is ``marshal`` data) and this format's version. The folder is ``$BPE_STUDIO_CACHE_DIR``
if set (an empty value turns the cache off), else ``bpe-studio/tiktoken`` in the user's cache
directory (``user_cache``). Entries are written atomically and only after a rank file was read
and checked whole, sealed with a digest (``io.sealed``); an entry that cannot be read or fails
its digest is ignored (and written afresh). What it
leaves out: reading rank files (``tiktoken``); removing old entries.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path

from ...io.atomic import atomic_write_bytes, remove_stale_temps
from ...io.sealed import seal, unseal
from ...io.user_cache import user_cache_dir

CACHE_ENV = "BPE_STUDIO_CACHE_DIR"
_VERSION = 2  # 2: sealed (``io.sealed``): an entry with a byte changed was read as the ranks

# tokens in rank order, their ranks (None: 0, 1, 2, ...), merges, merge ids (or None).
Entry = tuple[
    list[bytes],
    list[int] | None,
    list[tuple[bytes, bytes]],
    tuple[list[int], list[int], list[int]] | None,
]


def cache_dir() -> Path | None:
    """The cache's folder, or None when ``$BPE_STUDIO_CACHE_DIR`` is set empty (or there is
    no user cache folder: ``user_cache``)."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return Path(chosen) if chosen else None
    return user_cache_dir("tiktoken")


def _entry_path(sha256: str) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-v{_VERSION}"
    return folder / f"{sha256}-{tag}.marshal"


def load(sha256: str) -> Entry | None:
    """The entry for the rank file whose bytes hash to ``sha256``, if one can be read."""
    path = _entry_path(sha256)
    if path is None:
        return None
    try:
        payload = unseal(path.read_bytes(), path.name)
        if payload is None:
            return None  # cut short, zeroed or edited: a miss, written afresh
        entry = marshal.loads(payload)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not (isinstance(entry, tuple) and len(entry) == 4 and isinstance(entry[0], list)):
        return None
    return entry


def store(sha256: str, entry: Entry) -> None:
    """Keep ``entry`` for the rank file whose bytes hash to ``sha256``; a cache that cannot
    be written is left alone (loading then simply does not get faster)."""
    path = _entry_path(sha256)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, seal(marshal.dumps(entry), path.name))
        remove_stale_temps(path.parent)
    except OSError:
        pass
