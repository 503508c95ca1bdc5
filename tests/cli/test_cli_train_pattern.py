"""``bpe-studio train`` with ``--pattern`` and several corpus files (#10, #11 item 18): the
result equals the slow reference trainer run with the same pattern on the files counted
together; a bad pattern or a missing file is refused, in one line, before any work.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from cli_run import cli, cli_bytes, encode_ids, error_line, ok
from core_helpers import EOT, slice_head, write_text
from gpt2_bytes import read_gpt2_merges, read_gpt2_vocab, token_from_gpt2
from reference_encoder import ReferenceEncoder, published

from bpe_studio.core import Tokenizer
from bpe_studio.core.reference import reference_train

VOCAB_SIZE = 420


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("corpora")
    return [
        write_text(folder / "english.txt", slice_head("english", 12_000)),
        write_text(folder / "chinese.txt", slice_head("chinese", 6_000) + EOT + "Ünïcödé 123456"),
        write_text(folder / "code.txt", slice_head("code", 8_000)),
    ]


def reference(corpora: list[Path], pattern: str) -> tuple[dict[int, bytes], list]:
    # Files are counted as one corpus: joined by the special token, no pre-token spans two.
    text = EOT.join(p.read_text(encoding="utf-8") for p in corpora)
    return reference_train(text, VOCAB_SIZE, [EOT], pattern)


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_several_files_with_a_named_pattern_equal_the_reference(tmp_path, corpora, name):
    pat_str = published(f"{name}_base")["pat_str"]
    vocab, merges = reference(corpora, pat_str)
    out = tmp_path / "tok"
    stderr = ok(cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern", name,
                    "--format", "gpt2", "--workers", 2, "--out", out))  # fmt: skip
    assert f"--pattern {name}" in stderr  # GPT-2 files do not keep it: the summary says so
    assert read_gpt2_vocab(out / "vocab.json") == vocab
    assert read_gpt2_merges(out / "merges.txt") == merges
    text_path = corpora[1]
    expected = ReferenceEncoder(vocab, merges, {EOT: 256}, pat_str).encode(
        text_path.read_text(encoding="utf-8")
    )
    assert encode_ids(tmp_path, text_path, out, "--pattern", name) == expected


def test_a_pattern_other_than_gpt2_is_written_where_it_is_kept(tmp_path, corpora):
    """Found by the terminals audit: trained with --pattern o200k, the tokenizer was saved
    as GPT-2 files, which hold no pattern, so encode and inspect of the folder split text
    with GPT-2's, silently (a note said so, among the summary's lines). With no --format,
    any pattern but gpt2 is now written as tokenizer.json, which holds it, and encode and
    inspect name the pattern they split with; --format gpt2 still writes GPT-2 files."""
    out = tmp_path / "tok"
    stderr = ok(cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE,
                    "--pattern", "o200k_base", "--out", out))  # fmt: skip
    assert sorted(p.name for p in out.iterdir()) == ["tokenizer.json"]
    (note,) = [line for line in stderr.splitlines() if line.startswith("note: written as")]
    assert "--format hf" in note and "pattern o200k" in note and "--format gpt2" in note
    text_path = corpora[0]
    assert encode_ids(tmp_path, text_path, out) == encode_ids(
        tmp_path, text_path, out, "--pattern", "o200k"
    )
    stderr = ok(cli(tmp_path, "encode", text_path, "--tokenizer", out, "--out", "ids.npy"))
    assert "pattern: o200k" in stderr.splitlines()
    report = cli(tmp_path, "inspect", out, "--json")
    ok(report)
    assert json.loads(report.stdout)["tokenizer"]["pattern"] == "o200k"
    summary = cli(tmp_path, "inspect", out)
    assert ok(summary) == "" and summary.stdout.splitlines()[1] == "  pattern: o200k"
    # Asked for: GPT-2 files and their note, as before; gpt2 itself, GPT-2 files, no note.
    gpt2_files = tmp_path / "gpt2_files"
    stderr = ok(cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern",
                    "o200k", "--format", "gpt2", "--out", gpt2_files))  # fmt: skip
    assert sorted(p.name for p in gpt2_files.iterdir()) == ["merges.txt", "vocab.json"]
    assert "load them with --pattern o200k" in stderr and "note: written as" not in stderr
    plain = tmp_path / "plain"
    stderr = ok(cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--out", plain))
    assert sorted(p.name for p in plain.iterdir()) == ["merges.txt", "vocab.json"]
    assert "note:" not in stderr and "pattern: gpt2" in stderr


def test_a_pattern_that_leaves_text_out_is_noted_when_written_as_hf(tmp_path):
    # An audit: the tokenizer.json written drops what the pattern leaves out (tokenizers
    # does), where the tokenizer trained refuses it; nothing said so.
    corpus = write_text(tmp_path / "ab.txt", "aab aab ab\n" * 50)
    done = cli(tmp_path, "train", corpus, "--vocab-size", 260, "--pattern", r"[a-z]+|\s+",
               "--format", "hf", "--out", tmp_path / "hf")  # fmt: skip
    notes = [ln for ln in ok(done).splitlines() if "unmatched" in ln]
    assert notes == [
        r"note: the pattern '[a-z]+|\s+' leaves text such as '!' unmatched: this tokenizer "
        "refuses such text, but tokenizer.json drops it, as tokenizers does (no id stands for "
        "it); the tiktoken format keeps the refusal"
    ]
    plain = cli(tmp_path, "train", corpus, "--vocab-size", 260, "--pattern", r"[a-z]+|\s+",
                "--format", "tiktoken", "--out", tmp_path / "tt")  # fmt: skip
    assert "unmatched" not in ok(plain)


@pytest.mark.parametrize(
    "regex_text",
    # With groups too: a pre-token is the whole match, never what a group captured.
    [r"\p{L}+|\p{N}|[^\p{L}\p{N}]", r"(\p{L})+|(\p{N})|[^\p{L}\p{N}]"],
)
def test_custom_regex_to_hf_keeps_the_pattern(tmp_path, corpora, regex_text):
    """A custom regex, written as tokenizer.json: Hugging Face's own library loads it and
    splits as the reference does."""
    from tokenizers import Tokenizer as HfTokenizer

    vocab, merges = reference(corpora, regex_text)
    out = tmp_path / "hf"
    ok(cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern", regex_text,
           "--format", "hf", "--out", out))  # fmt: skip
    hf = HfTokenizer.from_file(str(out / "tokenizer.json"))
    got = {i: token_from_gpt2(t) if t != EOT else EOT.encode() for t, i in hf.get_vocab().items()}
    assert got == vocab
    text = corpora[0].read_text(encoding="utf-8")
    expected = ReferenceEncoder(vocab, merges, {EOT: 256}, regex_text).encode(text)
    assert hf.encode(text).ids == expected
    assert encode_ids(tmp_path, corpora[0], out / "tokenizer.json") == expected
    # The review: encode and inspect said "pattern: none (the tokenizer.json's pipeline splits
    # text ...)" for such a file, and --json gave its regex shell-quoted, which no regex
    # compiler takes; it is the regex, and the summaries show it as --pattern takes it.
    stderr = ok(cli(tmp_path, "encode", corpora[0], "--tokenizer", out, "--out", "ids.npy"))
    assert f"pattern: '{regex_text}'" in stderr.splitlines()
    report = cli(tmp_path, "inspect", out, "--json")
    ok(report)
    assert json.loads(report.stdout)["tokenizer"]["pattern"] == regex_text
    with_quote = tmp_path / "quote"
    quoted = r"'s|\p{L}+|\p{N}|[^\p{L}\p{N}]"
    ok(cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern", quoted,
           "--out", with_quote))  # fmt: skip
    report = cli(tmp_path, "inspect", with_quote, "--json")
    ok(report)
    assert json.loads(report.stdout)["tokenizer"]["pattern"] == quoted


@pytest.mark.parametrize(
    ("regex", "why"),
    [
        (r"\s*|\S", r"pattern '\s*|\S' can match empty text"),
        # Shown as typed, to paste back after --pattern (not as repr doubles backslashes).
        (r"\w+|\s+|[^\w\s]+", r"pattern '\w+|\s+|[^\w\s]+': '\w' means different things"),
    ],
)
def test_a_pattern_a_tokenizer_json_cannot_hold_is_refused_before_training(
    tmp_path, corpora, regex, why
):
    """An audit: with a regex that can match empty text, --format hf wrote a tokenizer.json
    that dropped all but the spaces of "Once upon a time." (tokenizers too); one with a word
    escape was refused only once trained, and the run was lost. Both are refused first; the
    same run as GPT-2 files keeps every byte."""
    out = tmp_path / "hf"
    result = cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern", regex,
                 "--format", "hf", "--out", out)  # fmt: skip
    assert result.returncode == 2 and not out.exists()
    line = error_line(result)
    assert line.startswith("bpe-studio: error: --format hf cannot hold this tokenizer: pattern")
    assert why in line and "pre-tokenizing" not in result.stderr
    ok(cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern", regex,
           "--format", "gpt2", "--out", tmp_path / "gpt2"))  # fmt: skip
    text = "Once upon a time.\n"
    (tmp_path / "x.txt").write_text(text, encoding="utf-8")
    ids = encode_ids(tmp_path, tmp_path / "x.txt", tmp_path / "gpt2")
    from bpe_studio.core import Tokenizer

    assert Tokenizer.load(tmp_path / "gpt2").decode(ids) == text


def test_a_one_letter_property_is_shown_as_written_and_given_back_either_way(tmp_path):
    r"""Found by the review: the note said the tokenizer.json holds \pL, which it holds as
    \p{L}, and encode --pattern with the pattern as trained was then refused as another."""
    bare, braced = r" ?\pL+| ?\pN+|\s+|\S", r" ?\p{L}+| ?\p{N}+|\s+|\S"
    corpus = write_text(tmp_path / "c.txt", "Ünïcödé ab ab 12 Ωμέγα\n" * 20)
    stderr = ok(cli(tmp_path, "train", corpus, "--vocab-size", 260, "--pattern", bare,
                    "--workers", 1, "--out", tmp_path / "o"))  # fmt: skip
    (note,) = [line for line in stderr.splitlines() if line.startswith("note: written as")]
    assert f"holds the pattern '{braced}'" in note
    assert encode_ids(tmp_path, corpus, tmp_path / "o", "--pattern", bare) == encode_ids(
        tmp_path, corpus, tmp_path / "o", "--pattern", braced
    )


def test_the_note_names_a_special_token_when_that_is_what_a_tokenizer_json_cannot_hold(
    tmp_path,
):
    """Found by the review: a tokenizer.json refused for a special token, the note read as if
    the pattern were what it cannot hold ("which hold the pattern P; a tokenizer.json cannot
    (special token ...)")."""
    pattern, token = r"\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]", "<|größe|>"
    corpus = write_text(tmp_path / "c.txt", "Ünïcödé ab ab 12 Ωμέγα\n" * 20)
    stderr = ok(cli(tmp_path, "train", corpus, "--vocab-size", 260, "--pattern", pattern,
                    "--special-token", token, "--workers", 1, "--out", tmp_path / "o"))  # fmt: skip
    (note,) = [line for line in stderr.splitlines() if line.startswith("note: written as")]
    assert "--format tiktoken" in note
    assert "a tokenizer.json holds the pattern but not the special tokens (special token" in note
    assert repr(token) in note and "tiktoken files hold it" not in note  # said already


def test_a_pattern_only_tiktoken_files_hold_is_written_as_them(tmp_path, corpora):
    """The patterns audit: with no --format, a pattern a tokenizer.json cannot hold went into
    GPT-2 files, which hold no pattern, although a rank file's sidecar holds it: loaded back
    without --pattern, they split text with GPT-2's. Tiktoken files come first now, the note
    saying why; --format gpt2 still writes GPT-2 files; a pattern neither holds (it can match
    empty text) still goes into them."""
    regex = r"\w+|\s+|\W"
    out = tmp_path / "tt"
    stderr = ok(cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern", regex,
                    "--out", out))  # fmt: skip
    assert sorted(p.name for p in out.iterdir()) == [
        "tokenizer.tiktoken",
        "tokenizer.tiktoken.json",
    ]
    (note,) = [line for line in stderr.splitlines() if line.startswith("note: written as")]
    assert "--format tiktoken" in note and f"pattern '{regex}'" in note
    assert "'\\w' means different things" in note and "--format gpt2" in note
    assert "save as" not in note  # the hf check's own advice, which the note says already
    vocab, merges = reference(corpora, regex)
    text_path = corpora[0]
    expected = ReferenceEncoder(vocab, merges, {EOT: 256}, regex).encode(
        text_path.read_text(encoding="utf-8")
    )
    assert encode_ids(tmp_path, text_path, out) == expected
    stderr = ok(cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern", regex,
                    "--format", "gpt2", "--out", tmp_path / "g"))  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "g").iterdir()) == ["merges.txt", "vocab.json"]
    assert "note: written as" not in stderr
    stderr = ok(cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern",
                    r"\s*|\S", "--out", tmp_path / "e"))  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "e").iterdir()) == ["merges.txt", "vocab.json"]


