"""What a cluster address names, checked before anything starts.

What it does: :func:`cluster_address` reads what ``cluster=`` / ``--cluster`` takes: ``local``
(a ``LocalCluster`` of this machine's cores), ``local:N`` (N worker processes) or a Dask
scheduler's URL, parsed by Dask's own parser (``distributed.comm.addressing``), so that what
is accepted is what Dask connects to: a transport Dask has here (``tcp``, ``tls``, ``ws``,
``wss``), a host, a port from 1 to 65535 (8786, the scheduler's, when none is given), and for
``tls``/``wss`` the certificates Dask's configuration names. Each refusal is a
:class:`ClusterError` of one line naming the address, raised at once.
What it leaves out: starting or joining the cluster (``cluster_start``), counting on it
(``cluster``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .sources import CLUSTER_EXTRA

LOCAL = "local"
# The transports a client here can join a scheduler over (inproc is within one process;
# ucx needs a package of its own and hardware to match).
SCHEMES = ("tcp", "tls", "ws", "wss")
# Where ``dask scheduler`` listens unless told otherwise.
DEFAULT_PORT = 8786
FORMS = (
    "give local, local:N (N worker processes here) or a Dask scheduler's address such as "
    "tcp://HOST:8786"
)


class ClusterError(ValueError):
    """A cluster that cannot be used: a bad or unreachable address, or a cluster that lost
    the work. ``address`` is the address as given (None when the error is not about one),
    ``reason`` the message without it; ``str()`` names both."""

    def __init__(self, reason: str, address: str | None = None) -> None:
        self.address, self.reason = address, reason
        super().__init__(reason if address is None else f"cluster {address!r}: {reason}")


@dataclass(frozen=True)
class ClusterAddress:
    """A checked address: ``local`` (``workers`` None: every core the machine can hold) or
    ``local:N`` (``workers`` N), else a scheduler at ``url`` (normalized: scheme, host and
    port), reached at ``host``:``port``."""

    text: str
    workers: int | None = None
    url: str | None = None
    host: str = ""
    port: int = 0

    @property
    def is_local(self) -> bool:
        return self.url is None


def distributed_module(name: str = "distributed") -> Any:
    """``distributed`` (or one of its modules), or a ClusterError saying what to install."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise ClusterError(
            f"counting on a cluster needs dask.distributed: {CLUSTER_EXTRA}"
        ) from None


def _local(address: str) -> ClusterAddress:
    if address == LOCAL:
        return ClusterAddress(address)
    n = address[len(LOCAL) + 1 :]
    if n.isascii() and n.isdigit() and int(n) >= 1:
        return ClusterAddress(address, workers=int(n))
    raise ClusterError("local:N takes a worker count of at least 1", address)


def _scheme_problem(scheme: str) -> str | None:
    if scheme in SCHEMES:
        return None
    if scheme == "inproc":
        return (
            "inproc:// names a scheduler inside one Python process; from Python, pass that "
            "cluster's distributed.Client as cluster="
        )
    return f"{scheme}:// is not a transport Dask joins a scheduler over here ({', '.join(SCHEMES)})"


def _certificates_missing() -> bool:
    """Whether Dask's configuration names no TLS certificates for a client."""
    security = distributed_module("distributed.security").Security()
    return security.get_connection_args("client")["ssl_context"] is None


def cluster_address(address: str) -> ClusterAddress:
    """``address`` checked (see the module's docstring); raises :class:`ClusterError` naming
    it, or TypeError for what is not a string."""
    if not isinstance(address, str):
        raise TypeError(
            f"a cluster address is a string ({LOCAL!r}, 'local:N', 'tcp://HOST:PORT'), "
            f"not {address!r}"
        )
    if address == LOCAL or address.startswith(LOCAL + ":"):
        return _local(address)
    if "://" not in address:
        raise ClusterError(FORMS, address)
    addressing = distributed_module("distributed.comm.addressing")
    scheme, location = addressing.parse_address(address, strict=True)
    problem = _scheme_problem(scheme)
    if problem is None and not location:
        problem = f"no host: {FORMS}"
    if problem is not None:
        raise ClusterError(problem, address)
    try:
        host, port = addressing.parse_host_port(location, default_port=DEFAULT_PORT)
    except ValueError as e:
        given = location.rpartition(":")[2]
        reason = f"the port {given!r} is not a number" if "literal" in str(e) else str(e)
        raise ClusterError(reason, address) from None
    if not 1 <= port <= 65535:
        raise ClusterError(f"port {port} is out of range (1 to 65535)", address)
    if not host:
        raise ClusterError(f"no host before the port: give {scheme}://HOST:{port}", address)
    if scheme in ("tls", "wss") and _certificates_missing():
        raise ClusterError(
            f"{scheme}:// needs TLS certificates, and Dask's configuration names none "
            "(distributed.comm.tls.ca-file, distributed.comm.tls.client.cert and .key); from "
            "Python, pass a distributed.Client made with security=... as cluster=",
            address,
        )
    url = addressing.unparse_address(scheme, addressing.unparse_host_port(host, port))
    return ClusterAddress(address, url=url, host=host, port=port)


def parse_address(address: str) -> int | None:
    """The worker count ``local:N`` asks for (None for ``local``: every core), or -1 for a
    scheduler's address; raises :class:`ClusterError` for an address that is neither (see
    :func:`cluster_address`)."""
    checked = cluster_address(address)
    return checked.workers if checked.is_local else -1
