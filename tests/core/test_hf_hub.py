"""Tokenizers of Hub models (core/io/hf_hub.py, foreign.open_hub), never over the network: a local
snapshot in a temporary Hugging Face cache read with huggingface_hub offline, and its errors
raised by a stand-in for ``hf_hub_download`` (huggingface_hub's own error classes). Whether
the Hub answers (``hf_hub.hub_reachable``) is answered by the tests, or asked of a closed
port of this machine: offline is one line at once, with no retry (#32)."""

from __future__ import annotations

import json
import re
import threading

import huggingface_hub
import pytest
import tokenizers
from foreign_files import llama3_style, unigram
from hub_snapshot import (
    add_snapshot,
    answering_hub,
    hub_at_a_closed_port,
    hub_error,
    offline_hub,
    point_hub_at,
)
from huggingface_hub import constants, errors

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.foreign import ForeignTokenizer, open_hub, open_tokenizer
from bpe_studio.core.io import hf_hub
from bpe_studio.core.io.hf_hub import HubCancelled, HubError, HubModel, parse_hub_source

TEXT = "Hello world, 中文 and code() 12345"
_REAL_REACHABLE = hf_hub.hub_reachable


@pytest.fixture(autouse=True)
def hub_answers(monkeypatch):
    """The Hub answers, unless a test says otherwise: no test asks the real one."""
    monkeypatch.setattr(hf_hub, "hub_reachable", lambda model: None)


def test_parse_hub_sources():
    assert parse_hub_source("hf:Qwen/Qwen2.5-7B") == HubModel("Qwen/Qwen2.5-7B", None)
    assert parse_hub_source("hf:a/b@v1.0").name == "a/b@v1.0"
    assert parse_hub_source("tokenizer.json") is None
    for bad in ("hf:noslash", "hf:a/b/c", "hf:a/b@", "hf:a--b/c", "hf:/x"):
        with pytest.raises(HubError, match=rf"^{bad}: expected a Hugging Face model as ORG/NAME"):
            parse_hub_source(bad)
    assert parse_hub_source("hf:a/b@refs/pr/1").revision == "refs/pr/1"
    for bad in ("hf:a/b@v1 extra", "hf:a/b@v1..2", "hf:a/b@main~1", "hf:a/b@x:y"):
        revision = bad.partition("@")[2]
        with pytest.raises(HubError, match=rf"^{bad}: '{revision}' is not a revision"):
            parse_hub_source(bad)


def test_offline_snapshot_of_each_kind(monkeypatch, tmp_path):
    cache = offline_hub(monkeypatch, tmp_path)
    uni = unigram(tmp_path / "uni")
    byte_level = llama3_style(tmp_path / "ll", full=False)
    add_snapshot(cache, "acme/uni", {"tokenizer.json": uni})
    add_snapshot(cache, "acme/ll", {"tokenizer.json": byte_level})
    tok = open_hub(parse_hub_source("hf:acme/uni"))
    assert isinstance(tok, ForeignTokenizer) and tok.name == "acme/uni"
    oracle = tokenizers.Tokenizer.from_file(str(uni))
    assert tok.encode(TEXT) == oracle.encode(TEXT, add_special_tokens=False).ids
    exact = open_hub(HubModel("acme/ll"))
    assert isinstance(exact, Tokenizer) and exact.name == "acme/ll"
    oracle = tokenizers.Tokenizer.from_file(str(byte_level))
    assert exact.encode(TEXT) == oracle.encode(TEXT, add_special_tokens=False).ids


def test_a_revision_is_its_own_snapshot(monkeypatch, tmp_path):
    cache = offline_hub(monkeypatch, tmp_path)
    add_snapshot(cache, "acme/m", {"tokenizer.json": unigram(tmp_path / "a")})
    other = llama3_style(tmp_path / "b", full=False)
    add_snapshot(cache, "acme/m", {"tokenizer.json": other}, revision="v2", commit="f" * 40)
    assert isinstance(open_hub(HubModel("acme/m")), ForeignTokenizer)
    assert isinstance(open_hub(HubModel("acme/m", "v2")), Tokenizer)


