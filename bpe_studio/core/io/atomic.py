"""Writing a file atomically: into a temporary file beside it, then renamed into place.

What it does: :func:`atomic_open` gives a file object whose contents replace ``path`` only when
the ``with`` block ends without an error (nor an interrupt a finalizer dropped meanwhile:
``interrupts.raise_dropped``), so a crash or a full disk never leaves a half-written tokenizer
or id file under the final name; the new file gets the permissions a plain ``open`` would give
it (a file it replaces keeps its own). A symbolic link at ``path`` is written through, as the
shell's ``>`` writes: the file it names is replaced and the link stays. :func:`atomic_write_all`
writes files that belong together (a vocabulary and its merges): all of them, or, when one
cannot be written (a full disk, a folder in its place), none: the old files stay, or are put
back. A write the system refuses raises an OSError naming the file (its ``filename``), which a
full disk's alone does not. Within :func:`new_files_only`, the files written at the paths it
names go into place only where no file is (:func:`place`): a file that appeared there since the
caller checked (another run writing the same new output) fails the write and stays.
:func:`output_folder` and :func:`folder_for` make the folders a write needs and remove them
again when it fails. What it leaves out: what is written (``gpt2``, ``encode_file``).
"""

from __future__ import annotations

import errno
import glob
import os
import secrets
import shutil
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any

from .interrupts import raise_dropped


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# The longest file name most file systems take (ext4, XFS, APFS, NTFS: 255 bytes).
_NAME_MAX = 255
# What mkstemp adds to the prefix: eight random characters and ".tmp".
_TEMP_EXTRA = len("12345678.tmp")


def write_target(path: str | os.PathLike[str]) -> Path:
    """Where ``path``'s new contents go: the file a symbolic link names (the link stays),
    else ``path``. A link loop stays as it is: writing there fails, naming it."""
    target = Path(path)
    if not target.is_symlink():
        return target
    try:
        return Path(os.path.realpath(target, strict=True))
    except FileNotFoundError:
        return Path(os.path.realpath(target))  # a dangling link: the file it names is made
    except OSError as e:
        # subtle: realpath without strict gives a loop back as the link itself, which the
        # rename would then replace with a file.
        raise OSError(e.errno, e.strerror, os.fspath(path)) from None


def temp_prefix(name: str) -> str:
    """``.NAME.``, cut so that the temporary file's name fits where ``name`` fits."""
    encoded = os.fsencode(name)
    room = _NAME_MAX - _TEMP_EXTRA - 2
    if len(encoded) > room:
        name = os.fsdecode(encoded[:room])
    return f".{name}."


STALE_SECONDS = 3600  # a temporary file this old was left by a writer that died


def remove_stale_temps(folder: Path, pattern: str = ".*.tmp", *, by_link: bool = False) -> None:
    """Remove from ``folder`` the temporary files and folders (``pattern``) a writer killed
    mid-write left, once old enough that no live writer still fills them (a cache audit:
    each ``kill -9`` during a rank-cache write left up to 9 MB for good). Their age is since
    they were last written, or with ``by_link`` since they were last linked or unlinked
    (``st_ctime``: a kept old file has the old file's modification time). Never raises."""
    cutoff = time.time() - STALE_SECONDS
    try:
        for path in folder.glob(pattern):
            try:
                st = path.lstat()
                if path.is_symlink() or (st.st_ctime if by_link else st.st_mtime) >= cutoff:
                    continue
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                elif path.is_file():
                    path.unlink()
            except OSError:
                continue
    except OSError:
        pass


def remove_stale_beside(target: str | os.PathLike[str], suffix: str = ".tmp") -> None:
    """:func:`remove_stale_temps` for the temporary files (or, with another ``suffix``,
    folders) that writers of ``target`` name ``.NAME.*SUFFIX`` beside it: a writer killed
    with ``kill -9`` (the OOM killer) leaves them hidden in the user's own folder, where
    a corpus's ids take several times its size."""
    path = Path(target)
    remove_stale_temps(path.parent, glob.escape(temp_prefix(path.name)) + "*" + suffix)


def _replaced_mode(target: Path) -> int:
    """The read, write and execute bits of the regular file at ``target`` (not set-id
    bits), else those ``open`` gives a new file under the umask."""
    try:
        st = os.stat(target)
    except OSError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode):
        return stat.S_IMODE(st.st_mode) & 0o777
    return 0o666 & ~_umask()


