"""A pool worker keeps its freed memory for the next chunk (``core.io.worker_memory``): with
the setting, a block allocated again after being freed faults no page in; without it, glibc
gave it back and the next one faulted every page in again. Each case runs in a child process,
so this one's allocator is left as it is."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap

import pytest

from bpe_studio.core.io import worker_memory


def _glibc() -> bool:
    try:
        return sys.platform.startswith("linux") and hasattr(
            ctypes.CDLL(None), "gnu_get_libc_version"
        )
    except OSError:
        return False


# A block the size of a chunk's code points: 4,096 pages of 4 KiB (fewer faults where the
# kernel backs it with huge pages; a bytearray is never advised to, as NumPy's arrays are).
BLOCK = 16 * 1024 * 1024

_CHILD = textwrap.dedent(
    """
    import resource, sys
    from bpe_studio.core.io.worker_memory import keep_freed_memory

    keep = sys.argv[1] == "keep"
    if keep:
        assert keep_freed_memory()
    faults = []
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        block = bytearray({block})
        block[::4096] = bytes(len(block[::4096]))  # every page written
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        del block
    print(*faults)
    """
).format(block=BLOCK)


def _faults(mode: str) -> list[int]:
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    return [int(x) for x in run.stdout.split()]


@pytest.mark.skipif(not _glibc(), reason="mallopt's thresholds are glibc's")
def test_a_freed_block_is_reused_without_faulting_pages_in():
    kept = _faults("keep")
    default = _faults("default")
    # The first block faults in either way.
    assert min(kept[0], default[0]) >= 8
    # glibc's default: the freed block was unmapped, so the second faulted in again.
    assert default[1] >= default[0] // 2
    # Kept: the second and third reuse the first's pages.
    assert max(kept[1:]) <= kept[0] // 10


def test_nothing_is_changed_off_linux(monkeypatch):
    monkeypatch.setattr(worker_memory.sys, "platform", "darwin")
    assert worker_memory.keep_freed_memory() is False


_GIVE_BACK = textwrap.dedent(
    """
    from bpe_studio.core.io.worker_memory import give_back_freed_memory, keep_freed_memory

    def resident():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    assert keep_freed_memory()  # freed memory stays in the heap, as in a long app session
    blocks = [bytearray(64 * 1024) for _ in range(1024)]  # 64 MiB from the heap
    for block in blocks:
        block[::4096] = bytes(len(block[::4096]))
    del blocks
    kept = resident()
    assert give_back_freed_memory()
    print(kept, resident())
    """
)


@pytest.mark.skipif(not _glibc(), reason="malloc_trim is glibc's")
def test_freed_memory_is_given_back_to_the_system():
    """A session audit: the app grew with every train-and-load cycle, its freed memory kept
    by glibc; what the app calls when a run or a tokenizer is let go returns it."""
    run = subprocess.run(
        [sys.executable, "-c", _GIVE_BACK], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    kept, after = (int(x) for x in run.stdout.split())
    assert kept - after >= 48 * 1024 * 1024  # most of the 64 MiB freed went back


def test_nothing_is_given_back_off_linux(monkeypatch):
    monkeypatch.setattr(worker_memory.sys, "platform", "darwin")
    assert worker_memory.give_back_freed_memory() is False
