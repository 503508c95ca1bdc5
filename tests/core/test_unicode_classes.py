"""o200k's pattern asks a letter's case (a word's leading capitals, then its lower-case rest),
and splits every character as tiktoken and ``tokenizers`` (Oniguruma) do, on every path.

Found by the fuzzing campaign: the installed ``regex`` reads U+0295 ʕ as Lo (Unicode 16), the
reference engines as Ll, so "ʕAbc" was one pre-token here and two there: a tokenizer trained
with pattern="o200k", saved and read back by tiktoken or ``tokenizers``, gave other ids.
The oracle is Oniguruma through ``tokenizers``' Split pre-tokenizer, over every code point
``unicodedata`` assigns (``names.NOT_CAPITALS`` holds the characters read otherwise).
"""

from __future__ import annotations

import pytest
import tokenizers
from text_strategies import _classes_disagree_cached

from bpe_studio.core.pretokenization import re_split
from bpe_studio.core.pretokenization.names import NOT_CAPITALS, PATTERNS
from bpe_studio.core.pretokenization.pretokenizer import pretokenizer
from bpe_studio.core.pretokenization.scanner import compiled_scanner

# Each character between capitals and lower-case letters, and beside spaces and digits.
CONTEXTS = ("{c}Ab", "A{c}Bc", "a{c}B", "{c}{c}a", " {c}AB", "1{c}", "'{c}s")


def oniguruma(text: str) -> list[str]:
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(PATTERNS["o200k"]), "isolated")
    return [piece for piece, _ in split.pre_tokenize_str(text)]


def paths() -> dict[str, object]:
    found = {
        "regex": pretokenizer("o200k").findall,
        "re": re_split.findall_o200k,
    }
    scanner = compiled_scanner("o200k")
    if scanner is not None:
        found["compiled"] = scanner.findall
    return found


@pytest.mark.parametrize("text", ["ʕAbc", "AʕBc", "ʕHello ʕʕ aʕb ʕAB", "Xʕ yʕZz"])
def test_u0295_splits_as_tiktoken_and_tokenizers_split_it(text):
    assert NOT_CAPITALS == "\u0295"
    expected = oniguruma(text)
    for name, findall in paths().items():
        assert findall(text) == expected, name


def test_every_assigned_character_splits_as_oniguruma_splits_it():
    disagree = set(_classes_disagree_cached())  # unassigned in one Unicode version: not ours
    chars = [
        chr(c)
        for c in range(0x20, 0x110000)
        if not 0xD800 <= c <= 0xDFFF and chr(c) not in disagree and chr(c).isprintable()
    ]
    for context in CONTEXTS:
        text = "\n".join(context.format(c=c) for c in chars)
        expected = oniguruma(text)
        for name, findall in paths().items():
            got = findall(text)
            if got != expected:
                first = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
                pytest.fail(
                    f"{name}, {context!r}: {got[first]!r} where Oniguruma has {expected[first]!r}"
                )
