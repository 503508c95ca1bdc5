"""Corpora through fsspec (globs, compressed files, memory://) and records as documents
(JSON Lines, Parquet): the counts equal the reference's, each file and each record counted
alone; errors name the field, the file and the line or row group (#28).

The expected counts come from ``core.reference.pretoken_counts`` (the slow reference) added up
over the files or records; the text is the fixture slices (real text, tests/fixtures)."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import sys
from collections import Counter

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from core_helpers import EOT, SLICES, read_fixture, write_text
from reference_encoder import published

from bpe_studio.core import CorpusError, count_file, train_bpe
from bpe_studio.core.corpus import counting, tasks
from bpe_studio.core.corpus.sources import resolve_corpus
from bpe_studio.core.reference import pretoken_counts

COMPRESS = {
    "gz": gzip.compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
    "zst": lambda data: zstandard.ZstdCompressor().compress(data),
}
PAT = {"gpt2": "r50k_base", "o200k": "o200k_base"}


def expected_counts(texts, pattern="gpt2"):
    """The reference's counts of each text on its own, added up."""
    total: Counter[bytes] = Counter()
    for text in texts:
        total += pretoken_counts(text, [EOT], published(PAT[pattern])["pat_str"])
    return total


def documents(n_chars: int = 40_000) -> list[str]:
    """Paragraphs of every fixture slice (each a document), with a special token inside some."""
    docs = []
    for key in SLICES:
        docs += [p for p in read_fixture(SLICES[key])[:n_chars].split("\n\n") if p]
    docs[3] += EOT + "after the token"
    return docs


@pytest.fixture
def small_pieces(monkeypatch):
    """Streams read a few KB at a time and cut into pieces of 1,000 characters, so that the
    carry between blocks and the margin before a block's end are used many times."""
    monkeypatch.setattr(tasks, "STREAM_BLOCK", 4096)
    monkeypatch.setattr(counting, "WORKER_PIECE", 1000)


@pytest.mark.parametrize("pattern", ["gpt2", "o200k"])
@pytest.mark.parametrize("ext", list(COMPRESS))
def test_a_glob_of_compressed_files_is_one_corpus(tmp_path, small_pieces, ext, pattern):
    texts = [read_fixture(SLICES[k])[:60_000] for k in ("english", "chinese", "code")]
    for i, text in enumerate(texts):
        (tmp_path / f"part-{i}.txt.{ext}").write_bytes(COMPRESS[ext](text.encode("utf-8")))
    got = count_file(str(tmp_path / f"part-*.txt.{ext}"), [EOT], pattern=pattern)
    assert got == expected_counts(texts, pattern)


