"""Named pre-tokenization patterns (gpt2, cl100k, o200k) and custom regexes, end to end.

Oracles: the patterns tiktoken publishes (``reference_encoder.published``), tiktoken itself
built offline from the shipped rank files, GPT-2's pattern in its original form and the slow
reference trainer (``core.reference``), all independent of ``bpe_studio``.
"""

from __future__ import annotations

import re
from collections import Counter
from unittest import mock

import numpy as np
import pytest
import regex
import tiktoken
from core_helpers import EOT, SLICES, read_fixture, write_text
from hypothesis import given
from reference_encoder import ASSIGNED_TEXTS, ReferenceEncoder, published, shipped_tiktoken
from text_strategies import HYPO

from bpe_studio.core import Tokenizer, count_file, count_text, train_bpe
from bpe_studio.core.corpus import counting as corpus_module
from bpe_studio.core.encode.encode_file import encode_file
from bpe_studio.core.explain.span_arrays import compute_spans
from bpe_studio.core.pretokenization.pretokenizer import pretokenize, pretokenizer
from bpe_studio.core.reference import GPT2_SPLIT_PATTERN, pretoken_counts, reference_train

ENCODINGS = {"cl100k": "cl100k_base", "o200k": "o200k_base"}
SLICE = 12_000


def pat_str(name: str) -> str:
    return GPT2_SPLIT_PATTERN if name == "gpt2" else published(ENCODINGS[name])["pat_str"]


_LOADED: dict[str, tuple[Tokenizer, tiktoken.Encoding]] = {}


def loaded(name: str) -> tuple[Tokenizer, tiktoken.Encoding]:
    """The preset under test and tiktoken's encoding built from the same rank file."""
    if name not in _LOADED:
        encoding = ENCODINGS[name]
        enc = shipped_tiktoken(encoding)
        _LOADED[name] = (Tokenizer.preset(encoding), enc)
    return _LOADED[name]


def fixture_slice(key: str) -> str:
    return read_fixture(SLICES[key])[:SLICE]


# --- the registry ---------------------------------------------------------------------------


def test_named_patterns_are_the_published_ones():
    for name in ENCODINGS:
        assert pretokenizer(name).pattern == pat_str(name)
        assert pretokenizer(pat_str(name)).name == name
    # GPT-2's in either spelling is the name "gpt2", and r50k's is read as that name.
    assert pretokenizer(published("r50k_base")["pat_str"]).name == "gpt2"
    assert pretokenizer("gpt2").name == "gpt2"
    assert pretokenizer(r"\w+").name is None


@pytest.mark.parametrize("key", list(SLICES))
def test_r50k_spelling_splits_as_gpt2(key):
    text = read_fixture(SLICES[key])
    r50k = regex.compile(published("r50k_base")["pat_str"])
    assert r50k.findall(text) == regex.findall(GPT2_SPLIT_PATTERN, text)
    assert pretokenize(text) == regex.findall(GPT2_SPLIT_PATTERN, text)


@HYPO
@given(ASSIGNED_TEXTS)
def test_r50k_spelling_splits_as_gpt2_on_generated_text(text):
    r50k = regex.compile(published("r50k_base")["pat_str"])
    assert r50k.findall(text) == regex.findall(GPT2_SPLIT_PATTERN, text)


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
@pytest.mark.parametrize("key", list(SLICES))
def test_pretokenize_with_a_named_pattern(name, key):
    text = fixture_slice(key)
    assert pretokenize(text, name) == regex.findall(pat_str(name), text)


def test_bad_regex_is_refused_quoting_it():
    for bad in ["(ab", "[z-a]", "a{2,1}"]:
        with pytest.raises(ValueError, match=regex.escape(repr(bad))):
            pretokenizer(bad)
    vocab = {i: bytes([i]) for i in range(256)}
    with pytest.raises(ValueError, match="not a valid regex"):
        Tokenizer(vocab, [], pattern="(ab")
    with pytest.raises(ValueError, match="not a valid regex"):
        count_text("abc", pattern="(ab")
    with pytest.raises(TypeError):
        pretokenizer(3)  # type: ignore[arg-type]


def test_custom_pattern_tokenizer():
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    tok = Tokenizer(vocab, [(b"a", b"b")], pattern=r"[a-z]+|\d|\s")
    assert tok.pattern == r"[a-z]+|\d|\s" and tok.pattern_name is None
    assert tok.encode("ab ab1") == [256, ord(" "), 256, ord("1")]
    assert Tokenizer(vocab, []).pattern_name == "gpt2"
    # A pre-token is the whole match, even where the regex has groups.
    assert pretokenize("ab, c", r"([a-z])[a-z]*|\W") == ["ab", ",", " ", "c"]


