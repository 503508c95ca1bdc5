"""cl100k's and o200k's pre-tokenization on ``re`` (``re_split``) against the ``regex``
module running the patterns exactly as tiktoken publishes them: every fixture corpus, texts
with characters above U+FFFF at every density, and generated text from all of Unicode (the
fast pattern takes its classes from ``regex``).
"""

from __future__ import annotations

from collections import Counter

import pytest
import regex
from core_helpers import FIXTURES, read_fixture
from hypothesis import given
from hypothesis import strategies as st
from reference_encoder import published
from text_strategies import HYPO, PIECES

from bpe_studio.core.corpus.counting import count_text
from bpe_studio.core.encode.tokenizer import Tokenizer
from bpe_studio.core.pretokenization import re_split
from bpe_studio.core.pretokenization.pretokenizer import pretokenizer

NAMES = {"cl100k": "cl100k_base", "o200k": "o200k_base"}
FAST = {"cl100k": re_split.findall_cl100k, "o200k": re_split.findall_o200k}
FIXTURE_TEXTS = sorted(p.name for p in FIXTURES.glob("*.txt"))

# Characters that case-fold onto a contraction's letters, or look like them.
ODD = ["'ſ", "'K", "'İ", "'ı", "'Ｓ", "'ß", "'ﬅ", "\x1c", "\x1f", "\x85", "\u2028", "/", "\r/"]
ALL_CHARS = st.characters(exclude_categories=("Cs", "Cn"))  # assigned only
TEXTS = st.lists(
    st.one_of(st.text(ALL_CHARS, max_size=6), st.sampled_from(PIECES + ODD)), max_size=40
).map("".join)


def published_regex(name: str) -> regex.Pattern[str]:
    return regex.compile(published(NAMES[name])["pat_str"])


@pytest.fixture(autouse=True)
def every_text_fast(monkeypatch):
    """Every non-ASCII text, however short, gets a pattern built for its alphabet (or one
    kept that covers it) instead of going to `regex`."""
    monkeypatch.setattr(re_split, "_ALPHABET_FAST_MIN", 0)
    monkeypatch.setattr(re_split, "_kept", {})
    monkeypatch.setattr(re_split, "_plane", {})


@pytest.mark.parametrize("name", FAST)
@pytest.mark.parametrize("fixture", FIXTURE_TEXTS)
def test_fixture_corpora_split_as_published(name, fixture):
    text = read_fixture(fixture)
    expected = published_regex(name).findall(text)
    assert FAST[name](text) == expected
    # Non-ASCII text with a few astral characters: the regex fallback around each.
    sprinkled = "\U0001f600".join(text[i : i + 20_000] for i in range(0, len(text), 20_000))
    assert FAST[name](sprinkled) == published_regex(name).findall(sprinkled)


@pytest.mark.parametrize("name", FAST)
@pytest.mark.parametrize("every", [1, 7, 500, 5_000])
def test_astral_characters_at_any_density(name, every):
    text = read_fixture("mixed_web_slice.txt")[:60_000]
    pieces = [text[i : i + every] for i in range(0, len(text), every)]
    for joiner in ("\U0001d400", "\U00020000", "\n\U0001f600\n", "x\n\U0001f600"):
        mixed = joiner.join(pieces)
        assert FAST[name](mixed) == published_regex(name).findall(mixed), joiner


@pytest.mark.parametrize("name", FAST)
def test_ascii_texts_take_the_ascii_pattern_and_agree(name):
    text = "".join(map(chr, range(128))) * 3 + "DON'T don'T We'LL HTTPServer 12345 a/\r\n/b"
    assert FAST[name](text) == published_regex(name).findall(text)


