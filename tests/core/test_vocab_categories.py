"""Token categories (``explain.categories``) against an independent, slow classifier written
per character with ``unicodedata``: the general category for the kind, the character's Unicode
name for its script, the White_Space list from the standard's PropList.txt."""

from __future__ import annotations

import unicodedata

import pytest
import regex
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from test_formats_tiktoken import _cached

from bpe_studio.core.explain import (
    scripts,
)
from bpe_studio.core.explain.categories import CATEGORIES, classify

# PropList.txt, White_Space.
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
# The first word(s) of a letter's Unicode name, for the scripts the test can tell that way.
NAME_SCRIPTS = {
    "LATIN": "Latin",
    "CYRILLIC": "Cyrillic",
    "GREEK": "Greek",
    "ARABIC": "Arabic",
    "HEBREW": "Hebrew",
    "HANGUL": "Hangul",
    "HIRAGANA": "Hiragana",
    "KATAKANA": "Katakana",
    "CJK UNIFIED IDEOGRAPH": "Han",
    "DEVANAGARI": "Devanagari",
    "THAI": "Thai",
    "GEORGIAN": "Georgian",
    "ARMENIAN": "Armenian",
    "BENGALI": "Bengali",
    "TAMIL": "Tamil",
}


# What joins and dresses an emoji's symbols (emoji-sequences.txt, emoji-zwj-sequences.txt):
# variation selectors 15 and 16, the zero-width joiner, the keycap mark, the tag characters.
EMOJI_PARTS = frozenset(
    "\ufe0e\ufe0f\u200d\u20e3" + "".join(chr(c) for c in range(0xE0020, 0xE0080))
)


class Unknown(Exception):
    """The slow classifier cannot tell this token's script from names."""


# Letters whose names say a script but that Unicode gives several (Script=Common).
SHARED_NAMES = ("KATAKANA-HIRAGANA", "ARABIC TATWEEL")


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    if any(shared in name for shared in SHARED_NAMES):
        raise Unknown(ch)
    for prefix, script in NAME_SCRIPTS.items():
        if name.startswith(prefix + " ") or name.startswith(prefix + "-"):
            return script
    raise Unknown(ch)


def _kind(ch: str) -> str:
    if ch in WHITE_SPACE:
        return "whitespace"
    cat = unicodedata.category(ch)
    if cat[0] == "N":
        return "digits"
    if cat[0] in "PS":
        return "punctuation"
    if cat[0] in "LM":
        return "letters"
    return "other"


def slow_category(token: bytes) -> tuple[str, bool]:
    """The category and leading-space flag, character by character."""
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return "partial", token[:1] == b" " and len(token) > 1
    if not text:
        return "other", False
    lead = text[0] == " " and len(text) > 1 and not all(c in WHITE_SPACE for c in text[1:])
    body = text[1:] if lead else text
    if _kind(body[0]) == "punctuation" and all(
        _kind(c) == "punctuation" or c in EMOJI_PARTS for c in body
    ):
        return "punctuation", lead  # a symbol and what joins and dresses it: emoji
    kinds = {_kind(c) for c in body}
    if len(kinds) > 1:
        return "mixed", lead
    (kind,) = kinds
    if kind != "letters":
        return kind, lead
    letter_scripts = {_script(c) for c in body if unicodedata.category(c)[0] == "L"}
    if len(letter_scripts) != 1 or any(unicodedata.category(c)[0] == "M" for c in body):
        raise Unknown(body)  # marks and several scripts: left to the fast classifier alone
    return letter_scripts.pop(), lead


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_categories_agree_with_a_slow_classifier(name):
    if name == "gpt2":
        enc_tokens = [t for t in tiktoken_gpt2_bytes()]
    else:
        enc = _cached(name).tiktoken
        enc_tokens = [enc.decode_single_token_bytes(i) for i in range(enc.n_vocab) if _ok(enc, i)]
    # A sample: every 5th token, and every token that is not ASCII.
    sample = [t for i, t in enumerate(enc_tokens) if i % 5 == 0 or not t.isascii()]
    codes, lead = classify(sample)
    checked = 0
    for token, code, flag in zip(sample, codes.tolist(), lead.tolist()):
        try:
            expected = slow_category(token)
        except Unknown:
            continue
        assert (CATEGORIES[code], flag) == expected, token
        checked += 1
    assert checked > 0.8 * len(sample)


