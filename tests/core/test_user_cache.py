"""The per-user cache folder's fallback in the temporary folder (``core.io.user_cache``).

Its path is predictable (``bpe-studio-<uid>``), so another user can make it first; numba's
cache index files in it are pickles, which run code when numba reads them. A folder that is
not this user's alone is never used. Where there is no home folder at all (``HOME`` unset
and no password entry, as in ``docker run --user N``), platformdirs raises: the caches then
use the same private folder rather than fail.
"""

from __future__ import annotations

import os
import stat
import tempfile

import pytest

from bpe_studio.core.io import numba_cache, user_cache

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")


@pytest.fixture
def temp_root(tmp_path, monkeypatch):
    """A temporary folder of the test's own, and nothing said or chosen before."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setattr(user_cache, "_refused", set())
    monkeypatch.setattr(numba_cache, "_usable", [])
    return root


def test_the_private_folder_is_made_for_this_user_alone(temp_root):
    folder = user_cache.private_temp_dir()
    assert folder == temp_root / f"bpe-studio-{os.getuid()}"
    st = os.lstat(folder)
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) & 0o077 == 0
    assert user_cache.private_temp_dir() == folder  # made before by this user: used again


@pytest.mark.parametrize("kind", ["others write", "a link", "another user's"])
def test_a_folder_made_by_someone_else_is_never_used(temp_root, monkeypatch, caplog, kind):
    planted = temp_root / f"bpe-studio-{os.getuid()}"
    if kind == "others write":
        planted.mkdir()
        planted.chmod(0o777)
        why = "others can write in it (mode 777)"
    elif kind == "a link":
        (temp_root / "elsewhere").mkdir(mode=0o700)
        planted.symlink_to(temp_root / "elsewhere")
        why = "it is not a folder (a link or a file)"
    else:
        planted.mkdir(mode=0o700)
        me = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: me + 1)  # the folder is now someone else's
        planted.rename(temp_root / f"bpe-studio-{me + 1}")
        planted = temp_root / f"bpe-studio-{me + 1}"
        why = f"it belongs to another user (uid {me})"
    with caplog.at_level("WARNING"):
        assert user_cache.private_temp_dir() is None
        assert user_cache.private_temp_dir() is None
    assert caplog.text.count(f"not using {planted} as a cache: {why}") == 1
    # numba's fallback is then no cache at all, rather than the planted folder.
    monkeypatch.setattr(numba_cache.config, "CACHE_DIR", str(temp_root / "a file" / "numba"))
    (temp_root / "a file").write_text("not a folder")
    assert numba_cache.usable_cache_dir() is None
    assert "compiling them in each process" in caplog.text


def test_without_a_home_folder_the_caches_use_the_private_folder(temp_root, monkeypatch):
    def no_home(*args, **kwargs):
        raise RuntimeError("could not determine the home directory for '~/.cache'")

    monkeypatch.setattr(user_cache, "user_cache_path", no_home)
    private = temp_root / f"bpe-studio-{os.getuid()}"
    assert user_cache.user_cache_dir("numba") == private / "numba"
    monkeypatch.setattr(numba_cache.config, "CACHE_DIR", "")
    assert numba_cache.usable_cache_dir() == private / "numba"
    from bpe_studio.core.formats.tiktoken import rank_cache

    monkeypatch.delenv(rank_cache.CACHE_ENV, raising=False)
    assert rank_cache.cache_dir() == private / "tiktoken"
    # And with that folder planted too: no cache, and no error.
    monkeypatch.setattr(numba_cache, "_usable", [])
    private.chmod(0o777)
    assert user_cache.user_cache_dir("numba") is None
    assert rank_cache.cache_dir() is None and rank_cache.load("0" * 64) is None
    assert numba_cache.usable_cache_dir() is None


def test_the_private_folder_is_neither_made_nor_judged_while_the_cache_folder_works(
    temp_root, monkeypatch, tmp_path, caplog
):
    # A review: every process made bpe-studio-<uid> in the temporary folder, and warned of
    # a planted one, though numba cached in the user's own folder.
    planted = temp_root / f"bpe-studio-{os.getuid()}"
    planted.mkdir()
    planted.chmod(0o777)
    monkeypatch.setattr(numba_cache.config, "CACHE_DIR", str(tmp_path / "mine" / "numba"))
    with caplog.at_level("WARNING"):
        assert numba_cache.usable_cache_dir() == tmp_path / "mine" / "numba"
    assert caplog.text == ""
    planted.rmdir()
    monkeypatch.setattr(numba_cache, "_usable", [])
    assert numba_cache.usable_cache_dir() == tmp_path / "mine" / "numba"
    assert not planted.exists()
