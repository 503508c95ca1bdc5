"""Readable renderings of token bytes for tables, tooltips and the command line, counts
with their nouns (``plural``) or their unit (``readable_size``), and the first few of a list
(``first_few``), and a long text quoted in an error (``quoted``).

Spaces, line breaks and tabs become visible symbols, other control characters and bytes that
are not whole UTF-8 characters are shown as ``<xx>`` hex, everything else as itself.

>>> readable_token(b" the\\n")
'␣the↵'
>>> readable_token("é".encode()[:1])
'<c3>'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥"}  # "\r" shows as <0d>: few fonts draw ␍


def _show_char(ch: str) -> str:
    if ch in _VISIBLE:
        return _VISIBLE[ch]
    if ch < "\x80" and not ch.isprintable():
        return f"<{ord(ch):02x}>"
    if not ch.isprintable() or ch in "\u00a0\u200b\ufeff":
        return f"<U+{ord(ch):04X}>"
    return ch


def readable_token(token: bytes) -> str:
    """Show ``token`` readably (see module docstring)."""
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return _readable_parts(token)
    # Whole characters only (most tokens): a space is the one printable character shown
    # otherwise, so one look at the whole string settles most of them (a JSON report shows
    # 200,000 tokens).
    shown = text.replace(" ", "␣")
    if shown.isprintable():
        return shown
    return "".join(map(_show_char, text))


def cut_repr(token: bytes, most: int = 80, spell: Callable[[bytes], object] = bytes) -> str:
    """``repr(spell(token))``, for a message, its middle left out past ``most`` bytes, with
    its length (a run's token of megabytes made a warning of megabytes). ``spell``: how the
    message writes a token (GPT-2's ``encode_token``, say).

    >>> cut_repr(b"ab"), cut_repr(b"a" * 100, 12)
    ("b'ab'", "b'aaaaaaaa'…b'aaaa' (100 bytes)")
    """
    if len(token) <= most:
        return repr(spell(token))
    head = most * 2 // 3
    return f"{spell(token[:head])!r}…{spell(token[head - most :])!r} ({len(token):,} bytes)"


def readable_cut(token: bytes, most: int = 80) -> str:
    """:func:`readable_token` of ``token``, its middle left out (…) when it is longer than
    ``most`` bytes: a token of one long run (10 MB of spaces) is one line of a summary.
    The cuts fall between UTF-8 characters, so no whole character is shown as hex.

    >>> readable_cut(b"a" * 100, 10)
    'aaaaaa…aaa'
    """
    if len(token) <= most:
        return readable_token(token)
    head, tail = _char_start(token, most * 2 // 3), _char_start(token, len(token) - most // 3)
    return f"{readable_token(token[:head])}…{readable_token(token[tail:])}"


def quoted(text: str, most: int = 60) -> str:
    """``repr(text)``, its middle left out (…) and its length said when it is longer than
    ``most`` characters: a line of a file quoted in an error stays one readable line (a
    minified JSON file read as ``merges.txt`` is one line of megabytes).

    >>> quoted("ab" * 50, 10)
    "'ababab…bab' (100 characters)"
    """
    if len(text) <= most:
        return repr(text)
    cut = f"{text[: most * 2 // 3]}…{text[len(text) - most // 3 :]}"
    return f"{cut!r} ({len(text):,} characters)"


def _char_start(token: bytes, i: int) -> int:
    """``i``, moved back to where the UTF-8 character it falls in starts (at most 3 bytes)."""
    for back in range(4):
        if i - back <= 0 or token[i - back] & 0xC0 != 0x80:
            return max(i - back, 0)
    return i


def _readable_parts(token: bytes) -> str:
    """``readable_token`` one character at a time: the longest whole UTF-8 character at each
    position, else one raw byte as hex."""
    parts: list[str] = []
    i, n = 0, len(token)
    while i < n:
        for width in (1, 2, 3, 4):
            try:
                ch = token[i : i + width].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(ch) == 1:
                parts.append(_show_char(ch))
                i += width
                break
        else:
            parts.append(f"<{token[i]:02x}>")
            i += 1
    return "".join(parts)


def plural(n: int, noun: str) -> str:
    """``n`` (with thousands separators) and ``noun`` in the number it takes, for the command
    line's messages and the app's labels.

    >>> plural(1, "merge"), plural(2_000, "merge"), plural(0, "special token")
    ('1 merge', '2,000 merges', '0 special tokens')
    """
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def first_few(items: Iterable[str], shown: int = 3) -> str:
    """The first ``shown`` of ``items`` quoted, and how many more, for messages that name
    what they are about without a wall of names.

    >>> first_few(["a", "b", "c", "d", "e"])
    "'a', 'b', 'c' and 2 more"
    """
    items = list(items)
    names = ", ".join(repr(s) for s in items[:shown])
    return f"{names} and {len(items) - shown} more" if len(items) > shown else names


def readable_size(n: int) -> str:
    """``n`` bytes for the command line's summaries: in bytes, kB or MB, whichever shows
    it without a run of leading zeros ("0.00 MB" said nothing of a 3.8 kB text).

    >>> readable_size(1), readable_size(812), readable_size(3_794), readable_size(12_345_678)
    ('1 byte', '812 bytes', '3.79 kB', '12.35 MB')
    >>> readable_size(999_995)  # rounds up into the next unit, not "1000.00 kB"
    '1.00 MB'
    """
    if n < 1_000:
        return plural(n, "byte")
    if n < 999_995:  # below what rounds to 1000.00 kB
        return f"{n / 1e3:.2f} kB"
    return f"{n / 1e6:,.2f} MB"
