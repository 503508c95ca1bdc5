"""``bpe-studio inspect``: its JSON against tiktoken's own encodings (the vocabulary, a corpus
encoded and counted, two vocabularies' bytes compared), the readable summary, standard input
as the corpus, one-line errors and Ctrl-C."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
import tokenizers
from cli_run import cli, cli_bytes, error_line, ok
from core_helpers import EOT, in_no_text, slice_head, write_text
from foreign_files import qwen2_style, sentencepiece_bpe, wordpiece
from test_cli_interrupt import assert_one_quiet_line, generated_corpus, interrupt_when_under_way
from test_formats_tiktoken import _cached

KEYS = ("tokens", "special_tokens", "length_histogram", "categories", "unreachable")


def _ordinary(enc) -> dict[int, bytes]:
    return {i: enc.decode_single_token_bytes(i) for i in enc._mergeable_ranks.values()}


@pytest.fixture(scope="module")
def corpus_text() -> str:
    return slice_head("english", 40_000) + EOT + slice_head("chinese", 20_000)


@pytest.mark.slow
def test_json_against_tiktoken(tmp_path, corpus_text):
    corpus = write_text(tmp_path / "corpus.txt", corpus_text)
    result = cli(
        tmp_path, "inspect", "cl100k_base", "--corpus", corpus, "--against", "o200k_base", "--json"
    )
    ok(result)
    report = json.loads(result.stdout)
    assert all(key in report for key in KEYS)
    enc, other = _cached("cl100k_base").tiktoken, _cached("o200k_base").tiktoken
    ordinary = _ordinary(enc)
    specials = enc._special_tokens

    assert len(report["tokens"]) == len(ordinary) + len(specials) == report["counts"]["tokens"]
    assert {(s["id"], s["token"]) for s in report["special_tokens"]} == {
        (i, s) for s, i in specials.items()
    }
    lengths = Counter(map(len, ordinary.values()))
    assert report["length_histogram"] == {str(n): c for n, c in sorted(lengths.items())}
    assert sum(c["tokens"] for c in report["categories"].values()) == len(ordinary)
    unreachable = [
        i for i, t in ordinary.items() if in_no_text(t) or enc._encode_single_piece(t) != [i]
    ]
    assert report["unreachable"] == len(unreachable)
    for entry in report["tokens"]:
        token = bytes.fromhex(entry["bytes"])
        if entry["special"]:
            assert specials[token.decode()] == entry["id"]
        else:
            assert ordinary[entry["id"]] == token and entry["length"] == len(token)

    ids = enc.encode(corpus_text, allowed_special="all")
    counts = Counter(ids)
    got = {e["id"]: e["count"] for e in report["tokens"] if e["count"]}
    assert got == dict(counts)
    c = report["corpus"]
    assert c["tokens"] == len(ids) and c["bytes"] == len(corpus_text.encode())
    used = {i for i in counts if i in ordinary}
    assert c["used"] == len(used) and c["unused"] == len(ordinary) - len(used)
    assert c["special_tokens"][EOT] == counts[specials[EOT]]
    assert dict(c["ranked"]) == {i: counts[i] for i in used}
    assert sum(map(len, c["unused_ids"].values())) == c["unused"]
    under = c["undertrained"]
    assert len(under["inside"]) + len(under["across"]) + len(under["absent"]) == c["unused"]

    mine, theirs = set(ordinary.values()), set(_ordinary(other).values())
    a = report["against"]
    assert (a["shared"], a["only_this"], a["only_other"]) == (
        len(mine & theirs),
        len(mine - theirs),
        len(theirs - mine),
    )
    assert sum(v["shared"] for v in a["categories"].values()) == a["shared"]


def test_a_tokenizer_against_itself_names_each_side(tmp_path):
    """An audit: ``inspect gpt2 --against gpt2`` said "only in gpt2: 0; only in gpt2: 0"."""
    result = cli(tmp_path, "inspect", "gpt2", "--against", "gpt2")
    ok(result)
    # GPT-2 holds 50,256 distinct ordinary byte strings (its 50,257 entries but one special).
    assert "shared 50,256; only in gpt2 (SRC): 0; only in gpt2 (--against): 0" in result.stdout


def test_readable_summary(tmp_path, corpus_text):
    corpus = write_text(tmp_path / "corpus.txt", corpus_text)
    result = cli(tmp_path, "inspect", "gpt2", "--corpus", corpus, "--against", "cl100k_base")
    ok(result)
    out = result.stdout
    assert out.startswith("gpt2: byte-level BPE, 50,257 tokens")
    for heading in (
        "Byte lengths of the 50,256 ordinary tokens",
        "Categories",
        "Corpus ",
        "Against cl100k_base",
    ):
        assert heading in out
    assert "Latin letters" in out and "under-trained candidates" in out
    assert "encoding" in result.stderr  # progress on stderr, never stdout
    assert "100.0%" not in out and "100.0%" in result.stderr


def test_each_under_trained_group_shows_examples(tmp_path, corpus_text):
    """The summary gives examples of each group (README); "bytes not in the text" gave only
    its count (an audit). Each of the three lines ends with --top of them and how many more
    the JSON report lists."""
    corpus = write_text(tmp_path / "corpus.txt", corpus_text)
    result = cli(tmp_path, "inspect", "gpt2", "--corpus", corpus, "--json")
    ok(result)
    groups = json.loads(result.stdout)["corpus"]["undertrained"]
    result = cli(tmp_path, "inspect", "gpt2", "--corpus", corpus, "--top", "3")
    ok(result)
    out = result.stdout
    for words, group in [("inside tokens it used", "inside"), ("only across tokens", "across"),
                         ("not in the text", "absent")]:  # fmt: skip
        (line,) = [s for s in out.splitlines() if s.strip().startswith(f"bytes {words}:")]
        n = len(groups[group])
        assert n > 3, group
        assert line.count("'") >= 6 and line.endswith(f", ... ({n - 3:,} more)"), line


def test_standard_input_is_a_corpus(tmp_path):
    text = "hello world hello"
    result = cli_bytes(tmp_path, "inspect", "gpt2", "--corpus", "-", "--json", stdin=text.encode())
    assert result.returncode == 0, result.stderr
    corpus = json.loads(result.stdout)["corpus"]
    assert corpus["files"] == ["-"] and corpus["tokens"] == 3
    ids = _cached_gpt2_ids(text)
    assert np.array_equal(sorted(i for i, _ in corpus["ranked"]), sorted(set(ids)))


def test_foreign_tokens_are_given_as_their_file_writes_them(tmp_path):
    path = sentencepiece_bpe(tmp_path / "sp")
    own = tokenizers.Tokenizer.from_file(str(path))
    result = cli(tmp_path, "inspect", path, "--json")
    ok(result)
    entries = {e["id"]: e for e in json.loads(result.stdout)["tokens"]}
    assert {i: e["text"] for i, e in entries.items()} == {
        i: t for t, i in own.get_vocab(with_added_tokens=True).items()
    }
    # <0x41> stands for the byte "A" stands for: the keys that say so are kept as they were.
    fallback, letter = entries[own.token_to_id("<0x41>")], entries[own.token_to_id("A")]
    assert fallback["token"] == letter["token"] == "A" and fallback["bytes"] == "41"
    assert (fallback["category"], letter["category"]) == ("byte fallback", "Latin")
    # The Reach rule is byte-level BPE's: both keys say it does not apply (a docs audit: the
    # ids were an empty list, as if every token were reachable).
    report = json.loads(result.stdout)
    assert report["unreachable"] is None and report["unreachable_ids"] is None


def test_the_summary_shows_foreign_tokens_as_their_file_writes_them(tmp_path):
    path = wordpiece(tmp_path / "wp")
    own = tokenizers.Tokenizer.from_file(str(path))
    corpus = write_text(tmp_path / "corpus.txt", "the cat sat")
    result = cli(tmp_path, "inspect", path, "--corpus", corpus, "--top", "100000")
    ok(result)
    # Every never-used token is listed, each as the file writes it (so "##s" and "s" differ).
    unused_part = result.stdout.split("never used, by category:")[1]
    line = next(x for x in unused_part.splitlines() if x.strip().startswith("Latin letters"))
    listed = line.split("  ")[-1].strip("'").split("', '")
    report = cli(tmp_path, "inspect", path, "--corpus", corpus, "--json")
    ok(report)
    ids = json.loads(report.stdout)["corpus"]["unused_ids"]["Latin"]
    latin = [own.id_to_token(i) for i in ids]
    assert {"##s", "s"} <= set(latin)
    assert listed == latin and len(set(listed)) == len(listed)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (wordpiece, "pattern: none (WordPiece: tokenizers splits text as its file says)"),
        (qwen2_style, "pattern: none (the tokenizer.json's pipeline splits text: 1 normalizer, "),
    ],
)
def test_a_tokenizer_split_by_no_single_pattern_says_so(tmp_path, make, said):
    """The summary and the JSON name the pattern that splits text (a tokenizer trained with
    o200k, saved as GPT-2 files, was read with GPT-2's, and nothing said which); a file that
    splits text otherwise has no pattern to name: the summary says what splits it, and the
    JSON's "pattern" is null (not a description that --pattern would refuse)."""
    path = make(tmp_path / "tok")
    summary = cli(tmp_path, "inspect", path)
    ok(summary)
    assert summary.stdout.splitlines()[1].startswith(f"  {said}")
    report = cli(tmp_path, "inspect", path, "--json")
    ok(report)
    tokenizer = json.loads(report.stdout)["tokenizer"]
    assert "pattern" in tokenizer and tokenizer["pattern"] is None


def _cached_gpt2_ids(text: str) -> list[int]:
    from bpe_studio.core.encode.foreign import open_tokenizer

    return open_tokenizer("gpt2").encode(text)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("no_such_tokenizer",), "no_such_tokenizer"),
        (("gpt2", "--corpus", "missing.txt"), "missing.txt"),
        (("gpt2", "--against", "other_missing"), "other_missing"),
    ],
)
def test_bad_sources_are_one_line(tmp_path, args, named):
    line = error_line(cli(tmp_path, "inspect", *args))
    assert named in line


