"""Where BPE Studio keeps what it can recompute: one per-user cache folder.

What it does: :func:`user_cache_dir` names ``bpe-studio/<part>`` under the platform's user cache
directory (``%LOCALAPPDATA%`` on Windows, ``~/Library/Caches`` on macOS, ``$XDG_CACHE_HOME``
or ``~/.cache`` elsewhere), never a folder inside an installed package or a checkout. What it
leaves out: creating the folder, and what goes in it (``numba_cache``, ``formats.rank_cache``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def user_cache_dir(part: str) -> Path:
    """The folder for ``part`` (e.g. ``"numba"``) in BPE Studio's per-user cache."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "bpe-studio" / part