# --- names and their other spellings ---------------------------------------------------------

# What tiktoken's encoding names and the models' names mean (tiktoken_ext/openai_public.py:
# r50k_base and p50k_base use GPT-2's pattern; GPT-4 and GPT-3.5 use cl100k_base, GPT-4o
# o200k_base).
SPELLINGS = {
    "gpt2": ["GPT2", "gpt-2", "Gpt_2", "r50k_base", "p50k_base"],
    "cl100k_base": ["cl100k_base", "CL100K", "gpt4", "gpt-4", "GPT-4", "gpt-3.5-turbo"],
    "o200k_base": ["o200k_base", "O200K", "gpt4o", "gpt-4o", "GPT-4o"],
}


@pytest.mark.parametrize("encoding", list(SPELLINGS))
def test_common_spellings_are_the_named_patterns(encoding):
    expected = GPT2_SPLIT_PATTERN if encoding == "gpt2" else published(encoding)["pat_str"]
    for spelling in SPELLINGS[encoding]:
        assert regex.compile(pretokenizer(spelling).pattern).findall(
            ASSIGNED_SAMPLE
        ) == regex.findall(expected, ASSIGNED_SAMPLE), spelling
        vocab = {i: bytes([i]) for i in range(256)}
        assert Tokenizer(vocab, [], pattern=spelling).pattern_name is not None


ASSIGNED_SAMPLE = "Hello world's END, 12345 naïve\n\n  x\tÀB don'T"


@pytest.mark.parametrize("name", ["gpt3", "GPT-5", "o200", "cl100kbas", "cl10k", "p50k_edt"])
def test_names_close_to_a_preset_are_refused_with_the_names(name):
    with pytest.raises(ValueError) as info:
        pretokenizer(name)
    message = str(info.value)
    assert repr(name) in message and "not a pattern name" in message
    for listed in ("gpt2", "cl100k", "o200k"):
        assert listed in message


UNCOVERED = r"\w+"  # leaves out punctuation and spaces


@pytest.mark.parametrize("pattern", [r"\b", "x*", r"(?=O)"])
def test_a_pattern_that_matches_only_empty_text_is_said_to(pattern):
    """An audit: a regex matching only empty text was refused as "does not match 'O'",
    which puzzles whoever sees it match."""
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], [EOT], pattern=pattern)
    said = f"the pattern '{pattern}' matches only empty text before 'O' (U+004F) at character 0"
    with pytest.raises(ValueError, match=re.escape(said)):
        tok.encode("Once upon")
    with pytest.raises(ValueError, match=re.escape(said)):
        list(tok.encode_iterable(["On", "ce"]))
    with pytest.raises(ValueError, match="matches only empty text before 'O'"):
        count_text("Once upon", [EOT], pattern=pattern)


def test_a_pattern_that_leaves_text_out_is_an_error_naming_the_character(tmp_path):
    vocab = {i: bytes([i]) for i in range(256)}
    tok = Tokenizer(vocab, [], [EOT], pattern=UNCOVERED)
    for text in ["hello, world!", f"hello{EOT}world!", "hi\nthere, you"]:
        with pytest.raises(ValueError, match=r"does not match ('[,!]'|' '|'\\n')"):
            tok.encode(text)
        with pytest.raises(ValueError, match="does not match"):
            list(tok.encode_iterable([text[:3], text[3:]]))
        with pytest.raises(ValueError, match="does not match"):
            count_text(text, [EOT], pattern=UNCOVERED)
    with pytest.raises(ValueError, match=r"'\\n' \(U\+000A\) at character 2 \(line 1, column 3\)"):
        tok.encode("hi\nthere")
    # A covering pattern still works, and texts it covers need nothing more.
    assert tok.encode("hello") == list(b"hello")


