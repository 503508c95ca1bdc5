"""encode_iterable yields exactly encode("".join(chunks)) however the text is cut, lazily, and
with memory bounded by its block size rather than the length of the stream."""

from __future__ import annotations

import codecs
import itertools
import random
import tempfile
import tracemalloc
from functools import partial
from unittest import mock

import pytest
from core_helpers import EOT, SLICES, fixture_path, read_fixture, slice_head
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import HYPO, TEXTS

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode import streaming as streaming_module
from bpe_studio.core.encode.merging import kernel_start
from bpe_studio.core.pretokenization.scan_patterns import LLAMA3_PATTERN, QWEN2_PATTERN

DOUBLE = EOT + EOT


@pytest.fixture(scope="module")
def overlapping(gpt2_tokenizer):
    """GPT-2 with a second special token that begins with the first."""
    return Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges, [EOT, DOUBLE])


def small_blocks(n):
    """Make encode_iterable work on blocks of ``n`` characters instead of 64K, so short texts
    cross many block boundaries."""
    return mock.patch.object(streaming_module, "STREAM_BLOCK", n)


def cut(text, points):
    points = sorted(set(points))
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]


def stream(tok, chunks):
    return list(tok.encode_iterable(chunks))


# --- real block size ----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SLICES.values()))
def test_lines_of_a_file(gpt2_tokenizer, name):
    expected = gpt2_tokenizer.encode(read_fixture(name))
    with open(fixture_path(name), encoding="utf-8", newline="") as f:
        assert stream(gpt2_tokenizer, f) == expected


def test_one_character_pieces(gpt2_tokenizer):
    text = slice_head("mixed_web", 150_000) + slice_head("chinese", 100_000)
    assert stream(gpt2_tokenizer, iter(text)) == gpt2_tokenizer.encode(text)


def test_random_cuts_in_a_large_text(gpt2_tokenizer):
    text = read_fixture(SLICES["code"]) + read_fixture(SLICES["chinese"])
    rng = random.Random(1234)
    for n_cuts in (3, 50, 2000):
        chunks = cut(text, [rng.randrange(len(text) + 1) for _ in range(n_cuts)])
        assert stream(gpt2_tokenizer, chunks) == gpt2_tokenizer.encode(text)


def test_chunks_that_split_every_special_token(gpt2_tokenizer):
    text = read_fixture(SLICES["tinystories"])
    starts = [i for i in range(len(text)) if text.startswith(EOT, i)]
    assert len(starts) > 300
    for offset in (1, 6, len(EOT) - 1):
        chunks = cut(text, [s + offset for s in starts])
        assert stream(gpt2_tokenizer, chunks) == gpt2_tokenizer.encode(text)


def test_chunks_that_split_runs_of_whitespace(gpt2_tokenizer):
    # Code indentation and blank lines, cut inside every run of two or more spaces/newlines.
    text = read_fixture(SLICES["code"])
    inside = [i for i in range(1, len(text)) if text[i - 1].isspace() and text[i].isspace()]
    assert len(inside) > 10_000
    expected = gpt2_tokenizer.encode(text)
    assert stream(gpt2_tokenizer, cut(text, inside[::7])) == expected
    assert stream(gpt2_tokenizer, cut(text, inside)) == expected


@pytest.mark.slow
def test_block_ending_just_after_a_blank_line(gpt2_tokenizer):
    """The first chunk ends (past one 64K block) a few characters into a word that follows a
    blank line, so the streaming buffer ends there. "\n\nWord" pre-tokenizes as "\n", "\n",
    "Word"; the decided part of the buffer then ends in "\n\n", which on its own would be one
    pre-token."""
    text = read_fixture(SLICES["english"])[:150_000]
    expected = gpt2_tokenizer.encode(text)
    starts = [
        i + 2
        for i in range(70_000, 200_000)
        if text.startswith("\n\n", i) and text[i + 2 : i + 4].isalpha() and text[i - 1] != "\n"
    ]
    assert len(starts) > 20
    wrong = []
    for p in starts[:6]:
        for d in range(1, 30):
            if stream(gpt2_tokenizer, [text[: p + d], text[p + d :]]) != expected:
                wrong.append((p, d))
    assert not wrong, f"{len(wrong)} cut positions give other ids, e.g. {wrong[:3]}"


@pytest.mark.parametrize("run", [" ", "\n", " \n", "\u3000"])
def test_whitespace_run_longer_than_a_block(gpt2_tokenizer, run):
    text = "start" + run * 150_000 + "end" + run * 70_000 + "x" + run * 3
    pieces = [text[i : i + 1000] for i in range(0, len(text), 1000)]
    assert stream(gpt2_tokenizer, pieces) == gpt2_tokenizer.encode(text)


