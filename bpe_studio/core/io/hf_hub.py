"""Tokenizer files of models on the Hugging Face Hub, fetched into the Hub's own cache.

What it does: :func:`parse_hub_source` reads ``hf:ORG/NAME[@REVISION]`` into a
:class:`HubModel` (a malformed one, a revision with spaces included, is refused);
:func:`fetch_tokenizer` downloads the model's ``tokenizer.json`` and, when the model has
one, its ``tokenizer_config.json`` (which names the special tokens) with
``huggingface_hub.hf_hub_download``, into huggingface_hub's cache (``HF_HUB_CACHE`` /
``HF_HOME``; a file already there is used offline), telling ``progress(done, total)`` the
bytes as they come; the folder holding them is returned, for ``foreign.open_tokenizer`` and
``files.load_data`` (which take ``hf:`` sources through it). Whether the Hub answers is asked
once first (:func:`hub_reachable`, one request, no retries, within :data:`HUB_TIMEOUT`
seconds with huggingface_hub's own first one of the process): unreachable, answering
anything that says nothing of the model (a proxy, a firewall, a rate limit, a server error)
or refusing a model whose tokenizer the cache holds, the cache alone is read, so offline is
known in seconds and quietly, not after huggingface_hub's five retries. ``cancelled()``
stops it with :class:`HubCancelled` at once, the request under way left to end in a thread
of its own. Offline, gated (needs a token), a model or revision not found, a model without
a ``tokenizer.json``: each is a :class:`HubError` of one line saying what to do.
:func:`cached_files` names the files the cache holds for a model now, without asking the Hub
(what an output must not replace).
:data:`POPULAR` is the curated list of open models the app offers.
What it leaves out: reading the files (``files``, ``foreign``), log-in (the ``hf``
command, ``HF_TOKEN``), the app's and the command line's progress display.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from time import monotonic
from typing import Any

HUB_PREFIX = "hf:"
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "tokenizer_config.json"
LOG_IN = "log in with `hf auth login` (or set HF_TOKEN to an access token)"
# ORG/NAME as the Hub spells repository ids: letters, digits, "-", "_", "."; no "--" or "..".
_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")
# A revision: a branch, a tag, a commit or a pull request's ref ("refs/pr/1"), as git allows
# their names: no spaces or control characters, none of ~^:?*[\ and no "..".
_REVISION = re.compile(r"[\w.@/+=-]{1,255}")
# A model's page: https://huggingface.co/ORG/NAME, maybe at a revision (/tree/REVISION) or a file.
_HUB_PAGE = re.compile(
    r"https?://(?:www\.)?(?:huggingface|hf)\.co/([^/?#]+)/([^/?#]+)"
    r"(?:/(?:tree|blob|resolve)/([^/?#]+))?"
)
# Names that end so are files, missing, not models (whose names may hold dots: Qwen2.5-7B).
_FILE_SUFFIXES = (".json", ".txt", ".tiktoken", ".gz", ".model", ".bin")
# Seconds one request to the Hub may take before the Hub is taken as unreachable.
HUB_TIMEOUT = 5.0
# Seconds between two looks at whether a fetch was cancelled, and bytes read between two
# progress reports (each a look too).
CANCEL_POLL = 0.05
DOWNLOAD_CHUNK = 1 << 14
# The open models the app lists (label, repository id): real ids; the gated ones (Llama,
# Gemma, Mistral's) need a token with their terms accepted.
POPULAR: tuple[tuple[str, str], ...] = (
    ("Llama 3.1 8B", "meta-llama/Llama-3.1-8B"),
    ("Llama 3.2 1B", "meta-llama/Llama-3.2-1B"),
    ("Qwen2.5 7B", "Qwen/Qwen2.5-7B"),
    ("Qwen3 8B", "Qwen/Qwen3-8B"),
    ("DeepSeek-V3", "deepseek-ai/DeepSeek-V3"),
    ("Mistral 7B v0.3", "mistralai/Mistral-7B-v0.3"),
    ("Gemma 2 2B", "google/gemma-2-2b"),
    ("Phi-4", "microsoft/phi-4"),
    ("OLMo 2 7B", "allenai/OLMo-2-1124-7B"),
    ("StarCoder2 7B", "bigcode/starcoder2-7b"),
    ("GPT-NeoX 20B", "EleutherAI/gpt-neox-20b"),
)


class HubError(ValueError):
    """A Hub model whose tokenizer could not be had; the message is one line."""


class HubCancelled(Exception):
    """:func:`fetch_tokenizer` was cancelled (its ``cancelled()`` returned true)."""


@dataclass(frozen=True)
class HubModel:
    """A model on the Hub: ``repo_id`` ("ORG/NAME") at ``revision`` (None: the default
    branch)."""

    repo_id: str
    revision: str | None = None

    @property
    def name(self) -> str:
        """ "ORG/NAME", with "@REVISION" when one is given: how reports name the model."""
        return self.repo_id + (f"@{self.revision}" if self.revision else "")

    @property
    def source(self) -> str:
        """The ``hf:`` source naming it (what ``--tokenizer`` takes)."""
        return HUB_PREFIX + self.name


def parse_hub_source(source: str | os.PathLike[str]) -> HubModel | None:
    """The model ``hf:ORG/NAME[@REVISION]`` names; None for a source that is no ``hf:`` one.
    A malformed one raises HubError naming it.

    >>> parse_hub_source("hf:Qwen/Qwen2.5-7B@main")
    HubModel(repo_id='Qwen/Qwen2.5-7B', revision='main')
    >>> parse_hub_source("gpt2") is None
    True
    """
    if not isinstance(source, str) or not source.startswith(HUB_PREFIX):
        return None
    return parse_repo(source[len(HUB_PREFIX) :], source)


def parse_repo(text: str, given: str | None = None) -> HubModel:
    """``ORG/NAME[@REVISION]`` (as typed in the app) as a :class:`HubModel`."""
    repo, _, revision = text.strip().partition("@")
    if not _REPO_ID.fullmatch(repo) or "--" in repo or ".." in repo or (_ and not revision):
        raise HubError(
            f"{given or text}: expected a Hugging Face model as ORG/NAME or ORG/NAME@REVISION "
            "(e.g. hf:Qwen/Qwen2.5-7B)"
        )
    if revision and (not _REVISION.fullmatch(revision) or ".." in revision):
        raise HubError(
            f"{given or text}: {revision!r} is not a revision (a branch, tag or commit: no "
            "spaces, no '..', none of ~^:?*[\\)"
        )
    return HubModel(repo, revision or None)


def typed_model(text: str) -> HubModel:
    """A model as a person types or pastes it in the app: ``ORG/NAME[@REVISION]``, the same
    with ``hf:`` before it (as the command line spells it), or the model's page on
    huggingface.co. A malformed one raises HubError naming it.

    >>> typed_model(" hf:Qwen/Qwen2.5-7B ")
    HubModel(repo_id='Qwen/Qwen2.5-7B', revision=None)
    >>> typed_model("https://huggingface.co/Qwen/Qwen2.5-7B/tree/v1").name
    'Qwen/Qwen2.5-7B@v1'
    """
    text = text.strip()
    if text.startswith(HUB_PREFIX):
        return parse_repo(text[len(HUB_PREFIX) :], text)
    page = _HUB_PAGE.match(text)
    if page is not None and page[1] not in ("datasets", "spaces"):
        return parse_repo(f"{page[1]}/{page[2]}" + (f"@{page[3]}" if page[3] else ""), text)
    return parse_repo(text)


def hub_source_meant(name: str) -> str | None:
    """The ``hf:`` source a ``name`` that is no file and no preset may have meant: it reads as
    ``ORG/NAME[@REVISION]`` (not as a file's name) or is a model's page on huggingface.co;
    None otherwise.

    >>> hub_source_meant("https://huggingface.co/Qwen/Qwen2.5-7B/tree/main")
    'hf:Qwen/Qwen2.5-7B@main'
    >>> hub_source_meant("data/vocab.json") is None
    True
    """
    page = _HUB_PAGE.match(name.strip())
    if page is not None:
        if page[1] in ("datasets", "spaces"):
            return None  # not a model
        text = f"{page[1]}/{page[2]}" + (f"@{page[3]}" if page[3] else "")
    elif name.lower().endswith(_FILE_SUFFIXES):
        return None
    else:
        text = name
    try:
        return parse_repo(text).source
    except HubError:
        return None


ProgressFn = Callable[[int, "int | None"], None]
CancelledFn = Callable[[], bool]


def progress_class(progress: ProgressFn | None, cancelled: CancelledFn | None = None) -> type:
    """A ``tqdm`` class for ``hf_hub_download(tqdm_class=...)`` that draws nothing and tells
    ``progress(bytes done, total or None)`` instead; it raises :class:`HubCancelled` as the
    bytes come once ``cancelled()`` is true."""
    from tqdm import tqdm

    def tell(done: int, total: int | None) -> None:
        if cancelled is not None and cancelled():
            raise HubCancelled("the download was cancelled")
        if progress is not None:
            progress(done, total)

    class _Told(tqdm):
        # subtle: tqdm starts its monitor thread in __new__ unless this is 0, even for a bar
        # that draws nothing; a thread left running makes forking the encoders unsafe.
        monitor_interval = 0

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
            self.done = 0
            tell(0, self._total())

        def _total(self) -> int | None:
            return None if self.total is None else int(self.total)

        def update(self, n: float | None = 1) -> bool | None:
            self.done += int(n or 0)
            tell(self.done, self._total())
            return None

    return _Told


def _message(model: HubModel, error: BaseException, unreachable: str = "") -> str:
    """One line for a failed download (the error classes are huggingface_hub's)."""
    from huggingface_hub import constants
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    name, page = model.name, f"https://huggingface.co/{model.repo_id}"
    # subtle: the order matters: a gated repository's error is a RepositoryNotFoundError,
    # a file missing from the cache an EntryNotFoundError.
    if isinstance(error, GatedRepoError):
        return f"{name}: a gated model: accept its terms on {page}, then {LOG_IN}"
    if isinstance(error, RepositoryNotFoundError):
        return f"{name}: no such model on the Hugging Face Hub (if it is private, {LOG_IN})"
    if isinstance(error, RevisionNotFoundError):
        return f"{name}: the model has no revision {model.revision!r} (a branch, tag or commit)"
    if isinstance(error, LocalEntryNotFoundError):
        if constants.HF_HUB_OFFLINE:
            why = "HF_HUB_OFFLINE is set"
        else:
            why = unreachable or "the Hub cannot be reached"
        return _not_cached(model, why)
    if isinstance(error, EntryNotFoundError):
        return f"{name}: the model has no {TOKENIZER_FILE} (only its own library reads it)"
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"{name}: could not download its tokenizer ({first})"


def _not_cached(model: HubModel, why: str) -> str:
    """Why the cache gave no ``tokenizer.json`` for ``model``, ``why`` the Hub was not asked:
    the model not cached, its folder holding other files only, or a broken link."""
    name, folder = model.name, _snapshot_folder(model)
    entry = None if folder is None else folder / TOKENIZER_FILE
    if entry is not None and entry.is_symlink() and not entry.exists():  # its blob is gone
        return (
            f"{model.source}: its {TOKENIZER_FILE} in the Hugging Face cache links to a file "
            f"that is missing; {_clear_cache(model)}"
        )
    if entry is not None and entry.is_file():  # there, but huggingface_hub did not find it
        return (
            f"{model.source}: the Hugging Face cache holds its {TOKENIZER_FILE}, but its "
            f"record of the revision is damaged; {_clear_cache(model)}"
        )
    # huggingface_hub's mark of the Hub's own answer: the file is not in the model.
    no_file = None if folder is None else folder.parent.parent / ".no_exist" / folder.name
    if no_file is not None and (no_file / TOKENIZER_FILE).exists():
        return (
            f"{name}: the model has no {TOKENIZER_FILE}, as the Hub said when last asked "
            "(only its own library reads it)"
        )
    # What to do depends on why the Hub was not asked.
    if why.startswith("HF_HUB_OFFLINE"):
        todo = "unset HF_HUB_OFFLINE and connect once to download it"
    elif why.startswith("the Hub answered"):
        todo = "try again once the Hub answers (or from another network)"
    else:
        todo = "connect once to download it"
    if folder is not None:  # e.g. another library downloaded only the model's config
        return (
            f"{name}: its folder in the Hugging Face cache, {folder}, has no {TOKENIZER_FILE} "
            f"and {why}; {todo}"
        )
    return f"{name}: its tokenizer is not in the Hugging Face cache and {why}; {todo}"


def said_of_model(model: HubModel, error: ValueError) -> ValueError:
    """``error``, raised reading ``model``'s ``tokenizer.json`` from the cache, said of the
    model where the file is damaged within (not JSON or not UTF-8 past the ends
    :func:`fetch_tokenizer` looks at), with how to clear it; any other as it was."""
    text = str(error)
    for mark in (": not valid JSON", ": not UTF-8"):
        at = text.find(mark)
        if at >= 0:
            return HubError(
                f"{model.source}: its {TOKENIZER_FILE} in the Hugging Face cache is "
                f"{text[at + 2 :]}; {_clear_cache(model)}"
            )
    return error


def _model_folder(model: HubModel) -> Path:
    """The folder of the Hugging Face cache that holds ``model`` (every revision)."""
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    return Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=model.repo_id, repo_type="model")


def _snapshot_folder(model: HubModel) -> Path | None:
    """The cache's folder of ``model`` at its revision (a branch or tag resolved by the cache's
    refs, as huggingface_hub resolves them offline); None when the cache has none."""
    folder = _model_folder(model)
    revision = model.revision or "main"
    try:
        revision = (folder / "refs" / revision).read_text(encoding="utf-8").strip()
    except (OSError, ValueError):
        pass  # a commit hash, or a ref the cache does not know
    snapshot = folder / "snapshots" / revision
    return snapshot if "/" not in revision and snapshot.is_dir() else None


def _clear_cache(model: HubModel) -> str:
    """What to do about a damaged cache entry of ``model``."""
    return (
        f"remove the model from the cache (`hf cache rm model/{model.repo_id}`, or delete the "
        f"folder {_model_folder(model)}), then load it again to download it afresh"
    )


def _damaged(path: Path) -> str | None:
    """What is plainly wrong with a ``tokenizer.json`` from the cache, seen at its two ends
    (parsing it all is the reader's job, and would read a large file twice): empty, no JSON
    object (an error page saved in its place), or cut short; None when it looks whole."""
    try:
        with open(path, "rb") as file:
            head = file.read(64).lstrip()
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - 64))
            tail = file.read().rstrip()
    except OSError:
        return None  # unreadable: its reader says why, naming the file
    if not head:
        return "empty"
    if not head.startswith(b"{"):
        return f"not JSON (it begins {head[:16].decode('utf-8', 'replace')!r})"
    if not tail.endswith(b"}"):
        return "cut short (it does not end with '}')"
    return None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def hub_reachable(model: HubModel) -> str | None:
    """Ask the Hub, once and without retries, for ``model``'s ``tokenizer.json``: None when it
    answers with the file; why not, for the cache alone to be read ("the Hub cannot be
    reached (…)", "the Hub answered 429 Too Many Requests"), when it cannot be reached in
    :data:`HUB_TIMEOUT` seconds (huggingface_hub's own first request included) or answers
    anything else that says nothing of the model (a proxy, a firewall, a rate limit, a server
    error). The Hub's own refusals (no such model, gated, no such
    revision or file) are raised as :class:`HubError`, unless the cache holds the model's
    ``tokenizer.json``: then they too are a reason to read the cache."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )
    from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]  # (lazy)

    url = hf_hub_url(model.repo_id, TOKENIZER_FILE, revision=model.revision)
    started = monotonic()
    try:
        # subtle: huggingface_hub's first request headers in a process ask the Hub for its
        # list of agent harnesses (utils/_detect_agent.py: one GET of up to 3 s, kept for the
        # process, on disk only when it succeeds), before the request they are for. Built
        # here, that GET counts within HUB_TIMEOUT: the file's request gets what is left.
        build_hf_headers()
        left = HUB_TIMEOUT - (monotonic() - started)
        if left <= 0:
            return f"the Hub cannot be reached (no answer in {HUB_TIMEOUT:g} s)"
        get_hf_file_metadata(url, timeout=left)
    except (EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError) as error:
        # The Hub's own word on the model (gated models are "not found" too, as
        # huggingface_hub classifies them by the Hub's X-Error-Code). A tokenizer downloaded
        # before is still read: a token expired or a model gated since loses nothing.
        if _tokenizer_cached(model):
            return f"the Hub refused it ({_first_line(error)})"
        raise HubError(_message(model, error)) from None
    except HfHubHTTPError as error:
        # Any other answer says nothing of the model: a proxy's 407, a firewall's 403, a rate
        # limit's 429, a server error. The cache is read, as hf_hub_download reads it then.
        response = getattr(error, "response", None)
        if response is None:
            return f"the Hub answered {_first_line(error)}"
        said = response.headers.get("X-Error-Message")
        if response.status_code in (401, 403) and said and not _tokenizer_cached(model):
            # The Hub itself refused this client (an expired or invalid token, one without
            # access): connecting again would not help; the token is what to change.
            raise HubError(
                f"{model.name}: the Hub refused the request ({said}); {LOG_IN}, or unset "
                "HF_TOKEN if it has expired"
            ) from None
        return f"the Hub answered {response.status_code} {response.reason_phrase}".rstrip()
    except Exception as error:  # a refused connection, an unknown host, a timeout
        return f"the Hub cannot be reached ({_first_line(error)})"
    return None


def _tokenizer_cached(model: HubModel) -> bool:
    """Whether the cache holds ``model``'s ``tokenizer.json`` (a file, not a broken link)."""
    from huggingface_hub import try_to_load_from_cache

    path = try_to_load_from_cache(model.repo_id, TOKENIZER_FILE, revision=model.revision)
    return isinstance(path, str) and os.path.isfile(path)


