"""Parallel pre-token counting gives exactly the counts of the whole text; training with
workers gives exactly the serial result; progress is reported in order up to the file size."""

from __future__ import annotations

from collections import Counter
from unittest import mock

import pytest
from core_helpers import EOT, SLICES, read_fixture, write_text
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe_studio.core.pretokenize as pretokenize
from bpe_studio.core import count_file, count_text, train_bpe
from bpe_studio.core.pretokenize import IN_PROCESS_LIMIT


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A >4 MB corpus: all slices, each repeated, documents kept in order."""
    parts = [read_fixture(name) for name in SLICES.values()]
    text = "".join(p * 3 for p in parts)
    assert len(text.encode()) > IN_PROCESS_LIMIT + 200_000
    path = write_text(tmp_path_factory.mktemp("big") / "big.txt", text)
    return path, text


@pytest.mark.parametrize("specials", [[EOT], [], [EOT, "\n\n"]])
def test_parallel_count_equals_count_of_whole_text(big, specials):
    path, text = big
    calls = []
    counts = count_file(path, specials, workers=2, progress=lambda d, t: calls.append((d, t)))
    assert len(calls) > 3, "the file should have been read in several chunks"
    assert counts == count_text(text, specials)


def test_progress_is_monotonic_and_ends_at_the_size(big):
    path, _ = big
    size = path.stat().st_size
    calls = []
    count_file(path, [EOT], workers=2, progress=lambda d, t: calls.append((d, t)))
    assert all(t == size for _, t in calls)
    done = [d for d, _ in calls]
    assert done == sorted(done)
    assert done[0] >= 0 and done[-1] == size
    started = [d for d in done if d > 0]
    assert started == sorted(set(started)), "each report after the start moves forward"


def test_progress_small_file(tmp_path):
    path = write_text(tmp_path / "s.txt", "small text\n" * 10)
    calls = []
    train_bpe(path, 270, progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1] == (path.stat().st_size, path.stat().st_size)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_train_workers_1_equals_workers_2(big):
    path, _ = big
    serial = train_bpe(path, 700, [EOT], workers=1)
    parallel = train_bpe(path, 700, [EOT], workers=2)
    assert parallel == serial
    assert len(serial[1]) == 700 - 257


def test_train_workers_without_special_tokens(big):
    path, _ = big
    assert train_bpe(path, 400, [], workers=2) == train_bpe(path, 400, [], workers=1)


# --- safe line-break cuts: the chunker must not cut where the pattern would not ------------
#
# Without special tokens the file is cut just after a line break. GPT-2's pattern keeps a run
# of whitespace together (minus its last character before a non-space), and \s includes
# non-ASCII spaces such as U+00A0 (no-break space, common in web text) and U+3000 (ideographic
# space, common in Chinese). A line break next to such a space is inside a whitespace run, so
# cutting after it changes the pre-tokens.


def whole_vs_parallel(tmp_path, lines):
    text = "\n".join(lines) + "\n"
    text *= 5_000_000 // len(text.encode()) + 1
    path = write_text(tmp_path / "c.txt", text)
    assert path.stat().st_size > IN_PROCESS_LIMIT
    return count_file(path, [], workers=2), count_text(text, [])


def test_cut_after_line_ending_in_a_no_break_space(tmp_path):
    # Like mixed_web.txt, where 152 lines end in U+00A0 followed by a line starting a word.
    lines = read_fixture(SLICES["mixed_web"]).replace(EOT, "").split("\n")
    lines = [ln.rstrip() + "\u00a0" for ln in lines if ln.strip()]
    parallel, whole = whole_vs_parallel(tmp_path, lines)
    assert parallel == whole


def test_cut_before_line_indented_with_ideographic_spaces(tmp_path):
    # Chinese paragraphs indented with two U+3000, as in chinese.txt (810 such lines).
    lines = read_fixture(SLICES["chinese"]).replace(EOT, "").split("\n")
    lines = ["\u3000\u3000" + ln for ln in lines if ln.strip()]
    parallel, whole = whole_vs_parallel(tmp_path, lines)
    assert parallel == whole


# --- chunk boundaries, exhaustively on small files -------------------------------------------
#
# Both the parallel counter and the parallel encoder cut files with chunk_boundaries. Here it
# is called with tiny chunk sizes (and tiny scan windows) so that generated texts of a few
# dozen characters get many cuts, and each cut is checked by what matters: counting or
# encoding chunk by chunk gives exactly the result for the whole text.

CUT_PIECES = st.sampled_from(
    ["a", "bc", " ", "  ", "\n", "\n\n", " \n", "\t", "\u00a0", "\u3000", "中", "😀", "1",
     ".", "'ll", "'", "\x1c", EOT, EOT + EOT, "<|", "|>"]
)  # fmt: skip


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("chunks") / "t.txt"


@pytest.fixture(scope="module")
def overlapping_gpt2(gpt2_tokenizer):
    from bpe_studio.core import Tokenizer

    return {
        (): Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges),
        (EOT,): gpt2_tokenizer,
        (EOT, EOT + EOT): Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges, [EOT, EOT + EOT]),
    }


@settings(deadline=None, max_examples=300, database=None)
@given(
    st.lists(CUT_PIECES, max_size=40).map("".join),
    st.integers(1, 40),
    st.sampled_from([2, 5, 16, 1 << 16]),
    st.sampled_from([(), (EOT,), (EOT, EOT + EOT)]),
)
def test_chunks_count_and_encode_like_the_whole(
    scratch, overlapping_gpt2, text, target, scan_step, specials
):
    write_text(scratch, text)
    data = text.encode()
    with mock.patch.object(pretokenize, "_SCAN_STEP", scan_step):
        bounds = pretokenize.chunk_boundaries(scratch, target, list(specials))
    assert bounds[0] == 0 and bounds[-1] == len(data)
    assert all(a < b for a, b in zip(bounds, bounds[1:])) or len(data) == 0
    chunks = [data[a:b].decode("utf-8") for a, b in zip(bounds, bounds[1:])]  # whole chars
    total = Counter()
    for chunk in chunks:
        total.update(count_text(chunk, list(specials)))
    assert total == count_text(text, list(specials))
    tok = overlapping_gpt2[specials]
    assert [i for c in chunks for i in tok.encode(c)] == tok.encode(text)


@pytest.mark.parametrize("specials", [[EOT], [], [EOT, "\n\n"]])
def test_in_process_count_goes_chunk_by_chunk_and_equals_the_whole(tmp_path, specials):
    """A file under IN_PROCESS_LIMIT is counted in this process, in pieces of about
    IN_PROCESS_CHUNK (short GIL-holding calls), with the counts of the whole text."""
    text = "".join(read_fixture(name) for name in SLICES.values())
    path = write_text(tmp_path / "mid.txt", text)
    size = path.stat().st_size
    assert pretokenize.IN_PROCESS_CHUNK * 3 < size <= IN_PROCESS_LIMIT
    calls = []
    counts = count_file(path, specials, workers=2, progress=lambda d, t: calls.append(d))
    assert counts == count_text(text, specials)
    assert len(calls) > 3 and calls == sorted(calls) and calls[-1] == size
