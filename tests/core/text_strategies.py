"""Hypothesis strategies for text that stresses a GPT-2-style tokenizer."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EOT = "<|endoftext|>"

# Contractions (the pattern is case-sensitive), every kind of whitespace run, digits of several
# scripts, emoji with modifiers and joiners, combining marks, CJK and other scripts, and the
# special token itself, alone, doubled, and in pieces.
PIECES = [
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'", "''", "’s",
    " ", "  ", "   ", "\n", "\n\n", " \n", "\n ", "\t", " \t\n ", "\r\n", "\r",
    "\u00a0", "\u3000", "\u2009", "\u200b", "\x0b", "\x0c", "\x85",
    "0", "123", " 42", "١٢٣", "Ⅻ", "½",
    "😀", "👍🏽", "👩‍👩‍👧", "🇫🇷", "e\u0301", "a\u0308\u0323", "\u0301",
    "中文", "日本語", "한국어", "Ελληνικά", "русский", "עברית", "العربية",
    "hello", " world", "Hello", "HTTP", "don't", "we'll", "x=1;", "<|", "|>", "endoftext",
    EOT, EOT + EOT, " " + EOT, EOT + " ",
]  # fmt: skip

WIDE_CHARS = st.characters(exclude_categories=("Cs",))  # anything encodable as UTF-8
TEXTS = st.lists(
    st.one_of(st.text(WIDE_CHARS, max_size=8), st.sampled_from(PIECES)), max_size=30
).map("".join)

# No example database: the tests must not write into the working tree.
HYPO = settings(
    deadline=None,
    max_examples=200,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