def test_the_config_names_more_special_tokens_without_changing_ids(monkeypatch, tmp_path):
    cache = offline_hub(monkeypatch, tmp_path)
    uni = unigram(tmp_path / "uni")
    backend = tokenizers.Tokenizer.from_file(str(uni))
    word = next(t for t in backend.get_vocab() if t.startswith("\u2581") and len(t) > 3)
    config = tmp_path / "tokenizer_config.json"
    config.write_text(
        json.dumps({"eos_token": "</s>", "additional_special_tokens": [word, "<absent>"]}),
        encoding="utf-8",
    )
    add_snapshot(cache, "acme/uni", {"tokenizer.json": uni, "tokenizer_config.json": config})
    tok = open_hub(HubModel("acme/uni"))
    assert word in tok.special_tokens and "</s>" in tok.special_tokens
    assert "<absent>" not in tok.special_tokens
    text = word.replace("\u2581", " ") + " x"
    assert tok.encode(text) == backend.encode(text, add_special_tokens=False).ids


def _fail_with(monkeypatch, error: BaseException) -> None:
    def download(*args, **kwargs):
        raise error

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)


@pytest.mark.parametrize(
    ("cls", "model", "expected"),
    [
        (
            errors.GatedRepoError,
            HubModel("meta-llama/Llama-3.1-8B"),
            "meta-llama/Llama-3.1-8B: a gated model: accept its terms on "
            "https://huggingface.co/meta-llama/Llama-3.1-8B, then log in with `hf auth login` "
            "(or set HF_TOKEN to an access token)",
        ),
        (
            errors.RepositoryNotFoundError,
            HubModel("acme/nothing"),
            "acme/nothing: no such model on the Hugging Face Hub (if it is private, log in",
        ),
        (
            errors.RevisionNotFoundError,
            HubModel("acme/m", "v9"),
            "acme/m@v9: the model has no revision 'v9' (a branch, tag or commit)",
        ),
        (
            errors.LocalEntryNotFoundError,
            HubModel("acme/m"),
            "acme/m: its tokenizer is not in the Hugging Face cache and",
        ),
        (
            errors.RemoteEntryNotFoundError,
            HubModel("acme/m"),
            "acme/m: the model has no tokenizer.json",
        ),
    ],
)
def test_each_failure_is_one_line(monkeypatch, cls, model, expected):
    _fail_with(monkeypatch, hub_error(cls))
    with pytest.raises(HubError) as failed:
        open_hub(model)
    message = str(failed.value)
    assert message.startswith(expected) and "\n" not in message


