"""The start of a corpus as text however it is kept (``core.corpus.head``): what the app's
Report row and in-sample curve read. A compressed file and the records' text field give the
text a plain file of the same text gives; files and records follow one another on lines of
their own; the cut is after a whole line; bad UTF-8 names the file as training does.

An audit found the Report silently left out the corpus row of a compressed or JSON Lines
corpus (and the compression plot drew no in-sample curve for it)."""

from __future__ import annotations

import bz2
import gzip
import json

import pytest

from bpe_studio.core.corpus.errors import CorpusError
from bpe_studio.core.corpus.head import corpus_head

LINES = ["Once upon a time, a fox 🦊 met a crow.\n", "中文分词，你好。\n", "def f(x): return x\n"]
TEXT = "".join(LINES * 40)


def test_a_compressed_file_gives_the_plain_files_head(tmp_path):
    plain = tmp_path / "t.txt"
    plain.write_text(TEXT, encoding="utf-8")
    gz = tmp_path / "t.txt.gz"
    gz.write_bytes(gzip.compress(TEXT.encode()))
    bz = tmp_path / "t.txt.bz2"
    bz.write_bytes(bz2.compress(TEXT.encode()))
    size = len(TEXT.encode())
    assert corpus_head(str(plain), size) == TEXT  # the whole, when it fits
    for limit in (1, 50, 100, 1000):
        # Whole lines within the limit (the first line's whole characters when none fits).
        data = TEXT.encode()[:limit]
        cut = data[: data.rfind(b"\n") + 1] if b"\n" in data[1:] else data
        expected = cut.decode("utf-8", "ignore")
        for path in (plain, gz, bz):
            assert corpus_head(str(path), limit) == expected, (path.name, limit)


def test_records_give_their_text_field_each_on_lines_of_its_own(tmp_path):
    records = tmp_path / "r.jsonl"
    docs = ["first doc", "second\ndoc\n", "third 中文"]
    lines = [json.dumps({"id": i, "body": d}) for i, d in enumerate(docs)]
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert corpus_head(str(records), 1000, "body") == "first doc\nsecond\ndoc\nthird 中文"
    # A record that does not fit is left out (the first one's start is kept).
    assert corpus_head(str(records), 21, "body") == "first doc\nsecond\ndoc\n"
    assert corpus_head(str(records), 20, "body") == "first doc\n"
    assert corpus_head(str(records), 6, "body") == "first "
    with pytest.raises(CorpusError, match=r"r\.jsonl: line 1:.*'text'"):
        corpus_head(str(records), 1000)  # no field "text"


def test_parquet_records(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"text": ["a b c", "d e\n", "f"]}), path)
    assert corpus_head(str(path), 100) == "a b c\nd e\nf"


def test_files_follow_one_another_on_lines_of_their_own(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("no line break at the end", encoding="utf-8")
    b = tmp_path / "b.txt.gz"
    b.write_bytes(gzip.compress(b"second file\nmore\n"))
    both = "no line break at the end\nsecond file\nmore\n"
    assert corpus_head([str(a), str(b)], 1000) == both
    assert corpus_head(str(tmp_path / "*.txt*"), 1000) == both  # a glob: sorted, as training
    assert corpus_head([str(a), str(b)], 40) == "no line break at the end\nsecond file\n"
    assert corpus_head([str(a), str(b)], 25) == "no line break at the end\n"


def test_bad_utf8_in_a_compressed_file_names_it(tmp_path):
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(gzip.compress(b"line one\nline two \xff and on\n"))
    with pytest.raises(
        CorpusError, match=r"bad\.txt\.gz: not valid UTF-8 at byte offset 18.*line 2"
    ):
        corpus_head(str(path), 1000)


def test_a_json_file_is_read_as_records_or_text_as_told(tmp_path):
    """The app asks how to read a .json file whose first line is a record; its samples (the
    Report's row, the in-sample curve) read it the way training does (audit h_tui61)."""
    from bpe_studio.core.corpus.records import unsaid_records
    from bpe_studio.core.corpus.sources import resolve_corpus

    rows = tmp_path / "rows.json"
    rows.write_text("".join(json.dumps({"text": line}) + "\n" for line in LINES), "utf-8")
    assert corpus_head(str(rows), 10_000, records="jsonl") == "".join(LINES)
    assert corpus_head(str(rows), 10_000, records="text") == rows.read_text("utf-8")
    assert unsaid_records(resolve_corpus(str(rows))) is not None
    plain = tmp_path / "plain.json"
    plain.write_text('["a list, not a record"]\n', "utf-8")
    assert unsaid_records(resolve_corpus(str(plain))) is None