def _temp_file(target: Path) -> tuple[int, str]:
    """A new temporary file beside ``target``, with the permissions ``open`` would give it;
    those a killed writer of ``target`` left there long ago are removed first."""
    remove_stale_beside(target)
    try:
        fd, tmp = tempfile.mkstemp(
            dir=target.parent, prefix=temp_prefix(target.name), suffix=".tmp"
        )
    except OSError as e:
        # subtle: mkstemp's error names the hidden temporary file it could not make, a name
        # the user never gave: a folder that refuses new files is said of the file written.
        e.filename = os.fspath(target)
        raise
    if hasattr(os, "fchmod"):
        try:
            # subtle: mkstemp makes the file 0600; the new file gets what open() would give
            # it: a file it replaces keeps its own permissions (a private 0600 one stays
            # private), a new one gets the usual ones.
            os.fchmod(fd, _replaced_mode(target))
        except BaseException:
            os.close(fd)
            Path(tmp).unlink(missing_ok=True)
            raise
    return fd, tmp


# The paths (resolved) whose writes in this context may not replace a file: new_files_only.
_NEW_ONLY: ContextVar[frozenset[str]] = ContextVar("_NEW_ONLY", default=frozenset())


class AppearedMeanwhile(FileExistsError):
    """A file written within :func:`new_files_only` found a file at its path, put there since
    the caller checked that none was (by another run writing the same new output); that file
    is left as it is. ``filename`` names the path."""


@contextmanager
def new_files_only(paths: Iterable[str | os.PathLike[str]]) -> Iterator[None]:
    """Within the block, a file written here at one of ``paths`` goes into place only where
    no file is, else :class:`AppearedMeanwhile`: a caller that checked that ``paths`` were
    free (a command without ``--force``) is not then silently replacing what another run
    wrote since. Outside it, a write replaces what is there."""
    token = _NEW_ONLY.set(_NEW_ONLY.get() | {_named_at(p) for p in paths})
    try:
        yield
    finally:
        _NEW_ONLY.reset(token)


def _named_at(path: str | os.PathLike[str]) -> str:
    """``path`` with its folders resolved but not its own name: a link put at that name
    since (by another run) is not followed to the file it names."""
    absolute = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))


def place(
    tmp: str | os.PathLike[str],
    target: str | os.PathLike[str],
    given: str | os.PathLike[str] | None = None,
) -> None:
    """Rename the whole file ``tmp`` to ``target`` (one file system; ``write_target`` of the
    path the caller ``given``, by default ``target`` itself): over the file there, or, for a
    path of :func:`new_files_only`, at that path only where nothing is; else
    :class:`AppearedMeanwhile`, and ``tmp`` stays for the caller to remove."""
    at = _named_at(target if given is None else given)
    if at not in _NEW_ONLY.get():
        os.replace(tmp, target)
        return
    # subtle: placed at the name itself, not where ``target`` resolved to: a symbolic link
    # put there meanwhile would otherwise be written through, replacing the file it names.
    try:
        # subtle: a rename replaces whatever is there; a hard link fails if anything is, so
        # the test and the placing are one step that no other run can come between.
        os.link(tmp, at)
    except FileExistsError:
        raise _appeared(at) from None
    except OSError:
        # A file system without hard links (FAT, some network shares): the name is claimed
        # by creating it exclusively, which fails just as the link would, then renamed over.
        _claim_and_replace(tmp, at)
        return
    os.unlink(tmp)


def _appeared(target: str | os.PathLike[str]) -> AppearedMeanwhile:
    return AppearedMeanwhile(errno.EEXIST, "a file was put there meanwhile", os.fspath(target))