def test_a_corpus_that_is_not_utf8_is_one_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff")
    line = error_line(cli(tmp_path, "inspect", "gpt2", "--corpus", bad))
    assert "bad.txt" in line and "UTF-8" in line


def test_ctrl_c(tmp_path):
    big = generated_corpus(tmp_path / "big.txt", 2**18, 5 * 2**20)
    code, lines = interrupt_when_under_way(
        tmp_path, "encoding", "inspect", "gpt2", "--corpus", big, "--workers", 24
    )
    assert_one_quiet_line(code, lines)


def test_no_scan_leaves_the_split_out(tmp_path):
    corpus = write_text(tmp_path / "c.txt", "hello world, hello")
    result = cli(tmp_path, "inspect", "gpt2", "--corpus", corpus, "--json", "--no-scan")
    ok(result)
    under = json.loads(result.stdout)["corpus"]["undertrained"]
    assert under["across"] is None and under["absent"] is None and under["inside"]
    assert "scanning" not in result.stderr


def test_no_scan_without_a_corpus_is_refused(tmp_path):
    """The terminals audit: --no-scan without --corpus was silently ignored."""
    result = cli(tmp_path, "inspect", "gpt2", "--no-scan")
    assert result.returncode == 2 and result.stdout == ""
    assert error_line(result) == (
        "bpe-studio: error: --no-scan leaves out a pass over the --corpus text, and no "
        "--corpus is given: name a corpus, or leave --no-scan out"
    )


