"""The one loader of numba kernels (``io.kernel_loader``) and its three users: the merge
engine's, the scanners' and the encoder's kernels."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import types

import pytest
from core_helpers import REPO_ROOT

from bpe_studio.core.encode.merging import kernel_start
from bpe_studio.core.io import compile_lock, numba_cache
from bpe_studio.core.io.kernel_loader import KernelLoader
from bpe_studio.core.pretokenization import scan_load
from bpe_studio.core.train import merge_engine


class Unavailable(ImportError):
    pass


def _loader(importer, warm_up, heard=None):
    return KernelLoader(
        name="test",
        importer=importer,
        # Not numba dispatchers: numba_cache.is_cached says "not cached", so prepare announces
        # a compile and runs the child code (a Python that does nothing) first.
        kernels_of=lambda module: (object(),),
        warm_up=warm_up,
        child_code="pass",
        compiling_message="compiling the test kernels (first run only)",
        unavailable=Unavailable,
        explain=lambda reason: f"the test kernels need numba ({reason})",
    )


def test_prepare_announces_the_compile_warms_up_once_and_is_ready():
    module = types.ModuleType("fake_kernels")
    imports, warmed, heard = [], [], []

    def importer():
        imports.append(1)
        return module

    loader = _loader(importer, warmed.append)
    assert not loader.ready() and not loader.compiling()
    assert loader.prepare(heard.append) is module
    assert heard == ["compiling the test kernels (first run only)"]
    assert warmed == [module] and loader.ready() and not loader.compiling()
    loader.prepare(heard.append)
    assert warmed == [module] and imports == [1] and len(heard) == 1
    loader.forget()
    assert not loader.ready()


def test_concurrent_prepares_warm_up_once():
    module = types.ModuleType("fake_kernels")
    warmed: list[object] = []
    gate = threading.Event()

    def warm_up(m):
        gate.wait(10)
        warmed.append(m)

    loader = _loader(lambda: module, warm_up)
    threads = [loader.prepare_in_background() for _ in range(3)]
    gate.set()
    for t in threads:
        t.join(30)
    assert warmed == [module] and loader.ready()


def test_a_failed_import_is_remembered_and_named():
    calls = []

    def importer():
        calls.append(1)
        raise ImportError("no numba here")

    loader = _loader(importer, lambda m: None)
    for _ in range(2):
        with pytest.raises(Unavailable, match=r"need numba \(ImportError: no numba here\)"):
            loader.prepare()
    assert calls == [1] and loader.imported() is None
    assert loader.failure == "ImportError: no numba here"
    done: list[bool] = []
    loader.prepare_in_background(done=done.append).join(30)
    assert done == [False] and not loader.ready()


def test_a_failing_warm_up_leaves_the_loader_unready():
    def warm_up(m):
        raise RuntimeError("does not compile here")

    loader = _loader(lambda: types.ModuleType("k"), warm_up)
    with pytest.raises(RuntimeError):
        loader.prepare()
    assert not loader.ready() and not loader.compiling()


@pytest.mark.parametrize(
    "loader", [merge_engine.LOADER, scan_load.LOADER, kernel_start.LOADER], ids=lambda x: x.name
)
def test_each_child_that_compiles_the_kernels_runs(loader):
    """The code a first run hands a child process (which compiles the kernels into numba's
    cache) must run: a child that fails is silent, and the compile then happens in this
    process, holding the GIL for seconds (the merge engine's named a module that does not
    exist). Here the cache is warm, so the child only loads the kernels."""
    pytest.importorskip("numba")
    loader.prepare()
    run = subprocess.run(
        [sys.executable, "-c", loader._child_code],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]


def test_a_warm_up_failing_on_the_cache_forgets_the_entries_and_compiles_again(monkeypatch):
    """A cache file numba cannot read (cut short, zeroed) failed every later run with
    EOFError or UnpicklingError from numba's loader (numba/numba#10434): the loader now
    removes the entries and compiles once more."""
    from bpe_studio.core.io import numba_cache

    module = types.ModuleType("fake_kernels")
    forgotten, children, warmed, heard = [], [], [], []
    monkeypatch.setattr(numba_cache, "forget_cached", lambda *k: forgotten.append(k))
    monkeypatch.setattr(
        numba_cache, "compile_in_child", lambda code, needed=None: children.append(code)
    )

    def warm_up(m):
        warmed.append(m)
        if len(warmed) == 1:
            raise EOFError("Ran out of input")

    loader = _loader(lambda: module, warm_up)
    assert loader.prepare(heard.append) is module
    assert loader.ready() and len(warmed) == 2 and len(forgotten) == 1
    assert children == ["pass", "pass"]  # the first compile, then the one after forgetting
    # Said once (a cache audit: a damaged index printed the compiling line twice).
    assert heard == ["compiling the test kernels (first run only)"]


def test_a_load_failing_on_an_entry_thought_cached_says_it_compiles(monkeypatch):
    from bpe_studio.core.io import numba_cache

    module = types.ModuleType("fake_kernels")
    warmed, heard = [], []
    monkeypatch.setattr(numba_cache, "is_cached", lambda *k: True)  # its index reads fine
    monkeypatch.setattr(numba_cache, "forget_cached", lambda *k: None)
    monkeypatch.setattr(numba_cache, "compile_in_child", lambda code, needed=None: None)

    def warm_up(m):
        warmed.append(m)
        if len(warmed) == 1:
            raise EOFError("a data file cut short")

    loader = _loader(lambda: module, warm_up)
    loader.prepare(heard.append)
    assert loader.ready() and heard == ["compiling the test kernels (first run only)"]


def test_without_a_cache_folder_it_says_each_run_compiles_and_compiles_once(monkeypatch):
    """With no folder numba can cache in, "(first run only)" was untrue, and the child's
    compile, kept nowhere, was done again here: twice the wait (an install audit: 78 s)."""
    module = types.ModuleType("fake_kernels")
    children, warmed, heard = [], [], []
    monkeypatch.setattr(
        numba_cache, "compile_in_child", lambda code, needed=None: children.append(code)
    )
    monkeypatch.setattr(numba_cache, "usable_cache_dir", lambda: None)
    loader = _loader(lambda: module, warmed.append)
    assert loader.prepare(heard.append) is module
    assert heard == ["compiling the test kernels (no cache folder: each run compiles)"]
    assert loader.said_compiling() == heard[0]
    assert children == [] and warmed == [module] and loader.ready()


def test_a_warm_up_failing_twice_leaves_the_loader_unready(monkeypatch):
    from bpe_studio.core.io import numba_cache

    monkeypatch.setattr(numba_cache, "forget_cached", lambda *k: None)
    monkeypatch.setattr(numba_cache, "compile_in_child", lambda code, needed=None: None)

    def warm_up(m):
        raise RuntimeError("does not compile here")

    loader = _loader(lambda: types.ModuleType("fake_kernels"), warm_up)
    with pytest.raises(RuntimeError, match="does not compile here"):
        loader.prepare()
    assert not loader.ready() and not loader.compiling()


_TINY = """
import numba
@numba.njit(cache=True)
def twice(x):
    return 2 * x