@pytest.mark.parametrize("bad", ["(", "[z-a]", ""])
def test_bad_pattern_is_refused_before_training(tmp_path, corpora, bad):
    out = tmp_path / "out"
    result = cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern", bad,
                 "--out", out)  # fmt: skip
    assert result.returncode == 2
    line = error_line(result)
    assert "--pattern" in line and "pattern" in line
    assert "pre-tokenizing" not in result.stderr and not out.exists()


def test_missing_second_corpus_file(tmp_path, corpora):
    out = tmp_path / "out"
    result = cli(tmp_path, "train", corpora[0], tmp_path / "absent.txt",
                 "--vocab-size", VOCAB_SIZE, "--out", out)  # fmt: skip
    line = error_line(result)
    assert str(tmp_path / "absent.txt") in line and "not found" in line
    assert "pre-tokenizing" not in result.stderr and not out.exists()


def test_same_file_twice_is_refused(tmp_path, corpora):
    result = cli(tmp_path, "train", corpora[0], corpora[0], "--vocab-size", VOCAB_SIZE,
                 "--out", tmp_path / "out")  # fmt: skip
    assert "twice" in error_line(result)


def test_empty_files_learn_nothing(tmp_path):
    empties = [write_text(tmp_path / f"e{i}.txt", "") for i in range(2)]
    result = cli(tmp_path, "train", *empties, "--vocab-size", VOCAB_SIZE, "--out", tmp_path / "o")
    line = error_line(result)
    assert "nothing was learned" in line and "empty" in line
    assert not (tmp_path / "o" / "vocab.json").exists()