def test_files_name_the_line_and_byte_of_the_character_left_out(tmp_path):
    lines = ["first line ok" for _ in range(2000)] + ["naïve, then a comma"]
    path = write_text(tmp_path / "c.txt", "\n".join(lines))
    offset = len("\n".join(lines[:-1]).encode()) + 1 + len("naïve".encode())
    pattern = r"\w+|\s+"
    vocab = {i: bytes([i]) for i in range(256)}
    tok = Tokenizer(vocab, [], pattern=pattern)
    expected = f"{path}: .*',' \\(U\\+002C\\) at line 2001 \\(byte offset {offset}\\)"
    with mock.patch.object(corpus_module, "IN_PROCESS_CHUNK", 2048):
        with pytest.raises(ValueError, match=expected):
            count_file(path, [], workers=1, pattern=pattern)
    with pytest.raises(ValueError, match=expected):
        train_bpe(path, 300, [], pattern=pattern)
    with mock.patch("bpe_studio.core.encode.encode_file.CHUNK_BYTES", 8192):
        for workers in (1, 2):
            with pytest.raises(ValueError, match=expected):
                encode_file(tok, path, tmp_path / "ids.npy", workers=workers)
    assert not (tmp_path / "ids.npy").exists()


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_streaming_waits_for_open_runs(name):
    tok, enc = loaded(name)
    # Runs longer than the longest special token plus the lookahead: o200k splits the first
    # after its Hebrew only because no lower-case letter ends it.
    text = "x " + "עברית" * 6 + "HTTP" * 6 + "a, and " + "ΑΒΓδ'll don't" + EOT
    expected = enc.encode(text, allowed_special="all")
    with mock.patch("bpe_studio.core.encode.streaming.STREAM_BLOCK", 5):
        for k in range(len(text)):
            assert list(tok.encode_iterable([text[:k], text[k:]])) == expected, k


def test_explicit_special_token_ids():
    vocab = {i: bytes([i]) for i in range(256)}
    tok = Tokenizer(vocab, [], {EOT: 1000, "<|x|>": 300}, pattern="cl100k")
    assert tok.encode(f"a{EOT}<|x|>") == [97, 1000, 300]
    assert tok.vocab[1000] == EOT.encode() and tok.decode([1000]) == EOT
    with pytest.raises(ValueError, match="already holds"):
        Tokenizer(vocab, [], {EOT: 97})
    with pytest.raises(ValueError, match="share id"):
        Tokenizer(vocab, [], {EOT: 500, "<|x|>": 500})


# --- ids equal tiktoken's ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
@pytest.mark.parametrize("key", list(SLICES))
def test_ids_equal_tiktoken_on_fixtures(name, key):
    tok, enc = loaded(name)
    text = fixture_slice(key)
    ids = tok.encode(text)
    assert ids == enc.encode(text, allowed_special="all")
    assert tok.decode(ids) == text
    assert list(tok.encode_iterable(text[i : i + 97] for i in range(0, len(text), 97))) == ids
    assert [s.id for s in tok.spans(text)] == ids
    assert tok.encode_array(text).tolist() == ids
    spans = compute_spans(tok, text, piece=500)
    assert spans is not None and spans.ids.tolist() == ids


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_ids_equal_tiktoken_on_generated_text(name):
    tok, enc = loaded(name)

    @HYPO
    @given(ASSIGNED_TEXTS)
    def check(text):
        ids = tok.encode(text)
        assert ids == enc.encode(text, allowed_special="all")
        assert tok.decode(ids) == text
        assert list(tok.encode_iterable(text[i : i + 3] for i in range(0, len(text), 3))) == ids
        with mock.patch("bpe_studio.core.encode.streaming.STREAM_BLOCK", 5):
            chunks = [text[i : i + 2] for i in range(0, len(text), 2)]
            assert list(tok.encode_iterable(chunks)) == ids
        assert [s.id for s in tok.spans(text)] == ids
        spans = compute_spans(tok, text, piece=4)
        assert spans is not None and spans.ids.tolist() == ids

    check()


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_encode_file_equals_encode(tmp_path, name):
    tok, enc = loaded(name)
    text = "".join(read_fixture(SLICES[k])[:300_000] + EOT for k in SLICES)
    src = write_text(tmp_path / "in.txt", text)
    with mock.patch("bpe_studio.core.encode.encode_file.CHUNK_BYTES", 64 * 1024):
        encode_file(tok, src, tmp_path / "ids.npy", workers=2)
    assert np.load(tmp_path / "ids.npy").tolist() == enc.encode(text, allowed_special="all")


# --- counting and training with a pattern ----------------------------------------------------

PATTERNS_UNDER_TEST = ["gpt2", "cl100k", "o200k", r"\p{L}+|\p{N}|[^\p{L}\p{N}]+"]


