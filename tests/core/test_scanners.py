"""The compiled scanners against the ``regex`` module running the same patterns.

Every spelling of every pattern with a kernel (``scan_patterns.SPELLINGS``), as an Isolated
Split applies it, on: every string of up to three characters over an alphabet holding one
character of each combination of the classes the patterns test (and the characters they name
literally), every string of four over a smaller one (contractions after a letter, a space
before punctuation and a line break, ...), hypothesis-generated text (assigned characters
only, docs/unicode.md), the fixture slices and the shared corpora (skipped when absent). The
Sequences (DeepSeek-V3's three Splits, StarCoder's digits then ByteLevel) against
``tokenizers`` itself. The oracle is ``regex.findall``: never the code under test.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
import regex
from core_helpers import CS336_TEXTS, SLICES, full_corpus, read_fixture
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import HYPO, TEXTS

from bpe_studio.core.pretokenization.names import PATTERNS
from bpe_studio.core.pretokenization.scan_patterns import (
    DEEPSEEK_V3_PATTERNS,
    DIGIT_PATTERN,
    SPELLINGS,
    TOTAL,
    Kind,
    isolated,
)
from bpe_studio.core.pretokenization.scan_tables import CLASSES, build_table
from bpe_studio.core.pretokenization.scanner import (
    codepoints,
    compiled_scanner,
    compiled_steps,
)

pytest.importorskip("numba")

CASES = [(spelling, kind) for spelling, kind in SPELLINGS.items()]
IDS = [f"{kind.name.lower()}-{i}" for i, (_, kind) in enumerate(CASES)]
# Each kind's first spelling (the published one): the longest tests run these; every other
# spelling runs the rest, which would find where it reads differently.
PUBLISHED = sorted({kind: spelling for spelling, kind in reversed(CASES)}.items())


def _representatives() -> str:
    """One code point per distinct entry of the class table (the first of each, and the
    first above ASCII), found with ``regex`` over every code point, not with the table."""
    every = "".join(map(chr, range(0x110000)))
    seen: dict[tuple[bool, ...], list[str]] = {}
    # subtle: the membership key is computed from the classes' regexes themselves.
    compiled = [regex.compile(c) for c in CLASSES] + [
        regex.compile(f"(?i:{x})") for x in "sdmtlver"
    ]
    for ch in every[:0x3100] + every[0x4DF0:0x4E10] + every[0x9FA0:0x9FB0] + every[0x10000:0x10400]:
        key = tuple(bool(c.fullmatch(ch)) for c in compiled)
        found = seen.setdefault(key, [])
        if len(found) < 2 and (not found or (ord(found[0]) < 0x80) != (ord(ch) < 0x80)):
            found.append(ch)
    return "".join(ch for chars in seen.values() for ch in chars)


# Characters the patterns name literally or treat by range: line breaks, the space, the
# apostrophe, "/", ASCII punctuation and letters (DeepSeek), both ends of DeepSeek's CJK ranges
# and their neighbours, "ſ" (folds to s), a lone surrogate, a title-case letter, a modifier
# letter, combining marks, other digits, other spaces, a character in no class.
LITERAL = (
    "\n\r \t'/!-~`aZsSlLvVeErRdDmMtT0"
    "\u3040\u3041\u30ff\u3100\u4e00\u9fa5\u9fa6\u4dff"
    "\u017f\ud800\u01c5\u02b0\u0301\u0903\u0663\u2167\u00bd\u00a0\u3000\x85\x1c\u200d\U0001f600"
)
ALPHABET = "".join(dict.fromkeys(_representatives() + LITERAL))
# For strings of four: what the patterns' longest literal contexts need.
SMALL = "\n\r 'aZslLvE0\u4e00\u0301\u00a0!\u017f\ud800"


@functools.cache
def _split(pattern: str) -> regex.Pattern:
    # Compiled once: ``regex.compile``'s own cache lookup was most of the oracle's time.
    return regex.compile(isolated(PATTERNS.get(pattern, pattern)))


def _oracle(patterns: list[str], text: str) -> list[str]:
    """Each pattern in turn splits every piece, as a Sequence of Isolated Splits does."""
    pieces = [text] if text else []
    for p in patterns:
        step = _split(p)
        pieces = [q for piece in pieces for q in step.findall(piece)]
    return pieces


def _check_many(patterns: list[str], texts: list[str]) -> None:
    """Every text as its own stretch of one array, in one call, against the oracle."""
    scanner = compiled_steps(patterns)
    assert scanner is not None
    joined = "".join(texts)
    lens = np.fromiter(map(len, texts), np.int64, len(texts))
    stops = np.cumsum(lens)
    got = scanner.stretch_ends(codepoints(joined), stops - lens, stops).tolist()
    want, at = [], 0
    for text in texts:
        for piece in _oracle(patterns, text):
            at += len(piece)
            want.append(at)
    if got != want:
        # Find the first text that differs, for a readable failure.
        for text in texts:
            assert scanner.findall(text) == _oracle(patterns, text), (patterns, text)
    assert got == want


def test_table_is_regex_own():
    """The cached table is the one built from ``regex`` now, and its classes are right on
    characters checked by hand."""
    from bpe_studio.core.pretokenization.scan_tables import class_table

    table = class_table()
    assert np.array_equal(table, build_table())
    cls = {name: 1 << i for i, name in enumerate("L N S UP LO M P SY".split())}
    assert table[ord("a")] & cls["L"] and table[ord("a")] & cls["LO"]
    assert not table[ord("a")] & cls["UP"]
    assert table[0x0301] == cls["UP"] | cls["LO"] | cls["M"]
    assert table[0x1C] == 0  # a separator that str.isspace takes and regex's \s does not
    assert table[0x85] == cls["S"]
    assert table[0xD800] == 0
    assert (table[0x17F] >> 8) == 1 and (table[ord("S")] >> 8) == 1  # "ſ" and "S" fold to s


def test_kernel_table_is_the_table_padded_and_values_past_unicode_are_in_no_class():
    """The kernels index their table with a mask (no bounds check): it must be the class
    table padded with zeros to a power of two, so that a value no str holds (an array of
    another origin) stays in bounds and in no class, like a private-use character."""
    from bpe_studio.core.pretokenization.scan_tables import TABLE_SIZE, kernel_table

    table = kernel_table()
    assert len(table) == TABLE_SIZE and TABLE_SIZE & (TABLE_SIZE - 1) == 0
    assert np.array_equal(table[:0x110000], build_table())
    assert not table[0x110000:].any()
    text = "ab\ue000cd \ue000\ue000x 1\ue000"
    for name in ("gpt2", "cl100k", "o200k"):
        ends = list(itertools.accumulate(map(len, regex.findall(PATTERNS[name], text))))
        scanner = compiled_scanner(name)
        like = codepoints(text)
        for past in (0x110000, TABLE_SIZE - 1):
            points = np.where(like == 0xE000, past, like).astype(np.uint32)
            assert scanner.ends(points).tolist() == ends, (name, hex(past))


@pytest.mark.parametrize(("kind", "spelling"), PUBLISHED, ids=[k.name for k, _ in PUBLISHED])
def test_every_class_combination_up_to_three(kind, spelling):
    texts = ["".join(t) for n in (1, 2, 3) for t in itertools.product(ALPHABET, repeat=n)]
    _check_many([isolated(spelling)], texts)


@pytest.mark.parametrize(("spelling", "kind"), CASES, ids=IDS)
def test_every_string_of_four_over_the_literal_contexts(spelling, kind):
    texts = ["".join(t) for t in itertools.product(SMALL, repeat=4)]
    _check_many([isolated(spelling)], texts)


@pytest.mark.parametrize(("spelling", "kind"), CASES, ids=IDS)
def test_total_patterns_alone_and_others_only_wrapped(spelling, kind):
    scanner = compiled_scanner(spelling)
    if kind in TOTAL:
        assert scanner is not None and scanner.kinds == (kind,)
        text = "Hello  world's 12345\n\n  \u4e2d\u6587!!\n"
        assert scanner.findall(text) == regex.findall(spelling, text)
    else:
        # Alone, the regex path raises for the text it leaves out; a scanner would not.
        assert scanner is None
    assert compiled_scanner(isolated(spelling)).kinds == (kind,)


@pytest.mark.parametrize(("spelling", "kind"), CASES, ids=IDS)
@HYPO
@given(st.lists(st.one_of(TEXTS, st.text(st.sampled_from(ALPHABET), max_size=12)), max_size=8))
def test_generated_text(spelling, kind, texts):
    _check_many([isolated(spelling)], texts)


def _fixture_texts() -> list[str]:
    return [read_fixture(name) for name in [*SLICES.values(), *CS336_TEXTS]]


@pytest.mark.parametrize(("spelling", "kind"), CASES, ids=IDS)
def test_fixture_corpora(spelling, kind):
    for text in _fixture_texts():
        _check_many([isolated(spelling)], [text])


@pytest.mark.parametrize("name", ["english_books.txt", "chinese.txt", "code.txt", "mixed_web.txt"])
def test_shared_corpora(name):
    # A million characters of each: the regex, the oracle, is most of the time (at 3M
    # characters the four took 20 of the suite's CPU seconds).
    with open(full_corpus(name), encoding="utf-8") as f:
        text = f.read(1_000_000)
    for spelling in {PATTERNS["gpt2"], PATTERNS["cl100k"], PATTERNS["o200k"], *SPELLINGS}:
        _check_many([isolated(spelling)], [text])


SEQUENCES = {
    "deepseek_v3": [isolated(p) for p in DEEPSEEK_V3_PATTERNS],
    "starcoder": [isolated(DIGIT_PATTERN), isolated(PATTERNS["gpt2"])],
}


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_sequences_against_tokenizers(name):
    """The Sequences against Hugging Face's own pre-tokenizers, built as the models' files
    build them (``hf_shapes``)."""
    from hf_shapes import FAMILIES, hf_pretokens

    scanner = compiled_steps(SEQUENCES[name])
    assert scanner is not None and scanner.label == name
    normalizer, pre = FAMILIES[name]
    for text in _fixture_texts():
        # tokenizers' pieces are bytes shown as text: compare the texts they decode to
        # (replacement characters would only hide a mismatch, and there are none here).
        want = hf_pretokens(normalizer, pre, text)
        assert scanner.findall(text) == want, name


@pytest.mark.parametrize("name", list(SEQUENCES))
@HYPO
@given(st.lists(st.one_of(TEXTS, st.text(st.sampled_from(ALPHABET), max_size=12)), max_size=8))
def test_sequences_generated(name, texts):
    _check_many(SEQUENCES[name], texts)


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_sequences_short_strings(name):
    texts = ["".join(t) for n in (1, 2, 3) for t in itertools.product(ALPHABET, repeat=n)]
    _check_many(SEQUENCES[name], texts)


def test_ends_api():
    scanner = compiled_scanner("gpt2")
    points = codepoints("ab cd|ef gh")
    assert scanner.ends(points).tolist() == [2, 5, 6, 8, 11]
    assert scanner.ends(points, 6, 11).tolist() == [8, 11]
    assert scanner.ends(points, 3, 3).tolist() == []
    both = scanner.stretch_ends(points, np.array([0, 6]), np.array([5, 11]))
    assert both.tolist() == [2, 5, 8, 11]
    assert scanner.spans("ab cd") == [(0, 2), (2, 5)]
    # A writable array, another integer type: the same answer (converted, not recompiled).
    assert scanner.ends(np.array(points, dtype=np.int64)).tolist() == [2, 5, 6, 8, 11]
    with pytest.raises(IndexError):
        scanner.ends(points, 4, 99)
    with pytest.raises(IndexError):
        scanner.stretch_ends(points, np.array([3, 0]), np.array([5, 2]))


def test_scanner_pickles_by_patterns():
    import pickle

    for patterns in [["o200k"], SEQUENCES["deepseek_v3"]]:
        scanner = compiled_steps(patterns)
        again = pickle.loads(pickle.dumps(scanner))
        assert again.kinds == scanner.kinds and again.patterns == scanner.patterns


def test_names_labels_and_rules():
    assert compiled_scanner("cl100k_base").name == "cl100k"
    assert compiled_scanner("cl100k_base").cut_rules.name == "cl100k"
    llama = compiled_scanner(dict(PUBLISHED)[Kind.LLAMA3])
    assert llama.name is None and llama.label == "llama3"
    assert llama.cut_rules.name == "llama3"
    assert compiled_steps(SEQUENCES["deepseek_v3"]).cut_rules.name == "deepseek_v3"
    assert compiled_steps(SEQUENCES["starcoder"]).cut_rules.name == "starcoder"
    assert compiled_scanner(r"\w+|\W+") is None
    assert compiled_steps([]) is None