"""

_RUN = """
import sys
sys.path.insert(0, {folder!r})
import tiny
from bpe_studio.core.io import numba_cache
if {forget}:
    numba_cache.forget_cached(tiny.twice)
print(tiny.twice(21))
"""


def _run_tiny(folder, forget: bool) -> subprocess.CompletedProcess[str]:
    """_RUN in a fresh Python, numba's cache in ``folder``/cache."""
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(folder / "cache")}
    code = _RUN.format(folder=str(folder), forget=forget)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )


def test_forget_cached_removes_a_damaged_entry_numba_cannot_read(tmp_path):
    """numba's own behaviour, which ``forget_cached`` is for: a damaged index fails every
    load; with the function's entries removed, it compiles and caches again."""
    (tmp_path / "tiny.py").write_text(_TINY)

    def run(forget: bool) -> subprocess.CompletedProcess[str]:
        return _run_tiny(tmp_path, forget)

    assert run(False).stdout.strip() == "42"
    (index,) = (tmp_path / "cache").rglob("*.nbi")
    index.write_bytes(b"")
    damaged = run(False)
    assert damaged.returncode != 0 and "EOFError" in damaged.stderr
    assert run(True).stdout.strip() == "42"
    assert run(False).stdout.strip() == "42"  # cached again, whole


_FULL_DISK = """
import errno, logging, sys, types
sys.path.insert(0, {folder!r})
logging.basicConfig(level=logging.WARNING, format="%(message)s")
from numba.core import caching

def full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")

caching.Cache.save_overload = full
import tiny
from bpe_studio.core.io import numba_cache
from bpe_studio.core.io.kernel_loader import KernelLoader

seen = []
loader = KernelLoader(
    name="tiny", importer=lambda: tiny, kernels_of=lambda m: (m.twice,),
    warm_up=lambda m: seen.append(m.twice(21)), child_code="pass",
    compiling_message="compiling tiny (first run only)", unavailable=ImportError,
    explain=str,
)
loader.prepare_in_background().join(300)
print(loader.ready(), seen[-1], numba_cache.caches_nothing())
"""


