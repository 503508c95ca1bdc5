"""Hypothesis strategies for text that stresses a GPT-2-style tokenizer.

Generated text holds assigned characters only (docs/unicode.md): an unassigned code point may
be a letter to the installed ``regex`` (newer Unicode data) and not to tiktoken's, so the two
tokenizers could both be right and still disagree. Python's ``unicodedata`` (the oldest
Unicode version of the three) decides what is assigned; characters whose letter/number class
differs between ``regex`` and ``unicodedata`` are left out too.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import unicodedata
from pathlib import Path

import regex
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


def _classes_disagree() -> list[str]:
    """Assigned characters (to ``unicodedata``) that ``regex`` classes otherwise: as a letter
    or number when ``unicodedata`` does not, or the other way round, or as unassigned."""
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(chars)
    letters = set(regex.findall(r"\p{L}", text))
    numbers = set(regex.findall(r"\p{N}", text))
    unassigned = set(regex.findall(r"\p{Cn}", text))
    category = unicodedata.category
    return [
        ch
        for ch in chars
        if (cat := category(ch)) != "Cn"
        and (
            ch in unassigned
            or (ch in letters) != (cat[0] == "L")
            or (ch in numbers) != (cat[0] == "N")
        )
    ]


def _classes_disagree_cached() -> list[str]:
    """``_classes_disagree()``, kept in the temp dir between runs: the scan of every code point
    takes about a second, which each xdist worker would spend collecting. The file is named for
    what decides its content (Python's Unicode data, ``regex``'s version and its Unicode
    data), so another version computes and keeps its own."""
    key = f"{unicodedata.unidata_version}-{regex.__version__}-{sys.version_info[:2]}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"bpe_studio_test_classes_disagree_{digest}.json"
    try:
        return list(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        pass
    found = _classes_disagree()
    # Written whole or not at all: another worker may read it meanwhile.
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        partial.write_text(json.dumps(found), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass
    return found


DISAGREE = _classes_disagree_cached()
# Assigned characters that UTF-8 can encode (no surrogates).
WIDE_CHARS = st.characters(exclude_categories=("Cs", "Cn"), exclude_characters=DISAGREE)
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