@pytest.mark.parametrize("k", range(1, len(EOT)))
def test_a_special_token_across_two_blocks_of_a_stream(tmp_path, small_pieces, monkeypatch, k):
    # The first block ends k characters into a special token: "<|endoftext|" has a letter
    # cut inside the token, which only the token's end, in the next block, shows. Pieces of
    # one character: every cut the rules allow is taken.
    monkeypatch.setattr(counting, "WORKER_PIECE", 1)
    text = "word " * ((4096 - k) // 5) + "x" * ((4096 - k) % 5) + EOT + " and after" * 50
    assert text.index(EOT) == 4096 - k
    path = tmp_path / "s.txt.gz"
    path.write_bytes(gzip.compress(text.encode("utf-8")))
    assert count_file(path, [EOT]) == expected_counts([text])


def test_no_pre_token_crosses_two_files(tmp_path):
    # "ab" + "cd" as one text is one pre-token; as two files, two.
    write_text(tmp_path / "1.txt", "ab")
    (tmp_path / "2.txt.gz").write_bytes(gzip.compress(b"cd"))
    got = count_file([tmp_path / "1.txt", tmp_path / "2.txt.gz"])
    assert got == Counter({b"ab": 1, b"cd": 1})


def test_memory_urls_and_globs(small_pieces):
    texts = [read_fixture(SLICES[k])[:30_000] for k in ("tinystories", "mixed_web")]
    fs = fsspec.filesystem("memory")
    try:
        for i, text in enumerate(texts):
            fs.pipe(f"/t28/part-{i}.txt", text.encode("utf-8"))
        fs.pipe("/t28/gz/part-0.txt.gz", gzip.compress(texts[0].encode("utf-8")))
        assert count_file("memory://t28/part-*.txt", [EOT]) == expected_counts(texts)
        assert count_file("memory://t28/gz/part-0.txt.gz", [EOT]) == expected_counts(texts[:1])
        # In worker processes, the file goes along with its bytes (memory:// is this process's).
        assert count_file("memory://t28/part-*.txt", [EOT], workers=2) == expected_counts(texts)
    finally:
        fs.rm("/t28", recursive=True)


def test_worker_processes_count_memory_files_with_their_bytes(monkeypatch):
    text = read_fixture(SLICES["english"])[:50_000]
    fs = fsspec.filesystem("memory")
    fs.pipe("/t28w/a.txt", text.encode("utf-8"))
    monkeypatch.setattr(counting, "IN_PROCESS_LIMIT", 1000)
    try:
        assert count_file("memory://t28w/a.txt", [EOT], workers=2) == expected_counts([text])
    finally:
        fs.rm("/t28w", recursive=True)


def write_jsonl(path, docs, field="text", opener=open):
    with opener(path, "wt", encoding="utf-8") as f:
        for i, doc in enumerate(docs):
            f.write(json.dumps({"id": i, field: doc}) + "\n")
            if i % 7 == 0:
                f.write("\n")  # blank lines are skipped
    return path


def test_jsonl_records_are_documents(tmp_path, monkeypatch):
    docs = documents()
    expected = expected_counts(docs)
    plain = write_jsonl(tmp_path / "d.jsonl", docs)
    assert count_file(plain, [EOT]) == expected
    packed = write_jsonl(tmp_path / "d.jsonl.gz", docs, opener=gzip.open)
    assert count_file(packed, [EOT]) == expected
    # A plain file in byte ranges (cut at line breaks) counted by worker processes.
    monkeypatch.setattr(counting, "IN_PROCESS_LIMIT", 1000)
    monkeypatch.setattr(counting, "CHUNK_BYTES", 20_000)
    assert len(tasks.line_boundaries(str(plain), 20_000)) > 5
    assert count_file(plain, [EOT], workers=2) == expected


def test_no_pre_token_crosses_two_records(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"text": "ab"}\n{"text": "cd"}\n', encoding="utf-8")
    assert count_file(path) == Counter({b"ab": 1, b"cd": 1})


def test_parquet_row_groups_are_read_one_at_a_time(tmp_path, monkeypatch):
    docs = documents()
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"id": range(len(docs)), "body": docs}), path, row_group_size=50)
    files = resolve_corpus(path)
    made = tasks.make_tasks(files, 1 << 20, [EOT], "gpt2")
    assert [t.group for t in made] == list(range(pq.ParquetFile(path).num_row_groups))
    assert len(made) > 3
    expected = expected_counts(docs)
    assert count_file(path, [EOT], text_field="body") == expected
    monkeypatch.setattr(counting, "IN_PROCESS_LIMIT", 1000)
    assert count_file(path, [EOT], text_field="body", workers=2) == expected


def test_a_surrogate_escaped_in_json_counts_as_the_tokenizer_encodes_it(tmp_path):
    path = tmp_path / "s.jsonl"
    # An escaped pair is the character it stands for; a lone one is U+FFFD.
    path.write_text('{"text": "a \\ud83d\\ude00 b \\ud800"}\n', encoding="utf-8")
    assert count_file(path) == expected_counts(["a \U0001f600 b \ufffd"])