def test_a_cache_that_cannot_be_written_compiles_in_memory_and_says_so(tmp_path):
    """A cache audit on a full disk: a traceback from the loading thread, the Python path
    after, and a summary saying "compiled ... (once: then cached)"."""
    (tmp_path / "tiny.py").write_text(_OURS)
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", _FULL_DISK.format(folder=str(tmp_path))],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "42", "True"]
    assert "Traceback" not in done.stderr
    assert "cannot write numba's cache (OSError: [Errno 28] No space left on device)" in (
        done.stderr
    )


def test_kernels_numba_would_cache_in_the_source_tree_go_to_the_private_folder(tmp_path):
    """A cache audit: with the kernels' own folder in NUMBA_CACHE_DIR unwritable (another
    user's, in a shared cache), numba fell back silently to the source tree (an installed
    package's __pycache__), or to another folder than the one the user set."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "tiny.py").write_text(_OURS)
    cache, temp = tmp_path / "cache", tmp_path / "temp"
    cache.mkdir()
    temp.mkdir()
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(cache), "TMPDIR": str(temp)}
    code = (
        f"import sys; sys.path.insert(0, {str(source)!r}); import tiny; print(tiny.twice(21));"
        "print(tiny.twice._cache._cache_path)"
    )

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
        )

    first = run()
    assert first.returncode == 0, first.stderr
    (ours,) = cache.iterdir()
    import shutil

    shutil.rmtree(ours)
    ours.write_text("another user's")  # numba cannot make its folder there
    blocked = run()
    assert blocked.returncode == 0 and blocked.stdout.split()[0] == "42", blocked.stderr
    assert not (source / "__pycache__").exists() or not list((source / "__pycache__").glob("*.nb*"))
    private = temp / f"bpe-studio-{__import__('os').getuid()}" / "numba"
    assert blocked.stdout.split()[1].startswith(str(private))
    assert f"cannot write numba's cache of twice in {cache}; caching them in {private}" in (
        blocked.stderr
    )


def test_forget_cached_removes_a_folder_where_an_entry_should_be(tmp_path):
    """A cache audit: a folder in place of a .nbi or .nbc failed every load and every save,
    and forget_cached's unlink raised inside the recovery, on every run."""
    (tmp_path / "tiny.py").write_text(_TINY)

    def run(forget: bool) -> subprocess.CompletedProcess[str]:
        return _run_tiny(tmp_path, forget)

    assert run(False).stdout.strip() == "42"
    (index,) = (tmp_path / "cache").rglob("*.nbi")
    index.unlink()
    index.mkdir()
    (index / "inside").write_text("x")
    done = run(True)
    assert done.returncode == 0 and done.stdout.strip() == "42", done.stderr
    assert index.is_file()  # compiled and saved afresh
    assert run(False).stdout.strip() == "42"


def test_prune_removes_earlier_versions_and_folders_of_copies_no_longer_installed(tmp_path):
    """Found in the notes of earlier rounds: numba names an entry by its function's line and
    keeps one folder per source folder, so every upgrade and every deleted virtual
    environment left its kernels in the user's cache for ever (66 MB after 25 versions)."""
    (tmp_path / "tiny.py").write_text(_TINY)
    cache = tmp_path / "cache"
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(cache)}
    code = _RUN.format(folder=str(tmp_path), forget=False) + "numba_cache.prune(tiny.twice)\n"

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run() == "42"
    (index,) = cache.rglob("*.nbi")
    folder = index.parent
    module, rest = index.name.split("-", 1)  # tiny.twice-<line>.py3XX.nbi
    python = rest.split(".")[1]
    stale = [folder / f"{module}-1.{python}.nbi", folder / f"{module}-1.{python}.1.nbc"]
    other_python = folder / f"{module}-1.py20.nbi"
    other_module = folder / f"tinier.twice-1.{python}.nbi"
    gone, kept, foreign = cache / "gone_0", cache / "kept_0", cache / "foreign_0"
    for path in [*stale, other_python, other_module]:
        path.write_bytes(b"an earlier version's entry")
    for sub, source in ((gone, tmp_path / "deleted venv"), (kept, tmp_path), (foreign, None)):
        sub.mkdir()
        (sub / "twice-3.py311.nbi").write_bytes(b"")
        if source is not None:
            (sub / numba_cache.SOURCE_MARK).write_text(str(source))
    assert run() == "42"
    assert not any(p.exists() for p in stale) and not gone.exists()
    assert index.exists() and other_python.exists() and other_module.exists()
    assert kept.exists() and foreign.exists()
    assert (folder / numba_cache.SOURCE_MARK).read_text() == str(tmp_path)


