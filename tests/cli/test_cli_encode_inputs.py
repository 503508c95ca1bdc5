"""``bpe-studio encode`` reads what ``train`` reads (#32): a compressed file (it said "not valid
UTF-8 at byte offset 1"), several files and globs, JSON Lines and Parquet records, compressed
bytes on standard input; each file or record is encoded on its own and the ids follow one
another; ``--add-special-tokens`` puts the template around each document.

Oracles: tiktoken built offline from GPT-2's files (``test_cli_sources.tiktoken_encoding``),
each document encoded alone; ``tokenizers`` itself for the template."""

from __future__ import annotations

import bz2
import gzip
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from cli_run import cli, cli_bytes, error_line, ok
from core_helpers import EOT, SLICES, read_fixture, slice_head
from test_cli_hf_template import BOS, _llama_like
from test_cli_sources import tiktoken_encoding


@pytest.fixture(scope="module")
def gpt2():
    return tiktoken_encoding("gpt2")


def ids_of(enc, docs: list[str]) -> list[int]:
    return [i for doc in docs for i in enc.encode(doc, allowed_special="all")]


def web_docs(n: int = 40) -> list[str]:
    return [p for p in read_fixture(SLICES["mixed_web"]).split("\n") if p.strip()][:n]


@pytest.mark.parametrize(
    ("ext", "compress"),
    [("gz", gzip.compress), ("bz2", bz2.compress), ("zst", zstandard.compress)],
)
def test_a_compressed_file(tmp_path, gpt2, ext, compress):
    text = slice_head("english", 300_000) + EOT + slice_head("chinese", 100_000)
    (tmp_path / f"t.txt.{ext}").write_bytes(compress(text.encode("utf-8")))
    out = tmp_path / "ids.npy"
    stderr = ok(cli(tmp_path, "encode", f"t.txt.{ext}", "--tokenizer", "gpt2", "--out", out))
    assert np.load(out).tolist() == gpt2.encode(text, allowed_special="all")
    # The summary counts the text's bytes, not the compressed file's.
    size = len(text.encode())
    assert size < 1e6 and f"encoded {size / 1e3:.2f} kB into" in stderr


def test_files_globs_and_records_each_alone(tmp_path, gpt2):
    # "abc" ends one file and "def" starts the next: together they would be one pre-token.
    (tmp_path / "a.txt").write_text("first file ends abc", encoding="utf-8")
    (tmp_path / "b.txt").write_text("def starts the second", encoding="utf-8")
    docs = web_docs()
    lines = "".join(json.dumps({"body": d}) + "\n" for d in docs[:20]).encode()
    (tmp_path / "r.jsonl.zst").write_bytes(zstandard.compress(lines))
    table = pa.table({"body": pa.array(docs[20:]).dictionary_encode()})
    pq.write_table(table, tmp_path / "r.parquet", row_group_size=7)
    out = tmp_path / "ids.npy"
    ok(cli(tmp_path, "encode", "*.txt", "r.jsonl.zst", "r.parquet", "--text-field", "body",
           "--tokenizer", "gpt2", "--out", out))  # fmt: skip
    expected = ids_of(gpt2, ["first file ends abc", "def starts the second", *docs])
    assert np.load(out).tolist() == expected


def test_records_and_compression_through_standard_input(tmp_path, gpt2):
    docs = web_docs()
    lines = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode()
    out = tmp_path / "ids.npy"
    result = cli_bytes(tmp_path, "encode", "-", "--records", "jsonl", "--tokenizer", "gpt2",
                       "--out", out, stdin=gzip.compress(lines))  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    assert np.load(out).tolist() == ids_of(gpt2, docs)
    # Without --records, JSON Lines is refused rather than encoded as text.
    result = cli_bytes(tmp_path, "encode", "-", "--tokenizer", "gpt2", "--out",
                       tmp_path / "x.npy", stdin=lines)  # fmt: skip
    assert result.returncode == 1 and b"its first line is a JSON object" in result.stderr


def test_the_template_goes_around_each_document(tmp_path):
    path, hf = _llama_like(tmp_path, template=True)
    docs = web_docs(12)
    lines = "".join(json.dumps({"text": d}) + "\n" for d in docs)
    (tmp_path / "d.jsonl").write_text(lines, encoding="utf-8")
    out = tmp_path / "ids.npy"
    stderr = ok(cli(tmp_path, "encode", "d.jsonl", "--tokenizer", path, "--out", out,
                    "--add-special-tokens"))  # fmt: skip
    assert np.load(out).tolist() == [i for d in docs for i in hf.encode(d).ids]
    assert f"added the template's special tokens around each document: {BOS} $A" in stderr


