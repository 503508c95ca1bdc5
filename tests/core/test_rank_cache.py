"""The per-user cache of what reading a rank file derives (``formats.tiktoken.rank_cache``): a
second read of the same file comes from the cache and gives the same record (ids included), a
changed file gets its own entry, an unreadable entry is ignored and written afresh, and an empty
``$BPE_STUDIO_CACHE_DIR`` turns the cache off."""

from __future__ import annotations

import base64
from unittest import mock

from core_helpers import EOT

from bpe_studio.core import Tokenizer
from bpe_studio.core.formats.presets import preset_data
from bpe_studio.core.formats.tiktoken import rank_cache, read_tiktoken, reading

SMALL_RANKS = 3000


def small_rank_file(path, shuffle: bool = False) -> dict[bytes, int]:
    """cl100k's first ranks (not the shipped file: merges derived), optionally written out of
    rank order."""
    ranks = {tok: rank for rank, tok in preset_data("cl100k_base").vocab.items()}
    small = {tok: rank for tok, rank in ranks.items() if rank < SMALL_RANKS}
    items = sorted(small.items(), key=lambda kv: kv[1])
    if shuffle:
        items = items[::-1]
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in items))
    return small


def test_second_read_comes_from_the_cache_and_equals_the_first(tmp_path, monkeypatch):
    path = tmp_path / "small.tiktoken"
    small = small_rank_file(path, shuffle=True)
    monkeypatch.setenv(rank_cache.CACHE_ENV, str(tmp_path / "cache"))
    first = read_tiktoken(path, "cl100k", {EOT: SMALL_RANKS})
    assert len(list((tmp_path / "cache").iterdir())) == 1
    with mock.patch.object(reading, "parse", side_effect=AssertionError("parsed")):
        second = read_tiktoken(path, "cl100k", {EOT: SMALL_RANKS})
    assert second == first and second.merge_ids == first.merge_ids
    assert second.vocab == {rank: tok for tok, rank in small.items()} | {
        SMALL_RANKS: b"<|endoftext|>"
    }
    text = "The cache gives the same ids: 42 tokens, naïve café."
    assert Tokenizer.from_data(second).encode(text) == Tokenizer.from_data(first).encode(text)


def test_a_changed_file_gets_its_own_entry(tmp_path, monkeypatch):
    path = tmp_path / "small.tiktoken"
    small_rank_file(path)
    monkeypatch.setenv(rank_cache.CACHE_ENV, str(tmp_path / "cache"))
    first = read_tiktoken(path, "cl100k")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # the last rank dropped
    second = read_tiktoken(path, "cl100k")
    assert len(second.vocab) == len(first.vocab) - 1
    assert second.merges == first.merges[:-1]
    assert len(list((tmp_path / "cache").iterdir())) == 2


def test_an_unreadable_entry_is_ignored_and_rewritten(tmp_path, monkeypatch):
    path = tmp_path / "small.tiktoken"
    small_rank_file(path)
    monkeypatch.setenv(rank_cache.CACHE_ENV, str(tmp_path / "cache"))
    first = read_tiktoken(path, "cl100k")
    (entry,) = (tmp_path / "cache").iterdir()
    entry.write_bytes(entry.read_bytes()[:1000])
    assert read_tiktoken(path, "cl100k") == first
    assert read_tiktoken(path, "cl100k") == first
    assert entry.stat().st_size > 1000