def test_overlapping_special_tokens(overlapping):
    assert overlapping.encode(DOUBLE) == [overlapping.special_id(DOUBLE)]
    assert overlapping.encode(EOT * 3) == [overlapping.special_id(DOUBLE), 50256]
    docs = read_fixture(SLICES["tinystories"]).split(EOT)
    rng = random.Random(7)
    text = "".join(d + EOT * rng.randint(1, 5) for d in docs)
    expected = overlapping.encode(text)
    assert expected.count(overlapping.special_id(DOUBLE)) > 200
    starts = [i for i in range(len(text)) if text.startswith(EOT, i)]
    for offset in (0, 3, len(EOT), len(EOT) + 5):
        chunks = cut(text, [s + offset for s in starts])
        assert stream(overlapping, chunks) == expected


# --- small blocks, generated text ---------------------------------------------------------


@HYPO
@given(TEXTS, st.data())
def test_random_cut_points(gpt2_tokenizer, text, data):
    points = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    chunks = cut(text, points)
    expected = gpt2_tokenizer.encode(text)
    assert stream(gpt2_tokenizer, chunks) == expected
    for block in (1, 5, 17):
        with small_blocks(block):
            assert stream(gpt2_tokenizer, chunks) == expected


@HYPO
@given(
    st.lists(st.sampled_from(["a", " ", "  ", "\n", EOT, "<|", "endoftext", "|>", "'ll", "'"])),
    st.data(),
)
def test_random_cuts_with_overlapping_specials(overlapping, parts, data):
    text = "".join(parts)
    points = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    chunks = cut(text, points)
    expected = overlapping.encode(text)
    for block in (1, 3, 13, 30):
        with small_blocks(block):
            assert stream(overlapping, chunks) == expected


@pytest.mark.parametrize(
    "text",
    [
        "\n\n0000000000000000",  # found by test_random_cut_points
        "ab \n\nHello there, friend",
        "x  \t\n  \n123456789012345678901234567890",
        "a\u3000\u3000\u3000bbbbbbbbbbbbbbbbbbbbbbbb",
    ],
)
def test_small_blocks_known_cases(gpt2_tokenizer, text):
    expected = gpt2_tokenizer.encode(text)
    for block in range(1, 20):
        with small_blocks(block):
            assert stream(gpt2_tokenizer, [text]) == expected, block
            assert stream(gpt2_tokenizer, iter(text)) == expected, block


def test_bytes_chunks_are_rejected(gpt2_tokenizer):
    with pytest.raises(TypeError, match="bytes"):
        list(gpt2_tokenizer.encode_iterable([b"hello"]))


def test_empty_input_and_empty_chunks(gpt2_tokenizer):
    assert stream(gpt2_tokenizer, []) == []
    assert stream(gpt2_tokenizer, ["", "", ""]) == []
    assert stream(gpt2_tokenizer, ["", "Hello", "", " world", ""]) == [15496, 995]


# --- laziness -----------------------------------------------------------------------------


def test_ids_come_out_before_the_iterable_is_exhausted(gpt2_tokenizer):
    lines = read_fixture(SLICES["tinystories"]).splitlines(keepends=True)
    served = []

    def chunks():
        for line in lines[:1000]:  # well over one 64K-character block
            served.append(line)
            yield line
        raise RuntimeError("the tokenizer read further than it needed to")

    it = gpt2_tokenizer.encode_iterable(chunks())
    first = list(itertools.islice(it, 100))
    assert first == gpt2_tokenizer.encode("".join(lines))[:100]
    # The ids so far are a prefix of the ids of what was served ...
    got = first + list(itertools.islice(it, 5000))
    assert got == gpt2_tokenizer.encode("".join(served))[: len(got)]
    # ... and the generator's error surfaces only once its chunks are needed.
    with pytest.raises(RuntimeError, match="further than it needed"):
        list(it)


def test_endless_iterable(gpt2_tokenizer):
    lines = slice_head("tinystories", 20_000).splitlines(keepends=True)
    ids = list(itertools.islice(gpt2_tokenizer.encode_iterable(itertools.cycle(lines)), 50_000))
    assert len(ids) == 50_000
    once = gpt2_tokenizer.encode("".join(lines))
    assert ids[: len(once)] == once


# --- bounded memory -------------------------------------------------------------------------


def streamed_traced(tok, chunks):
    """The first 1,000 ids of ``tok.encode_iterable(chunks)``, how many there are, the last
    1,000, and the peak memory traced meanwhile. Read in batches; only the count and the
    latest batch are kept."""
    tracemalloc.start()
    try:
        it = tok.encode_iterable(chunks)
        first = list(itertools.islice(it, 1000))
        count, last = len(first), first
        while batch := list(itertools.islice(it, 4096)):
            count += len(batch)
            last = (last + batch)[-1000:]
        return first, count, last, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


