"""Joining a scheduler's address where something else answers (#59): an HTTP server (the
dashboard's port: Dask's client waited for ever), a proxy answering in HTTP (Dask read
"HTTP/1.1" as a frame's length: "Unable to allocate 3.07 EiB"), a Dask worker's address;
each is one line naming the address, within a bounded time. A join that hangs ends at a
stop (the app's Stop) and at its deadline. The servers here are fakes on 127.0.0.1 but one,
a real scheduler on another transport; no test starts a cluster."""

from __future__ import annotations

import asyncio
import socketserver
import threading
from collections.abc import Iterator

import pytest

from bpe_studio.core.corpus import cluster_reach, cluster_start
from bpe_studio.core.corpus.cluster_address import ClusterError
from bpe_studio.core.corpus.cluster_start import start_cluster
from bpe_studio.core.corpus.counting import TrainingCancelled

# A bound for each wait below: what is tested ends well within it, or hangs.
BOUND = 30.0


class _Silent(socketserver.BaseRequestHandler):
    """Reads what comes and answers nothing until the client goes (as an HTTP server does
    with bytes that hold no complete request line)."""

    def handle(self) -> None:
        while self.request.recv(4096):
            pass


class _Http400(socketserver.BaseRequestHandler):
    """Answers whatever comes with an HTTP error and closes (a proxy or load balancer)."""

    def handle(self) -> None:
        self.request.recv(4096)
        self.request.sendall(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")


def serve(handler: type[socketserver.BaseRequestHandler]) -> Iterator[str]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def silent() -> Iterator[str]:
    yield from serve(_Silent)


@pytest.fixture
def http400() -> Iterator[str]:
    yield from serve(_Http400)


def join_within_bound(address: str, **kwargs) -> BaseException | None:
    """What ``start_cluster(address)`` raised (None if nothing), failing the test when it
    has not ended within :data:`BOUND`."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            start_cluster(address, **kwargs).close()
            outcome.append(None)
        except BaseException as e:
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert outcome, f"joining {address} still waits after {BOUND:.0f} s"
    return outcome[0]


def test_a_server_that_never_answers_as_dask_is_one_line(silent, monkeypatch):
    monkeypatch.setattr(cluster_reach, "GREETING_TIMEOUT", 0.5)
    error = join_within_bound(silent)
    where = silent.removeprefix("tcp://")
    assert isinstance(error, ClusterError) and error.address == silent
    assert error.reason.startswith(
        f"{where} answers, but no Dask reply came within 0.5 s: a scheduler too busy to "
        "answer, or no scheduler (a Dask dashboard, an HTTP server or a proxy? a scheduler on "
        "another transport than tcp://, such as ws://, as the address `dask scheduler` printed "
        "says? a scheduler listens at :8786"
    )
    assert "\n" not in str(error)


def test_a_scheduler_on_another_transport_is_said_to_be_one_maybe(monkeypatch):
    """An audit: a scheduler started with ``--protocol ws`` and joined as tcp:// was called
    "no scheduler (a Dask dashboard, an HTTP server or a proxy?)"; the message now names
    the other transport as what it may be."""
    from distributed import Scheduler

    async def start() -> Scheduler:
        return await Scheduler(protocol="ws://", host="127.0.0.1", port=0, dashboard=False)

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    scheduler = asyncio.run_coroutine_threadsafe(start(), loop).result(BOUND)
    try:
        assert scheduler.address.startswith("ws://")
        monkeypatch.setattr(cluster_reach, "GREETING_TIMEOUT", 1.0)
        error = join_within_bound("tcp://" + scheduler.address.removeprefix("ws://"))
    finally:
        asyncio.run_coroutine_threadsafe(scheduler.close(), loop).result(BOUND)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(BOUND)
    assert isinstance(error, ClusterError), repr(error)
    assert "a scheduler on another transport than tcp://, such as ws://" in error.reason
    assert "\n" not in str(error)


def test_a_reply_in_http_is_not_read_as_dask_frames(http400):
    error = join_within_bound(http400)
    where = http400.removeprefix("tcp://")
    assert isinstance(error, ClusterError), repr(error)  # it was a MemoryError
    assert error.reason.startswith(f"{where} answers, but does not speak Dask's protocol (")


@pytest.fixture
def hanging_greeting(monkeypatch) -> Iterator[None]:
    """A greeting that hangs until the test is over, then fails: the abandoned join thread
    ends then, having made no Dask client (whose threads would outlive the test, and a test
    that forks checks that no thread is left)."""
    over = threading.Event()

    def greet(address) -> None:
        over.wait(BOUND)
        raise ClusterError("the test is over", address.text)

    monkeypatch.setattr(cluster_start, "greet", greet)
    yield
    over.set()
    for thread in threading.enumerate():
        if thread.name == "bpe-studio-join":
            thread.join(BOUND)


def test_a_stop_ends_a_join_that_hangs(silent, hanging_greeting):
    error = join_within_bound(silent, should_stop=lambda: True)
    assert isinstance(error, TrainingCancelled), repr(error)


def test_a_join_that_hangs_ends_at_its_deadline(silent, hanging_greeting, monkeypatch):
    monkeypatch.setattr(cluster_start, "JOIN_DEADLINE", 0.3)
    error = join_within_bound(silent)
    where = silent.removeprefix("tcp://")
    assert isinstance(error, ClusterError), repr(error)
    assert error.reason == (
        f"{where} took the connection, but joining the Dask scheduler there did not finish "
        "within 0.3 s"
    )
