"""The per-user cache folder: on Linux, where caches written by earlier versions are, so they
are still found (``$XDG_CACHE_HOME/bpe-studio/<part>``, else ``~/.cache/bpe-studio/<part>``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bpe_studio.core.io.user_cache import user_cache_dir

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the XDG rule is Linux's"
)


def test_xdg_cache_home_is_used(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache_dir("numba") == tmp_path / "xdg" / "bpe-studio" / "numba"


@pytest.mark.parametrize("xdg", [None, "", "  "])
def test_without_xdg_cache_home_the_home_cache(monkeypatch, tmp_path, xdg):
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert user_cache_dir("tiktoken") == Path(tmp_path, ".cache", "bpe-studio", "tiktoken")