@pytest.mark.parametrize("name", FAST)
def test_contractions_in_every_case_and_fold(name):
    """Each contraction, in every mix of cases and with the characters that fold onto its
    letters, followed by a letter (where the contraction alternative decides the split)."""
    forms = ["s", "t", "re", "ve", "m", "ll", "d"]
    variants = {"s": "sSſ", "k": "kKK", "i": "iIİı"}
    words = []
    for form in forms:
        cases = [""]
        for ch in form:
            cases = [c + v for c in cases for v in variants.get(ch, ch + ch.upper())]
        words += [f"'{c}x" for c in cases] + [f"a'{c}é" for c in cases]
    text = " ".join(words) + "\n" + "".join(words)
    assert FAST[name](text) == published_regex(name).findall(text)
    ascii_text = "".join(w for w in words if w.isascii())
    assert FAST[name](ascii_text) == published_regex(name).findall(ascii_text)


@HYPO
@given(text=TEXTS)
def test_generated_text_cl100k(text):
    assert re_split.findall_cl100k(text) == published_regex("cl100k").findall(text)


@HYPO
@given(text=TEXTS)
def test_generated_text_o200k(text):
    assert re_split.findall_o200k(text) == published_regex("o200k").findall(text)


def test_tokenizers_use_the_fast_functions_for_the_named_patterns_only():
    vocab = {i: bytes([i]) for i in range(256)}
    for name, fast in FAST.items():
        assert Tokenizer(vocab, [], pattern=name)._findall is fast
    assert Tokenizer(vocab, [], pattern="gpt2")._findall is re_split.findall_gpt2
    custom = r"\w+|\W"
    assert Tokenizer(vocab, [], pattern=custom)._findall == pretokenizer(custom).findall


def _regex_counts(name: str, text: str) -> Counter[bytes]:
    """The slow reference: pre-tokens counted with the ``regex`` module and the published
    pattern, special tokens split out by plain string search."""
    counts: Counter[bytes] = Counter()
    for part in text.split("<|endoftext|>"):
        counts.update(p.encode("utf-8") for p in published_regex(name).findall(part))
    return counts


@pytest.mark.parametrize("name", FAST)
def test_pretokenizer_findall_takes_the_fast_path(name, monkeypatch):
    """Training counts through ``pretokenizer(name).findall``: for cl100k and o200k that is
    the ``re`` pattern, so a ``regex`` pattern that is never consulted changes nothing."""
    text = read_fixture("english_books_slice.txt")[:50_000]
    calls = []
    monkeypatch.setattr(re_split, "_findall", lambda *a: calls.append(a) or ["x"])
    assert pretokenizer(name).findall(text) == ["x"]
    assert calls and calls[0][0] == name