def test_a_missing_field_names_the_field_the_file_and_the_line(tmp_path, monkeypatch):
    lines = [json.dumps({"text": "x" * 50}) for _ in range(3000)]
    lines[2500] = json.dumps({"body": "no text here", "id": 7})
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as info:
        count_file(path)
    assert str(info.value) == (
        f"{path}: line 2501: no field 'text' (the record's fields: 'body', 'id')"
    )
    # The same line when the file is read in byte ranges by workers.
    monkeypatch.setattr(counting, "IN_PROCESS_LIMIT", 1000)
    monkeypatch.setattr(counting, "CHUNK_BYTES", 10_000)
    with pytest.raises(CorpusError, match=r"m\.jsonl: line 2501: no field 'text'"):
        count_file(path, workers=2)
    with pytest.raises(CorpusError, match=r"line 1: no field 'body' \(the record's fields: 'text'"):
        count_file(path, text_field="body")


def test_bad_records_name_the_line(tmp_path):
    cases = {
        '{"text": 3}': "line 2: field 'text' is an int (3), not text",
        # The records audit: the value and the failed JSON are quoted, cut to 60 characters.
        '{"text": ["' + "w" * 100 + '"]}': "line 2: field 'text' is a list ([\""
        + "w" * 57
        + "…), not",
        '{"text": "ab", ,}': "line 2: not a JSON record (Expecting property name enclosed in "
        'double quotes: line 1 column 16 (char 15)): {"text": "ab", ,}',
        '{"text": "' + "y" * 200 + '", "x": tru}': ": …" + "y" * 22 + '", "x": tru}',
        '{"text": null}': "line 2: field 'text' is null, not text",
        "[1, 2]": "line 2: a JSON list, not a record",
        '{"text": "unterminated': "line 2: not a JSON record",
        # A hostile-input audit: a RecursionError traceback.
        '{"text": ' + "[" * 100_000 + "]" * 100_000 + "}": "line 2: nested deeper than Python",
    }
    for bad, message in cases.items():
        path = tmp_path / "b.jsonl.gz"
        path.write_bytes(gzip.compress(('{"text": "fine"}\n' + bad + "\n").encode("utf-8")))
        with pytest.raises(CorpusError) as caught:
            count_file(path)
        said = str(caught.value)
        assert said.startswith(f"{path}: line 2: ") and message in said, (said, message)


def test_a_bad_json_line_is_described_as_one_line(tmp_path):
    # An audit: json's own position counted the line's end, so "line 1: ... line 2 column 1"
    # contradicted itself; and a damaged Parquet footer's message held a line break.
    path = tmp_path / "b.jsonl"
    path.write_bytes(b'{"text": "fine"}\r\n{"text": "a"\r\n')
    with pytest.raises(CorpusError) as info:
        count_file(path)
    assert str(info.value) == (
        f"{path}: line 2: not a JSON record (Expecting ',' delimiter: line 1 column 13 "
        '(char 12)): {"text": "a"'
    )
    parquet = tmp_path / "cut.parquet"
    pq.write_table(pa.table({"text": ["a b"] * 50}), parquet)
    parquet.write_bytes(parquet.read_bytes()[:-12])  # the footer cut short
    with pytest.raises(CorpusError) as info:
        count_file(parquet)
    message = str(info.value)
    assert message.startswith(f"{parquet}: not a readable Parquet file (") and "\n" not in message


def test_parquet_without_the_field_names_the_row_group(tmp_path):
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"body": ["a b", "c"] * 10}), path, row_group_size=5)
    with pytest.raises(CorpusError) as info:
        count_file(path)
    assert str(info.value).startswith(f"{path}: row group ")
    assert "no field 'text' (the columns: 'body')" in str(info.value)
    nulls = tmp_path / "n.parquet"
    pq.write_table(pa.table({"text": ["a"] * 12 + [None] + ["b"] * 7}), nulls, row_group_size=5)
    with pytest.raises(
        CorpusError,
        # Counted from 1 (an audit read "row group 2, row 500" as the 500th row).
        match=r"n\.parquet: row group 3 of 4, its row 3 \(row 13 of the file\): field 'text' is",
    ):
        count_file(nulls)
    numbers = tmp_path / "i.parquet"
    pq.write_table(pa.table({"text": [1, 2]}), numbers)
    with pytest.raises(
        CorpusError, match=r"row group 1 of \d+: field 'text' holds int64, not text"
    ):
        count_file(numbers)


