"""The first run on a machine compiles what it needs, says so once for each kernel, caches it
outside the tree; every later run loads it silently.

One numba cache dir, new to this module, is shared by the runs below in this order, each a
fresh process as a user's command is: a small training with the compiled merge engine (the
regex path counts), a training that counts with the compiled scanners, the encoder's
preparation; then each of them again. Each kernel is compiled once (about twenty CPU seconds
each for the scanners and the encoder): a run says so only for what no earlier run compiled.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from core_helpers import REPO_ROOT, read_fixture, write_text

pytest.importorskip("numba")
# One worker runs the module, so that its runs share the cache in order.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("first_compile")]

TRAIN_SMALL = """
import sys
from bpe_studio.core import trainer_from_file
said = []
t = trainer_from_file(sys.argv[1], 300, ["<|endoftext|>"], engine="compiled", status=said.append)
merges = [(s.left, s.right) for s in t]
print(repr(said), len(merges))
"""
TRAIN_COUNTING = """
import sys
from bpe_studio.core.corpus import counting
from bpe_studio.core.train.trainer import trainer_from_file
counting.COMPILED_COUNT_FROM = 0
said = []
t = trainer_from_file(sys.argv[1], 300, ["<|endoftext|>"], status=said.append)
merges = [(s.left, s.right) for s in t]
print(repr(said), t.engine_used, len(merges))
"""
PREPARE_ENCODER = """
from bpe_studio.core.encode.merging import kernel_start
said = []
ready = kernel_start.prepare(said.append)
print(repr(said), ready)
"""
PROGRAMS = {
    "train_small": TRAIN_SMALL,
    "train_counting": TRAIN_COUNTING,
    "encoder": PREPARE_ENCODER,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """What each run printed, first and second time, and the cache dir."""
    folder = tmp_path_factory.mktemp("first_compile")
    corpus = write_text(folder / "c.txt", read_fixture("corpus.en")[:20_000])
    cache = folder / "numba-cache"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), NUMBA_CACHE_DIR=str(cache))
    env.pop("BPE_STUDIO_ENCODER", None)
    tree_before = set(REPO_ROOT.rglob("*.nbi"))

    def run(name: str) -> str:
        return subprocess.run(
            [sys.executable, "-c", PROGRAMS[name], str(corpus)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=900,
        ).stdout.strip()

    first = {name: run(name) for name in PROGRAMS}
    again = {name: run(name) for name in PROGRAMS}
    return first, again, cache, tree_before


def test_the_merge_engine_is_compiled_once_and_said_then_loaded(runs):
    first, again, cache, tree_before = runs
    assert first["train_small"] == "['compiling the merge engine (first run only)'] 43"
    assert again["train_small"] == "[] 43"
    assert any(cache.rglob("*.nbi")), "numba's index files go to the user's cache dir"
    assert set(REPO_ROOT.rglob("*.nbi")) == tree_before, "nothing cached inside the tree"


def test_counting_compiles_the_scanners_only_and_says_so_then_loads_them(runs):
    first, again, _, _ = runs
    # The merge engine is the small training's, loaded: only the scanners are new.
    assert first["train_counting"] == "['compiling the pre-tokenizer (first run only)'] compiled 43"
    assert again["train_counting"] == "[] compiled 43"


def test_the_encoder_is_compiled_once_and_said_then_loaded(runs):
    first, again, _, _ = runs
    # The scanners are the counting run's, loaded: only the encoder is new.
    assert first["encoder"] == "['compiling the encoder (first run only)'] True"
    assert again["encoder"] == "[] True"