def _claim_and_replace(tmp: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    try:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        raise _appeared(target) from None
    try:
        os.replace(tmp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(target)  # the empty file that claimed the name: ours
        raise


@contextmanager
def _named(path: str | os.PathLike[str]) -> Iterator[None]:
    """An OSError that names no file (a write refused by a full disk: ``filename`` None)
    names ``path`` on its way out, so that a caller several writes deep can say which file
    was not written."""
    try:
        yield
    except OSError as e:
        if e.filename is None:
            e.filename = os.fspath(path)
        raise


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing (``mode`` "w" or "wb"; ``kwargs``
    as for ``open``); on a clean exit it replaces ``path``, on an error it is removed."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files: mode must be 'w' or 'wb', not {mode!r}")
    target = write_target(path)
    fd, tmp = _temp_file(target)
    try:
        f = os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        with _named(path), f:
            yield f
        raise_dropped()  # told to stop while it was written: not put in place
        place(tmp, target, path)
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


def atomic_write_all(files: Sequence[tuple[str | os.PathLike[str], bytes]]) -> None:
    """Write each ``(path, data)``, all or none: a folder at any path is refused (an
    IsADirectoryError naming it) before anything is written; every file is written whole to
    its temporary file, and only then are they renamed into place, in the order given. A
    rename that still fails puts back the files renamed before it, so every path is as it
    was, never one new file beside an old or missing partner.

    Within :func:`new_files_only`, two writers of the same new files place them in the same
    order, so the first file decides: the writer that placed it places the rest; the other
    fails on it (:class:`AppearedMeanwhile`), having placed none. Replacing writers (outside
    it) are not ordered so: two at once may leave one's first file beside the other's second."""
    targets = [write_target(path) for path, _ in files]
    for (path, _), target in zip(files, targets):
        if target.is_dir():
            raise IsADirectoryError(
                errno.EISDIR,
                "Is a directory, where a file is to be written: move it away, or write elsewhere",
                os.fspath(path),
            )
    temps: list[str] = []
    kept: list[Path | None] = []
    try:
        for (path, data), target in zip(files, targets):
            fd, tmp = _temp_file(target)
            temps.append(tmp)
            with _named(path), os.fdopen(fd, "wb") as f:
                f.write(data)
        raise_dropped()  # told to stop while they were written: none put in place
        kept.extend(_keep(target) for target in targets)
        for tmp, target, (path, _) in zip(temps, targets, files):
            place(tmp, target, path)
    except BaseException:
        _put_back(temps, targets, kept)
        raise
    finally:
        for old in kept:
            if old is not None:
                with suppress(OSError):
                    old.unlink(missing_ok=True)


def _keep(target: Path) -> Path | None:
    """A second name beside ``target`` for the file there now (None when there is none), to
    put it back should a later rename fail. A hard link, so that ``target`` stays in place
    meanwhile, untouched; a copy where the file system has no hard links."""
    if not target.exists():
        return None
    prefix = temp_prefix(target.name)
    # Those a writer killed mid-write left, judged by when they were linked (making one,
    # and renaming over its target, set it), not by the old file's age.
    remove_stale_temps(target.parent, glob.escape(prefix) + "*" + _KEPT, by_link=True)
    while True:
        old = target.with_name(f"{prefix}{secrets.token_hex(4)}{_KEPT}")
        try:
            os.link(target, old)
            return old
        except FileExistsError:
            continue
        except OSError:
            break
    fd, copy = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=_KEPT)
    os.close(fd)
    try:
        shutil.copy2(target, copy)
    except BaseException:
        Path(copy).unlink(missing_ok=True)
        raise
    return Path(copy)


# A kept old file's suffix: not ".tmp", whose sweep judges a file by its modification time,
# which a kept file has from the old file (a hard link shares it; copy2 copies it).
_KEPT = ".kept"


def _put_back(temps: list[str], targets: list[Path], kept: list[Path | None]) -> None:
    """Undo a failed :func:`atomic_write_all`: a temporary file still there was not renamed
    and is removed; a target already renamed over gets its kept file back, or is removed if
    no file was there before. Best effort: the error that failed the write is the one that
    counts."""
    renaming = len(kept) == len(temps)  # the renames begin only once every file is kept
    for tmp, target, old in zip(temps, targets, kept if renaming else [None] * len(temps)):
        with suppress(OSError):
            if os.path.lexists(tmp):
                os.unlink(tmp)
            elif renaming and old is not None:
                os.replace(old, target)
            elif renaming:
                target.unlink(missing_ok=True)


@contextmanager
def output_folder(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """``directory`` as a Path, created (with its missing parents) for the block; an existing
    non-directory is an error naming it. If the block fails, the folders it created are
    removed again (:func:`folder_for`)."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{os.fspath(directory)}: exists and is not a directory")
    with _made(out):
        yield out


@contextmanager
def folder_for(path: str | os.PathLike[str]) -> Iterator[None]:
    """Create ``path``'s folder (and its missing parents) for the block; if the block fails,
    remove those it created that are still empty, so a failed write leaves no trace."""
    with _made(Path(path).parent):
        yield


@contextmanager
def _made(folder: Path) -> Iterator[None]:
    """``folder`` and its missing parents made for the block, and removed if it fails."""
    created = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        for made in created:  # deepest first
            try:
                made.rmdir()
            except OSError:
                break  # not empty (or not ours to remove): its parents are not empty either
        raise