def fetch_tokenizer(
    model: HubModel, progress: ProgressFn | None = None, *, cancelled: CancelledFn | None = None
) -> Path:
    """Download (or find in the cache) ``tokenizer.json`` and ``tokenizer_config.json`` of
    ``model``; the snapshot folder holding them. Raises HubError (one line), within about
    :data:`HUB_TIMEOUT` seconds when the Hub cannot be reached, or HubCancelled within
    :data:`CANCEL_POLL` seconds of ``cancelled()`` turning true."""
    if cancelled is None:
        return _fetch(model, progress, None)
    # subtle: a request blocks until the Hub answers or the timeout, and on a slow link the
    # bytes come seconds apart: the fetch runs in a thread of its own, and a cancel returns
    # at once. The thread ends at its next bytes (``progress_class`` raises) or its timeout;
    # it writes only into the Hub's cache (cut short, a part file, as any download left).
    folders: list[Path] = []
    failures: list[BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            folders.append(_fetch(model, progress, cancelled))
        except BaseException as error:  # handed to the caller's thread
            failures.append(error)
        finally:
            done.set()

    threading.Thread(target=run, name=f"fetch {model.name}", daemon=True).start()
    while not done.wait(CANCEL_POLL):
        if cancelled():
            raise HubCancelled("the download was cancelled")
    if failures:
        raise failures[0]
    return folders[0]


def _fetch(model: HubModel, progress: ProgressFn | None, cancelled: CancelledFn | None) -> Path:
    """:func:`fetch_tokenizer`'s work (in a thread of its own where it can be cancelled)."""
    import huggingface_hub
    from huggingface_hub import constants
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

    # subtle: huggingface_hub reads DOWNLOAD_CHUNK_SIZE bytes (10 MB) between two reports,
    # more than nearly every tokenizer.json holds: the progress stood at 0 and a cancel
    # waited for the whole file. It is read at each download.
    constants.DOWNLOAD_CHUNK_SIZE = min(constants.DOWNLOAD_CHUNK_SIZE, DOWNLOAD_CHUNK)

    def check() -> None:
        if cancelled is not None and cancelled():
            raise HubCancelled("the download was cancelled")

    told = progress_class(progress, cancelled) if progress or cancelled else None
    unreachable = "" if constants.HF_HUB_OFFLINE else hub_reachable(model)
    # subtle: unreachable, the cache alone is asked; otherwise hf_hub_download, finding the
    # file missing from the cache after a failed request, retries five times over 23 s.
    local = bool(constants.HF_HUB_OFFLINE or unreachable)
    check()

    def download(filename: str) -> Path:
        got = huggingface_hub.hf_hub_download(
            model.repo_id,
            filename,
            revision=model.revision,
            tqdm_class=told,
            local_files_only=local,
            etag_timeout=HUB_TIMEOUT,
        )
        return Path(str(got))

    try:
        path = download(TOKENIZER_FILE)
    except (OSError, HfHubHTTPError, EntryNotFoundError, ValueError) as error:
        raise HubError(_message(model, error, unreachable or "")) from None
    damaged = _damaged(path)
    if damaged is not None:  # its reader would name the blob only, not the model
        raise HubError(
            f"{model.source}: its {TOKENIZER_FILE} in the Hugging Face cache is {damaged}; "
            f"{_clear_cache(model)}"
        )
    check()
    try:
        download(CONFIG_FILE)
    except (OSError, HfHubHTTPError, EntryNotFoundError, ValueError):
        pass  # the config is optional: tokenizer.json marks its special tokens itself
    return path.parent


def cached_files(model: HubModel) -> list[Path]:
    """``model``'s ``tokenizer.json`` and ``tokenizer_config.json`` as the cache holds them
    now (links in a snapshot folder, into the cache's blobs), without asking the Hub; none
    for a model not cached."""
    from huggingface_hub import try_to_load_from_cache

    found = []
    for name in (TOKENIZER_FILE, CONFIG_FILE):
        path = try_to_load_from_cache(model.repo_id, name, revision=model.revision)
        if isinstance(path, str):  # else None (not cached) or a marker (known missing)
            found.append(Path(path))
    return found


def named_special_tokens(folder: Path) -> list[str]:
    """The special tokens ``tokenizer_config.json`` in ``folder`` names (bos, eos, unk, pad,
    sep, cls, mask and the additional ones), in that order; none without the file."""
    try:
        config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # (a file nested past the parser's depth)
        return []
    if not isinstance(config, dict):
        return []
    names: list[str] = []
    keys = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token")
    values = [config.get(k) for k in (*keys, "mask_token")]
    more = config.get("additional_special_tokens")
    # subtle: a list, as transformers requires; anything else is read past as a broken file
    # is (a string's letters each became a special token, and a number raised TypeError).
    values += more if isinstance(more, list) else []
    for value in values:
        token = value.get("content") if isinstance(value, dict) else value
        if isinstance(token, str) and token and token not in names:
            names.append(token)
    return names