@pytest.mark.slow
def test_misspelt_names_are_refused_and_common_spellings_accepted(tmp_path, corpora):
    for bad in ("GPT3", "o200", "cl100kbas"):
        result = cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern", bad,
                     "--out", tmp_path / "out")  # fmt: skip
        assert result.returncode == 2
        line = error_line(result)
        assert f"'{bad}' is not a pattern name" in line and "gpt2, cl100k, o200k" in line
    vocab, merges = reference(corpora, published("o200k_base")["pat_str"])
    out = tmp_path / "gpt4o"
    stderr = ok(cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE,
                    "--pattern", "GPT-4o", "--format", "gpt2", "--out", out))  # fmt: skip
    assert "pattern: o200k" in stderr
    assert read_gpt2_merges(out / "merges.txt") == merges


def test_a_pattern_that_drops_text_is_an_error_naming_file_and_line(tmp_path, corpora):
    line = error_line(cli(tmp_path, "train", corpora[0], "--vocab-size", VOCAB_SIZE,
                          "--pattern", r"\w+", "--out", tmp_path / "out"))  # fmt: skip
    assert line.startswith(f"bpe-studio: error: {corpora[0]}: the pattern '\\w+' does not match")
    assert "line 1 " in line and not (tmp_path / "out").exists()