def test_a_src_after_corpus_is_said_to_be_taken_by_it(tmp_path):
    """Found by the first-hour audit: "inspect --corpus zh.txt o200k_base" said only that SRC
    was missing; --corpus, which takes many files, had taken it."""
    corpus = write_text(tmp_path / "zh.txt", "中文 text " * 20)
    result = cli(tmp_path, "inspect", "--corpus", corpus, "o200k_base")
    assert result.returncode == 2
    assert (
        "required: SRC (--corpus takes every word after it, 'o200k_base' too: give SRC "
        "before --corpus)" in result.stderr
    )
    alone = cli(tmp_path, "inspect")
    assert alone.returncode == 2 and "takes every word" not in alone.stderr


def test_the_usage_says_what_a_tokenizer_json_dropped(tmp_path):
    """The patterns audit's follow-up: inspect --corpus counted the bytes per token of a
    custom regex's tokenizer.json over the whole text, of which the Split dropped the
    characters its regex does not match (as tokenizers drops them)."""
    from bpe_studio.core import Tokenizer

    pattern = r"\p{Latin}+|\p{N}+|\s+|\p{P}|\p{S}"
    vocab = {i: bytes([i]) for i in range(256)} | {256: EOT.encode(), 257: b"ab"}
    Tokenizer(vocab, [(b"a", b"b")], [EOT], pattern=pattern).save(tmp_path / "hf", format="hf")
    line = "ab 12 中文字, ab.\n"  # the three Han characters match no part of the regex
    write_text(tmp_path / "t.txt", line * 40)
    dropped, total = len("中文字".encode()) * 40, len((line * 40).encode())
    kept_tokens = 40 * len(["ab", " ", "1", "2", " ", ",", " ", "ab", ".", "\n"])
    report = cli(tmp_path, "inspect", "hf", "--corpus", "t.txt", "--json")
    ok(report)
    corpus = json.loads(report.stdout)["corpus"]
    assert (corpus["bytes"], corpus["dropped_bytes"], corpus["tokens"]) == (
        total,
        dropped,
        kept_tokens,
    )
    assert corpus["bytes_per_token"] == (total - dropped) / kept_tokens
    summary = cli(tmp_path, "inspect", "hf", "--corpus", "t.txt")
    ok(summary)
    assert "bytes/token of the text kept" in summary.stdout
    assert f"left out {dropped} bytes of the text's {total} bytes (43%)" in summary.stdout