def test_offline_and_online_say_which(monkeypatch, tmp_path):
    from huggingface_hub import constants

    offline_hub(monkeypatch, tmp_path)
    _fail_with(monkeypatch, hub_error(errors.LocalEntryNotFoundError))
    with pytest.raises(HubError, match="HF_HUB_OFFLINE is set; unset HF_HUB_OFFLINE and connect"):
        open_hub(HubModel("acme/m"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with pytest.raises(HubError, match="the Hub cannot be reached; connect once"):
        open_hub(HubModel("acme/m"))


def test_download_progress_reaches_the_caller(monkeypatch, tmp_path):
    path = unigram(tmp_path / "uni")

    def download(repo_id, filename, *, revision=None, tqdm_class=None, **kwargs):
        if filename != "tokenizer.json":
            raise hub_error(errors.RemoteEntryNotFoundError)
        bar = tqdm_class(total=100, unit="B")
        bar.update(40)
        bar.update(60)
        bar.close()
        return str(path)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    seen: list[tuple[int, int | None]] = []
    threads = threading.active_count()
    tok = open_hub(HubModel("acme/uni"), lambda done, total: seen.append((done, total)))
    assert seen == [(0, 100), (40, 100), (100, 100)]
    assert tok.name == "acme/uni"
    # No thread is left behind (tqdm's monitor): the command line forks its encoders after.
    assert threading.active_count() == threads


def test_load_and_open_tokenizer_take_hub_sources(monkeypatch, tmp_path):
    cache = offline_hub(monkeypatch, tmp_path)
    uni = unigram(tmp_path / "uni")
    byte_level = llama3_style(tmp_path / "ll", full=False)
    add_snapshot(cache, "acme/uni", {"tokenizer.json": uni})
    add_snapshot(cache, "acme/ll", {"tokenizer.json": byte_level}, revision="v1")
    oracle = tokenizers.Tokenizer.from_file(str(byte_level))
    for tok in (Tokenizer.load("hf:acme/ll@v1"), open_tokenizer("hf:acme/ll@v1")):
        assert isinstance(tok, Tokenizer) and tok.name == "hf:acme/ll@v1"
        assert tok.encode(TEXT) == oracle.encode(TEXT, add_special_tokens=False).ids
    foreign = open_tokenizer("hf:acme/uni")
    assert isinstance(foreign, ForeignTokenizer) and foreign.name == "hf:acme/uni"
    expected = tokenizers.Tokenizer.from_file(str(uni)).encode(TEXT, add_special_tokens=False)
    assert foreign.encode(TEXT) == expected.ids
    with pytest.raises(HubError, match=r"^acme/absent: its tokenizer is not in the Hugging"):
        Tokenizer.load("hf:acme/absent")
    # Tokenizer holds byte-level BPE only: the message names what opens the others.
    with pytest.raises(ValueError, match=r"a Unigram tokenizer, not byte-level BPE: .*\(in "
                       r"Python, bpe_studio\.core\.open_tokenizer\)$"):  # fmt: skip
        Tokenizer.load("hf:acme/uni")


def test_offline_and_not_cached_is_one_line_without_retries(monkeypatch, tmp_path, caplog):
    """The Hub at a closed port of this machine, nothing cached: huggingface_hub used to retry
    five times (11 log lines over ~24 s); the one request is made and the cache asked."""
    from huggingface_hub.utils import _detect_agent, _http

    offline_hub(monkeypatch, tmp_path)
    hub_at_a_closed_port(monkeypatch)
    monkeypatch.setattr(hf_hub, "hub_reachable", _REAL_REACHABLE)
    # Its list of agent harnesses known, as after a process's first request (that request is
    # test_the_whole_check_fits_in_hub_timeout's; counted here, run first, this test failed).
    monkeypatch.setattr(_detect_agent, "_registry", _detect_agent._EMPTY_REGISTRY)
    sleeps: list[float] = []
    monkeypatch.setattr(_http.time, "sleep", sleeps.append)  # a retry waits first
    requests: list[str] = []
    real_session = _http.get_session

    def session():
        client = real_session()
        requests.append("request")
        return client

    monkeypatch.setattr(_http, "get_session", session)
    with caplog.at_level("DEBUG", logger="huggingface_hub"):
        with pytest.raises(HubError) as info:
            open_hub(HubModel("acme/new"))
    message = str(info.value)
    assert message.startswith(
        "acme/new: its tokenizer is not in the Hugging Face cache and the Hub cannot be reached ("
    )
    assert "\n" not in message and "connect once to download it" in message
    assert sleeps == [] and len(requests) == 1
    assert [r for r in caplog.records if r.levelno >= 30] == []


def test_the_whole_check_fits_in_hub_timeout(monkeypatch, tmp_path):
    """Found by an audit: against a Hub that takes connections and never answers, the check
    took 8.5 s, not HUB_TIMEOUT's 5: huggingface_hub's first request headers in a process GET
    its list of agent harnesses (3 s) before the HEAD (5 s). Here each request takes its whole
    timeout on the test's own clock (no time passes); the requests made fit in HUB_TIMEOUT."""
    from huggingface_hub import constants
    from huggingface_hub.utils import _detect_agent, get_session

    offline_hub(monkeypatch, tmp_path)
    hub_at_a_closed_port(monkeypatch)
    monkeypatch.setattr(hf_hub, "hub_reachable", _REAL_REACHABLE)
    # The process's first headers, with no list kept on disk from an earlier run.
    monkeypatch.setattr(_detect_agent, "_registry", None)
    monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(tmp_path / "harnesses.json"))
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", False)
    clock = [0.0]
    monkeypatch.setattr(hf_hub, "monotonic", lambda: clock[0], raising=False)
    asked: list[tuple[str, str, float]] = []

    def silent(request, **kwargs):
        timeout = request.extensions["timeout"]["read"]
        asked.append((request.method, request.url.path, timeout))
        clock[0] += timeout
        raise TimeoutError("timed out")

    monkeypatch.setattr(get_session(), "send", silent)  # the client huggingface_hub shares
    with pytest.raises(HubError, match="the Hub cannot be reached"):
        open_hub(HubModel("acme/new"))
    paths = [(method, path) for method, path, _ in asked]
    assert paths == [
        ("GET", "/api/agent-harnesses"),
        ("HEAD", "/acme/new/resolve/main/tokenizer.json"),
    ]
    assert clock[0] <= hf_hub.HUB_TIMEOUT, asked


def test_the_hubs_refusal_is_known_from_its_first_answer(monkeypatch, tmp_path):
    from huggingface_hub import constants

    offline_hub(monkeypatch, tmp_path)  # a cache of its own, empty (a cached model is read)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)

    def metadata(url, timeout=None, **kwargs):
        raise hub_error(errors.GatedRepoError)

    def download(*args, **kwargs):
        raise AssertionError("no download after the Hub refused")

    monkeypatch.setattr(hf_hub, "hub_reachable", _REAL_REACHABLE)
    monkeypatch.setattr(huggingface_hub, "get_hf_file_metadata", metadata)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    with pytest.raises(HubError, match=r"^meta-llama/Llama-3.1-8B: a gated model"):
        open_hub(HubModel("meta-llama/Llama-3.1-8B"))


def test_a_download_can_be_cancelled(monkeypatch, tmp_path):
    path = unigram(tmp_path / "uni")
    updates: list[int] = []

    def download(repo_id, filename, *, tqdm_class=None, **kwargs):
        bar = tqdm_class(total=100, unit="B")
        for _ in range(10):
            bar.update(10)
            updates.append(bar.done)
        return str(path)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    stop = threading.Event()

    def progress(done: int, total: int | None) -> None:
        if done >= 30:
            stop.set()

    with pytest.raises(HubCancelled):
        hf_hub.fetch_tokenizer(HubModel("acme/uni"), progress, cancelled=stop.is_set)
    assert updates == [10, 20, 30]  # the update after the stop raised
    updates.clear()
    with pytest.raises(HubCancelled):  # cancelled before anything was asked
        hf_hub.fetch_tokenizer(HubModel("acme/uni"), cancelled=lambda: True)
    assert updates == []


@pytest.fixture
def hub_says(monkeypatch, tmp_path):
    """``hub_says(status, headers)``: an offline cache in ``tmp_path``, then the Hub online at a
    server of this machine answering every request so; the cache folder."""
    from huggingface_hub.utils import _detect_agent

    cache = offline_hub(monkeypatch, tmp_path)
    monkeypatch.setattr(hf_hub, "hub_reachable", _REAL_REACHABLE)
    # Its list of agent harnesses known, as after a process's first request: one request.
    monkeypatch.setattr(_detect_agent, "_registry", _detect_agent._EMPTY_REGISTRY)
    servers = []

    def start(status: int, headers: dict[str, str] | None = None):
        servers.append(answering_hub(status, headers))
        point_hub_at(monkeypatch, f"http://127.0.0.1:{servers[-1].server_port}")
        return cache

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


# Answers that say nothing of the model: a proxy wanting a log-in, a firewall, a rate limit, a
# server error, and 401/404 without the Hub's X-Error-Code (a proxy's, not the Hub's).
IN_THE_WAY = [401, 403, 404, 407, 429, 500, 503]


@pytest.mark.parametrize("status", IN_THE_WAY)
def test_a_cached_model_is_read_whatever_is_in_the_way(hub_says, tmp_path, status):
    """Found by an audit: a proxy's 407, a firewall's 403 or a rate limit's 429 refused a model
    the cache holds ("could not download its tokenizer"); huggingface_hub reads the cache."""
    cache = hub_says(status)
    add_snapshot(cache, "acme/uni", {"tokenizer.json": unigram(tmp_path / "uni")})
    assert open_hub(HubModel("acme/uni")).name == "acme/uni"


@pytest.mark.parametrize("status", [407, 429])
def test_a_model_not_cached_says_what_is_in_the_way(hub_says, status):
    hub_says(status)
    with pytest.raises(HubError) as info:
        open_hub(HubModel("acme/new"))
    reason = {407: "Proxy Authentication Required", 429: "Too Many Requests"}[status]
    # (The Hub audit: "connect once to download it" was said to a user already connected.)
    assert str(info.value) == (
        f"acme/new: its tokenizer is not in the Hugging Face cache and the Hub answered {status} "
        f"{reason}; try again once the Hub answers (or from another network)"
    )


@pytest.mark.parametrize("status", [401, 403])
def test_a_token_the_hub_refuses_is_named_with_what_to_do(hub_says, status):
    """A review: an expired token (the Hub's own 401, no X-Error-Code) on a model not cached
    said "connect once to download it", to a user already connected."""
    said = "Invalid credentials in Authorization header"
    hub_says(status, {"X-Error-Message": said})
    with pytest.raises(HubError) as info:
        open_hub(HubModel("acme/new"))
    assert str(info.value) == (
        f"acme/new: the Hub refused the request ({said}); log in with `hf auth login` (or set "
        "HF_TOKEN to an access token), or unset HF_TOKEN if it has expired"
    )


# The Hub's own refusals (huggingface_hub classifies them by X-Error-Code): (status, code, the
# model asked for, the message's start).
REFUSALS = [
    (403, "GatedRepo", HubModel("acme/uni"), "acme/uni: a gated model: accept its terms"),
    (401, "RepoNotFound", HubModel("acme/uni"), "acme/uni: no such model on the Hugging Face"),
    (404, "EntryNotFound", HubModel("acme/uni"), "acme/uni: the model has no tokenizer.json"),
    (404, "RevisionNotFound", HubModel("acme/uni", "v2"), "acme/uni@v2: the model has no revis"),
]


@pytest.mark.parametrize(("status", "code", "model", "expected"), REFUSALS)
def test_the_hubs_refusal_is_an_error_unless_the_model_is_cached(
    hub_says, tmp_path, status, code, model, expected
):
    cache = hub_says(status, {"X-Error-Code": code})
    with pytest.raises(HubError, match=f"^{re.escape(expected)}"):
        open_hub(model)
    # Cached, the model is read, as huggingface_hub's hf_hub_download reads it (a token
    # expired, a model made gated since, or removed: what was downloaded is still there).
    uni = unigram(tmp_path / "uni")
    add_snapshot(cache, "acme/uni", {"tokenizer.json": uni}, revision=model.revision or "main")
    assert open_hub(model).name == model.name


def _cut_short(tmp_path):
    whole = unigram(tmp_path / "uni").read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(whole[: len(whole) // 2].rstrip(b"} \n"))
    return cut


@pytest.mark.parametrize(
    ("make", "damage"),
    [
        (_cut_short, "is cut short (it does not end with '}')"),
        (lambda tmp_path: _written(tmp_path, b""), "is empty"),
        (
            lambda tmp_path: _written(tmp_path, b"<html><body>Rate limited</body></html>"),
            "is not JSON (it begins '<html><body>Rate')",
        ),  # fmt: skip
    ],
)
def test_a_damaged_cached_tokenizer_names_the_model_and_how_to_clear_it(
    monkeypatch, tmp_path, make, damage
):
    """Found by an audit: a cut-short, empty or error-page tokenizer.json in the cache was
    named by its blob's path only, neither the model nor what to do."""
    cache = offline_hub(monkeypatch, tmp_path)
    add_snapshot(cache, "acme/bad", {"tokenizer.json": make(tmp_path)})
    with pytest.raises(HubError) as info:
        open_tokenizer("hf:acme/bad")
    assert str(info.value) == (
        f"hf:acme/bad: its tokenizer.json in the Hugging Face cache {damage}; remove the model "
        f"from the cache (`hf cache rm model/acme/bad`, or delete the folder "
        f"{cache / 'models--acme--bad'}), then load it again to download it afresh"
    )


def _written(tmp_path, data: bytes):
    path = tmp_path / "written.json"
    path.write_bytes(data)
    return path


def test_a_cached_folder_without_a_tokenizer_says_so(monkeypatch, tmp_path):
    """Found by an audit: a model cached with its config only was "not in the Hugging Face
    cache"; a tokenizer.json whose blob is gone was too."""
    cache = offline_hub(monkeypatch, tmp_path)
    config = _written(tmp_path, b'{"bos_token": "<s>"}')
    folder = add_snapshot(cache, "acme/notok", {"tokenizer_config.json": config})
    with pytest.raises(HubError) as info:
        open_hub(HubModel("acme/notok"))
    assert str(info.value) == (
        f"acme/notok: its folder in the Hugging Face cache, {folder}, has no tokenizer.json and "
        "HF_HUB_OFFLINE is set; unset HF_HUB_OFFLINE and connect once to download it"
    )
    # The Hub said it has none (huggingface_hub marks that in the cache): connecting would
    # not help (the Hub audit).
    no_file = cache / "models--acme--notok" / ".no_exist" / folder.name / "tokenizer.json"
    no_file.parent.mkdir(parents=True)
    no_file.touch()
    with pytest.raises(HubError) as info:
        open_hub(HubModel("acme/notok"))
    assert str(info.value) == (
        "acme/notok: the model has no tokenizer.json, as the Hub said when last asked (only "
        "its own library reads it)"
    )
    folder = add_snapshot(cache, "acme/gone", {"tokenizer.json": unigram(tmp_path / "uni")})
    (folder / "tokenizer.json").resolve().unlink()
    with pytest.raises(HubError) as info:
        open_hub(HubModel("acme/gone"))
    assert str(info.value) == (
        "hf:acme/gone: its tokenizer.json in the Hugging Face cache links to a file that is "
        "missing; remove the model from the cache (`hf cache rm model/acme/gone`, or delete the "
        f"folder {cache / 'models--acme--gone'}), then load it again to download it afresh"
    )


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("acme/good", "hf:acme/good"),
        ("acme/good@v1", "hf:acme/good@v1"),
        ("https://huggingface.co/acme/good", "hf:acme/good"),
        ("https://huggingface.co/acme/good/tree/v1", "hf:acme/good@v1"),
        ("https://huggingface.co/acme/good/blob/main/tokenizer.json", "hf:acme/good@main"),
        ("data/vocab.json", None),
        ("out/tok.tiktoken", None),
        ("a/b/c", None),
        ("./acme/good", None),
        ("https://huggingface.co/datasets/acme/good", None),
    ],
)
def test_a_name_meant_as_a_hub_model(name, meant):
    assert hf_hub.hub_source_meant(name) == meant


def test_a_cancel_returns_while_the_hub_is_still_asked(monkeypatch, tmp_path):
    """The Hub audit: Cancel (in the app, a new pick, closing the window) waited for the
    request under way: the Hub's answer or its 5 s timeout, or the whole file on a slow
    link. A cancel now returns at once; the request ends in its own thread."""
    offline_hub(monkeypatch, tmp_path)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    asked, release, answered = threading.Event(), threading.Event(), threading.Event()

    def no_answer_yet(model):
        asked.set()
        release.wait(30)  # a request that takes its whole timeout
        answered.set()
        return "the Hub cannot be reached (no answer)"

    monkeypatch.setattr(hf_hub, "hub_reachable", no_answer_yet)
    cancelled = threading.Event()
    threading.Thread(target=lambda: asked.wait(30) and cancelled.set(), daemon=True).start()
    with pytest.raises(HubCancelled):
        hf_hub.fetch_tokenizer(HubModel("acme/uni"), cancelled=cancelled.is_set)
    assert not answered.is_set()  # (it raised only once the request had ended)
    release.set()


def test_the_bytes_are_reported_as_they_come(monkeypatch, tmp_path):
    """The Hub audit: huggingface_hub reads 10 MB between two reports, more than nearly
    every tokenizer.json: the progress stood at 0 and Cancel waited for the whole file."""
    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 10 * 1024 * 1024)
    path = unigram(tmp_path / "uni")
    chunks: list[int] = []

    def download(repo_id, filename, *, tqdm_class=None, **kwargs):
        chunks.append(constants.DOWNLOAD_CHUNK_SIZE)  # as http_get reads it
        return str(path)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    hf_hub.fetch_tokenizer(HubModel("acme/uni"))
    assert chunks and max(chunks) <= 64 * 1024