def test_a_text_field_for_plain_text_is_refused(tmp_path):
    (tmp_path / "t.txt").write_text("hello", encoding="utf-8")
    line = error_line(cli(tmp_path, "encode", "t.txt", "--text-field", "body", "--tokenizer",
                          "gpt2", "--out", tmp_path / "x.npy"))  # fmt: skip
    assert line.startswith("bpe-studio: error: t.txt: --text-field body given, but the corpus")


def test_a_long_record_is_encoded_in_pieces_to_the_same_ids(tmp_path, monkeypatch, tiktoken_gpt2):
    """A record longer than ``_LONG_RECORD`` characters goes through ``encode_iterable``
    (encoded whole, a 100 MB record took 2.3 GB); its ids are tiktoken's, and the short
    records' beside it too."""
    import json
    import tracemalloc

    from core_helpers import slice_head

    from bpe_studio.cli import encode_inputs, main
    from bpe_studio.core import Tokenizer
    from bpe_studio.core.corpus.tasks import corpus_files

    monkeypatch.setattr(encode_inputs, "_LONG_RECORD", 1 << 14, raising=False)
    monkeypatch.setattr(encode_inputs, "_BLOCK", 1 << 12)
    long_doc = slice_head("english", 300_000) * 4
    docs = ["Short one.", long_doc, "  spaces   at the end   "]
    corpus = tmp_path / "d.jsonl"
    corpus.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    out = tmp_path / "ids.npy"
    assert main(["encode", str(corpus), "--tokenizer", "gpt2", "--out", str(out)]) == 0
    assert np.load(out).tolist() == [i for d in docs for i in tiktoken_gpt2.encode_ordinary(d)]

    # What encoding the records adds, with the tokenizer warm (its caches filled): the
    # records are held (about 5 MB here); encoded whole, the long one's ids took 19 MB.
    tok = Tokenizer.preset("gpt2")
    tok.encode(long_doc)
    job = encode_inputs._Job(tok, "text", (), ())
    (file,) = corpus_files([str(corpus)])
    tracemalloc.start()
    try:
        assert job.records(file, str(tmp_path / "part.raw"), None) > len(long_doc)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * len(long_doc), f"peak traced memory {peak:,} for {len(long_doc):,}"


def test_a_plain_file_named_by_a_file_url(tmp_path, gpt2):
    """An audit (h_corp67): one plain file as ``file:///...`` failed "u.npy: cannot write
    there: corpus not found: file:///..." (its URL was opened as a path, and the error blamed
    --out); with another file, the same URL failed too."""
    text, other = "hello world, hello there\n" * 30, "δεύτερο αρχείο\n" * 20
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    (tmp_path / "b.txt").write_text(other, encoding="utf-8")
    url = f"file://{tmp_path / 'a.txt'}"
    for n, (inputs, docs) in enumerate([([url], [text]), ([url, "b.txt"], [text, other])]):
        out = tmp_path / f"u{n}.npy"
        ok(cli(tmp_path, "encode", *inputs, "--tokenizer", "gpt2", "--out", out))
        assert np.load(out).tolist() == ids_of(gpt2, docs)
    # Its errors name it as the user did: the URL.
    (tmp_path / "bad.txt").write_bytes(b"valid text, then \xff\xfe not UTF-8\n" * 3)
    bad = f"file://{tmp_path / 'bad.txt'}"
    for inputs in ([bad], [bad, "b.txt"]):
        line = error_line(cli(tmp_path, "encode", *inputs, "--tokenizer", "gpt2", "--out", "x.npy"))
        assert line.startswith(f"bpe-studio: error: {bad}: "), line
        assert "x.npy" not in line and "cannot write" not in line


def test_a_missing_input_is_never_an_error_of_out():
    """ "corpus not found" carries no file name, which an error of --out's writing would:
    it is the input's, whatever its name."""
    from bpe_studio.cli.encode import _os_error_line
    from bpe_studio.core.corpus.errors import CorpusNotFound

    error = CorpusNotFound("corpus not found: file:///gone/a.txt")
    assert _os_error_line(error, "u.npy", [], {}) == "corpus not found: file:///gone/a.txt"


def test_a_recursive_glob_reaches_every_folder_and_skips_dotfiles(tmp_path, gpt2):
    """An audit (h_corp67): ``shards/**/*.txt`` read one level of folders (as ``*/*.txt``)."""
    texts = {"top.txt": "top words\n", "2024/mid.txt": "middle words\n"}
    texts |= {"2024/01/deep.txt": "deep words\n", ".hidden.txt": "hidden words\n"}
    for name, text in texts.items():
        (tmp_path / "shards" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "shards" / name).write_text(text, encoding="utf-8")
    out = tmp_path / "ids.npy"
    ok(cli(tmp_path, "encode", "shards/**/*.txt", "--tokenizer", "gpt2", "--out", out))
    docs = [texts[n] for n in ("2024/01/deep.txt", "2024/mid.txt", "top.txt")]
    assert np.load(out).tolist() == ids_of(gpt2, docs)
