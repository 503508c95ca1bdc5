"""Whether a local corpus file is what it seemed: a file whose size the system reports as 0
but which holds text (``/proc`` and ``/sys`` files), and a file that changed while it was read.

What it does: :func:`check_sized` refuses, naming the file, a regular file that reports 0
bytes yet has some: byte ranges planned from its size would read none of it, and the run
would end "successfully" on an empty corpus; :func:`check_regular` refuses a device or a
named pipe for the same reason. :func:`stamp` takes a file's size and
modification time before reading; :func:`check_unchanged` compares them after, as ``tar``
does ("file changed as we read it"): ids or merges of a file cut short, grown or rewritten
under the reader belong to no version of it (:func:`how_changed` words what became of it, for
other files read the same way: a tokenizer's). :func:`read_range` reads one planned byte range
and refuses a short one at once, so the message is this one rather than "invalid UTF-8" at
wherever the cut fell. :func:`link_loop` tells a loop of symbolic links, which
``Path.exists`` takes for a missing file, from one.
What it leaves out: files read through fsspec (a URL, a compressed file's stream: their
reader ends where the stream does).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO, NamedTuple

from .errors import CorpusError


class Stamp(NamedTuple):
    """A file's size, modification and change times (nanoseconds) and identity, taken before
    reading it. The change time and the identity catch what size and modification time miss:
    a file swapped for another by ``mv`` (the same size, its modification time copied), whose
    ranges, each reopened by name, gave ids of neither version."""

    size: int
    mtime_ns: int
    ctime_ns: int
    device: int
    inode: int


def stamp(path: str | os.PathLike[str]) -> Stamp:
    st = os.stat(path)
    return Stamp(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino)


def link_loop(path: str | os.PathLike[str]) -> str | None:
    """What to say of ``path`` when it is a loop of symbolic links (or leads through one),
    which ``Path.exists`` calls missing too ("not found" sent users looking for a file that
    was there); None otherwise."""
    try:
        os.stat(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return f"is a loop of symbolic links, which leads to no file ({e.strerror})"
    return None


def reports_empty_but_is_not(path: str | os.PathLike[str], name: str | None = None) -> bool:
    """Whether ``path`` is a regular file whose reported size is 0 but which holds bytes
    (``/proc/cpuinfo``): it must be read as a stream, to its end, not by its size. One that
    cannot be read raises :class:`CorpusError` naming it (``name``, else ``path``)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode) or st.st_size:
        return False
    try:
        with open(path, "rb") as f:
            return bool(f.read(1))
    except OSError as e:
        # subtle: said here, naming it: read by its reported size of 0, it would read
        # nothing, and "the file is empty" would follow (/proc/self/mem: EIO).
        raise CorpusError(f"{name or os.fspath(path)}: cannot read it: {e.strerror or e}") from None


def is_devnull(st: os.stat_result) -> bool:
    """Whether ``st`` is the status of ``/dev/null`` (or another name of it), which reads as
    the empty file it is."""
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and (st.st_rdev, st.st_mode) == (null.st_rdev, null.st_mode)


def check_regular(path: str | os.PathLike[str], name: str | None = None) -> None:
    """Raise :class:`CorpusError` naming a path that is no regular file (``/dev/null``, read
    as the empty file it is, aside): a corpus file is read by its size, in byte ranges, and
    a device or a named pipe has none (``/dev/zero`` read as empty; a pipe cannot seek)."""
    st = os.stat(path)
    if stat.S_ISREG(st.st_mode) or is_devnull(st):
        return
    mode, name = st.st_mode, name or os.fspath(path)
    if stat.S_ISFIFO(mode):
        raise CorpusError(
            f"{name}: is a named pipe, which is read once as it streams, and a corpus file is "
            "read by its size, in parts: write what it carries to a file and name that (the "
            "command line reads a pipe itself: `cmd | bpe-studio train - ...`)"
        )
    if stat.S_ISCHR(mode):
        raise CorpusError(
            f"{name}: is a character device, not a file: it has no size to read by "
            "(/dev/zero and /dev/urandom never end, and hold no text); name a text file"
        )
    raise CorpusError(
        f"{name}: is not a regular file (a block device or a socket); name a text file"
    )


def check_sized(path: str | os.PathLike[str], name: str | None = None) -> None:
    """Raise :class:`CorpusError` for a file that reports 0 bytes but holds some."""
    if reports_empty_but_is_not(path, name):
        raise CorpusError(
            f"{name or os.fspath(path)}: the system reports its size as 0 bytes but it holds "
            "text (a /proc or /sys file?): copy it to a regular file, or pipe it to the "
            "command line (`cat FILE | bpe-studio ... -`)"
        )


def how_changed(before: Stamp, now: Stamp | None) -> str:
    """What became of a file stamped ``before`` that is ``now`` (None: gone), in words."""
    if now is None:
        return "it was removed"
    if (now.device, now.inode) != (before.device, before.inode):
        return "another file took its name"
    if now.size != before.size:
        return f"{before.size:,} bytes when reading began, {now.size:,} now"
    return "it was written to"


def changed_error(name: str, before: Stamp, now: Stamp | None) -> CorpusError:
    how = how_changed(before, now)
    return CorpusError(
        f"{name}: changed while it was being read ({how}); nothing was made from it: run "
        "again once it is written whole"
    )


def check_unchanged(path: str | os.PathLike[str], before: Stamp, name: str | None = None) -> None:
    """Raise :class:`CorpusError` if ``path``'s size or modification time is no longer
    ``before``'s."""
    try:
        now: Stamp | None = stamp(path)
    except FileNotFoundError:
        now = None
    if now != before:
        raise changed_error(name or os.fspath(path), before, now)


def read_range(f: BinaryIO, start: int, end: int, name: str, *, extra: int = 0) -> bytes:
    """Bytes ``start:end`` of the open file ``f`` (and up to ``extra`` more, where the file
    has them); :class:`CorpusError` naming ``name`` if the file ends before ``end``: it was
    cut short since its size was read."""
    f.seek(start)
    data = f.read(end - start + extra)
    if len(data) < end - start:
        raise CorpusError(
            f"{name}: changed while it was being read (cut to {os.fstat(f.fileno()).st_size:,} "
            "bytes); nothing was made from it: run again once it is written whole"
        )
    return data
