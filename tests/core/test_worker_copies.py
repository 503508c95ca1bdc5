"""What a Dask worker checks before counting (``on_worker``), without a cluster: the
fingerprint samples the first and the last block and blocks spread between, so a byte
changed there is seen and a copy with other times is not; a worker reads the sampled bytes
once per file (a ``stat`` per task), again once its copy changes; local training takes no
fingerprint; an error met on a worker names it. Clusters: test_cluster."""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest
from core_helpers import EOT, SLICES, read_fixture

from bpe_studio.core import count_file
from bpe_studio.core.corpus import counting, on_worker
from bpe_studio.core.corpus.cluster_address import ClusterError
from bpe_studio.core.corpus.on_worker import (
    BLOCK,
    SAMPLES,
    check_copy,
    count_on_worker,
    fingerprint,
    fingerprinted,
)
from bpe_studio.core.corpus.sources import CorpusError, resolve_corpus
from bpe_studio.core.corpus.tasks import CountTask


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(read_fixture(SLICES["english"]).encode("utf-8")[:300_000])
    return path


def test_the_fingerprint_hashes_evenly_spread_blocks_first_and_last_included(corpus):
    data = corpus.read_bytes()
    # hashlib over SAMPLES blocks evenly spread from the first to the last, read here.
    starts = [i * (len(data) - BLOCK) // (SAMPLES - 1) for i in range(SAMPLES)]
    blocks = [data[a : a + BLOCK] for a in starts]
    assert blocks[-1] == data[-BLOCK:]
    digest = hashlib.blake2b(b"".join(blocks), digest_size=16).hexdigest()
    assert fingerprint(str(corpus)) == (len(data), digest)


@pytest.mark.parametrize(("sample", "within"), [(0, 0), (SAMPLES // 2, 100), (SAMPLES - 1, -1)])
def test_a_byte_changed_in_a_sampled_block_changes_the_fingerprint(
    corpus, tmp_path, sample, within
):
    data = bytearray(corpus.read_bytes())
    start = sample * (len(data) - BLOCK) // (SAMPLES - 1)
    data[start + within % BLOCK] ^= 0x20
    other = tmp_path / "other.txt"
    other.write_bytes(bytes(data))
    assert fingerprint(str(other)) != fingerprint(str(corpus))


def test_a_copy_with_other_times_has_the_same_fingerprint(corpus, tmp_path):
    copy = shutil.copyfile(corpus, tmp_path / "copy.txt")
    os.utime(copy, ns=(10**18, 10**18))
    assert fingerprint(str(copy)) == fingerprint(str(corpus))


def test_a_small_file_is_hashed_whole(tmp_path):
    path = tmp_path / "s.txt"
    path.write_bytes(b"x" * (SAMPLES * BLOCK))
    assert fingerprint(str(path)).digest == (
        hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    )


def test_a_worker_reads_the_samples_once_per_file_and_again_once_it_changed(corpus, monkeypatch):
    (f,) = [fingerprinted(f) for f in resolve_corpus(corpus)]
    taken = []
    monkeypatch.setattr(on_worker, "fingerprint", lambda p: taken.append(p) or fingerprint(p))
    for _ in range(3):
        check_copy(f, "tcp://w:1")
    assert taken == [f.url]
    os.utime(corpus, ns=(10**18, 10**18))  # its copy changed (in time only: still the same)
    check_copy(f, "tcp://w:1")
    assert taken == [f.url, f.url]
    corpus.write_bytes(corpus.read_bytes().upper())
    with pytest.raises(CorpusError, match="its bytes differ from this machine's"):
        check_copy(f, "tcp://w:1")


def test_local_training_takes_no_fingerprint(corpus, monkeypatch):
    def refused(path):
        raise AssertionError(f"a fingerprint of {path} was taken")

    monkeypatch.setattr(on_worker, "fingerprint", refused)
    monkeypatch.setattr(counting, "IN_PROCESS_LIMIT", 64 * 1024)  # worker processes too
    monkeypatch.setattr(counting, "CHUNK_BYTES", 64 * 1024)
    expected = count_file(corpus, [EOT], workers=1)
    assert count_file(corpus, [EOT], workers=2) == expected
    assert all(f.fingerprint is None for f in resolve_corpus(corpus))


def test_a_module_missing_on_a_worker_says_to_install_it_there(corpus, monkeypatch):
    (f,) = resolve_corpus(corpus)

    def without_zstandard(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'zstandard'", name="zstandard")

    monkeypatch.setattr(on_worker, "count_task", without_zstandard)
    monkeypatch.setattr(on_worker, "worker_address", lambda: "tcp://10.0.0.7:4242")
    with pytest.raises(ClusterError) as info:
        count_on_worker(CountTask(f, 0, f.size, nbytes=f.size), [EOT], "gpt2")
    assert str(info.value) == (
        f"the cluster's worker tcp://10.0.0.7:4242 cannot read {corpus}: it has no zstandard "
        "module; install bpe-studio with the same extras on every worker "
        "(pip install 'bpe-studio[cluster]')"
    )