def test_tokens_met_only_in_dropped_text_are_not_in_the_text_kept(tmp_path):
    """A tokenizer.json whose Split removes the digits: inspect --corpus listed "1999" and
    "000" as "bytes only across tokens", though the encoder never sees them, and "td" (only
    across the "2" of "cat2dog", given as "cat" and "dog" apart) so too. They are absent, in
    the JSON and in the summary's line, which says the text searched is the text kept."""
    from foreign_files import removing_split

    path = removing_split(tmp_path / "hf", "[0-9]+", invert=False, use_regex=True)
    write_text(tmp_path / "t.txt", "cat2dog said 1999 and 1000.\n" * 30)
    report = cli(tmp_path, "inspect", str(path), "--corpus", "t.txt", "--json")
    ok(report)
    corpus = json.loads(report.stdout)["corpus"]
    groups = corpus["undertrained"]
    assert corpus["dropped_bytes"] == 30 * len("219991000")
    hf = tokenizers.Tokenizer.from_file(str(path))
    for token in ("1999", "000", "td"):
        i = hf.token_to_id(token)
        assert i in groups["absent"] and i not in groups["across"], token
    summary = cli(tmp_path, "inspect", str(path), "--corpus", "t.txt", "--top", "3")
    ok(summary)
    (line,) = [s for s in summary.stdout.splitlines() if "bytes not in the text" in s]
    assert line.startswith(f"    bytes not in the text kept:  {len(groups['absent']):,}  ")


def test_against_shows_the_other_tokenizers_notes(tmp_path):
    """Review h_rev63: --against a padded tokenizer.json never said that its truncation and
    padding are not applied (the text, nor the JSON's against.notes)."""
    oracle = tokenizers.Tokenizer.from_file(str(wordpiece(tmp_path / "made")))
    oracle.enable_truncation(max_length=4)
    oracle.enable_padding(length=16, pad_id=0, pad_token=oracle.id_to_token(0))
    path = tmp_path / "padded" / "tokenizer.json"
    path.parent.mkdir()
    oracle.save(str(path))
    note = f"{path}: its truncation and padding are not applied"
    shown = cli(tmp_path, "inspect", "gpt2", "--against", path)
    ok(shown)
    assert shown.stdout.count(f"  note: {note}") == 1
    assert shown.stdout.index(f"Against {path}") < shown.stdout.index(note)
    report = cli(tmp_path, "inspect", "gpt2", "--against", path, "--json")
    ok(report)
    (said,) = json.loads(report.stdout)["against"]["notes"]
    assert said.startswith(note)
    back = cli(tmp_path, "inspect", path, "--against", "gpt2", "--json")
    ok(back)
    plain = json.loads(back.stdout)
    assert plain["against"]["notes"] == [] and plain["tokenizer"]["notes"] == [said]


def test_against_gpt2_files_that_need_their_special_token_named(tmp_path):
    """The CLI audit: two runs trained with "<|a|><|b|>" as GPT-2 files, compared: SRC was
    read with --special-token, SRC2 never, and failed saying to name it with
    --special-token."""
    from bpe_studio.core import Tokenizer, train_bpe

    special = "<|a|><|b|>"
    corpus = write_text(tmp_path / "c.txt", slice_head("tinystories", 20_000))
    for size in (300, 320):
        vocab, merges = train_bpe(corpus, size, [special])
        with pytest.warns(UserWarning):
            Tokenizer(vocab, merges, [special]).save(tmp_path / f"t{size}")
    report = cli(tmp_path, "inspect", "t320", "--special-token", special, "--against", "t300",
                 "--json")  # fmt: skip
    ok(report)
    against = json.loads(report.stdout)["against"]
    assert against["only_this"] == 20 and against["only_other"] == 0
    refused = cli(tmp_path, "inspect", "t320", "--against", "t300")
    assert "t320/vocab.json" in error_line(refused)
    # The token named for SRC2 alone: SRC (a preset) does not hold it, and is read without.
    report = cli(tmp_path, "inspect", "gpt2", "--against", "t300", "--special-token", special,
                 "--json")  # fmt: skip
    ok(report)
    assert [s["token"] for s in json.loads(report.stdout)["special_tokens"]] == ["<|endoftext|>"]
    alone = cli(tmp_path, "inspect", "gpt2", "--special-token", special)
    assert f"special token '{special}' is not in gpt2" in error_line(alone)


