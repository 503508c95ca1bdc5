"""The command line where POSIX-only modules are missing (as on Windows).

Contract: with ``fcntl``, ``resource`` and ``termios`` blocked (``sys.modules[name] = None``,
so importing them fails), ``os.fork`` gone and only the "spawn" start method offered, in the
command's process and in every worker it starts, ``train`` and ``encode`` (``--workers 2``,
with a trained tokenizer and with a preset) run on their portable path: a pool of freshly
started workers. They give the same files and ids as the normal path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_run import cli, ok
from core_helpers import EOT, REPO_ROOT, slice_head, write_text

from bpe_studio.core import Tokenizer

# Imported by every Python process started with this folder on PYTHONPATH, workers included.
_BLOCKER = """
import multiprocessing
import os
import sys

for name in ("fcntl", "resource", "termios"):
    sys.modules[name] = None  # importing it now raises ImportError
for name in ("fork", "forkpty"):
    if hasattr(os, name):
        delattr(os, name)
multiprocessing.get_all_start_methods = lambda: ["spawn"]
"""

# Runs the command with small thresholds, so that a small corpus takes the parallel paths.
_RUNNER = """
import sys

import bpe_studio.core.corpus.counting as corpus
import bpe_studio.core.encode.encode_file as encode_file
from bpe_studio.cli import main

corpus.IN_PROCESS_LIMIT = 64 * 1024
encode_file.PARALLEL_MIN_BYTES = 64 * 1024
code = main(sys.argv[1:])
for name in ("fcntl", "resource", "termios"):
    assert sys.modules.get(name, None) is None, name
sys.exit(code)
"""


def blocked(cwd: Path, blocker: Path, *args: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), str(REPO_ROOT)]))
    return subprocess.run(
        [sys.executable, "-c", _RUNNER, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


@pytest.fixture(scope="module")
def blocker(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("blocker")
    (folder / "sitecustomize.py").write_text(_BLOCKER, encoding="utf-8")
    return folder


def test_the_blocker_blocks(tmp_path, blocker):
    """The blocked process cannot import fcntl nor fork (else the test below proves nothing)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), str(REPO_ROOT)]))
    probe = "import os\ntry:\n    import fcntl\nexcept ImportError:\n    print(hasattr(os, 'fork'))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.slow
def test_train_and_encode_without_posix_modules(tmp_path, blocker):
    text = (slice_head("english", 200_000) + EOT + slice_head("chinese", 200_000)) * 2
    corpus = write_text(tmp_path / "corpus.txt", text)
    common = ("--vocab-size", 400, "--workers", 2)
    ok(blocked(tmp_path, blocker, "train", corpus, *common, "--out", tmp_path / "portable"))
    ok(cli(tmp_path, "train", corpus, *common, "--out", tmp_path / "normal"))
    for name in ("vocab.json", "merges.txt"):
        assert (tmp_path / "portable" / name).read_bytes() == (
            tmp_path / "normal" / name
        ).read_bytes()

    trained = Tokenizer.load(tmp_path / "normal")
    for source, tok in ((tmp_path / "portable", trained), ("gpt2", Tokenizer.preset("gpt2"))):
        portable, normal = tmp_path / "portable.npy", tmp_path / "normal.npy"
        for out in (portable, normal):
            out.unlink(missing_ok=True)
        args = ("encode", corpus, "--tokenizer", source, "--workers", 2)
        ok(blocked(tmp_path, blocker, *args, "--out", portable))
        ok(cli(tmp_path, *args, "--out", normal))
        expected = tok.encode(text)
        assert np.load(portable).tolist() == expected
        assert np.load(normal).tolist() == expected
