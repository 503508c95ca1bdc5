"""Pre-token counting on a Dask cluster (#28): the merges equal local training on every
fixture slice; a worker killed mid-count changes nothing; compressed globs, memory://, JSON
Lines and Parquet count as they do locally; a stop cancels every task; an unreachable or bad
address is one line naming it; a worker whose copy of a file is not the client's (other bytes,
shorter, missing) refuses it, naming the file and the worker, while a copy with other times
is counted.

A LocalCluster of 2 worker processes (one thread each) serves the module; the test that
kills a worker has a cluster of its own. Local training (``workers=1``) is the oracle: it is
checked against the slow reference elsewhere (test_cs336, test_patterns)."""

from __future__ import annotations

import gzip
import json
import logging
import multiprocessing
import os
import shutil
import signal
import sys
import threading
from collections import Counter
from dataclasses import replace

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import regex
from core_helpers import EOT, SLICES, fixture_path, read_fixture, write_text
from distributed import Client, LocalCluster
from tiktoken_ext.openai_public import r50k_pat_str

from bpe_studio.core import TrainingCancelled, count_file, train_bpe
from bpe_studio.core.corpus import cluster, counting
from bpe_studio.core.corpus.cluster import ClusterError, count_on_cluster, parse_address
from bpe_studio.core.corpus.sources import CorpusError, resolve_corpus

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "kill"), reason="worker processes are killed"),
    pytest.mark.dask_in_process,
    pytest.mark.slow,  # each module starts a local cluster of worker processes
]


def local_cluster(workers: int = 2) -> LocalCluster:
    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=50,
    )


@pytest.fixture(scope="module")
def client():
    with local_cluster() as lc, Client(lc) as c:
        yield c


@pytest.fixture
def many_tasks(monkeypatch):
    """Chunks of 32 KB and reductions of 3 at a time: a 300 KB slice is some ten tasks and
    two levels of the reduction tree."""
    monkeypatch.setattr(counting, "CHUNK_BYTES", 32 * 1024)
    monkeypatch.setattr(cluster, "FAN_IN", 3)


@pytest.mark.parametrize("key", list(SLICES))
def test_merges_equal_local_training_on_every_slice(client, many_tasks, key):
    path = fixture_path(SLICES[key])
    local = train_bpe(path, 600, [EOT], workers=1)
    seen = []
    on_cluster = train_bpe(path, 600, [EOT], cluster=client, progress=lambda d, t: seen.append(d))
    assert on_cluster == local
    # Progress moved task by task, up to the whole corpus.
    assert len(seen) > 2 and seen == sorted(seen) and seen[-1] == path.stat().st_size


def test_a_worker_killed_mid_count_changes_nothing(tmp_path, monkeypatch):
    text = "".join(read_fixture(SLICES[k]) for k in ("english", "code", "chinese"))
    path = write_text(tmp_path / "c.txt", text)
    monkeypatch.setattr(counting, "CHUNK_BYTES", 16 * 1024)
    local = train_bpe(path, 500, [EOT], workers=1)
    killed = []
    with local_cluster() as lc, Client(lc) as c:
        pids = c.run(os.getpid)

        def progress(done: int, total: int) -> None:
            # At the first finished task, most are still to run (or running): kill a worker.
            if 0 < done < total and not killed:
                victim = next(iter(pids.values()))
                os.kill(victim, signal.SIGKILL)
                killed.append(victim)

        got = train_bpe(path, 500, [EOT], cluster=c, progress=progress)
        assert killed and killed[0] not in c.run(os.getpid).values()  # a new worker took over
    assert got == local


