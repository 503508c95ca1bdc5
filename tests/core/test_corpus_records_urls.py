"""Corpora as users keep them (#32): JSON Lines in every compression (``.jsonl.zst`` failed
with an empty message), records named by ``records=`` whatever the file's name, a text field
given for plain text refused naming the file (it was ignored), dictionary-encoded Parquet
strings read as text (they were refused), and URLs that cannot be read: one line naming the
URL and, for a missing package, the one fsspec's own registry names. No test uses the
network: hosts are this machine's closed ports.

Expected counts come from the slow reference (``reference_bpe.pretoken_counts``) over each
record's text on its own."""

from __future__ import annotations

import json
import socket
import sys
from collections import Counter

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from core_helpers import EOT, SLICES, read_fixture
from reference_encoder import published
from test_corpus_sources import COMPRESS

from bpe_studio.core import CorpusError, count_file, train_bpe
from bpe_studio.core.corpus.sources import resolve_corpus
from bpe_studio.core.reference import pretoken_counts

GPT2 = published("r50k_base")["pat_str"]


def docs() -> list[str]:
    return [p for p in read_fixture(SLICES["mixed_web"])[:30_000].split("\n") if p.strip()]


def expected(texts: list[str]) -> Counter[bytes]:
    total: Counter[bytes] = Counter()
    for text in texts:
        total += pretoken_counts(text, [EOT], GPT2)
    return total


def jsonl(texts: list[str], field: str = "text") -> bytes:
    return "".join(json.dumps({field: t, "id": i}) + "\n" for i, t in enumerate(texts)).encode()


