"""Where the benchmarks' inputs are and how they are cut: the corpora folder, the peer
libraries a benchmark needs, line-aligned slices of a corpus and scratch files.

Nothing here measures anything. A benchmark whose input or peer library is missing raises
:class:`Skip` and is reported as SKIP, not as a failure. Units: 1 MB = 1,000,000 bytes (of UTF-8
text, for throughput figures); memory is reported in MiB (2**20 bytes).
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
MB = 1_000_000
# Every kind of text the encoding benchmarks measure, by label: a figure on one kind hides
# the others.
TEXT_KINDS = {
    "English": "english_books.txt",
    "Chinese": "chinese.txt",
    "code": "code.txt",
    "web": "mixed_web.txt",
}
MIB = 1 << 20


def corpora_dir() -> Path | None:
    """``$BPE_STUDIO_CORPORA`` if set, else ``<repo root>/../shared/corpora``; None if absent."""
    env = os.environ.get("BPE_STUDIO_CORPORA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO_ROOT.parent / "shared" / "corpora")
    for c in candidates:
        if c.is_dir():
            return c
    return None


class Skip(Exception):
    """A benchmark cannot run on this machine; it is reported as SKIP, not failed."""


class MissingCorpus(Skip):
    """A benchmark's input is not on this machine."""


def require(*modules: str) -> None:
    """Skip unless the peer libraries are installed (``pip install -e '.[bench]'``)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise Skip(f"not installed: {', '.join(missing)} (pip install -e '.[bench]')")


def corpus(*names: str) -> list[Path]:
    """Paths of the named corpus files (relative to the corpora folder), or MissingCorpus."""
    root = corpora_dir()
    if root is None:
        raise MissingCorpus(
            "corpora folder not found: set BPE_STUDIO_CORPORA or put it at "
            f"{REPO_ROOT.parent / 'shared' / 'corpora'}"
        )
    paths = [root / n for n in names]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise MissingCorpus("corpus file(s) missing: " + ", ".join(missing))
    return paths


def line_slice(path: Path, start: int, size: int) -> bytes:
    """About ``size`` bytes of ``path`` from ``start``, cut at line boundaries: the slice begins
    just after the first line break at or after ``start`` (or at 0) and ends with the last line
    break before ``start + size`` is passed."""
    with open(path, "rb") as f:
        if start > 0:
            f.seek(start - 1)
            f.readline()  # finish the line that holds byte start - 1
        begin = f.tell()
        data = f.read(size)
    if len(data) < size // 2:
        raise MissingCorpus(f"{path}: too short for {size} bytes from offset {begin}")
    cut = data.rfind(b"\n")
    if cut < 0:
        raise ValueError(f"{path}: no line break in {size} bytes from offset {begin}")
    data = data[: cut + 1]
    data.decode("utf-8")  # cut at a line break, so this cannot split a character
    return data


def write_temp(data: bytes, name: str, directory: Path) -> Path:
    p = directory / name
    p.write_bytes(data)
    return p


def scratch_dir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="bpe_studio_bench_")