def test_an_empty_cache_dir_setting_turns_the_cache_off(tmp_path, monkeypatch):
    path = tmp_path / "small.tiktoken"
    small_rank_file(path)
    monkeypatch.setenv(rank_cache.CACHE_ENV, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert rank_cache.cache_dir() is None
    read_tiktoken(path, "cl100k")
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()


def test_presets_from_the_cache_encode_as_from_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv(rank_cache.CACHE_ENV, str(tmp_path / "cache"))
    text = "中华人民共和国成立了 and the cache, 1234 naïve 😀"
    for name in ("cl100k_base", "o200k_base"):
        fresh = Tokenizer.preset(name)
        cached = Tokenizer.preset(name)
        assert cached.merges == fresh.merges and cached.vocab == fresh.vocab
        assert cached.encode(text) == fresh.encode(text)


def test_an_entry_with_a_byte_changed_is_ignored_and_rewritten(tmp_path, monkeypatch):
    """The entry's shape was all that was checked: " the" changed to " thf" in place was
    read as the ranks, and " thf" encoded as the token of " the"."""
    path = tmp_path / "small.tiktoken"
    small_rank_file(path)
    monkeypatch.setenv(rank_cache.CACHE_ENV, str(tmp_path / "cache"))
    first = read_tiktoken(path, "cl100k")
    (entry,) = (tmp_path / "cache").iterdir()
    data = entry.read_bytes()
    assert data.count(b" the") >= 1
    entry.write_bytes(data.replace(b" the", b" thf", 1))
    assert read_tiktoken(path, "cl100k") == first
    assert entry.read_bytes() == data  # written afresh


def test_a_scan_table_zeroed_after_its_header_is_built_again(tmp_path, monkeypatch):
    """The class table's file was checked for its dtype and shape only: zeroed past its
    header it was read as a table, and every preset gave other ids, on every run."""
    from bpe_studio.core.pretokenization import scan_tables

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(scan_tables, "_table", None)
    monkeypatch.setattr(scan_tables, "_padded", None)
    built = scan_tables.class_table().copy()
    (cached,) = (tmp_path / "xdg" / "bpe-studio" / "scan").iterdir()
    for damage in (lambda d: d[:128] + bytes(len(d) - 128), lambda d: b"", lambda d: d[:-1]):
        cached.write_bytes(damage(cached.read_bytes()))
        monkeypatch.setattr(scan_tables, "_table", None)
        assert (scan_tables.class_table() == scan_tables.build_table()).all()
        assert (scan_tables.class_table() == built).all()
        monkeypatch.setattr(scan_tables, "_table", None)
        assert (scan_tables.class_table() == built).all()  # read back from the file rebuilt


def test_another_files_entry_under_this_files_name_is_a_miss(tmp_path, monkeypatch):
    """A cache audit: cl100k's entry copied over o200k's name gave o200k cl100k's ranks,
    silently, on every run (the seal vouched for the bytes, not for whose they were)."""
    from reference_encoder import shipped_tiktoken

    cache = tmp_path / "cache"
    monkeypatch.setenv(rank_cache.CACHE_ENV, str(cache))
    Tokenizer.preset("o200k_base"), Tokenizer.preset("cl100k_base")
    entries = sorted(cache.iterdir(), key=lambda p: p.stat().st_size)
    assert len(entries) == 2
    small, large = entries  # cl100k's, o200k's
    large.write_bytes(small.read_bytes())
    text = "The cache must not hand one file's ranks to another: 1234 naïve café 😀"
    assert Tokenizer.preset("o200k_base").encode(text) == shipped_tiktoken("o200k_base").encode(
        text
    )
    assert large.read_bytes() != small.read_bytes()  # written afresh, its own


def test_temporary_files_a_killed_writer_left_are_removed_once_old(tmp_path, monkeypatch):
    """A cache audit: each kill -9 during a rank-cache write left its temporary file (up to
    9 MB) for good."""
    import os
    import time

    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv(rank_cache.CACHE_ENV, str(cache))
    old = cache / ".abc-py311-v2.marshal.k3j5h2l1.tmp"
    fresh = cache / ".def-py311-v2.marshal.q8w7e6r5.tmp"  # a live writer's, maybe
    for path in (old, fresh):
        path.write_bytes(b"half an entry")
    hours_ago = time.time() - 2 * 3600
    os.utime(old, (hours_ago, hours_ago))
    path = tmp_path / "small.tiktoken"
    small_rank_file(path)
    read_tiktoken(path, "cl100k")  # a miss: an entry written
    assert not old.exists() and fresh.exists()
    assert any(p.suffix == ".marshal" for p in cache.iterdir())