def test_the_report_appended_to_its_corpus_is_refused(tmp_path):
    """The CLI audit: inspect gpt2 --corpus a.txt >> a.txt appended the report to the corpus
    (exit 0), where encode, decode, train and convert refuse standard output that is an
    input; inspect has no --force, and the line says none."""
    import subprocess

    from cli_run import _command, _env

    corpus = write_text(tmp_path / "a.txt", "hello world\n")
    with open(corpus, "ab") as stdout:
        result = subprocess.run(_command(("inspect", "gpt2", "--corpus", corpus)),
                                stdout=stdout, stderr=subprocess.PIPE, cwd=tmp_path,
                                env=_env(), timeout=600)  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.decode().strip() == (
        f"bpe-studio: error: standard output: is the input {corpus} (the same file); an "
        "output never replaces an input"
    )
    assert corpus.read_text(encoding="utf-8") == "hello world\n"


def test_a_vocab_json_against_itself_is_warned_of_once(tmp_path):
    """Review h_rev63: inspect X --against X, X a Qwen2 vocab.json beside its tokenizer.json,
    said the warning twice."""
    from hf_shapes import hub_folder

    hub_folder(tmp_path / "qwen", "qwen2", ["<|im_end|>"])
    vocab = tmp_path / "qwen" / "vocab.json"
    said = ok(cli(tmp_path, "inspect", vocab, "--against", vocab))
    assert said.count("the model's tokenizer.json beside it encodes otherwise") == 1


def test_the_beside_warning_reads_the_gpt2_files_once(tmp_path, monkeypatch, capsys):
    """Review h_rev63: the warning read the vocab.json + merges.txt a second time (seconds for
    a 100k vocabulary) where inspect had read them anyway: it is given their data."""
    from hf_shapes import hub_folder

    from bpe_studio.cli import inspect, sources

    hub_folder(tmp_path / "qwen", "qwen2", ["<|im_end|>"])
    vocab = tmp_path / "qwen" / "vocab.json"
    read = []
    real = sources.load_data
    monkeypatch.setattr(sources, "load_data", lambda *a: read.append(a) or real(*a))
    tok = inspect._load(str(vocab), None)
    assert len(tok.vocab) > 256 and read == []
    assert "the model's tokenizer.json beside it encodes otherwise" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["wordpiece", "unigram", "sentencepiece", "byte-level"])
def test_text_a_tokenizers_run_file_drops_is_not_counted_as_none(tmp_path, kind):
    """An audit: inspect --corpus on a BERT-style file (BertPreTokenizer, WordPiece), which
    drops every space (18% of English), reported dropped_bytes 0, and its bytes/token over
    the whole input without a word; so did a Unigram with WhitespaceSplit and a
    SentencePiece-style BPE with CharDelimiterSplit, and a byte-level file with the
    BertPreTokenizer had no note. Their ids are not the text's bytes ("##ing", "▁the"), so
    what they drop is not counted: null, said, and the ratio said to be of the whole input.
    The oracle: tokenizers' own pre-tokenizer leaves bytes out of its pieces."""
    from foreign_files import dropping_files, pre_tokenizer_dropped

    path = dropping_files(tmp_path)[kind]
    text = "The cat sat on the mat|again, and again.\n" * 40
    write_text(tmp_path / "t.txt", text)
    assert pre_tokenizer_dropped(path, text) > 0
    ids = tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids
    report = cli(tmp_path, "inspect", path, "--corpus", "t.txt", "--json")
    ok(report)
    corpus = json.loads(report.stdout)["corpus"]
    assert (corpus["bytes"], corpus["tokens"]) == (len(text.encode()), len(ids))
    assert corpus["dropped_bytes"] is None
    assert corpus["bytes_per_token"] == len(text.encode()) / len(ids)
    summary = cli(tmp_path, "inspect", path, "--corpus", "t.txt")
    ok(summary)
    ratio = f"{len(text.encode()) / len(ids):.2f} bytes/token"
    assert f"({ratio} of the whole input, the text dropped not counted out)" in summary.stdout
    said = "  the tokenizer's pre-tokenizer drops text, as tokenizers does (no id stands for it):"
    assert f"{said} not counted, as the ids' bytes cannot tell how much\n" in summary.stdout


