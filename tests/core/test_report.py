"""Comparing tokenizers (``core.explain.report``): the boundaries where two tokenizers differ,
checked against a slow reference that walks the text character by character; the report's
numbers checked by hand; the bundled samples and the corpus head."""

from __future__ import annotations

import csv
import io
import unicodedata

import pytest
import tokenizers
from core_helpers import SLICES, slice_head, write_text
from foreign_files import (
    nfkc_lower,
    offset_cuts,
    qwen2_style,
    sentencepiece_bpe,
    unigram,
    wordpiece,
)
from hypothesis import given
from text_strategies import HYPO, TEXTS

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.foreign import ForeignTokenizer, open_tokenizer
from bpe_studio.core.explain.report import (
    CSV_COLUMNS,
    SAMPLE_FILES,
    Report,
    ReportCell,
    Sample,
    Unknown,
    boundary_diff,
    bundled_samples,
    compute_report,
    corpus_sample,
    left_out_note,
    report_csv,
    tokenizer_cuts,
    unknown_note,
)

BYTES = {i: bytes([i]) for i in range(256)}


def slow_cuts(text: str, tok: Tokenizer) -> set[int]:
    """Character offsets 0 < c < len(text) where a token of ``tok`` starts: the byte offset
    of each character, recomputed from scratch, looked up among the tokens' end offsets."""
    ends: set[int] = set()
    pos = 0
    for token_id in tok.encode(text):
        pos += len(tok.decode_bytes([token_id]))
        ends.add(pos)
    return {c for c in range(1, len(text)) if len(text[:c].encode("utf-8")) in ends}


def slow_diff(text: str, a: Tokenizer, b: Tokenizer) -> list[int]:
    return sorted(slow_cuts(text, a) ^ slow_cuts(text, b))


@pytest.fixture(scope="module")
def presets() -> dict[str, Tokenizer]:
    return {name: Tokenizer.preset(name) for name in ("gpt2", "cl100k_base", "o200k_base")}


def test_hand_checked_diff():
    whole = Tokenizer({**BYTES, 256: b"ab"}, [(b"a", b"b")])
    single = Tokenizer(BYTES, [])
    # "abcab": whole cuts a b|c|ab -> {2, 3}; single bytes cut everywhere -> {1, 2, 3, 4}.
    assert boundary_diff("abcab", whole, single) == [1, 4]
    assert boundary_diff("abcab", whole, whole) == []
    assert boundary_diff("", whole, single) == []


def test_cuts_inside_a_character_have_no_offset():
    single = Tokenizer(BYTES, [])
    # "é" is two bytes: the byte tokenizer cuts inside it, which is no character offset.
    assert tokenizer_cuts("aéb", single).tolist() == [1, 2]


def test_surrogates_map_back_to_the_original_text():
    single = Tokenizer(BYTES, [])
    # A surrogate pair encodes as one 4-byte character, two characters of the str;
    # a lone surrogate as U+FFFD.
    assert tokenizer_cuts("a\ud83d\ude00b", single).tolist() == [1, 3]
    assert tokenizer_cuts("a\ud800b", single).tolist() == [1, 2]


@pytest.mark.parametrize("key", sorted(SLICES))
def test_presets_differ_where_the_reference_says(presets, key):
    text = slice_head(key, 6_000)
    gpt2, cl100k, o200k = presets["gpt2"], presets["cl100k_base"], presets["o200k_base"]
    for a, b in ((gpt2, o200k), (cl100k, o200k), (gpt2, cl100k)):
        assert boundary_diff(text, a, b) == slow_diff(text, a, b)


@HYPO
@given(TEXTS)
def test_generated_text(presets, text):
    a, b = presets["gpt2"], presets["o200k_base"]
    assert boundary_diff(text, a, b) == slow_diff(text, a, b)