def test_compressed_globs_memory_jsonl_and_parquet(client, tmp_path):
    texts = [read_fixture(SLICES[k])[:50_000] for k in ("english", "code", "tinystories")]
    for i, text in enumerate(texts):
        (tmp_path / f"part-{i}.txt.gz").write_bytes(gzip.compress(text.encode("utf-8")))
    docs = [p for p in read_fixture(SLICES["mixed_web"]).split("\n") if p.strip()]
    with gzip.open(tmp_path / "d.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"body": d}) + "\n" for d in docs[:200])
    table = pa.table({"body": docs[200:]})
    pq.write_table(table, tmp_path / "d.parquet", row_group_size=40)
    fs = fsspec.filesystem("memory")
    fs.pipe("/t28c/m.txt", read_fixture(SLICES["chinese"])[:40_000].encode("utf-8"))
    try:
        corpus_spec = [
            str(tmp_path / "part-*.txt.gz"),
            tmp_path / "d.jsonl.gz",
            tmp_path / "d.parquet",
            "memory://t28c/*.txt",
        ]
        files = resolve_corpus(corpus_spec)
        assert len(files) == 6
        local = count_file(files, [EOT], workers=1, text_field="body")
        got = count_on_cluster(files, [EOT], cluster=client, text_field="body")
        assert got == local
        assert train_bpe(corpus_spec, 500, [EOT], cluster=client, text_field="body") == (
            train_bpe(corpus_spec, 500, [EOT], workers=1, text_field="body")
        )
    finally:
        fs.rm("/t28c", recursive=True)


def test_a_memory_file_sent_with_its_tasks_sets_off_no_warning(client):
    """An audit: from Python, a memory:// corpus of 14 MB printed Dask's "UserWarning:
    Sending large graph" (its bytes travel in its tasks, as meant). The threshold is
    lowered here so that a small file would set it off."""
    import warnings

    import dask

    fs = fsspec.filesystem("memory")
    fs.pipe("/t36w/m.txt", read_fixture(SLICES["english"])[:40_000].encode("utf-8"))
    try:
        with (
            dask.config.set({"distributed.admin.large-graph-warning-threshold": "1kB"}),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            got = count_on_cluster(resolve_corpus("memory://t36w/m.txt"), [EOT], cluster=client)
        assert got == count_file("memory://t36w/m.txt", [EOT], workers=1)
        assert not [w for w in caught if "large graph" in str(w.message)]
    finally:
        fs.rm("/t36w", recursive=True)


def test_a_missing_field_on_the_cluster_names_the_file_and_line(client, tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"text": "a"}\n{"title": "b"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"m\.jsonl: line 2: no field 'text'") as info:
        train_bpe(path, 300, [EOT], cluster=client)
    # It says where it was read.
    assert_names_a_worker(client, str(info.value), "(read by the cluster's worker ")


def worker_sees(monkeypatch, copy):
    """The workers find ``copy`` under the client's file's name, as a worker on another
    machine finds its own copy: the tasks are planned on the client's file, then sent
    naming ``copy``."""
    planned = cluster.make_tasks

    def sent(*args, **kwargs):
        tasks = planned(*args, **kwargs)
        return [replace(t, file=replace(t.file, url=os.fspath(copy))) for t in tasks]

    monkeypatch.setattr(cluster, "make_tasks", sent)


def assert_names_a_worker(client, message, before):
    """``message`` names, after ``before``, the address of one of ``client``'s workers."""
    assert before in message, message
    assert any(f"{before}{w}" in message for w in client.scheduler_info()["workers"]), message


def with_other_times(path):
    """A copy of ``path`` as cp makes one: the same bytes, other times and inode."""
    copy = shutil.copyfile(path, path.with_name("copy-" + path.name))
    os.utime(copy, ns=(10**18, 10**18))
    return copy


@pytest.fixture
def corpus_and_copies(tmp_path):
    """A corpus, a copy of the same size whose bytes differ, and a shorter one."""
    data = read_fixture(SLICES["english"])[:200_000].encode("utf-8")
    path = tmp_path / "c.txt"
    path.write_bytes(data)
    other = tmp_path / "upper.txt"
    other.write_bytes(data.upper())  # ASCII letters only: the same size
    short = tmp_path / "short.txt"
    short.write_bytes(data[: len(data) // 2])
    return path, other, short


def test_a_worker_with_other_bytes_under_the_name_is_refused(
    client, monkeypatch, corpus_and_copies
):
    path, other, _ = corpus_and_copies
    assert other.stat().st_size == path.stat().st_size
    # Counted, the other copy would give other merges: nothing would say so.
    assert train_bpe(other, 300, [EOT], workers=1) != train_bpe(path, 300, [EOT], workers=1)
    worker_sees(monkeypatch, other)
    with pytest.raises(CorpusError) as info:
        train_bpe(path, 300, [EOT], cluster=client)
    message = str(info.value)
    assert message.startswith(f"{path}: the cluster's worker ")
    assert_names_a_worker(client, message, "the cluster's worker ")
    # The worker read its copy (here at another path): the message says where it looked.
    assert f"sees another copy of it at {other} (its bytes differ from this machine's)" in message
    assert "every worker must see the same file under that name" in message


def test_a_worker_with_a_shorter_copy_says_so_not_that_the_file_changed(
    client, monkeypatch, corpus_and_copies
):
    path, _, short = corpus_and_copies
    worker_sees(monkeypatch, short)
    with pytest.raises(CorpusError) as info:
        train_bpe(path, 300, [EOT], cluster=client)
    message = str(info.value)
    there, here = short.stat().st_size, path.stat().st_size
    assert f"sees another copy of it at {short} ({there:,} bytes there, {here:,} here)" in message
    assert_names_a_worker(client, message, "the cluster's worker ")
    assert "changed while" not in message


def test_a_worker_without_the_file_says_so(client, monkeypatch, corpus_and_copies):
    path, _, _ = corpus_and_copies
    worker_sees(monkeypatch, path.with_name("absent.txt"))
    with pytest.raises(CorpusError) as info:
        train_bpe(path, 300, [EOT], cluster=client)
    message = str(info.value)
    assert message.startswith(f"{path}: the cluster's worker ")
    absent = path.with_name("absent.txt")
    assert f"cannot read it at {absent} (No such file or directory), though this machine can" in (
        message
    )
    assert_names_a_worker(client, message, "the cluster's worker ")


def test_a_relative_name_is_said_with_the_path_the_worker_looked_at(
    client, monkeypatch, corpus_and_copies
):
    """An audit: a corpus named relative to the client's folder ("t.txt") is looked for by
    its absolute path; a worker without it was said not to read "t.txt", which a worker
    started in another folder may well hold. The message names the path it looked at."""
    path, _, _ = corpus_and_copies
    monkeypatch.chdir(path.parent)
    absent = path.with_name("absent.txt")
    worker_sees(monkeypatch, absent)
    with pytest.raises(CorpusError) as info:
        train_bpe(path.name, 300, [EOT], cluster=client)
    message = str(info.value)
    assert message.startswith(f"{path.name}: the cluster's worker ")
    assert f"cannot read it at {absent} (No such file or directory)" in message


def test_a_worker_copy_with_other_times_is_counted(client, monkeypatch, corpus_and_copies):
    path, _, _ = corpus_and_copies
    worker_sees(monkeypatch, with_other_times(path))
    # tiktoken's GPT-2 pattern, run by regex, says what the pre-tokens are.
    text = path.read_text(encoding="utf-8")
    expected = Counter(
        t.encode("utf-8") for doc in text.split(EOT) for t in regex.findall(r50k_pat_str, doc)
    )
    assert count_on_cluster(resolve_corpus(path), [EOT], cluster=client) == expected
    assert train_bpe(path, 300, [EOT], cluster=client) == train_bpe(path, 300, [EOT], workers=1)


def test_a_stop_cancels_every_task(client, tmp_path, monkeypatch):
    monkeypatch.setattr(counting, "CHUNK_BYTES", 16 * 1024)
    path = write_text(tmp_path / "c.txt", read_fixture(SLICES["english"]) * 2)
    files = resolve_corpus(path)
    stop = threading.Event()
    # Every future the count makes is kept here: released, a future's task would go whether
    # it was cancelled or not; kept, only a cancel ends one that has not run.
    made = []
    for name in ("map", "submit"):
        original = getattr(client, name)

        def recorded(*args, _original=original, **kwargs):
            got = _original(*args, **kwargs)
            made.extend(got if isinstance(got, list) else [got])
            return got

        monkeypatch.setattr(client, name, recorded)
    with pytest.raises(TrainingCancelled):
        count_on_cluster(
            files, [EOT], cluster=client, progress=lambda d, t: d and stop.set(),
            should_stop=stop.is_set, measured=lambda positions: None,
        )  # fmt: skip
    assert len(made) > 8
    deadline = 200
    while any(f.status == "pending" for f in made) and deadline:
        threading.Event().wait(0.05)
        deadline -= 1
    assert {f.status for f in made} <= {"cancelled", "finished"}
    assert any(f.status == "cancelled" for f in made)


def test_a_local_cluster_it_starts_leaves_no_process(tmp_path):
    path = write_text(tmp_path / "t.txt", read_fixture(SLICES["tinystories"])[:20_000])
    before = set(multiprocessing.active_children())
    got = train_bpe(path, 300, [EOT], cluster="local:2")
    assert got == train_bpe(path, 300, [EOT], workers=1)
    assert set(multiprocessing.active_children()) <= before


def test_a_scheduler_without_a_worker_is_one_line_not_a_wait_for_ever(tmp_path, monkeypatch):
    """A review: a scheduler no worker had joined took the tasks ("1 task on 1 worker") and
    the count waited for ever. It is waited for a while (a stop ends the wait), then named
    with what to start."""
    from bpe_studio.core.corpus import cluster as cluster_module

    monkeypatch.setattr(cluster_module, "WORKER_WAIT", 0.5)
    path = write_text(tmp_path / "t.txt", "some text to count")
    with LocalCluster(n_workers=0, processes=True, dashboard_address=":0") as lc:
        address = lc.scheduler_address
        with pytest.raises(ClusterError) as info:
            train_bpe(path, 300, [EOT], cluster=address)
        assert str(info.value) == (
            f"cluster {address!r}: the scheduler at {address} has no worker (none joined "
            f"within 0.5 s): start some with `dask worker {address}`"
        )
        monkeypatch.setattr(cluster_module, "WORKER_WAIT", 60.0)
        with pytest.raises(TrainingCancelled):
            count_on_cluster(resolve_corpus(path), [EOT], cluster=address, should_stop=lambda: True)


def test_an_unreachable_scheduler_is_one_line_naming_it(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = write_text(tmp_path / "t.txt", "some text to count")
    with pytest.raises(ClusterError) as info:
        train_bpe(path, 300, [EOT], cluster=f"tcp://127.0.0.1:{port}")
    assert str(info.value).startswith(
        f"cluster 'tcp://127.0.0.1:{port}': nothing listens at 127.0.0.1:{port}"
    )
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("bad", ["", "local:0", "local:x", "cluster", "tcp://"])
def test_bad_addresses_are_named(bad):
    with pytest.raises(ClusterError, match=repr(bad).replace("'", "'?")):
        parse_address(bad)
    assert parse_address("local") is None and parse_address("local:3") == 3


def test_a_cluster_without_distributed_says_what_to_install(tmp_path, monkeypatch):
    path = write_text(tmp_path / "a.txt", "hello world")
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ClusterError) as info:
        train_bpe(path, 300, [], cluster="local:2")
    assert str(info.value) == (
        "counting on a cluster needs dask.distributed: pip install 'bpe-studio[cluster]'"
    )


def lose_the_work(monkeypatch, error):
    """``_reduce`` raises ``error(counted)`` as the tasks run: what Dask raises when the
    workers die or the scheduler goes away (its client logging the loss, as it does)."""

    def reduce(client, counted, *args, **kwargs):
        logging.getLogger("distributed.client").error("Failed to reconnect to scheduler")
        raise error(counted)

    monkeypatch.setattr(cluster, "_reduce", reduce)


def test_workers_dying_say_what_task_and_what_to_give_them(client, tmp_path, monkeypatch):
    from types import SimpleNamespace

    from distributed import KilledWorker

    path = write_text(tmp_path / "c.txt", read_fixture(SLICES["english"])[:30_000])
    worker = SimpleNamespace(address="tcp://127.0.0.1:1")
    lose_the_work(monkeypatch, lambda counted: KilledWorker(counted[0].key, worker, 3))
    with pytest.raises(ClusterError) as info:
        train_bpe(path, 300, [EOT], cluster=client)
    scheduler = client.scheduler.address
    assert info.value.reason == (
        f"the workers of the scheduler at {scheduler} died 4 times running one task (29.30 kiB "
        f"of {path}), most often for lack of memory: give each worker more memory (about "
        "1 GiB: `dask worker --memory-limit 1GiB`) or start fewer workers per machine "
        "(`--nworkers`)"
    )


def test_a_scheduler_gone_mid_count_is_one_line(client, tmp_path, monkeypatch, caplog):
    from distributed.client import FutureCancelledError

    path = write_text(tmp_path / "c.txt", read_fixture(SLICES["english"])[:30_000])
    lost = "scheduler-connection-lost"
    lose_the_work(monkeypatch, lambda counted: FutureCancelledError(counted[0].key, lost))
    with pytest.raises(ClusterError) as info:
        train_bpe(path, 300, [EOT], cluster=client)
    assert info.value.reason == (
        f"the scheduler at {client.scheduler.address} went away mid-count (the connection to "
        "it was lost); restart it and run again"
    )
    assert not [r for r in caplog.records if r.name == "distributed.client"]
