"""Whether NumPy asks for huge pages for its large arrays, chosen for the machine.

What it does: NumPy advises Linux to back each array of 4 MB or more with 2 MB pages
(``madvise(MADV_HUGEPAGE)``). On a virtual machine whose balloon device takes freed memory
back (virtio's free page reporting: the Firecracker VM our figures come from has it), the
large free blocks such pages are cut from have been handed back to the host. The first
touch of each then waits for the host: the merge engine took 2.4 s instead of 1.0 s to
build its arrays for 200 MB of text, with the system's CPU time tripled (docs/training.md,
"Huge pages on a ballooned VM").
:func:`follow_machine` turns the advice off for this process there (forked workers inherit
the setting), once, the first time kernels are imported (``kernel_loader``). Elsewhere, or
when the user set NumPy's own ``NUMPY_MADVISE_HUGEPAGE``, NumPy's choice stands.
What it leaves out: anything but NumPy's own allocations (numba's are never advised).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

# The virtio device id of a memory balloon, and its feature bit for free page reporting
# (VIRTIO_BALLOON_F_REPORTING in the virtio specification).
BALLOON_DEVICE = "0x0005"
REPORTING_BIT = 5
VIRTIO_DEVICES = Path("/sys/bus/virtio/devices")

_followed = False


def free_page_reporting(devices: Path = VIRTIO_DEVICES) -> bool:
    """Whether a virtio balloon among ``devices`` (sysfs: a folder per device holding
    ``device`` and ``features``, one character per feature bit) reports free pages."""
    try:
        folders = list(devices.iterdir())
    except OSError:
        return False
    for folder in folders:
        try:
            if (folder / "device").read_text().strip() != BALLOON_DEVICE:
                continue
            features = (folder / "features").read_text().strip()
        except OSError:
            continue
        if len(features) > REPORTING_BIT and features[REPORTING_BIT] == "1":
            return True
    return False


def _numpy_setter() -> Callable[[bool], bool] | None:
    """NumPy's switch for the advice (``_set_madvise_hugepage``: it returns the previous
    setting), or None where this NumPy has none."""
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        setter = getattr(module, "_set_madvise_hugepage", None)
        if setter is not None:
            return setter
    return None


def follow_machine(devices: Path = VIRTIO_DEVICES) -> bool:
    """Turn NumPy's huge-page advice off in this process where this machine's balloon reports
    free pages (see the module docstring), unless ``NUMPY_MADVISE_HUGEPAGE`` is set. Looks
    once per process; returns whether the advice is now off because of it."""
    global _followed
    if _followed:
        return False
    _followed = True
    if not sys.platform.startswith("linux") or "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        return False
    if not free_page_reporting(devices):
        return False
    setter = _numpy_setter()
    if setter is None:
        return False
    setter(False)
    return True
