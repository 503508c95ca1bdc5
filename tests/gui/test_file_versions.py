"""Which version of a tokenizer file the app reads (``gui.model.file_versions``), and which
corpora the Vocabulary lab takes for records (``gui.model.vocab_lab.LabCorpus``)."""

from __future__ import annotations

import os

from bpe_studio.core import Tokenizer
from bpe_studio.gui.model.file_versions import file_version
from bpe_studio.gui.model.vocab_lab import CorpusKind, LabCorpus


def _later(path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


def test_a_folders_version_is_that_of_the_files_its_tokenizer_is_read_from(tmp_path):
    """The review: a GPT-2 folder's version took in every file in it, so a chart or notes
    saved beside vocab.json and merges.txt made the lab work everything out again."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    Tokenizer(vocab, [(b"a", b"b")]).save(tmp_path, format="gpt2")
    notes = tmp_path / "notes.txt"
    notes.write_text("a note\n", encoding="utf-8")
    before = file_version(tmp_path)
    notes.write_text("a longer note\n", encoding="utf-8")
    (tmp_path / "chart.png").write_bytes(b"\x89PNG")
    assert file_version(tmp_path) == before
    _later(tmp_path / "merges.txt")
    assert file_version(tmp_path) != before


def test_only_a_name_that_ends_so_says_records():
    """The review: any path holding ".jsonl" was taken for records (a folder named
    c4.jsonl_dump), so the text field was shown and given with plain text."""
    said = {
        "/data/c4.jsonl_dump/part1.txt": False,
        "/data/web.jsonl.gz": True,
        "shards/*.parquet": True,
        "hf://datasets/org/set/train-*.ndjson.zst": True,
    }
    for path, records in said.items():
        assert LabCorpus(CorpusKind.FILES, (path,)).holds_records is records, path
