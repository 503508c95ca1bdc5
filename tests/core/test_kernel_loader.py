"""The one loader of numba kernels (``io.kernel_loader``) and its three users: the merge
engine's, the scanners' and the encoder's kernels."""

from __future__ import annotations

import subprocess
import sys
import threading
import types

import pytest

from bpe_studio.core.encode.merging import kernel_start
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
