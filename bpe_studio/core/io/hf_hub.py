"""Tokenizer files of models on the Hugging Face Hub, fetched into the Hub's own cache.

What it does: :func:`parse_hub_source` reads ``hf:ORG/NAME[@REVISION]`` into a
:class:`HubModel`; :func:`fetch_tokenizer` downloads the model's ``tokenizer.json`` and, when
the model has one, its ``tokenizer_config.json`` (which names the special tokens) with
``huggingface_hub.hf_hub_download``, into huggingface_hub's cache (``HF_HUB_CACHE`` /
``HF_HOME``; a file already there is used offline), telling ``progress(done, total)`` the
bytes as they come; the folder holding them is returned, for ``foreign.open_tokenizer``.
Offline, gated (needs a token), a model or revision not found, a model without a
``tokenizer.json``: each is a :class:`HubError` of one line saying what to do.
:data:`POPULAR` is the curated list of open models the app offers.
What it leaves out: reading the files (``files``, ``foreign``), log-in (the ``hf``
command, ``HF_TOKEN``), the app's and the command line's progress display.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HUB_PREFIX = "hf:"
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "tokenizer_config.json"
LOG_IN = "log in with `hf auth login` (or set HF_TOKEN to an access token)"
# ORG/NAME as the Hub spells repository ids: letters, digits, "-", "_", "."; no "--" or "..".
_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")
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
    return HubModel(repo, revision or None)


def progress_class(progress: Callable[[int, int | None], None]) -> type:
    """A ``tqdm`` class for ``hf_hub_download(tqdm_class=...)`` that draws nothing and tells
    ``progress(bytes done, total or None)`` instead."""
    from tqdm import tqdm

    class _Told(tqdm):
        # subtle: tqdm starts its monitor thread in __new__ unless this is 0, even for a bar
        # that draws nothing; a thread left running makes forking the encoders unsafe.
        monitor_interval = 0

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
            self.done = 0
            progress(0, self._total())

        def _total(self) -> int | None:
            return None if self.total is None else int(self.total)

        def update(self, n: float | None = 1) -> bool | None:
            self.done += int(n or 0)
            progress(self.done, self._total())
            return None

    return _Told


def _message(model: HubModel, error: BaseException) -> str:
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
        why = "HF_HUB_OFFLINE is set" if constants.HF_HUB_OFFLINE else "the Hub cannot be reached"
        return (
            f"{name}: its tokenizer is not in the Hugging Face cache and {why}; connect once "
            "to download it"
        )
    if isinstance(error, EntryNotFoundError):
        return f"{name}: the model has no {TOKENIZER_FILE} (only its own library reads it)"
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"{name}: could not download its tokenizer ({first})"


def fetch_tokenizer(
    model: HubModel, progress: Callable[[int, int | None], None] | None = None
) -> Path:
    """Download (or find in the cache) ``tokenizer.json`` and ``tokenizer_config.json`` of
    ``model``; the snapshot folder holding them. Raises HubError (one line)."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

    told = progress_class(progress) if progress is not None else None

    def download(filename: str) -> Path:
        got = hf_hub_download(model.repo_id, filename, revision=model.revision, tqdm_class=told)
        return Path(str(got))

    try:
        path = download(TOKENIZER_FILE)
    except (OSError, HfHubHTTPError, EntryNotFoundError, ValueError) as error:
        raise HubError(_message(model, error)) from None
    try:
        download(CONFIG_FILE)
    except (OSError, HfHubHTTPError, EntryNotFoundError, ValueError):
        pass  # the config is optional: tokenizer.json marks its special tokens itself
    return path.parent


def named_special_tokens(folder: Path) -> list[str]:
    """The special tokens ``tokenizer_config.json`` in ``folder`` names (bos, eos, unk, pad,
    sep, cls, mask and the additional ones), in that order; none without the file."""
    try:
        config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return []
    if not isinstance(config, dict):
        return []
    names: list[str] = []
    keys = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token")
    values = [config.get(k) for k in (*keys, "mask_token")]
    values += list(config.get("additional_special_tokens") or [])
    for value in values:
        token = value.get("content") if isinstance(value, dict) else value
        if isinstance(token, str) and token and token not in names:
            names.append(token)
    return names