STREAM_BYTES = 10_000_000


@pytest.mark.slow
@pytest.mark.parametrize("path", ["python", "compiled"])
def test_memory_stays_bounded_while_streaming_10_mb(gpt2_tokenizer, monkeypatch, path):
    """Stream ~10 MB (a TinyStories slice's lines, repeated by a generator that never holds
    the whole text) and check traced peak memory, on the Python path (the compiled encoder
    turned off) and on the compiled one (loaded before: a stream loads it once the Python
    path has cost as much, and its tables are the tokenizer's, not the stream's).

    What encode_iterable may hold at once: one block of >= 64K characters plus the undecided
    tail, the pre-token strings of that block, and the ids of that block (8-byte pointers; the
    int objects themselves live in the pre-token cache). For this text that measured about
    0.6 MB (and about 1.1 MB for web text, 2 MB for Chinese, whose characters are wider and
    give more ids per character). The threshold, 3 MB, leaves headroom for other Python
    versions and allocators while staying far below the 10 MB of text and the ~20 MB a list of
    all 2.4M ids would take. The cache is warmed first: it is bounded separately (CACHE_LIMIT
    entries) and for a repeated text holds only that text's distinct pre-tokens.
    """
    text = read_fixture(SLICES["tinystories"])
    lines = text.splitlines(keepends=True)
    unit = gpt2_tokenizer.encode(text)
    # The repeats do not interact: the text starts with a letter and ends with "\n".
    assert gpt2_tokenizer.encode(text * 3) == unit * 3
    reps = STREAM_BYTES // len(text.encode()) + 1

    def chunks():
        for _ in range(reps):
            yield from lines

    if path == "python":
        monkeypatch.setenv(kernel_start.ENV, "python")
    else:
        monkeypatch.delenv(kernel_start.ENV, raising=False)
        gpt2_tokenizer.prepare_bulk()
        assert gpt2_tokenizer._encoder.compiled(1) is not None
    first, count, last, peak = streamed_traced(gpt2_tokenizer, chunks())

    assert count == reps * len(unit)
    assert first == unit[:1000]
    assert last == unit[-1000:]
    assert peak < 3_000_000, f"peak traced memory {peak:,} bytes while streaming 10 MB"


