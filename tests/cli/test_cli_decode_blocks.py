"""``bpe-studio decode`` of a large ids file: read from the file as decoding goes and written
a block at a time (an audit: 61 million ids held 1.4 GB, 23 bytes an id), with every id
checked before anything is written, to a file or a stream."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from core_helpers import FIXTURES, read_fixture

from bpe_studio.cli import ids_files, main
from bpe_studio.core import Tokenizer


@pytest.fixture(scope="module")
def gpt2() -> Tokenizer:
    return Tokenizer.from_files(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")


@pytest.fixture
def big_ids(tmp_path, gpt2, monkeypatch):
    """Ids of a real text repeated (8 blocks of decoding, with a smaller block), and that text."""
    monkeypatch.setattr(ids_files, "DECODE_BLOCK", 1 << 18)
    unit = read_fixture("tinystories_sample.txt")[:50_000]
    ids = np.array(gpt2.encode(unit), dtype=np.uint16)
    reps = (8 << 18) // len(ids) + 1
    path = tmp_path / "ids.npy"
    np.save(path, np.tile(ids, reps))
    return path, unit * reps, reps * len(ids)


def _decode_peak(ids: Path, out: Path) -> int:
    """The traced memory's peak while ``decode`` writes ``ids``' text to ``out``."""
    tracemalloc.start()
    try:
        assert main(["decode", str(ids), "--tokenizer", "gpt2", "--out", str(out)]) == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_ids_file_is_decoded_a_block_at_a_time(tmp_path, big_ids, capsys):
    path, text, count = big_ids
    small = tmp_path / "small.npy"
    np.save(small, np.load(path)[:1000])
    base = _decode_peak(small, tmp_path / "small.txt")  # the tokenizer's own, mostly
    out = tmp_path / "back.txt"
    peak = _decode_peak(path, out)
    data = text.encode("utf-8")
    assert out.read_bytes() == data
    assert f"decoded {count:,} ids into {len(data):,} bytes" in capsys.readouterr().err
    # A block of 2**18 ids costs about 4 MB to decode, whatever the file's length; whole, the
    # ids as int64 and their lengths alone were 16 bytes an id (35 MB here; 49.8 MB in all).
    grew = peak - base
    assert grew < 8_000_000, f"{grew:,} bytes more traced for {len(data):,} bytes"


@pytest.mark.parametrize("to", ["file", "stdout"])
def test_an_unknown_id_in_the_last_block_writes_nothing(tmp_path, big_ids, capsys, to):
    path, _, _ = big_ids
    ids = np.load(path)
    ids[-1] = 60_000  # past GPT-2's 50,257 ids
    np.save(path, ids)
    out = tmp_path / "back.txt"
    target = str(out) if to == "file" else "-"
    assert main(["decode", str(path), "--tokenizer", "gpt2", "--out", target]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and not out.exists()
    assert "ids.npy" in captured.err and "60000" in captured.err
    # Where the file holds it (the last id, in the last of several blocks): its value alone
    # left it to be searched for among millions.
    n = len(ids)
    assert f"unknown token id 60000 (item {n:,} of {n:,}): it is out of range" in captured.err
    assert [p.name for p in tmp_path.iterdir()] == ["ids.npy"]  # no temporary file left


def test_a_stream_closed_early_is_told_the_whole_texts_length(tmp_path, big_ids):
    # The bytes the ids decode to are known before the first block is written: the line
    # says how many of them the reader took (a review: it said only what had been decoded).
    import subprocess
    import sys

    path, text, count = big_ids
    total = len(text.encode("utf-8"))
    run = subprocess.run(
        f"{sys.executable} -m bpe_studio decode {path} --tokenizer gpt2 | head -c 10 >/dev/null",
        shell=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    line = run.stderr.strip().splitlines()[-1]
    assert line.startswith(f"decoded {count:,} ids into {total:,} bytes; standard output")
    assert f"closed after 65,536 of {total:,} bytes" in line, line


def test_a_file_cut_short_says_so_before_and_while_it_is_read(tmp_path, big_ids):
    from bpe_studio.cli.ids_files import IdsFile
    from bpe_studio.cli.output import CliError

    path, _, count = big_ids
    data = path.read_bytes()
    cut = tmp_path / "cut.npy"
    cut.write_bytes(data[: len(data) - 1000])
    with pytest.raises(CliError, match=rf"holds {count - 500:,} of the {count:,} ids its header"):
        IdsFile(str(cut))
    # Cut while it is being read (mapped, it was a SIGBUS and no word): a read says so.
    ids = IdsFile(str(path))
    try:
        assert len(ids.block(0, 10)) == 10
        with open(path, "r+b") as f:
            f.truncate(len(data) // 2)
        with pytest.raises(CliError, match="the file changed while it was read"):
            ids.block(count - 10, count)
    finally:
        ids.close()


def test_a_pipe_is_read_whole(tmp_path, big_ids, capsys):
    # `decode <(cat ids.npy)`: refused before as "not seekable".
    import os
    import threading

    path, text, _ = big_ids
    fifo = tmp_path / "ids.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as f:
            f.write(path.read_bytes())

    writer = threading.Thread(target=feed)
    writer.start()
    out = tmp_path / "back.txt"
    try:
        assert main(["decode", str(fifo), "--tokenizer", "gpt2", "--out", str(out)]) == 0
    finally:
        writer.join()
    assert out.read_bytes() == text.encode("utf-8")


def test_ctrl_c_while_decoding_into_a_file_says_it_is_not_written(tmp_path, big_ids, capsys):
    # A user check: "bpe-studio: error: interrupted", where encode says what became of --out.
    path, _, _ = big_ids
    calls = []
    real = ids_files.DecodedBlocks.read

    def read(self, size=-1):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # Ctrl-C typed while the third block is decoded
        return real(self, size)

    out = tmp_path / "back.txt"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ids_files.DecodedBlocks, "read", read)
        assert main(["decode", str(path), "--tokenizer", "gpt2", "--out", str(out)]) == 130
    assert capsys.readouterr().err.strip().endswith(f"interrupted; {out} not written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.npy"]


def test_decoding_shows_its_progress_as_the_blocks_go(tmp_path, big_ids, monkeypatch, capsys):
    """The CLI-at-scale audit: decode printed nothing for 16 s (1 GB of text), where encode
    and train show a bar."""
    from bpe_studio.cli import progress

    path, text, _ = big_ids
    seen: list[int] = []
    update = progress.ProgressBar.update

    def told(bar, done, total=None):
        seen.append(done)
        update(bar, done, total)

    monkeypatch.setattr(progress.ProgressBar, "update", told)
    assert main(["decode", str(path), "--tokenizer", "gpt2", "--out", str(tmp_path / "t")]) == 0
    size = len(text.encode("utf-8"))
    assert len(seen) >= 8 and seen == sorted(seen) and seen[-1] == size  # one a block
    bar = [line for line in capsys.readouterr().err.splitlines() if line.startswith("decoding")]
    assert bar and "100.0%" in bar[-1]


def test_an_unknown_id_of_a_foreign_tokenizer_is_named_with_its_place(tmp_path, capsys):
    """The same for a tokenizer decoded whole (not byte-level): a WordPiece file."""
    from foreign_files import wordpiece

    path = wordpiece(tmp_path / "wp")
    ids = tmp_path / "ids.npy"
    np.save(ids, np.array([5, 6, 10**6, 7], dtype=np.int64))
    assert main(["decode", str(ids), "--tokenizer", str(path), "--out", "-"]) == 1
    assert "unknown token id 1000000 (item 3 of 4): it is out of range" in capsys.readouterr().err
