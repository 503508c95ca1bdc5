"""Which OpenAI encoding a rank file is ("cl100k_base", "o200k_base"), recognised by its
bytes whatever its name: those the package ships merges for (``shipped``).
What it leaves out: their pattern and special tokens (``base.preset_table``).
"""

from __future__ import annotations

import hashlib
import os

from .ranks import read_raw
from .shipped import shipped_splits


def openai_encoding(sha256: str) -> str | None:
    """The name of the OpenAI encoding ("cl100k_base", "o200k_base") whose rank file has
    this sha256, among those the package ships merges for; else None."""
    resource = shipped_splits().get(sha256)
    return None if resource is None else resource.removesuffix(".splits.gz")


def openai_encoding_of(rank_file: str | os.PathLike) -> str | None:
    """The OpenAI encoding ("cl100k_base", "o200k_base") whose rank file ``rank_file`` is,
    recognised by its bytes whatever its name; None for any other file or one that cannot be
    read (reading it says why)."""
    try:
        raw = read_raw(rank_file)
    except ValueError:
        return None
    return openai_encoding(hashlib.sha256(raw).hexdigest())
