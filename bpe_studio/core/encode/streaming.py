"""Encoding a stream of text chunks with a bounded tail held back (``Tokenizer.encode_iterable``).

What it does: :func:`encode_iterable` gathers chunks into blocks of ``STREAM_BLOCK``
characters, encodes the part of each block that more text cannot change
(:func:`encode_decided`, which asks ``boundaries``' cut rules how far that is) and carries the
rest over. What it leaves out: merging (``merger``) and files (``encode_file``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ..io.surrogates import replace_surrogates

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

# encode_iterable works on buffers of at least this many characters.
STREAM_BLOCK = 1 << 16


def _replace_all_but_last_high(buf: str) -> str:
    """``replace_surrogates(buf)``, except that a high surrogate at the very end is kept as it
    is: the low surrogate completing it may come with the next chunk of a stream."""
    if buf and "\ud800" <= buf[-1] <= "\udbff":
        return replace_surrogates(buf[:-1]) + buf[-1]
    return replace_surrogates(buf)


def encode_decided(tok: Tokenizer, buf: str, out: list[int]) -> int:
    """Append to ``out`` the ids of the part of ``buf`` that more text cannot change; return
    its length.

    A special token starting at ``p`` is decided once ``p + longest special`` characters are
    in; a pre-token is decided once the characters the pattern looks at past its end are in,
    and none of them could still turn out to begin a special token (the limit
    ``cut_rules.stream_limit`` gives).
    """
    if tok.hf_pipeline is not None:
        return _encode_decided_pipeline(tok, buf, out)
    n = len(buf)
    specials = tok.specials
    longest = specials.longest
    merger = tok.merger
    pos = 0
    for a, b, special in specials.segments(buf):
        if special is None or b + longest > n:
            break
        out += merger.ids(tok._findall(buf[a:b]))
        out.append(tok.special_id(special))
        pos = b + len(special)
    limit = tok.cut_rules.stream_limit(buf, specials)
    done = pos
    if limit > pos:
        # subtle: encode the decided matches themselves. Pre-tokenizing buf[pos:done]
        # afresh would be wrong: "\n\nWord" gives "\n", "\n", but "\n\n" alone is one.
        pieces = []
        for m in tok.pre_tokenizer.compiled.finditer(buf, pos):
            if m.end() > limit:
                break
            pieces.append(m.group())
            done = m.end()
        out += merger.ids(pieces)
    return done


def _encode_decided_pipeline(tok: Tokenizer, buf: str, out: list[int]) -> int:
    """:func:`encode_decided` for a tokenizer.json's pipeline: only what comes before an added
    token that always splits the text there (``Tokenizer.cut_specials``) is decided."""
    cuts, pos = tok.cut_specials, 0
    for _, b, special in cuts.segments(buf):
        if special is None or b + cuts.longest > len(buf):
            break
        pos = b
    if pos:
        out += tok.encode(buf[:pos])
    return pos


def encode_iterable(tok: Tokenizer, iterable: Iterable[str]) -> Iterator[int]:
    """Lazily yield the ids of ``"".join(iterable)``, holding only a bounded tail of text
    (see ``Tokenizer.encode_iterable``)."""
    pending: list[str] = []
    pending_len = 0
    tail = ""
    block = STREAM_BLOCK
    for chunk in iterable:
        if not isinstance(chunk, str):
            raise TypeError(f"encode_iterable expects str chunks, got {type(chunk).__name__}")
        pending.append(chunk)
        pending_len += len(chunk)
        if pending_len >= block:
            buf = tail + "".join(pending)
            pending.clear()
            pending_len = 0
            out: list[int] = []
            try:
                done = encode_decided(tok, buf, out)
            except UnicodeEncodeError:
                buf = _replace_all_but_last_high(buf)
                out = []
                done = encode_decided(tok, buf, out)
            tail = buf[done:]
            yield from out
            # subtle: a pre-token longer than a block (a huge run of spaces) stays in the
            # tail; growing the block keeps re-scanning it from turning quadratic.
            block = max(STREAM_BLOCK, 2 * len(tail))
    yield from tok.encode(tail + "".join(pending))