def test_a_garbled_mark_is_rewritten_or_left_never_a_crash(tmp_path):
    """A hostile-machine audit: a mark that was not UTF-8 (a crash, a bad disk) raised from
    the prune, so encode failed naming no file; in the kernels' own folder it kept them
    from loading, and every encode took the Python path without a word."""
    (tmp_path / "tiny.py").write_text(_TINY)
    cache = tmp_path / "cache"
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(cache)}
    code = _RUN.format(folder=str(tmp_path), forget=False) + "numba_cache.prune(tiny.twice)\n"

    def run() -> None:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
        )
        assert done.returncode == 0 and done.stdout.strip() == "42", done.stderr

    run()
    (index,) = cache.rglob("*.nbi")
    own = index.parent / numba_cache.SOURCE_MARK
    sibling = cache / "garbled_0"
    sibling.mkdir()
    (sibling / numba_cache.SOURCE_MARK).write_bytes(b"\xd5\xff\x00 garbled")
    own.write_bytes(b"\x00\xd5 garbled too")
    run()
    assert sibling.exists()  # it names no folder: no reason to prune it
    assert own.read_text(encoding="utf-8") == str(tmp_path)  # rewritten


_OURS = """
import numba
from bpe_studio.core.io.numba_cache import cache_in_user_dir
@numba.njit
def twice(x):
    return 2 * x
cache_in_user_dir(twice)
"""


def test_a_folder_compiled_into_without_a_prune_is_marked_and_pruned_later(tmp_path):
    """An audit of the docs: the test suite's compiles (and any process ending before its
    loader's prune: a loader's child, a window closed mid-compile) left unmarked folders in
    the user's cache, which no prune could tell were stale: 136 folders, 122 MB."""
    import shutil

    cache = tmp_path / "cache"
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(cache)}
    copy, installed = tmp_path / "a deleted checkout", tmp_path / "installed"
    for folder in (copy, installed):
        folder.mkdir()
        (folder / "tiny.py").write_text(_OURS)

    def run(folder, then: str = "") -> None:
        code = f"import sys; sys.path.insert(0, {str(folder)!r}); import tiny; tiny.twice(21)\n"
        done = subprocess.run(
            [sys.executable, "-c", code + then],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr

    run(copy)  # compiled, never pruned
    (index,) = cache.rglob("*.nbi")
    assert (index.parent / numba_cache.SOURCE_MARK).read_text() == str(copy)
    shutil.rmtree(copy)
    run(installed, "from bpe_studio.core.io import numba_cache; numba_cache.prune(tiny.twice)")
    assert not index.parent.exists()
    (kept,) = cache.rglob("*.nbi")
    assert (kept.parent / numba_cache.SOURCE_MARK).read_text() == str(installed)


def test_a_cache_folder_that_cannot_be_written_is_replaced_by_a_temporary_one(
    tmp_path, monkeypatch, caplog
):
    """numba refuses a cache folder it cannot write: its next choice was the source tree,
    else an import error that read as "numba is missing", even with the cache warm."""
    import tempfile

    from bpe_studio.core.io import numba_cache

    blocked = tmp_path / "a file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(numba_cache.config, "CACHE_DIR", str(blocked / "numba"))
    monkeypatch.setattr(numba_cache, "_usable", [])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    with caplog.at_level("WARNING"):
        chosen = numba_cache.usable_cache_dir()
    assert chosen is not None and chosen.is_relative_to(tmp_path / "tmp") and chosen.is_dir()
    assert f"cannot write numba's cache of the compiled kernels in {blocked / 'numba'}" in (
        caplog.text
    )
    assert f"caching them in {chosen}" in caplog.text


# ------------------------------------------------- one compile at a time across processes
# The first process's compile: it says it started, then holds (its lock with it) until the
# test lets it go, as a compile of minutes would; then it leaves the "cached kernels".
_HELD_COMPILE = """
import pathlib, time
folder = pathlib.Path({folder!r})
(folder / "first_started").touch()
for _ in range(6000):  # a bound, so that a broken test cannot leave it behind for ever
    if (folder / "release").exists():
        break
    time.sleep(0.01)
(folder / "kernels").touch()
"""
_HOLDER = """
import sys
from bpe_studio.core.io import numba_cache
numba_cache.compile_in_child(sys.argv[1])
"""


def _start_holder(tmp_path, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(REPO_ROOT))
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, _HELD_COMPILE.format(folder=str(tmp_path))], env=env
    )
    for _ in range(6000):
        if (tmp_path / "first_started").exists() or holder.poll() is not None:
            break
        threading.Event().wait(0.01)
    assert (tmp_path / "first_started").exists(), "the first process never began its compile"
    return holder


