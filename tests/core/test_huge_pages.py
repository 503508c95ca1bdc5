"""NumPy's huge-page advice, turned off on a virtual machine whose balloon reports free pages
(``core.io.huge_pages``), read from a sysfs tree built in a temporary folder."""

from __future__ import annotations

import types

import pytest

from bpe_studio.core.io import huge_pages
from bpe_studio.core.io.kernel_loader import KernelLoader

# What this machine's balloon (Firecracker's) shows: bits 1, 2, 5 and 7 set, then bit 32.
REPORTING = "0110010100000000000000000000000010000000"
NOT_REPORTING = "0110000100000000000000000000000010000000"


def sysfs(tmp_path, *devices: tuple[str, str]):
    root = tmp_path / "devices"
    root.mkdir()
    for i, (device, features) in enumerate(devices):
        folder = root / f"virtio{i}"
        folder.mkdir()
        (folder / "device").write_text(device + "\n")
        (folder / "features").write_text(features + "\n")
    return root


@pytest.mark.parametrize(
    ("devices", "expected"),
    [
        ([("0x0001", NOT_REPORTING), ("0x0005", REPORTING)], True),
        ([("0x0005", NOT_REPORTING)], False),
        # A network card (device 1) with its own bit 5 set is no balloon.
        ([("0x0001", REPORTING), ("0x0002", REPORTING)], False),
        ([("0x0005", "01")], False),
        ([], False),
    ],
)
def test_a_balloon_that_reports_free_pages_is_found(tmp_path, devices, expected):
    assert huge_pages.free_page_reporting(sysfs(tmp_path, *devices)) is expected


def test_no_virtio_bus_and_unreadable_devices_count_as_none(tmp_path):
    assert huge_pages.free_page_reporting(tmp_path / "missing") is False
    root = sysfs(tmp_path, ("0x0005", REPORTING))
    (root / "virtio0" / "features").unlink()
    (root / "broken").mkdir()
    assert huge_pages.free_page_reporting(root) is False


@pytest.fixture
def numpy_advice():
    """NumPy's switch, put back as it was after the test."""
    setter = huge_pages._numpy_setter()
    assert setter is not None, "this NumPy has no _set_madvise_hugepage"
    before = setter(True)
    setter(before)
    yield setter
    setter(before)


def fresh(monkeypatch, environ_value=None):
    monkeypatch.setattr(huge_pages, "_followed", False)
    monkeypatch.setattr(huge_pages.sys, "platform", "linux")
    if environ_value is None:
        monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    else:
        monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", environ_value)


def test_the_advice_is_turned_off_once_where_the_balloon_reports(
    tmp_path, monkeypatch, numpy_advice
):
    fresh(monkeypatch)
    numpy_advice(True)
    root = sysfs(tmp_path, ("0x0005", REPORTING))
    assert huge_pages.follow_machine(root) is True
    assert numpy_advice(True) is False  # it was off; on again for the next check
    assert huge_pages.follow_machine(root) is False, "looked at once per process"
    assert numpy_advice(True) is True


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_the_advice_stands_elsewhere(tmp_path, monkeypatch, numpy_advice, platform):
    fresh(monkeypatch)
    monkeypatch.setattr(huge_pages.sys, "platform", platform)
    numpy_advice(True)
    devices = ("0x0005", REPORTING) if platform == "darwin" else ("0x0005", NOT_REPORTING)
    assert huge_pages.follow_machine(sysfs(tmp_path, devices)) is False
    assert numpy_advice(True) is True


def test_the_users_own_setting_stands(tmp_path, monkeypatch, numpy_advice):
    fresh(monkeypatch, environ_value="1")
    numpy_advice(True)
    assert huge_pages.follow_machine(sysfs(tmp_path, ("0x0005", REPORTING))) is False
    assert numpy_advice(True) is True


def test_importing_a_group_of_kernels_sets_the_advice(monkeypatch):
    calls = []
    monkeypatch.setattr(huge_pages, "follow_machine", lambda: calls.append("followed"))

    def loader(importer):
        return KernelLoader(
            name="test",
            importer=importer,
            kernels_of=lambda module: (),
            warm_up=lambda module: None,
            child_code="",
            compiling_message="",
            unavailable=ImportError,
            explain=str,
        )

    module = types.ModuleType("kernels")
    ok = loader(lambda: module)
    assert ok.imported() is module and ok.imported() is module
    assert calls == ["followed"]

    def broken():
        raise ImportError("no numba")

    assert loader(broken).imported() is None
    assert calls == ["followed"], "a failed import allocates nothing"
