"""Cluster addresses (#32): parsed by Dask's own parser, every refusal one line naming the
address, at once (no connection is tried for an address that cannot be one, and an address
where nothing listens fails on a plain socket, before Dask waits); ``cluster=5`` a TypeError;
``local:N`` capped at what the machine holds; a script starting a local cluster from its
unguarded top level refused, naming the line (it printed ~500 lines of "Nanny failed to
start"). No test here starts a cluster but the script's."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from core_helpers import REPO_ROOT, write_text

from bpe_studio.core import train_bpe
from bpe_studio.core.corpus import cluster_start, counting
from bpe_studio.core.corpus.cluster_address import ClusterError, cluster_address, parse_address
from bpe_studio.core.corpus.cluster_start import local_workers, start_cluster


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def no_connection(monkeypatch):
    """Fail the test if anything tries to connect."""

    def connect(*args, **kwargs):
        raise AssertionError(f"a connection was tried: {args}")

    monkeypatch.setattr(socket, "create_connection", connect)
    import distributed

    monkeypatch.setattr(distributed, "Client", connect)


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("tls://h:8786", "tls:// needs TLS certificates, and Dask's configuration names none"),
        ("tcp://h:abc", "the port 'abc' is not a number"),
        ("tcp://h:", "the port '' is not a number"),
        ("inproc://x", "inproc:// names a scheduler inside one Python process"),
        ("tcp://:99999", "port 99999 is out of range (1 to 65535)"),
        ("tcp://:8786", "no host before the port: give tcp://HOST:8786"),
        ("tcp://", "no host: give local, local:N"),
        ("ucx://h:1", "ucx:// is not a transport Dask joins a scheduler over here"),
        ("h:8786", "give local, local:N (N worker processes here) or a Dask scheduler's"),
        ("tcp://[::1:8786", "invalid address '[::1:8786'"),
        ("local:0", "local:N takes a worker count of at least 1"),
        ("local:²", "local:N takes a worker count of at least 1"),  # isdigit(), no number
    ],
)
def test_a_bad_address_is_one_line_and_never_connects(no_connection, address, reason):
    with pytest.raises(ClusterError) as info:
        start_cluster(address)
    error = info.value
    assert (error.address, error.reason[: len(reason)]) == (address, reason)
    assert str(error) == f"cluster {address!r}: {error.reason}" and "\n" not in str(error)


def test_good_addresses_as_dask_reads_them():
    assert cluster_address("tcp://sched:8786").url == "tcp://sched:8786"
    assert cluster_address("tcp://sched").url == "tcp://sched:8786"  # the scheduler's port
    ipv6 = cluster_address("tcp://[::1]:9000")
    assert (ipv6.host, ipv6.port, ipv6.url) == ("::1", 9000, "tcp://[::1]:9000")
    assert cluster_address("ws://h:80").url == "ws://h:80"
    assert (parse_address("local"), parse_address("local:3"), parse_address("tcp://h:1")) == (
        None,
        3,
        -1,
    )


def test_nothing_listening_fails_on_the_socket_before_dask(monkeypatch):
    import distributed

    def client(*args, **kwargs):
        raise AssertionError("Dask's client was started, which waits for its timeout")

    monkeypatch.setattr(distributed, "Client", client)
    port = closed_port()
    with pytest.raises(ClusterError) as info:
        start_cluster(f"tcp://127.0.0.1:{port}")
    assert info.value.reason == (
        f"nothing listens at 127.0.0.1:{port} (is `dask scheduler` running there, and the port "
        "open?)"
    )
    with pytest.raises(ClusterError, match=r"unknown host 'no-such-host\.invalid'"):
        start_cluster("tcp://no-such-host.invalid:8786")


def test_a_cluster_that_is_neither_an_address_nor_a_client(tmp_path):
    path = write_text(tmp_path / "a.txt", "hello world")
    with pytest.raises(TypeError, match=r"cluster must be an address .* or a distributed.Client"):
        train_bpe(path, 300, [], cluster=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"a cluster address is a string"):
        cluster_address(5)  # type: ignore[arg-type]


def test_local_workers_are_capped_by_cores_and_memory(monkeypatch):
    import distributed.system

    monkeypatch.setattr(counting, "available_cores", lambda: 2)
    monkeypatch.setattr(distributed.system, "MEMORY_LIMIT", 64 * 2**30)
    assert local_workers(2) == (2, None) and local_workers(None) == (2, None)
    workers, note = local_workers(100)
    assert workers == 2
    assert note == (
        "capped at 2: this machine has 2 cores and 64.0 GiB of memory, and a worker takes a "
        "core and 1 GiB"
    )
    monkeypatch.setattr(counting, "available_cores", lambda: 64)
    monkeypatch.setattr(distributed.system, "MEMORY_LIMIT", 3 * cluster_start.WORKER_MEMORY)
    assert local_workers(None)[0] == 3 and local_workers(8)[0] == 3
    assert local_workers(2) == (2, None)


SCRIPT = """\
from bpe_studio import train_bpe

vocab, merges = train_bpe({corpus!r}, 300, [], cluster="local:2")
print(len(merges))
"""


def test_a_script_without_the_main_guard_is_told_what_to_add(tmp_path):
    corpus = write_text(tmp_path / "c.txt", "some text to count " * 100)
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(corpus=str(corpus)), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": ""},
        timeout=300,
    )
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last == (
        "bpe_studio.core.corpus.cluster_address.ClusterError: cluster 'local:2': starting local "
        f"worker processes from the top level of {script}, line 3: each worker runs the script "
        'again; put the code that trains under `if __name__ == "__main__":`'
    )
    assert "Nanny" not in result.stderr and len(result.stderr.splitlines()) < 25


def test_the_guard_is_found_where_it_is(tmp_path, monkeypatch):
    import ast

    source = 'import x\nif __name__ == "__main__":\n    a = 1\n    b = 2\nc = 3\n'
    tree = ast.parse(source)
    assert [cluster_start._guarded(tree, n) for n in range(1, 6)] == [
        False,
        False,
        True,
        True,
        False,
    ]
    assert cluster_start._guarded(ast.parse("if '__main__' == __name__:\n    a = 1\n"), 2)
    assert not cluster_start._guarded(ast.parse("if __name__ != '__main__':\n    a = 1\n"), 2)
