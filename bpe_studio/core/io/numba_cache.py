"""Where numba caches compiled kernels (the merge engine's, the scanners'): a per-user cache
directory, never the source tree.

What it does: :func:`cache_in_user_dir` turns on numba's on-disk cache for the given jitted
functions, pointed at ``$NUMBA_CACHE_DIR`` if the user set one, else at ``bpe-studio/numba`` in
the user's cache directory (``user_cache``). Numba's default would
write next to the module, inside an installed package or a checkout. It leaves numba's global
configuration as it found it, so other users of numba in the process are unaffected. A folder
that cannot be written (read-only, ``HOME`` unset) is replaced by one in the temporary folder,
said once in the log: numba refuses a cache it cannot write, and its next choice was the
source tree, or an import error that read as "numba is missing". :func:`forget_cached`
removes the functions' entries, for a cache file numba cannot read (numba/numba#10434).
Also :func:`is_cached`: whether numba holds a fresh cache entry for each function, so a caller
can say "compiling" before a multi-second first compile rather than after,
:func:`compile_in_child`, which compiles in a child process (one process at a time:
``compile_lock``), and :func:`prune`, which after a compile removes earlier versions' entries
and the folders of copies no longer installed.
What it leaves out: compiling (numba does that on first call) and cache invalidation (numba
keys the cache on the source file's timestamp and the machine).
"""

from __future__ import annotations

import glob
import inspect
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from numba.core import config as _config
from numba.core.dispatcher import Dispatcher

from .atomic import remove_stale_temps
from .compile_lock import compile_lock, note
from .user_cache import private_temp_dir, user_cache_dir

# numba's config module sets its attributes at run time, out of a type checker's sight.
config: Any = _config


log = logging.getLogger(__name__)
# The longest a compile in a child may take; a process waiting on another's compile waits as
# long, then compiles beside a holder alive but stuck.
CHILD_TIMEOUT = 600.0
_usable: list[Path | None] = []  # the folder chosen, once per process


def kernel_cache_dir() -> Path | None:
    if config.CACHE_DIR:
        return Path(config.CACHE_DIR)
    return user_cache_dir("numba")


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def usable_cache_dir() -> Path | None:
    """The folder numba caches in: :func:`kernel_cache_dir`, else this user's private one in
    the temporary folder (``user_cache.private_temp_dir``), else None (no cache: each process
    compiles)."""
    if not _usable:
        wanted = kernel_cache_dir()
        chosen = wanted if wanted is not None and _writable(wanted) else None
        if chosen is None:  # only then: the private folder is made, and refusing it said
            private = private_temp_dir()
            fallback = None if private is None else private / "numba"
            chosen = fallback if fallback is not None and _writable(fallback) else None
        if chosen != wanted:
            where = "the user's cache folder (no home folder)" if wanted is None else wanted
            instead = f"caching them in {chosen}" if chosen else "compiling them in each process"
            log.warning(
                "cannot write numba's cache of the compiled kernels in %s; %s (set "
                "NUMBA_CACHE_DIR to a folder you can write)", where, instead,
            )  # fmt: skip
        _usable.append(chosen)
    return _usable[0]


def cache_in_user_dir(*functions: Dispatcher) -> None:
    if config.DISABLE_JIT:
        # The kernels would run as plain Python, far slower than the Python paths they stand
        # in for; their group is then unavailable, naming why (not "numba is missing").
        raise ImportError("NUMBA_DISABLE_JIT is set, so numba compiles nothing (unset it)")
    folder = usable_cache_dir()
    if folder is None:
        return
    astray = _enable_caching(functions, folder)
    if astray:
        # numba could not write the kernels' own folder inside ours (another user's, made
        # read-only) and fell back to the next place it knows: the source tree, or another
        # user-wide folder (a cache audit). This user's private folder instead, else none.
        private = private_temp_dir()
        fallback = None if private is None else private / "numba"
        if fallback is not None and _writable(fallback):
            astray = _enable_caching(astray, fallback)
        log.warning(
            "cannot write numba's cache of %s in %s; %s",
            ", ".join(getattr(fn, "__name__", "?") for fn in functions),
            folder,
            "compiling them in each process" if astray else f"caching them in {fallback}",
        )
        if astray:
            uncache(*astray)
    # subtle: marked now, not only by the prune after a compile: a process that compiles and
    # ends before its prune (a loader's child, a window closed mid-compile, the tests' own
    # compile) left a folder no later prune could tell was stale.
    for folder, source in _sources(functions).items():
        _mark(folder, source)


