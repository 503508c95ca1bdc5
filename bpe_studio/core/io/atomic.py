"""Writing a file atomically: into a temporary file beside it, then renamed into place.

What it does: :func:`atomic_open` gives a file object whose contents replace ``path`` only when
the ``with`` block ends without an error, so a crash or a full disk never leaves a half-written
tokenizer or id file under the final name; the new file gets the permissions a plain ``open``
would give it. What it leaves out: what is written (``gpt2``, ``encode_file``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing (``mode`` "w" or "wb"; ``kwargs``
    as for ``open``); on a clean exit it replaces ``path``, on an error it is removed."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files: mode must be 'w' or 'wb', not {mode!r}")
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):
            # subtle: mkstemp makes the file 0600; a file saved for others to read should get
            # the usual permissions, as open() would give it.
            os.fchmod(fd, 0o666 & ~_umask())
        f = os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        with f:
            yield f
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8 with ``\\n`` line ends, atomically."""
    with atomic_open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` atomically."""
    with atomic_open(path, "wb") as f:
        f.write(data)


def output_dir(directory: str | os.PathLike[str]) -> Path:
    """``directory`` as a Path, created if missing; an existing non-directory is an error
    naming it."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{os.fspath(directory)}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    return out
