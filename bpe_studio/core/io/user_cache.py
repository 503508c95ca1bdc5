"""Where BPE Studio keeps what it can recompute: one per-user cache folder.

What it does: :func:`user_cache_dir` names ``bpe-studio/<part>`` under the platform's user cache
directory as ``platformdirs`` finds it (``%LOCALAPPDATA%`` on Windows, ``~/Library/Caches`` on
macOS, ``$XDG_CACHE_HOME`` or ``~/.cache`` elsewhere), never a folder inside an installed package
or a checkout. Where there is no home to find (``HOME`` unset and no password entry, as in
``docker run --user N``) and where that folder cannot be written (``numba_cache``), the
fallback is :func:`private_temp_dir`: this user's folder in the temporary folder, used only
if no one else can have written in it. What it leaves out: what goes in it (``numba_cache``,
``formats.tiktoken.rank_cache``, ``pretokenization.scan_tables``).
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from pathlib import Path

from platformdirs import user_cache_path

APP_FOLDER = "bpe-studio"

log = logging.getLogger(__name__)
_refused: set[Path] = set()  # said once per process


def user_cache_dir(part: str) -> Path | None:
    """The folder for ``part`` (e.g. ``"numba"``) in BPE Studio's per-user cache; None when
    there is no home folder and no private temporary one either."""
    try:
        # No author folder and no "Cache" subfolder on Windows (platformdirs' opinion): the
        # same folder on every platform as the caches written before, so they are still found.
        base = user_cache_path(APP_FOLDER, appauthor=False, opinion=False)
    except (RuntimeError, KeyError):  # "could not determine the home directory"
        fallback = private_temp_dir()
        return None if fallback is None else fallback / part
    return base / part


def private_temp_dir() -> Path | None:
    """``bpe-studio-<uid>`` in the temporary folder, made (mode 0o700) if missing; None, said
    once in the log, when it is not this user's own folder or others can write in it.

    subtle: its path is predictable, so another user can make it first; numba's cache index
    files are pickles, which run code when read. A folder this user does not own, a link, or
    one group or others can write in is never used."""
    user = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    folder = Path(tempfile.gettempdir()) / f"{APP_FOLDER}-{user}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    problem = _not_private(folder)
    if problem is None:
        return folder
    if folder not in _refused:
        _refused.add(folder)
        log.warning("not using %s as a cache: %s", folder, problem)
    return None


def _not_private(folder: Path) -> str | None:
    """Why ``folder`` may hold what another user wrote; None when it cannot."""
    if not hasattr(os, "getuid"):
        return None  # Windows: the temporary folder is in the user's own profile
    try:
        st = os.lstat(folder)
    except OSError as e:
        return f"cannot read it ({e.strerror or e})"
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        return "it is not a folder (a link or a file)"
    if st.st_uid != os.getuid():
        return f"it belongs to another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"others can write in it (mode {stat.S_IMODE(st.st_mode):o})"
    return None
