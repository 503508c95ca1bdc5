"""The kernels' helpers are compiled without numba's reference counts (``io.kernel_options``):
with them, every call increfs and decrefs each array it is passed, which perf found to be a
quarter of a first encode of Chinese. A helper that allocates keeps them (numba refuses an
allocation without), and so do the kernels Python calls."""

from __future__ import annotations

import pytest

pytest.importorskip("numba", reason="numba is not installed here: the Python paths run instead")

from bpe_studio.core.encode.merging import encode_kernel  # noqa: E402
from bpe_studio.core.pretokenization import count_kernels, scan_kernels  # noqa: E402
from bpe_studio.core.train import merge_kernel  # noqa: E402

# The helpers each kernel calls once per piece or per merge site (what perf showed).
PER_PIECE = [
    (encode_kernel, ["_find", "_from_parts", "_new_piece", "_hash_top", "_insert", "_rank"]),
    (merge_kernel, ["_pair_id", "_add_occurrence", "_push", "_sift_up", "_pop_valid"]),
    (count_kernels, ["_hash", "_same", "_short_key", "_home", "_same_bytes"]),
    (scan_kernels, ["_run", "_run_other", "_space_run", "_loop_o200k", "scan_into"]),
]


def _nrt(function) -> bool | None:
    return function.targetoptions.get("_nrt")


@pytest.mark.parametrize("module, names", PER_PIECE, ids=lambda m: getattr(m, "__name__", ""))
def test_per_piece_helpers_count_no_references(module, names):
    assert {name: _nrt(getattr(module, name)) for name in names} == dict.fromkeys(names, False)


def test_helpers_that_allocate_and_the_kernels_keep_them():
    for name in ["_merge_long", "_char_tokens", "_valid_alone"]:
        assert _nrt(getattr(encode_kernel, name)) is True, name
    for module in (encode_kernel, merge_kernel, count_kernels, scan_kernels):
        for kernel in module.KERNELS:
            assert _nrt(kernel) is None, kernel.__name__  # numba's default: counted
