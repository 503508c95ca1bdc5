"""A Hugging Face cache holding one model's files, laid out as ``huggingface_hub`` lays it out
(``models--ORG--NAME/{refs,snapshots,blobs}``), for tests that run it offline against it.

:func:`offline_hub` points huggingface_hub at a cache under ``tmp_path`` in offline mode, for
this process (its constants are read at import, so they are set on the module too) and for
subprocesses (the environment); :func:`add_snapshot` puts files into it.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def offline_hub(monkeypatch, tmp_path: Path) -> Path:
    """HF_HOME, HF_HUB_CACHE and HF_HUB_OFFLINE=1 for this test; the cache folder."""
    from huggingface_hub import constants

    home = tmp_path / "hf_home"
    cache = home / "hub"
    cache.mkdir(parents=True)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return cache


def hub_at_a_closed_port(monkeypatch) -> str:
    """Point huggingface_hub, for this test, at a port of this machine nothing listens on (what
    a dropped connection looks like, answered at once and never by the real Hub), online
    mode; the address. Both the endpoint and the URL template built from it at import are
    set: ``hf_hub_url`` formats the template."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return point_hub_at(monkeypatch, f"http://127.0.0.1:{port}")


def point_hub_at(monkeypatch, endpoint: str) -> str:
    """huggingface_hub, for this test, online at ``endpoint`` (as ``HF_ENDPOINT`` would set it
    at import: the endpoint and the URL template built from it); the address."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    template = endpoint + "/{repo_id}/resolve/{revision}/{filename}"
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
    return endpoint


def answering_hub(status: int, headers: dict[str, str] | None = None) -> ThreadingHTTPServer:
    """A server on a free port of this machine answering every request with ``status`` and
    ``headers`` and no body (a proxy, a firewall or a rate limit in the way, or the Hub's own
    refusal with its ``X-Error-Code``), serving on a thread; the caller shuts it down."""

    class Answer(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_HEAD = _answer

        def log_message(self, *args) -> None:
            pass  # nothing on the test's output

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def add_snapshot(
    cache: Path, repo_id: str, files: dict[str, Path], revision: str = "main", commit=COMMIT
) -> Path:
    """Put ``files`` (name in the repository -> file to copy) into ``cache`` as the snapshot
    ``commit`` of ``repo_id``, with ``refs/<revision>`` naming it; the snapshot folder."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    blobs, snapshot = repo / "blobs", repo / "snapshots" / commit
    blobs.mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    for name, source in files.items():
        data = Path(source).read_bytes()
        blob = blobs / hashlib.sha256(data).hexdigest()
        shutil.copyfile(source, blob)
        link = snapshot / name
        link.unlink(missing_ok=True)
        link.symlink_to(Path("..", "..", "blobs", blob.name))
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / revision).write_text(commit, encoding="utf-8")
    return snapshot


def two_models(monkeypatch, tmp_path: Path) -> dict[str, Path]:
    """An offline cache holding ``acme/uni`` (a Unigram file, on main) and ``acme/ll`` (a
    Llama-3-style byte-level file, at revision ``v1``); their tokenizer.json files by key."""
    from foreign_files import llama3_style, unigram

    cache = offline_hub(monkeypatch, tmp_path)
    files = {"uni": unigram(tmp_path / "uni"), "ll": llama3_style(tmp_path / "ll", full=False)}
    add_snapshot(cache, "acme/uni", {"tokenizer.json": files["uni"]})
    add_snapshot(cache, "acme/ll", {"tokenizer.json": files["ll"]}, revision="v1")
    return files


def hub_error(cls: type, message: str = "the server said no") -> BaseException:
    """An error of huggingface_hub's class ``cls`` (its HTTP errors take the server's
    response, which these tests do not need)."""
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    return error
