"""Shared test setup: Qt renders offscreen unless told otherwise (no display needed),
hypothesis keeps its files outside the working tree, the markers and the order of the run, and
the fixtures every folder uses (GPT-2's tokenizer, a tokenizer trained on Chinese), each built
once per run however many xdist workers run the tests.

Hypothesis stores its example database and caches (e.g. Unicode tables) under
``$HYPOTHESIS_STORAGE_DIRECTORY``, by default ``.hypothesis/`` in the current directory, i.e.
the repo. Here it defaults to a directory in the system's temp dir, kept between runs, so a
failing example found once is tried first on the next run on the same machine. The profile
registered below is the default for every test; a test's own ``@settings`` still overrides it
(several pass ``database=None``). Examples are not derandomized: each run explores new inputs,
and a failure prints the ``@reproduce_failure`` blob needed to replay it anywhere.
"""

import gc
import os
import pickle
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# subtle: hypothesis reads the variable the first time it touches its storage, which is after
# conftest files are imported, so setting it here (before importing hypothesis) takes effect.
_user = os.getuid() if hasattr(os, "getuid") else "user"
HYPOTHESIS_HOME = Path(
    os.environ.setdefault(
        "HYPOTHESIS_STORAGE_DIRECTORY",
        str(Path(tempfile.gettempdir()) / f"bpe_studio_hypothesis_{_user}"),
    )
)

# The rank-file cache (``core.formats.tiktoken.rank_cache``) of a test run is kept in the temp
# dir too, not in the user's own cache folder.
os.environ.setdefault(
    "BPE_STUDIO_CACHE_DIR", str(Path(tempfile.gettempdir()) / f"bpe_studio_rank_cache_{_user}")
)

from hypothesis import settings  # noqa: E402
from hypothesis.database import DirectoryBasedExampleDatabase  # noqa: E402

settings.register_profile(
    "bpe_studio", database=DirectoryBasedExampleDatabase(HYPOTHESIS_HOME / "examples")
)
settings.load_profile("bpe_studio")

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The independent helpers (reference trainer and encoder, GPT-2 byte tables) live in
# tests/core; every folder's tests use them.
CORE_TESTS = Path(__file__).resolve().parent / "core"
if str(CORE_TESTS) not in sys.path:
    sys.path.insert(0, str(CORE_TESTS))
EOT = "<|endoftext|>"


def pytest_configure(config):
    # subtle: xdist's workers start with SIGINT ignored (execnet sets that so that a Ctrl-C
    # reaches only the controller), and an ignored signal stays ignored in every process a
    # worker starts: the tests of what Ctrl-C does, in this process and in the command line
    # they run, would see nothing. Python's own default is put back in each worker.
    if os.environ.get("PYTEST_XDIST_WORKER") and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.addinivalue_line(
        "markers",
        "dask_in_process: starts a Dask client in the test process; such tests run after the "
        "other core tests and before the app's, on each xdist worker",
    )
    config.addinivalue_line(
        "markers",
        "slow: among the slowest tests (CI runs them; `-m 'not slow'` leaves them out of a "
        "quick local run)",
    )


GUI_TESTS = Path(__file__).resolve().parent / "gui"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    # The order of the run, which xdist keeps: its scheduler hands work out in collection
    # order and each worker runs what it got in that order, so a worker runs a test of a later
    # class only after every test of the earlier classes it was given.
    # subtle: the app's tests leave the process as the app does: Qt imported, the cyclic
    # collector off (the app collects on its own timer), threads Qt started that ran Python
    # code. Where other threads run, ``mp_context`` rightly stops forking, so the tests of the
    # forked paths (tests/core/test_encode_file.py) run before any GUI test on their worker.
    # A Dask client leaves process-wide threads too (distributed's IO loop and its offload
    # pool live as long as the process): the tests that start one go after the other core
    # tests, before the app's. (They are not an xdist group: ``--dist loadgroup`` groups
    # nothing with pytest 9.2, pytest-xdist#1386, and the order alone keeps them apart.)
    # Within each class the slow tests go first, so that no worker is left with a long test
    # at the end of the run.
    def place(item):
        if item.get_closest_marker("dask_in_process") is not None:
            kind = 1
        elif GUI_TESTS in item.path.parents:
            kind = 2
        else:
            kind = 0
        return kind, item.get_closest_marker("slow") is None

    items.sort(key=place)


@pytest.fixture(scope="module", autouse=True)
def survivors_frozen():
    """After each test module, what it left as garbage is collected and what outlives it
    (session fixtures, tokenizers kept by modules, loaded kernels) is moved out of the cyclic
    collector's sight (``gc.freeze``). Without this each full collection walked every object of
    the worker's gigabytes again: about 0.5 s each, some 50 CPU seconds in a run. An object
    frozen is still freed when its last reference goes; a cycle among frozen objects is not,
    and the collection here catches each module's own before it is frozen."""
    yield
    gc.collect()
    gc.freeze()


T = TypeVar("T")


