"""Shared test setup: Qt renders offscreen unless told otherwise (no display needed), and
hypothesis keeps its files outside the working tree.

Hypothesis stores its example database and caches (e.g. Unicode tables) under
``$HYPOTHESIS_STORAGE_DIRECTORY``, by default ``.hypothesis/`` in the current directory, i.e.
the repo. Here it defaults to a directory in the system's temp dir, kept between runs, so a
failing example found once is tried first on the next run on the same machine. The profile
registered below is the default for every test; a test's own ``@settings`` still overrides it
(several pass ``database=None``). Examples are not derandomized: each run explores new inputs,
and a failure prints the ``@reproduce_failure`` blob needed to replay it anywhere.
"""

import os
import tempfile
from pathlib import Path

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

# The rank-file cache (``core.formats.rank_cache``) of a test run is kept in the temp dir too,
# not in the user's own cache folder.
os.environ.setdefault(
    "BPE_STUDIO_CACHE_DIR", str(Path(tempfile.gettempdir()) / f"bpe_studio_rank_cache_{_user}")
)

from hypothesis import settings  # noqa: E402
from hypothesis.database import DirectoryBasedExampleDatabase  # noqa: E402

settings.register_profile(
    "bpe_studio", database=DirectoryBasedExampleDatabase(HYPOTHESIS_HOME / "examples")
)
settings.load_profile("bpe_studio")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "dask_in_process: starts a Dask client in the test process; such tests run last",
    )


def pytest_collection_modifyitems(config, items):
    # subtle: a Dask client leaves process-wide threads behind (distributed's IO loop and its
    # offload pool live as long as the process). Where threads run, ``mp_context`` rightly
    # stops forking, so tests that check the forked paths (tests/core/test_encode_file.py)
    # would see another process than a user's. Tests that start a client go last.
    items.sort(key=lambda item: item.get_closest_marker("dask_in_process") is not None)
