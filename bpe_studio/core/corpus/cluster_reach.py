"""Whether a scheduler's address answers, and answers as a Dask scheduler.

What it does: :func:`reach` opens a plain socket to the address (an unknown host, a refused
connection or a silent host is one line at once), then :func:`greet` speaks Dask's protocol
to it: Dask's handshake and an ``identity`` call, each within :data:`GREETING_TIMEOUT`. Dask's
own client bounds only the TCP connection, not the reply that follows: a server that is not
Dask's (an HTTP server, the dashboard's port) leaves it waiting for ever, and one that
answers in HTTP (a proxy) has its reply read as a frame's length, an impossible allocation.
Each of those is a :class:`ClusterError` naming the address here, within the timeout.
What it leaves out: the address's syntax (``cluster_address``), joining (``cluster_start``).
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from .cluster_address import ClusterAddress, ClusterError, distributed_module

# How long reaching the address's host may take before it is called unreachable.
CONNECT_SECONDS = 10.0
# How long a peer that took the connection has to answer as a Dask scheduler: one does at
# once unless it is busy, so it gets as long as Dask's own client is given to connect.
GREETING_TIMEOUT = 10.0
# The transport a scheduler may speak instead of the one asked for (plain or secure alike).
_OTHER_TRANSPORT = {"tcp": "ws", "ws": "tcp", "tls": "wss", "wss": "tls"}


def hint(address: ClusterAddress) -> str:
    """Said of a peer that is not a Dask scheduler, and what it may be instead: a scheduler
    on another transport too (an audit: one started with ``--protocol ws`` and joined as
    tcp://, or the other way round, was called no scheduler at all)."""
    scheme = (address.url or "tcp://").split("://", 1)[0]
    other = _OTHER_TRANSPORT.get(scheme, "tcp")
    return (
        f"(a Dask dashboard, an HTTP server or a proxy? a scheduler on another transport than "
        f"{scheme}://, such as {other}://, as the address "
        "`dask scheduler` printed says? a scheduler listens at :8786 unless told otherwise, "
        "its dashboard at :8787)"
    )


def reach(address: ClusterAddress) -> None:
    """Raise ClusterError at once when nothing can answer at the address: an unknown host,
    a refused connection; a silent host after :data:`CONNECT_SECONDS`."""
    where = f"{address.host}:{address.port}"
    try:
        with socket.create_connection((address.host, address.port), timeout=CONNECT_SECONDS):
            pass
    except socket.gaierror:
        raise ClusterError(f"unknown host {address.host!r}", address.text) from None
    except ConnectionRefusedError:
        raise ClusterError(
            f"nothing listens at {where} (is `dask scheduler` running there, and the port open?)",
            address.text,
        ) from None
    except TimeoutError:
        raise ClusterError(
            f"no answer from {where} within {CONNECT_SECONDS:.0f} s (a firewall, or a host "
            "that is down?)",
            address.text,
        ) from None
    except OSError as e:
        raise ClusterError(f"cannot reach {where}: {e.strerror or e}", address.text) from None


async def _identity(url: str, seconds: float, connection_args: dict[str, Any]) -> Any:
    """The peer's reply to Dask's handshake and ``identity`` call."""
    comm = await distributed_module("distributed.comm").connect(
        url, timeout=seconds, **connection_args
    )
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def greet(address: ClusterAddress, seconds: float | None = None) -> None:
    """Raise ClusterError naming the address unless a Dask scheduler answers there within
    ``seconds`` (:data:`GREETING_TIMEOUT` by default; see the module's docstring). Runs an
    event loop of its own: call it from a thread that runs none."""
    assert address.url is not None
    seconds = GREETING_TIMEOUT if seconds is None else seconds
    where = f"{address.host}:{address.port}"
    security = distributed_module("distributed.security").Security()
    args = security.get_connection_args("client")
    try:
        reply = asyncio.run(asyncio.wait_for(_identity(address.url, seconds, args), seconds))
    except (asyncio.TimeoutError, TimeoutError):  # the same class from Python 3.11
        raise ClusterError(
            f"{where} answers, but no Dask reply came within {seconds:g} s: a scheduler too "
            f"busy to answer, or no scheduler {hint(address)}",
            address.text,
        ) from None
    except Exception:
        # subtle: a reply in another protocol has its first bytes read as a frame's length
        # (a MemoryError); one that closes or does not unpack raises what Dask's reader does.
        raise ClusterError(
            f"{where} answers, but does not speak Dask's protocol {hint(address)}",
            address.text,
        ) from None
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        raise ClusterError(
            f"{where} answers as a Dask {kind or 'peer'}, not a scheduler: give the address "
            "`dask scheduler` printed",
            address.text,
        )