def test_a_tokenizers_run_file_that_drops_nothing_keeps_dropped_at_0(tmp_path):
    """The other side: a Unigram file whose Metaspace drops nothing has 0 dropped bytes and
    a plain ratio (tokenizers' pieces hold every byte of the text)."""
    from foreign_files import pre_tokenizer_dropped, unigram

    path = unigram(tmp_path / "unigram")
    text = "The cat sat on the mat, again and again.\n" * 40
    write_text(tmp_path / "t.txt", text)
    assert pre_tokenizer_dropped(path, text) == 0
    report = cli(tmp_path, "inspect", path, "--corpus", "t.txt", "--json")
    ok(report)
    assert json.loads(report.stdout)["corpus"]["dropped_bytes"] == 0
    run = cli(tmp_path, "inspect", path, "--corpus", "t.txt")
    ok(run)
    summary = run.stdout  # (the report; ok() gives stderr, its progress bars)
    assert "Corpus t.txt:" in summary
    assert "drops text" not in summary and "not counted" not in summary


def test_what_a_normalizer_deletes_is_said_not_counted(tmp_path):
    """An audit: a byte-level file whose normalizer strips accents (NFD + StripAccents;
    tokenizers runs it) reported dropped_bytes 0 and no word of the accents no id stands
    for (tokenizers' own normalize_str shows them gone): null, and the summary names the
    step and says it is not counted."""
    from tokenizers import decoders, models, normalizers, pre_tokenizers

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    hf = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents()])
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.save(str(tmp_path / "tokenizer.json"))
    text = "café naïve résumé\n" * 20
    assert "é" not in hf.normalizer.normalize_str(text)  # the oracle
    write_text(tmp_path / "t.txt", text)
    report = cli(tmp_path, "inspect", "tokenizer.json", "--corpus", "t.txt", "--json")
    ok(report)
    assert json.loads(report.stdout)["corpus"]["dropped_bytes"] is None
    run = cli(tmp_path, "inspect", "tokenizer.json", "--corpus", "t.txt")
    ok(run)
    summary = run.stdout
    said = "  the tokenizer's normalizer (StripAccents) deletes characters (no id stands for them):"
    assert f"{said} not counted, as the ids' bytes cannot tell how much\n" in summary
    assert "pre-tokenizer" not in summary
    assert "bytes/token of the whole input, the text dropped not counted out)" in summary


def test_a_wordpiece_that_drops_nothing_says_its_unk_words_are_not_text_kept(tmp_path):
    """An audit: under a WordPiece whose pre-tokenizer drops nothing, the never-used "xyz",
    met only inside "xyzw" (one [UNK] id: tokenizers' own tokens), was counted among the
    "bytes not in the text", which holds it. The summary says how many words the model got
    as [UNK], and that such bytes are not in the text kept."""
    from foreign_files import wordpiece_keeping_spaces

    hf = tokenizers.Tokenizer.from_file(str(wordpiece_keeping_spaces(tmp_path)))
    text = "Hello ok xyzw\n" * 12
    tokens = hf.encode(text, add_special_tokens=False).tokens
    assert tokens.count("[UNK]") == 12  # the oracle
    write_text(tmp_path / "t.txt", text)
    report = cli(tmp_path, "inspect", "tokenizer.json", "--corpus", "t.txt", "--json")
    ok(report)
    corpus = json.loads(report.stdout)["corpus"]
    assert (
        corpus["dropped_bytes"] == 0 and hf.token_to_id("xyz") in corpus["undertrained"]["absent"]
    )
    run = cli(tmp_path, "inspect", "tokenizer.json", "--corpus", "t.txt")
    ok(run)
    summary = run.stdout
    said = "  the tokenizer's WordPiece model gave 12 words as its unknown token (one id each, "
    assert f"{said}not their text)\n" in summary
    assert "    bytes not in the text kept:" in summary
    assert "bytes not in the text:" not in summary