def _ok(enc: tiktoken.Encoding, i: int) -> bool:
    try:
        enc.decode_single_token_bytes(i)
    except KeyError:
        return False
    return i not in enc._special_tokens.values()


def tiktoken_gpt2_bytes() -> list[bytes]:
    from bpe_studio.core.formats.presets import preset_data

    return [t for i, t in sorted(preset_data("gpt2").vocab.items()) if t != b"<|endoftext|>"]


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cs", "Cn", "Co")), min_size=1, max_size=6))
def test_any_text_agrees_with_the_slow_classifier(text):
    token = text.encode("utf-8")
    try:
        expected = slow_category(token)
    except Unknown:
        return
    codes, lead = classify([token])
    assert (CATEGORIES[codes[0]], bool(lead[0])) == expected


@pytest.mark.parametrize(
    ("token", "category", "lead"),
    [
        (b" ", "whitespace", False),
        (b" \n", "whitespace", False),
        (b"  hello", "mixed", True),
        (b"", "other", False),
        (b"\xe4", "partial", False),
        (b" \xe4\xb8", "partial", True),
        (b"\x1c", "other", False),  # str.isspace says yes; not White_Space
        (" ー".encode(), "Common", True),
        ("コード".encode(), "Katakana", False),
        ("の中".encode(), "mixed", False),
        ("é".encode(), "Latin", False),
        ("e\u0301".encode(), "Latin", False),  # a combining accent goes with its letter
        (b" 2019", "digits", True),
        ("😀".encode(), "punctuation", False),
        # An audit: emoji with a variation selector or joined by ZWJ were "mixed".
        ("❤\ufe0f".encode(), "punctuation", False),
        (" ❤\ufe0f".encode(), "punctuation", True),
        ("👍🏽".encode(), "punctuation", False),
        ("👨\u200d👩\u200d👧".encode(), "punctuation", False),
        ("🏳\ufe0f\u200d🌈".encode(), "punctuation", False),
        (
            "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f".encode(),
            "punctuation",
            False,
        ),
        ("#\ufe0f\u20e3".encode(), "punctuation", False),
        ("\ufe0f❤".encode(), "mixed", False),  # a selector alone first dresses nothing
        ("a\u200d".encode(), "mixed", False),
    ],
)
def test_edge_cases(token, category, lead):
    codes, flags = classify([token])
    assert (CATEGORIES[codes[0]], bool(flags[0])) == (category, lead)


def test_scripts_know_the_common_ones():
    for name in ("Latin", "Han", "Cyrillic", "Arabic", "Hangul", "Canadian Aboriginal"):
        assert name in scripts.SCRIPTS
    assert len(set(CATEGORIES)) == len(CATEGORIES) <= 256  # codes are uint8


def test_every_letter_of_a_script_the_regex_module_knows_gets_a_script():
    # Jurchen and Seal letters were once "Unknown": the list lacked scripts regex knew.
    letters = regex.findall(
        r"[\p{L}--\p{Script=Zzzz}]", "".join(map(chr, range(0x110000))), flags=regex.V1
    )
    found = scripts.scripts_of(letters)
    assert [c for c in letters if found[c] == scripts.UNKNOWN] == []
    assert found["\U00018e00"] == "Jurchen" and found["\U0003d000"] == "Seal"


def test_scripts_left_out_of_the_list_are_added_from_the_regex_modules_table():
    newer = scripts._newer_names([n for n in scripts._LONG_NAMES if n not in ("Yezidi", "Seal")])
    assert sorted(newer) == ["Seal", "Yezidi"]