_uncached: list[str] = []  # the kernels compiled in memory only, this process


def uncache(*functions: Any) -> None:
    """Compile ``functions`` in memory from now on, nothing written (numba's cache cannot be
    written: a full disk); :func:`caches_nothing` says so after."""
    from numba.core.caching import NullCache

    for fn in functions:
        fn._cache = NullCache()
        _uncached.append(getattr(fn, "__name__", "?"))


def caches_nothing() -> bool:
    """Whether this process's kernels are not kept for the next run: no folder to cache in,
    or one that could not be written."""
    return usable_cache_dir() is None or bool(_uncached)


def _enable_caching(functions: Sequence[Any], folder: Path) -> list[Any]:
    """Turn numba's on-disk cache on for ``functions`` in ``folder``; those numba placed
    elsewhere (it could not write their folder inside it)."""
    # subtle: numba picks a function's cache location when caching is enabled, reading
    # config.CACHE_DIR then; setting it only around that call keeps the global untouched.
    saved = config.CACHE_DIR
    config.CACHE_DIR = str(folder)
    try:
        for fn in functions:
            fn.enable_caching()
    finally:
        config.CACHE_DIR = saved
    try:
        inside = folder.resolve()
        return [
            fn for fn in functions if inside not in Path(fn._cache._cache_path).resolve().parents
        ]
    except (AttributeError, OSError):
        return []  # numba's private names changed: trust its choice


def forget_cached(*functions: Any) -> None:
    """Remove the cache entries (index and data files) of each function, so that the next
    call compiles it afresh. (``functions`` are numba dispatchers; their cache's names are
    private attributes, so a change in them leaves the files, and the caller's error, as
    they were.)"""
    for fn in functions:
        try:
            folder = Path(fn._cache._cache_path)
            stem = fn._cache._cache_file._index_name.removesuffix(".nbi")
        except AttributeError:
            continue
        for path in folder.glob(f"{glob.escape(stem)}.*"):
            # A folder where numba's file should be (a cache audit) is removed too: left, it
            # failed every load and every compile's save, on every run.
            try:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
            except OSError as exc:
                log.debug("removing numba's cache entry %s: %s", path, exc)


# In each of our folders in numba's cache: the source folder whose kernels it holds, so that a
# later compile elsewhere can tell that folder is gone (numba names the folder by a hash of it).
SOURCE_MARK = ".bpe-studio-source"


def prune(*functions: Any) -> None:
    """After a compile, remove what no installed copy of these kernels will read again: in
    each function's cache folder, the entries of earlier versions of the same modules (numba
    names an entry by the function's line, so almost every upgrade leaves the last one's
    behind); and beside it, the folders of copies whose source folder is gone (a deleted
    virtual environment or checkout: numba keeps one folder per source folder for ever).
    Marks each function's folder with its source folder for later prunes. Never raises: a
    cache left as it was is only bigger. (``functions`` are numba dispatchers; their cache's
    names are private attributes, so a change in them leaves everything as it was.)"""
    try:
        current: dict[Path, set[str]] = {}
        for fn in functions:
            folder = Path(fn._cache._cache_path)
            current.setdefault(folder, set()).add(fn._cache._cache_file._index_name)
    except (AttributeError, TypeError):
        return
    sources = _sources(functions)
    for folder, indexes in current.items():
        try:
            prune_entries(folder, indexes)
            _mark(folder, sources.get(folder, ""))
            prune_folders(folder.parent)
        except OSError as exc:
            log.debug("pruning numba's cache in %s: %s", folder, exc)


def _sources(functions: Sequence[Any]) -> dict[Path, str]:
    """Each function's cache folder, and the source folder whose kernels it holds (none
    where numba's private names changed)."""
    sources: dict[Path, str] = {}
    for fn in functions:
        try:
            folder = Path(fn._cache._cache_path)  # (none for one compiled in memory only)
            sources[folder] = os.path.dirname(os.path.abspath(inspect.getfile(fn.py_func)))
        except (AttributeError, TypeError):
            continue
    return sources