def test_a_pattern_that_drops_text_of_a_record_names_the_file(tmp_path):
    """A bad-corpus audit: for a record's text, encode and inspect said only "at character 6
    (line 1, column 7) of the text", naming no file; a compressed file's too (inspect)."""
    import gzip

    regex = r"[^~\s]+|\s+"
    lines = [json.dumps({"text": "hello world"})] * 100 + ["", json.dumps({"text": "hi ~ you"})]
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "t.txt.gz").write_bytes(gzip.compress(b"hello world\n" * 100 + b"a ~ b\n"))
    ok(cli(tmp_path, "convert", "gpt2", "--to", "gpt2", "--out", "g2"))  # files: any pattern
    said = {
        "train": error_line(cli(tmp_path, "train", "d.jsonl", "--vocab-size", VOCAB_SIZE,
                                "--pattern", regex, "--out", "t")),
        "encode": error_line(cli(tmp_path, "encode", "d.jsonl", "--tokenizer", "g2",
                                 "--pattern", regex, "--out", "o.npy")),
        "inspect": error_line(cli(tmp_path, "inspect", "g2", "--pattern", regex,
                                  "--corpus", "d.jsonl")),
        "inspect .gz": error_line(cli(tmp_path, "inspect", "g2", "--pattern", regex,
                                      "--corpus", "t.txt.gz")),
    }  # fmt: skip
    # An audit: train and inspect said "a record's text", encode "record 101" (records
    # counted, not lines): each names the line, blank lines counted.
    for command in ("train", "encode", "inspect"):
        assert said[command].startswith(
            "bpe-studio: error: d.jsonl: the record on line 102: the pattern"
        ), command
    assert said["inspect .gz"].startswith("bpe-studio: error: t.txt.gz (decompressed): the pattern")
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = ["hello world"] * 250 + ["hi ~ you"] + ["hello"] * 10
    pq.write_table(pa.table({"text": texts}), tmp_path / "d.parquet", row_group_size=100)
    for command in ("train", "encode", "inspect"):
        args = {
            "train": ("train", "d.parquet", "--vocab-size", VOCAB_SIZE, "--out", "t"),
            "encode": ("encode", "d.parquet", "--tokenizer", "g2", "--out", "o.npy"),
            "inspect": ("inspect", "g2", "--corpus", "d.parquet"),
        }[command]
        line = error_line(cli(tmp_path, *args, "--pattern", regex))
        assert line.startswith(
            "bpe-studio: error: d.parquet: row group 3 of 3, its row 51 (row 251 of the file): "
            "the pattern"
        ), command
    # Decompressed first (to be counted in ranges by workers), it is named as a plain file.
    assert "at line 101 (byte offset 1202)" in said["inspect .gz"]
    assert not (tmp_path / "o.npy").exists() and not (tmp_path / "t").exists()