def built_once(tmp_path_factory, name: str, build: Callable[[], T]) -> T:
    """``build()``'s result, built once per test run: under xdist the first worker to get here
    builds it and pickles it into the run's shared temporary folder, under a file lock, and the
    other workers read it (xdist's recipe for session fixtures)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return build()
    from filelock import FileLock

    # getbasetemp() is this worker's folder inside the run's; the run's is shared.
    shared = tmp_path_factory.getbasetemp().parent / f"built_once_{name}.pickle"
    with FileLock(str(shared) + ".lock"):
        if shared.exists():
            return pickle.loads(shared.read_bytes())
        value = build()
        shared.write_bytes(pickle.dumps(value))
        return value


@pytest.fixture(scope="session", autouse=True)
def numba_kernels_compiled_once(tmp_path_factory):
    """Under xdist, numba's cache holds every kernel before a worker's first test, each group
    compiled once per run. On a fresh checkout (CI) the cache is stale (numba keys it on the
    source files' paths and times), and each worker, and each command-line process a test
    starts, would compile the same kernels again on first use.

    The compiles are a new user's first runs where they can be (``first_runs``: a training,
    a counting training, each a fresh process whose loader compiles in a child of its own),
    and the encoder's kernels by its loader's child; two workers start on different lanes of
    these, side by side, and each waits until all are done. What each first run said is
    kept in the run's folder (``FIRST_RUNS``), with when the worker began, for
    tests/core/test_first_compile.py: on a cold cache these are the first runs it checks,
    not compiled a second time. A worker's own kernels stay unloaded, each test still
    starting as a fresh process would. Without xdist nothing is done here: a single process
    compiles each kernel once anyway."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return
    import subprocess
    import time

    from filelock import FileLock
    from first_runs import (
        ENCODER_KERNELS,
        FIRST_ARGS,
        FIRST_RUNS,
        compile_encoder_kernels,
        first_run_corpus,
        lanes_from,
        run_program,
    )

    shared = tmp_path_factory.getbasetemp().parent / FIRST_RUNS
    shared.mkdir(exist_ok=True)
    (shared / f"began_{worker}").write_text(repr(time.time()))
    corpus = first_run_corpus(tmp_path_factory.mktemp("first_run"))
    for step in lanes_from(int("".join(filter(str.isdigit, worker)) or 0)):
        said = shared / f"{step}.said"
        with FileLock(str(shared / f"{step}.lock")):
            if said.exists():
                continue
            if step == ENCODER_KERNELS:
                compile_encoder_kernels()
                said.touch()
                continue
            try:
                said.write_text(run_program(step, corpus, *FIRST_ARGS.get(step, ())))
            except subprocess.SubprocessError as exc:
                # The first-compile test sees this and runs the programs itself; every other
                # test compiles what it needs on first use.
                said.write_text(f"failed: {exc}: {getattr(exc, 'stderr', '')}")


@pytest.fixture(scope="session")
def gpt2_tokenizer():
    """GPT-2's tokenizer, from the fixture files (tests/fixtures/gpt2_vocab.json and
    gpt2_merges.txt), with its end-of-text token."""
    from bpe_studio.core import Tokenizer

    return Tokenizer.from_files(
        FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", special_tokens=[EOT]
    )


@pytest.fixture(scope="session")
def tiktoken_gpt2():
    """tiktoken's GPT-2, built offline from the fixture vocabulary."""
    import tiktoken
    from gpt2_bytes import read_gpt2_vocab

    from bpe_studio.core.reference import GPT2_SPLIT_PATTERN

    vocab = read_gpt2_vocab(FIXTURES / "gpt2_vocab.json")
    ranks = {tok: idx for idx, tok in vocab.items() if tok != EOT.encode()}
    assert len(ranks) == 50256
    return tiktoken.Encoding(
        name="gpt2_local",
        pat_str=GPT2_SPLIT_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={EOT: 50256},
    )


@pytest.fixture(scope="session")
def chinese_tokenizer(tmp_path_factory):
    """A tokenizer trained on 100 KB of Chinese (800 tokens, with the end-of-text token): many
    of its merged tokens hold only part of a character, so characters are split across
    tokens."""
    from core_helpers import slice_head, write_text

    from bpe_studio.core import Tokenizer, train_bpe

    def train():
        folder = tmp_path_factory.mktemp("zh")
        return train_bpe(write_text(folder / "zh.txt", slice_head("chinese", 100_000)), 800, [EOT])

    vocab, merges = built_once(tmp_path_factory, "chinese_tokenizer", train)
    return Tokenizer(vocab, merges, [EOT])


@pytest.fixture(scope="session")
def chinese_code_tokenizer(tmp_path_factory):
    """A tokenizer trained on 60 KB of Chinese and 60 KB of code (3,000 tokens, with the
    end-of-text token): enough merges for the batch merger to be built."""
    from core_helpers import slice_head, write_text

    from bpe_studio.core import Tokenizer, train_bpe

    def train():
        text = slice_head("chinese", 60_000) + slice_head("code", 60_000)
        path = write_text(tmp_path_factory.mktemp("zh_code") / "zh_code.txt", text)
        return train_bpe(path, 3_000, [EOT])

    vocab, merges = built_once(tmp_path_factory, "chinese_code_tokenizer", train)
    return Tokenizer(vocab, merges, [EOT])