def test_a_cached_tokenizer_damaged_within_names_the_model_and_how_to_clear_it(
    monkeypatch, tmp_path
):
    """The Hub audit: one broken inside (its ends whole) was named by its blob's path only."""
    cache = offline_hub(monkeypatch, tmp_path)
    whole = unigram(tmp_path / "uni").read_text(encoding="utf-8")
    broken = _written(tmp_path, whole.replace('"vocab"', '"vocab" "', 1).encode())
    add_snapshot(cache, "acme/bad", {"tokenizer.json": broken})
    clear = (
        f"remove the model from the cache (`hf cache rm model/acme/bad`, or delete the folder "
        f"{cache / 'models--acme--bad'}), then load it again to download it afresh"
    )
    for load in (lambda: open_tokenizer("hf:acme/bad"), lambda: open_hub(HubModel("acme/bad"))):
        with pytest.raises(HubError) as info:
            load()
        said = str(info.value)
        assert said.startswith("hf:acme/bad: its tokenizer.json in the Hugging Face cache is not "
                               "valid JSON at line ")  # fmt: skip
        assert said.endswith(f"; {clear}")


def test_a_cached_tokenizer_huggingface_hub_cannot_find_is_not_said_missing(monkeypatch, tmp_path):
    """The Hub audit: a ref huggingface_hub cannot read (here, a line break after the commit)
    was said to link "to a file that is missing", which is there."""
    cache = offline_hub(monkeypatch, tmp_path)
    add_snapshot(cache, "acme/ref", {"tokenizer.json": unigram(tmp_path / "uni")})
    ref = cache / "models--acme--ref" / "refs" / "main"
    ref.write_text(ref.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(HubError) as info:
        open_hub(HubModel("acme/ref"))
    assert str(info.value).startswith(
        "hf:acme/ref: the Hugging Face cache holds its tokenizer.json, but its record of the "
        "revision is damaged; remove the model from the cache"
    )
