"""The first run on a machine compiles what it needs, says so once for each kernel, caches it
outside the tree; every later run loads it silently.

One numba cache dir, new to the test, is shared by the runs below in this order, each a
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
pytestmark = pytest.mark.slow

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


def test_each_kernel_compiles_once_says_so_then_loads(tmp_path):
    corpus = write_text(tmp_path / "c.txt", read_fixture("corpus.en")[:20_000])
    cache = tmp_path / "numba-cache"
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

    # The merge engine, first.
    assert run("train_small") == "['compiling the merge engine (first run only)'] 43"
    assert any(cache.rglob("*.nbi")), "numba's index files go to the user's cache dir"
    # The merge engine is loaded: only the scanners are new.
    said = "['compiling the pre-tokenizer (first run only)']"
    assert run("train_counting") == f"{said} compiled 43"
    # The scanners are loaded: only the encoder is new.
    assert run("encoder") == "['compiling the encoder (first run only)'] True"
    # Everything is loaded, silently.
    assert run("train_small") == "[] 43"
    assert run("train_counting") == "[] compiled 43"
    assert run("encoder") == "[] True"
    assert set(REPO_ROOT.rglob("*.nbi")) == tree_before, "nothing cached inside the tree"
