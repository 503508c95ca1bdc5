"""What a Dask worker does around counting a task: check that it reads the client's copy of
the file, and tell an error it meets as met on that worker.

What it does: a worker of a remote cluster opens a corpus file by its path on its own
machine, so a stale or different copy there (same name, same size, other bytes) would be
counted as if it were the client's, and training would end with other merges. The client
takes each local file's :class:`Fingerprint` once (:func:`fingerprinted`): its size and a
hash of :data:`SAMPLES` blocks of :data:`BLOCK` bytes at evenly spread offsets, the first and
the last block included (a small file is hashed whole). :func:`count_on_worker`, what the
cluster runs for each task, first checks the worker's copy against it (:func:`check_copy`):
one ``stat`` per task, the sampled bytes read once per file and worker process (cached while
the worker's copy keeps its size, modification time and inode). Times are never compared
with the client's: a copy made by ``cp`` or ``scp`` has other ones. A copy that differs, is
missing or cannot be read is one :class:`CorpusError` naming the file, the worker and what
differs; any other error met there names the worker too, and a missing module says to
install it on every worker.
What it leaves out: local training (no fingerprint is taken: its processes read the client's
own file), files read through fsspec from a store every worker shares (``s3://``, ...), a
copy whose bytes differ only between the sampled blocks.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from typing import NamedTuple

from ..pretokenization.pretokenizer import UncoveredText
from .cluster_address import ClusterError, distributed_module
from .counting import ChunkResult
from .errors import CorpusError
from .sources import CLUSTER_EXTRA, CorpusFile, failure
from .tasks import CountTask, count_task

# Blocks of this many bytes are hashed, this many of them: 64 KiB read per file.
BLOCK = 4096
SAMPLES = 16
# What a worker of any cluster is told to do about a copy that is not the client's.
SAME_FILE = (
    "every worker must see the same file under that name (a shared filesystem, or the same "
    "copy on every machine)"
)
# What to do when a worker cannot read a corpus the client can.
SAME_CORPUS = (
    "every worker must see the corpus under the same name (a shared filesystem, the same "
    "copy on every machine, or a store every worker can reach)"
)
# Copies a worker process found to be the client's; cleared when it grows this large.
_CHECKED_MAX = 10_000
_checked: set[tuple[object, ...]] = set()


class Fingerprint(NamedTuple):
    """A file's size and a hash of its sampled blocks (see :func:`fingerprint`)."""

    size: int
    digest: str


def sample_offsets(size: int) -> list[int]:
    """Where the blocks hashed of a file of ``size`` bytes start: every block of a file of at
    most ``SAMPLES`` blocks, else ``SAMPLES`` evenly spread from the first to the last."""
    if size <= SAMPLES * BLOCK:
        return list(range(0, size, BLOCK))
    return [i * (size - BLOCK) // (SAMPLES - 1) for i in range(SAMPLES)]


def fingerprint(path: str) -> Fingerprint:
    """The size of the file at ``path`` and a hash of its sampled blocks."""
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        for offset in sample_offsets(size):
            f.seek(offset)
            digest.update(f.read(BLOCK))
    return Fingerprint(size, digest.hexdigest())


def fingerprinted(f: CorpusFile) -> CorpusFile:
    """``f`` with its fingerprint, when a worker opens it by its local path (the client's
    side of :func:`check_copy`)."""
    if not f.local or f.data is not None:
        return f
    return replace(f, fingerprint=fingerprint(f.url))


def check_copy(f: CorpusFile, worker: str | None, *, cached: bool = True) -> None:
    """Raise :class:`CorpusError` unless the file this process sees at ``f.url`` is the one
    fingerprinted on the client (sizes compared, then sampled bytes); ``worker`` is this
    worker's address (None: unknown). Nothing to check for a file without a fingerprint."""
    here = f.fingerprint
    if here is None:
        return
    try:
        st = os.stat(f.url)
        key = (f.url, here, st.st_size, st.st_mtime_ns, st.st_ino)
        if cached and key in _checked:
            return
        there = fingerprint(f.url) if st.st_size == here.size else None
    except OSError as e:
        raise CorpusError(
            f"{f.name}: {on_worker(worker)} cannot read it{_looked_at(f)} ({e.strerror or e}), "
            f"though this machine can: {SAME_FILE}"
        ) from None
    if there is None or there.size != here.size:
        differs = f"{there.size if there else st.st_size:,} bytes there, {here.size:,} here"
    elif there.digest != here.digest:
        differs = "its bytes differ from this machine's"
    else:
        if len(_checked) >= _CHECKED_MAX:
            _checked.clear()
        _checked.add(key)
        return
    raise CorpusError(
        f"{f.name}: {on_worker(worker)} sees another copy of it{_looked_at(f)} ({differs}): "
        f"{SAME_FILE}"
    )


def _looked_at(f: CorpusFile) -> str:
    """Where a worker looked for ``f``, when its name as given is not that: a relative name
    is made absolute on the client, so a worker in another folder does not look for it
    under the name the user typed (an audit: "ts.txt ... cannot read it" misled)."""
    return "" if f.url == f.name else f" at {f.url}"


def on_worker(worker: str | None) -> str:
    """A worker as messages name it."""
    return f"the cluster's worker {worker}" if worker else "a worker of the cluster"


def count_on_worker(task: CountTask, special_tokens: list[str], pattern: str) -> ChunkResult:
    """``tasks.count_task`` as a worker of a cluster runs it: on the client's copy of the
    file only (:func:`check_copy`), an error it meets naming the worker."""
    worker = worker_address()
    f = task.file
    check_copy(f, worker)
    try:
        return count_task(task, special_tokens, pattern)
    except ImportError as e:
        raise ClusterError(
            f"{on_worker(worker)} cannot read {f.name}: it has no {e.name or 'module'} "
            f"module; install bpe-studio with the same extras on every worker ({CLUSTER_EXTRA})"
        ) from None
    except (OSError, CorpusError, UncoveredText) as e:
        # A copy that changed since it was checked is told as such, not as what reading it met.
        check_copy(f, worker, cached=False)
        if isinstance(e, OSError):
            why = "no such file" if isinstance(e, FileNotFoundError) else failure(e)
            raise CorpusError(
                f"{f.name}: {on_worker(worker)} cannot read it{_looked_at(f)} ({why}), though "
                f"this machine can: {SAME_CORPUS}"
            ) from None
        # The copy is the client's: what is wrong is in the file, read there.
        raise type(e)(f"{e} (read by {on_worker(worker)})") from None


def worker_address() -> str | None:
    """The address of the Dask worker running this task (None outside a worker)."""
    try:
        return str(distributed_module().get_worker().address)
    except ValueError:
        return None