def test_convert_writes_the_regex_of_a_spelling_never_the_word(tmp_path, corpora):
    ok(cli(tmp_path, "train", corpora[0], "--vocab-size", VOCAB_SIZE, "--out", tmp_path / "g"))
    ok(cli(tmp_path, "convert", tmp_path / "g", "--to", "tiktoken", "--pattern", "o200k_base",
           "--out", tmp_path / "t"))  # fmt: skip
    sidecar = json.loads((tmp_path / "t" / "tokenizer.tiktoken.json").read_text(encoding="utf-8"))
    assert sidecar["pat_str"] == published("o200k_base")["pat_str"]
    line = error_line(cli(tmp_path, "convert", tmp_path / "g", "--to", "hf", "--pattern",
                          "o200k_bse", "--out", tmp_path / "h"))  # fmt: skip
    assert "'o200k_bse' is not a pattern name" in line and not (tmp_path / "h").exists()


@pytest.mark.parametrize(
    ("fmt", "specials", "why"),
    [
        ("tiktoken", ["<|a|>", "<|a|><|b|>"], "special token '<|a|>' begins '<|a|><|b|>'"),
        ("hf", ["é"], "special token 'é' is also the byte-level spelling of b'\\xe9'"),
        ("tiktoken", [], "pattern '\\h+|.|\\n': '\\h' means something else in tiktoken"),
    ],
)
def test_what_a_format_cannot_hold_is_refused_before_training(
    tmp_path, corpora, fmt, specials, why
):
    """An audit of conversions: these were found only once the files were written, and the
    run was lost."""
    flags = [x for s in specials for x in ("--special-token", s)]
    pattern = ["--pattern", r"\h+|.|\n"] if not specials else []
    out = tmp_path / fmt
    result = cli(tmp_path, "train", corpora[0], "--vocab-size", VOCAB_SIZE, "--format", fmt,
                 "--out", out, *flags, *pattern)  # fmt: skip
    assert result.returncode == 2 and not out.exists()
    line = error_line(result)
    assert line.startswith(f"bpe-studio: error: --format {fmt} cannot hold this tokenizer: ")
    assert why in line and "pre-tokenizing" not in result.stderr