def test_a_file_of_one_long_line_is_read_in_blocks(gpt2_tokenizer, tmp_path):
    """A text file iterates by lines, and one line may be the whole file (minified code,
    base64): 16 MB without a line break took 470-580 MB. A file is read in blocks instead;
    the ids are those of the whole text."""
    words = slice_head("code", 4000).replace("\n", ";").replace("\r", ";")
    text = words * (4_000_000 // len(words) + 1)
    path = tmp_path / "one_line.js"
    path.write_text(text, encoding="utf-8", newline="")
    assert "\n" not in text and len(text) > 4_000_000
    expected_count = len(gpt2_tokenizer.encode(text))
    expected_head = gpt2_tokenizer.encode(text[:200_000])[:1000]
    with open(path, encoding="utf-8", newline="") as f:
        tracemalloc.start()
        try:
            it = gpt2_tokenizer.encode_iterable(f)
            first = list(itertools.islice(it, 1000))
            count = len(first) + sum(1 for _ in it)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert first == expected_head and count == expected_count
    assert peak < 3_000_000, f"peak traced memory {peak:,} bytes for a 4 MB line"


@pytest.mark.parametrize("pattern", ["o200k", LLAMA3_PATTERN, QWEN2_PATTERN])
def test_whitespace_run_waits_for_its_line_break(pattern):
    # A tokenizer whose one token is the whole pre-token "\n    \n": o200k's, Llama 3's and
    # Qwen2's `\s*[\r\n]+` split "\n    " as "\n" + "    " but, once the line break comes,
    # take "\n    \n" whole, so "\n" must not be encoded before the rest of the run is in.
    vocab = {i: bytes([i]) for i in range(256)}
    merges, token = [], b"\n"
    for nxt in (b" ", b" ", b" ", b" ", b"\n"):
        merges.append((token, nxt))
        token += nxt
        vocab[len(vocab)] = token
    tok = Tokenizer(vocab, merges, pattern=pattern)
    assert tok.cut_rules.lookahead is not None  # the stream decides by its rules
    text = "a\n    \nb"
    assert tok.encode(text) == [ord("a"), len(vocab) - 1, ord("b")]
    with small_blocks(1):
        for k in range(1, len(text)):
            assert stream(tok, iter([text[:k], text[k:]])) == tok.encode(text), k


class _LinesForbidden:
    """A text file object that is no io.TextIOBase (as tempfile's wrappers and codecs'
    StreamReaderWriter are): it serves ``read`` and counts the calls; iterating it fails."""

    def __init__(self, text):
        self.text, self.at, self.reads = text, 0, 0

    def read(self, size=-1):
        self.reads += 1
        size = len(self.text) - self.at if size is None or size < 0 else size
        part = self.text[self.at : self.at + size]
        self.at += len(part)
        return part

    def __iter__(self):
        raise AssertionError("iterated by lines: one line may be the whole file")


def test_file_objects_that_are_not_text_io_are_read_in_blocks(gpt2_tokenizer, tmp_path):
    """tempfile.NamedTemporaryFile and SpooledTemporaryFile in text mode and codecs.open are
    no io.TextIOBase: read by lines, a file of one long line was held whole (1.2 GB for
    37 MB) and codecs' readline made it quadratic. Anything whose ``read`` gives text is
    read in blocks; the ids are the whole text's."""
    text = slice_head("code", 20_000).replace("\n", ";") * 8
    expected = gpt2_tokenizer.encode(text)
    source = _LinesForbidden(text)
    with small_blocks(4096):
        assert stream(gpt2_tokenizer, source) == expected
    assert source.reads > len(text) // 4096
    path = tmp_path / "one_line.txt"
    path.write_text(text, encoding="utf-8", newline="")
    with codecs.open(str(path), encoding="utf-8") as f:
        assert stream(gpt2_tokenizer, f) == expected
    spooled = partial(tempfile.SpooledTemporaryFile, max_size=1)  # on disk past 1 byte
    for make in (tempfile.NamedTemporaryFile, spooled):
        with make(mode="w+", encoding="utf-8", newline="", dir=tmp_path) as f:
            f.write(text)
            f.seek(0)
            assert stream(gpt2_tokenizer, f) == expected


def test_a_binary_file_is_refused_saying_so(gpt2_tokenizer, tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"hello world\n")
    with open(path, "rb") as f, pytest.raises(TypeError, match="bytes.*text mode"):
        list(gpt2_tokenizer.encode_iterable(f))


def test_an_iterable_whose_read_takes_no_size_is_iterated(gpt2_tokenizer):
    """The review: an iterable of text chunks that also has a read() of its own (no size, as
    some record readers have) was called as a file and raised "read() takes 1 positional
    argument but 2 were given"; it is iterated, as before."""

    class Records:
        def __init__(self, chunks: list[str]) -> None:
            self.chunks = chunks

        def read(self) -> str:
            return "".join(self.chunks)

        def __iter__(self):
            return iter(self.chunks)

    chunks = ["Once upon a time, ", "there was a fox.\n", "It said: 'hello'."]
    got = list(gpt2_tokenizer.encode_iterable(Records(chunks)))
    assert got == gpt2_tokenizer.encode("".join(chunks))


@pytest.mark.parametrize("kind", ["one chunk", "one line of many"])
def test_a_chunk_longer_than_a_block_is_encoded_a_block_at_a_time(gpt2_tokenizer, kind):
    """A caller's chunk may be a whole file's text (a generator of lines over a file without
    line breaks). Encoded as one buffer, its ids all existed before the first was yielded:
    ~25 bytes a character, 5.2 GB for 200 MB of text. Cut into blocks, the stream holds what
    it holds for any chunks; the ids are those of the whole text."""
    words = slice_head("code", 4000).replace("\n", ";").replace("\r", ";")
    line = words * (4_000_000 // len(words) + 1)
    assert "\n" not in line and len(line) > 4_000_000
    chunks = [line] if kind == "one chunk" else ["# header\n", line + "\n", "tail\n"]
    text = "".join(chunks)
    expected = gpt2_tokenizer.encode(text)
    # The text itself is the caller's; traced memory counts only what the stream adds.
    first, count, last, peak = streamed_traced(gpt2_tokenizer, iter(chunks))
    assert count == len(expected)
    assert first == expected[:1000] and last == expected[-1000:]
    assert peak < 3_000_000, f"peak traced memory {peak:,} bytes for a 4 MB chunk"


@pytest.mark.parametrize("cut", [b"\xff", b"\xe4\xb8x"])
def test_a_file_that_is_not_utf8_is_named_with_the_byte(gpt2_tokenizer, tmp_path, cut):
    """The streams audit: the codec's "position 54467" is in the block it was decoding (the
    bad byte was at 120,003) and named no file."""
    head = ("héllo wörld " * 10_000).encode("utf-8")  # past the first block, and several reads
    path = tmp_path / "bad.txt"
    path.write_bytes(head + cut + b" more text")
    with open(path, encoding="utf-8", newline="") as f:
        with pytest.raises(UnicodeDecodeError, match=rf", at byte {len(head):,} of .*bad\.txt$"):
            list(gpt2_tokenizer.encode_iterable(f))