class _Heard(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages: list[str] = []
        self.waiting = threading.Event()

    def emit(self, record):
        self.messages.append(record.getMessage())
        if "waiting for it" in record.getMessage():
            self.waiting.set()


def _second_compile(tmp_path, cache, monkeypatch):
    """The second process's compile_in_child (this one's, in a thread) of the same kernels
    (the same code, so the same lock): the messages it logs, and the thread. Its child is
    recorded, not run: a file says it would have compiled."""
    monkeypatch.setattr(numba_cache, "usable_cache_dir", lambda: cache)
    monkeypatch.setattr(
        numba_cache.subprocess, "run", lambda *a, **k: (tmp_path / "second_compiled").touch()
    )
    heard = _Heard()
    monkeypatch.setattr(logging.getLogger(compile_lock.__name__), "handlers", [heard])
    monkeypatch.setattr(compile_lock, "_said_waiting", [])  # said once a process
    thread = threading.Thread(
        target=numba_cache.compile_in_child,
        args=(_HELD_COMPILE.format(folder=str(tmp_path)),),
        kwargs={"needed": lambda: not (tmp_path / "kernels").exists()},
        daemon=True,
    )
    return heard, thread


def test_a_second_first_run_waits_for_the_compile_under_way_then_uses_the_cache(
    tmp_path, monkeypatch
):
    """Found by the CLI audit: three first runs at once with an empty cache each compiled the
    kernels (each said "compiled ... in 228 s"): no process waited on another's compile."""
    cache = tmp_path / "cache"
    cache.mkdir()
    holder = _start_holder(tmp_path, cache)
    try:
        heard, thread = _second_compile(tmp_path, cache, monkeypatch)
        thread.start()
        assert heard.waiting.wait(120), heard.messages
        (tmp_path / "release").touch()
        thread.join(120)
        assert not thread.is_alive()
    finally:
        (tmp_path / "release").touch()
        holder.wait(120)
    assert holder.returncode == 0
    assert (tmp_path / "kernels").exists()
    assert not (tmp_path / "second_compiled").exists()  # it loaded what the first compiled
    assert len([m for m in heard.messages if "waiting for it" in m]) == 1  # said once


def test_a_compile_lock_whose_holder_was_killed_does_not_block(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    holder = _start_holder(tmp_path, cache)
    try:
        heard, thread = _second_compile(tmp_path, cache, monkeypatch)
        thread.start()
        assert heard.waiting.wait(120), heard.messages
        holder.kill()  # its child ends with it (parent_exit); the system drops its lock
        holder.wait(120)
        thread.join(120)
        assert not thread.is_alive()
    finally:
        (tmp_path / "release").touch()
    assert (tmp_path / "second_compiled").exists()  # nothing was cached: it compiled itself


def test_the_lock_files_are_left_one_per_group_of_kernels(tmp_path, monkeypatch):
    """The lock files stay after each compile (``compile_lock``: removing one would let two
    processes compile at once), so their names bound them: one per group of kernels, the
    same at every run, in the cache folder however often the kernels are compiled."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(numba_cache, "usable_cache_dir", lambda: cache)
    monkeypatch.setattr(numba_cache.subprocess, "run", lambda *a, **k: None)
    codes = [
        group._child_code for group in (merge_engine.LOADER, scan_load.LOADER, kernel_start.LOADER)
    ]
    for _ in range(3):
        for code in codes:
            numba_cache.compile_in_child(code)
    left = sorted(path.name for path in cache.iterdir())
    if sys.platform == "win32":  # filelock removes a Windows lock file on release
        assert left == []
        return
    assert left == sorted(compile_lock.lock_path(cache, code).name for code in codes)
    assert len(left) == 3