@pytest.mark.parametrize("given", [[], ["--format", "gpt2"], ["--format", "tiktoken"]])
def test_out_dash_with_a_pattern_no_tokenizer_json_holds_says_so(tmp_path, corpora, given):
    """The review: with such a pattern, --out - was refused with the advice to write the hf
    format there, which is then refused for the pattern."""
    result = cli(tmp_path, "train", *corpora, "--vocab-size", VOCAB_SIZE, "--pattern",
                 r"\w+|\s+|.", *given, "--out", "-")  # fmt: skip
    assert result.returncode == 2 and result.stdout == ""
    line = error_line(result)
    assert "tokenizer.json (--format hf), the format of one file, cannot hold" in line
    assert "'\\w' means different things" in line and line.endswith("name a directory")


def test_encode_says_what_a_pattern_left_out(tmp_path):
    """The patterns audit: a tokenizer.json of a custom regex (a Split that keeps its
    matches, as train --format hf writes it) drops the text the regex does not match, as
    tokenizers does, but encode said nothing of it and counted the compression ratio over
    every input byte (Chinese text: 8.64 bytes/token). The summary now says how much was
    left out and counts the ratio over the rest; stdout still holds the ids alone."""
    regex_text = r"\p{Latin}+|\p{N}+|\s+|\p{P}|\p{S}"
    vocab = {i: bytes([i]) for i in range(256)} | {256: EOT.encode(), 257: b"ab"}
    tok = Tokenizer(vocab, [(b"a", b"b")], [EOT], pattern=regex_text)
    tok.save(tmp_path / "hf", format="hf")
    line = "ab 12 中文字, ab.\n"  # the three Han characters match no part of the regex
    text = line * 40 + EOT + "ab"
    write_text(tmp_path / "t.txt", text)
    docs = (line * 20, line * 20 + EOT + "ab")  # the same ids as the text, one by one
    records = "".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in docs)
    (tmp_path / "t.jsonl").write_text(records, encoding="utf-8")
    expected = Tokenizer.load(tmp_path / "hf").encode(text, allowed_special="all")
    total, dropped = len(text.encode()), len("中文字".encode()) * 40
    kept = total - dropped
    # The same with a template, whose tokens stand for no input (around each record).
    from tokenizers import Tokenizer as HfTokenizer
    from tokenizers import processors

    hf = HfTokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    hf.post_processor = processors.TemplateProcessing(
        single=f"{EOT} $A {EOT}", special_tokens=[(EOT, 256)]
    )
    (tmp_path / "templated").mkdir()
    hf.save(str(tmp_path / "templated" / "tokenizer.json"))
    runs = [
        (source, workers, folder)
        for source in ("t.txt", "t.jsonl")
        for workers in (1, 2)
        for folder in ("hf", "templated")
    ]
    for source, workers, folder in runs:
        flag = ["--add-special-tokens"] if folder == "templated" else []
        result = cli_bytes(tmp_path, "encode", source, "--tokenizer", folder, *flag,
                           "--workers", workers, "--out", "-")  # fmt: skip
        assert result.returncode == 0, result.stderr
        ids = np.load(io.BytesIO(result.stdout)).tolist()
        if folder == "hf":
            assert ids == expected
        else:
            documents = 1 if source == "t.txt" else len(docs)
            assert len(ids) == len(expected) + 2 * documents
        lines = result.stderr.decode().splitlines()
        assert (
            f"note: the pattern '{regex_text}' left out {dropped} bytes of the text's "
            f"{total} bytes ({dropped / total:.0%}): dropped, as tokenizers drops it; no "
            "id stands for it"
        ) in lines, lines
        ratio = f"compression ratio: {kept / len(ids):.2f} bytes/token (of the text kept)"
        assert ratio in lines
    # A pattern that leaves nothing out: no note, the ratio over every byte.
    write_text(tmp_path / "latin.txt", "ab 12, ab.\n" * 40)
    stderr = ok(cli(tmp_path, "encode", "latin.txt", "--tokenizer", "hf", "--out", "l.npy"))
    assert "left out" not in stderr and "(of the text kept)" not in stderr


