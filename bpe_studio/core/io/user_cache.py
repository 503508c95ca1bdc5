"""Where BPE Studio keeps what it can recompute: one per-user cache folder.

What it does: :func:`user_cache_dir` names ``bpe-studio/<part>`` under the platform's user cache
directory as ``platformdirs`` finds it (``%LOCALAPPDATA%`` on Windows, ``~/Library/Caches`` on
macOS, ``$XDG_CACHE_HOME`` or ``~/.cache`` elsewhere), never a folder inside an installed package
or a checkout. What it leaves out: creating the folder, and what goes in it (``numba_cache``,
``formats.tiktoken.rank_cache``).
"""

from __future__ import annotations

from pathlib import Path

from platformdirs import user_cache_path

APP_FOLDER = "bpe-studio"


def user_cache_dir(part: str) -> Path:
    """The folder for ``part`` (e.g. ``"numba"``) in BPE Studio's per-user cache."""
    # No author folder and no "Cache" subfolder on Windows (platformdirs' opinion): the same
    # folder on every platform as the caches written before, so they are still found.
    return user_cache_path(APP_FOLDER, appauthor=False, opinion=False) / part
