"""The first run on a machine compiles what it needs, says so once for each kernel, caches it
outside the tree; every later run loads it silently.

The runs are the three programs of ``first_runs`` (a small training with the compiled merge
engine, a training that counts with the compiled scanners, the encoder's preparation), each a
fresh process as a user's command is, sharing one numba cache: each says only what it
compiles (about ten to twenty CPU seconds each). Then each again, the counting training now
with the compiled merge engine too: silently.

The first runs are the run's own where there were any: on a cold cache (a fresh clone, as in
CI) under xdist, ``numba_kernels_compiled_once`` (tests/conftest.py) compiles the kernels by
running the first two programs, and keeps what each said. The encoder's first run is made
here, in a copy of the run's cache without the encoder's files: a machine where the first two
ran before. Compiling everything again into a cache of this test's own cost some forty CPU
seconds a run. When the run's cache was warm (what they said is not a first run's), or
without xdist, this test makes all three first runs itself in a new cache.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from core_helpers import REPO_ROOT
from first_runs import (
    ENCODER_FILES,
    FIRST_ARGS,
    FIRST_RUNS,
    FIRST_SAID,
    ORDER,
    first_run_corpus,
    run_program,
)

import bpe_studio

pytest.importorskip("numba")
pytestmark = pytest.mark.slow


def runs_first_made_by_the_session(tmp_path_factory) -> tuple[Path, float] | None:
    """The cache the run's first runs compiled into and when they began, if what each said is
    what a first run says; else None."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return None
    shared = tmp_path_factory.getbasetemp().parent / FIRST_RUNS
    made = [name for name in ORDER if name != "encoder"]
    said = {name: shared / f"{name}.said" for name in made}
    if not all(path.exists() for path in said.values()):
        return None
    if any(path.read_text() != FIRST_SAID[name] for name, path in said.items()):
        return None
    from bpe_studio.core.io.numba_cache import kernel_cache_dir

    began = min(float(p.read_text()) for p in shared.glob("began_*"))
    return kernel_cache_dir(), began


def tree_index_files() -> dict[Path, float]:
    return {p: p.stat().st_mtime for p in REPO_ROOT.rglob("*.nbi")}


def test_each_kernel_compiles_once_says_so_then_loads(tmp_path, tmp_path_factory):
    corpus = first_run_corpus(tmp_path)
    made = runs_first_made_by_the_session(tmp_path_factory)
    cache = tmp_path / "numba-cache"
    if made is None:
        tree_before = tree_index_files()
        # The merge engine first, then the scanners (a training that needs no other kernel),
        # then the encoder: each says it compiles its own, and only that.
        for name in ORDER:
            said = run_program(name, corpus, *FIRST_ARGS.get(name, ()), cache=cache)
            assert said == FIRST_SAID[name], name
        index_dir = cache
        written_since = [p for p, t in tree_index_files().items() if tree_before.get(p) != t]
    else:
        index_dir, began = made
        # What the first two runs left, without the encoder's kernels.
        shutil.copytree(index_dir, cache, ignore=shutil.ignore_patterns(ENCODER_FILES))
        assert any(cache.rglob("*.nbi")) and not any(cache.rglob(ENCODER_FILES))
        assert run_program("encoder", corpus, cache=cache) == FIRST_SAID["encoder"]
        written_since = [p for p, t in tree_index_files().items() if t >= began]
    assert any(index_dir.rglob("*.nbi")), "numba's index files go to the user's cache dir"
    # Each compile marks its folder with the source it holds, for later prunes.
    from bpe_studio.core.io.numba_cache import SOURCE_MARK

    core = Path(bpe_studio.__file__).parent / "core"
    marked = {Path(m.read_text()) for m in cache.rglob(SOURCE_MARK)}
    # (A copy of the run's cache may hold other installed copies' folders too.)
    assert {core / "train", core / "pretokenization", core / "encode" / "merging"} <= marked
    assert written_since == [], "nothing cached inside the tree"
    # Everything is loaded, silently; the counting training now with the compiled merge
    # engine, which the first training compiled.
    assert run_program("train_small", corpus, cache=cache) == "[] 43"
    assert run_program("train_counting", corpus, "compiled", cache=cache) == "[] compiled 43"
    assert run_program("encoder", corpus, cache=cache) == "[] True"