def _nfc_split_file(folder: Path, name: str, keeps: str, added: tuple[str, ...] = ()):
    """A byte-level tokenizer.json (``folder/name/``) trained by tokenizers behind NFC and a
    Split keeping the matches of ``keeps`` only (the rest removed), with the ``added``
    tokens (not normalized); tokenizers' own object."""
    from tokenizers import AddedToken, Regex, decoders, models, trainers
    from tokenizers import Tokenizer as HfTokenizer
    from tokenizers import normalizers as nz
    from tokenizers import pre_tokenizers as pt

    hf = HfTokenizer(models.BPE())
    hf.normalizer = nz.NFC()
    hf.pre_tokenizer = pt.Sequence(
        [
            pt.Split(Regex(keeps), "removed", invert=True),
            pt.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=270, initial_alphabet=pt.ByteLevel.alphabet(), show_progress=False
    )
    hf.train_from_iterator(["the cat sat on the mat"], trainer)
    hf.add_tokens([AddedToken(token, normalized=False) for token in added])
    (folder / name).mkdir()
    hf.save(str(folder / name / "tokenizer.json"))
    return hf


def _encoded(folder: Path, tokenizer: str, text: str) -> tuple[list[int], list[str]]:
    """``text`` encoded by ``bpe-studio encode`` with the tokenizer in ``folder/tokenizer``:
    its ids and the lines it wrote to stderr."""
    write_text(folder / "t.txt", text)
    result = cli_bytes(folder, "encode", "t.txt", "--tokenizer", tokenizer, "--out", "-")
    assert result.returncode == 0, result.stderr
    return np.load(io.BytesIO(result.stdout)).tolist(), result.stderr.decode().splitlines()


def test_encode_with_a_normalizer_says_text_is_dropped_and_counts_no_ratio_over_it(tmp_path):
    """A fuzzing audit: a tokenizer.json that drops text and has a normalizer (NFC, as Qwen2)
    had no note and a ratio over every input byte, said as if nothing were dropped. Its
    normalizer changes the text's bytes, so what is dropped is not counted: the loading note
    says it drops text, and the ratio says it is over the whole input."""
    hf = _nfc_split_file(tmp_path, "nfc", r"\w+")
    text = "the cat, the mat!\n" * 20
    ids, lines = _encoded(tmp_path, "nfc", text)
    assert ids == hf.encode(text).ids
    assert any("its pre-tokenizer drops text such as ' '" in line for line in lines), lines
    ratio = f"compression ratio: {len(text.encode()) / len(ids):.2f} bytes/token"
    assert f"{ratio} (of the whole input, the text dropped not counted out)" in lines, lines


@pytest.mark.parametrize("run_by", ["here", "tokenizers"])
def test_encode_with_a_split_that_drops_nothing_says_no_text_is_dropped(tmp_path, run_by):
    """A fuzzing audit: a tokenizer.json with NFC whose Split keeps every match of
    \\S+|\\s+ (it drops nothing; also run by tokenizers, an added token being also a merge)
    said its ratio was "of the whole input, the text dropped not counted out"."""
    added = ("the",) if run_by == "tokenizers" else ()
    hf = _nfc_split_file(tmp_path, "kept", r"\S+|\s+", added)
    text = "the cat, the mat!\n" * 20
    ids, lines = _encoded(tmp_path, "kept", text)
    assert ids == hf.encode(text).ids
    assert hf.decode(ids) == text  # the oracle: tokenizers drops nothing of it
    assert not any("drops text" in line or "left out" in line for line in lines), lines
    ratio = f"compression ratio: {len(text.encode()) / len(ids):.2f} bytes/token"
    assert ratio in lines, lines


def test_inspect_with_a_normalizer_says_it_cannot_count_the_text_dropped(tmp_path):
    """An audit: inspect --corpus on a tokenizer.json that drops text behind NFC reported
    dropped_bytes 0 and a bytes/token without caveat, where encode says its ratio is over the
    whole input. The oracle: tokenizers' ids leave text out, so 0 was wrong."""
    hf = _nfc_split_file(tmp_path, "nfc", r"\w+")
    text = "the cat, the mat!\n" * 20
    write_text(tmp_path / "t.txt", text)
    ids = hf.encode(text).ids
    assert len(hf.decode(ids).encode()) < len(text.encode())  # tokenizers drops some
    report = cli(tmp_path, "inspect", "nfc", "--corpus", "t.txt", "--json")
    ok(report)
    corpus = json.loads(report.stdout)["corpus"]
    assert corpus["dropped_bytes"] is None
    assert corpus["bytes_per_token"] == len(text.encode()) / len(ids)
    summary = cli(tmp_path, "inspect", "nfc", "--corpus", "t.txt")
    ok(summary)
    ratio = f"{len(text.encode()) / len(ids):.2f} bytes/token"
    assert f"({ratio} of the whole input, the text dropped not counted out)" in summary.stdout


def test_the_summary_quotes_a_special_token_whose_ends_are_spaces(tmp_path):
    """A training audit: --special-token ' <s> ' was listed as "special tokens:  <s>  (id
    256)", its spaces indistinguishable from the line's own."""
    corpus = write_text(tmp_path / "c.txt", "hello <s> world <s> again\n" * 50)
    stderr = ok(cli(tmp_path, "train", corpus, "--vocab-size", 270, "--special-token", " <s> ",
                    "--special-token", EOT, "--workers", 1, "--out", tmp_path / "o"))  # fmt: skip
    (line,) = [x for x in stderr.splitlines() if x.startswith("special tokens:")]
    assert line == f"special tokens: ' <s> ' (id 256), {EOT} (id 257)"