@pytest.mark.parametrize("name", FAST)
@pytest.mark.parametrize("fixture", FIXTURE_TEXTS)
def test_training_counts_equal_the_regex_modules(name, fixture):
    text = read_fixture(fixture)
    # A special token in the middle, as corpora carry them between documents.
    text = text[: len(text) // 2] + "<|endoftext|>" + text[len(text) // 2 :]
    assert count_text(text, ["<|endoftext|>"], pattern=name) == _regex_counts(name, text)
    assert pretokenizer(name).findall(text) == published_regex(name).findall(text)


@HYPO
@given(text=TEXTS)
def test_training_counts_on_generated_text(text):
    for name in FAST:
        assert count_text(text, ["<|endoftext|>"], pattern=name) == _regex_counts(name, text)


@pytest.mark.parametrize("name", FAST)
def test_kept_pattern_serves_texts_it_covers_and_grows(name, monkeypatch):
    """A pattern is built for a text's own alphabet and kept; a text whose characters it
    covers reuses it, another one gets a pattern for both alphabets; a short text it does
    not cover goes to `regex`; each split as published."""
    monkeypatch.setattr(re_split, "_ALPHABET_FAST_MIN", 1000)
    first = "Grüße, naïve café: 東京 2024 年 I'LL GO\n" * 40
    covered = "café 東京 Grüße'S"
    other = "Ελληνικά ΚΕΊΜΕΝΟ 'Σ ٣٤٥ \U0001f600 x\u2028y\n" * 40
    for text in (first, covered, other, covered, first):
        assert FAST[name](text) == published_regex(name).findall(text)
    chars, _ = re_split._kept[name]
    assert set("üï東ΕΚ٣\U0001f600\u2028") <= chars
    assert "ж" not in chars
    assert re_split._covering(name, frozenset("ж"), build=False) is None
    short = "жук 'Ж"
    assert FAST[name](short) == published_regex(name).findall(short)
    assert "ж" not in re_split._kept[name][0]


@pytest.mark.parametrize("name", FAST)
def test_splitter_serves_every_stretch_of_its_text(name):
    text = read_fixture("mixed_web_slice.txt")[:50_000] + "\U0001f600 ΑΩ"
    split = re_split.splitter(name, text)
    expected = published_regex(name)
    for a, b in [(0, len(text)), (7, 1234), (len(text) - 300, len(text)), (100, 100)]:
        assert split(text[a:b]) == expected.findall(text[a:b])
    assert re_split.splitter("gpt2", text) is None


@pytest.mark.parametrize("name", FAST)
def test_lone_surrogates_split_as_regex_splits_them(name):
    text = "ab\ud800cd \udfff\n x\ud83d\ude00 é" * 3
    assert FAST[name](text) == published_regex(name).findall(text)


@pytest.mark.parametrize("name", FAST)
def test_the_bmp_pattern_then_an_astral_text(name):
    re_split.prepare(name)
    text = read_fixture("chinese_slice.txt")[:20_000] + "\U0001d400abc \U00020000"
    assert FAST[name](text) == published_regex(name).findall(text)


def test_prepared_o200k_serves_texts_without_marks_with_the_faster_form_and_marks_too():
    re_split.prepare("o200k")
    marked = read_fixture("chinese_slice.txt")[:20_000] + " na\u0308ive (\u0301A 1\u0301A"
    plain = read_fixture("chinese_slice.txt")[:20_000] + " naïve café"
    kept, plane = re_split._kept["o200k"], re_split._plane["o200k"]
    assert re_split._covering("o200k", re_split._non_ascii(plain), False) is kept[1]
    assert re_split._covering("o200k", re_split._non_ascii(marked), False) is plane[1]
    assert "\u0301" in plane[0] and "\u0301" not in kept[0]
    for text in (plain, marked, plain):
        assert FAST["o200k"](text) == published_regex("o200k").findall(text)


# Words where o200k's two word forms and its optional first character meet: characters in
# both of its letter classes (Lm, Lo: ª º ˆ 東), titlecase (ǅ), capitals runs before and
# after lower case, a first character before a word, and contractions after each.
O200K_WORDS = [
    "ABCdef", "ABC", "abc", "Abc", "aBC", "ºA", "Aº", "ªb", "Bª", "ˆˆA", "Aˆ", "東京A", "A東京",
    "東A京b", "ǅa", "aǅ", "ǅǅ", "(hello", "((Hello", "(ABC", "-東", "'S", "A'S", "ª'll",
    "東'RE", "x'd", "1A", "A1", " ºº", "\tAb",
]  # fmt: skip
# A mark opening a match (after a digit, at the start) may be the optional first character or
# start a word form: "\u0301A" is "\u0301", "A" as published.
MARKS = ["a\u0301", "\u0301A", "\u0301\u0301b", "(\u0301a", " \u0301", "A\u0301b", "東\u0301",
         "1\u0301A", "2\u0301AB", "3\u0301ºA"]  # fmt: skip


@pytest.mark.parametrize("marks", [False, True])
def test_o200k_word_forms_with_and_without_marks(marks):
    """Without marks in a text's alphabet o200k's pattern takes its first character
    possessively and shares it between the word forms; with marks it keeps them apart
    (see ``re_split._o200k``). Both split as published."""
    words = (MARKS if marks else []) + O200K_WORDS
    text = " ".join(words) + "\n" + "".join(words) + "\n" + "-".join(words)
    pattern = re_split.splitter("o200k", text)
    assert pattern is not None
    assert ("?+" in pattern.__self__.pattern) is not marks
    assert pattern(text) == published_regex("o200k").findall(text)
    ascii_text = "".join(ch for ch in text if ch.isascii())
    assert re_split.findall_o200k(ascii_text) == published_regex("o200k").findall(ascii_text)