# Files whose tokens' bytes are not the text's: a normalizer changes it (byte-level, run by
# the exact Tokenizer), or the model is another kind (run by tokenizers).
FILES = {
    "nfkc_lower": nfkc_lower,
    "qwen2_nfc": qwen2_style,
    "sentencepiece_bpe": sentencepiece_bpe,
    "wordpiece": wordpiece,
    "unigram": unigram,
}
NORMALIZED = [
    "the ﬁle İs here",
    "ﬁle",
    unicodedata.normalize("NFD", "café déjà vu"),
    "ab café 😀 ok",
    "Ⅻ ½ ＡＢＣ x²",
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("report_files")
    paths = {name: make(root / name) for name, make in FILES.items()}
    return {
        name: (open_tokenizer(path), tokenizers.Tokenizer.from_file(str(path)))
        for name, path in paths.items()
    }


def test_a_normalizer_that_keeps_the_byte_count_cuts_where_its_offsets_say(files):
    tok, _ = files["nfkc_lower"]
    # "the ﬁle İs here" (by hand): "ﬁ" becomes "fi", split as " f" | "ile", so no cut
    # inside " ﬁle" (4); "İ" lowercases to "i" + U+0307, split as " i" | two bytes of
    # U+0307, so none at 8; the words start at 3, 7, 10 and "s" at 9.
    assert tokenizer_cuts("the ﬁle İs here", tok).tolist() == [3, 7, 9, 10]


@pytest.mark.parametrize("name", list(FILES))
def test_cuts_of_any_file_are_its_offsets_definition(files, name):
    tok, oracle = files[name]
    for text in [*NORMALIZED, slice_head("mixed_web", 3000)]:
        assert tokenizer_cuts(text, tok).tolist() == offset_cuts(oracle, text), text[:40]


@HYPO
@given(TEXTS)
def test_cuts_of_generated_text_are_the_offsets_definition(files, text):
    for name, (tok, oracle) in files.items():
        cuts, expected = tokenizer_cuts(text, tok).tolist(), offset_cuts(oracle, text)
        if isinstance(tok, ForeignTokenizer) or oracle.normalizer.normalize_str(text) == text:
            assert cuts == expected, name
        else:
            # Where the normalizer changed characters, a span holds every character its
            # token came from, where tokenizers points at one of them (test_hf_families):
            # "\xa0\u0300" is " " + U+0300, whose tokens all span the pair, so no cut at 1,
            # which tokenizers' offsets (0, 1), (1, 2) give. Never a cut they do not give.
            assert set(cuts) <= set(expected), name


@pytest.mark.parametrize(("name", "unk"), [("wordpiece", "[UNK]"), ("unigram", "<unk>")])
def test_text_turned_into_the_unknown_token_is_counted(files, name, unk):
    tok, oracle = files[name]
    emoji = bundled_samples()[-1]
    samples = [emoji, Sample("plain", "the cat sat on the mat")]
    report = compute_report(samples, [(name, tok)])
    unk_id = oracle.token_to_id(unk)  # the unknown token the file was made with (by hand)
    enc = oracle.encode(emoji.text, add_special_tokens=False)
    held = [(s, e) for i, (s, e) in zip(enc.ids, enc.offsets) if i == unk_id]
    covered = {c for s, e in held for c in range(s, e)}
    assert len(held) > 20  # emoji are in no vocabulary trained on English
    cell = report.cell(emoji.name, name)
    assert cell.unknown == Unknown(unk, len(held), len(covered))
    # The number itself is what it was: every token counts, [UNK] too.
    assert cell.tokens == len(enc.ids)
    assert cell.bytes_per_token == len(emoji.text.encode("utf-8")) / len(enc.ids)
    assert report.cell("plain", name).unknown is None


def test_byte_level_and_byte_fallback_never_have_unknown_text(files):
    tokenizers_ = [(name, files[name][0]) for name in ("nfkc_lower", "sentencepiece_bpe")]
    report = compute_report(bundled_samples(), tokenizers_)
    assert all(cell.unknown is None for cell in report.cells)
    assert unknown_note(report) == ""


def test_the_note_names_the_share_of_each_sample_turned_unknown():
    def cell(sample, tokenizer, characters, unknown=None):
        return ReportCell(sample, tokenizer, 2 * characters, characters, characters, unknown)

    report = Report(
        ("Chinese", "Emoji-heavy", "Code"),
        ("bert", "gpt2", "t5"),
        (
            cell("Chinese", "bert", 1000, Unknown("[UNK]", 3, 3)),
            cell("Chinese", "gpt2", 1000),
            cell("Chinese", "t5", 1000, Unknown("<unk>", 40, 200)),
            cell("Emoji-heavy", "bert", 5234, Unknown("[UNK]", 312, 764)),
            cell("Emoji-heavy", "gpt2", 5234),
            cell("Emoji-heavy", "t5", 5234),
            cell("Code", "bert", 10),
            cell("Code", "gpt2", 10),
            cell("Code", "t5", 10),
        ),
    )
    # 3 / 1000 is under 1%; 764 / 5234 is 14.6%; 200 / 1000 is 20% (by hand).
    assert unknown_note(report) == (
        "bert turns under 1% of Chinese's characters, 15% of Emoji-heavy's into [UNK]; "
        "t5 turns 20% of Chinese's characters into <unk> "
        "(bytes per token counts that text as encoded)"
    )


def test_report_numbers_by_hand():
    whole = Tokenizer({**BYTES, 256: b"ab"}, [(b"a", b"b")])
    single = Tokenizer(BYTES, [])
    samples = [Sample("ab", "abab"), Sample("accent", "héllo"), Sample("empty", "")]
    report = compute_report(samples, [("whole", whole), ("single", single)])
    assert report is not None
    assert report.samples == ("ab", "accent", "empty")
    assert report.tokenizers == ("whole", "single")
    cell = report.cell("ab", "whole")
    assert (cell.bytes, cell.characters, cell.tokens, cell.bytes_per_token) == (4, 4, 2, 2.0)
    cell = report.cell("accent", "single")  # é is two bytes, each its own token
    assert (cell.bytes, cell.characters, cell.tokens, cell.bytes_per_token) == (6, 5, 6, 1.0)
    assert report.cell("empty", "whole").bytes_per_token == 0.0
    rows = list(csv.DictReader(io.StringIO(report_csv(report))))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert rows[0] == {
        "sample": "ab",
        "tokenizer": "whole",
        "bytes": "4",
        "characters": "4",
        "tokens": "2",
        "bytes_per_token": "2.0000",
        "left_out": "",
    }
    assert len(rows) == 6


def test_report_stops_when_stale():
    single = Tokenizer(BYTES, [])
    assert compute_report([Sample("a", "a")], [("s", single)], lambda: True) is None


def test_report_needs_distinct_names():
    single = Tokenizer(BYTES, [])
    with pytest.raises(ValueError, match="distinct"):
        compute_report([Sample("a", "a")], [("s", single), ("s", single)])


def test_bundled_samples():
    samples = bundled_samples()
    assert [s.name for s in samples] == [name for name, _ in SAMPLE_FILES]
    for s in samples:
        size = len(s.text.encode("utf-8"))
        assert 4_000 <= size <= 40_000, (s.name, size)
        assert "<|endoftext|>" not in s.text
    emoji = samples[-1].text
    assert sum(ord(ch) >= 0x1F000 for ch in emoji) >= 500


def test_corpus_sample_cuts_at_a_whole_character(tmp_path):
    path = write_text(tmp_path / "c.txt", "a" * 9 + "é" + "z")
    assert corpus_sample(path, limit=10) == Sample("Corpus: c.txt", "a" * 9)
    assert corpus_sample(path, limit=11).text == "a" * 9 + "é"
    assert corpus_sample(path).text == "a" * 9 + "éz"


def test_corpus_sample_rejects_bad_utf8(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"abc\xffdef")
    with pytest.raises(ValueError, match=r"bad\.txt: not valid UTF-8 at byte offset 3"):
        corpus_sample(path)


def test_every_reader_of_a_files_start_says_bad_utf8_as_training_does(tmp_path):
    """Found by the code review: one bad byte was "not UTF-8 at byte 70003" in the Report,
    "not UTF-8 text (byte 70,003: ...)" in the curves, and training's own words at Open."""
    from bpe_studio.core import train_bpe
    from bpe_studio.gui.model.corpus_source import utf8_problem
    from bpe_studio.gui.model.curve_server import read_slice, read_text

    path = tmp_path / "bad.txt"
    path.write_bytes(b"line one\nline two \xff and on\n" * 3)
    with pytest.raises(ValueError) as trained:
        train_bpe(path, 300, [], workers=1)
    expected = str(trained.value)
    assert "byte offset 18" in expected and "line 2" in expected
    messages = []
    for read in (corpus_sample, read_slice, read_text):
        with pytest.raises(ValueError) as raised:
            read(path)
        messages.append(str(raised.value))
    messages.append(utf8_problem([str(path)]))
    assert messages == [expected] * 4


def test_a_sample_a_pattern_does_not_cover_leaves_out_only_its_cells():
    """The patterns audit: one sample a run's custom pattern did not cover (Chinese under
    '\\p{Latin}+|...') failed the whole Report with "Could not compute the report: The
    pattern ... does not match '感' ...", naming neither the sample nor the tokenizer, and
    every other row and column was lost. Only the cells that cannot be computed are left out
    now, and the note says which sample, which tokenizer and why."""
    latin = Tokenizer(BYTES, [], pattern=r"\p{Latin}+|\p{N}+|\s+|\p{P}|\p{S}")
    single = Tokenizer(BYTES, [])
    samples = [Sample("English", "once upon a time"), Sample("Chinese", "好感"),
               Sample("Greek", "hi αβ")]  # fmt: skip
    report = compute_report(samples, [("run", latin), ("bytes", single)])
    assert report is not None
    assert report.samples == ("English", "Chinese", "Greek")
    assert report.tokenizers == ("run", "bytes")
    assert report.cell("English", "run").tokens == 16  # a token a byte
    assert report.cell("Chinese", "bytes").tokens == 6
    assert report.find("Chinese", "run") is None and report.find("Greek", "run") is None
    with pytest.raises(KeyError):
        report.cell("Chinese", "run")
    assert [(c.sample, c.tokenizer) for c in report.left_out] == [
        ("Chinese", "run"),
        ("Greek", "run"),
    ]
    note = left_out_note(report)
    assert note.startswith(
        "run cannot encode Chinese and Greek (their cells are left out): in Chinese, the pattern "
        r"'\p{Latin}+|\p{N}+|\s+|\p{P}|\p{S}' does not match '好' (U+597D) at character 0"
    )
    assert "\n" not in note and "Use a regex that matches every character" in note
    # Found by the review: the CSV left the pairs out silently; each is a row, the left-out
    # ones with empty counts and why.
    rows = list(csv.DictReader(io.StringIO(report_csv(report))))
    assert [(r["sample"], r["tokenizer"]) for r in rows] == [
        (s, t) for s in report.samples for t in report.tokenizers
    ]
    for r in rows:
        left = report.find(r["sample"], r["tokenizer"]) is None
        assert (r["tokens"] == "") == left and (r["bytes_per_token"] == "") == left
        assert (r["left_out"] != "") == left
    chinese_run = next(r for r in rows if (r["sample"], r["tokenizer"]) == ("Chinese", "run"))
    assert "does not match '好' (U+597D)" in chinese_run["left_out"]
    assert left_out_note(compute_report(samples[:1], [("run", latin)])) == ""


def test_the_left_out_note_of_one_sample_reads_in_the_singular():
    """The audit: one sample a run could not encode read "run cannot encode Chinese (their
    cells are left out): in Chinese, ...", plural for one cell and the sample named twice."""
    latin = Tokenizer(BYTES, [], pattern=r"\p{Latin}+|\p{N}+|\s+|\p{P}|\p{S}")
    samples = [Sample("English", "once upon a time"), Sample("Chinese", "好感")]
    note = left_out_note(compute_report(samples, [("run", latin)]))
    assert note.startswith(
        "run cannot encode Chinese (its cell is left out): the pattern "
        r"'\p{Latin}+|\p{N}+|\s+|\p{P}|\p{S}' does not match '好' (U+597D) at character 0"
    )