def _mark(folder: Path, source: str) -> None:
    """Write :data:`SOURCE_MARK` into ``folder`` unless it says ``source`` already; a folder
    that cannot be written is left as it is."""
    if not source:
        return
    mark = folder / SOURCE_MARK
    try:
        if _read_mark(mark) == source:
            return
    except OSError:
        pass
    try:
        folder.mkdir(parents=True, exist_ok=True)
        mark.write_bytes(source.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        log.debug("marking numba's cache folder %s: %s", folder, exc)


def _read_mark(mark: Path) -> str:
    """A folder's :data:`SOURCE_MARK`: the source folder it names, or "" where it names none
    readable (a mark a crash or a bad disk garbled; a source folder whose name is not
    UTF-8): such a mark is rewritten, never a reason to prune. Raises OSError as reading
    does (a missing mark)."""
    try:
        source = mark.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return "" if "\0" in source else source


def prune_entries(folder: Path, indexes: set[str]) -> None:
    """Remove from ``folder`` the entries (index and data files) of the modules that
    ``indexes`` (index file names, ``module.function-line.py311.nbi``) belong to, for the same
    Python, that are not among ``indexes``. Other modules' and other Pythons' entries stay."""
    kept = {(name.split(".")[0], name.rsplit(".", 2)[-2]) for name in indexes}
    for index in folder.glob("*.nbi"):
        name = index.name
        if name in indexes or (name.split(".")[0], name.rsplit(".", 2)[-2]) not in kept:
            continue
        stem = name.removesuffix(".nbi")
        for path in [index, *folder.glob(f"{glob.escape(stem)}.*.nbc")]:
            path.unlink(missing_ok=True)
    remove_stale_temps(folder, "*.tmp*")  # numba's own, left by a process killed mid-save


def prune_folders(root: Path) -> None:
    """Remove the folders in ``root`` that :func:`prune` marked with a source folder that no
    longer exists. Folders without the mark (another program's, in a shared
    ``NUMBA_CACHE_DIR``) are never touched."""
    for folder in root.iterdir():
        try:
            source = _read_mark(folder / SOURCE_MARK)
        except OSError:
            continue
        if source and not os.path.isdir(source):
            shutil.rmtree(folder, ignore_errors=True)


def is_cached(*functions: Any) -> bool:
    """Whether every function has a cache index that is fresh for its current source (numba
    then loads rather than compiles it). False when unsure: it only decides a message.
    (``functions`` are numba dispatchers, typed Any: their cache is a private attribute.)"""
    try:
        for fn in functions:
            # subtle: numba's own reading of the index, which returns {} for a missing or
            # stale one (another numba version, an edited source file).
            if not fn._cache._cache_file._load_index():
                return False
    except Exception:  # private numba API; any change in it means "not known to be cached"
        return False
    return True


# Run first in the child: it ends when this process does (``parent_exit``). An app closed
# during a first compile had left its children compiling for minutes, and the next start
# compiled again beside them.
_ENDS_WITH_PARENT = """
from bpe_studio.core.io.parent_exit import end_with_parent
end_with_parent({parent})
"""


def compile_in_child(code: str, needed: Callable[[], bool] | None = None) -> None:
    """Run ``code`` (which calls kernels, so that numba compiles them into its cache) in a
    child Python, for this process to load from the cache afterwards. numba's compiler is
    largely Python: compiling here would hold the GIL for much of several seconds, in pieces
    long enough to freeze a GUI drawn by another thread. The child imports bpe_studio from
    this process's ``sys.path``; if it fails, or its cache entries do not serve this process,
    the caller's own warm-up compiles instead. One process at a time compiles the same
    ``code`` into the cache (``compile_lock``); one that waited for another runs no child
    when ``needed()`` says the kernels are cached now."""
    if getattr(sys, "frozen", False):
        return  # sys.executable is the app itself, not a Python to run code with
    with compile_lock(usable_cache_dir(), code, CHILD_TIMEOUT) as waited:
        if waited and needed is not None and not needed():
            note(loaded_from_another=True)
            return
        note(loaded_from_another=False)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        try:
            subprocess.run(
                [sys.executable, "-c", _ENDS_WITH_PARENT.format(parent=os.getpid()) + code],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
                timeout=CHILD_TIMEOUT,
            )
        except (OSError, subprocess.SubprocessError):
            pass  # no child could run: the warm-up compiles in this process
