"""A corpus that is not UTF-8 names the line as well as the byte offset, as JSON Lines errors
do: in a byte range of a plain file far from its start (the lines before the range are
counted, on the error path only), and in a compressed stream read a block at a time (a bad
byte in a later block, and a character cut by a block's end). The expected offset and line
come from Python's own decoder and ``bytes.count`` on the file's bytes."""

from __future__ import annotations

import gzip
import importlib

import pytest
from core_helpers import EOT, SLICES, read_fixture

from bpe_studio.core import CorpusError, Tokenizer, count_file, encode_file
from bpe_studio.core.corpus import counting, tasks
from bpe_studio.core.explain.usage import corpus_usage

ENCODE_FILE = importlib.import_module("bpe_studio.core.encode.encode_file")
TEXT = read_fixture(SLICES["english"]).encode("utf-8")


def expected_error(data: bytes) -> tuple[int, int]:
    """Python's first undecodable byte of ``data``, and its line (from 1)."""
    with pytest.raises(UnicodeDecodeError) as info:
        data.decode("utf-8")
    at = info.value.start
    return at, data.count(b"\n", 0, at) + 1


def damaged(at: int, bad: bytes) -> bytes:
    """The fixture's text with ``bad`` put in at byte ``at`` (after a line break before it,
    so no character is cut), as long as it needs."""
    data = TEXT * (at // len(TEXT) + 2)
    cut = data.rindex(b"\n", 0, at) + 1
    return data[:cut] + bad + data[cut:]


def bad_plain_file(tmp_path, at: int) -> tuple[object, int, str]:
    """A plain file with a byte that cannot start a character near byte ``at``: its path,
    Python's offset of that byte, and the message expected for it."""
    data = damaged(at, b"\xff")
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    offset, line = expected_error(data)
    message = (
        f"{path}: not valid UTF-8 at byte offset {offset} (invalid start byte), line {line}; "
        "convert the file to UTF-8 first"
    )
    return path, offset, message


@pytest.mark.parametrize("workers", [1, 2])
def test_a_byte_range_far_into_a_plain_file_names_the_line(tmp_path, workers):
    path, at, expected = bad_plain_file(tmp_path, 700_000)
    assert at > counting.IN_PROCESS_CHUNK and "line 1;" not in expected  # not the first range
    with pytest.raises(CorpusError) as info:
        count_file(path, [EOT], workers=workers)
    assert str(info.value) == expected


@pytest.mark.parametrize("split", [False, True])
def test_a_compressed_stream_names_the_line(tmp_path, monkeypatch, split):
    monkeypatch.setattr(tasks, "STREAM_BLOCK", 64 * 1024)
    # In a later block; ``split``: a character's first byte ends a block, its next is wrong.
    bad = b"\xe4\xb8x" if split else b"\xff"
    data = damaged(300_000, bad)
    if split:
        start = data.index(bad)
        shift = (-(start + 1)) % tasks.STREAM_BLOCK  # text added so that \xe4 ends a block
        data = data[:start] + b"y" * shift + data[start:]
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(gzip.compress(data))
    at, line = expected_error(data)
    if split:
        assert (at + 1) % tasks.STREAM_BLOCK == 0
    with pytest.raises(CorpusError) as info:
        count_file(path, [EOT], workers=1)
    message = str(info.value)
    assert message.startswith(f"{path} (decompressed): not valid UTF-8 at byte offset {at} (")
    assert message.endswith(f"), line {line}; convert the file to UTF-8 first")


@pytest.mark.parametrize("workers", [1, 2])
def test_encoding_a_file_names_the_line_too(tmp_path, workers):
    # Training named the line; `bpe-studio encode` and `inspect --corpus` gave the offset
    # alone for the same file.
    path, _, expected = bad_plain_file(tmp_path, 2_500_000)
    tok = Tokenizer.preset("gpt2")
    with pytest.raises(CorpusError) as info:
        encode_file(tok, path, tmp_path / "ids.npy", workers=workers)
    assert str(info.value) == expected
    with pytest.raises(CorpusError) as info:
        corpus_usage(tok, path, workers=workers, scan=False)
    assert str(info.value) == expected


@pytest.mark.parametrize("job", ["count", "encode"])
def test_a_range_ending_inside_a_bad_character_gives_the_files_reason(tmp_path, monkeypatch, job):
    # A range cut in a file's one long line (a letter cut) can end right after a character's
    # first bytes whose next byte, in the next range, is wrong: the range's own decode said
    # "unexpected end of data" where the file goes on; decoding the file says otherwise.
    data = damaged(300_000, "一二三".encode() + b"\xe4\xb8" + "四五六".encode())
    cut = data.index(b"\xe4\xb8\xe5") + 2
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    with pytest.raises(UnicodeDecodeError) as python:
        data.decode("utf-8")
    assert python.value.start == cut - 2 and python.value.reason != "unexpected end of data"
    line = data.count(b"\n", 0, cut) + 1
    expected = (
        f"{path}: not valid UTF-8 at byte offset {cut - 2} ({python.value.reason}), "
        f"line {line}; convert the file to UTF-8 first"
    )

    bounds = [0, cut, len(data)]

    def cut_inside(*args, **kwargs):
        return bounds

    with pytest.raises(CorpusError) as info:
        if job == "count":
            monkeypatch.setattr(tasks, "chunk_boundaries", cut_inside)
            count_file(path, [EOT], workers=1)
        else:
            monkeypatch.setattr(ENCODE_FILE, "_ranges", lambda *a: list(zip(bounds, bounds[1:])))
            encode_file(Tokenizer.preset("gpt2"), path, tmp_path / "ids.npy", workers=1)
    assert str(info.value) == expected
