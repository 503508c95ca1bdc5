"""Writing a file whole or not at all: a temporary file beside the target, then a rename.

What it leaves out: choosing the temporary file's name and permissions, which
``gpt2_format.atomic_replace_target`` does for every writer in the project.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..gpt2_format import atomic_replace_target


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``; on any failure the old file (if any) is untouched."""
    fd, tmp = atomic_replace_target(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def output_dir(directory: str | os.PathLike) -> Path:
    """``directory`` as a Path, created if missing; an existing non-directory is an error
    naming it."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{os.fspath(directory)}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    return out
