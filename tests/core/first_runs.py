"""The three programs a new user's first runs amount to, for the first-compile test
(tests/core/test_first_compile.py) and for the run's own compile of every kernel
(``numba_kernels_compiled_once`` in tests/conftest.py), which runs the first two (``LANES``)
and records what each said.

Each program is a fresh process, as a user's command is, and prints what it was told
(``status``) and a short result: a small training with the compiled merge engine (the regex
path counts), a training that counts with the compiled scanners (argv[2] names its merge
engine: ``python`` on the first run, so that it needs no kernel but the scanners and can run
beside the first, ``compiled`` later), and the encoder's preparation. Each uses one group of
kernels (``io.kernel_loader``'s loaders), so the three of them compile every kernel.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

from core_helpers import REPO_ROOT, read_fixture, write_text

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
t = trainer_from_file(sys.argv[1], 300, ["<|endoftext|>"], engine=sys.argv[2], status=said.append)
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
FIRST_ARGS = {"train_counting": ("python",)}
# What each says on a machine's first run (a cold cache): the kernels it compiles, only those.
FIRST_SAID = {
    "train_small": "['compiling the merge engine (first run only)'] 43",
    "train_counting": "['compiling the pre-tokenizer (first run only)'] python 43",
    "encoder": "['compiling the encoder (first run only)'] True",
}
# The order of the first runs: the merge engine's, the scanners', the encoder's (which
# pre-tokenizes with the scanners, so its first run after theirs says only its own).
ORDER = ("train_small", "train_counting", "encoder")
# What the run's own compile does (``numba_kernels_compiled_once``), in two lanes that need
# nothing from each other, one an xdist worker: the first two first runs, kept, and the
# encoder's kernels alone (``ENCODER_KERNELS``: its loader's child, which needs no scanner).
# The encoder's first run is then made by the first-compile test, in a copy of the run's
# cache without the encoder's files (``ENCODER_FILES``): waiting for the scanners to make it
# here kept both workers idle for ten seconds.
ENCODER_KERNELS = "encoder_kernels"
LANES = (("train_small", ENCODER_KERNELS), ("train_counting",))
# numba names a kernel's cache files after its module.
ENCODER_FILES = Path(find_spec("bpe_studio.core.encode.merging.encode_kernel").origin).stem + ".*"


def lanes_from(start: int) -> list[str]:
    """The run's compile steps, beginning with the ``start``-th lane."""
    start %= len(LANES)
    return [step for lane in LANES[start:] + LANES[:start] for step in lane]


def compile_encoder_kernels() -> None:
    """The encoder's kernels compiled into the run's cache, by its loader's own child."""
    from bpe_studio.core.encode.merging import kernel_start
    from bpe_studio.core.io.numba_cache import compile_in_child

    compile_in_child(kernel_start.LOADER._child_code)


# The run's shared folder (under its basetemp) where the run's compile keeps what each
# first run said (``<name>.said``) and when each worker began (``began_<worker>``).
FIRST_RUNS = "first_runs"


def first_run_corpus(folder: Path) -> Path:
    return write_text(folder / "first_run_corpus.txt", read_fixture("corpus.en")[:20_000])


def run_program(name: str, corpus: Path, *args: str, cache: Path | None = None) -> str:
    """What program ``name`` prints, run on ``corpus`` with numba's cache in ``cache`` (the
    run's own cache when None). Raises CalledProcessError if it fails."""
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    env.pop("BPE_STUDIO_ENCODER", None)
    return subprocess.run(
        [sys.executable, "-c", PROGRAMS[name], str(corpus), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    ).stdout.strip()