def closed_port() -> int:
    """A port of this machine that nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("ext", list(COMPRESS))
def test_jsonl_in_every_compression(tmp_path, ext):
    texts = docs()
    path = tmp_path / f"d.jsonl.{ext}"
    path.write_bytes(COMPRESS[ext](jsonl(texts)))
    assert count_file(path, [EOT], workers=1) == expected(texts)


def test_records_say_what_a_file_holds_whatever_its_name(tmp_path):
    texts = docs()
    (tmp_path / "c4.json.gz").write_bytes(COMPRESS["gz"](jsonl(texts, "body")))
    (tmp_path / "rows").write_bytes(jsonl(texts[:5], "body"))
    files = [tmp_path / "c4.json.gz", tmp_path / "rows"]
    got = count_file(files, [EOT], workers=1, records="jsonl", text_field="body")
    assert got == expected(texts) + expected(texts[:5])
    # By name alone, the same files are plain text: their JSON syntax is counted.
    as_text = count_file(files, [EOT], workers=1)
    assert as_text[b'{"'] == len(texts) + 5 and as_text[b"body"] == len(texts) + 5
    with pytest.raises(ValueError, match=r"records='csv': give 'jsonl', 'parquet' or 'text'"):
        resolve_corpus(files, records="csv")


def test_records_asked_are_read_whatever_the_name_says(tmp_path):
    """``records`` says what the files hold whatever their names say; Parquet read as the
    JSON Lines asked for fails when read, with one line that says what it is."""
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"text": ["a b"]}), path)
    (tmp_path / "parquet.jsonl").write_bytes(path.read_bytes())
    assert count_file(tmp_path / "parquet.jsonl", records="parquet") == count_file(path)
    with pytest.raises(CorpusError, match=r"d\.parquet: not JSON Lines but Parquet \(it begins"):
        count_file(path, records="jsonl")


def test_a_text_field_for_plain_text_names_the_file(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("hello world " * 50, encoding="utf-8")
    with pytest.raises(ValueError, match=r"^.*x\.txt: text field 'content' given, but the corpus"):
        train_bpe(path, 300, [EOT], text_field="content")
    with pytest.raises(ValueError, match=r"x\.txt \(and 1 more\): text field 'content'"):
        count_file([path, path], text_field="content")
    # The default field is what callers pass when nothing was chosen (the app does).
    assert train_bpe(path, 300, [EOT], text_field="text") == train_bpe(path, 300, [EOT])


def test_a_record_corpus_with_plain_text_beside_it_takes_the_field(tmp_path):
    texts = docs()
    (tmp_path / "d.jsonl").write_bytes(jsonl(texts, "body"))
    (tmp_path / "p.txt").write_text(texts[0], encoding="utf-8")
    got = count_file([tmp_path / "d.jsonl", tmp_path / "p.txt"], [EOT], text_field="body")
    assert got == expected(texts) + expected(texts[:1])


def test_a_dictionary_encoded_string_column_is_text(tmp_path):
    texts = docs()[:40] * 3  # repeated values: what writers dictionary-encode
    path = tmp_path / "d.parquet"
    table = pa.table({"text": pa.array(texts).dictionary_encode(), "n": list(range(len(texts)))})
    pq.write_table(table, path, row_group_size=50)
    assert pq.ParquetFile(path).schema_arrow.field("text").type == pa.dictionary(
        pa.int32(), pa.string()
    )
    assert count_file(path, [EOT], workers=1) == expected(texts)
    # A column that is no text is still refused, naming what it holds.
    with pytest.raises(CorpusError, match=r"field 'n' holds int64, not text"):
        count_file(path, [EOT], workers=1, text_field="n")


def test_a_missing_http_backend_is_named_as_fsspec_names_it(monkeypatch):
    registry = sys.modules["fsspec.registry"]
    monkeypatch.setitem(sys.modules, "aiohttp", None)
    monkeypatch.delitem(sys.modules, "fsspec.implementations.http", raising=False)
    monkeypatch.delitem(registry._registry, "https", raising=False)
    with pytest.raises(CorpusError) as info:
        count_file("https://example.org/corpus.txt")
    needs = registry.known_implementations["https"]["err"]
    assert str(info.value) == (
        "https://example.org/corpus.txt: cannot read https:// URLs without the aiohttp module "
        f"(fsspec says: {needs})"
    )


def test_an_unreachable_host_is_one_line_naming_the_url():
    url = f"ftp://127.0.0.1:{closed_port()}/corpus.txt"
    with pytest.raises(CorpusError) as info:
        count_file(url)
    assert str(info.value) == f"{url}: cannot read it: Connection refused"


def test_the_hub_unreachable_or_offline_is_one_line(monkeypatch):
    from huggingface_hub import constants

    url = "hf://datasets/acme/web/part-0.txt"
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    fsspec.filesystem("hf").clear_instance_cache()
    with pytest.raises(CorpusError) as info:
        count_file(url)
    assert str(info.value).startswith(f"{url}: cannot read it: ")
    assert "\n" not in str(info.value)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(CorpusError, match=r"^hf://datasets/acme/web/part-0\.txt: HF_HUB_OFFLINE"):
        count_file(url)


def test_an_unknown_protocol_says_so():
    with pytest.raises(
        CorpusError, match=r"^zzz://a/b\.txt: zzz:// is not a protocol fsspec knows"
    ):
        count_file("zzz://a/b.txt")


def test_a_bad_file_is_named_as_the_user_named_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.txt").write_bytes(b"fine text\n\xff and more\n")
    for given in ("bad.txt", "ba*.txt"):
        with pytest.raises(CorpusError) as info:
            count_file(given, workers=1)
        assert str(info.value).startswith("bad.txt: not valid UTF-8 at byte offset 10")


def test_a_plain_jsonl_file_in_ranges_reads_no_line_counts_but_an_errors(tmp_path, monkeypatch):
    """The records audit: each record of a byte range after the first counted its line from
    the file's start, reading the file up to the range again: 13 MB of JSON Lines trained in
    60 s (0.8 s as plain text). A line is counted only for an error, and names it rightly."""
    from bpe_studio.core.corpus import counting
    from bpe_studio.core.corpus import tasks as corpus_tasks

    texts = docs()
    data = jsonl(texts)
    path = tmp_path / "d.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(counting, "IN_PROCESS_CHUNK", len(data) // 8)
    counted = []
    line_of = corpus_tasks._line_of

    def spy(file, offset):
        counted.append(offset)
        return line_of(file, offset)

    monkeypatch.setattr(corpus_tasks, "_line_of", spy)
    assert count_file(path, [EOT], workers=1) == expected(texts)
    assert counted == []
    lines = data.splitlines(keepends=True)
    bad = len(lines) - 3  # in the last range
    lines[bad] = b'{"text": 7}\n'
    path.write_bytes(b"".join(lines))
    with pytest.raises(CorpusError, match=rf"d\.jsonl: line {bad + 1}: field 'text' is an int"):
        count_file(path, [EOT], workers=1)
    assert len(counted) == 1 and counted[0] > len(data) // 2
