"""readable_token: whitespace made visible, partial UTF-8 as hex, other text as itself."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import HYPO, WIDE_CHARS

from bpe_studio.core.text.display import plural, readable_token


@pytest.mark.parametrize("ch", [" ", "\n", "\t", "\r"])
def test_whitespace_is_visible(ch):
    shown = readable_token(ch.encode())
    assert shown and not shown.isspace() and ch not in shown
    # Each kind gets its own symbol.
    others = {readable_token(o.encode()) for o in " \n\t\r" if o != ch}
    assert shown not in others
    # Runs stay countable: n spaces show as n symbols.
    assert readable_token((ch * 3).encode()) == shown * 3


def test_word_with_leading_space_and_newline():
    shown = readable_token(b" the\n")
    assert "the" in shown and " " not in shown and "\n" not in shown
    assert shown == readable_token(b" ") + "the" + readable_token(b"\n")


@pytest.mark.parametrize("text", ["中文", "東京", "한국어", "café", "😀", "ñ", "Ω"])
def test_whole_characters_are_themselves(text):
    assert readable_token(text.encode()) == text


@pytest.mark.parametrize(
    ("token", "hex_bytes"),
    [
        ("中".encode()[:1], ["e4"]),
        ("中".encode()[:2], ["e4", "b8"]),
        ("中".encode()[1:], ["b8", "ad"]),
        ("😀".encode()[:3], ["f0", "9f", "98"]),
        (b"\xff", ["ff"]),
    ],
)
def test_partial_utf8_is_hex(token, hex_bytes):
    shown = readable_token(token)
    low = shown.lower()
    for h in hex_bytes:
        assert h in low
    assert "\ufffd" not in shown
    assert shown.isascii()


def test_mixed_whole_and_partial():
    token = "文".encode() + "中".encode()[:1]
    shown = readable_token(token)
    assert shown.startswith("文") and "e4" in shown.lower()
    token = b" a" + "é".encode()[:1]
    shown = readable_token(token)
    assert shown.startswith(readable_token(b" ") + "a") and "c3" in shown.lower()


def test_control_bytes_are_not_raw():
    for b in [0, 1, 0x1B, 0x7F]:
        shown = readable_token(bytes([b]))
        assert chr(b) not in shown and shown.isprintable()


@HYPO
@given(st.binary(max_size=12))
def test_any_bytes_give_printable_text(data):
    shown = readable_token(data)
    assert shown.isprintable()
    assert len(shown) >= (1 if data else 0)


@pytest.mark.parametrize(
    ("n", "noun", "expected"),
    [
        (0, "token", "0 tokens"),
        (1, "token", "1 token"),
        (2, "special token", "2 special tokens"),
        (50_257, "merge", "50,257 merges"),
    ],
)
def test_plural_counts_with_the_noun(n, noun, expected):
    assert plural(n, noun) == expected


def _one_character_at_a_time(token: bytes) -> str:
    """readable_token's rule written out independently: at each position the longest whole
    UTF-8 character (shown by its own rule), else the byte as hex."""
    shown, i = [], 0
    while i < len(token):
        for width in (4, 3, 2, 1):
            try:
                ch = token[i : i + width].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(ch) == 1:
                break
        else:
            shown.append(f"<{token[i]:02x}>")
            i += 1
            continue
        visible = {" ": "␣", "\n": "↵", "\t": "⇥"}
        if ch in visible:
            shown.append(visible[ch])
        elif not ch.isprintable() or ch in "\u00a0\u200b\ufeff":
            shown.append(f"<{ord(ch):02x}>" if ord(ch) < 0x80 else f"<U+{ord(ch):04X}>")
        else:
            shown.append(ch)
        i += width
    return "".join(shown)


WHOLE = st.text(WIDE_CHARS | st.sampled_from(" \n\t\r\u00a0\u200b\ufeff"), max_size=8)


@HYPO
@given(st.one_of(st.binary(max_size=12), WHOLE.map(str.encode)))
def test_whole_token_fast_path_shows_what_one_character_at_a_time_does(token):
    assert readable_token(token) == _one_character_at_a_time(token)
