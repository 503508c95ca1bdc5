"""Which version of a tokenizer file the app reads: a file changed on disk is another tokenizer.

What it does: :func:`file_version` says which version of a tokenizer file (or GPT-2 folder)
is on disk now: its size and modification time (a folder's: those of the files in it), and
how many times the user asked to load it again (:func:`read_again`: an explicit "Load
tokenizer file…" reads the file anew even where its size and time say nothing changed).
Whatever keeps a tokenizer, or something worked out from one, by its file (the pickers'
caches, the Vocabulary lab's results and its process's tokenizers) keeps it by the file and
this version, so a file retrained into the same folder is read again, never shown as the
old one under its name. Plain Python, safe to call from several threads.
What it leaves out: reading the files (``core.formats``), what the keys mean (``picker``).
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from ...core.formats.files import TIKTOKEN_SUFFIXES, tokenizers_in
from ...core.formats.tiktoken.sidecar import sidecar_beside

Version = tuple[int, tuple[tuple[str, int, int], ...]]

_lock = threading.Lock()
_asked: dict[str, int] = {}  # a file's path -> how many times it was loaded again


def _read_in(folder: Path) -> list[Path]:
    """The files loading ``folder`` reads (``formats.files.tokenizers_in``: each tokenizer's
    file, a GPT-2 vocabulary's merges, a rank file's sidecar, and the special tokens'
    ``tokenizer_config.json``): a notes file or an exported chart saved beside them is no
    change to the tokenizer."""
    read = []
    for file in tokenizers_in(folder):
        read.append(file)
        if file.name.endswith("vocab.json"):
            read.append(file.with_name(file.name[: -len("vocab.json")] + "merges.txt"))
        elif file.name.lower().endswith(TIKTOKEN_SUFFIXES):
            read += [s for s in [sidecar_beside(file)] if s is not None]
    return [*read, folder / "tokenizer_config.json"]


def _stamps(path: Path) -> tuple[tuple[str, int, int], ...]:
    """The size and modification time of ``path``, or of each file loading a folder reads;
    empty when it cannot be read (its load says why)."""
    try:
        st = path.stat()
        if not stat.S_ISDIR(st.st_mode):
            return (("", st.st_mtime_ns, st.st_size),)
        files = _read_in(path)
    except OSError:
        return ()
    found = []
    for file in files:
        try:
            s = file.stat()
        except OSError:
            continue
        found.append((file.name, s.st_mtime_ns, s.st_size))
    return tuple(sorted(found))


def file_version(path: str | os.PathLike[str]) -> Version:
    """The version of the tokenizer file (or folder) ``path`` on disk now (see the module
    docstring); equal versions mean nothing was written to it, nor asked to be read again."""
    with _lock:
        asked = _asked.get(os.fspath(path), 0)
    return asked, _stamps(Path(path))


def read_again(path: str | os.PathLike[str]) -> None:
    """The user loaded ``path`` again: from now on it is another version, read anew."""
    key = os.fspath(path)
    with _lock:
        _asked[key] = _asked.get(key, 0) + 1