@pytest.mark.parametrize("pattern", PATTERNS_UNDER_TEST)
def test_chunked_counts_equal_whole_text_counts(tmp_path, pattern):
    oracle = pattern if pattern not in ("gpt2", *ENCODINGS) else pat_str(pattern)
    text = "".join(read_fixture(SLICES[k])[:40_000] for k in SLICES)
    path = write_text(tmp_path / "c.txt", text)
    with mock.patch.object(corpus_module, "IN_PROCESS_CHUNK", 2048):
        chunked = count_file(path, [EOT], workers=1, pattern=pattern)
    assert chunked == pretoken_counts(text, [EOT], oracle)
    assert count_text(text, [EOT], pattern=pattern) == chunked


@pytest.mark.parametrize("pattern", ["cl100k", "o200k"])
def test_parallel_counts_equal_whole_text_counts(tmp_path, pattern):
    text = "".join(read_fixture(SLICES[k]).replace(EOT, "") for k in SLICES)
    text *= 5_000_000 // len(text.encode()) + 1
    path = write_text(tmp_path / "big.txt", text)
    assert path.stat().st_size > corpus_module.IN_PROCESS_LIMIT
    parallel = count_file(path, [], workers=2, pattern=pattern)
    whole: Counter[bytes] = Counter(p.encode() for p in regex.findall(pat_str(pattern), text))
    assert parallel == whole


def test_several_files_are_one_corpus(tmp_path):
    texts = [fixture_slice("english"), fixture_slice("chinese"), fixture_slice("code")]
    paths = [write_text(tmp_path / f"{i}.txt", t) for i, t in enumerate(texts)]
    expected: Counter[bytes] = Counter()
    for t in texts:
        expected += pretoken_counts(t, [EOT], pat_str("cl100k"))
    assert count_file(paths, [EOT], workers=1, pattern="cl100k") == expected
    assert count_file(map(str, paths), [EOT], pattern="cl100k") == expected
    missing = tmp_path / "nope.txt"
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        count_file([paths[0], missing])
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\xfe")
    with pytest.raises(ValueError, match="bad.txt"):
        count_file([paths[0], bad])
    with pytest.raises(ValueError, match="no corpus"):
        count_file([])
    vocab, merges = train_bpe(paths, 400, [EOT], workers=1, pattern="cl100k")
    assert (vocab, merges) == reference_train("".join(texts), 400, [EOT], pat_str("cl100k"))


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
@pytest.mark.parametrize("key", ["english", "chinese", "code", "mixed_web"])
def test_training_with_a_pattern_equals_the_reference(tmp_path, name, key):
    text = read_fixture(SLICES[key])[:8000]
    path = write_text(tmp_path / "t.txt", text)
    got = train_bpe(path, 256 + 1 + 120, [EOT], workers=1, pattern=name)
    assert got == reference_train(text, 256 + 1 + 120, [EOT], pat_str(name))
    # What trains with a pattern encodes with it.
    tok = Tokenizer(*got, [EOT], pattern=name)
    assert tok.decode(tok.encode(text)) == text


def test_a_pattern_matching_the_character_elsewhere_is_not_said_to_match_only_empty_text():
    # Found by the review: '(?m)\p{L}+$' matches "T" alone (at an end), not in "The".
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], [EOT], pattern=r"(?m)\p{L}+$|\s+")
    with pytest.raises(ValueError, match="does not match 'T'"):
        tok.encode("The end")


def test_a_pattern_that_can_match_empty_text_encodes_what_it_matches(tmp_path):
    """Found by the patterns audit: with '\\p{L}*|...' the empty matches between pieces went
    to the merge engine, which takes only non-empty pieces: a long text's first encode
    raised KeyError, and the same call again gave ids that did not decode to the text."""
    pattern = r"\p{L}*|\p{N}+|\s+|[^\s\p{L}\p{N}]"
    train_text = read_fixture(SLICES["english"])[:20_000]
    vocab, merges = train_bpe(write_text(tmp_path / "t.txt", train_text), 600, [EOT],
                              workers=1, pattern=pattern)  # fmt: skip
    assert (vocab, merges) == reference_train(train_text, 600, [EOT], pattern)
    text = "".join(read_fixture(SLICES[k]) for k in ("english", "code", "mixed_web"))[:120_000]
    expected = ReferenceEncoder(vocab, merges, {EOT: 256}, pattern).encode(text)
    tok = Tokenizer(vocab, merges, [EOT], pattern=pattern)
    assert tok.encode(text) == expected
    assert tok.encode(text) == expected  # from the cache the first call filled
    assert tok.decode(expected) == text
    assert "" not in pretokenize("ab 12", pattern)