def test_invalid_utf8_in_a_compressed_file_names_its_offset(tmp_path, small_pieces):
    text = read_fixture(SLICES["chinese"])[:20_000].encode("utf-8")
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(gzip.compress(text + b"\xff tail"))
    with pytest.raises(
        CorpusError,
        match=rf"bad.txt.gz \(decompressed\): not valid UTF-8 at byte offset {len(text)} ",
    ):
        count_file(path)


def test_globs_and_urls_that_name_nothing(tmp_path):
    with pytest.raises(CorpusError, match=r"^.*none-\*\.txt: no file matches$"):
        count_file(str(tmp_path / "none-*.txt"))
    with pytest.raises(CorpusError, match=r"^memory://absent/\*\.txt: no file matches$"):
        count_file("memory://absent/*.txt")
    with pytest.raises(FileNotFoundError, match="corpus not found: memory://absent/a.txt"):
        count_file("memory://absent/a.txt")


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_a_glob_matching_a_file_and_a_link_to_it_is_refused(tmp_path, link):
    """An audit: ``shards/*.txt`` with link.txt -> a.txt counted a.txt twice, silently: other
    merges than the distinct files give (naming the same path twice was refused by the
    command line alone)."""
    write_text(tmp_path / "a.txt", "hello world " * 20)
    write_text(tmp_path / "b.txt", "other words " * 20)
    if link == "symbolic":
        (tmp_path / "link.txt").symlink_to("a.txt")
    else:
        (tmp_path / "link.txt").hardlink_to(tmp_path / "a.txt")
    a, named = tmp_path / "a.txt", tmp_path / "link.txt"
    twice = f"^{named}: the same file as {a} \\(a link\\), given twice as a corpus file"
    for corpus in (str(tmp_path / "*.txt"), [a, tmp_path / "b.txt", named]):
        with pytest.raises(CorpusError, match=twice):
            count_file(corpus, [EOT])
        with pytest.raises(CorpusError, match=twice):
            train_bpe(corpus, 300, [EOT])
    with pytest.raises(CorpusError, match=f"^{a}: given twice as a corpus file"):
        train_bpe([a, a], 300, [EOT])


def test_a_symbolic_link_loop_is_named_a_loop_not_missing(tmp_path):
    """A hostile-machine audit: a loop of links as the corpus was "corpus not found"."""
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    loop = r": is a loop of symbolic links, which leads to no file \(Too many levels"
    for named in (tmp_path / "a", tmp_path / "a" / "x.txt"):
        with pytest.raises(CorpusError, match=f"^{named}{loop}"):
            count_file(str(named))
    with pytest.raises(FileNotFoundError, match="corpus not found: .*gone.txt"):
        count_file(str(tmp_path / "gone.txt"))


def test_a_missing_filesystem_package_is_named(monkeypatch):
    import importlib.util

    if importlib.util.find_spec("s3fs") is not None:
        pytest.skip("s3fs is installed here")
    with pytest.raises(CorpusError) as info:
        count_file("s3://bucket/shards/*.txt")
    assert str(info.value) == (
        "s3://bucket/shards/*.txt: cannot read s3:// URLs without the s3fs module (fsspec "
        "says: Install s3fs to access S3)"
    )


def test_zst_without_zstandard_says_what_to_install(tmp_path, monkeypatch):
    from fsspec import compression

    path = tmp_path / "a.txt.zst"
    path.write_bytes(COMPRESS["zst"](b"hello"))
    monkeypatch.delitem(compression.compr, "zstd")
    with pytest.raises(CorpusError) as info:
        count_file(path)
    assert str(info.value) == (
        f"{path}: reading it needs the zstandard package: pip install 'bpe-studio[cluster]'"
    )


def test_parquet_without_pyarrow_says_what_to_install(tmp_path, monkeypatch):
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"text": ["a b", "c"]}), path)
    for name in ("pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(CorpusError) as info:
        count_file(path)
    assert (
        str(info.value)
        == f"{path}: reading Parquet needs pyarrow: pip install 'bpe-studio[cluster]'"
    )
