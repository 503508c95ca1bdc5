"""Damaged or odd corpus files: read whole or refused with one line naming the file, never
read short (found by fuzzing the corpus inputs: a .zst cut short counted what was left with
no error; a .gz cut short raised a bare EOFError). Also: every zstd frame layout a writer
makes reads whole, JSON Lines must be UTF-8, ``records="text"`` reads a ``.jsonl`` as the
text it is, and an empty text field is refused.

The expected counts come from ``core.reference.pretoken_counts`` (the slow reference) on the
text before it was compressed; the text is a fixture slice (real text, tests/fixtures)."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from core_helpers import EOT, SLICES, read_fixture
from reference_encoder import published

from bpe_studio.core import CorpusError, count_file, train_bpe
from bpe_studio.core.corpus.sources import resolve_corpus
from bpe_studio.core.reference import pretoken_counts

TEXT = read_fixture(SLICES["english"])[:60_000]
GPT2 = published("r50k_base")["pat_str"]


def zst(data: bytes, **options) -> bytes:
    return zstandard.ZstdCompressor(**options).compress(data)


def skippable(payload: bytes) -> bytes:
    """A zstd skippable frame (what pzstd writes first)."""
    return (0x184D2A50).to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload


def frames(text: bytes) -> bytes:
    """``text`` as several zstd frames of different layouts: a skippable frame, one with a
    checksum and its content size, one without either, one of a single byte."""
    a, b, c = text[:1000], text[1000:-1], text[-1:]
    return (
        skippable(b"meta")
        + zst(a, write_checksum=True)
        + zst(b, write_content_size=False)
        + skippable(b"")
        + zst(c)
    )


@pytest.mark.parametrize("layout", ["one frame", "frames"])
def test_every_zstd_frame_layout_reads_whole(tmp_path, layout):
    raw = TEXT.encode()
    path = tmp_path / "t.txt.zst"
    path.write_bytes(zst(raw, write_checksum=True) if layout == "one frame" else frames(raw))
    assert count_file(path) == pretoken_counts(TEXT, [], GPT2)


def test_a_large_zstd_stream_of_many_blocks_and_frames_reads_whole(tmp_path):
    raw = (TEXT * 40).encode()  # 2.4 MB: frames of many 128 KB blocks, read 1 MB at a time
    data = b"".join(zst(raw[i : i + 700_000], level=1) for i in range(0, len(raw), 700_000))
    path = tmp_path / "big.txt.zst"
    path.write_bytes(skippable(bytes(70_000)) + data)
    with resolve_corpus(path)[0].open() as stream:
        assert stream.read() == raw


@pytest.mark.parametrize("cut", [1, 3, 4, 7, 200, -5])
def test_a_zstd_file_cut_short_is_refused(tmp_path, cut):
    data = frames(TEXT.encode())
    # Cut inside the last frame's data, inside a header (-5: the last frame's first bytes).
    cut_data = data[:-cut] if cut > 0 else data[: len(data) - len(zst(TEXT[-1:].encode())) - cut]
    path = tmp_path / "cut.txt.zst"
    path.write_bytes(cut_data)
    with pytest.raises(CorpusError, match=r"cut\.txt\.zst: not readable as zstd"):
        count_file(path)


DAMAGED = {
    "gz cut short": ("t.txt.gz", lambda d: gzip.compress(d)[:-20]),
    "bz2 cut short": ("t.txt.bz2", lambda d: bz2.compress(d)[:-20]),
    "xz cut short": ("t.txt.xz", lambda d: lzma.compress(d)[:-20]),
    "gz damaged": ("t.txt.gz", lambda d: gzip.compress(d)[:30] + b"\xff" * 64 + b"\x00"),
    "xz damaged": ("t.txt.xz", lambda d: (c := lzma.compress(d))[:40] + b"\0" * 40 + c[80:]),
    "zst damaged": ("t.txt.zst", lambda d: (c := zst(d))[:20] + bytes(40) + c[60:]),
    "gz not compressed": ("t.txt.gz", lambda d: d),
    "bz2 not compressed": ("t.txt.bz2", lambda d: d),
    "zst not compressed": ("t.txt.zst", lambda d: d),
}


@pytest.mark.parametrize("case", list(DAMAGED))
def test_a_damaged_compressed_file_is_one_error_naming_it(tmp_path, case):
    name, damage = DAMAGED[case]
    path = tmp_path / name
    path.write_bytes(damage(TEXT.encode()))
    with pytest.raises(CorpusError, match=rf"{name.replace('.', '[.]')}: not readable as"):
        count_file(path)
    with pytest.raises(CorpusError, match="not readable as"):
        train_bpe(path, 300, [])


def test_a_damaged_parquet_page_names_the_file_and_row_group(tmp_path):
    buffer = io.BytesIO()
    docs = [f"document {i} " * 40 for i in range(2000)]
    pq.write_table(pa.table({"text": docs}), buffer, row_group_size=500)
    data = bytearray(buffer.getvalue())
    for i in range(200, 400):  # inside the first row group's pages; the footer intact
        data[i] ^= 0x5A
    path = tmp_path / "d.parquet"
    path.write_bytes(bytes(data))
    with pytest.raises(CorpusError, match=r"d\.parquet: row group 1 of \d+: cannot read it"):
        count_file(path)


def test_json_lines_must_be_utf8(tmp_path):
    line = json.dumps({"text": "hello world"}) + "\n"
    for encoding in ["utf-16-be", "utf-16-le", "utf-32"]:
        path = tmp_path / "r.jsonl"
        path.write_bytes(line.encode(encoding))
        with pytest.raises(CorpusError, match=r"r\.jsonl: line 1: not"):
            count_file(path)
    # A byte order mark first is let through, as json.loads lets it through.
    path.write_bytes(b"\xef\xbb\xbf" + line.encode() * 2)
    once = pretoken_counts("hello world", [], GPT2)
    assert count_file(path) == once + once


def test_records_text_reads_a_jsonl_name_as_text(tmp_path):
    lines = "".join(json.dumps({"text": d}) + "\n" for d in ["one two", "three"])
    path = tmp_path / "r.jsonl"
    path.write_text(lines, encoding="utf-8")
    assert count_file(path, records="text") == pretoken_counts(lines, [EOT], GPT2)
    assert count_file(path) == pretoken_counts("one two", [], GPT2) + pretoken_counts(
        "three", [], GPT2
    )


def test_an_empty_text_field_is_refused(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"text": "x", "": "y"}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="text field given is empty"):
        count_file(path, text_field="")


def test_zstd_without_zstandard_says_what_to_install_even_where_fsspec_reads_zstd(
    tmp_path, monkeypatch
):
    # compressed.py reads zstd with zstandard; fsspec may register zstd without it (Python
    # 3.14's compression.zstd), which would have ended in an ImportError traceback.
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "zstandard" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    path = tmp_path / "a.txt.zst"
    path.write_bytes(zst(b"hello"))
    with pytest.raises(CorpusError, match=r"a\.txt\.zst: reading it needs the zstandard package"):
        count_file(path)
